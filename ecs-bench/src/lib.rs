//! Benchmark workloads shared by the criterion benches and the memory
//! report: the component types, the functions that build worlds, and the raw
//! struct-of-arrays floors each workload is compared against.
//!
//! A *raw floor* does the same work with plain `Vec`s and no engine: the
//! fastest a workload can go with this data layout, so `ecs time / floor
//! time` is the price of the engine.

use ecs::{Component, Entity, World};

/// Entities per workload, unless a bench says otherwise.
pub const N: usize = 10_000;

/// A 4x4 matrix: the bulky component of the spawn workload (64 bytes).
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct Transform(pub [[f32; 4]; 4]);

/// A point in space (12 bytes).
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct Position(pub [f32; 3]);

/// An orientation as three angles (12 bytes).
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct Rotation(pub [f32; 3]);

/// Displacement per step (12 bytes).
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct Velocity(pub [f32; 3]);

/// The small component every entity of the add/remove workload has.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct A(pub f32);

/// The small component the add/remove workload inserts and removes.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct B(pub f32);

/// The four components of one entity of the spawn and iteration workloads.
pub type Body = (Transform, Position, Rotation, Velocity);

/// The components of entity number `i`: distinct, deterministic values.
#[inline]
pub fn body(i: usize) -> Body {
    let f = i as f32;
    let mut matrix = [[0.0; 4]; 4];
    for (k, row) in matrix.iter_mut().enumerate() {
        row[k] = 1.0;
    }
    (Transform(matrix), Position([f, f + 1.0, f + 2.0]), Rotation([0.0, 0.0, f]), Velocity([1.0, 0.5, 0.25]))
}

/// A fresh world with `n` bodies spawned one `spawn` call at a time.
pub fn spawn_loop(n: usize) -> World {
    let mut world = World::new();
    for i in 0..n {
        world.spawn(body(i));
    }
    world
}

/// A fresh world with `n` bodies spawned by one `spawn_batch` call, which
/// reserves room for all of them first.
pub fn spawn_batch(n: usize) -> World {
    let mut world = World::new();
    world.spawn_batch((0..n).map(body)).for_each(drop);
    world
}

/// The raw floor of the spawn and iteration workloads: one `Vec` per
/// component type (struct of arrays), row `i` holding entity `i`.
#[derive(Debug, Default)]
pub struct RawBodies {
    /// The `Transform` column.
    pub transforms: Vec<Transform>,
    /// The `Position` column.
    pub positions: Vec<Position>,
    /// The `Rotation` column.
    pub rotations: Vec<Rotation>,
    /// The `Velocity` column.
    pub velocities: Vec<Velocity>,
}

impl RawBodies {
    /// Pushes `n` bodies into empty `Vec`s, which grow by doubling as a
    /// fresh world's columns do.
    pub fn spawn(n: usize) -> Self {
        let mut raw = RawBodies::default();
        for i in 0..n {
            raw.push(body(i));
        }
        raw
    }

    /// Pushes `n` bodies into `Vec`s allocated at their final size, as
    /// `spawn_batch` allocates its columns.
    pub fn spawn_reserved(n: usize) -> Self {
        let mut raw = RawBodies {
            transforms: Vec::with_capacity(n),
            positions: Vec::with_capacity(n),
            rotations: Vec::with_capacity(n),
            velocities: Vec::with_capacity(n),
        };
        for i in 0..n {
            raw.push(body(i));
        }
        raw
    }

    #[inline]
    fn push(&mut self, (transform, position, rotation, velocity): Body) {
        self.transforms.push(transform);
        self.positions.push(position);
        self.rotations.push(rotation);
        self.velocities.push(velocity);
    }

    /// Number of bodies.
    pub fn len(&self) -> usize {
        self.positions.len()
    }

    /// Whether there are no bodies.
    pub fn is_empty(&self) -> bool {
        self.positions.is_empty()
    }
}

