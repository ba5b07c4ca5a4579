//! The workloads on `archetable`, the engine of this workspace, written the way its
//! README teaches: `spawn_batch`, a `QueryState` kept across runs and driven
//! by `for_each_mut` (`par_iter_mut` with the engine's defaults for heavy
//! parallel work), and a `Schedule` of function systems for the schedule
//! workload.

use archetable::{Entity, Query, QueryState, World};

use crate::markers::{self, Marker, MarkerSink};
use crate::routine::{Build, Prepared, Steady};
use crate::{body, frag, heavy, mover, step, swap_ab, swap_cd, swap_ce, Routine};
use crate::{Position, Rotation, Transform, Velocity, A, B, C, D, E};

/// `Position` with change tracking: the world keeps an added and a changed
/// tick per value. Only ours has the option (`bevy_ecs` tracks every
/// component, hecs none), so the type derives only our `Component`.
#[derive(archetable::Component, Clone, Copy, Debug, PartialEq)]
#[component(track_changes)]
pub struct TrackedPosition(pub Position);

/// `Velocity` with change tracking; see [`TrackedPosition`].
#[derive(archetable::Component, Clone, Copy, Debug, PartialEq)]
#[component(track_changes)]
pub struct TrackedVelocity(pub Velocity);

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
        let query = QueryState::new(&mut world);
        Movers { world, query }
    }

    /// Adds velocity to position for every entity the query matches.
    #[inline]
    pub fn step(&mut self) {
        self.query.for_each_mut(&mut self.world, |(mut position, velocity)| step(&mut position, velocity));
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
        let mut sum = 0.0;
        self.query.for_each_mut(&mut self.world, |(position, _)| sum += position.0.iter().sum::<f32>() as f64);
        sum
    }
}

/// A world of `n` bodies whose position and velocity track changes,
/// spawned by one `spawn_batch`: the bodies of [`spawn_bodies`] otherwise.
pub fn spawn_tracked_bodies(n: usize) -> World {
    let mut world = World::new();
    let tracked = |(transform, position, rotation, velocity): (Transform, Position, Rotation, Velocity)| {
        (transform, TrackedPosition(position), rotation, TrackedVelocity(velocity))
    };
    world.spawn_batch((0..n).map(body).map(tracked)).for_each(drop);
    world
}

/// [`Movers`] over the tracked types: the kept query
/// `(&mut TrackedPosition, &TrackedVelocity)`.
pub struct TrackedMovers {
    /// The world.
    pub world: World,
    query: QueryState<(&'static mut TrackedPosition, &'static TrackedVelocity)>,
}

impl TrackedMovers {
    /// Prepares the movement query over `world`.
    pub fn new(mut world: World) -> Self {
        let query = QueryState::new(&mut world);
        TrackedMovers { world, query }
    }

    /// Adds velocity to position for every entity the query matches.
    #[inline]
    pub fn step(&mut self) {
        self.query.for_each_mut(&mut self.world, |(mut position, velocity)| step(&mut position.0, &velocity.0));
    }

    /// Sum of every matched position's coordinates, to compare engines.
    pub fn position_sum(&mut self) -> f64 {
        let mut sum = 0.0;
        self.query.for_each_mut(&mut self.world, |(position, _)| sum += position.0 .0.iter().sum::<f32>() as f64);
        sum
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
        let mut world = frag::ours_world();
        let query = QueryState::new(&mut world);
        Frag { world, query }
    }

    /// Doubles every `Data`.
    #[inline]
    pub fn step(&mut self) {
        self.query.for_each_mut(&mut self.world, |mut data| data.0 *= 2.0);
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
        let mut sum = 0.0;
        self.query.for_each_mut(&mut self.world, |data| sum += data.0 as f64);
        sum
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
    /// A world of `n` bodies.
    pub fn new(n: usize) -> Self {
        let mut world = spawn_bodies(n);
        let query = QueryState::new(&mut world);
        Heavy { world, query }
    }

    /// Inverts every matrix [`INVERSIONS`](crate::INVERSIONS) times, then
    /// steps every body, with `par_iter_mut` as a user writes it: no batch
    /// size, the engine decides from the work.
    pub fn step(&mut self) {
        self.query
            .par_iter_mut(&mut self.world)
            .for_each(|(mut transform, mut position, velocity)| heavy(&mut transform, &mut position, velocity));
    }

    /// [`Heavy::step`] in batches of 64 bodies (as hecs and the floor split
    /// them): the tuned variant, a row beside the default one.
    pub fn step_batched(&mut self) {
        self.query
            .par_iter_mut(&mut self.world)
            .batch_size(crate::with_hecs::BATCH as usize)
            .for_each(|(mut transform, mut position, velocity)| heavy(&mut transform, &mut position, velocity));
    }

    /// Sum of every position's coordinates and matrix entries.
    pub fn checksum(&mut self) -> f64 {
        let mut sum = 0.0;
        self.query.for_each_mut(&mut self.world, |(transform, position, _)| {
            sum += position.0.iter().sum::<f32>() as f64 + transform.0.iter().flatten().sum::<f32>() as f64
        });
        sum
    }
}

fn ab(mut query: Query<(&mut A, &mut B)>) {
    query.for_each_mut(|(mut a, mut b)| swap_ab(&mut a, &mut b));
}

fn cd(mut query: Query<(&mut C, &mut D)>) {
    query.for_each_mut(|(mut c, mut d)| swap_cd(&mut c, &mut d));
}

fn ce(mut query: Query<(&mut C, &mut E)>) {
    query.for_each_mut(|(mut c, mut e)| swap_ce(&mut c, &mut e));
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

/// The schedule workload: the world and an `archetable::Schedule` of its three
/// systems, which runs `ab` beside `cd` or `ce` (`cd` and `ce` both write
/// `C`).
pub struct Schedule {
    /// The world.
    pub world: World,
    schedule: archetable::Schedule,
}

impl Schedule {
    /// `n` entities of each of `(A, B)`, `(A, B, C)`, `(A, B, C, D)` and
    /// `(A, B, C, E)`.
    pub fn new(n: usize) -> Self {
        let mut schedule = archetable::Schedule::new();
        schedule.add_system(ab);
        schedule.add_system(cd);
        schedule.add_system(ce);
        Schedule { world: Self::world(n), schedule }
    }

    /// [`Schedule::new`] with each system written as a plain `for` loop over
    /// its query.
    pub fn new_for(n: usize) -> Self {
        let mut schedule = archetable::Schedule::new();
        schedule.add_system(ab_for);
        schedule.add_system(cd_for);
        schedule.add_system(ce_for);
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
        let mut sums = [0.0; 5];
        self.world.query::<&A>().for_each(|x| sums[0] += x.0 as f64);
        self.world.query::<&B>().for_each(|x| sums[1] += x.0 as f64);
        self.world.query::<&C>().for_each(|x| sums[2] += x.0 as f64);
        self.world.query::<&D>().for_each(|x| sums[3] += x.0 as f64);
        self.world.query::<&E>().for_each(|x| sums[4] += x.0 as f64);
        sums
    }
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
        world.insert(entity, B(1.0)).expect("entity is alive");
    }
    for &entity in entities {
        world.remove::<B>(entity).expect("entity has a B");
    }
}

struct Inserter<'w> {
    world: &'w mut World,
    entity: Entity,
}

