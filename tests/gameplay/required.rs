//! Required components: `#[component(requires(..))]` adds the missing ones
//! on spawn and insert, transitively, in one table move.

#![cfg(all(feature = "serde", feature = "observers"))]

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};

use archetable::prelude::*;
use archetable::EntityBuilder;

#[derive(Component, Default, Debug, PartialEq)]
struct Transform(f32);

#[derive(Component, Debug, PartialEq)]
struct Velocity(f32);

impl Velocity {
    const ZERO: Velocity = Velocity(0.0);
}

#[derive(Component, Debug, PartialEq)]
#[component(requires(Transform, Velocity = Velocity::ZERO))]
struct Ship;

#[derive(Component, Default, Debug, PartialEq)]
struct Mass(u32);

/// Requires `Body`, which requires `Mass` and `Transform`.
#[derive(Component, Debug, PartialEq)]
#[component(requires(Body))]
struct Asteroid;

#[derive(Component, Default, Debug, PartialEq)]
#[component(requires(Mass = Mass(10), Transform = Transform(1.0)))]
struct Body;

/// Requires `Mass` directly, and through `Body` too: the nearest wins.
#[derive(Component, Debug, PartialEq)]
#[component(requires(Body, Mass = Mass(99)))]
struct Planet;

fn components_of(world: &World, entity: Entity) -> Vec<&'static str> {
    let mut names: Vec<&'static str> =
        world.entity(entity).unwrap().component_names().map(|n| n.rsplit("::").next().unwrap()).collect();
    names.sort_unstable();
    names
}

#[test]
fn spawning_adds_each_missing_required_component() {
    let mut world = World::new();
    let ship = world.spawn(Ship);
    assert_eq!(components_of(&world, ship), ["Ship", "Transform", "Velocity"]);
    assert_eq!(world.get::<Transform>(ship), Some(&Transform(0.0)));
    assert_eq!(world.get::<Velocity>(ship), Some(&Velocity(0.0)));
    world.check_invariants().unwrap();
}

#[test]
fn a_value_given_wins_over_the_default() {
    let mut world = World::new();
    let ship = world.spawn((Velocity(3.0), Ship));
    assert_eq!(components_of(&world, ship), ["Ship", "Transform", "Velocity"]);
    assert_eq!(world.get::<Velocity>(ship), Some(&Velocity(3.0)));
    assert_eq!(world.get::<Transform>(ship), Some(&Transform(0.0)));
}

#[test]
fn requirements_are_transitive_and_the_nearest_constructor_wins() {
    let mut world = World::new();
    let rock = world.spawn(Asteroid);
    assert_eq!(components_of(&world, rock), ["Asteroid", "Body", "Mass", "Transform"]);
    assert_eq!((world.get::<Mass>(rock), world.get::<Transform>(rock)), (Some(&Mass(10)), Some(&Transform(1.0))));

    let planet = world.spawn(Planet);
    assert_eq!(components_of(&world, planet), ["Body", "Mass", "Planet", "Transform"]);
    assert_eq!(world.get::<Mass>(planet), Some(&Mass(99)), "Planet names Mass itself; Body's is one step further");
    assert_eq!(world.get::<Transform>(planet), Some(&Transform(1.0)));
}

#[test]
fn a_spawn_with_requirements_is_one_table_move() {
    let mut world = World::new();
    assert_eq!(world.archetypes().len(), 1, "the empty archetype");
    world.spawn(Asteroid);
    assert_eq!(world.archetypes().len(), 2, "straight to (Asteroid, Body, Mass, Transform)");
    world.spawn(Asteroid);
    assert_eq!(world.archetypes().len(), 2);

    let e = world.spawn(Velocity(1.0));
    assert_eq!(world.archetypes().len(), 3);
    world.insert(e, Ship).unwrap();
    assert_eq!(world.archetypes().len(), 4, "(Velocity) to (Ship, Transform, Velocity), nothing between");
    world.check_invariants().unwrap();
}

#[test]
fn inserting_adds_only_what_the_entity_lacks() {
    let mut world = World::new();
    let e = world.spawn((Transform(5.0), Mass(1)));
    world.insert(e, Ship).unwrap();
    assert_eq!(components_of(&world, e), ["Mass", "Ship", "Transform", "Velocity"]);
    assert_eq!(world.get::<Transform>(e), Some(&Transform(5.0)), "kept, not reset");
    assert_eq!(world.get::<Velocity>(e), Some(&Velocity(0.0)));

    // Inserting again, with everything there, changes nothing else.
    world.insert(e, Ship).unwrap();
    assert_eq!(world.get::<Transform>(e), Some(&Transform(5.0)));

    // Removing the component leaves its requirements.
    world.remove::<Ship>(e).unwrap();
    assert_eq!(components_of(&world, e), ["Mass", "Transform", "Velocity"]);
    world.check_invariants().unwrap();
}

