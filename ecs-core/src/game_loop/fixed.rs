//! `FixedTime`: the clock of the fixed-timestep stage, its accumulator and
//! the guard against the spiral of death.

use std::time::Duration;

/// The default fixed step: 1/60 s, rounded to the nanosecond.
const DEFAULT_STEP: Duration = Duration::from_nanos(16_666_667);

/// The default cap on fixed steps per frame.
const DEFAULT_MAX_STEPS: u32 = 8;

/// The clock of the [`GameLoop`](crate::GameLoop)'s `fixed_update` stage:
/// a resource the loop adds to its world.
///
/// Each frame, the loop adds the frame's *scaled* game time
/// ([`Time::delta`](crate::Time::delta): slowed by the time scale, zero
/// while paused) to an accumulator, and runs `fixed_update` once per whole
/// [`step`](FixedTime::step) in it. Fixed systems read their step here,
/// never [`Time::delta`](crate::Time::delta), which is the frame's.
///
/// At most [`max_steps_per_frame`](FixedTime::max_steps_per_frame) steps
/// run in one frame: after a long hitch the game falls behind instead of
/// spending the next frame catching up, which would make it longer still
/// (the spiral of death). The whole steps over the cap are dropped (that
/// game time is never simulated) and counted in
/// [`dropped_this_frame`](FixedTime::dropped_this_frame) and
/// [`dropped_total`](FixedTime::dropped_total).
///
/// What is left in the accumulator, less than a step, is the
/// [`overstep`](FixedTime::overstep); [`alpha`](FixedTime::alpha) is that
/// as a fraction of a step, for rendering between the last two fixed
/// states: `drawn = previous + (current - previous) * alpha`.
///
/// All of it is integer nanoseconds, so the same frame times give the
/// same steps on every machine.
///
/// ```
/// use std::time::Duration;
/// use archetable::FixedTime;
///
/// let mut fixed = FixedTime::new(Duration::from_millis(10));
/// fixed.set_max_steps_per_frame(3);
/// assert_eq!(fixed.accumulate(Duration::from_millis(25)), 2);
/// assert_eq!(fixed.overstep(), Duration::from_millis(5));
/// assert_eq!(fixed.alpha(), 0.5);
/// // A hitch: 7 whole steps are due, 3 run, 4 are dropped.
/// assert_eq!(fixed.accumulate(Duration::from_millis(66)), 3);
/// assert_eq!((fixed.dropped_this_frame(), fixed.overstep()), (4, Duration::from_millis(1)));
/// ```
///
/// A loaded `FixedTime` (from a save) is checked as the setters check
/// their arguments: a save with a zero step or a cap of zero steps does not
/// load.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(try_from = "FixedTimeFields"))]
pub struct FixedTime {
    step: Duration,
    max_steps_per_frame: u32,
    /// Game time accumulated and not simulated yet; less than a step
    /// between frames.
    overstep: Duration,
    /// Steps run before the current one.
    index: u64,
    steps_this_frame: u32,
    dropped_this_frame: u64,
    dropped_total: u64,
}

/// `FixedTime` as a save holds it, checked before it becomes one.
#[cfg(feature = "serde")]
#[derive(serde::Deserialize)]
struct FixedTimeFields {
    step: Duration,
    max_steps_per_frame: u32,
    overstep: Duration,
    index: u64,
    steps_this_frame: u32,
    dropped_this_frame: u64,
    dropped_total: u64,
}

#[cfg(feature = "serde")]
impl TryFrom<FixedTimeFields> for FixedTime {
    type Error = &'static str;

    fn try_from(f: FixedTimeFields) -> Result<FixedTime, &'static str> {
        check_step(f.step)?;
        check_max_steps(f.max_steps_per_frame)?;
        let FixedTimeFields {
            step,
            max_steps_per_frame,
            overstep,
            index,
            steps_this_frame,
            dropped_this_frame,
            dropped_total,
        } = f;
        Ok(FixedTime {
            step,
            max_steps_per_frame,
            overstep,
            index,
            steps_this_frame,
            dropped_this_frame,
            dropped_total,
        })
    }
}

fn check_step(step: Duration) -> Result<(), &'static str> {
    if step.is_zero() {
        Err("the fixed step must not be zero")
    } else {
        Ok(())
    }
}

fn check_max_steps(max: u32) -> Result<(), &'static str> {
    if max == 0 {
        Err("at least one fixed step per frame must be allowed")
    } else {
        Ok(())
    }
}

/// Panics with `check`'s message if it fails.
#[track_caller]
fn assert_ok(check: Result<(), &'static str>) {
    if let Err(message) = check {
        panic!("{message}");
    }
}

impl Default for FixedTime {
    /// A 1/60 s step (16,666,667 ns), at most 8 steps per frame.
    fn default() -> Self {
        FixedTime::new(DEFAULT_STEP)
    }
}

impl FixedTime {
    /// A clock of `step`, at most 8 steps per frame.
    ///
    /// # Panics
    /// If `step` is zero.
    pub fn new(step: Duration) -> Self {
        assert_ok(check_step(step));
        FixedTime {
            step,
            max_steps_per_frame: DEFAULT_MAX_STEPS,
            overstep: Duration::ZERO,
            index: 0,
            steps_this_frame: 0,
            dropped_this_frame: 0,
            dropped_total: 0,
        }
    }