impl MarkerSink for Inserter<'_> {
    fn add<M: Marker>(&mut self, marker: M) {
        self.world.insert(self.entity, marker).expect("entity is alive");
    }
}

/// The sparse query workload's world (see [`crate::sparse_layout`]).
pub fn sparse_world() -> World {
    let mut world = World::new();
    let per_archetype = crate::SPARSE_ENTITIES / crate::SPARSE_ARCHETYPES;
    for (hit, archetype) in crate::sparse_layout() {
        for i in 0..per_archetype {
            let (position, velocity) = mover(i);
            let entity = if hit { world.spawn((position, velocity)) } else { world.spawn((position,)) };
            markers::add_markers(archetype, &mut Inserter { world: &mut world, entity });
        }
    }
    world
}

/// A world of `n` archetypes with one entity each: entity `k` has
/// `(Position, Velocity)` and the markers of `k`.
pub fn many_archetypes_world(n: usize) -> World {
    let mut world = World::new();
    for k in 0..n {
        let entity = world.spawn(mover(k));
        markers::add_markers(k, &mut Inserter { world: &mut world, entity });
    }
    world
}

/// Builds the movement query over `world` and steps every entity once.
pub fn first_query(world: &mut World) {
    let mut query = QueryState::<(&mut Position, &Velocity)>::new(world);
    query.for_each_mut(world, |(mut position, velocity)| step(&mut position, velocity));
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
    Box::new(Steady::new(Movers::new(spawn_bodies(crate::N)), Movers::step))
}

/// Steps 10,000 bodies whose position and velocity track changes.
pub fn tracked_iter() -> Box<dyn Routine> {
    Box::new(Steady::new(TrackedMovers::new(spawn_tracked_bodies(crate::N)), TrackedMovers::step))
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

/// Inverts matrices of 1,000 bodies in batches of 64.
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

/// [`add_remove_all`] with `B` in sparse storage.
///
/// # Panics
/// If an entity is not alive or lost its `SparseB` in between.
pub fn add_remove_sparse_all(world: &mut World, entities: &[Entity]) {
    use crate::sparse_types::SparseB;
    for &entity in entities {
        world.insert(entity, SparseB(1.0)).expect("entity is alive");
    }
    for &entity in entities {
        world.remove::<SparseB>(entity).expect("entity has a SparseB");
    }
}

/// add_remove with `B` in sparse storage.
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
            world.insert(entity, SparseBoost(boost)).expect("entity is alive");
        } else {
            world.insert(entity, Boost(boost)).expect("entity is alive");
        }
    }
    world
}

/// Moves the boosted movers of a table-boost world along x by their boost.
pub fn boost_table_step(
    world: &mut World,
    query: &mut QueryState<(&'static mut Position, &'static crate::sparse_types::Boost)>,
) {
    query.for_each_mut(world, |(mut position, boost)| position.0[0] += boost.0);
}

/// [`boost_table_step`] over a sparse-boost world.
pub fn boost_sparse_step(
    world: &mut World,
    query: &mut QueryState<(&'static mut Position, &'static crate::sparse_types::SparseBoost)>,
) {
    query.for_each_mut(world, |(mut position, boost)| position.0[0] += boost.0);
}

/// 10,000 movers, half boosted by a table component.
pub fn boost_iter() -> Box<dyn Routine> {
    let mut world = boosted_world(crate::N, false);
    let query = QueryState::new(&mut world);
    Box::new(Steady::new((world, query), |(world, query)| boost_table_step(world, query)))
}

/// 10,000 movers, half boosted by a sparse component.
pub fn sparse_boost_iter() -> Box<dyn Routine> {
    let mut world = boosted_world(crate::N, true);
    let query = QueryState::new(&mut world);
    Box::new(Steady::new((world, query), |(world, query)| boost_sparse_step(world, query)))
}
