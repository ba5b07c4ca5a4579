//! The workloads on `bevy_ecs`, written the way its documentation teaches:
//! `spawn_batch`, a `QueryState` kept across runs, `par_iter_mut` on the
//! compute task pool for parallel work, and a `Schedule` with the
//! multi-threaded executor for the schedule workload.

use bevy_ecs::entity::Entity;
use bevy_ecs::query::QueryState;
use bevy_ecs::schedule::{MultiThreadedExecutor, Schedule as BevySchedule};
use bevy_ecs::system::Query;
use bevy_ecs::world::{EntityWorldMut, World};
use bevy_tasks::{ComputeTaskPool, TaskPool};

use crate::markers::{self, Marker, MarkerSink};
use crate::routine::{Build, Prepared, Steady};
use crate::{body, frag, heavy, mover, step, swap_ab, swap_cd, swap_ce, Routine};
use crate::{Position, Transform, Velocity, A, B, C, D, E};

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

/// A world and its kept movement query `(&mut Position, &Velocity)`.
pub struct Movers {
    /// The world.
    pub world: World,
    query: QueryState<(&'static mut Position, &'static Velocity)>,
}

impl Movers {
    /// Prepares the movement query over `world`.
    pub fn new(mut world: World) -> Self {
        let query = world.query();
        Movers { world, query }
    }

    /// Adds velocity to position for every entity the query matches.
    #[inline]
    pub fn step(&mut self) {
        self.query.iter_mut(&mut self.world).for_each(|(mut position, velocity)| step(&mut position, velocity));
    }

    /// [`Movers::step`] written as a plain `for` loop.
    #[inline]
    pub fn step_for(&mut self) {
        for (mut position, velocity) in self.query.iter_mut(&mut self.world) {
            step(&mut position, velocity);
        }
    }

    /// Sum of every matched position's coordinates, to compare engines.
    pub fn position_sum(&mut self) -> f64 {
        self.query.iter_mut(&mut self.world).map(|(p, _)| p.0.iter().sum::<f32>() as f64).sum()
    }
}

/// The world of the fragmented iteration workload and its kept query.
pub struct Frag {
    /// The world.
    pub world: World,
    query: QueryState<&'static mut frag::Data>,
}

impl Frag {
    /// The fragmented world (see [`frag`]).
    pub fn new() -> Self {
        let mut world = frag::bevy_world();
        let query = world.query();
        Frag { world, query }
    }

    /// Doubles every `Data`.
    #[inline]
    pub fn step(&mut self) {
        self.query.iter_mut(&mut self.world).for_each(|mut data| data.0 *= 2.0);
    }

    /// [`Frag::step`] written as a plain `for` loop.
    #[inline]
    pub fn step_for(&mut self) {
        for mut data in self.query.iter_mut(&mut self.world) {
            data.0 *= 2.0;
        }
    }

    /// Sum of every `Data`.
    pub fn data_sum(&mut self) -> f64 {
        self.query.iter_mut(&mut self.world).map(|data| data.0 as f64).sum()
    }
}

impl Default for Frag {
    fn default() -> Self {
        Frag::new()
    }
}

/// The heavy compute workload: bodies and their kept query.
pub struct Heavy {
    /// The world.
    pub world: World,
    query: QueryState<(&'static mut Transform, &'static mut Position, &'static Velocity)>,
}

impl Heavy {
    /// A world of `n` bodies, and the compute task pool started.
    pub fn new(n: usize) -> Self {
        ComputeTaskPool::get_or_init(TaskPool::default);
        let mut world = spawn_bodies(n);
        let query = world.query();
        Heavy { world, query }
    }

    /// Inverts every matrix, then steps every body, on the compute task
    /// pool's threads.
    pub fn step(&mut self) {
        self.query
            .par_iter_mut(&mut self.world)
            .for_each(|(mut transform, mut position, velocity)| heavy(&mut transform, &mut position, velocity));
    }

