//! The driver: one world, one fixed-step schedule and one ggrs session.
//! Each [`RollbackDriver::update`] hands ggrs the local inputs, then answers
//! ggrs's requests in order: save the world into the ring (with its
//! checksum), load a frame back, or run one step with the frame's inputs.

use std::collections::VecDeque;
use std::hash::{Hash, Hasher};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use archetable_core::{
    ChildOf, Component, Entity, Event, Events, LoopStarted, MutableComponent, Resource, Schedule, Time, World,
};
use ggrs::{Frame, GgrsError, GgrsEvent, GgrsRequest, PlayerHandle, SessionState};

use crate::checksum::StableHasher;
use crate::config::{GameInput, PeerAddress, RollbackConfig, Session};
use crate::error::RollbackError;
use crate::event::{Difference, FrameRecord, RecordedValue, RollbackEvent};
use crate::registry::{Detail, Registry};
use crate::sim::{PlayerInputs, RollbackRng, SimTime};
use crate::snapshot::{self, Ring};

/// What one [`RollbackDriver::update`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Update {
    /// The session advanced one frame (possibly after a rollback).
    Advanced,
    /// The session is still connecting to its peers.
    Synchronizing,
    /// The session is too far ahead of a peer's confirmed inputs and waits.
    Stalled,
    /// The driver skipped this frame on ggrs's advice, to let a slower
    /// peer catch up.
    Waiting,
}

/// Counters of a driver's work since it started.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RollbackStats {
    /// Steps run, first runs and resimulations alike.
    pub steps: u64,
    /// Loads of an earlier frame (rollbacks).
    pub rollbacks: u64,
    /// The most frames one rollback went back.
    pub deepest_rollback: u32,
    /// Steps run again after a rollback.
    pub resimulated_steps: u64,
    /// Time spent loading and resimulating.
    pub resimulation_time: Duration,
    /// Snapshots saved.
    pub saves: u64,
}

/// A world, its fixed-step simulation and a ggrs session, kept in step.
///
/// The whole world rolls back: every entity with its handle, every
/// component, resource and event queue. Each type gets a hash function for
/// the checksum ([`component`](Self::component),
/// [`resource`](Self::resource), [`event`](Self::event)) or is left out
/// ([`skip_component`](Self::skip_component),
/// [`skip_resource`](Self::skip_resource),
/// [`skip_event`](Self::skip_event)); [`start`](Self::start) refuses a
/// world holding a type with neither, naming it.
///
/// ```
/// use archetable_core::{Schedule, World};
/// use archetable_rollback::{RollbackConfig, RollbackDriver, Update};
///
/// let mut driver: RollbackDriver<u8> = RollbackDriver::new(World::new(), Schedule::new(), 60);
/// let session = ggrs::SessionBuilder::<RollbackConfig<u8>>::new()
///     .with_num_players(1)
///     .unwrap()
///     .with_check_distance(2)
///     .start_synctest_session()
///     .unwrap();
/// driver.start(session).unwrap();
/// for _ in 0..10 {
///     assert_eq!(driver.update(|_handle, _world| 0u8).unwrap(), Update::Advanced);
/// }
/// assert_eq!(driver.frame(), 10);
/// ```
pub struct RollbackDriver<I: GameInput, A: PeerAddress = SocketAddr> {
    world: World,
    schedule: Schedule,
    registry: Registry,
    ring: Ring,
    session: Option<Session<I, A>>,
    step: Duration,
    frame: Frame,
    events: Vec<RollbackEvent<A>>,
    stats: RollbackStats,
    /// Component, resource and event queue counts at the last successful
    /// type check.
    checked: (usize, usize, usize),
    skip_updates: u32,
    debug: bool,
    records: VecDeque<(Frame, Vec<Detail>)>,
    differences: VecDeque<(Frame, Difference)>,
    scratch: Vec<Detail>,
    confirmed: Option<Vec<(Frame, u128)>>,
    last_confirmed: Frame,
}

