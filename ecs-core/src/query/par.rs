//! Parallel iteration: [`QueryParIter`], behind `par_iter`, `par_iter_mut`,
//! `par_for_each` and `par_for_each_mut` of [`QueryState`] and
//! [`Query`](crate::Query).
//!
//! The calling thread always works, and what decides whether it asks for
//! help is the work, not the number of rows: it times its first rows and
//! asks the pool's other threads to help only when the rest promises at
//! least [`SPAWN_WORTH`] of work. The query state remembers the time a row
//! took for the closure it ran ([`ParMemo`]): the next run of the same
//! closure shares heavy work from its first row, and runs light work on
//! the calling thread without reading the clock, timing it again only
//! every few runs. Helpers and caller take chunks of rows from a shared
//! counter, so a helper that the pool wakes late (tens of microseconds on
//! a busy machine) takes what is left, or nothing, and the caller never
//! waits for one that has not started: parallel iteration costs about what
//! serial iteration does when the pool cannot help.

#[cfg(feature = "parallel")]
use std::any::Any;
#[cfg(feature = "parallel")]
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
#[cfg(feature = "parallel")]
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
#[cfg(feature = "parallel")]
use std::sync::{Arc, Mutex};
#[cfg(feature = "parallel")]
use std::time::Duration;

#[cfg(feature = "parallel")]
use crate::clock::Instant;
#[cfg(feature = "parallel")]
use crate::component::change::RunTicks;
use crate::query::fetch::{QueryData, ReadOnlyQueryData};
use crate::query::filter::QueryFilter;
use crate::query::state::QueryState;
#[cfg(feature = "parallel")]
use crate::storage::archetype::{Archetype, ArchetypeId};
use crate::world::World;

/// The least work, estimated from timed rows, for which the caller asks the
/// pool's other threads to help.
///
/// Asking (`rayon::spawn`) costs the calling thread about 0.3 µs while the
/// pool's threads still spin from recent work, and 7 to 19 µs when they
/// sleep (a futex wake-up in a virtual machine, on the 2-core Xeon the
/// report runs on); a woken thread starts 30 to 70 µs later. A loop run
/// every frame keeps the pool spinning; with 50 µs of work left, a helper
/// that arrives takes close to half of it, and one that does not costs the
/// caller the price of asking.
#[cfg(feature = "parallel")]
const SPAWN_WORTH: Duration = Duration::from_micros(50);

/// A probe of unknown work stops once its rows have taken this long, or at
/// `1 / PROBE_PARTS` of the rows: long enough that the clock's cost and a
/// first row's cache misses do not swamp the estimate.
#[cfg(feature = "parallel")]
const PROBE_TIME: Duration = Duration::from_micros(1);

/// Known work whose whole run is estimated below `SPAWN_WORTH /
/// CLOCK_WHOLE_BELOW` is timed as a whole instead of probed: a probe splits
/// the loop and reads the clock between its steps, which costs more than
/// the rows themselves when there are few.
#[cfg(feature = "parallel")]
const CLOCK_WHOLE_BELOW: f64 = 4.0;

/// A probe times at most the first `1 / PROBE_PARTS` of the rows (and at
/// least one row) before the caller decides whether to ask for help.
#[cfg(feature = "parallel")]
const PROBE_PARTS: usize = 16;

/// What two clock reads cost, about (75 ns measured on the 2-core Xeon the
/// report runs on, a virtual machine): with [`CLOCK_SHARE`] it sets how
/// many runs of light work go unclocked between two timed ones.
#[cfg(feature = "parallel")]
const CLOCK_PAIR: Duration = Duration::from_nanos(80);

/// The most the clock may add to light work, spread over the runs between
/// two probes: a loop of 200 ns is timed once in 40 runs.
#[cfg(feature = "parallel")]
const CLOCK_SHARE: f64 = 0.01;

/// The most runs of light work between two probes, whatever the clock
/// costs: a closure that turns heavy is noticed within this many runs.
#[cfg(feature = "parallel")]
const MAX_UNCLOCKED: u32 = 64;

/// The shortest chunk of work a thread takes from the shared counter, in
/// time; the rows it makes are worked out from the time a row takes.
/// Taking a chunk is one compare-and-swap on a cache line the other
/// threads write too (about 0.1 µs when it moves between cores): a chunk
/// of 5 µs keeps that near 2%, and is short enough that the threads finish
/// close together.
#[cfg(feature = "parallel")]
const MIN_CHUNK: Duration = Duration::from_micros(5);

/// What a query state's parallel runs without a batch size measured, kept
/// for the next run: the closure they ran (by its type), the time a row of
/// it took, and how many more runs may go on the calling thread without
/// reading the clock.
///
/// A guess, never a promise: the items, and the order of each thread's
/// calls within a table, do not depend on it. Relaxed atomics, since a
/// read-only state can run on several threads at once; a torn update only
/// costs one run a worse decision.
#[cfg(feature = "parallel")]
#[derive(Debug, Default)]
pub(crate) struct ParMemo {
    /// The address of the closure type's name, or 0 before any run.
    work: AtomicUsize,
    /// Nanoseconds a row took, as `f32` bits.
    per_row: AtomicU32,
    /// Runs left that may go on the calling thread unclocked.
    unclocked: AtomicU32,
    /// Runs of fewer rows than this are light at `per_row` (their whole
    /// estimate is under [`SPAWN_WORTH`]): the plan's test for an unclocked
    /// run, in integers.
    light_below: AtomicUsize,
    /// Whether the last probe found heavy work where the memo said light:
    /// one such probe (a thread descheduled while it was timed) is not
    /// believed; the next probe must find it again.
    doubted: AtomicBool,
}

