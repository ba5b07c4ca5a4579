//! The parallel sweep: one loop of modest work per entity ([`drift`]) over
//! 10 to 1,000,000 movers, run in parallel and serially on each engine,
//! each the way its users write it: `par_for_each_mut` against
//! `for_each_mut` on archetable, rayon over `into_iter_batched` against
//! `into_iter().for_each` on hecs, `par_iter_mut` against
//! `iter_mut().for_each` on bevy_ecs. The goal: parallel never slower than
//! 1.1x serial, at any count.

use crate::routine::Steady;
use crate::{mover, step, Position, Routine, Velocity};

/// The entity counts of the sweep, with the names of their parallel and
/// serial workloads.
pub const COUNTS: [(usize, &str, &str); 6] = [
    (10, "par_10", "par_10_serial"),
    (100, "par_100", "par_100_serial"),
    (1_000, "par_1k", "par_1k_serial"),
    (10_000, "par_10k", "par_10k_serial"),
    (100_000, "par_100k", "par_100k_serial"),
    (1_000_000, "par_1m", "par_1m_serial"),
];

/// Rounds of [`drift`]'s square-root chain per coordinate.
pub const DRIFT_ROUNDS: usize = 6;

/// Entities per batch handed to a rayon task on hecs: big enough that the
/// bridge's lock is paid rarely, small enough that 10,000 entities still
/// make several tasks per thread.
pub const HECS_BATCH: u32 = 1024;

/// The sweep's work per entity, about 10 ns: a step, then a short chain of
/// square roots per coordinate that keeps the values bounded.
#[inline(always)]
pub fn drift(position: &mut Position, velocity: &Velocity) {
    step(position, velocity);
    for p in &mut position.0 {
        *p = (0..DRIFT_ROUNDS).fold(*p, |x, _| (x.abs() + 1.0).sqrt() * 2.0);
    }
}

/// The routine of one cell: `n` movers, stepped in parallel or serially.
pub fn routine(which: crate::Implementation, n: usize, parallel: bool) -> Option<Box<dyn Routine>> {
    use crate::Implementation as I;
    match (which, parallel) {
        (I::Ours, true) => Some(Box::new(Steady::new(ours::Sweep::new(n), ours::Sweep::par))),
        (I::Ours, false) => Some(Box::new(Steady::new(ours::Sweep::new(n), ours::Sweep::serial))),
        (I::Hecs, true) => Some(Box::new(Steady::new(with_hecs::world(n), with_hecs::par))),
        (I::Hecs, false) => Some(Box::new(Steady::new(with_hecs::world(n), with_hecs::serial))),
        (I::Bevy, true) => Some(Box::new(Steady::new(with_bevy::Sweep::new(n), with_bevy::Sweep::par))),
        (I::Bevy, false) => Some(Box::new(Steady::new(with_bevy::Sweep::new(n), with_bevy::Sweep::serial))),
        (I::Raw, _) => None,
    }
}

/// On `archetable`: a kept `QueryState`.
pub mod ours {
    use super::*;
    use archetable::{QueryState, World};

    /// `n` movers and their kept query.
    pub struct Sweep {
        /// The world.
        pub world: World,
        query: QueryState<(&'static mut Position, &'static Velocity)>,
    }

    impl Sweep {
        /// `n` movers spawned by one `spawn_batch`.
        pub fn new(n: usize) -> Self {
            let mut world = World::new();
            world.spawn_batch((0..n).map(mover)).for_each(drop);
            let query = QueryState::new(&mut world);
            Sweep { world, query }
        }

        /// [`drift`] on every mover with `par_for_each_mut`.
        pub fn par(&mut self) {
            self.query.par_for_each_mut(&mut self.world, |(mut p, v)| drift(&mut p, v));
        }

        /// [`drift`] on every mover with `for_each_mut`.
        pub fn serial(&mut self) {
            self.query.for_each_mut(&mut self.world, |(mut p, v)| drift(&mut p, v));
        }

        /// Sum of every position's coordinates.
        pub fn position_sum(&mut self) -> f64 {
            let mut sum = 0.0;
            self.query.for_each_mut(&mut self.world, |(p, _)| sum += p.0.iter().sum::<f32>() as f64);
            sum
        }
    }
}

/// On `hecs`: `query_mut` each run, as its documentation teaches.
pub mod with_hecs {
    use super::*;
    use hecs::World;
    use rayon::iter::{ParallelBridge, ParallelIterator};

    /// `n` movers spawned by one `spawn_batch`.
    pub fn world(n: usize) -> World {
        crate::with_hecs::spawn_movers(n)
    }

    /// [`drift`] on every mover: rayon over batches of [`HECS_BATCH`].
    pub fn par(world: &mut World) {
        world
            .query_mut::<(&mut Position, &Velocity)>()
            .into_iter_batched(HECS_BATCH)
            .par_bridge()
            .for_each(|batch| batch.for_each(|(p, v)| drift(p, v)));
    }

    /// [`drift`] on every mover, on the calling thread.
    pub fn serial(world: &mut World) {
        world.query_mut::<(&mut Position, &Velocity)>().into_iter().for_each(|(p, v)| drift(p, v));
    }
}

/// On `bevy_ecs`: a kept `QueryState`, `par_iter_mut` on the compute task
/// pool with its default batching.
pub mod with_bevy {
    use super::*;
    use bevy_ecs::query::QueryState;
    use bevy_ecs::world::World;
    use bevy_tasks::{ComputeTaskPool, TaskPool};

    /// `n` movers and their kept query.
    pub struct Sweep {
        /// The world.
        pub world: World,
        query: QueryState<(&'static mut Position, &'static Velocity)>,
    }

    impl Sweep {
        /// `n` movers spawned by one `spawn_batch`, and the compute task
        /// pool started.
        pub fn new(n: usize) -> Self {
            ComputeTaskPool::get_or_init(TaskPool::default);
            let mut world = crate::with_bevy::spawn_movers(n);
            let query = world.query();
            Sweep { world, query }
        }

        /// [`drift`] on every mover with `par_iter_mut`.
        pub fn par(&mut self) {
            self.query.par_iter_mut(&mut self.world).for_each(|(mut p, v)| drift(&mut p, v));
        }

        /// [`drift`] on every mover with `iter_mut().for_each`.
        pub fn serial(&mut self) {
            self.query.iter_mut(&mut self.world).for_each(|(mut p, v)| drift(&mut p, v));
        }

        /// Sum of every position's coordinates.
        pub fn position_sum(&mut self) -> f64 {
            self.query.iter_mut(&mut self.world).map(|(p, _)| p.0.iter().sum::<f32>() as f64).sum()
        }
    }
}
