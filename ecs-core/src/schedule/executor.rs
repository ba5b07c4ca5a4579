//! How a schedule runs one frame: the plan built from the system order
//! (groups of systems that may overlap, separated by exclusive systems and
//! `apply_deferred` points), and the parallel runner for a group.

#[cfg(feature = "parallel")]
use std::any::Any;
use std::collections::HashSet;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
#[cfg(feature = "parallel")]
use std::sync::{Condvar, Mutex, PoisonError};
use std::time::Duration;

use super::condition::all_hold;
use super::order::{self, Node, ScheduleError};
use super::Entry;
use crate::clock::Instant;
use crate::component::change::Tick;
use crate::system::SkippedSystem;
use crate::world::command_queue::CommandReport;
use crate::world::time::Time;
use crate::world::World;

/// The schedule compiled for running.
pub(super) struct Plan {
    /// Entry indices in run order.
    order: Vec<usize>,
    steps: Vec<Step>,
}

enum Step {
    /// Systems that may run at the same time, where their accesses allow.
    Group(Group),
    /// An exclusive system: runs alone with `&mut World`.
    Exclusive(usize),
    /// An `apply_deferred` point.
    Sync(usize),
}

struct Group {
    /// Entry indices, in run order.
    systems: Vec<usize>,
    /// Per system (by position in `systems`): the later systems that must
    /// wait for it.
    #[cfg(feature = "parallel")]
    dependents: Vec<Vec<usize>>,
    /// Per system: how many earlier systems it waits for.
    #[cfg(feature = "parallel")]
    blockers: Vec<usize>,
    /// How long the group took each way, to pick the faster.
    pace: Pace,
}

/// How long a group took spread over the pool and on the calling thread,
/// so that it runs the faster way. Waking another core costs a few
/// microseconds on a quiet desktop and can cost tens on a busy or
/// virtual machine: past the threshold, a group of medium systems can
/// still finish sooner on one thread (measured: three systems of plain
/// `for` loops over 60,000 rows took 72 µs in parallel and 32 µs on one
/// thread of a 2-core virtual machine). Each way's time is a moving
/// average of its runs; the way that lost is tried again every
/// [`Pace::RETRY`] runs, so a group whose work grows goes back to the
/// pool. Either way gives the same results.
#[derive(Default)]
struct Pace {
    /// Averages, in nanoseconds; 0 until that way has run.
    parallel: AtomicU64,
    serial: AtomicU64,
    /// Runs since the slower way was last tried.
    since_retry: AtomicU32,
}

impl Pace {
    /// Runs between tries of the way that was slower.
    const RETRY: u32 = 64;

    /// Whether the group, worth spreading by its size, should go to the
    /// pool this time: first to measure each way once, then the faster,
    /// except every `RETRY` runs.
    fn parallel_now(&self) -> bool {
        let (parallel, serial) = (self.parallel.load(Ordering::Relaxed), self.serial.load(Ordering::Relaxed));
        if parallel == 0 {
            return true;
        }
        if serial == 0 {
            return false;
        }
        let faster = parallel < serial;
        if self.since_retry.fetch_add(1, Ordering::Relaxed) + 1 >= Pace::RETRY {
            self.since_retry.store(0, Ordering::Relaxed);
            return !faster;
        }
        faster
    }

    /// Adds a run's wall time to the average of the way it ran.
    fn record(&self, parallel: bool, took: Duration) {
        let average = if parallel { &self.parallel } else { &self.serial };
        let took = u64::try_from(took.as_nanos()).unwrap_or(u64::MAX).max(1);
        let old = average.load(Ordering::Relaxed);
        let new = if old == 0 { took } else { (old.saturating_mul(3) / 4).saturating_add(took / 4).max(1) };
        average.store(new, Ordering::Relaxed);
    }
}

