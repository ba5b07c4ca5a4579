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
///
/// A loaded `Time` (from a save) is checked as [`Time::set_scale`] checks
/// its argument: a save with a negative, infinite or NaN scale does not load.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(try_from = "TimeFields"))]
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

/// `Time` as a save holds it, checked before it becomes a `Time`.
#[cfg(feature = "serde")]
#[derive(serde::Deserialize)]
struct TimeFields {
    delta: Duration,
    elapsed: Duration,
    real_delta: Duration,
    real_elapsed: Duration,
    scale: f64,
    paused: bool,
    frame: u64,
}

#[cfg(feature = "serde")]
impl TryFrom<TimeFields> for Time {
    type Error = String;

    fn try_from(f: TimeFields) -> Result<Time, String> {
        check_scale(f.scale)?;
        let TimeFields { delta, elapsed, real_delta, real_elapsed, scale, paused, frame } = f;
        Ok(Time { delta, elapsed, real_delta, real_elapsed, scale, paused, frame })
    }
}

/// Refuses a scale that is negative, infinite or NaN.
fn check_scale(scale: f64) -> Result<(), String> {
    if scale.is_finite() && scale >= 0.0 {
        Ok(())
    } else {
        Err(format!("time scale must be finite and not negative, got {scale}"))
    }
}

impl Time {
    /// Moves the clock on by one frame that took `real_delta` of real time.
    ///
    /// Never panics, whatever the frame time and the scale: a scaled delta
    /// past [`Duration::MAX`] is `Duration::MAX`, and the elapsed times and
    /// the frame count stop at their maximum instead of overflowing.
    ///
    /// ```
    /// use std::time::Duration;
    /// use archetable::Time;
    ///
    /// let mut time = Time::default();
    /// time.set_scale(1e20);
    /// time.advance(Duration::from_secs(60)); // 6e21 s: more than a Duration holds
    /// assert_eq!((time.delta(), time.elapsed()), (Duration::MAX, Duration::MAX));
    /// time.set_scale(1.0);
    /// time.advance(Duration::MAX);
    /// time.advance(Duration::MAX);
    /// assert_eq!((time.elapsed(), time.real_elapsed()), (Duration::MAX, Duration::MAX));
    /// ```
    pub fn advance(&mut self, real_delta: Duration) {
        self.real_delta = real_delta;
        self.real_elapsed = self.real_elapsed.saturating_add(real_delta);
        self.delta = if self.paused { Duration::ZERO } else { scaled(real_delta, self.scale) };
        self.elapsed = self.elapsed.saturating_add(self.delta);
        self.frame = self.frame.saturating_add(1);
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

    /// Sets the time scale from the next [`Time::advance`] on. Any finite
    /// scale is fine, however large: a scaled delta past [`Duration::MAX`]
    /// saturates there.
    ///
    /// # Panics
    /// If `scale` is negative, infinite or NaN.
    pub fn set_scale(&mut self, scale: f64) {
        if let Err(message) = check_scale(scale) {
            panic!("{message}");
        }
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

    /// Number of [`Time::advance`] calls so far (stopping at `u64::MAX`).
    #[inline]
    pub fn frame(&self) -> u64 {
        self.frame
    }
}

/// `real` times `scale`, as [`Duration::mul_f64`] computes it but
/// saturating: `Duration::MAX` past its range, zero for a scale that is not
/// positive (or NaN), which neither `set_scale` nor a load lets in.
fn scaled(real: Duration, scale: f64) -> Duration {
    let secs = scale * real.as_secs_f64();
    if secs.is_nan() || secs <= 0.0 {
        return Duration::ZERO;
    }
    Duration::try_from_secs_f64(secs).unwrap_or(Duration::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scale_set_around_set_scale_neither_panics_nor_goes_negative() {
        for (scale, delta) in [
            (f64::NAN, Duration::ZERO),
            (-1.0, Duration::ZERO),
            (f64::NEG_INFINITY, Duration::ZERO),
            (f64::INFINITY, Duration::MAX),
            (0.5, Duration::from_millis(5)),
        ] {
            let mut time = Time { scale, ..Time::default() };
            time.advance(Duration::from_millis(10));
            assert_eq!((time.delta(), time.elapsed()), (delta, delta), "scale {scale}");
        }
    }

    #[test]
    fn scaling_matches_mul_f64_inside_its_range() {
        for (real, scale) in [
            (Duration::from_nanos(16_666_667), 1.0),
            (Duration::from_nanos(16_666_667), 0.25),
            (Duration::from_secs(3), 1.5),
            (Duration::from_nanos(1), 1e9),
            (Duration::from_secs(u64::MAX / 4), 2.0),
        ] {
            assert_eq!(scaled(real, scale), real.mul_f64(scale), "{real:?} x {scale}");
        }
    }
}
