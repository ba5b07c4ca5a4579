//! The clock the schedule times its systems with and parallel iteration
//! estimates its work with. Imports nothing.
//!
//! On `wasm32-unknown-unknown` the standard library has no clock (its
//! `Instant::now` panics): there every reading is the same instant, so
//! system timings read zero and parallel iteration, which has one thread
//! there anyway, runs on the calling thread. Results do not depend on the
//! clock, only the timings do. Everywhere else this is `std::time::Instant`.

#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
pub(crate) use std::time::Instant;

#[cfg(all(target_arch = "wasm32", target_os = "unknown"))]
pub(crate) use stopped::Instant;

#[cfg(all(target_arch = "wasm32", target_os = "unknown"))]
mod stopped {
    use std::time::Duration;

    /// A clock that does not move: the target offers none without the
    /// host's help.
    #[derive(Clone, Copy, Debug)]
    pub(crate) struct Instant;

    impl Instant {
        pub(crate) fn now() -> Instant {
            Instant
        }

        pub(crate) fn elapsed(&self) -> Duration {
            Duration::ZERO
        }
    }
}