    /// [`Heavy::step`] in fixed batches of 64 bodies: the tuned variant.
    pub fn step_batched(&mut self) {
        self.query
            .par_iter_mut(&mut self.world)
            .batching_strategy(bevy_ecs::batching::BatchingStrategy::fixed(crate::with_hecs::BATCH as usize))
            .for_each(|(mut transform, mut position, velocity)| heavy(&mut transform, &mut position, velocity));
    }

    /// Sum of every position's coordinates and matrix entries.
    pub fn checksum(&mut self) -> f64 {
        self.query
            .iter_mut(&mut self.world)
            .map(|(t, p, _)| p.0.iter().sum::<f32>() as f64 + t.0.iter().flatten().sum::<f32>() as f64)
            .sum()
    }
}

fn ab(mut query: Query<(&mut A, &mut B)>) {
    query.iter_mut().for_each(|(mut a, mut b)| swap_ab(&mut a, &mut b));
}

fn cd(mut query: Query<(&mut C, &mut D)>) {
    query.iter_mut().for_each(|(mut c, mut d)| swap_cd(&mut c, &mut d));
}

fn ce(mut query: Query<(&mut C, &mut E)>) {
    query.iter_mut().for_each(|(mut c, mut e)| swap_ce(&mut c, &mut e));
}

fn ab_for(mut query: Query<(&mut A, &mut B)>) {
    for (mut a, mut b) in query.iter_mut() {
        swap_ab(&mut a, &mut b);
    }
}

fn cd_for(mut query: Query<(&mut C, &mut D)>) {
    for (mut c, mut d) in query.iter_mut() {
        swap_cd(&mut c, &mut d);
    }
}

fn ce_for(mut query: Query<(&mut C, &mut E)>) {
    for (mut c, mut e) in query.iter_mut() {
        swap_ce(&mut c, &mut e);
    }
}

/// The schedule workload: the world and a `Schedule` of its three systems
/// on the multi-threaded executor.
pub struct Schedule {
    /// The world.
    pub world: World,
    schedule: BevySchedule,
}

impl Schedule {
    /// `n` entities of each of `(A, B)`, `(A, B, C)`, `(A, B, C, D)` and
    /// `(A, B, C, E)`.
    pub fn new(n: usize) -> Self {
        let mut schedule = BevySchedule::default();
        schedule.set_executor(MultiThreadedExecutor::new());
        schedule.add_systems((ab, cd, ce));
        Schedule { world: Self::world(n), schedule }
    }

    /// [`Schedule::new`] with each system written as a plain `for` loop over
    /// its query.
    pub fn new_for(n: usize) -> Self {
        let mut schedule = BevySchedule::default();
        schedule.set_executor(MultiThreadedExecutor::new());
        schedule.add_systems((ab_for, cd_for, ce_for));
        Schedule { world: Self::world(n), schedule }
    }

    fn world(n: usize) -> World {
        let mut world = World::new();
        let f = |i: usize| i as f32;
        world.spawn_batch((0..n).map(|i| (A(f(i)), B(0.0)))).for_each(drop);
        world.spawn_batch((0..n).map(|i| (A(f(i)), B(0.0), C(1.0)))).for_each(drop);
        world.spawn_batch((0..n).map(|i| (A(f(i)), B(0.0), C(1.0), D(2.0)))).for_each(drop);
        world.spawn_batch((0..n).map(|i| (A(f(i)), B(0.0), C(1.0), E(3.0)))).for_each(drop);
        world
    }

    /// Runs the schedule once.
    pub fn run(&mut self) {
        self.schedule.run(&mut self.world);
    }