impl<I: GameInput, A: PeerAddress> RollbackDriver<I, A> {
    /// A driver over `world` that runs `schedule` once per frame, `fps`
    /// frames per simulated second. Registers the engine's types
    /// (`ChildOf`, `Children`, `Disabled`, `Name`, `Time`, `LoopStarted`) and the driver's resources
    /// ([`SimTime`], [`RollbackRng`], and [`PlayerInputs`], which is
    /// rewritten before every step and so skipped), and inserts `SimTime`
    /// and `PlayerInputs`.
    ///
    /// # Panics
    /// If `fps` is 0.
    pub fn new(mut world: World, schedule: Schedule, fps: u32) -> Self {
        assert!(fps > 0, "a rollback driver needs at least one frame per second");
        let step = Duration::from_secs(1) / fps;
        let mut registry = Registry::default();
        registry.engine_types();
        world.register_clone_from::<ChildOf>();
        registry.resource_with::<Time>(|time, h| {
            h.write_u64(time.frame());
            h.write_u64(time.elapsed().as_nanos() as u64);
        });
        // A game loop's mark that its startup ran (constant once the game
        // plays, but part of the state a snapshot restores).
        registry.resource_with::<LoopStarted>(|started, h| h.write_u8(u8::from(started.get())));
        registry.resource_with::<SimTime>(|time, h| time.hash(h));
        registry.resource_with::<RollbackRng>(|rng, h| rng.hash(h));
        registry.skip_resource::<PlayerInputs<I>>();
        world.insert_resource(SimTime { frame: 0, step });
        world.insert_resource(PlayerInputs::<I>::default());
        RollbackDriver {
            world,
            schedule,
            registry,
            ring: Ring::new(1),
            session: None,
            step,
            frame: 0,
            events: Vec::new(),
            stats: RollbackStats::default(),
            checked: (usize::MAX, usize::MAX, usize::MAX),
            skip_updates: 0,
            debug: false,
            records: VecDeque::new(),
            differences: VecDeque::new(),
            scratch: Vec::new(),
            confirmed: None,
            last_confirmed: ggrs::NULL_FRAME,
        }
    }

    /// Rolls back component `T`, hashed with its `Hash`.
    pub fn component<T: Component + Hash>(&mut self) -> &mut Self {
        self.registry.component_with::<T>(|value, h| value.hash(h));
        self
    }

    /// Rolls back component `T`, hashed by `hash` (for types without
    /// `Hash`, such as those holding floats: hash `f32::to_bits`).
    pub fn component_with<T: Component>(&mut self, hash: fn(&T, &mut StableHasher)) -> &mut Self {
        self.registry.component_with::<T>(hash);
        self
    }

    /// Rolls back resource `T`, hashed with its `Hash`.
    pub fn resource<T: Resource + Clone + Hash>(&mut self) -> &mut Self {
        self.registry.resource_with::<T>(|value, h| value.hash(h));
        self
    }

    /// Rolls back resource `T`, hashed by `hash`.
    pub fn resource_with<T: Resource + Clone>(&mut self, hash: fn(&T, &mut StableHasher)) -> &mut Self {
        self.registry.resource_with::<T>(hash);
        self
    }

    /// Rolls back the events of type `E`, each hashed with its `Hash`: the
    /// queue (`Events<E>`, both frames' events) and the position of each
    /// reader of it ([`EventReader`](archetable_core::EventReader)) in the
    /// schedule. After a load, a reader sees what it saw after that frame's
    /// save the first time (the events of the frames simulated again,
    /// once each), not the events of the abandoned frames.
    pub fn event<E: Event + Clone + Hash>(&mut self) -> &mut Self {
        self.registry.event_with::<E>(|event, h| event.hash(h));
        self
    }

    /// Rolls back the events of type `E` (see [`event`](Self::event)), each
    /// hashed by `hash`.
    pub fn event_with<E: Event + Clone>(&mut self, hash: fn(&E, &mut StableHasher)) -> &mut Self {
        self.registry.event_with::<E>(hash);
        self
    }

    /// Leaves the events of type `E` out of rollback and of the checksum:
    /// a load keeps the present queue, and readers keep their positions
    /// (for messages to what does not roll back, such as sound).
    pub fn skip_event<E: Event>(&mut self) -> &mut Self {
        self.registry.skip_resource::<Events<E>>();
        self
    }

    /// Leaves component `T` out of rollback and of the checksum: on a
    /// load, each entity that holds it both before and after keeps its
    /// present value. For what the simulation never reads (sprites, sound
    /// handles, interpolation state). It must still be cloneable, and
    /// mutable: the present value is swapped into the restored entity,
    /// which an immutable component (`#[component(immutable)]`, a
    /// relationship) does not allow; such a component rolls back.
    pub fn skip_component<T: Component + MutableComponent>(&mut self) -> &mut Self {
        self.registry.skip_component::<T>();
        self
    }