/// What a parallel run without a batch size does first.
#[cfg(feature = "parallel")]
#[derive(Clone, Copy, Debug, PartialEq)]
enum Plan {
    /// Light work, measured recently: all of it on the calling thread,
    /// without reading the clock.
    Alone,
    /// Heavy work: ask for help at once, in chunks made for rows of this
    /// many seconds.
    Share(f64),
    /// Time the first rows, in steps starting at this many rows, and decide.
    Probe(usize),
    /// Work known to be far too light to share: run it all on the calling
    /// thread, in its plain loop, and time the whole, so that work turning
    /// heavy is noticed for the next run.
    Clock,
}

#[cfg(feature = "parallel")]
impl ParMemo {
    /// The key of closure type `G`: the address of its name, which the
    /// compiler writes once per type.
    fn key<G>() -> usize {
        std::any::type_name::<G>().as_ptr() as usize
    }

    /// What a run of `total` rows of closure `key` does first, counting an
    /// unclocked run.
    #[inline(always)]
    fn plan(&self, key: usize, total: usize) -> Plan {
        if self.work.load(Ordering::Relaxed) == key && total < self.light_below.load(Ordering::Relaxed) {
            let left = self.unclocked.load(Ordering::Relaxed);
            if left > 0 {
                self.unclocked.store(left - 1, Ordering::Relaxed);
                return Plan::Alone;
            }
        }
        self.plan_in_full(key, total)
    }

    /// [`ParMemo::plan`] for a run that is not known light work with
    /// unclocked runs left.
    #[inline(never)]
    fn plan_in_full(&self, key: usize, total: usize) -> Plan {
        let per_row = f64::from(f32::from_bits(self.per_row.load(Ordering::Relaxed))) * 1e-9;
        if self.work.load(Ordering::Relaxed) != key || per_row <= 0.0 {
            // Unknown work: grow the probe from one row.
            return Plan::Probe(1);
        }
        if per_row * total as f64 >= SPAWN_WORTH.as_secs_f64() {
            return Plan::Share(per_row);
        }
        match self.unclocked.load(Ordering::Relaxed) {
            0 if per_row * (total as f64) < SPAWN_WORTH.as_secs_f64() / CLOCK_WHOLE_BELOW => Plan::Clock,
            0 => Plan::Probe(probe_cap(total)),
            left => {
                self.unclocked.store(left - 1, Ordering::Relaxed);
                Plan::Alone
            }
        }
    }

    /// Whether a probe that found `per_row` seconds a row, in a run of
    /// `total` rows of closure `key`, is to be believed before sharing:
    /// when the memo knew the work as light, a first probe that finds it
    /// heavy is doubted (the next run probes again instead of running
    /// unclocked); a second one in a row is believed. Timing a few rows is
    /// at the mercy of the scheduler: one preemption inside the probe would
    /// otherwise wake the pool for a loop of a microsecond.
    fn believe_heavy(&self, key: usize, total: usize) -> bool {
        let known = f64::from(f32::from_bits(self.per_row.load(Ordering::Relaxed))) * 1e-9;
        let light = self.work.load(Ordering::Relaxed) == key
            && known > 0.0
            && known * (total as f64) < SPAWN_WORTH.as_secs_f64();
        if light && !self.doubted.swap(true, Ordering::Relaxed) {
            self.unclocked.store(0, Ordering::Relaxed);
            return false;
        }
        true
    }

    /// Remembers a timed run of `total` rows of closure `key` that took
    /// `per_row` seconds a row, unless it is heavy work the memo knew as
    /// light and the first such run ([`ParMemo::believe_heavy`]).
    fn observe(&self, key: usize, per_row: f64, total: usize) {
        let heavy = per_row * (total as f64) >= SPAWN_WORTH.as_secs_f64();
        if !heavy || self.believe_heavy(key, total) {
            self.learn(key, per_row, total);
        }
    }

    /// Remembers that a row of closure `key` took `per_row` seconds, in a
    /// run of `total` rows.
    fn learn(&self, key: usize, per_row: f64, total: usize) {
        self.doubted.store(false, Ordering::Relaxed);
        let whole = per_row * total as f64;
        let unclocked = if whole > 0.0 {
            (CLOCK_PAIR.as_secs_f64() / (CLOCK_SHARE * whole)).round().min(f64::from(MAX_UNCLOCKED)) as u32
        } else {
            MAX_UNCLOCKED
        };
        // At least a picosecond: zero means "never measured".
        let nanos = (per_row * 1e9).max(1e-3) as f32;
        self.per_row.store(nanos.to_bits(), Ordering::Relaxed);
        // Saturates at `usize::MAX` for work of about a picosecond a row.
        let light_below = (SPAWN_WORTH.as_secs_f64() / (f64::from(nanos) * 1e-9)).ceil() as usize;
        self.light_below.store(light_below, Ordering::Relaxed);
        self.unclocked.store(unclocked, Ordering::Relaxed);
        self.work.store(key, Ordering::Relaxed);
    }
}

/// The most rows a probe of `total` rows times.
#[cfg(feature = "parallel")]
fn probe_cap(total: usize) -> usize {
    (total / PROBE_PARTS).max(1)
}

/// A query's items handed out on several threads: see
/// [`QueryParIter::for_each`]. Made by [`QueryState::par_iter`],
/// [`QueryState::par_iter_mut`], [`Query::par_iter`](crate::Query::par_iter)
/// and [`Query::par_iter_mut`](crate::Query::par_iter_mut).
///
/// ```
/// # use archetable::prelude::*;
/// # #[derive(Component)] struct Position(f32);
/// # #[derive(Component)] struct Velocity(f32);
/// let mut world = World::new();
/// world.spawn_batch((0..10_000).map(|i| (Position(0.0), Velocity(i as f32)))).for_each(drop);
/// let mut bodies = QueryState::<(&mut Position, &Velocity)>::new(&mut world);
///
/// // The engine picks from the work: alone on the calling thread for
/// // light loops, helped by rayon's threads for heavy ones, whatever the
/// // number of entities.
/// bodies.par_iter_mut(&mut world).for_each(|(mut p, v)| p.0 += v.0);
///
/// // Or split it into chunks of 64 entities whatever the work.
/// bodies.par_iter_mut(&mut world).batch_size(64).for_each(|(mut p, v)| {
///     p.0 = (p.0 + v.0).sqrt();
/// });
/// ```
pub struct QueryParIter<'w, 's, Q: QueryData, F: QueryFilter = ()> {
    world: &'w World,
    state: &'s QueryState<Q, F>,
    #[cfg_attr(not(feature = "parallel"), allow(dead_code))]
    batch_size: Option<usize>,
}

