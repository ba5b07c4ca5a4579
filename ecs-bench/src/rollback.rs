//! Rollback snapshots, one frame's worth: the save (a copy of the world
//! and its checksum) and the load of 10,000 entities of four components
//! (two `i32` pairs, a `u32` and a `String`), as a rollback layer does them
//! every frame.
//!
//! - archetable: `archetable-rollback`'s driver, `save_now` (a copy into
//!   the ring's slot with `World::clone_from` plus the checksum) and
//!   `load_frame`, each component registered with `component` (hashed with
//!   its `Hash`) and `copy_with_clone_from`, as its README shows. Nothing
//!   writes the world between the steps, so every column keeps its hash
//!   and no column is copied again: these rows are the cost of a frame
//!   that changed nothing, not of a copy. The bevy_ecs and floor rows copy
//!   everything whatever changed. The `rollback_speed` example of
//!   `archetable-rollback` measures a save and a load after a write to
//!   every value of one column.
//! - bevy_ecs, the way `bevy_ggrs` does it: every entity carries a rollback
//!   id; a save clones each registered component of each rolled-back entity
//!   into a new map from rollback id to value, one map per component, kept
//!   in a ring of 8 frames, and checksums each component as `bevy_ggrs`'s
//!   checksum plugin does (per entity, the entity's rollback order and the
//!   value's own hash, each through a fresh hasher, XORed together, then the
//!   parts XORed); a load looks each entity's value up in the frame's map
//!   and assigns it. The hasher is the same deterministic one archetable
//!   uses (`bevy_ggrs` uses SeaHash), so hashing costs the same on both.
//! - The floor: the same values cloned with `clone_from` into `Vec`s that
//!   keep their memory, one per component, and back: a copy, no checksum.

use std::collections::VecDeque;
use std::hash::{Hash, Hasher};

use archetable::rollback::{RollbackDriver, StableHasher};
use bevy_platform::collections::HashMap;

use crate::routine::{Routine, Steady};
use crate::Implementation;

/// Entities of the rollback workloads.
pub const ENTITIES: usize = 10_000;

/// Frames a `bevy_ggrs`-style ring keeps.
const DEPTH: usize = 8;

/// Whether a workload saves or loads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Step {
    /// Copy the world into a snapshot and checksum it.
    Save,
    /// Put a snapshot back.
    Load,
}

/// archetable's components.
mod ours_types {
    /// A position.
    #[derive(archetable::Component, Clone, Copy, Debug, PartialEq, Eq, Hash)]
    #[component(clone)]
    pub struct Position(pub i32, pub i32);

    /// A velocity.
    #[derive(archetable::Component, Clone, Copy, Debug, PartialEq, Eq, Hash)]
    #[component(clone)]
    pub struct Velocity(pub i32, pub i32);

    /// Hit points.
    #[derive(archetable::Component, Clone, Copy, Debug, PartialEq, Eq, Hash)]
    #[component(clone)]
    pub struct Health(pub u32);

    /// A name: a value that owns memory.
    #[derive(archetable::Component, Debug, PartialEq, Eq, Hash)]
    #[component(clone)]
    pub struct Name(pub String);

    // By hand, so that `clone_from` keeps the string's buffer.
    impl Clone for Name {
        fn clone(&self) -> Self {
            Name(self.0.clone())
        }

        fn clone_from(&mut self, source: &Self) {
            self.0.clone_from(&source.0);
        }
    }
}

/// bevy_ecs's components: the same types under bevy's derive.
mod bevy_types {
    /// A position.
    #[derive(bevy_ecs::component::Component, Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub struct Position(pub i32, pub i32);

    /// A velocity.
    #[derive(bevy_ecs::component::Component, Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub struct Velocity(pub i32, pub i32);

    /// Hit points.
    #[derive(bevy_ecs::component::Component, Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub struct Health(pub u32);

    /// A name.
    #[derive(bevy_ecs::component::Component, Debug, PartialEq, Eq, Hash)]
    pub struct Name(pub String);

    impl Clone for Name {
        fn clone(&self) -> Self {
            Name(self.0.clone())
        }

        fn clone_from(&mut self, source: &Self) {
            self.0.clone_from(&source.0);
        }
    }

    /// The id `bevy_ggrs` gives each rolled-back entity.
    #[derive(bevy_ecs::component::Component, Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub struct RollbackId(pub u32);
}

fn name(i: usize) -> String {
    format!("unit {i}")
}

/// The routine of `step` on `which`.
pub fn routine(which: Implementation, step: Step) -> Option<Box<dyn Routine>> {
    match which {
        Implementation::Ours => Some(ours(step)),
        Implementation::Bevy => Some(bevy(step)),
        Implementation::Raw => Some(raw(step)),
        Implementation::Hecs => None,
    }
}

