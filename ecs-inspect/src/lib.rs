//! A live inspector for `archetable`: see and edit a running world from a
//! web page, or script it over JSON-RPC 2.0 on HTTP.
//!
//! [`Inspector::start`] serves HTTP on a thread of its own; the game calls
//! [`Inspector::update`] once per frame (after [`GameLoop::advance`]), which
//! answers the requests that arrived, within a time budget, on the game's
//! own thread: the world is never touched from another thread, and a slow
//! or broken client never stalls a frame. With no client around, `update`
//! costs a couple of atomic loads.
//!
//! ```no_run
//! use std::time::Duration;
//! use archetable_core::GameLoop;
//! use archetable_inspect::{Inspector, InspectorConfig};
//!
//! let mut game = GameLoop::new();
//! let mut inspector = Inspector::start(InspectorConfig::new()).unwrap();
//! println!("inspector on {}", inspector.url()); // open it in a browser
//! loop {
//!     game.advance(Duration::from_millis(16));
//!     inspector.update(&mut game);
//! #   break;
//! }
//! ```
//!
//! - **The page** at `/`: tables, entities with filters and paging, an
//!   entity's components editable as JSON, the hierarchy, a chart of
//!   per-system times, pause / step / resume and the time scale.
//! - **The protocol**: `POST /` (or `/rpc`) with `Content-Type:
//!   application/json` and a JSON-RPC 2.0 request or batch. `rpc.discover`
//!   lists the methods; the crate's README documents each one.
//! - **Values** are read and written through the world's serde registry
//!   (`world.register_serde::<T>("Name")`): registered components and
//!   resources appear as JSON, others by name and size, read-only.
//! - **Safety**: binds `127.0.0.1` unless told otherwise, and then only
//!   with a token every request must carry; requests must name this
//!   server as their `Host` (on loopback) and come from its own origin;
//!   every read and write a client can stretch is bounded in size and time
//!   (connections, request heads, bodies, writes, long polls); bad input
//!   gets a JSON-RPC error and changes nothing; a panic in user code during
//!   an edit is caught and reported.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod front;
mod history;
mod methods;
mod names;
pub mod rpc;
mod server;
mod watch;

use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use archetable_core::{GameLoop, Schedule, Stage, Time, World};
use serde_json::Value;

use crate::front::Front;
use crate::history::{History, StageTimings};
use crate::methods::Ctx;
use crate::server::{Job, Jobs, Limits, Shared};

pub use crate::front::{GRACE, MAX_HEAD, MAX_HEADERS, MAX_LIFE};

pub use crate::methods::{MAX_DEPTH, MAX_LIMIT, MAX_NODES, MAX_STEP};
pub use crate::rpc::{codes, RpcError, MAX_BATCH};
pub use crate::watch::{EXPIRE as WATCH_EXPIRE, MAX_ITEMS as WATCH_MAX_ITEMS};

/// The port [`InspectorConfig::new`] listens on.
pub const DEFAULT_PORT: u16 = 15713;

/// Frames without a request after which the inspector stops sampling
/// per-frame figures (unless a watch is open).
pub const IDLE_FRAMES: u32 = 600;

/// Where and how an [`Inspector`] serves.
#[derive(Clone, Debug)]
pub struct InspectorConfig {
    addr: SocketAddr,
    token: Option<String>,
    budget: Duration,
    max_body: usize,
    max_response: usize,
    max_connections: usize,
    header_timeout: Duration,
    body_timeout: Duration,
    write_timeout: Duration,
    answer_timeout: Duration,
    max_watches: usize,
}

impl Default for InspectorConfig {
    fn default() -> Self {
        InspectorConfig::new()
    }
}

