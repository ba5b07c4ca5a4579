//! The workloads on `hecs`, written the way its documentation teaches:
//! `spawn_batch`, `query_mut` (hecs caches the matching archetypes of each
//! query type inside the world), `insert_one`/`remove_one`, and rayon over
//! `into_iter_batched` for parallel work.
//!
//! hecs has no scheduler: the schedule workload runs `ab` and `cd` at the
//! same time with `rayon::join` (their components are disjoint, and hecs
//! checks the borrows at run time), then `ce`.

use hecs::{Entity, EntityBuilder, World};
use rayon::iter::{ParallelBridge, ParallelIterator};

use crate::markers::{self, Marker, MarkerSink};
use crate::routine::{Build, Prepared, Steady};
use crate::{body, frag, heavy, mover, step, swap_ab, swap_cd, swap_ce, Routine};
use crate::{Position, Transform, Velocity, A, B, C, D, E};

/// Entities per batch handed to a rayon task in the heavy compute workload.
pub const BATCH: u32 = 64;

/// A world with `n` bodies spawned by one `spawn_batch`.
pub fn spawn_bodies(n: usize) -> World {
    let mut world = World::new();
    world.spawn_batch((0..n).map(body)).for_each(drop);
    world
}

/// A world with `n` movers `(Position, Velocity)` spawned by one `spawn_batch`.
pub fn spawn_movers(n: usize) -> World {
    let mut world = World::new();
    world.spawn_batch((0..n).map(mover)).for_each(drop);
    world
}

/// Adds velocity to position for every entity of `world` that has both.
#[inline]
pub fn step_movers(world: &mut World) {
    world
        .query_mut::<(&mut Position, &Velocity)>()
        .into_iter()
        .for_each(|(position, velocity)| step(position, velocity));
}

/// [`step_movers`] written as a plain `for` loop.
pub fn step_movers_for(world: &mut World) {
    for (position, velocity) in world.query_mut::<(&mut Position, &Velocity)>() {
        step(position, velocity);
    }
}

/// [`frag_step`] written as a plain `for` loop.
pub fn frag_step_for(world: &mut World) {
    for data in world.query_mut::<&mut frag::Data>() {
        data.0 *= 2.0;
    }
}

/// Sum of the coordinates of every position that has a velocity.
pub fn position_sum(world: &mut World) -> f64 {
    let mut sum = 0.0;
    world.query_mut::<(&Position, &Velocity)>().into_iter().for_each(|(p, _)| sum += p.0.iter().sum::<f32>() as f64);
    sum
}

/// Doubles every `Data`.
#[inline]
pub fn frag_step(world: &mut World) {
    world.query_mut::<&mut frag::Data>().into_iter().for_each(|data| data.0 *= 2.0);
}

/// Sum of every `Data`.
pub fn data_sum(world: &mut World) -> f64 {
    world.query_mut::<&frag::Data>().into_iter().map(|data| data.0 as f64).sum()
}

/// Inverts every matrix, then steps every body, on rayon's threads.
pub fn heavy_step(world: &mut World) {
    world
        .query_mut::<(&mut Transform, &mut Position, &Velocity)>()
        .into_iter_batched(BATCH)
        .par_bridge()
        .for_each(|batch| batch.for_each(|(transform, position, velocity)| heavy(transform, position, velocity)));
}

/// Sum of every position's coordinates and matrix entries.
pub fn heavy_checksum(world: &mut World) -> f64 {
    let mut sum = 0.0;
    world.query_mut::<(&Transform, &Position)>().into_iter().for_each(|(t, p)| {
        sum += p.0.iter().sum::<f32>() as f64 + t.0.iter().flatten().sum::<f32>() as f64;
    });
    sum
}

/// `n` entities of each of `(A, B)`, `(A, B, C)`, `(A, B, C, D)` and
/// `(A, B, C, E)`.
pub fn schedule_world(n: usize) -> World {
    let mut world = World::new();
    let f = |i: usize| i as f32;
    world.spawn_batch((0..n).map(|i| (A(f(i)), B(0.0)))).for_each(drop);
    world.spawn_batch((0..n).map(|i| (A(f(i)), B(0.0), C(1.0)))).for_each(drop);
    world.spawn_batch((0..n).map(|i| (A(f(i)), B(0.0), C(1.0), D(2.0)))).for_each(drop);
    world.spawn_batch((0..n).map(|i| (A(f(i)), B(0.0), C(1.0), E(3.0)))).for_each(drop);
    world
}

