//! A [`Routine`] is one prepared measurement, and [`time_runs`] is the only
//! place that times one: the criterion benches and the report binary both
//! call it, so they measure the same thing.
//!
//! Every routine calls its timed step the way a game calls a system once a
//! frame: through a [`Step`], a boxed closure behind a dynamic call, for
//! every engine and the floor alike. The step is compiled on its own, as a
//! system is, and the compiler cannot inline it into the timing loop or
//! carry anything from one run into the next.

use std::hint::black_box;
use std::time::{Duration, Instant};

/// A timed step: a boxed closure, called through its vtable once per run.
pub type Step<S> = Box<dyn FnMut(&mut S)>;

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
pub struct Steady<S> {
    state: S,
    work: Step<S>,
}

impl<S> Steady<S> {
    /// Runs `work` on `state` at each run, through a [`Step`].
    pub fn new(state: S, work: impl FnMut(&mut S) + 'static) -> Self {
        Steady { state, work: Box::new(work) }
    }
}

impl<S> Routine for Steady<S> {
    fn run(&mut self) {
        (black_box(&mut self.work))(black_box(&mut self.state));
    }
}

/// A routine whose run builds something (a world) that is dropped after the
/// timing.
pub struct Build<T> {
    build: Box<dyn FnMut() -> T>,
    built: Option<T>,
}

impl<T> Build<T> {
    /// Runs `build` at each run, through a boxed closure.
    pub fn new(build: impl FnMut() -> T + 'static) -> Self {
        Build { build: Box::new(build), built: None }
    }
}

impl<T> Routine for Build<T> {
    fn per_run_setup(&self) -> bool {
        true
    }

    fn run(&mut self) {
        self.built = Some(black_box((black_box(&mut self.build))()));
    }

    fn finish(&mut self) {
        self.built = None;
    }
}

/// A routine that needs fresh state for every run, made (and dropped)
/// outside the timing.
pub struct Prepared<S> {
    make: Box<dyn FnMut() -> S>,
    work: Step<S>,
    state: Option<S>,
}

impl<S> Prepared<S> {
    /// Before each run `make`s the state, runs `work` on it (through a
    /// [`Step`]), then drops it.
    pub fn new(make: impl FnMut() -> S + 'static, work: impl FnMut(&mut S) + 'static) -> Self {
        Prepared { make: Box::new(make), work: Box::new(work), state: None }
    }
}

impl<S> Routine for Prepared<S> {
    fn per_run_setup(&self) -> bool {
        true
    }

    fn prepare(&mut self) {
        self.state = Some((self.make)());
    }

    fn run(&mut self) {
        let state = self.state.as_mut().expect("prepare runs before run");
        (black_box(&mut self.work))(black_box(state));
    }

    fn finish(&mut self) {
        self.state = None;
    }
}

/// A routine that fills state emptied before each run, outside the timing:
/// spawning into a world cleared for the next level, whose tables keep the
/// memory the last run grew them to.
pub struct Refill<S> {
    state: S,
    empty: Step<S>,
    fill: Step<S>,
}

impl<S> Refill<S> {
    /// Before each run `empty`s the state, then runs `fill` on it (through
    /// a [`Step`]).
    pub fn new(state: S, empty: impl FnMut(&mut S) + 'static, fill: impl FnMut(&mut S) + 'static) -> Self {
        Refill { state, empty: Box::new(empty), fill: Box::new(fill) }
    }
}

impl<S> Routine for Refill<S> {
    fn per_run_setup(&self) -> bool {
        true
    }

    fn prepare(&mut self) {
        (self.empty)(&mut self.state);
    }

    fn run(&mut self) {
        (black_box(&mut self.fill))(black_box(&mut self.state));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_up_runs_around_every_timed_run() {
        use std::cell::RefCell;
        use std::rc::Rc;

        let log = Rc::new(RefCell::new(Vec::new()));
        let (make, work) = (Rc::clone(&log), Rc::clone(&log));
        let mut routine =
            Prepared::new(move || make.borrow_mut().push("make"), move |_| work.borrow_mut().push("work"));
        time_runs(&mut routine, 2);
        assert_eq!(*log.borrow(), ["make", "work", "make", "work"]);

        let mut routine = Steady::new(0, |runs| *runs += 1);
        time_runs(&mut routine, 3);
        assert_eq!(routine.state, 3);

        let mut routine = Refill::new(Vec::new(), |v: &mut Vec<u32>| v.clear(), |v| v.extend([1, 2, 3]));
        time_runs(&mut routine, 2);
        assert_eq!(routine.state, [1, 2, 3], "emptied before each run");
        assert!(routine.state.capacity() >= 3);

        let mut routine = Build::new(|| vec![1, 2, 3]);
        time_runs(&mut routine, 2);
        assert!(routine.built.is_none());
    }
}
