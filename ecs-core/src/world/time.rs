//! `Time`: the game clock every world carries as a resource, with slow
//! motion (a time scale) and pause.

use std::time::Duration;

/// The game clock: a resource every [`World`](crate::World) starts with.
///
/// The game loop calls [`Time::advance`] once per frame with the real time
/// that passed; systems read the *scaled* delta, which is the real delta
/// times [`Time::scale`] (slow motion below 1, fast forward above), and zero
/// while paused. While paused, a [`Schedule`](crate::Schedule) runs only its
/// `.debug()` systems.
///
/// ```
/// use std::time::Duration;
/// use archetable::Time;
///
/// let mut time = Time::default();
/// time.set_scale(0.5);
/// time.advance(Duration::from_millis(20));
/// assert_eq!(time.delta(), Duration::from_millis(10));
/// time.pause();
/// time.advance(Duration::from_millis(20));
/// assert_eq!((time.delta(), time.elapsed()), (Duration::ZERO, Duration::from_millis(10)));
/// assert_eq!(time.real_elapsed(), Duration::from_millis(40));
/// ```
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Time {
    delta: Duration,
    elapsed: Duration,
    real_delta: Duration,
    real_elapsed: Duration,
    scale: f64,
    paused: bool,
    frame: u64,
}

impl Default for Time {
    fn default() -> Self {
        Time {
            delta: Duration::ZERO,
            elapsed: Duration::ZERO,
            real_delta: Duration::ZERO,
            real_elapsed: Duration::ZERO,
            scale: 1.0,
            paused: false,
            frame: 0,
        }
    }
}

impl Time {
    /// Moves the clock on by one frame that took `real_delta` of real time.
    pub fn advance(&mut self, real_delta: Duration) {
        self.real_delta = real_delta;
        self.real_elapsed += real_delta;
        self.delta = if self.paused { Duration::ZERO } else { real_delta.mul_f64(self.scale) };
        self.elapsed += self.delta;
        self.frame += 1;
    }

    /// The scaled duration of the last frame; zero while paused.
    #[inline]
    pub fn delta(&self) -> Duration {
        self.delta
    }

    /// [`Time::delta`] in seconds.
    #[inline]
    pub fn delta_secs(&self) -> f32 {
        self.delta.as_secs_f32()
    }

    /// Scaled time since the start: the sum of every frame's delta.
    #[inline]
    pub fn elapsed(&self) -> Duration {
        self.elapsed
    }

    /// The real duration of the last frame, whatever the scale or pause.
    #[inline]
    pub fn real_delta(&self) -> Duration {
        self.real_delta
    }

    /// Real time since the start.
    #[inline]
    pub fn real_elapsed(&self) -> Duration {
        self.real_elapsed
    }

    /// The factor from real to game time: 1 is normal speed, 0.25 slow
    /// motion.
    #[inline]
    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// Sets the time scale from the next [`Time::advance`] on.
    ///
    /// # Panics
    /// If `scale` is negative, infinite or NaN.
    pub fn set_scale(&mut self, scale: f64) {
        assert!(scale.is_finite() && scale >= 0.0, "time scale must be finite and not negative, got {scale}");
        self.scale = scale;
    }

    /// Pauses game time: deltas are zero and only debug systems run.
    pub fn pause(&mut self) {
        self.paused = true;
    }

    /// Resumes game time.
    pub fn resume(&mut self) {
        self.paused = false;
    }

    /// Pauses or resumes.
    pub fn set_paused(&mut self, paused: bool) {
        self.paused = paused;
    }

    /// Whether game time is paused.
    #[inline]
    pub fn is_paused(&self) -> bool {
        self.paused
    }

    /// Number of [`Time::advance`] calls so far.
    #[inline]
    pub fn frame(&self) -> u64 {
        self.frame
    }
}