    /// A clock of `hz` steps per second, the step rounded to the
    /// nanosecond: `from_hz(60.0)` steps 16,666,667 ns.
    ///
    /// # Panics
    /// If `hz` is not finite and positive, or gives a step under 1 ns.
    pub fn from_hz(hz: f64) -> Self {
        assert!(hz.is_finite() && hz > 0.0, "the fixed rate must be finite and positive, got {hz}");
        FixedTime::new(Duration::from_nanos((1e9 / hz).round() as u64))
    }

    /// The game time one fixed step simulates.
    #[inline]
    pub fn step(&self) -> Duration {
        self.step
    }

    /// [`FixedTime::step`] in seconds.
    #[inline]
    pub fn step_secs(&self) -> f32 {
        self.step.as_secs_f32()
    }

    /// Sets the step, from the next frame on; the accumulated time stays.
    ///
    /// # Panics
    /// If `step` is zero.
    pub fn set_step(&mut self, step: Duration) {
        assert_ok(check_step(step));
        self.step = step;
    }

    /// The most fixed steps one frame runs (8 by default).
    #[inline]
    pub fn max_steps_per_frame(&self) -> u32 {
        self.max_steps_per_frame
    }

    /// Sets the most fixed steps one frame runs.
    ///
    /// # Panics
    /// If `max` is zero.
    pub fn set_max_steps_per_frame(&mut self, max: u32) {
        assert_ok(check_max_steps(max));
        self.max_steps_per_frame = max;
    }

    /// During a fixed step, its index, counting from 0 since the start;
    /// between frames, the number of steps run so far.
    #[inline]
    pub fn index(&self) -> u64 {
        self.index
    }

    /// Fixed game time at the start of the current step: `index * step`
    /// (while the step never changed).
    pub fn elapsed(&self) -> Duration {
        from_nanos(self.step.as_nanos() * u128::from(self.index))
    }

    /// Game time accumulated but not simulated: less than a step once the
    /// frame's steps are planned.
    #[inline]
    pub fn overstep(&self) -> Duration {
        self.overstep
    }

    /// [`FixedTime::overstep`] as a fraction of the step, in `[0, 1)`: how
    /// far the present is between the last fixed state and the next one.
    pub fn alpha(&self) -> f64 {
        self.overstep.as_nanos() as f64 / self.step.as_nanos() as f64
    }

    /// Steps the current frame runs (or the last frame ran).
    #[inline]
    pub fn steps_this_frame(&self) -> u32 {
        self.steps_this_frame
    }

    /// Whole steps the current frame dropped over the cap, at most
    /// `u64::MAX` (a frame of [`Duration::MAX`] over a 1 ns step drops
    /// about 1.8e28).
    #[inline]
    pub fn dropped_this_frame(&self) -> u64 {
        self.dropped_this_frame
    }

    /// Whole steps dropped over the cap since the start, stopping at
    /// `u64::MAX`.
    #[inline]
    pub fn dropped_total(&self) -> u64 {
        self.dropped_total
    }

    /// Adds a frame's scaled game time to the accumulator and returns how
    /// many steps to run now: the whole steps in it, up to the cap; the
    /// rest of the whole steps are dropped and counted. The
    /// [`GameLoop`](crate::GameLoop) calls this once per frame; call it
    /// yourself only to drive fixed steps without one.
    ///
    /// Never panics: the accumulator stops at [`Duration::MAX`] and the
    /// dropped counts at `u64::MAX`, and the cap holds whatever `delta` is.
    ///
    /// ```
    /// use std::time::Duration;
    /// use archetable::FixedTime;
    ///
    /// let mut fixed = FixedTime::new(Duration::from_nanos(1));
    /// assert_eq!(fixed.accumulate(Duration::MAX), 8);
    /// assert_eq!(fixed.accumulate(Duration::MAX), 8);
    /// assert_eq!((fixed.dropped_this_frame(), fixed.dropped_total()), (u64::MAX, u64::MAX));
    /// ```
    pub fn accumulate(&mut self, delta: Duration) -> u32 {
        let total = self.overstep.saturating_add(delta);
        let step = self.step.as_nanos();
        let due = total.as_nanos() / step;
        let run = due.min(u128::from(self.max_steps_per_frame)) as u32;
        let dropped = u64::try_from(due - u128::from(run)).unwrap_or(u64::MAX);
        self.overstep = from_nanos(total.as_nanos() % step);
        self.steps_this_frame = run;
        self.dropped_this_frame = dropped;
        self.dropped_total = self.dropped_total.saturating_add(dropped);
        run
    }

    /// Marks the end of one fixed step.
    pub(crate) fn finish_step(&mut self) {
        self.index = self.index.saturating_add(1);
    }
}

/// `nanos` nanoseconds as a `Duration`, saturating past its range.
fn from_nanos(nanos: u128) -> Duration {
    const PER_SEC: u128 = 1_000_000_000;
    match u64::try_from(nanos / PER_SEC) {
        Ok(secs) => Duration::new(secs, (nanos % PER_SEC) as u32),
        Err(_) => Duration::MAX,
    }
}