impl<Q: QueryData, F: QueryFilter> QueryState<Q, F> {
    /// The matching entities of `world`, read-only, to visit on several
    /// threads with [`QueryParIter::for_each`].
    pub fn par_iter<'w, 's>(&'s mut self, world: &'w World) -> QueryParIter<'w, 's, Q, F>
    where
        Q: ReadOnlyQueryData,
    {
        self.update(world);
        self.begin_run(world);
        // SAFETY: `update` ran; `Q` is read-only and the world is borrowed
        // shared for `'w`.
        unsafe { QueryParIter::new(world, self) }
    }

    /// The matching entities of `world`, with mutable access, to visit on
    /// several threads with [`QueryParIter::for_each`].
    pub fn par_iter_mut<'w, 's>(&'s mut self, world: &'w mut World) -> QueryParIter<'w, 's, Q, F> {
        self.update(world);
        self.begin_run_mut(world);
        let world: &'w World = world;
        // SAFETY: `update` ran; the exclusive borrow of the world covers
        // `'w`, and `new` refused conflicting access.
        unsafe { QueryParIter::new(world, self) }
    }

    /// Calls `f` on every matching entity of `world`, read-only, spreading
    /// the rows over rayon's thread pool when the work is heavy enough to
    /// pay for it; see [`QueryParIter::for_each`].
    pub fn par_for_each<'w>(&mut self, world: &'w World, f: impl Fn(Q::Item<'w>) + Send + Sync)
    where
        Q: ReadOnlyQueryData,
    {
        self.par_iter(world).for_each(f);
    }

    /// Calls `f` on every matching entity of `world`, with mutable access,
    /// spreading the rows over rayon's thread pool when the work is heavy
    /// enough to pay for it; see [`QueryParIter::for_each`]. Each entity is
    /// visited once, by one thread.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component)] struct Hp(u32);
    /// let mut world = World::new();
    /// world.spawn_batch((0..1000).map(Hp)).for_each(drop);
    /// let mut state = QueryState::<&mut Hp>::new(&mut world);
    /// state.par_for_each_mut(&mut world, |mut hp| hp.0 *= 2);
    /// assert_eq!(world.query::<&Hp>().map(|hp| hp.0 as u64).sum::<u64>(), 999 * 1000);
    /// ```
    pub fn par_for_each_mut<'w>(&mut self, world: &'w mut World, f: impl Fn(Q::Item<'w>) + Send + Sync) {
        self.par_iter_mut(world).for_each(f);
    }
}

impl<'w, 's, Q: QueryData, F: QueryFilter> QueryParIter<'w, 's, Q, F> {
    /// # Safety
    /// `state.update(world)` has run; unless `Q` is read-only, nothing else
    /// borrows the components `Q` writes for `'w`, and nothing writes the
    /// ones it reads (as for [`QueryState::iter_unchecked`]).
    pub(crate) unsafe fn new(world: &'w World, state: &'s QueryState<Q, F>) -> Self {
        QueryParIter { world, state, batch_size: None }
    }

    /// Splits the rows into chunks of `rows` entities (at least one), handed
    /// to whichever thread is free, instead of letting the engine decide
    /// from the work; a query of `rows` entities or fewer then runs on the
    /// calling thread.
    ///
    /// The engine's own choice is usually as good: use this when you know
    /// the work better than the first rows show it (work that varies a lot
    /// from entity to entity, or a fixed split for a test). Without the
    /// `parallel` feature it changes nothing.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component)] struct Agent { goal: u32, steps: u32 }
    /// let mut world = World::new();
    /// world.spawn_batch((0..300).map(|goal| Agent { goal, steps: 0 })).for_each(drop);
    /// let mut agents = QueryState::<&mut Agent>::new(&mut world);
    /// agents.par_iter_mut(&mut world).batch_size(16).for_each(|mut agent| {
    ///     agent.steps = (0..agent.goal).filter(|n| n % 3 == 0).count() as u32;
    /// });
    /// # assert_eq!(world.query::<&Agent>().map(|a| a.steps).max(), Some(100));
    /// ```
    pub fn batch_size(mut self, rows: usize) -> Self {
        self.batch_size = Some(rows.max(1));
        self
    }