impl InspectorConfig {
    /// `127.0.0.1:15713`, a 2 ms budget per frame, 1 MiB request bodies,
    /// 8 MiB responses, 128 connections, 5 s to send a request head, 10 s
    /// to send a body, 10 s for a client to take any byte of its answer,
    /// 10 s for the game to answer, 16 watches.
    pub fn new() -> Self {
        InspectorConfig {
            addr: SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), DEFAULT_PORT),
            token: None,
            budget: Duration::from_millis(2),
            max_body: 1 << 20,
            max_response: 8 << 20,
            max_connections: 128,
            header_timeout: Duration::from_secs(5),
            body_timeout: Duration::from_secs(10),
            write_timeout: Duration::from_secs(10),
            answer_timeout: Duration::from_secs(10),
            max_watches: 16,
        }
    }

    /// Listens on `port` of `127.0.0.1` (0: any free port; see
    /// [`Inspector::addr`]).
    pub fn port(mut self, port: u16) -> Self {
        self.addr.set_port(port);
        self
    }

    /// Listens on `addr`, which may be reachable from other machines, and
    /// asks every request for `token` (`Authorization: Bearer TOKEN`, or
    /// `?token=TOKEN` in the page's address, percent-encoded). Anyone who
    /// can reach the address and has the token can change the world. An
    /// empty token is refused by [`Inspector::start`].
    pub fn bind_with_token(mut self, addr: SocketAddr, token: impl Into<String>) -> Self {
        self.addr = addr;
        self.token = Some(token.into());
        self
    }

    /// Asks every request for `token`, on the loopback address too (where
    /// the `Host` and `Origin` checks stay on). An empty token is refused by
    /// [`Inspector::start`].
    pub fn token(mut self, token: impl Into<String>) -> Self {
        self.token = Some(token.into());
        self
    }

    /// How long one [`Inspector::update`] may spend answering calls: it
    /// answers one call at a time and stops once the budget is spent (after
    /// at least one call, when any waits), so the calls of a batch spread
    /// over frames when they do not fit in one; the rest wait for the next
    /// frame. What one call costs is bounded by the protocol's caps
    /// ([`MAX_LIMIT`] entities a query, [`MAX_NODES`] hierarchy nodes, the
    /// response size), not by the budget.
    pub fn budget(mut self, budget: Duration) -> Self {
        self.budget = budget;
        self
    }

    /// The largest request body, in bytes.
    pub fn max_body(mut self, bytes: usize) -> Self {
        self.max_body = bytes;
        self
    }

    /// The largest response body, in bytes.
    pub fn max_response(mut self, bytes: usize) -> Self {
        self.max_response = bytes;
        self
    }

    /// How many connections are served at once (at least 1); past that,
    /// new ones wait to be accepted until one closes.
    pub fn max_connections(mut self, connections: usize) -> Self {
        self.max_connections = connections.clamp(1, u32::MAX as usize);
        self
    }

    /// How long a client may take to send a request head (from the moment
    /// the server waits for it, so also how long an idle connection is
    /// kept).
    pub fn header_timeout(mut self, timeout: Duration) -> Self {
        self.header_timeout = timeout;
        self
    }

    /// How long a client may take to send a whole request body.
    pub fn body_timeout(mut self, timeout: Duration) -> Self {
        self.body_timeout = timeout;
        self
    }

    /// How long a client may take no byte of its answer before it is
    /// dropped.
    pub fn write_timeout(mut self, timeout: Duration) -> Self {
        self.write_timeout = timeout;
        self
    }

    /// How long a request waits for the game to answer.
    pub fn answer_timeout(mut self, timeout: Duration) -> Self {
        self.answer_timeout = timeout;
        self
    }
}

/// A running inspector: the HTTP server and the game thread's end of it.
/// Dropping it stops the server without waiting on any client.
pub struct Inspector {
    shared: Arc<Shared>,
    front: Front,
    jobs: Jobs,
    addr: SocketAddr,
    budget: Duration,
    /// The request count last seen, and frames since it changed.
    seen: u64,
    idle_frames: u32,
    frame: u64,
    stepping: u64,
    history: History,
    /// The game loop's stages as last seen (`Startup` first), with the
    /// names the chart and `schedule.list` show them by.
    stage_names: Vec<(Stage, String)>,
    /// The world's component names, kept between frames while the world
    /// has the same component types and serde registry.
    names: Option<(methods::NamesKey, names::Names)>,
    /// A batch whose calls are answered over several frames, and the
    /// answers so far.
    pending: Option<(server::Job, Vec<Result<methods::Answer, RpcError>>)>,
    /// Whether `update` turned on the game loop's copy of its systems'
    /// totals ([`GameLoop::keep_system_totals`]).
    keeps_totals: bool,
}

impl std::fmt::Debug for Inspector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inspector").field("addr", &self.addr).field("frame", &self.frame).finish_non_exhaustive()
    }
}

