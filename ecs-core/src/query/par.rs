//! Parallel iteration: [`QueryParIter`], behind `par_iter`, `par_iter_mut`,
//! `par_for_each` and `par_for_each_mut` of [`QueryState`] and
//! [`Query`](crate::Query).
//!
//! The calling thread always works, and a small query never leaves it: below
//! [`SERIAL_ROWS`] rows it runs like `for_each`, and above that it times its
//! first rows and goes on alone unless the rest promises at least
//! [`SPAWN_WORTH`] of work. Only then does it ask the pool's other threads
//! to help. Helpers and caller take chunks of rows from a shared counter, so
//! a helper that the pool wakes late (tens of microseconds on a busy
//! machine) takes what is left, or nothing, and the caller never waits for
//! one that has not started: parallel iteration costs about what serial
//! iteration does when the pool cannot help.

#[cfg(feature = "parallel")]
use std::any::Any;
#[cfg(feature = "parallel")]
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
#[cfg(feature = "parallel")]
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
#[cfg(feature = "parallel")]
use std::sync::{Arc, Mutex};
#[cfg(feature = "parallel")]
use std::time::{Duration, Instant};

#[cfg(feature = "parallel")]
use crate::component::change::RunTicks;
use crate::query::fetch::{QueryData, ReadOnlyQueryData};
use crate::query::filter::QueryFilter;
use crate::query::state::QueryState;
#[cfg(feature = "parallel")]
use crate::storage::archetype::{Archetype, ArchetypeId};
use crate::world::World;

/// Queries with fewer matching rows than this run on the calling thread, as
/// `for_each` does, without reading the clock.
///
/// Above it the caller times its first rows, which costs two clock reads
/// (about 35 ns on the 2-core Xeon the report runs on): 1,024 rows of the
/// lightest loop measured (`position += velocity`, 0.45 ns a row) take
/// about 460 ns, so the reads add under 8% there and under 1% to loops
/// doing tens of nanoseconds of work a row. Work that is heavy enough to
/// split below this count asks for it with
/// [`QueryParIter::batch_size`].
#[cfg(feature = "parallel")]
const SERIAL_ROWS: usize = 1024;

/// The caller times the first `1 / PROBE_PARTS` of the rows before it
/// decides whether to ask for help.
#[cfg(feature = "parallel")]
const PROBE_PARTS: usize = 16;

/// The least work, estimated from the timed first rows, for which the
/// caller asks the pool's other threads to help.
///
/// Waking a sleeping pool thread (`rayon::spawn`) costs the calling thread
/// 7 to 19 µs on the 2-core Xeon the report runs on (a futex wake-up in a
/// virtual machine; 0.3 µs when the thread is still spinning from recent
/// work), and the woken thread starts 30 to 70 µs later. A game frame
/// leaves the pool asleep between two parallel loops, so the wake-up is
/// the usual case: with at least 150 µs of work left, paying it costs
/// under 10% even if no helper arrives in time, and a helper that does
/// arrive makes up for it.
#[cfg(feature = "parallel")]
const SPAWN_WORTH: Duration = Duration::from_micros(150);