    /// Leaves resource `T` out of rollback and of the checksum: a load
    /// keeps its present value.
    pub fn skip_resource<T: Resource>(&mut self) -> &mut Self {
        self.registry.skip_resource::<T>();
        self
    }

    /// Copies component `T` into and out of snapshots with
    /// `Clone::clone_from`, a whole column at a time (see
    /// `World::register_clone_from`): a `Copy` type is copied in bulk, and
    /// a type that owns memory (a `String`, a `Vec`) keeps it from one save
    /// to the next, so that saves and loads stop allocating. `T` still
    /// needs one of [`component`](Self::component),
    /// [`component_with`](Self::component_with) or
    /// [`skip_component`](Self::skip_component).
    ///
    /// `#[derive(Clone)]` does not forward `clone_from` to the fields (it
    /// clones anew and drops the old value): implement `Clone` by hand for
    /// a type whose buffers should be kept.
    pub fn copy_with_clone_from<T: Component + Clone>(&mut self) -> &mut Self {
        self.world.register_clone_from::<T>();
        self
    }

    /// Debug mode: each save also records a hash per value. During a sync
    /// test, each resimulated frame's values are compared one by one with
    /// the first simulation's, and a desync names the first component and
    /// entity that differ. Between peers, where the other peer's values are
    /// not at hand, exchange [`frame_record`](Self::frame_record)s of the
    /// frame a desync names and compare them with
    /// [`first_difference`](Self::first_difference). Costs a hash and a
    /// few bytes per value per save.
    pub fn set_debug(&mut self, debug: bool) -> &mut Self {
        self.debug = debug;
        self
    }

    /// Keeps every confirmed frame's checksum (see
    /// [`confirmed_checksums`](Self::confirmed_checksums)); off by default.
    pub fn keep_confirmed_checksums(&mut self, keep: bool) -> &mut Self {
        self.confirmed = keep.then(Vec::new);
        self
    }

    /// Starts `session` after checking that every component and resource
    /// type in the world rolls back or is skipped.
    ///
    /// # Errors
    /// The first type that is neither, or a component that cannot be
    /// copied; the session is not started then.
    pub fn start(&mut self, session: impl Into<Session<I, A>>) -> Result<(), RollbackError> {
        let session = session.into();
        self.ring = Ring::new(session.depth() + 4);
        self.checked = (usize::MAX, usize::MAX, usize::MAX);
        self.check_types()?;
        self.session = Some(session);
        Ok(())
    }

    /// Checks the world's types if any were added since the last check,
    /// and readies the registered ones (event queues).
    fn check_types(&mut self) -> Result<(), RollbackError> {
        let world = &self.world;
        let counts = (world.components().len(), world.resource_types().count(), world.event_types().count());
        if counts != self.checked {
            self.registry.prepare(&mut self.world, self.ring.len());
            self.world.remember_removal_readers(self.ring.len());
            self.registry.check(&self.world)?;
            let world = &self.world;
            self.checked = (world.components().len(), world.resource_types().count(), world.event_types().count());
        }
        Ok(())
    }

    /// One frame of the game: gives ggrs the local players' inputs (asked
    /// of `input` with the player's handle and the present world), then
    /// saves, loads and steps as ggrs asks. Call it once per frame, at the
    /// session's frame rate.
    ///
    /// # Errors
    /// A ggrs error, a type that cannot roll back (a new type that showed
    /// up since the start), or a sync test's mismatch (also reported as a
    /// [`RollbackEvent::Desync`]).
    pub fn update(&mut self, mut input: impl FnMut(PlayerHandle, &World) -> I) -> Result<Update, RollbackError> {
        let mut session = self.session.take().ok_or(RollbackError::NoSession)?;
        let result = self.update_with(&mut session, &mut input);
        self.session = Some(session);
        result
    }