#[test]
fn every_way_to_spawn_or_insert_adds_requirements() {
    let mut world = World::new();
    let batch: Vec<Entity> = world.spawn_batch([Ship, Ship]).collect();

    let mut builder = EntityBuilder::new();
    builder.add(Asteroid);
    let built = world.spawn_built(&mut builder);
    let target = world.spawn(Mass(7));
    builder.add(Asteroid);
    world.insert_built(target, &mut builder).unwrap();

    let mut queue = CommandQueue::default();
    let commanded = Commands::new(&mut queue, &world).spawn(Ship).id();
    queue.apply(&mut world);

    for e in batch.into_iter().chain([commanded]) {
        assert_eq!(components_of(&world, e), ["Ship", "Transform", "Velocity"]);
    }
    assert_eq!(components_of(&world, built), ["Asteroid", "Body", "Mass", "Transform"]);
    assert_eq!(world.get::<Mass>(built), Some(&Mass(10)));
    assert_eq!(components_of(&world, target), ["Asteroid", "Body", "Mass", "Transform"]);
    assert_eq!(world.get::<Mass>(target), Some(&Mass(7)));
    world.check_invariants().unwrap();
}

#[derive(Default)]
struct Log(Vec<String>);

#[test]
fn hooks_and_observers_fire_for_required_components_after_the_bundles_own() {
    let mut world = World::new();
    world.init_resource::<Log>();
    fn hooks<T: Component>(world: &mut World, name: &'static str) {
        world
            .register_component_hooks::<T>()
            .on_add(move |w, _| w.resource_mut::<Log>().0.push(format!("add {name}")))
            .on_insert(move |w, _| w.resource_mut::<Log>().0.push(format!("insert {name}")));
    }
    hooks::<Ship>(&mut world, "Ship");
    hooks::<Transform>(&mut world, "Transform");
    hooks::<Velocity>(&mut world, "Velocity");
    world.observe(|_: Trigger<OnAdd<Velocity>>, mut log: ResMut<Log>| log.0.push("observer add Velocity".into()));

    world.spawn(Ship);
    assert_eq!(
        std::mem::take(&mut world.resource_mut::<Log>().0),
        [
            "add Ship",
            "add Transform",
            "add Velocity",
            "observer add Velocity",
            "insert Ship",
            "insert Transform",
            "insert Velocity",
        ]
    );

    // An insert fires nothing for the required components already there.
    let e = world.spawn(Transform(2.0));
    world.resource_mut::<Log>().0.clear();
    world.insert(e, Ship).unwrap();
    assert_eq!(
        std::mem::take(&mut world.resource_mut::<Log>().0),
        ["add Ship", "add Velocity", "observer add Velocity", "insert Ship", "insert Velocity"]
    );
}

#[derive(Component, Debug)]
#[component(requires(CycleB))]
struct CycleA;

#[derive(Component, Debug, Default)]
#[component(requires(CycleC))]
struct CycleB;

#[derive(Component, Debug, Default)]
#[component(requires(CycleB))]
struct CycleC;

#[derive(Component, Debug, Default)]
#[component(requires(SelfRequired))]
struct SelfRequired;

#[test]
fn a_cycle_of_requirements_panics_at_registration_naming_the_types() {
    let mut world = World::new();
    let before = world.components().len();
    let panic = catch_unwind(AssertUnwindSafe(|| world.spawn(CycleA))).unwrap_err();
    assert_eq!(
        panic.downcast_ref::<String>().map(String::as_str),
        Some(
            "required components form a cycle: `CycleB` requires `CycleC` requires `CycleB`; \
             `#[component(requires(..))]` cannot require a component that requires it back"
        )
    );
    assert_eq!(world.components().len(), before, "nothing registered");
    assert!(world.is_empty());

    let panic = catch_unwind(AssertUnwindSafe(|| world.register_component::<SelfRequired>())).unwrap_err();
    assert_eq!(
        panic.downcast_ref::<String>().map(String::as_str),
        Some(
            "required components form a cycle: `SelfRequired` requires `SelfRequired`; \
             `#[component(requires(..))]` cannot require a component that requires it back"
        )
    );
    world.check_invariants().unwrap();
}

static DROPS: AtomicUsize = AtomicUsize::new(0);

