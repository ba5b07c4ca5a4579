//! `--page-client`: a scripted client that asks the inspector what its web
//! page asks, at the page's rates counted in frames at 60 frames a second,
//! so that the cost of a page held open can be measured without a browser
//! (and counted in instructions, under callgrind, with `--fast`).
//!
//! The page polls its stats watch every quarter of a second; once a second
//! it asks for the loop's status, the tables, a page of the entity list,
//! the selected entity's components and the systems' table; every two
//! seconds the hierarchy. Here the calls due in a frame go as one batch,
//! sent before the game's frame and answered by that frame's `update`
//! (the game waits for it), so every run does the same work in the same
//! frames.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Frames between two polls of the stats watch (a quarter of a second).
const POLL_EVERY: u64 = 15;
/// Frames between two refreshes of the list, the entity and the systems.
const REFRESH_EVERY: u64 = 60;
/// Frames between two refreshes of the hierarchy.
const TREE_EVERY: u64 = 120;

/// The client's thread, and what it shares with the game's.
pub struct PageClient {
    /// The last frame the game finished.
    done: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// Whether frame `frame` has calls the game answers (a batch is sent
/// before it).
pub fn has_calls(frame: u64) -> bool {
    frame == 0 || frame.is_multiple_of(REFRESH_EVERY)
}

/// One request; the response's body, or `None` once the server is gone.
fn post(addr: SocketAddr, body: &str) -> Option<String> {
    let request = format!(
        "POST / HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nConnection: close\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut stream = TcpStream::connect(addr).ok()?;
    stream.write_all(request.as_bytes()).ok()?;
    let mut reply = Vec::new();
    stream.read_to_end(&mut reply).ok()?;
    let split = reply.windows(4).position(|w| w == b"\r\n\r\n")?;
    String::from_utf8(reply.split_off(split + 4)).ok()
}

/// A batch of `(method, params as JSON)`; the response's body.
fn batch(addr: SocketAddr, calls: &[(&str, String)]) -> Option<String> {
    let body: Vec<String> = calls
        .iter()
        .enumerate()
        .map(|(id, (method, params))| format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#))
        .collect();
    post(addr, &format!("[{}]", body.join(",")))
}

/// The text of the first value of `"key":` in `json` (a number, or a
/// string without its quotes): enough for the few fields the client reads.
fn field<'a>(json: &'a str, key: &str) -> Option<&'a str> {
    let at = json.find(&format!("\"{key}\":"))? + key.len() + 3;
    let rest = json[at..].trim_start();
    match rest.strip_prefix('"') {
        Some(text) => text.split('"').next(),
        None => rest.split([',', '}', ']']).next(),
    }
}

impl PageClient {
    /// Starts the client against the inspector at `addr`.
    pub fn start(addr: SocketAddr) -> PageClient {
        let done = Arc::new(AtomicU64::new(u64::MAX));
        let stop = Arc::new(AtomicBool::new(false));
        let (frames, flag) = (Arc::clone(&done), Arc::clone(&stop));
        let thread = std::thread::spawn(move || {
            let mut watch: Option<String> = None;
            let mut after = 0;
            let mut selected: Option<String> = None;
            let mut frame = 0;
            while !flag.load(Ordering::Relaxed) {
                // Waits for the game to finish the frame before `frame`.
                while frame > 0 && frames.load(Ordering::Acquire).wrapping_add(1) < frame {
                    if flag.load(Ordering::Relaxed) {
                        return;
                    }
                    std::thread::yield_now();
                }
                if let Some(watch) = watch.as_deref().filter(|_| frame > 0 && frame.is_multiple_of(POLL_EVERY)) {
                    let poll = format!(
                        r#"{{"jsonrpc":"2.0","id":0,"method":"watch.poll","params":{{"watch":{watch},"after":{after},"timeout_ms":1000}}}}"#
                    );
                    let Some(got) = post(addr, &poll) else { return };
                    after = field(&got, "last").and_then(|n| n.parse().ok()).unwrap_or(after);
                }
                if has_calls(frame) {
                    let query = r#"{"with":[],"without":[],"offset":0,"limit":50,"component_names":true}"#;
                    let mut calls = vec![
                        ("loop.status", "{}".to_owned()),
                        ("world.list_tables", "{}".to_owned()),
                        ("world.query", query.to_owned()),
                        ("schedule.list", "{}".to_owned()),
                    ];
                    if let Some(entity) = &selected {
                        calls.push(("world.get_components", format!(r#"{{"entity":"{entity}"}}"#)));
                    }
                    if frame.is_multiple_of(TREE_EVERY) {
                        calls.push(("world.hierarchy", "{}".to_owned()));
                    }
                    if frame == 0 {
                        calls.push(("schedule.history", r#"{"frames":300}"#.to_owned()));
                        calls.push(("watch.start", r#"{"kind":"stats"}"#.to_owned()));
                    }
                    let Some(results) = batch(addr, &calls) else { return };
                    // The first entity listed (the page's selection, as with `select=first`).
                    let listed = results.find(r#""entities":"#).map_or("", |at| &results[at..]);
                    selected = field(listed, "entity").map(str::to_owned);
                    if frame == 0 {
                        let started = results.find(r#""every":"#).map_or("", |at| &results[at..]);
                        watch = field(started, "watch").map(str::to_owned);
                    }
                }
                frame += 1;
            }
        });
        PageClient { done, stop, thread: Some(thread) }
    }

    /// Before the game's frame `frame`: waits (at most 10 s) for the
    /// client's calls of that frame to reach the game, so that this
    /// frame's `update` answers them.
    pub fn before_frame(&self, frame: u64, waiting: impl Fn() -> u64) {
        if !has_calls(frame) {
            return;
        }
        let start = Instant::now();
        while waiting() == 0 && start.elapsed() < Duration::from_secs(10) {
            std::thread::yield_now();
        }
    }

    /// After the game's frame `frame`.
    pub fn after_frame(&self, frame: u64) {
        self.done.store(frame, Ordering::Release);
    }
}

impl Drop for PageClient {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