/// Runs `ab` beside `cd`, then `ce`.
pub fn schedule_run(world: &mut World) {
    let shared: &World = world;
    rayon::join(
        || shared.query::<(&mut A, &mut B)>().iter().for_each(|(a, b)| swap_ab(a, b)),
        || shared.query::<(&mut C, &mut D)>().iter().for_each(|(c, d)| swap_cd(c, d)),
    );
    world.query_mut::<(&mut C, &mut E)>().into_iter().for_each(|(c, e)| swap_ce(c, e));
}

/// [`schedule_run`] with each system written as a plain `for` loop.
pub fn schedule_run_for(world: &mut World) {
    let shared: &World = world;
    rayon::join(
        || {
            for (a, b) in shared.query::<(&mut A, &mut B)>().iter() {
                swap_ab(a, b);
            }
        },
        || {
            for (c, d) in shared.query::<(&mut C, &mut D)>().iter() {
                swap_cd(c, d);
            }
        },
    );
    for (c, e) in world.query_mut::<(&mut C, &mut E)>() {
        swap_ce(c, e);
    }
}

/// Sums of the values of `A`, `B`, `C`, `D` and `E`.
pub fn schedule_sums(world: &mut World) -> [f64; 5] {
    let mut sums = [0.0; 5];
    world.query_mut::<&A>().into_iter().for_each(|x| sums[0] += x.0 as f64);
    world.query_mut::<&B>().into_iter().for_each(|x| sums[1] += x.0 as f64);
    world.query_mut::<&C>().into_iter().for_each(|x| sums[2] += x.0 as f64);
    world.query_mut::<&D>().into_iter().for_each(|x| sums[3] += x.0 as f64);
    world.query_mut::<&E>().into_iter().for_each(|x| sums[4] += x.0 as f64);
    sums
}

/// A world with `n` entities of `(A,)`, and their handles.
pub fn add_remove_world(n: usize) -> (World, Vec<Entity>) {
    let mut world = World::new();
    let entities = world.spawn_batch((0..n).map(|i| (A(i as f32),))).collect();
    (world, entities)
}

/// Inserts `B` into every entity of `entities`, then removes it from each.
///
/// # Panics
/// If an entity is not alive or lost its `B` in between.
pub fn add_remove_all(world: &mut World, entities: &[Entity]) {
    for &entity in entities {
        world.insert_one(entity, B(1.0)).expect("entity is alive");
    }
    for &entity in entities {
        world.remove_one::<B>(entity).expect("entity has a B");
    }
}

impl MarkerSink for EntityBuilder {
    fn add<M: Marker>(&mut self, marker: M) {
        EntityBuilder::add(self, marker);
    }
}

/// The sparse query workload's world (see [`crate::sparse_layout`]), each
/// entity spawned whole from an `EntityBuilder`.
pub fn sparse_world() -> World {
    let mut world = World::new();
    let per_archetype = crate::SPARSE_ENTITIES / crate::SPARSE_ARCHETYPES;
    let mut builder = EntityBuilder::new();
    for (hit, archetype) in crate::sparse_layout() {
        for i in 0..per_archetype {
            let (position, velocity) = mover(i);
            builder.add(position);
            if hit {
                builder.add(velocity);
            }
            markers::add_markers(archetype, &mut builder);
            world.spawn(builder.build());
        }
    }
    world
}

/// A world of `n` archetypes with one entity each: entity `k` has
/// `(Position, Velocity)` and the markers of `k`.
pub fn many_archetypes_world(n: usize) -> World {
    let mut world = World::new();
    let mut builder = EntityBuilder::new();
    for k in 0..n {
        builder.add_bundle(mover(k));
        markers::add_markers(k, &mut builder);
        world.spawn(builder.build());
    }
    world
}