    fn update_with(
        &mut self,
        session: &mut Session<I, A>,
        input: &mut impl FnMut(PlayerHandle, &World) -> I,
    ) -> Result<Update, RollbackError> {
        match session {
            Session::SyncTest(s) => {
                for handle in 0..s.num_players() {
                    s.add_local_input(handle, input(handle, &self.world))?;
                }
                match s.advance_frame() {
                    Ok(requests) => self.handle(requests).map(|()| Update::Advanced),
                    Err(GgrsError::MismatchedChecksum { mismatched_frames, .. }) => {
                        let frame = mismatched_frames.first().copied().unwrap_or(self.frame);
                        let first_difference =
                            self.differences.iter().find(|(f, _)| *f >= frame).map(|(_, d)| d.clone());
                        self.events.push(RollbackEvent::Desync {
                            frame,
                            local: self.ring.checksum_of(frame),
                            remote: None,
                            peer: None,
                            first_difference,
                        });
                        Err(RollbackError::Mismatch { frames: mismatched_frames })
                    }
                    Err(error) => Err(error.into()),
                }
            }
            Session::P2P(s) => {
                s.poll_remote_clients();
                self.take_events(s.events());
                if s.current_state() != SessionState::Running {
                    return Ok(Update::Synchronizing);
                }
                if self.skip_updates > 0 {
                    self.skip_updates -= 1;
                    return Ok(Update::Waiting);
                }
                for handle in s.local_player_handles() {
                    s.add_local_input(handle, input(handle, &self.world))?;
                }
                let result = s.advance_frame();
                self.take_events(s.events());
                let update = match result {
                    Ok(requests) => self.handle(requests).map(|()| Update::Advanced)?,
                    Err(GgrsError::PredictionThreshold) => Update::Stalled,
                    Err(GgrsError::NotSynchronized) => Update::Synchronizing,
                    Err(error) => return Err(error.into()),
                };
                self.note_confirmed(s.confirmed_frame());
                Ok(update)
            }
            Session::Spectator(s) => {
                s.poll_remote_clients();
                self.take_events(s.events());
                if s.current_state() != SessionState::Running {
                    return Ok(Update::Synchronizing);
                }
                match s.advance_frame() {
                    Ok(requests) => self.handle(requests).map(|()| Update::Advanced),
                    Err(GgrsError::PredictionThreshold) => Ok(Update::Stalled),
                    Err(GgrsError::NotSynchronized) => Ok(Update::Synchronizing),
                    Err(error) => Err(error.into()),
                }
            }
        }
    }

    fn take_events(&mut self, events: impl Iterator<Item = GgrsEvent<RollbackConfig<I, A>>>) {
        for event in events {
            let event = match event {
                GgrsEvent::Synchronized { addr } => RollbackEvent::Synchronized { peer: addr },
                GgrsEvent::Disconnected { addr } => RollbackEvent::Disconnected { peer: addr },
                GgrsEvent::NetworkInterrupted { addr, disconnect_timeout } => {
                    RollbackEvent::NetworkInterrupted { peer: addr, disconnect_in_ms: disconnect_timeout }
                }
                GgrsEvent::NetworkResumed { addr } => RollbackEvent::NetworkResumed { peer: addr },
                GgrsEvent::WaitRecommendation { skip_frames } => {
                    self.skip_updates = self.skip_updates.max(skip_frames);
                    continue;
                }
                GgrsEvent::DesyncDetected { frame, local_checksum, remote_checksum, addr } => RollbackEvent::Desync {
                    frame,
                    local: Some(local_checksum),
                    remote: Some(remote_checksum),
                    peer: Some(addr),
                    first_difference: None,
                },
                GgrsEvent::Synchronizing { .. } => continue,
            };
            self.events.push(event);
        }
    }

    /// Answers ggrs's requests, in order.
    fn handle(&mut self, requests: Vec<GgrsRequest<RollbackConfig<I, A>>>) -> Result<(), RollbackError> {
        let mut resimulating: Option<Instant> = None;
        for request in requests {
            match request {
                GgrsRequest::SaveGameState { cell, frame } => {
                    debug_assert_eq!(frame, self.frame, "ggrs saves the frame the world is at");
                    self.check_types()?;
                    let checksum = self.ring.save(&mut self.world, &self.registry, frame)?;
                    self.stats.saves += 1;
                    if self.debug {
                        self.record(frame);
                    }
                    cell.save(frame, Some(frame), Some(checksum));
                }
                GgrsRequest::LoadGameState { frame, .. } => {
                    resimulating.get_or_insert_with(Instant::now);
                    self.ring.load(&mut self.world, &self.registry, frame)?;
                    self.stats.rollbacks += 1;
                    let depth = (self.frame - frame).max(0) as u32;
                    self.stats.deepest_rollback = self.stats.deepest_rollback.max(depth);
                    self.frame = frame;
                }
                GgrsRequest::AdvanceFrame { inputs } => {
                    self.world.resource_mut::<PlayerInputs<I>>().inputs = inputs;
                    *self.world.resource_mut::<SimTime>() = SimTime { frame: self.frame, step: self.step };
                    self.world.resource_mut::<Time>().advance(self.step);
                    self.schedule.run(&mut self.world);
                    self.frame += 1;
                    self.stats.steps += 1;
                    if resimulating.is_some() {
                        self.stats.resimulated_steps += 1;
                    }
                }
            }
        }
        if let Some(start) = resimulating {
            self.stats.resimulation_time += start.elapsed();
        }
        Ok(())
    }