/// The shortest chunk of work a thread takes from the shared counter, in
/// time; the rows it makes are worked out from the timed first rows.
/// Taking a chunk is one compare-and-swap on a cache line the other
/// threads write too (about 0.1 µs when it moves between cores): a chunk
/// of 5 µs keeps that near 2%, and is short enough that the threads finish
/// close together.
#[cfg(feature = "parallel")]
const MIN_CHUNK: Duration = Duration::from_micros(5);

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
/// // The engine picks: alone on the calling thread for small or cheap
/// // loops, helped by rayon's threads for big ones.
/// bodies.par_iter_mut(&mut world).for_each(|(mut p, v)| p.0 += v.0);
///
/// // Heavy work per entity: split it into chunks of 64 entities whatever
/// // the count.
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
    /// the rows over rayon's thread pool when there are enough of them; see
    /// [`QueryParIter::for_each`]. For heavy work on fewer than a thousand
    /// entities, give a [`batch_size`](QueryParIter::batch_size) through
    /// [`QueryState::par_iter`].
    pub fn par_for_each<'w>(&mut self, world: &'w World, f: impl Fn(Q::Item<'w>) + Send + Sync)
    where
        Q: ReadOnlyQueryData,
    {
        self.par_iter(world).for_each(f);
    }

    /// Calls `f` on every matching entity of `world`, with mutable access,
    /// spreading the rows over rayon's thread pool when there are enough of
    /// them; see [`QueryParIter::for_each`]. Each entity is visited once, by
    /// one thread. For heavy work on fewer than a thousand entities, give a
    /// [`batch_size`](QueryParIter::batch_size) through
    /// [`QueryState::par_iter_mut`].
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
    /// to whichever thread is free, instead of letting the engine decide;
    /// a query of `rows` entities or fewer then runs on the calling thread.
    ///
    /// Worth it for heavy work per entity (a path search, a matrix
    /// inversion per entity): a few hundred entities are then enough to
    /// keep every thread busy. Without the `parallel` feature it changes
    /// nothing.
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
    /// Without a [`batch_size`](QueryParIter::batch_size), a query of up to
    /// a thousand entities, or whose work the calling thread finds short
    /// (about 150 µs in all, from timing its first sixteenth), runs on the
    /// calling thread alone, at the speed of `for_each`; a bigger one is
    /// shared in chunks. The items and the changes are the same either way;
    /// only the order of the calls differs. Without the `parallel` feature,
    /// everything runs on the calling thread.
    ///
    /// # Panics
    /// If `f` panics, on any thread: the first panic is resumed on the
    /// calling thread once every thread has stopped.
    pub fn for_each<G: Fn(Q::Item<'w>) + Send + Sync>(self, f: G) {
        #[cfg(feature = "parallel")]
        {
            let (q_state, f_state, matched, ticks) = self.state.parts();
            let rows = Rows::<Q, F> {
                archetypes: self.world.archetypes().as_slice(),
                world: self.world,
                matched,
                q_state,
                f_state,
                ticks,
            };
            let total = rows.len();
            let alone = match self.batch_size {
                Some(batch) => total <= batch,
                None => total < SERIAL_ROWS,
            };
            let helpers = if alone { 0 } else { rayon::current_num_threads().saturating_sub(1) };
            if helpers > 0 {
                // SAFETY: the caller of `new` promised the access, for `'w`.
                unsafe { rows.for_each(total, helpers, self.batch_size, &f) };
                return;
            }
        }
        // SAFETY: the caller of `new` promised `update` and the access.
        unsafe { self.state.iter_unchecked(self.world) }.for_each(f);
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
    /// Rows of all the matched tables.
    fn len(&self) -> usize {
        self.matched.iter().map(|&(id, _)| self.archetypes[id.index()].len()).sum()
    }

    /// Calls `f` on rows `start..end` of the whole, from `cursor` on.
    ///
    /// # Safety
    /// As for [`QueryParIter::new`]; `end <= self.len()`, `start` is at or
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

    /// Calls `f` on each of the `total` rows once, on the calling thread
    /// and, when that pays, on up to `helpers` pool threads.
    ///
    /// # Safety
    /// As for [`QueryParIter::new`]; `total == self.len()`.
    unsafe fn for_each<G: Fn(Q::Item<'w>) + Send + Sync>(
        &self,
        total: usize,
        helpers: usize,
        batch: Option<usize>,
        f: &G,
    ) {
        let mut cursor = Cursor::default();
        let (start, chunk) = match batch {
            Some(batch) => (0, Chunk::Fixed(batch)),
            None => {
                // Time the first rows, and go on alone if the rest is short.
                let probe = total / PROBE_PARTS;
                let clock = Instant::now();
                // SAFETY: rows `0..probe` are this call's (caller).
                unsafe { self.run(&mut cursor, 0, probe, f) };
                let per_row = clock.elapsed().as_secs_f64() / probe as f64;
                if per_row * ((total - probe) as f64) < SPAWN_WORTH.as_secs_f64() {
                    // SAFETY: the rest of the rows, after the cursor's.
                    unsafe { self.run(&mut cursor, probe, total, f) };
                    return;
                }
                let min = (MIN_CHUNK.as_secs_f64() / per_row.max(1e-12)).clamp(1.0, total as f64) as usize;
                (probe, Chunk::Guided { min, threads: helpers + 1 })
            }
        };
        let task = |cursor: &mut Cursor, start: usize, end: usize| {
            // SAFETY: `Shared` hands out each row once (its counter only
            // grows, and each thread's chunks increase); the access is the
            // caller's.
            unsafe { self.run(cursor, start, end, f) }
        };
        share(start, total, chunk, helpers, &mut cursor, &task);
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

    /// Takes chunks and works on them until none is left.
    ///
    /// # Safety
    /// The task is alive: the caller of `share` is inside it, or this is
    /// a helper counted in `active` that found `closed` unset.
    unsafe fn work(&self, cursor: &mut Cursor) {
        while let Some((start, end)) = self.claim() {
            // SAFETY: alive (caller); chunks are disjoint and each thread's
            // increase, as `run` needs.
            unsafe { (*self.task)(cursor, start, end) };
        }
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
/// is done and no helper is inside `task`.
#[cfg(feature = "parallel")]
fn share(start: usize, end: usize, chunk: Chunk, helpers: usize, cursor: &mut Cursor, task: &Task<'_>) {
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
    {
        // Before the first spawn: whatever happens next, the run is closed
        // and the helpers inside it waited for before the task goes away.
        let _close = Close(&shared);
        for _ in 0..helpers {
            let shared = Arc::clone(&shared);
            rayon::spawn(move || shared.help());
        }
        // SAFETY: the task is alive while this function runs.
        unsafe { shared.work(cursor) };
    }
    let panic = shared.panic.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).take();
    if let Some(payload) = panic {
        resume_unwind(payload);
    }
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
}