/// The ordering constraints of `entries` (their sets' included), as pairs
/// of entry indices `(a, b)`: `a` runs before `b`. Fails on a constraint
/// that selects no system.
pub(super) fn edges(entries: &[Entry]) -> Result<Vec<(usize, usize)>, ScheduleError> {
    let mut edges = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        for (selector, is_after) in entry.all_after().map(|s| (s, true)).chain(entry.all_before().map(|s| (s, false))) {
            let targets: Vec<usize> = (0..entries.len()).filter(|&j| j != i && entries[j].matches(selector)).collect();
            if targets.is_empty() {
                return Err(ScheduleError::UnknownSystem {
                    system: entries[i].system.name().to_string(),
                    target: selector.to_string(),
                });
            }
            for j in targets {
                edges.push(if is_after { (j, i) } else { (i, j) });
            }
        }
    }
    Ok(edges)
}

impl Plan {
    pub(super) fn build(entries: &[Entry]) -> Result<Plan, ScheduleError> {
        let edges = edges(entries)?;
        let nodes: Vec<Node<'_>> =
            entries.iter().map(|e| Node { priority: e.priority, name: e.system.name() }).collect();
        let order = order::order(&nodes, &edges)?;
        let explicit: HashSet<(usize, usize)> = edges.into_iter().collect();

        let mut steps = Vec::new();
        let mut group = Vec::new();
        for &i in &order {
            let entry = &entries[i];
            if entry.sync_point || entry.system.access().is_exclusive() {
                if !group.is_empty() {
                    steps.push(Step::Group(Group::new(std::mem::take(&mut group), entries, &explicit)));
                }
                steps.push(if entry.sync_point { Step::Sync(i) } else { Step::Exclusive(i) });
            } else if entry.system.access().reads_world() {
                // A `&World` system can reserve entities through the
                // world's shared counter, which reservation lanes assume
                // stands still: it runs in a group of its own, where no
                // lanes are open.
                if !group.is_empty() {
                    steps.push(Step::Group(Group::new(std::mem::take(&mut group), entries, &explicit)));
                }
                steps.push(Step::Group(Group::new(vec![i], entries, &explicit)));
            } else {
                group.push(i);
            }
        }
        if !group.is_empty() {
            steps.push(Step::Group(Group::new(group, entries, &explicit)));
        }
        Ok(Plan { order, steps })
    }

    pub(super) fn order(&self) -> &[usize] {
        &self.order
    }