    /// Calls `f` on every matching entity, each once, by one thread: the
    /// calling thread, helped by rayon's thread pool when that pays.
    ///
    /// Without a [`batch_size`](QueryParIter::batch_size) the work decides,
    /// not the number of entities: the calling thread times its first rows
    /// and asks for help only when the rest promises about 50 µs of work or
    /// more, so a few hundred entities of heavy work (a path search, a
    /// matrix inversion per entity) are shared while a thousand entities of
    /// light work stay on the calling thread, at the speed of `for_each`.
    /// The query state remembers what it measured for this closure: the
    /// next run of heavy work is shared from its first row, and light work
    /// is timed again only every few runs. The items and the changes are
    /// the same either way; only the order of the calls differs. Without
    /// the `parallel` feature, everything runs on the calling thread.
    ///
    /// # Panics
    /// If `f` panics, on any thread: the first panic is resumed on the
    /// calling thread once every thread has stopped.
    pub fn for_each<G: Fn(Q::Item<'w>) + Send + Sync>(self, f: G) {
        #[cfg(feature = "parallel")]
        {
            let archetypes = self.world.archetypes().as_slice();
            let total: usize = self.state.matched_ids().map(|id| archetypes[id.index()].len()).sum();
            // Built only where the rows are cut up: reading the run's ticks
            // back right after `begin_run` wrote them stalls the load.
            let rows = || {
                let (q_state, f_state, matched, ticks) = self.state.parts();
                Rows::<Q, F> { archetypes, world: self.world, matched, q_state, f_state, ticks }
            };
            match self.batch_size {
                Some(batch) if total > batch => {
                    let helpers = rayon::current_num_threads().saturating_sub(1);
                    if helpers > 0 {
                        let mut cursor = Cursor::default();
                        // SAFETY: the caller of `new` promised the access,
                        // for `'w`; rows `0..total` are all of them.
                        unsafe { rows().share(&mut cursor, 0, total, Chunk::Fixed(batch), helpers, &f) };
                        return;
                    }
                }
                Some(_) => {}
                None if total > 1 => {
                    let memo = self.state.par_memo();
                    let key = ParMemo::key::<G>();
                    match memo.plan(key, total) {
                        Plan::Alone => {}
                        Plan::Clock => {
                            let clock = Instant::now();
                            // SAFETY: the caller of `new` promised `update`
                            // and the access.
                            unsafe { self.state.for_each_unchecked(self.world, f) };
                            memo.observe(key, clock.elapsed().as_secs_f64() / total as f64, total);
                            return;
                        }
                        plan => {
                            // SAFETY: the caller of `new` promised the
                            // access, for `'w`; `total` is the rows' count.
                            unsafe { rows().decide(plan, total, memo, key, &f) };
                            return;
                        }
                    }
                }
                None => {}
            }
        }
        // SAFETY: the caller of `new` promised `update` and the access.
        unsafe { self.state.for_each_unchecked(self.world, f) };
    }
}

/// The matched tables of a parallel run, laid end to end: row `r` of the
/// whole is a row of the table where the running sum of the table lengths
/// passes `r`.
#[cfg(feature = "parallel")]
struct Rows<'w, 's, Q: QueryData, F: QueryFilter> {
    archetypes: &'w [Archetype],
    world: &'w World,
    matched: &'s [(ArchetypeId, Q::Cache)],
    q_state: &'s Q::State,
    f_state: &'s F::State,
    ticks: RunTicks,
}

/// Where one thread is among the tables laid end to end: table `table` of
/// the matched list starts at row `base` of the whole. Each thread takes
/// rows in increasing order, so it only ever moves forward.
#[cfg(feature = "parallel")]
#[derive(Default)]
struct Cursor {
    table: usize,
    base: usize,
}

#[cfg(feature = "parallel")]
impl<'w, Q: QueryData, F: QueryFilter> Rows<'w, '_, Q, F> {
    /// Calls `f` on rows `start..end` of the whole, from `cursor` on.
    ///
    /// # Safety
    /// As for [`QueryParIter::new`]; `end` is at most the rows of all the matched tables, `start` is at or
    /// after the rows `cursor` has passed, and no other call of this run, on
    /// any thread, covers any of these rows.
    #[inline]
    unsafe fn run<G: Fn(Q::Item<'w>)>(&self, cursor: &mut Cursor, mut start: usize, end: usize, f: &G) {
        while start < end {
            let (id, cache) = self.matched[cursor.table];
            let archetype = &self.archetypes[id.index()];
            let len = archetype.len();
            if start >= cursor.base + len {
                cursor.base += len;
                cursor.table += 1;
                continue;
            }
            let (first, last) = (start - cursor.base, (end - cursor.base).min(len));
            // SAFETY: `cache` is `match_archetype`'s for this archetype,
            // which passes `F`; `first..last` is within its rows, fetched by
            // this call alone (caller); the access is the caller's.
            unsafe {
                let table = self.world.table_ref(archetype);
                let mut fetch = Q::init_fetch(self.q_state, cache, table, self.ticks);
                let mut filter = F::init_fetch(self.f_state, table, self.ticks);
                for row in first..last {
                    if (F::IS_ARCHETYPAL || F::filter_row(&mut filter, row))
                        && (Q::DENSE || Q::row_matches(&fetch, row))
                    {
                        f(Q::fetch(&mut fetch, row));
                    }
                }
            }
            start = cursor.base + last;
        }
    }

    /// Calls `f` on each of the `total` rows once, following `plan`: shares
    /// them at once, or times the first rows and shares the rest only if
    /// it promises [`SPAWN_WORTH`] of work. Tells `memo` what it measured.
    ///
    /// # Safety
    /// As for [`QueryParIter::new`]; `total` is the rows of all the matched tables.
    #[inline(never)]
    unsafe fn decide<G: Fn(Q::Item<'w>) + Send + Sync>(
        &self,
        plan: Plan,
        total: usize,
        memo: &ParMemo,
        key: usize,
        f: &G,
    ) {
        let mut cursor = Cursor::default();
        let helpers = rayon::current_num_threads().saturating_sub(1);
        let (start, per_row) = match plan {
            Plan::Share(per_row) if helpers > 0 => (0, per_row),
            Plan::Share(_) | Plan::Alone | Plan::Clock => {
                // SAFETY: every row, once (caller).
                unsafe { self.run(&mut cursor, 0, total, f) };
                return;
            }
            Plan::Probe(first) => {
                // Time the first rows, more at each step, until they have
                // taken long enough to tell or the probe's share is done.
                let cap = probe_cap(total);
                let clock = Instant::now();
                let (mut done, mut next) = (0, first.min(cap));
                let per_row = loop {
                    // SAFETY: rows `done..next` follow the cursor's, and
                    // are this call's (caller).
                    unsafe { self.run(&mut cursor, done, next, f) };
                    done = next;
                    let elapsed = clock.elapsed();
                    if done >= cap || elapsed >= PROBE_TIME {
                        break elapsed.as_secs_f64() / done as f64;
                    }
                    next = (2 * done).min(cap);
                };
                let heavy = per_row * ((total - done) as f64) >= SPAWN_WORTH.as_secs_f64();
                let doubted = heavy && helpers > 0 && !memo.believe_heavy(key, total);
                if !doubted {
                    memo.learn(key, per_row, total);
                }
                if helpers == 0 || !heavy || doubted {
                    // SAFETY: the rest of the rows, after the cursor's.
                    unsafe { self.run(&mut cursor, done, total, f) };
                    return;
                }
                (done, per_row)
            }
        };
        let min = (MIN_CHUNK.as_secs_f64() / per_row.max(1e-12)).clamp(1.0, total as f64) as usize;
        // SAFETY: rows `start..total` follow the cursor's (caller).
        let measured =
            unsafe { self.share(&mut cursor, start, total, Chunk::Guided { min, threads: helpers + 1 }, helpers, f) };
        if let Some(per_row) = measured {
            memo.learn(key, per_row, total);
        }
    }

