//! `EntityBuilder::build` spawned through `World::spawn`, and `World::take`,
//! which moves an entity's components out type-erased so that another world
//! (whose component ids differ) spawns them. Every value is dropped once.

#![cfg(feature = "hierarchy")]

use std::sync::{Arc, Mutex};

use archetable::prelude::*;
use archetable::{BuiltBundle, EntityBuilder};

/// Records each drop by id, so a leak or a double drop shows.
#[derive(Clone, Default)]
struct Drops(Arc<Mutex<Vec<u32>>>);

impl Drops {
    fn take(&self) -> Vec<u32> {
        let mut v = std::mem::take(&mut *self.0.lock().unwrap());
        v.sort_unstable();
        v
    }
}

#[derive(Component)]
struct Tracked {
    id: u32,
    heap: String,
    drops: Drops,
}

impl Tracked {
    fn new(id: u32, drops: &Drops) -> Self {
        Tracked { id, heap: format!("value #{id}"), drops: drops.clone() }
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        assert_eq!(self.heap, format!("value #{}", self.id), "corrupted value");
        self.drops.0.lock().unwrap().push(self.id);
    }
}

#[derive(Component, Debug, PartialEq, Clone, Copy)]
#[component(track_changes)]
struct Hp(u32);

#[derive(Component, Debug, PartialEq)]
struct Name(String);

#[derive(Component, Debug, PartialEq)]
struct Marker;

#[derive(Component, Debug, PartialEq)]
#[repr(align(32))]
struct Aligned([u64; 3]);

#[derive(Component, Debug, PartialEq)]
struct Byte(u8);

#[test]
fn a_built_bundle_spawns_through_spawn() {
    let mut world = World::new();
    let mut builder = EntityBuilder::new();
    builder.add(Hp(3)).add(Name("ogre".into())).add(Marker);
    let built: BuiltBundle = builder.build();
    assert!(builder.is_empty());
    assert_eq!((built.len(), built.has::<Marker>(), built.get::<Hp>()), (3, true, Some(&Hp(3))));
    let e = world.spawn(built);
    assert_eq!(world.get::<Hp>(e), Some(&Hp(3)));
    assert_eq!(world.get::<Name>(e), Some(&Name("ogre".into())));
    assert!(world.has::<Marker>(e));
    let tables = world.archetypes().len();
    world.spawn((Marker, Hp(1), Name("x".into())));
    assert_eq!(world.archetypes().len(), tables, "the tuple joins the built entity's table");
    world.check_invariants().unwrap();
}

#[test]
fn take_moves_every_value_out_once_and_the_table_stays_whole() {
    let drops = Drops::default();
    let mut world = World::new();
    let handles: Vec<Entity> =
        (0..5).map(|i| world.spawn((Tracked::new(i, &drops), Hp(i), Name(format!("n{i}"))))).collect();
    let taken = world.take(handles[1]).unwrap();
    assert!(drops.take().is_empty(), "nothing dropped by the take");
    assert!(!world.contains(handles[1]));
    assert_eq!(world.take(handles[1]).err(), Some(EntityError::NoSuchEntity(handles[1])));
    world.check_invariants().unwrap();
    // The row filled by the last one kept its values.
    for (i, &e) in handles.iter().enumerate().filter(|&(i, _)| i != 1) {
        assert_eq!(world.get::<Tracked>(e).unwrap().id, i as u32);
        assert_eq!(world.get::<Name>(e), Some(&Name(format!("n{i}"))));
    }
    assert_eq!(taken.get::<Tracked>().unwrap().id, 1);
    assert_eq!(taken.get::<Name>(), Some(&Name("n1".into())));
    drop(taken);
    assert_eq!(drops.take(), [1]);
    let back = world.take(handles[3]).unwrap();
    let again = world.spawn(back);
    assert_eq!(world.get::<Tracked>(again).unwrap().id, 3);
    assert_eq!(world.get::<Hp>(again), Some(&Hp(3)));
    drop(world);
    assert_eq!(drops.take(), [0, 2, 3, 4]);
}

#[test]
fn taken_entities_spawn_into_a_world_with_other_component_ids() {
    let drops = Drops::default();
    let mut source = World::new();
    let e = source.spawn((Hp(9), Name("hero".into()), Marker, Aligned([1, 2, 3]), Byte(7), Tracked::new(5, &drops)));
    let mut target = World::new();
    // Other ids for the types the target has seen; Aligned, Byte and
    // Tracked it has never seen.
    target.spawn((Marker, Name("x".into())));
    target.register_component::<Hp>();
    assert_ne!(source.components().id::<Hp>(), target.components().id::<Hp>());
    assert_eq!(target.components().id::<Aligned>(), None);
    let taken = source.take(e).unwrap();
    assert!(source.is_empty());
    let moved = target.spawn(taken);
    assert_eq!(target.get::<Hp>(moved), Some(&Hp(9)));
    assert_eq!(target.get::<Name>(moved), Some(&Name("hero".into())));
    assert!(target.has::<Marker>(moved));
    assert_eq!(target.get::<Aligned>(moved), Some(&Aligned([1, 2, 3])));
    assert_eq!(target.get::<Aligned>(moved).map(|a| a as *const Aligned as usize % 32), Some(0));
    assert_eq!(target.get::<Byte>(moved), Some(&Byte(7)));
    assert_eq!(target.get::<Tracked>(moved).unwrap().id, 5);
    let mut added = QueryState::<Entity, Added<Hp>>::new(&mut target);
    assert_eq!(added.iter(&target).collect::<Vec<_>>(), [moved]);
    source.check_invariants().unwrap();
    target.check_invariants().unwrap();
    target.despawn(moved).unwrap();
    assert_eq!(drops.take(), [5]);
}