    pub(super) fn run(
        &self,
        entries: &mut [Entry],
        world: &mut World,
        single_threaded: bool,
        parallel_above: Duration,
        report: &mut CommandReport,
        skipped: &mut Vec<SkippedSystem>,
    ) {
        let parallel = !single_threaded && threads() > 1;
        for step in &self.steps {
            let paused = world.get_resource::<Time>().is_some_and(Time::is_paused);
            match step {
                Step::Group(group) => {
                    // A condition shared by systems of the group is checked
                    // once for all of them.
                    let mut memo = Vec::new();
                    let active: Vec<bool> =
                        group.systems.iter().map(|&i| should_run(&entries[i], paused, world, &mut memo)).collect();
                    // Systems that spawn through `Commands` reserve handles
                    // in lanes when two or more of them run in the group, so
                    // a handle depends on the system and how many it took
                    // before, not on which thread got to the counter first.
                    // Parallel or not, the same lanes: the handles match.
                    let spawners: Vec<usize> = group
                        .systems
                        .iter()
                        .zip(&active)
                        .filter(|&(&i, &a)| a && entries[i].system.reserves_entities())
                        .map(|(&i, _)| i)
                        .collect();
                    let lanes = (spawners.len() > 1).then(|| {
                        let lanes = world.begin_reservation_lanes(spawners.len() as u32);
                        for (lane, &i) in spawners.iter().enumerate() {
                            entries[i].system.set_entity_lane(Some((lanes, lane as u32)));
                        }
                        lanes
                    });
                    // A zero threshold asks for the pool every time.
                    let spread = parallel
                        && group.worth_parallel(entries, &active, parallel_above)
                        && (parallel_above.is_zero() || group.pace.parallel_now());
                    let start = Instant::now();
                    let result = if spread {
                        // Change ticks in group order, which is the order of
                        // every pair that conflicts, so a reader after a
                        // writer has the later tick; handed out up front, so
                        // the threads do not contend for the world's counter.
                        let first = world.reserve_change_ticks(group.systems.len() as u32);
                        for (k, &i) in group.systems.iter().enumerate().filter(|&(k, _)| active[k]) {
                            let tick = Tick::new(first.get().wrapping_add(k as u32));
                            entries[i].system.set_next_run_tick(Some(tick));
                        }
                        let result = catch_unwind(AssertUnwindSafe(|| group.run_parallel(entries, &active, world)));
                        // A system that did not start (after a panic) must
                        // not keep its tick for a later frame.
                        for &i in &group.systems {
                            entries[i].system.set_next_run_tick(None);
                        }
                        result
                    } else {
                        catch_unwind(AssertUnwindSafe(|| {
                            for (&i, _) in group.systems.iter().zip(&active).filter(|&(_, &a)| a) {
                                run_exclusive(&mut entries[i], world);
                            }
                        }))
                    };
                    group.pace.record(spread, start.elapsed());
                    if let Some(lanes) = lanes {
                        let used: Vec<u32> =
                            spawners.iter().map(|&i| entries[i].system.set_entity_lane(None)).collect();
                        world.end_reservation_lanes(lanes, &used);
                    }
                    if let Err(payload) = result {
                        resume_unwind(payload);
                    }
                }
                Step::Exclusive(i) => {
                    if should_run(&entries[*i], paused, world, &mut Vec::new()) {
                        run_exclusive(&mut entries[*i], world);
                    }
                }
                Step::Sync(i) => {
                    let start = Instant::now();
                    self.apply_deferred(entries, world, report, skipped);
                    entries[*i].timing.record(start.elapsed());
                }
            }
        }
        self.apply_deferred(entries, world, report, skipped);
    }

    /// Applies the deferred commands of every system that ran and has not
    /// applied them yet, in run order, and gathers the skipped runs among
    /// them into `skipped` (in run order too, whichever thread ran them).
    fn apply_deferred(
        &self,
        entries: &mut [Entry],
        world: &mut World,
        report: &mut CommandReport,
        skipped: &mut Vec<SkippedSystem>,
    ) {
        for &i in &self.order {
            let entry = &mut entries[i];
            if std::mem::take(&mut entry.pending_deferred) {
                if let Some(skip) = entry.skip.take() {
                    skipped.push(*skip);
                }
                entry.system.apply_deferred(world, report);
            }
        }
    }
}

/// The threads a group can spread over: rayon's pool, or 1 without the
/// `parallel` feature.
fn threads() -> usize {
    #[cfg(feature = "parallel")]
    return rayon::current_num_threads();
    #[cfg(not(feature = "parallel"))]
    return 1;
}

fn should_run(entry: &Entry, paused: bool, world: &World, memo: &mut Vec<(usize, bool)>) -> bool {
    !entry.sync_point
        && entry.enabled
        && (!paused || entry.debug || entry.inherited.debug)
        && all_hold(entry.all_conditions(), world, memo)
}

// Always inlined: a call per system here is a tenth of a tiny system's
// cost.
#[inline(always)]
fn run_exclusive(entry: &mut Entry, world: &mut World) {
    let _span = crate::trace::span!("system", entry.system.name());
    let start = Instant::now();
    let ran = entry.system.run_exclusive(world);
    entry.timing.record(start.elapsed());
    entry.record_skip(ran);
    entry.pending_deferred = true;
}

impl Group {
    #[cfg(not(feature = "parallel"))]
    fn new(systems: Vec<usize>, _: &[Entry], _: &HashSet<(usize, usize)>) -> Group {
        // One thread: the group runs in order, nothing waits for anything.
        Group { systems, pace: Pace::default() }
    }