/// archetable's driver over the 10,000 entities, saved once as frame 0.
pub fn ours_driver() -> RollbackDriver<u8> {
    use ours_types::*;
    let mut world = archetable::World::new();
    for i in 0..ENTITIES {
        let v = i as i32;
        world.spawn((Position(v, -v), Velocity(1, 2), Health(100), Name(name(i))));
    }
    let mut driver = RollbackDriver::new(world, archetable::Schedule::new(), 60);
    driver.component::<Position>().component::<Velocity>().component::<Health>().component::<Name>();
    driver
        .copy_with_clone_from::<Position>()
        .copy_with_clone_from::<Velocity>()
        .copy_with_clone_from::<Health>()
        .copy_with_clone_from::<Name>();
    driver.save_now().expect("every type rolls back");
    driver
}

fn ours(step: Step) -> Box<dyn Routine> {
    let driver = ours_driver();
    match step {
        Step::Save => Box::new(Steady::new(driver, |d: &mut RollbackDriver<u8>| {
            std::hint::black_box(d.save_now().expect("a save"));
        })),
        Step::Load => Box::new(Steady::new(driver, |d: &mut RollbackDriver<u8>| d.load_frame(0).expect("a load"))),
    }
}

/// One frame's snapshot of one component, as `bevy_ggrs` keeps it.
type Snapshot<C> = HashMap<bevy_types::RollbackId, C>;

/// A `bevy_ggrs`-style rollback layer over a bevy world.
pub struct BevyRollback {
    /// The world.
    pub world: bevy_ecs::world::World,
    /// Each rollback id's place in the order ids were handed out.
    order: HashMap<bevy_types::RollbackId, u64>,
    positions: VecDeque<Snapshot<bevy_types::Position>>,
    velocities: VecDeque<Snapshot<bevy_types::Velocity>>,
    healths: VecDeque<Snapshot<bevy_types::Health>>,
    names: VecDeque<Snapshot<bevy_types::Name>>,
}

/// Clones every `C` of a rolled-back entity into a new map, kept in `ring`
/// (the oldest dropped past [`DEPTH`]), and returns the component's
/// checksum part.
fn save_component<C: bevy_ecs::component::Component + Clone + Hash>(
    world: &mut bevy_ecs::world::World,
    order: &HashMap<bevy_types::RollbackId, u64>,
    ring: &mut VecDeque<Snapshot<C>>,
) -> u128 {
    let mut query = world.query::<(&bevy_types::RollbackId, &C)>();
    let snapshot: Snapshot<C> = query.iter(world).map(|(&id, value)| (id, value.clone())).collect();
    if ring.len() == DEPTH {
        ring.pop_front();
    }
    ring.push_back(snapshot);
    checksum_component::<C>(world, order)
}

/// `bevy_ggrs`'s checksum part of component `C`.
fn checksum_component<C: bevy_ecs::component::Component + Hash>(
    world: &mut bevy_ecs::world::World,
    order: &HashMap<bevy_types::RollbackId, u64>,
) -> u128 {
    let mut query = world.query::<(&bevy_types::RollbackId, &C)>();
    let mut result = 0u64;
    for (id, value) in query.iter(world) {
        let mut value_hasher = StableHasher::new();
        value.hash(&mut value_hasher);
        let mut hasher = StableHasher::new();
        order[id].hash(&mut hasher);
        value_hasher.finish().hash(&mut hasher);
        result ^= hasher.finish();
    }
    let mut hasher = StableHasher::new();
    result.hash(&mut hasher);
    u128::from(hasher.finish())
}

/// Puts every `C` of a rolled-back entity back from the newest snapshot.
fn load_component<C: bevy_ecs::component::Component<Mutability = bevy_ecs::component::Mutable> + Clone>(
    world: &mut bevy_ecs::world::World,
    ring: &VecDeque<Snapshot<C>>,
) {
    let snapshot = ring.back().expect("a saved frame");
    let mut query = world.query::<(&bevy_types::RollbackId, &mut C)>();
    for (id, mut value) in query.iter_mut(world) {
        if let Some(saved) = snapshot.get(id) {
            value.clone_from(saved);
        }
    }
}

impl BevyRollback {
    /// The 10,000 entities, each with a rollback id, saved once.
    pub fn new() -> Self {
        use bevy_types::*;
        let mut world = bevy_ecs::world::World::new();
        let mut order = HashMap::default();
        for i in 0..ENTITIES {
            let v = i as i32;
            world.spawn((RollbackId(i as u32), Position(v, -v), Velocity(1, 2), Health(100), Name(name(i))));
            order.insert(RollbackId(i as u32), i as u64);
        }
        let mut rollback = BevyRollback {
            world,
            order,
            positions: VecDeque::new(),
            velocities: VecDeque::new(),
            healths: VecDeque::new(),
            names: VecDeque::new(),
        };
        rollback.save();
        rollback
    }

