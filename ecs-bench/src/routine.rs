//! A [`Routine`] is one prepared measurement, and [`time_runs`] is the only
//! place that times one: the criterion benches and the report binary both
//! call it, so they measure the same thing.

use std::hint::black_box;
use std::time::{Duration, Instant};

/// One workload on one implementation, ready to run.
///
/// A run is the timed work. Routines whose runs consume what they work on
/// (a spawn builds a world that must be dropped, a despawn needs a world full
/// of entities) set [`Routine::per_run_setup`] and do that work in
/// [`Routine::prepare`] and [`Routine::finish`], outside the timing.
pub trait Routine {
    /// Whether [`Routine::prepare`] and [`Routine::finish`] must run around
    /// every run; when false they are never called.
    fn per_run_setup(&self) -> bool {
        false
    }

    /// Untimed: gets ready for the next run.
    fn prepare(&mut self) {}

    /// The timed work.
    fn run(&mut self);

    /// Untimed: cleans up after a run, dropping what it built.
    fn finish(&mut self) {}
}

/// Total time of `iters` runs of `routine`, leaving out its untimed set-up.
///
/// Without per-run set-up, one clock reading spans all the runs; with it,
/// each run is timed alone (such runs are long, so the clock's cost is
/// negligible).
pub fn time_runs(routine: &mut dyn Routine, iters: u64) -> Duration {
    if routine.per_run_setup() {
        let mut total = Duration::ZERO;
        for _ in 0..iters {
            routine.prepare();
            let start = Instant::now();
            routine.run();
            total += start.elapsed();
            routine.finish();
        }
        total
    } else {
        let start = Instant::now();
        for _ in 0..iters {
            black_box(&mut *routine).run();
        }
        start.elapsed()
    }
}

/// A routine that repeats work on state built once: iteration, add/remove,
/// schedules.
pub struct Steady<S, F> {
    state: S,
    work: F,
}

impl<S, F: FnMut(&mut S)> Steady<S, F> {
    /// Runs `work` on `state` at each run.
    pub fn new(state: S, work: F) -> Self {
        Steady { state, work }
    }
}

impl<S, F: FnMut(&mut S)> Routine for Steady<S, F> {
    #[inline]
    fn run(&mut self) {
        (self.work)(black_box(&mut self.state));
    }
}

/// A routine whose run builds something (a world) that is dropped after the
/// timing.
pub struct Build<T, F> {
    build: F,
    built: Option<T>,
}

impl<T, F: FnMut() -> T> Build<T, F> {
    /// Runs `build` at each run.
    pub fn new(build: F) -> Self {
        Build { build, built: None }
    }
}

impl<T, F: FnMut() -> T> Routine for Build<T, F> {
    fn per_run_setup(&self) -> bool {
        true
    }

    fn run(&mut self) {
        self.built = Some(black_box((self.build)()));
    }

    fn finish(&mut self) {
        self.built = None;
    }
}

/// A routine that needs fresh state for every run, made (and dropped)
/// outside the timing.
pub struct Prepared<S, P, F> {
    make: P,
    work: F,
    state: Option<S>,
}

impl<S, P: FnMut() -> S, F: FnMut(&mut S)> Prepared<S, P, F> {
    /// Before each run `make`s the state, runs `work` on it, then drops it.
    pub fn new(make: P, work: F) -> Self {
        Prepared { make, work, state: None }
    }
}

impl<S, P: FnMut() -> S, F: FnMut(&mut S)> Routine for Prepared<S, P, F> {
    fn per_run_setup(&self) -> bool {
        true
    }

    fn prepare(&mut self) {
        self.state = Some((self.make)());
    }

    fn run(&mut self) {
        let state = self.state.as_mut().expect("prepare runs before run");
        (self.work)(black_box(state));
    }

    fn finish(&mut self) {
        self.state = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_up_runs_around_every_timed_run() {
        let mut log = Vec::new();
        {
            let log = std::cell::RefCell::new(&mut log);
            let mut routine = Prepared::new(|| log.borrow_mut().push("make"), |_| log.borrow_mut().push("work"));
            time_runs(&mut routine, 2);
        }
        assert_eq!(log, ["make", "work", "make", "work"]);

        let mut runs = 0;
        time_runs(&mut Steady::new(0, |_| runs += 1), 3);
        assert_eq!(runs, 3);

        let mut routine = Build::new(|| vec![1, 2, 3]);
        time_runs(&mut routine, 2);
        assert!(routine.built.is_none());
    }
}