    #[cfg(feature = "parallel")]
    fn new(systems: Vec<usize>, entries: &[Entry], explicit: &HashSet<(usize, usize)>) -> Group {
        let n = systems.len();
        let mut dependents = vec![Vec::new(); n];
        let mut blockers = vec![0; n];
        for b in 0..n {
            for a in 0..b {
                let (ea, eb) = (&entries[systems[a]], &entries[systems[b]]);
                let ordered =
                    explicit.contains(&(systems[a], systems[b])) || explicit.contains(&(systems[b], systems[a]));
                if ordered || ea.system.access().conflicts_with(eb.system.access()) {
                    dependents[a].push(b);
                    blockers[b] += 1;
                }
            }
        }
        Group { systems, dependents, blockers, pace: Pace::default() }
    }

    /// Whether to spread the group's active systems over the pool: more than
    /// one of them, and together they took at least `parallel_above` the last
    /// time they all ran (or some never ran). Waking another core costs
    /// microseconds; a group of tiny systems finishes sooner on one.
    fn worth_parallel(&self, entries: &[Entry], active: &[bool], parallel_above: Duration) -> bool {
        let mut count = 0;
        let mut last = Duration::ZERO;
        for (&i, _) in self.systems.iter().zip(active).filter(|&(_, &a)| a) {
            let timing = &entries[i].timing;
            if timing.runs == 0 {
                return true;
            }
            count += 1;
            last += timing.last;
        }
        count > 1 && last >= parallel_above
    }

    /// Runs the active systems of the group on rayon's pool, each as soon as
    /// every earlier system it depends on has finished. One worker loop per
    /// pool thread (the calling thread is one of them) takes ready systems
    /// from a shared list, so a frame costs one task per thread rather than
    /// one per system. A panicking system stops new starts; the panic is
    /// resumed once the running ones are done.
    #[cfg(feature = "parallel")]
    fn run_parallel(&self, entries: &mut [Entry], active: &[bool], world: &World) {
        let n = self.systems.len();
        let mut shared = Shared {
            slots: entries.iter_mut().map(Some).collect(),
            ready: Vec::new(),
            blockers: self.blockers.clone(),
            finished: 0,
            panic: None,
            unblocked: Vec::new(),
        };
        for k in (0..n).rev() {
            if shared.blockers[k] == 0 {
                if active[k] {
                    shared.ready.push(k);
                } else {
                    shared.finish(self, active, k);
                }
            }
        }
        let workers = rayon::current_num_threads().min(n);
        let shared = Mutex::new(shared);
        let wake = Condvar::new();
        rayon::in_place_scope(|scope| {
            for _ in 1..workers {
                scope.spawn(|_| self.work(&shared, &wake, active, world));
            }
            self.work(&shared, &wake, active, world);
        });
        let panic = shared.into_inner().unwrap_or_else(PoisonError::into_inner).panic;
        if let Some(payload) = panic {
            resume_unwind(payload);
        }
    }

    /// Without the `parallel` feature no group runs in parallel
    /// (`threads()` is 1), so this is never called.
    #[cfg(not(feature = "parallel"))]
    fn run_parallel(&self, _: &mut [Entry], _: &[bool], _: &World) {
        unreachable!("groups run in parallel only with the `parallel` feature")
    }

    /// One worker: runs ready systems until the whole group has finished.
    #[cfg(feature = "parallel")]
    fn work<'e>(&self, shared: &Mutex<Shared<'e>>, wake: &Condvar, active: &[bool], world: &World) {
        let mut state = shared.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            if state.finished == self.systems.len() {
                return;
            }
            let Some(k) = state.ready.pop() else {
                state = wake.wait(state).unwrap_or_else(PoisonError::into_inner);
                continue;
            };
            if state.panic.is_some() {
                // Stop starting systems; count them finished so the others
                // drain.
                state.finish(self, active, k);
                wake.notify_all();
                continue;
            }
            let entry = state.slots[self.systems[k]].take().expect("each system runs once per frame");
            drop(state);
            let result = run_shared(entry, world);
            state = shared.lock().unwrap_or_else(PoisonError::into_inner);
            if let Err(payload) = result {
                state.panic.get_or_insert(payload);
            }
            let ready_before = state.ready.len();
            state.finish(self, active, k);
            // This worker takes the next ready system itself; wake the others
            // only when there is more than one, or when the group is done.
            // (A worker sleeps only while `ready` is empty, so a single new
            // system needs no one else.)
            if state.ready.len() > ready_before + 1 || state.finished == self.systems.len() || state.panic.is_some() {
                wake.notify_all();
            }
        }
    }
}