#[derive(Component, Debug)]
struct Counted(#[allow(dead_code)] Vec<u8>);

impl Default for Counted {
    fn default() -> Self {
        Counted(vec![1, 2, 3])
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        DROPS.fetch_add(1, Ordering::SeqCst);
    }
}

#[derive(Component, Debug)]
#[component(requires(Counted))]
struct NeedsCounted;

#[derive(Component, Debug)]
struct Fragile;

impl Default for Fragile {
    fn default() -> Self {
        panic!("no fragile today")
    }
}

#[derive(Component, Debug)]
#[component(requires(Counted, Fragile))]
struct NeedsFragile;

#[test]
fn required_values_are_dropped_once_and_a_panicking_constructor_changes_nothing() {
    let mut world = World::new();
    let e = world.spawn(NeedsCounted);
    let f = world.spawn(Mass(1));
    world.insert(f, NeedsCounted).unwrap();
    assert_eq!(DROPS.load(Ordering::SeqCst), 0);
    world.despawn(e).unwrap();
    world.despawn(f).unwrap();
    assert_eq!(DROPS.load(Ordering::SeqCst), 2);

    // `Counted` is built, then `Fragile`'s constructor panics: the counted
    // value is dropped and no entity or row is left behind.
    let panic = catch_unwind(AssertUnwindSafe(|| world.spawn(NeedsFragile))).unwrap_err();
    assert_eq!(panic.downcast_ref::<&str>(), Some(&"no fragile today"));
    assert_eq!(DROPS.load(Ordering::SeqCst), 3);
    assert!(world.is_empty());
    let g = world.spawn(Mass(2));
    let panic = catch_unwind(AssertUnwindSafe(|| world.insert(g, NeedsFragile))).unwrap_err();
    assert_eq!(panic.downcast_ref::<&str>(), Some(&"no fragile today"));
    assert_eq!(components_of(&world, g), ["Mass"]);
    assert_eq!(DROPS.load(Ordering::SeqCst), 4);

    // Through a builder: its values stay its own when a constructor panics.
    let mut builder = EntityBuilder::new();
    builder.add(Counted::default()).add(NeedsFragile);
    assert!(catch_unwind(AssertUnwindSafe(|| world.insert_built(g, &mut builder))).is_err());
    assert!(catch_unwind(AssertUnwindSafe(|| world.spawn_built(&mut builder))).is_err());
    assert_eq!((builder.len(), DROPS.load(Ordering::SeqCst)), (2, 4));
    drop(builder);
    assert_eq!(DROPS.load(Ordering::SeqCst), 5);
    assert_eq!(components_of(&world, g), ["Mass"]);
    assert_eq!(world.len(), 1);
    world.check_invariants().unwrap();
}

#[derive(Component, Default, Debug, PartialEq)]
#[component(track_changes)]
struct Tracked(u8);

#[derive(Component)]
#[component(requires(Tracked))]
struct WantsTracked;

#[test]
fn a_required_component_counts_as_added() {
    #[derive(Default)]
    struct Seen(Vec<Entity>);
    let mut world = World::new();
    world.init_resource::<Seen>();
    let mut schedule = Schedule::single_threaded();
    schedule.add_system(|added: Query<Entity, Added<Tracked>>, mut seen: ResMut<Seen>| seen.0.extend(added.iter()));
    schedule.run(&mut world);
    let e = world.spawn(WantsTracked);
    schedule.run(&mut world);
    schedule.run(&mut world);
    assert_eq!(world.resource::<Seen>().0, [e]);
}

/// A boat is moored at the entity it names.
#[derive(Component, Debug, PartialEq)]
#[component(relationship(target = Berths))]
struct MooredAt(Entity);

/// The boats moored at a harbour.
#[derive(Component, Debug)]
#[component(relationship_target(source = MooredAt))]
struct Berths(SourceList);

/// Every boat starts moored at the first entity of the world.
#[derive(Component, Debug)]
#[component(requires(MooredAt = MooredAt(Entity::from_bits(1 << 32).expect("index 0, generation 1"))))]
struct Boat;

#[test]
fn a_required_relationship_runs_its_engine_hooks_on_the_first_spawn_of_a_fresh_world() {
    let mut world = World::new();
    let harbour = world.spawn(());
    assert_eq!(harbour.to_bits(), 1 << 32);
    let boat = world.spawn(Boat);
    assert_eq!(world.get::<MooredAt>(boat), Some(&MooredAt(harbour)));
    assert_eq!(world.get::<Berths>(harbour).map(|b| b.0.to_vec()), Some(vec![boat]));
    world.check_invariants().unwrap();
}