/// Adds `velocity` to `position`, component-wise: the iteration workload's
/// work per entity.
#[inline(always)]
pub fn step(position: &mut Position, velocity: &Velocity) {
    for (p, v) in position.0.iter_mut().zip(velocity.0) {
        *p += v;
    }
}

/// The iteration floor: [`step`] over two columns zipped.
#[inline]
pub fn raw_step_all(positions: &mut [Position], velocities: &[Velocity]) {
    for (position, velocity) in positions.iter_mut().zip(velocities) {
        step(position, velocity);
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

/// The raw floor of the add/remove workload, doing by hand what an
/// archetype engine does: two tables, `(A)` and `(A, B)`, each a struct of
/// arrays with the owner of every row, and a location per entity. Adding `B`
/// moves the entity's row from the first table to the second (swap-remove,
/// push) and fixes the location of the row moved into the hole; removing
/// moves it back.
#[derive(Debug)]
pub struct RawTables {
    /// Table `(A)`.
    only_a: RawTable,
    /// Table `(A, B)`; its `b` column is in step with `a`.
    with_b: RawTable,
    /// Per entity: whether it lives in `with_b`, and its row there.
    locations: Vec<(bool, u32)>,
}

#[derive(Debug, Default)]
struct RawTable {
    owners: Vec<u32>,
    a: Vec<A>,
    b: Vec<B>,
}

impl RawTables {
    /// `n` entities of `(A,)`, with the same values as [`add_remove_world`].
    pub fn new(n: usize) -> Self {
        let mut only_a = RawTable::default();
        for i in 0..n {
            only_a.owners.push(i as u32);
            only_a.a.push(A(i as f32));
        }
        RawTables { only_a, with_b: RawTable::default(), locations: (0..n as u32).map(|i| (false, i)).collect() }
    }

    /// Number of entities.
    pub fn len(&self) -> usize {
        self.locations.len()
    }

    /// Whether there are no entities.
    pub fn is_empty(&self) -> bool {
        self.locations.is_empty()
    }

    /// Inserts `B` into every entity, then removes it from each, in entity
    /// order like [`add_remove_all`].
    pub fn add_remove_all(&mut self) {
        for entity in 0..self.locations.len() {
            let (in_b, row) = self.locations[entity];
            debug_assert!(!in_b);
            let a = self.only_a.a.swap_remove(row as usize);
            self.only_a.owners.swap_remove(row as usize);
            if let Some(&moved) = self.only_a.owners.get(row as usize) {
                self.locations[moved as usize] = (false, row);
            }
            self.locations[entity] = (true, self.with_b.owners.len() as u32);
            self.with_b.owners.push(entity as u32);
            self.with_b.a.push(a);
            self.with_b.b.push(B(1.0));
        }
        for entity in 0..self.locations.len() {
            let (in_b, row) = self.locations[entity];
            debug_assert!(in_b);
            let a = self.with_b.a.swap_remove(row as usize);
            self.with_b.b.swap_remove(row as usize);
            self.with_b.owners.swap_remove(row as usize);
            if let Some(&moved) = self.with_b.owners.get(row as usize) {
                self.locations[moved as usize] = (true, row);
            }
            self.locations[entity] = (false, self.only_a.owners.len() as u32);
            self.only_a.owners.push(entity as u32);
            self.only_a.a.push(a);
        }
    }
}

/// The fragmented-iteration workload: 26 component types, `A` to `Z`, each
/// on 20 entities that also carry [`Data`](frag::Data), so `Data` is spread
/// over 26 small archetypes.
pub mod frag {
    use ecs::{Component, World};

    /// The value every fragmented entity carries.
    #[derive(Component, Clone, Copy, Debug, PartialEq)]
    pub struct Data(pub f32);

    /// Entities per archetype.
    pub const PER_ARCHETYPE: usize = 20;

    macro_rules! letters {
        ($($letter:ident)*) => {
            $(
                #[doc = concat!("Marker-like component `", stringify!($letter), "`: one archetype per letter.")]
                #[derive(Component, Clone, Copy, Debug, PartialEq)]
                pub struct $letter(pub f32);
            )*

            /// Number of letter components, and so of archetypes.
            pub const ARCHETYPES: usize = [$(stringify!($letter)),*].len();

            /// A world with [`PER_ARCHETYPE`] entities of `(letter, Data)` for
            /// each letter.
            pub fn world() -> World {
                let mut world = World::new();
                $(
                    world
                        .spawn_batch((0..PER_ARCHETYPE).map(|i| ($letter(0.0), Data(i as f32))))
                        .for_each(drop);
                )*
                world
            }
        };
    }

    letters!(A B C D E F G H I J K L M N O P Q R S T U V W X Y Z);

    /// The raw floor: one `Vec<Data>` per archetype.
    pub fn raw() -> Vec<Vec<Data>> {
        (0..ARCHETYPES).map(|_| (0..PER_ARCHETYPE).map(|i| Data(i as f32)).collect()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ecs::QueryState;

    #[test]
    fn spawn_paths_build_the_same_world_as_the_floor() {
        let raw = RawBodies::spawn(100);
        for mut world in [spawn_loop(100), spawn_batch(100)] {
            assert_eq!(world.len(), raw.len());
            let mut query = QueryState::<(&Transform, &Position, &Rotation, &Velocity)>::new(&mut world);
            let mut seen: Vec<_> = query.iter(&world).map(|(t, p, r, v)| (*t, *p, *r, *v)).collect();
            seen.sort_by(|a, b| a.1 .0[0].total_cmp(&b.1 .0[0]));
            for (i, body) in seen.into_iter().enumerate() {
                assert_eq!(body, (raw.transforms[i], raw.positions[i], raw.rotations[i], raw.velocities[i]));
            }
        }
    }

    #[test]
    fn step_moves_like_the_floor() {
        let mut world = spawn_batch(10);
        let mut raw = RawBodies::spawn_reserved(10);
        let mut query = QueryState::<(&mut Position, &Velocity)>::new(&mut world);
        for (mut position, velocity) in query.iter_mut(&mut world) {
            step(&mut position, velocity);
        }
        raw_step_all(&mut raw.positions, &raw.velocities);
        let mut positions: Vec<Position> = world.query::<&Position>().copied().collect();
        positions.sort_by(|a, b| a.0[0].total_cmp(&b.0[0]));
        assert_eq!(positions, raw.positions);
    }

    #[test]
    fn add_remove_leaves_every_entity_as_it_was() {
        let (mut world, entities) = add_remove_world(50);
        add_remove_all(&mut world, &entities);
        world.check_invariants().unwrap();
        for (i, &entity) in entities.iter().enumerate() {
            assert_eq!(world.get::<A>(entity), Some(&A(i as f32)));
            assert!(!world.has::<B>(entity));
        }
        let mut raw = RawTables::new(50);
        raw.add_remove_all();
        assert_eq!(raw.len(), 50);
        assert!(raw.with_b.owners.is_empty() && raw.only_a.owners.len() == 50);
        for (entity, &(in_b, row)) in raw.locations.iter().enumerate() {
            assert!(!in_b);
            assert_eq!(raw.only_a.owners[row as usize] as usize, entity);
            assert_eq!(raw.only_a.a[row as usize], A(entity as f32));
        }
    }

    #[test]
    fn fragmented_world_has_one_archetype_per_letter() {
        let mut world = frag::world();
        assert_eq!(world.len(), frag::ARCHETYPES * frag::PER_ARCHETYPE);
        let query = QueryState::<&frag::Data>::new(&mut world);
        assert_eq!(query.matched_archetypes(), frag::ARCHETYPES);
        assert_eq!(frag::raw().iter().map(Vec::len).sum::<usize>(), world.len());
    }
}