impl Inspector {
    /// Starts serving.
    ///
    /// # Errors
    /// If the address cannot be bound, the token is empty, or the address
    /// is not a loopback address and no token was given
    /// ([`InspectorConfig::bind_with_token`]).
    pub fn start(config: InspectorConfig) -> io::Result<Inspector> {
        let loopback = config.addr.ip().is_loopback();
        if config.token.as_deref() == Some("") {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "the inspector's token is empty: give it one"));
        }
        if !loopback && config.token.is_none() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} is not a loopback address: serve it with InspectorConfig::bind_with_token", config.addr),
            ));
        }
        let listener = std::net::TcpListener::bind(config.addr)?;
        let addr = listener.local_addr()?;
        let limits = Limits {
            max_body: config.max_body,
            max_response: config.max_response,
            max_connections: config.max_connections,
            header_timeout: config.header_timeout,
            body_timeout: config.body_timeout,
            write_timeout: config.write_timeout,
            answer_timeout: config.answer_timeout,
            max_watches: config.max_watches,
            queue: 64,
            token: config.token,
            loopback,
            port: addr.port(),
        };
        let (send, jobs) = server::queue(&limits);
        let shared = Arc::new(Shared::new(limits));
        let front = Front::start(listener, Arc::clone(&shared), send)?;
        Ok(Inspector {
            shared,
            front,
            jobs,
            addr,
            budget: config.budget,
            seen: 0,
            idle_frames: IDLE_FRAMES,
            frame: 0,
            stepping: 0,
            history: History::default(),
            stage_names: Vec::new(),
            names: None,
            pending: None,
            keeps_totals: false,
        })
    }

    /// The address the server listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The page's address, `http://127.0.0.1:PORT/`.
    pub fn url(&self) -> String {
        format!("http://{}/", self.addr)
    }

    /// Requests handed to the game thread that it has not answered yet.
    pub fn waiting(&self) -> u64 {
        let sent = self.shared.jobs_sent.load(Ordering::Acquire);
        sent.saturating_sub(self.shared.jobs_done.load(Ordering::Acquire))
    }

    /// Requests the game thread has answered.
    pub fn answered(&self) -> u64 {
        self.shared.jobs_done.load(Ordering::Acquire)
    }

    /// Connections open now (at most [`InspectorConfig::max_connections`]).
    pub fn connections(&self) -> usize {
        self.shared.connections.load(Ordering::Acquire)
    }

    /// Frames this inspector has been updated for.
    pub fn frames(&self) -> u64 {
        self.frame
    }

    /// Answers the calls that arrived, within the budget
    /// ([`InspectorConfig::budget`]), for a game on a [`GameLoop`]:
    /// call it once per frame, after [`GameLoop::advance`]. Once a client
    /// has come, it turns on the loop's copy of its systems' totals
    /// ([`GameLoop::keep_system_totals`]), which the chart's per-frame
    /// figures are then read from.
    pub fn update(&mut self, game: &mut GameLoop) {
        if !self.wake() {
            return;
        }
        self.count_step(game.world_mut());
        let known = || std::iter::once(&Stage::Startup).chain(game.stages());
        let same_names =
            known().count() == self.stage_names.len() && known().zip(&self.stage_names).all(|(a, (b, _))| a == b);
        if !same_names {
            self.name_stages(game);
        }
        if !self.keeps_totals {
            game.keep_system_totals(true);
            self.keeps_totals = true;
        }
        // The chart reads the timings where they are, every frame; a copy
        // is made only for a call that lists them (`schedule.list`).
        let calls = self.needs_timings();
        // `stage_names` follows `game.schedules()` (checked above).
        let stage_names = &self.stage_names;
        let sampled =
            || stage_names.iter().zip(game.schedules()).map(|((_, name), (_, schedule))| (name.as_str(), schedule));
        // The loop's copy of its systems' totals, read as one slice, while
        // it lists the systems last checked; else the schedules are read.
        let copied = same_names
            && game
                .system_totals()
                .is_some_and(|(stamps, ns)| self.history.sample_copied(self.frame, game.world(), stamps, ns));
        if !copied {
            self.history.sample(self.frame, game.world(), same_names, sampled);
        }
        let stages: Option<Vec<StageTimings>> =
            calls.then(|| sampled().map(|(name, schedule)| (name.to_owned(), schedule.timings())).collect());
        self.serve(game.world_mut(), stages.as_deref());
    }

    /// Keeps the game loop's stages (`Startup` first) and their names.
    #[cold]
    #[inline(never)]
    fn name_stages(&mut self, game: &GameLoop) {
        self.stage_names = std::iter::once(Stage::Startup)
            .chain(game.stages().cloned())
            .map(|stage| {
                let name = stage.to_string();
                (stage, name)
            })
            .collect();
    }

    /// Answers the requests that arrived, for a game that runs a world with
    /// schedules of its own: call it once per frame, after running them.
    /// `schedules` name the schedules shown in `schedule.list` and the
    /// chart.
    pub fn update_schedules(&mut self, world: &mut World, schedules: &[(&str, &Schedule)]) {
        if !self.wake() {
            return;
        }
        self.count_step(world);
        self.history.sample(self.frame, world, false, || schedules.iter().copied());
        let stages: Option<Vec<StageTimings>> =
            self.needs_timings().then(|| schedules.iter().map(|(name, s)| ((*name).to_owned(), s.timings())).collect());
        self.serve(world, stages.as_deref());
    }

    /// Answers the requests that arrived, for a bare world: call it once
    /// per frame (or whenever the world may be looked at).
    pub fn update_world(&mut self, world: &mut World) {
        if self.wake() {
            self.count_step(world);
            self.history.sample(self.frame, world, false, std::iter::empty);
            // No schedules: `schedule.list` lists none.
            self.serve(world, Some(&[]));
        }
    }

    /// Whether a call waits for an answer this frame: one left over from
    /// the last frame, or a new one (taken from the queue and kept).
    /// Whether the next job to answer lists the schedules' timings, which
    /// are then copied for it (taking the job from the queue if none is
    /// pending). A later job of the same frame that needs them waits for
    /// the next frame (see [`Inspector::serve`]).
    fn needs_timings(&mut self) -> bool {
        if self.pending.is_none()
            && self.job_sent()
            && let Ok(job) = self.jobs.try_recv()
        {
            let answers = Vec::with_capacity(job.calls.len());
            self.pending = Some((job, answers));
        }
        self.pending.as_ref().is_some_and(|(job, _)| lists_timings(job))
    }

    /// Whether a job may be in the queue: the server counted one that is
    /// not answered yet. Two counters are read, so that a frame without a
    /// job leaves the queue (its code and its memory) alone. The server
    /// counts a job before it queues it: one counted and not queued yet is
    /// taken at a later frame.
    #[inline]
    fn job_sent(&self) -> bool {
        self.shared.jobs_sent.load(Ordering::Acquire) != self.shared.jobs_done.load(Ordering::Acquire)
    }

    /// Counts the frame; whether there is anything to do: a request since
    /// the last frame, a client seen in the last [`IDLE_FRAMES`] frames, an
    /// open watch, or a step under way.
    #[inline]
    fn wake(&mut self) -> bool {
        self.frame += 1;
        let seen = self.shared.requests.load(Ordering::Acquire);
        if seen != self.seen {
            self.seen = seen;
            self.idle_frames = 0;
            return true;
        }
        if self.idle_frames < IDLE_FRAMES {
            self.idle_frames += 1;
            return true;
        }
        self.stepping > 0 || self.pending.is_some() || self.shared.watch_count.load(Ordering::Acquire) > 0
    }

    /// Counts down a `loop.step`: the frame that ends it pauses the game
    /// again (before the frame is sampled, so its record says paused).
    fn count_step(&mut self, world: &mut World) {
        if self.stepping > 0 {
            self.stepping -= 1;
            if self.stepping == 0
                && let Some(time) = world.get_resource_mut::<Time>()
            {
                time.pause();
            }
        }
    }

    /// Answers jobs within the budget. `stages` is the copy of the
    /// timings, made only when the first job lists them: a job that
    /// lists them and finds no copy is kept for the next frame.
    fn serve(&mut self, world: &mut World, stages: Option<&[StageTimings]>) {
        // One call at a time, the budget checked after each: a batch's
        // calls spread over frames when they do not fit in one.
        // The clock is read once there is a job: most frames have none.
        let mut started = None;
        loop {
            let (job, mut answers) = match self.pending.take() {
                Some(pending) => pending,
                None if !self.job_sent() => break,
                None => match self.jobs.try_recv() {
                    Ok(job) => {
                        let answers = Vec::with_capacity(job.calls.len());
                        (job, answers)
                    }
                    Err(_) => break,
                },
            };
            let started = *started.get_or_insert_with(Instant::now);
            if stages.is_none() && lists_timings(&job) {
                self.pending = Some((job, answers));
                break;
            }
            let mut ctx = Ctx {
                world: &mut *world,
                stages: stages.unwrap_or(&[]),
                history: &self.history,
                stepping: &mut self.stepping,
                frame: self.frame,
                shared: Some(&self.shared),
                names: &mut self.names,
            };
            while let Some(call) = job.calls.get(answers.len()) {
                answers.push(methods::call(&mut ctx, &call.method, &call.params));
                if answers.len() < job.calls.len() && started.elapsed() >= self.budget {
                    break;
                }
            }
            if answers.len() < job.calls.len() {
                self.pending = Some((job, answers));
                break;
            }
            let _ = job.reply.send(answers);
            self.shared.jobs_done.fetch_add(1, Ordering::AcqRel);
            if started.elapsed() >= self.budget {
                break;
            }
        }
        if self.shared.watch_count.load(Ordering::Acquire) > 0 {
            methods::feed_watches(world, &self.history, self.frame, &self.shared);
        }
    }
}