    /// Debug mode: records frame `frame`'s values; during a sync test, a
    /// second record of the same frame is compared with the first.
    fn record(&mut self, frame: Frame) {
        snapshot::details(&self.world, &self.registry, &mut self.scratch);
        let sync_test = matches!(self.session, None | Some(Session::SyncTest(_)));
        match self.records.iter().find(|(f, _)| *f == frame) {
            Some((_, first)) if sync_test => {
                let known = self.differences.iter().any(|(f, _)| *f == frame);
                if let Some(difference) = first_difference(first, &self.scratch, &self.registry).filter(|_| !known) {
                    self.differences.push_back((frame, difference));
                }
            }
            // In a game with other peers, a frame simulated again with the
            // real inputs replaces its record.
            Some(_) => {
                if let Some((_, kept)) = self.records.iter_mut().find(|(f, _)| *f == frame) {
                    kept.clone_from(&self.scratch);
                }
            }
            None => self.records.push_back((frame, self.scratch.clone())),
        }
        let keep = 64;
        while self.records.front().is_some_and(|(f, _)| *f < frame - keep) {
            self.records.pop_front();
        }
        while self.differences.front().is_some_and(|(f, _)| *f < frame - keep) {
            self.differences.pop_front();
        }
    }

    fn note_confirmed(&mut self, confirmed: Frame) {
        let Some(list) = self.confirmed.as_mut() else { return };
        let last = confirmed.min(self.frame - 1);
        while self.last_confirmed < last {
            self.last_confirmed += 1;
            if let Some(checksum) = self.ring.checksum_of(self.last_confirmed) {
                list.push((self.last_confirmed, checksum));
            }
        }
    }

    /// Saves the world as it is now into the ring as its present frame and
    /// returns the checksum: what a `SaveGameState` request does. For
    /// tools and measurements; during a session ggrs asks for saves.
    ///
    /// # Errors
    /// A type that cannot roll back.
    pub fn save_now(&mut self) -> Result<u128, RollbackError> {
        if self.session.is_none() && self.ring.len() < 4 {
            // The ring is sized by the session; without one, keep a few.
            self.ring = Ring::new(4);
            self.checked = (usize::MAX, usize::MAX, usize::MAX);
        }
        self.check_types()?;
        let checksum = self.ring.save(&mut self.world, &self.registry, self.frame)?;
        self.stats.saves += 1;
        Ok(checksum)
    }

    /// Makes the world the one saved as `frame`: what a `LoadGameState`
    /// request does. For tools and measurements; during a session ggrs
    /// asks for loads.
    ///
    /// # Errors
    /// [`RollbackError::MissingSnapshot`] if the frame is not kept.
    pub fn load_frame(&mut self, frame: Frame) -> Result<(), RollbackError> {
        self.ring.load(&mut self.world, &self.registry, frame)?;
        self.frame = frame;
        Ok(())
    }

    /// The world, for reading (drawing) between updates.
    pub fn world(&self) -> &World {
        &self.world
    }

    /// The world, for setting up before [`start`](Self::start). Changes
    /// made between updates of a running session do not roll back
    /// correctly unless every peer makes them at the same frame.
    pub fn world_mut(&mut self) -> &mut World {
        &mut self.world
    }

    /// The simulation schedule.
    pub fn schedule_mut(&mut self) -> &mut Schedule {
        &mut self.schedule
    }

    /// The session, once started.
    pub fn session(&self) -> Option<&Session<I, A>> {
        self.session.as_ref()
    }