    /// Calls `f` on rows `start..end` once, on the calling thread and on up
    /// to `helpers` pool threads, cut as `chunk` says; returns the time a
    /// row took on the calling thread, if it did any.
    ///
    /// # Safety
    /// As for [`QueryParIter::new`]; `end` is the rows of all the matched tables, and `start` is at
    /// or after the rows `cursor` has passed.
    unsafe fn share<G: Fn(Q::Item<'w>) + Send + Sync>(
        &self,
        cursor: &mut Cursor,
        start: usize,
        end: usize,
        chunk: Chunk,
        helpers: usize,
        f: &G,
    ) -> Option<f64> {
        let task = |cursor: &mut Cursor, start: usize, end: usize| {
            // SAFETY: `Shared` hands out each row once (its counter only
            // grows, and each thread's chunks increase); the access is the
            // caller's.
            unsafe { self.run(cursor, start, end, f) }
        };
        share(start, end, chunk, helpers, cursor, &task)
    }
}

/// How the shared rows are cut.
#[cfg(feature = "parallel")]
#[derive(Clone, Copy)]
enum Chunk {
    /// Chunks of this many rows (a batch size).
    Fixed(usize),
    /// Chunks of the rows left over twice the threads, at least `min` rows:
    /// long at first, short towards the end, so the threads finish
    /// together.
    Guided { min: usize, threads: usize },
}

/// A thread's work on rows `start..end`, from its cursor on.
#[cfg(feature = "parallel")]
type Task<'a> = dyn Fn(&mut Cursor, usize, usize) + Sync + 'a;

/// The state a parallel run shares between the calling thread and its
/// helpers. Helpers hold it through an `Arc`, since one may start after the
/// call has returned; the task it points to lives only as long as the call.
#[cfg(feature = "parallel")]
struct Shared {
    /// The first row no thread has taken yet.
    next: AtomicUsize,
    /// One past the last row.
    end: usize,
    chunk: Chunk,
    /// Helpers between their check of `closed` and the end of their work.
    active: AtomicUsize,
    /// Set by the caller once it stops working: a helper that starts after
    /// that touches nothing.
    closed: AtomicBool,
    /// The first panic of a helper, for the caller to resume.
    panic: Mutex<Option<Box<dyn Any + Send>>>,
    /// The work, valid while `closed` is unset or `active` is non-zero
    /// (see [`share`]); its lifetime is erased.
    task: *const Task<'static>,
}

// SAFETY: the task is `Sync`, so calling it from several threads through
// the pointer is allowed; `share` keeps it alive while any thread may call
// it. Every other field is `Send + Sync`.
#[cfg(feature = "parallel")]
unsafe impl Send for Shared {}
// SAFETY: as above.
#[cfg(feature = "parallel")]
unsafe impl Sync for Shared {}

#[cfg(feature = "parallel")]
impl Shared {
    /// The next chunk of rows, or `None` once every row is taken.
    fn claim(&self) -> Option<(usize, usize)> {
        let mut start = self.next.load(Ordering::Relaxed);
        loop {
            let left = self.end.checked_sub(start).filter(|&left| left > 0)?;
            let size = match self.chunk {
                Chunk::Fixed(rows) => rows,
                Chunk::Guided { min, threads } => (left / (2 * threads)).max(min),
            };
            let end = start + size.min(left);
            // Relaxed: the rows' data is handed over by the spawn and the
            // `active` count, not by this counter.
            match self.next.compare_exchange_weak(start, end, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => return Some((start, end)),
                Err(now) => start = now,
            }
        }
    }

    /// Takes chunks and works on them until none is left; returns the rows
    /// it took.
    ///
    /// # Safety
    /// The task is alive: the caller of `share` is inside it, or this is
    /// a helper counted in `active` that found `closed` unset.
    unsafe fn work(&self, cursor: &mut Cursor) -> usize {
        let mut rows = 0;
        while let Some((start, end)) = self.claim() {
            // SAFETY: alive (caller); chunks are disjoint and each thread's
            // increase, as `run` needs.
            unsafe { (*self.task)(cursor, start, end) };
            rows += end - start;
        }
        rows
    }