impl Drop for Inspector {
    fn drop(&mut self) {
        self.shared.stop();
        // Calls still queued for the game are dropped, which tells the
        // requests waiting for them that no answer comes; then the server
        // gets a short grace to send those answers, and stops.
        while let Ok(job) = self.jobs.try_recv() {
            drop(job);
        }
        self.front.stop();
    }
}

/// Runs one request body against `world` the way the server would, minus
/// HTTP and threads: parsing, dispatch, errors. For the fuzz target; not
/// part of the stable API.
#[doc(hidden)]
pub fn answer_for_fuzzing(world: &mut World, body: &[u8]) -> Option<String> {
    let entries = match rpc::parse(body) {
        Ok(rpc::Parsed::Single(entry)) => vec![entry],
        Ok(rpc::Parsed::Batch(entries)) => entries,
        Err(error) => return Some(rpc::response(Value::Null, Err(error)).to_string()),
    };
    let history = History::default();
    let mut stepping = 0;
    let mut names = None;
    let mut ctx = Ctx {
        world,
        stages: &[],
        history: &history,
        stepping: &mut stepping,
        frame: 1,
        shared: None,
        names: &mut names,
    };
    let answers: Vec<String> = entries
        .into_iter()
        .map(|entry| match entry {
            Ok(call) => {
                rpc::response_text(call.id.unwrap_or(Value::Null), methods::call(&mut ctx, &call.method, &call.params))
            }
            Err((id, error)) => rpc::response(id, Err(error)).to_string(),
        })
        .collect();
    Some(format!("[{}]", answers.join(",")))
}

/// Runs the checks of a request's head (token, `Host`, `Origin`) on
/// header values as a client sent them, the parsing the HTTP library
/// leaves to the inspector: `None` when a value cannot be a header value,
/// else whether the request is let through (or why not). For the fuzz
/// target of the HTTP front; not part of the stable API.
#[doc(hidden)]
pub fn admit_for_fuzzing(
    host: Option<&[u8]>,
    origin: Option<&[u8]>,
    authorization: Option<&[u8]>,
    query: &str,
    token: Option<&str>,
    loopback: bool,
    port: u16,
) -> Option<Result<(), &'static str>> {
    server::admit(host, origin, authorization, query, token, loopback, port)
}

/// Decodes a form value (`%XX`, `+`) as the server reads `?token=`. For
/// the fuzz target of the HTTP front; not part of the stable API.
#[doc(hidden)]
pub fn form_decode_for_fuzzing(text: &str) -> Option<Vec<u8>> {
    server::form_decode(text)
}

/// Whether a job has a call that lists the schedules' timings.
fn lists_timings(job: &Job) -> bool {
    job.calls.iter().any(|call| call.method == "schedule.list")
}
