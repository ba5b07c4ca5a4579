//! The parallel sweep: one loop of modest work per entity ([`drift`]) over
//! 10 to 1,000,000 movers, run in parallel and serially on each engine,
//! each the way its users write it: `par_for_each_mut` against
//! `for_each_mut` on archetable, rayon over `into_iter_batched` against
//! `into_iter().for_each` on hecs, `par_iter_mut` against
//! `iter_mut().for_each` on bevy_ecs. The goal: parallel never slower than
//! 1.1x serial, at any count.
//!
//! Beside it, the heavy sweep ([`heavy`]): about a microsecond of work per
//! entity ([`heavy_work`]) over 10 to 10,000 entities on archetable, with
//! `par_for_each_mut` as a user writes it (no batch size), serially, and
//! with `batch_size(64)`. The goal: the default call never slower than
//! 1.1x the better of the other two.

use crate::routine::Steady;
use crate::{mover, step, Position, Routine, Transform, Velocity};

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

/// The entity counts of the heavy sweep, with the names of their workloads:
/// the default parallel call, the serial loop, and `batch_size(64)`.
pub const HEAVY_COUNTS: [(usize, &str, &str, &str); 7] = [
    (10, "heavy_10", "heavy_10_serial", "heavy_10_batch64"),
    (30, "heavy_30", "heavy_30_serial", "heavy_30_batch64"),
    (60, "heavy_60", "heavy_60_serial", "heavy_60_batch64"),
    (100, "heavy_100", "heavy_100_serial", "heavy_100_batch64"),
    (300, "heavy_300", "heavy_300_serial", "heavy_300_batch64"),
    (1_000, "heavy_1k", "heavy_1k_serial", "heavy_1k_batch64"),
    (10_000, "heavy_10k", "heavy_10k_serial", "heavy_10k_batch64"),
];

/// Matrix inversions per entity in the heavy sweep: about a microsecond on
/// the report's machine.
pub const HEAVY_INVERSIONS: usize = 40;

/// The heavy sweep's batch size for its tuned row.
pub const HEAVY_BATCH: usize = 64;

/// The heavy sweep's work per entity: [`HEAVY_INVERSIONS`] inversions of
/// the matrix, then a step.
#[inline]
pub fn heavy_work(transform: &mut Transform, position: &mut Position, velocity: &Velocity) {
    for _ in 0..HEAVY_INVERSIONS {
        transform.0 = crate::invert(&transform.0);
    }
    step(position, velocity);
}

/// How a heavy sweep cell calls the loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HeavyCall {
    /// `par_for_each_mut`, no batch size: the engine decides.
    Default,
    /// `for_each_mut`, on the calling thread.
    Serial,
    /// `par_iter_mut().batch_size(64).for_each`.
    Batched,
}

/// The routine of one heavy sweep cell: `n` bodies on archetable (the sweep
/// has no peer cells and no floor).
pub fn heavy_routine(which: crate::Implementation, n: usize, call: HeavyCall) -> Option<Box<dyn Routine>> {
    (which == crate::Implementation::Ours).then(|| {
        let work = match call {
            HeavyCall::Default => heavy::Sweep::par,
            HeavyCall::Serial => heavy::Sweep::serial,
            HeavyCall::Batched => heavy::Sweep::batched,
        };
        Box::new(Steady::new(heavy::Sweep::new(n), work)) as Box<dyn Routine>
    })
}

/// The heavy sweep on `archetable`: a kept `QueryState` over bodies.
pub mod heavy {
    use super::*;
    use archetable::{QueryState, World};

    /// `n` bodies and their kept query.
    pub struct Sweep {
        /// The world.
        pub world: World,
        query: QueryState<(&'static mut Transform, &'static mut Position, &'static Velocity)>,
    }

    impl Sweep {
        /// `n` bodies spawned by one `spawn_batch`.
        pub fn new(n: usize) -> Self {
            let mut world = crate::ours::spawn_bodies(n);
            let query = QueryState::new(&mut world);
            Sweep { world, query }
        }

        /// [`heavy_work`] on every body with `par_for_each_mut`.
        pub fn par(&mut self) {
            self.query.par_for_each_mut(&mut self.world, |(mut t, mut p, v)| heavy_work(&mut t, &mut p, v));
        }

        /// [`heavy_work`] on every body with `for_each_mut`.
        pub fn serial(&mut self) {
            self.query.for_each_mut(&mut self.world, |(mut t, mut p, v)| heavy_work(&mut t, &mut p, v));
        }

        /// [`heavy_work`] on every body with `batch_size(64)`.
        pub fn batched(&mut self) {
            self.query
                .par_iter_mut(&mut self.world)
                .batch_size(HEAVY_BATCH)
                .for_each(|(mut t, mut p, v)| heavy_work(&mut t, &mut p, v));
        }

        /// Sum of every position's coordinates and matrix entries.
        pub fn checksum(&mut self) -> f64 {
            let mut sum = 0.0;
            self.query.for_each_mut(&mut self.world, |(t, p, _)| {
                sum += p.0.iter().sum::<f32>() as f64 + t.0.iter().flatten().sum::<f32>() as f64
            });
            sum
        }
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