    /// Saves every component and returns the frame's checksum.
    pub fn save(&mut self) -> u128 {
        let BevyRollback { world, order, positions, velocities, healths, names } = self;
        save_component(world, order, positions)
            ^ save_component(world, order, velocities)
            ^ save_component(world, order, healths)
            ^ save_component(world, order, names)
    }

    /// The checksum of the world as it is, saving nothing.
    pub fn checksum_only(&mut self) -> u128 {
        let BevyRollback { world, order, .. } = self;
        checksum_component::<bevy_types::Position>(world, order)
            ^ checksum_component::<bevy_types::Velocity>(world, order)
            ^ checksum_component::<bevy_types::Health>(world, order)
            ^ checksum_component::<bevy_types::Name>(world, order)
    }

    /// Loads the newest saved frame.
    pub fn load(&mut self) {
        let BevyRollback { world, positions, velocities, healths, names, .. } = self;
        load_component(world, positions);
        load_component(world, velocities);
        load_component(world, healths);
        load_component(world, names);
    }
}

impl Default for BevyRollback {
    fn default() -> Self {
        BevyRollback::new()
    }
}

fn bevy(step: Step) -> Box<dyn Routine> {
    let rollback = BevyRollback::new();
    match step {
        Step::Save => Box::new(Steady::new(rollback, |r: &mut BevyRollback| {
            std::hint::black_box(r.save());
        })),
        Step::Load => Box::new(Steady::new(rollback, BevyRollback::load)),
    }
}

/// The floor's data: the live values and their copy, one `Vec` per
/// component.
#[derive(Default)]
pub struct Columns {
    positions: Vec<ours_types::Position>,
    velocities: Vec<ours_types::Velocity>,
    healths: Vec<ours_types::Health>,
    names: Vec<ours_types::Name>,
}

impl Columns {
    fn copy_from(&mut self, source: &Columns) {
        self.positions.clone_from(&source.positions);
        self.velocities.clone_from(&source.velocities);
        self.healths.clone_from(&source.healths);
        self.names.clone_from(&source.names);
    }
}

fn raw(step: Step) -> Box<dyn Routine> {
    use ours_types::*;
    let mut live = Columns::default();
    for i in 0..ENTITIES {
        let v = i as i32;
        live.positions.push(Position(v, -v));
        live.velocities.push(Velocity(1, 2));
        live.healths.push(Health(100));
        live.names.push(Name(name(i)));
    }
    let mut saved = Columns::default();
    saved.copy_from(&live);
    let state = (live, saved);
    match step {
        Step::Save => Box::new(Steady::new(state, |(live, saved): &mut (Columns, Columns)| saved.copy_from(live))),
        Step::Load => Box::new(Steady::new(state, |(live, saved): &mut (Columns, Columns)| live.copy_from(saved))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bevy_load_puts_the_saved_values_back_and_the_checksum_sees_a_change() {
        let mut rollback = BevyRollback::new();
        let saved = rollback.save();
        assert_eq!(rollback.save(), saved, "the same world, the same checksum");
        let mut query = rollback.world.query::<&mut bevy_types::Name>();
        for mut name in query.iter_mut(&mut rollback.world) {
            name.0.push('!');
        }
        let mut query = rollback.world.query::<&mut bevy_types::Position>();
        for mut position in query.iter_mut(&mut rollback.world) {
            position.0 += 1;
        }
        assert_ne!(rollback.checksum_only(), saved);
        rollback.load();
        assert_eq!(rollback.save(), saved);
        let mut query = rollback.world.query::<(&bevy_types::RollbackId, &bevy_types::Name)>();
        for (id, name) in query.iter(&rollback.world) {
            assert_eq!(name.0, super::name(id.0 as usize));
        }
    }

    #[test]
    fn ours_load_puts_the_saved_names_back() {
        let mut driver = ours_driver();
        let saved = driver.save_now().unwrap();
        for mut name in driver.world_mut().query_mut::<&mut ours_types::Name>() {
            name.0.push('!');
        }
        assert_ne!(driver.checksum(), saved);
        driver.load_frame(0).unwrap();
        assert_eq!(driver.checksum(), saved);
        let names: Vec<String> = driver.world().query::<&ours_types::Name>().map(|n| n.0.clone()).collect();
        assert_eq!(names, (0..ENTITIES).map(name).collect::<Vec<_>>());
    }
}