/// The state the workers of one group share.
#[cfg(feature = "parallel")]
struct Shared<'e> {
    /// Every entry of the schedule; a system's slot is emptied when it starts.
    slots: Vec<Option<&'e mut Entry>>,
    /// Systems (by position in the group) whose dependencies have finished;
    /// the last one starts first.
    ready: Vec<usize>,
    blockers: Vec<usize>,
    finished: usize,
    panic: Option<Box<dyn Any + Send>>,
    /// Scratch for `finish`: inactive systems finished in a cascade.
    unblocked: Vec<usize>,
}

#[cfg(feature = "parallel")]
impl Shared<'_> {
    /// Marks `k` finished, and readies (or, when inactive, finishes at once)
    /// the systems that waited only for it.
    fn finish(&mut self, group: &Group, active: &[bool], k: usize) {
        let mut stack = std::mem::take(&mut self.unblocked);
        stack.push(k);
        while let Some(k) = stack.pop() {
            self.finished += 1;
            for &d in group.dependents[k].iter().rev() {
                self.blockers[d] -= 1;
                if self.blockers[d] == 0 {
                    if active[d] {
                        self.ready.push(d);
                    } else {
                        stack.push(d);
                    }
                }
            }
        }
        self.unblocked = stack;
    }
}

#[cfg(feature = "parallel")]
fn run_shared(entry: &mut Entry, world: &World) -> Result<(), Box<dyn Any + Send>> {
    let _span = crate::trace::span!("system", entry.system.name());
    let start = Instant::now();
    // SAFETY: the system was initialized for this world when the plan was
    // built, and the group's dependencies keep every system whose access
    // conflicts with this one from running at the same time.
    let result = catch_unwind(AssertUnwindSafe(|| unsafe { entry.system.run_shared(world) }));
    entry.timing.record(start.elapsed());
    entry.pending_deferred = true;
    result.map(|ran| entry.record_skip(ran))
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: Duration = Duration::from_micros(1);

    #[test]
    fn a_group_runs_the_way_that_was_faster_and_retries_the_other() {
        let pace = Pace::default();
        // Each way once, parallel first.
        assert!(pace.parallel_now());
        pace.record(true, 72 * US);
        assert!(!pace.parallel_now());
        pace.record(false, 32 * US);
        // Then on one thread, but for one run in `RETRY`.
        let ways: Vec<bool> = (0..2 * Pace::RETRY).map(|_| pace.parallel_now()).collect();
        let retries: Vec<usize> = (0..ways.len()).filter(|&i| ways[i]).collect();
        assert_eq!(retries, [Pace::RETRY as usize - 1, 2 * Pace::RETRY as usize - 1]);
        // Work that grows: the serial average climbs past the parallel one.
        for _ in 0..8 {
            pace.record(false, 200 * US);
        }
        assert!(pace.parallel_now());
        assert!(pace.serial.load(Ordering::Relaxed) > pace.parallel.load(Ordering::Relaxed));
    }

    #[test]
    fn the_average_moves_a_quarter_of_the_way() {
        let pace = Pace::default();
        pace.record(false, Duration::from_nanos(400));
        pace.record(false, Duration::from_nanos(800));
        assert_eq!(pace.serial.load(Ordering::Relaxed), 500);
        pace.record(true, Duration::ZERO);
        assert_eq!(pace.parallel.load(Ordering::Relaxed), 1, "a run that took no time still counts as run");
    }
}