    /// A pool thread's part: work unless the caller has already closed the
    /// run.
    fn help(&self) {
        // SeqCst on `active` and `closed`, here and in `Close::drop`: either
        // the caller sees this helper counted and waits for it, or this
        // helper sees the run closed and leaves the task alone.
        self.active.fetch_add(1, Ordering::SeqCst);
        if !self.closed.load(Ordering::SeqCst) {
            // SAFETY: counted in `active` and not closed: the caller waits
            // for this helper before the task goes away.
            let result = catch_unwind(AssertUnwindSafe(|| unsafe { self.work(&mut Cursor::default()) }));
            if let Err(payload) = result {
                // Stop the others early; the caller resumes the panic.
                self.next.store(self.end, Ordering::Relaxed);
                let mut panic = self.panic.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
                panic.get_or_insert(payload);
            }
        }
        // The last touch of the task happened before this; the caller's
        // wait reads it with SeqCst, so it sees every write of the work.
        self.active.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Closes a run when the caller stops, normally or by a panic, and waits
/// for the helpers inside it to leave.
#[cfg(feature = "parallel")]
struct Close<'a>(&'a Shared);

#[cfg(feature = "parallel")]
impl Drop for Close<'_> {
    fn drop(&mut self) {
        let shared = self.0;
        if std::thread::panicking() {
            // The caller's `f` panicked: the helpers stop after their chunk.
            shared.next.store(shared.end, Ordering::Relaxed);
        }
        shared.closed.store(true, Ordering::SeqCst);
        let mut spins = 0u32;
        while shared.active.load(Ordering::SeqCst) != 0 {
            if spins < 64 {
                spins += 1;
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
    }
}

/// Works through rows `start..end` in chunks on the calling thread, with
/// `helpers` pool threads asked to take chunks too; returns once every row
/// is done and no helper is inside `task`, with the seconds a row took on
/// the calling thread (`None` if it took none).
#[cfg(feature = "parallel")]
fn share(start: usize, end: usize, chunk: Chunk, helpers: usize, cursor: &mut Cursor, task: &Task<'_>) -> Option<f64> {
    // SAFETY: only the lifetime changes (same layout). The pointer is
    // called only while this function runs: the caller's own calls below,
    // and helpers counted in `active` before `Close` sets `closed`, which
    // `Close` waits for; a helper that starts later sees `closed` and does
    // not call it.
    let task: *const Task<'static> = unsafe { std::mem::transmute::<*const Task<'_>, *const Task<'static>>(task) };
    let shared = Arc::new(Shared {
        next: AtomicUsize::new(start),
        end,
        chunk,
        active: AtomicUsize::new(0),
        closed: AtomicBool::new(false),
        panic: Mutex::new(None),
        task,
    });
    let per_row;
    {
        // Before the first spawn: whatever happens next, the run is closed
        // and the helpers inside it waited for before the task goes away.
        let _close = Close(&shared);
        for _ in 0..helpers {
            let shared = Arc::clone(&shared);
            rayon::spawn(move || shared.help());
        }
        let clock = Instant::now();
        // SAFETY: the task is alive while this function runs.
        let rows = unsafe { shared.work(cursor) };
        per_row = (rows > 0).then(|| clock.elapsed().as_secs_f64() / rows as f64);
    }
    let panic = shared.panic.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).take();
    if let Some(payload) = panic {
        resume_unwind(payload);
    }
    per_row
}

#[cfg(test)]
mod tests {
    use std::panic::{catch_unwind, AssertUnwindSafe};
    use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
    use std::sync::Mutex;

    use archetable_macros::Component;

    use crate::{Changed, Entity, Query, QueryState, With, Without, World};

    #[derive(Component, Clone, Copy, Debug, PartialEq)]
    #[component(track_changes)]
    struct Hp(u64);

    #[derive(Component)]
    struct Red;

    #[derive(Component)]
    struct Blue;

    /// `n` entities with `Hp(i)` spread over three tables, with an emptied
    /// table between them (a matched table with no rows), and their
    /// handles in spawn order.
    fn world(n: u64) -> (World, Vec<Entity>) {
        let mut world = World::new();
        let gone = world.spawn((Hp(0), Red, Blue));
        world.despawn(gone).unwrap();
        let entities = (0..n)
            .map(|i| match i % 3 {
                0 => world.spawn(Hp(i)),
                1 => world.spawn((Hp(i), Red)),
                _ => world.spawn((Hp(i), Blue)),
            })
            .collect();
        (world, entities)
    }

    /// Every way to run one parallel pass: the engine's choice, and batch
    /// sizes that make chunks within and across tables.
    const BATCHES: [Option<usize>; 5] = [None, Some(1), Some(7), Some(1000), Some(usize::MAX)];