/// A world of `n` movers and their handles in [`shuffled`](crate::shuffled)
/// order.
pub fn despawn_world(n: usize) -> (World, Vec<Entity>) {
    let mut world = World::new();
    let entities: Vec<Entity> = world.spawn_batch((0..n).map(mover)).collect();
    let order = crate::shuffled(n).into_iter().map(|i| entities[i]).collect();
    (world, order)
}

/// Despawns every entity of `order`, in that order.
///
/// # Panics
/// If one is not alive.
pub fn despawn_all(world: &mut World, order: &[Entity]) {
    for &entity in order {
        world.despawn(entity).expect("entity is alive");
    }
}

/// Spawns 10,000 bodies into a fresh world.
pub fn simple_insert() -> Box<dyn Routine> {
    Box::new(Build::new(|| spawn_bodies(crate::N)))
}

/// Steps 10,000 bodies.
pub fn simple_iter() -> Box<dyn Routine> {
    Box::new(Steady::new(spawn_bodies(crate::N), step_movers))
}

/// Doubles `Data` over 26 small archetypes.
pub fn frag_iter() -> Box<dyn Routine> {
    Box::new(Steady::new(frag::hecs_world(), frag_step))
}

/// Steps 10,000 bodies in a `for` loop.
pub fn simple_iter_for() -> Box<dyn Routine> {
    Box::new(Steady::new(spawn_bodies(crate::N), step_movers_for))
}

/// Doubles `Data` over 26 small archetypes in a `for` loop.
pub fn frag_iter_for() -> Box<dyn Routine> {
    Box::new(Steady::new(frag::hecs_world(), frag_step_for))
}

/// Inverts matrices of 1,000 bodies.
pub fn heavy_compute() -> Box<dyn Routine> {
    Box::new(Steady::new(spawn_bodies(crate::HEAVY), heavy_step))
}

/// Runs the three swap systems.
pub fn schedule() -> Box<dyn Routine> {
    Box::new(Steady::new(schedule_world(crate::SCHEDULE_PER_ARCHETYPE), schedule_run))
}

/// Runs the three swap systems, each a `for` loop.
pub fn schedule_for() -> Box<dyn Routine> {
    Box::new(Steady::new(schedule_world(crate::SCHEDULE_PER_ARCHETYPE), schedule_run_for))
}

/// Adds and removes `B` on 10,000 entities.
pub fn add_remove() -> Box<dyn Routine> {
    Box::new(Steady::new(add_remove_world(crate::N), |(world, entities)| add_remove_all(world, entities)))
}

/// Steps `n` movers.
pub fn iter_movers(n: usize) -> Box<dyn Routine> {
    Box::new(Steady::new(spawn_movers(n), step_movers))
}

/// Spawns a million movers into a fresh world.
pub fn spawn_big() -> Box<dyn Routine> {
    Box::new(Build::new(|| spawn_movers(crate::SPAWN_BIG)))
}

/// Steps the 1% of entities the sparse query matches.
pub fn sparse_query() -> Box<dyn Routine> {
    Box::new(Steady::new(sparse_world(), step_movers))
}

/// Builds a query over 10,000 archetypes and iterates once. The world is
/// fresh each run, so hecs's query cache starts empty, as a kept query
/// state does in the other engines.
pub fn first_query_many_archetypes() -> Box<dyn Routine> {
    Box::new(Prepared::new(|| many_archetypes_world(crate::MANY_ARCHETYPES), step_movers))
}

/// Despawns 100,000 entities in random order.
pub fn despawn_random() -> Box<dyn Routine> {
    Box::new(Prepared::new(|| despawn_world(crate::DESPAWN), |(world, order)| despawn_all(world, order)))
}

/// 10,000 movers, half boosted by a component (hecs has one storage).
pub fn boost_iter() -> Box<dyn Routine> {
    use crate::sparse_types::Boost;
    let mut world = spawn_movers(crate::N);
    let entities: Vec<Entity> = world.iter().map(|e| e.entity()).collect();
    for (i, &entity) in entities.iter().enumerate().filter(|(i, _)| i % 2 == 0) {
        world.insert_one(entity, Boost(1.0 + (i % 7) as f32)).expect("entity is alive");
    }
    Box::new(Steady::new(world, |world| {
        world.query_mut::<(&mut Position, &Boost)>().into_iter().for_each(|(position, boost)| position.0[0] += boost.0)
    }))
}