    /// Sums of the values of `A`, `B`, `C`, `D` and `E`.
    pub fn sums(&mut self) -> [f64; 5] {
        let w = &mut self.world;
        [
            w.query::<&A>().iter(w).map(|x| x.0 as f64).sum(),
            w.query::<&B>().iter(w).map(|x| x.0 as f64).sum(),
            w.query::<&C>().iter(w).map(|x| x.0 as f64).sum(),
            w.query::<&D>().iter(w).map(|x| x.0 as f64).sum(),
            w.query::<&E>().iter(w).map(|x| x.0 as f64).sum(),
        ]
    }
}

/// A world with `n` entities of `(A,)`, and their handles.
pub fn add_remove_world(n: usize) -> (World, Vec<Entity>) {
    let mut world = World::new();
    let entities = world.spawn_batch((0..n).map(|i| (A(i as f32),))).collect();
    (world, entities)
}

/// Inserts `B` into every entity of `entities`, then removes it from each.
pub fn add_remove_all(world: &mut World, entities: &[Entity]) {
    for &entity in entities {
        world.entity_mut(entity).insert(B(1.0));
    }
    for &entity in entities {
        world.entity_mut(entity).remove::<B>();
    }
}

impl MarkerSink for EntityWorldMut<'_> {
    fn add<M: Marker>(&mut self, marker: M) {
        self.insert(marker);
    }
}

/// The sparse query workload's world (see [`crate::sparse_layout`]).
pub fn sparse_world() -> World {
    let mut world = World::new();
    let per_archetype = crate::SPARSE_ENTITIES / crate::SPARSE_ARCHETYPES;
    for (hit, archetype) in crate::sparse_layout() {
        for i in 0..per_archetype {
            let (position, velocity) = mover(i);
            let mut entity = if hit { world.spawn((position, velocity)) } else { world.spawn((position,)) };
            markers::add_markers(archetype, &mut entity);
        }
    }
    world
}

/// A world of `n` archetypes with one entity each: entity `k` has
/// `(Position, Velocity)` and the markers of `k`.
pub fn many_archetypes_world(n: usize) -> World {
    let mut world = World::new();
    for k in 0..n {
        let mut entity = world.spawn(mover(k));
        markers::add_markers(k, &mut entity);
    }
    world
}

/// Builds the movement query over `world` and steps every entity once.
pub fn first_query(world: &mut World) {
    let mut query = world.query::<(&mut Position, &Velocity)>();
    query.iter_mut(world).for_each(|(mut position, velocity)| step(&mut position, velocity));
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
        assert!(world.despawn(entity), "entity is alive");
    }
}

/// Spawns 10,000 bodies into a fresh world.
pub fn simple_insert() -> Box<dyn Routine> {
    Box::new(Build::new(|| spawn_bodies(crate::N)))
}

/// Steps 10,000 bodies.
pub fn simple_iter() -> Box<dyn Routine> {
    Box::new(Steady::new(Movers::new(spawn_bodies(crate::N)), Movers::step))
}

/// Doubles `Data` over 26 small archetypes.
pub fn frag_iter() -> Box<dyn Routine> {
    Box::new(Steady::new(Frag::new(), Frag::step))
}

/// Steps 10,000 bodies in a `for` loop.
pub fn simple_iter_for() -> Box<dyn Routine> {
    Box::new(Steady::new(Movers::new(spawn_bodies(crate::N)), Movers::step_for))
}

/// Doubles `Data` over 26 small archetypes in a `for` loop.
pub fn frag_iter_for() -> Box<dyn Routine> {
    Box::new(Steady::new(Frag::new(), Frag::step_for))
}

/// Inverts matrices of 1,000 bodies.
pub fn heavy_compute() -> Box<dyn Routine> {
    Box::new(Steady::new(Heavy::new(crate::HEAVY), Heavy::step))
}

/// Inverts matrices of 1,000 bodies in fixed batches of 64.
pub fn heavy_compute_batched() -> Box<dyn Routine> {
    Box::new(Steady::new(Heavy::new(crate::HEAVY), Heavy::step_batched))
}

/// Runs the three swap systems.
pub fn schedule() -> Box<dyn Routine> {
    Box::new(Steady::new(Schedule::new(crate::SCHEDULE_PER_ARCHETYPE), Schedule::run))
}

