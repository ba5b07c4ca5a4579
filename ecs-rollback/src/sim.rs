//! The resources the simulation reads instead of the outside world: the
//! players' inputs of the frame being simulated, the simulation's time
//! (frame times step, never the wall clock) and a seeded random-number
//! generator that rolls back with everything else.

use std::hash::{Hash, Hasher};
use std::time::Duration;

use ggrs::{Frame, InputStatus};

/// The inputs of every player for the frame being simulated, in player
/// order, with ggrs's status of each (confirmed, predicted, or the player
/// disconnected). The driver writes it before each step.
#[derive(Clone, Debug, PartialEq)]
pub struct PlayerInputs<I> {
    /// One `(input, status)` per player handle.
    pub inputs: Vec<(I, InputStatus)>,
}

impl<I> Default for PlayerInputs<I> {
    fn default() -> Self {
        PlayerInputs { inputs: Vec::new() }
    }
}

impl<I: Copy + Default> PlayerInputs<I> {
    /// Player `handle`'s input, or the default input if there is no such
    /// player or the player has disconnected.
    pub fn get(&self, handle: usize) -> I {
        match self.inputs.get(handle) {
            Some(&(input, status)) if status != InputStatus::Disconnected => input,
            _ => I::default(),
        }
    }
}

/// The simulation's clock: the frame being simulated and the fixed step.
/// Its time is `frame × step`, the same on every peer and in every
/// resimulation; systems read it instead of the wall clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SimTime {
    /// The frame being simulated (0 for the first step).
    pub frame: Frame,
    /// The fixed step.
    pub step: Duration,
}

impl SimTime {
    /// The simulated time at the start of this frame: `frame × step`.
    pub fn elapsed(&self) -> Duration {
        self.step * self.frame.max(0) as u32
    }

    /// The step in seconds.
    pub fn delta_secs(&self) -> f32 {
        self.step.as_secs_f32()
    }
}

impl Hash for SimTime {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_i32(self.frame);
        state.write_u64(self.step.as_nanos() as u64);
    }
}

/// A seeded random-number generator (PCG-XSH-RR, 64-bit state, 32-bit
/// output) kept as a resource: it rolls back with the world, so a
/// resimulated frame draws the same numbers. Seed it the same on every peer.
///
/// ```
/// use archetable_rollback::RollbackRng;
///
/// let mut a = RollbackRng::new(7);
/// let mut b = a.clone();
/// assert_eq!(a.next_u32(), b.next_u32());
/// assert!(a.range(10) < 10);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RollbackRng {
    state: u64,
}

const PCG_MUL: u64 = 6_364_136_223_846_793_005;
const PCG_INC: u64 = 1_442_695_040_888_963_407;

impl RollbackRng {
    /// A generator started from `seed`.
    pub fn new(seed: u64) -> Self {
        let mut rng = RollbackRng { state: 0 };
        rng.next_u32();
        rng.state = rng.state.wrapping_add(seed);
        rng.next_u32();
        rng
    }

    /// The next 32 random bits.
    pub fn next_u32(&mut self) -> u32 {
        let old = self.state;
        self.state = old.wrapping_mul(PCG_MUL).wrapping_add(PCG_INC);
        let xorshifted = (((old >> 18) ^ old) >> 27) as u32;
        xorshifted.rotate_right((old >> 59) as u32)
    }

    /// A number in `0..bound` (0 if `bound` is 0), by Lemire's
    /// multiply-shift (with a negligible bias for small bounds).
    pub fn range(&mut self, bound: u32) -> u32 {
        ((u64::from(self.next_u32()) * u64::from(bound)) >> 32) as u32
    }

    /// A number in `0.0..1.0`.
    pub fn unit_f32(&mut self) -> f32 {
        (self.next_u32() >> 8) as f32 / (1u32 << 24) as f32
    }
}