    /// The session, once started (to add a player's disconnect, read
    /// network stats).
    pub fn session_mut(&mut self) -> Option<&mut Session<I, A>> {
        self.session.as_mut()
    }

    /// The frame the world is at: how many steps it has simulated.
    pub fn frame(&self) -> Frame {
        self.frame
    }

    /// The fixed step.
    pub fn step(&self) -> Duration {
        self.step
    }

    /// The last frame every peer's inputs are known for (the present frame
    /// minus one in a sync test, `NULL_FRAME` before a P2P game starts).
    pub fn confirmed_frame(&self) -> Frame {
        match &self.session {
            Some(Session::P2P(s)) => s.confirmed_frame(),
            Some(Session::Spectator(s)) => s.current_frame(),
            _ => self.frame - 1,
        }
    }

    /// The checksum saved with `frame`, while its snapshot is kept.
    pub fn checksum_of(&self, frame: Frame) -> Option<u128> {
        self.ring.checksum_of(frame)
    }

    /// The world as saved at the start of `frame`, while its snapshot is
    /// kept (the last `max_prediction` frames or so): its entities and
    /// components, without resources. Drawing a confirmed frame from here
    /// shows every peer the same picture.
    pub fn saved_world(&self, frame: Frame) -> Option<&World> {
        self.ring.world_of(frame)
    }

    /// The checksum of the world as it is now.
    pub fn checksum(&self) -> u128 {
        snapshot::checksum(&self.world, &self.registry)
    }

    /// Every confirmed frame's checksum, in frame order, when kept
    /// ([`keep_confirmed_checksums`](Self::keep_confirmed_checksums)).
    pub fn confirmed_checksums(&self) -> &[(Frame, u128)] {
        self.confirmed.as_deref().unwrap_or(&[])
    }

    /// The work counters.
    pub fn stats(&self) -> RollbackStats {
        self.stats
    }

    /// Debug mode's record of `frame`, while kept (the last 64 frames
    /// saved): in a game with other peers, the latest simulation of the
    /// frame; in a sync test, the first.
    pub fn frame_record(&self, frame: Frame) -> Option<FrameRecord> {
        let (_, details) = self.records.iter().find(|(f, _)| *f == frame)?;
        let values = details
            .iter()
            .map(|d| RecordedValue { kind: d.kind, entity: d.entity.map(Entity::to_bits), hash: d.hash })
            .collect();
        Some(FrameRecord { frame, values })
    }

    /// The first value two records of the same frame disagree on (this
    /// peer's and another's, after a [`RollbackEvent::Desync`]), named
    /// with this driver's registrations.
    pub fn first_difference(&self, mine: &FrameRecord, theirs: &FrameRecord) -> Option<Difference> {
        let details = |record: &FrameRecord| -> Vec<Detail> {
            record
                .values
                .iter()
                .map(|v| Detail { kind: v.kind, entity: v.entity.and_then(Entity::from_bits), hash: v.hash })
                .collect()
        };
        first_difference(&details(mine), &details(theirs), &self.registry)
    }

    /// Takes the events reported since the last call.
    pub fn drain_events(&mut self) -> std::vec::Drain<'_, RollbackEvent<A>> {
        self.events.drain(..)
    }
}

/// The first value two debug records of one frame disagree on.
fn first_difference(first: &[Detail], second: &[Detail], registry: &Registry) -> Option<Difference> {
    let name = |d: &Detail| if d.kind == u32::MAX { "entities" } else { registry.kind_name(d.kind) };
    for (a, b) in first.iter().zip(second) {
        if a != b {
            let d = if a.kind == b.kind && a.entity == b.entity { a } else { a.min_by_kind(b) };
            return Some(Difference { type_name: name(d), entity: d.entity });
        }
    }
    match first.len().cmp(&second.len()) {
        std::cmp::Ordering::Equal => None,
        std::cmp::Ordering::Greater => {
            Some(Difference { type_name: name(&first[second.len()]), entity: first[second.len()].entity })
        }
        std::cmp::Ordering::Less => {
            Some(Difference { type_name: name(&second[first.len()]), entity: second[first.len()].entity })
        }
    }
}

impl Detail {
    fn min_by_kind<'a>(&'a self, other: &'a Detail) -> &'a Detail {
        if self.kind <= other.kind {
            self
        } else {
            other
        }
    }
}