#[derive(Default)]
struct Log(Vec<String>);

fn logging_world() -> World {
    let mut world = World::new();
    world.init_resource::<Log>();
    world
        .register_component_hooks::<Hp>()
        .on_add(|w, e| w.resource_mut::<Log>().0.push(format!("add hp {e}")))
        .on_insert(|w, e| w.resource_mut::<Log>().0.push(format!("insert hp {e}")))
        .on_despawn(|w, e| w.resource_mut::<Log>().0.push(format!("despawn hp {e}")))
        .on_replace(|w, e| w.resource_mut::<Log>().0.push(format!("replace hp {e}")))
        .on_remove(|w, e| {
            let hp = w.get::<Hp>(e).unwrap().0;
            w.resource_mut::<Log>().0.push(format!("remove hp {e} = {hp}"))
        });
    world
}

#[test]
fn take_runs_the_despawn_hooks_and_spawn_the_spawn_hooks() {
    let mut source = logging_world();
    let e = source.spawn(Hp(4));
    source.track_removed::<Hp>();
    let mut target = logging_world();
    target.spawn(Marker);
    let taken = source.take(e).unwrap();
    assert_eq!(
        source.resource::<Log>().0,
        [
            format!("add hp {e}"),
            format!("insert hp {e}"),
            format!("despawn hp {e}"),
            format!("replace hp {e}"),
            format!("remove hp {e} = 4")
        ]
    );
    assert_eq!(source.removed::<Hp>().collect::<Vec<_>>(), [e]);
    let moved = target.spawn(taken);
    assert_eq!(target.resource::<Log>().0, [format!("add hp {moved}"), format!("insert hp {moved}")]);
}

#[test]
fn an_empty_entity_is_taken_as_an_empty_bundle() {
    let mut world = World::new();
    let e = world.spawn(());
    let taken = world.take(e).unwrap();
    assert!(taken.is_empty());
    let again = world.spawn(taken);
    assert!(world.contains(again));
    assert_eq!(world.len(), 1);
    world.check_invariants().unwrap();
}

#[test]
fn a_taken_bundle_goes_back_into_a_builder() {
    let mut world = World::new();
    let e = world.spawn((Hp(2), Name("a".into())));
    let mut builder = world.take(e).unwrap().into_builder();
    builder.add(Hp(5)).add(Marker);
    let f = world.spawn(builder.build());
    assert_eq!((world.get::<Hp>(f), world.has::<Marker>(f)), (Some(&Hp(5)), true));
    assert_eq!(world.get::<Name>(f), Some(&Name("a".into())));
}

/// The item lies in the inventory of the entity it names.
#[derive(Component, Debug, PartialEq)]
#[component(relationship(target = Inventory))]
struct InInventory(Entity);

/// The items in an entity's inventory; kept by the engine.
#[derive(Component, Debug)]
#[component(relationship_target(source = InInventory))]
struct Inventory(SourceList);

#[test]
fn relationship_lists_are_left_behind_and_sources_rechecked() {
    let mut source = World::new();
    let parent = source.spawn(Name("parent".into()));
    let child = source.spawn((Name("child".into()), ChildOf(parent)));
    let hero = source.spawn(Hp(1));
    let sword = source.spawn(InInventory(hero));
    let mut target = World::new();
    target.spawn(Marker);

    // A parent leaves its `Children` behind; its child is orphaned as by a despawn.
    let taken = source.take(parent).unwrap();
    assert!(!taken.has::<Children>());
    assert_eq!(taken.get::<Name>(), Some(&Name("parent".into())));
    assert!(!source.has::<ChildOf>(child));
    let moved = target.spawn(taken);
    assert!(!target.has::<Children>(moved));

    // A derived relationship target likewise.
    let taken = source.take(hero).unwrap();
    assert!(!taken.has::<Inventory>());
    assert!(!source.has::<InInventory>(sword));
    target.spawn(taken);

    // A source keeps its relationship, checked against the new world.
    let inner = source.spawn((Name("inner".into()), ChildOf(child)));
    let taken = source.take(inner).unwrap();
    assert_eq!(taken.get::<ChildOf>().map(|c| c.0), Some(child));
    assert!(source.children(child).is_empty());
    source.check_invariants().unwrap();
    target.check_invariants().unwrap();
}