/// Runs the three swap systems, each a `for` loop.
pub fn schedule_for() -> Box<dyn Routine> {
    Box::new(Steady::new(Schedule::new_for(crate::SCHEDULE_PER_ARCHETYPE), Schedule::run))
}

/// Adds and removes `B` on 10,000 entities.
pub fn add_remove() -> Box<dyn Routine> {
    Box::new(Steady::new(add_remove_world(crate::N), |(world, entities)| add_remove_all(world, entities)))
}

/// Steps `n` movers.
pub fn iter_movers(n: usize) -> Box<dyn Routine> {
    Box::new(Steady::new(Movers::new(spawn_movers(n)), Movers::step))
}

/// Spawns a million movers into a fresh world.
pub fn spawn_big() -> Box<dyn Routine> {
    Box::new(Build::new(|| spawn_movers(crate::SPAWN_BIG)))
}

/// Steps the 1% of entities the sparse query matches.
pub fn sparse_query() -> Box<dyn Routine> {
    Box::new(Steady::new(Movers::new(sparse_world()), Movers::step))
}

/// Builds a query over 10,000 archetypes and iterates once.
pub fn first_query_many_archetypes() -> Box<dyn Routine> {
    Box::new(Prepared::new(|| many_archetypes_world(crate::MANY_ARCHETYPES), first_query))
}

/// Despawns 100,000 entities in random order.
pub fn despawn_random() -> Box<dyn Routine> {
    Box::new(Prepared::new(|| despawn_world(crate::DESPAWN), |(world, order)| despawn_all(world, order)))
}

/// [`add_remove_all`] with `B` in a `SparseSet`.
pub fn add_remove_sparse_all(world: &mut World, entities: &[Entity]) {
    use crate::sparse_types::SparseB;
    for &entity in entities {
        world.entity_mut(entity).insert(SparseB(1.0));
    }
    for &entity in entities {
        world.entity_mut(entity).remove::<SparseB>();
    }
}

/// add_remove with `B` in a `SparseSet`.
pub fn add_remove_sparse() -> Box<dyn Routine> {
    Box::new(Steady::new(add_remove_world(crate::N), |(world, entities)| add_remove_sparse_all(world, entities)))
}

/// `n` movers, every other one boosted: with a table `Boost`, or with a
/// `SparseBoost` when `sparse`.
pub fn boosted_world(n: usize, sparse: bool) -> World {
    use crate::sparse_types::{Boost, SparseBoost};
    let mut world = World::new();
    let entities: Vec<Entity> = world.spawn_batch((0..n).map(mover)).collect();
    for (i, &entity) in entities.iter().enumerate().filter(|(i, _)| i % 2 == 0) {
        let boost = 1.0 + (i % 7) as f32;
        if sparse {
            world.entity_mut(entity).insert(SparseBoost(boost));
        } else {
            world.entity_mut(entity).insert(Boost(boost));
        }
    }
    world
}

/// 10,000 movers, half boosted by a table component.
pub fn boost_iter() -> Box<dyn Routine> {
    use crate::sparse_types::Boost;
    let mut world = boosted_world(crate::N, false);
    let query = world.query::<(&mut Position, &Boost)>();
    Box::new(Steady::new((world, query), |(world, query)| {
        query.iter_mut(world).for_each(|(mut position, boost)| position.0[0] += boost.0)
    }))
}

/// 10,000 movers, half boosted by a `SparseSet` component.
pub fn sparse_boost_iter() -> Box<dyn Routine> {
    use crate::sparse_types::SparseBoost;
    let mut world = boosted_world(crate::N, true);
    let query = world.query::<(&mut Position, &SparseBoost)>();
    Box::new(Steady::new((world, query), |(world, query)| {
        query.iter_mut(world).for_each(|(mut position, boost)| position.0[0] += boost.0)
    }))
}
