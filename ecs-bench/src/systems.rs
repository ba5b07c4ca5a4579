//! The schedule workloads of the systems issue, on `archetable` and `bevy_ecs`
//! (hecs has no scheduler): the overhead of a frame of many tiny systems,
//! and the speed-up of two heavy systems that touch different components.

use std::hint::black_box;

use crate::routine::Steady;
use crate::{Routine, A, B};

/// Entities each tiny system's query visits.
const TINY_ENTITIES: usize = 10;
/// Entities each heavy system works on.
pub const HEAVY_ENTITIES: usize = 10_000;

/// The arithmetic of the heavy systems, per entity.
#[inline]
pub fn heavy_math(x: f32) -> f32 {
    (0..64).fold(x, |v, _| (v * 1.000_1 + 0.5).sqrt())
}

/// On `archetable`.
pub mod ours {
    use super::*;
    use archetable::{Query, Schedule, World};

    /// `n` tiny systems, each summing a query over ten entities.
    pub fn tiny_systems(n: usize) -> Box<dyn Routine> {
        let mut world = World::new();
        world.spawn_batch((0..TINY_ENTITIES).map(|i| (A(i as f32),))).for_each(drop);
        let mut schedule = Schedule::new();
        for k in 0..n {
            schedule.add_system(move |q: Query<&A>| {
                black_box(q.iter().map(|a| a.0).sum::<f32>() + k as f32);
            });
        }
        Box::new(Steady::new((world, schedule), |(world, schedule): &mut (World, Schedule)| schedule.run(world)))
    }

    /// Two heavy systems over different components, which the schedule
    /// runs at the same time.
    pub fn two_heavy_systems() -> Box<dyn Routine> {
        let mut world = World::new();
        world.spawn_batch((0..HEAVY_ENTITIES).map(|i| (A(i as f32),))).for_each(drop);
        world.spawn_batch((0..HEAVY_ENTITIES).map(|i| (B(i as f32),))).for_each(drop);
        let mut schedule = Schedule::new();
        schedule.add_system(|mut q: Query<&mut A>| q.for_each_mut(|mut a| a.0 = heavy_math(a.0)));
        schedule.add_system(|mut q: Query<&mut B>| q.for_each_mut(|mut b| b.0 = heavy_math(b.0)));
        Box::new(Steady::new((world, schedule), |(world, schedule): &mut (World, Schedule)| schedule.run(world)))
    }
}

/// On `bevy_ecs`, with the multi-threaded executor.
pub mod bevy {
    use super::*;
    use bevy_ecs::schedule::{MultiThreadedExecutor, Schedule};
    use bevy_ecs::system::Query;
    use bevy_ecs::world::World;
    use bevy_tasks::{ComputeTaskPool, TaskPool};

    fn schedule() -> Schedule {
        ComputeTaskPool::get_or_init(TaskPool::default);
        let mut schedule = Schedule::default();
        schedule.set_executor(MultiThreadedExecutor::new());
        schedule
    }

    /// `n` tiny systems, each summing a query over ten entities.
    pub fn tiny_systems(n: usize) -> Box<dyn Routine> {
        let mut world = World::new();
        world.spawn_batch((0..TINY_ENTITIES).map(|i| (A(i as f32),))).for_each(drop);
        let mut schedule = schedule();
        for k in 0..n {
            schedule.add_systems(move |q: Query<&A>| {
                black_box(q.iter().map(|a| a.0).sum::<f32>() + k as f32);
            });
        }
        Box::new(Steady::new((world, schedule), |(world, schedule): &mut (World, Schedule)| schedule.run(world)))
    }

    /// Two heavy systems over different components.
    pub fn two_heavy_systems() -> Box<dyn Routine> {
        let mut world = World::new();
        world.spawn_batch((0..HEAVY_ENTITIES).map(|i| (A(i as f32),))).for_each(drop);
        world.spawn_batch((0..HEAVY_ENTITIES).map(|i| (B(i as f32),))).for_each(drop);
        let mut schedule = schedule();
        schedule.add_systems(|mut q: Query<&mut A>| q.iter_mut().for_each(|mut a| a.0 = heavy_math(a.0)));
        schedule.add_systems(|mut q: Query<&mut B>| q.iter_mut().for_each(|mut b| b.0 = heavy_math(b.0)));
        Box::new(Steady::new((world, schedule), |(world, schedule): &mut (World, Schedule)| schedule.run(world)))
    }
}

/// The floor: the heavy arithmetic over two plain `Vec`s, one after the
/// other on one thread. `archetable / raw` below 1 is the schedule's parallel
/// speed-up.
pub mod raw {
    use super::*;

    /// The two heavy loops, sequentially.
    pub fn two_heavy_systems() -> Box<dyn Routine> {
        let a: Vec<f32> = (0..HEAVY_ENTITIES).map(|i| i as f32).collect();
        let b = a.clone();
        Box::new(Steady::new((a, b), |(a, b): &mut (Vec<f32>, Vec<f32>)| {
            a.iter_mut().for_each(|x| *x = heavy_math(*x));
            b.iter_mut().for_each(|x| *x = heavy_math(*x));
        }))
    }
}