    fn par_mut(state: &mut QueryState<(Entity, &'static mut Hp)>, world: &mut World, batch: Option<usize>) {
        let seen = Mutex::new(Vec::new());
        let mut iter = state.par_iter_mut(world);
        if let Some(rows) = batch {
            iter = iter.batch_size(rows);
        }
        iter.for_each(|(entity, mut hp)| {
            if hp.0 % 2 == 0 {
                hp.0 = hp.0 * 10 + 1;
            }
            seen.lock().unwrap().push(entity);
        });
        let mut seen = seen.into_inner().unwrap();
        let before = seen.len();
        seen.sort();
        seen.dedup();
        assert_eq!(seen.len(), before, "an entity was visited twice");
        assert_eq!(seen.len(), state.iter_mut(world).count(), "an entity was missed");
    }

    #[test]
    fn par_for_each_mut_writes_what_for_each_mut_writes() {
        for n in [0, 1, 5, 1023, 1024, 5000, 60_000] {
            for batch in BATCHES {
                let (mut serial, entities) = world(n);
                let (mut parallel, _) = world(n);
                let mut s = QueryState::<(Entity, &mut Hp)>::new(&mut serial);
                let mut p = QueryState::<(Entity, &mut Hp)>::new(&mut parallel);
                s.for_each_mut(&mut serial, |(_, mut hp)| {
                    if hp.0 % 2 == 0 {
                        hp.0 = hp.0 * 10 + 1;
                    }
                });
                par_mut(&mut p, &mut parallel, batch);
                for &e in &entities {
                    assert_eq!(parallel.get::<Hp>(e), serial.get::<Hp>(e), "n {n}, batch {batch:?}");
                    assert_eq!(
                        parallel.component_ticks::<Hp>(e),
                        serial.component_ticks::<Hp>(e),
                        "n {n}, batch {batch:?}: the same ticks"
                    );
                }
                // The writes are changes, and only they.
                let changed = |world: &mut World| {
                    let mut q = QueryState::<Entity, Changed<Hp>>::new(world);
                    let mut v: Vec<Entity> = q.iter(world).collect();
                    v.sort();
                    v
                };
                let mut reader_s = QueryState::<Entity, Changed<Hp>>::new(&mut serial);
                let mut reader_p = QueryState::<Entity, Changed<Hp>>::new(&mut parallel);
                assert_eq!(changed(&mut serial), changed(&mut parallel));
                // A second pass writes nothing new: odd values stay.
                reader_s.iter(&serial).for_each(drop);
                reader_p.iter(&parallel).for_each(drop);
                s.for_each_mut(&mut serial, |(_, mut hp)| {
                    if hp.0 % 2 == 0 {
                        hp.0 += 1;
                    }
                });
                par_mut(&mut p, &mut parallel, batch);
                let count = |r: &mut QueryState<Entity, Changed<Hp>>, w: &World| r.iter(w).count();
                assert_eq!(count(&mut reader_s, &serial), count(&mut reader_p, &parallel), "n {n}, batch {batch:?}");
            }
        }
    }

    #[test]
    fn par_for_each_visits_what_the_filters_let_through() {
        let (mut world, _) = world(30_000);
        for batch in BATCHES {
            // An archetype filter.
            let mut not_blue = QueryState::<&Hp, Without<Blue>>::new(&mut world);
            let sum = AtomicU64::new(0);
            let mut iter = not_blue.par_iter(&world);
            if let Some(rows) = batch {
                iter = iter.batch_size(rows);
            }
            iter.for_each(|hp| {
                sum.fetch_add(hp.0, Ordering::Relaxed);
            });
            let expected: u64 = not_blue.iter(&world).map(|hp| hp.0).sum();
            assert_eq!(sum.into_inner(), expected);

            // A row filter: the reader has seen every value, then the Red
            // entities' values are written.
            let mut changed = QueryState::<&Hp, Changed<Hp>>::new(&mut world);
            changed.iter(&world).for_each(drop);
            QueryState::<&mut Hp, With<Red>>::new(&mut world).for_each_mut(&mut world, |mut hp| hp.0 += 0);
            let count = AtomicUsize::new(0);
            let mut iter = changed.par_iter(&world);
            if let Some(rows) = batch {
                iter = iter.batch_size(rows);
            }
            iter.for_each(|_| {
                count.fetch_add(1, Ordering::Relaxed);
            });
            assert_eq!(count.into_inner(), 10_000, "batch {batch:?}");
        }
    }

    #[test]
    fn a_panic_in_the_closure_reaches_the_caller_and_the_world_stays_usable() {
        let (mut world, _) = world(5000);
        let mut state = QueryState::<&mut Hp>::new(&mut world);
        for batch in [Some(1), Some(64), None] {
            let result = catch_unwind(AssertUnwindSafe(|| {
                let mut iter = state.par_iter_mut(&mut world);
                if let Some(rows) = batch {
                    iter = iter.batch_size(rows);
                }
                iter.for_each(|hp| assert_ne!(hp.0, 4321, "boom"));
            }));
            assert!(result.is_err(), "batch {batch:?}");
        }
        assert_eq!(state.iter_mut(&mut world).count(), 5000);
        world.check_invariants().unwrap();
    }

    #[test]
    fn parallel_passes_nest() {
        let (mut world, _) = world(3000);
        let mut outer = QueryState::<&Hp, With<Red>>::new(&mut world);
        let mut inner = QueryState::<&Hp, With<Blue>>::new(&mut world);
        let inner = Mutex::new(&mut inner);
        let pairs = AtomicU64::new(0);
        outer.par_iter(&world).batch_size(100).for_each(|_| {
            let mut inner = inner.lock().unwrap();
            let n = AtomicU64::new(0);
            inner.par_iter(&world).batch_size(50).for_each(|_| {
                n.fetch_add(1, Ordering::Relaxed);
            });
            pairs.fetch_add(n.into_inner(), Ordering::Relaxed);
        });
        assert_eq!(pairs.into_inner(), 1000 * 1000);
    }

    #[test]
    fn system_queries_take_a_batch_size() {
        fn double(mut hp: Query<&mut Hp>) {
            hp.par_iter_mut().batch_size(3).for_each(|mut hp| hp.0 *= 2);
        }
        fn total(hp: Query<&Hp>, mut sum: crate::ResMut<Total>) {
            let s = AtomicU64::new(0);
            hp.par_iter().batch_size(5).for_each(|hp| {
                s.fetch_add(hp.0, Ordering::Relaxed);
            });
            sum.0 = s.into_inner();
        }
        #[derive(Default)]
        struct Total(u64);
        let (mut world, _) = world(100);
        world.init_resource::<Total>();
        world.run_system_once(double);
        world.run_system_once(total);
        assert_eq!(world.resource::<Total>().0, 2 * (0..100).sum::<u64>());
    }

    /// Runs `f` on every `Hp` of `state` with the engine's choice, and
    /// says how many rows ran off the calling thread. While no helper has
    /// taken a row yet, each row on the calling thread waits a millisecond:
    /// heavy work, as a helper sees it, that leaves the pool ample time to
    /// join in.
    #[cfg(feature = "parallel")]
    fn heavy_pass(state: &mut QueryState<&'static mut Hp>, world: &mut World, f: fn(u64) -> u64) -> usize {
        let helped = AtomicUsize::new(0);
        state.par_for_each_mut(world, |mut hp| {
            if rayon::current_thread_index().is_some() {
                helped.fetch_add(1, Ordering::Relaxed);
            } else if helped.load(Ordering::Relaxed) == 0 {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            hp.0 = f(hp.0);
        });
        helped.into_inner()
    }

    #[test]
    #[cfg(feature = "parallel")]
    fn heavy_work_on_a_few_hundred_entities_is_shared_and_writes_what_serial_writes() {
        if rayon::current_num_threads() < 2 {
            return; // no pool thread to share with
        }
        let step = |hp: u64| hp * 3 + 1;
        let (mut parallel, entities) = world(300);
        let (mut serial, _) = world(300);
        let mut p = QueryState::<&mut Hp>::new(&mut parallel);
        let mut s = QueryState::<&mut Hp>::new(&mut serial);
        // The first run times its first rows; the next ones share from the
        // first row, from what the state remembers.
        for run in 0..3 {
            let helped = heavy_pass(&mut p, &mut parallel, step);
            assert!(helped > 0, "run {run}: 300 entities of heavy work stayed on the calling thread");
            s.for_each_mut(&mut serial, |mut hp| hp.0 = step(hp.0));
            for &e in &entities {
                assert_eq!(parallel.get::<Hp>(e), serial.get::<Hp>(e), "run {run}");
                assert_eq!(parallel.component_ticks::<Hp>(e), serial.component_ticks::<Hp>(e), "run {run}");
            }
        }
        // The same state, now with light work: it goes back to the calling
        // thread, and to heavy work again.
        let light = AtomicUsize::new(0);
        p.par_for_each_mut(&mut parallel, |_| {
            light.fetch_add(1, Ordering::Relaxed);
        });
        assert_eq!(light.into_inner(), 300);
        assert!(heavy_pass(&mut p, &mut parallel, step) > 0, "heavy again");
    }

    #[test]
    #[cfg(feature = "parallel")]
    fn the_memo_plans_by_the_work_and_the_closure() {
        use super::{ParMemo, Plan, MAX_UNCLOCKED, PROBE_PARTS};
        let memo = ParMemo::default();
        let (light, heavy) = (1, 2);
        // Nothing measured: probe from one row.
        assert_eq!(memo.plan(light, 1000), Plan::Probe(1));
        // 1,000 rows of half a nanosecond: 0.5 µs in all, timed once in 16
        // runs (the clock's 80 ns spread to 1% of the work), as a whole: far
        // too light to share, so not probed.
        memo.learn(light, 0.5e-9, 1000);
        for run in 0..16 {
            assert_eq!(memo.plan(light, 1000), Plan::Alone, "run {run}");
        }
        assert_eq!(memo.plan(light, 1000), Plan::Clock);
        // 10 rows of 20 ns: timed once in 40 runs.
        memo.learn(light, 20e-9, 10);
        // The same work over 3,000 rows (60 µs) is shared, unclocked runs
        // left or not.
        assert_eq!(memo.plan(light, 3000), Plan::Share(f64::from(20f32) * 1e-9));
        for run in 0..40 {
            assert_eq!(memo.plan(light, 10), Plan::Alone, "run {run}");
        }
        assert_eq!(memo.plan(light, 10), Plan::Clock);
        // 10 rows of a nanosecond: at most MAX_UNCLOCKED runs unclocked.
        memo.learn(light, 1e-9, 10);
        for _ in 0..MAX_UNCLOCKED {
            assert_eq!(memo.plan(light, 10), Plan::Alone);
        }
        assert_eq!(memo.plan(light, 10), Plan::Clock);
        // 300 rows of 100 ns (30 µs) are near enough to sharing to be
        // probed: the first sixteenth of the rows.
        memo.learn(light, 100e-9, 300);
        assert_eq!(memo.plan(light, 300), Plan::Probe(300 / PROBE_PARTS));
        // Another closure is unknown work, whatever the last one measured.
        assert_eq!(memo.plan(heavy, 300), Plan::Probe(1));
        // A microsecond a row: 300 rows are 300 µs, shared at once; 30 rows
        // are 30 µs, alone, timed every run.
        memo.learn(heavy, 1e-6, 300);
        assert_eq!(memo.plan(heavy, 300), Plan::Share(f64::from(1e3f32) * 1e-9));
        assert_eq!(memo.plan(heavy, 30), Plan::Probe(1));
        // The same number of rows ten times lighter: not worth sharing.
        memo.learn(heavy, 1e-7, 300);
        assert_eq!(memo.plan(heavy, 300), Plan::Probe(300 / PROBE_PARTS));
    }

    #[test]
    #[cfg(feature = "parallel")]
    fn one_heavy_probe_of_known_light_work_is_doubted_two_are_believed() {
        use super::{ParMemo, Plan};
        let memo = ParMemo::default();
        let (work, other) = (1, 2);
        // Unknown work: the first heavy probe is believed.
        assert!(memo.believe_heavy(work, 100));
        // 100 rows of 10 ns are light: a probe that says otherwise is
        // doubted once, and the next run probes again at once.
        memo.learn(work, 10e-9, 100);
        assert_eq!(memo.plan(work, 100), Plan::Alone);
        assert!(!memo.believe_heavy(work, 100));
        assert_eq!(memo.plan(work, 100), Plan::Clock);
        assert!(memo.believe_heavy(work, 100));
        // A light probe in between clears the doubt.
        memo.learn(work, 10e-9, 100);
        assert!(!memo.believe_heavy(work, 100));
        memo.learn(work, 10e-9, 100);
        assert!(!memo.believe_heavy(work, 100));
        // Work known as heavy, or another closure, is not doubted.
        memo.learn(work, 1e-6, 100);
        assert!(memo.believe_heavy(work, 100));
        memo.learn(work, 10e-9, 100);
        assert!(memo.believe_heavy(other, 100));
    }
}
