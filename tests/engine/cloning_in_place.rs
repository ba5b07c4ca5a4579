//! `World::clone_from`: a world copied into another one in place, reusing
//! its memory, as rollback snapshots do every frame. The sample world is a
//! tree, so the module needs the hierarchy.

#![cfg(feature = "hierarchy")]

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use archetable::prelude::*;
use archetable::{ChildOf, Children, CloneError};

#[derive(Component, Clone, Debug, PartialEq)]
#[component(clone, track_changes)]
struct Pos(i32);

/// `derive(Clone)` does not forward `clone_from` to the fields (it
/// clones anew and drops the old value), so a type that should keep its
/// buffers says so by hand.
#[derive(Component, Debug, PartialEq)]
#[component(clone)]
struct Name(String);

impl Clone for Name {
    fn clone(&self) -> Self {
        Name(self.0.clone())
    }

    fn clone_from(&mut self, source: &Self) {
        self.0.clone_from(&source.0);
    }
}

#[derive(Component, Clone, Debug, PartialEq)]
#[component(clone)]
struct Marker;

#[derive(Component, Clone, Debug, PartialEq)]
#[component(clone, storage = "sparse")]
struct Shield(u32);

#[derive(Component, Debug)]
struct Socket(#[allow(dead_code)] u32);

#[derive(Debug, PartialEq)]
struct Score(u32);

/// Counts live values, to see clones and drops.
#[derive(Component, Debug)]
#[component(clone)]
struct Counted(Arc<AtomicUsize>);

impl Clone for Counted {
    fn clone(&self) -> Self {
        self.0.fetch_add(1, Ordering::Relaxed);
        Counted(self.0.clone())
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Panics when cloned while its flag is up.
#[derive(Component, Debug)]
#[component(clone)]
struct Fragile(Arc<std::sync::atomic::AtomicBool>);

impl Clone for Fragile {
    fn clone(&self) -> Self {
        assert!(!self.0.load(Ordering::Relaxed), "a fragile value broke");
        Fragile(self.0.clone())
    }
}

fn names(world: &World) -> Vec<(Entity, String)> {
    world.query::<(Entity, &Name)>().map(|(e, n)| (e, n.0.clone())).collect()
}

/// One entity as the tests compare it: handle, `Pos`, `Name`, `Marker`,
/// `Shield`.
type Row = (Entity, Option<i32>, Option<String>, bool, Option<u32>);

fn everything(world: &World) -> Vec<Row> {
    world
        .query::<Entity>()
        .map(|e| {
            (
                e,
                world.get::<Pos>(e).map(|p| p.0),
                world.get::<Name>(e).map(|n| n.0.clone()),
                world.has::<Marker>(e),
                world.get::<Shield>(e).map(|s| s.0),
            )
        })
        .collect()
}

/// A world of three tables, a sparse set and a small tree.
fn sample() -> (World, Vec<Entity>) {
    let mut world = World::new();
    world.register_clone_from::<Name>();
    world.register_clone_from::<Pos>();
    let mut entities = Vec::new();
    for i in 0..20 {
        let e = match i % 3 {
            0 => world.spawn((Pos(i), Name(format!("unit {i}")))),
            1 => world.spawn((Pos(i), Marker)),
            _ => world.spawn((Name(format!("rock {i}")), Marker)),
        };
        if i % 4 == 0 {
            world.insert(e, Shield(i as u32)).unwrap();
        }
        entities.push(e);
    }
    for &child in &entities[1..4] {
        world.insert(child, ChildOf(entities[0])).unwrap();
    }
    world.despawn(entities[7]).unwrap();
    world.despawn(entities[12]).unwrap();
    (world, entities)
}

#[test]
fn a_copy_in_place_has_the_same_entities_values_order_and_next_handles() {
    let (mut world, entities) = sample();
    let mut saved = World::new();
    let saved_id = saved.id();
    saved.clone_from(&world).unwrap();
    saved.check_invariants().unwrap();
    assert_eq!(saved.id(), saved_id, "the target keeps its id");
    assert_eq!(everything(&saved), everything(&world));
    assert_eq!(saved.len(), 18);
    let children: Vec<Entity> = saved.get::<Children>(entities[0]).unwrap().iter().copied().collect();
    assert_eq!(children, entities[1..4].to_vec());

    let before = everything(&world);
    let id = world.id();
    // The game goes on: edits, despawns, spawns, a new table, a new set.
    let frame = |world: &mut World| {
        world.get_mut::<Pos>(entities[0]).unwrap().0 = 99;
        world.get_mut::<Name>(entities[2]).unwrap().0.push_str(" (hit)");
        world.despawn(entities[5]).unwrap();
        world.remove::<Shield>(entities[4]).unwrap();
        let late = world.spawn((Pos(1), Name("late".into()), Marker));
        (late, world.spawn(Pos(2)))
    };
    let (late, next) = frame(&mut world);
    let after = everything(&world);

    // Roll back: the same world id, the state as saved.
    world.clone_from(&saved).unwrap();
    world.check_invariants().unwrap();
    assert_eq!(world.id(), id);
    assert_eq!(everything(&world), before);
    assert!(!world.contains(late) && !world.contains(next));
    assert_eq!(world.get::<Shield>(entities[4]), Some(&Shield(4)));
    // The frame played again hands out the same handles.
    assert_eq!(frame(&mut world), (late, next));
    assert_eq!(everything(&world), after);
    let mut again = World::new();
    again.clone_from(&saved).unwrap();
    assert_eq!(again.spawn(Pos(3)), saved.spawn(Pos(3)));
}

#[test]
fn strings_keep_their_buffers_and_the_source_its_values() {
    let (mut world, entities) = sample();
    let mut saved = World::new();
    saved.clone_from(&world).unwrap();
    let buffers: Vec<*const u8> = saved.query::<&Name>().map(|n| n.0.as_ptr()).collect();
    for (_, mut name) in world.query_mut::<(Entity, &mut Name)>() {
        name.0.replace_range(0..1, "R");
    }
    saved.clone_from(&world).unwrap();
    let after: Vec<*const u8> = saved.query::<&Name>().map(|n| n.0.as_ptr()).collect();
    assert_eq!(after, buffers, "clone_from reused every string's buffer");
    assert_eq!(names(&saved), names(&world));
    assert_eq!(saved.get::<Name>(entities[0]).unwrap().0, "Rnit 0");
}

#[test]
fn change_ticks_are_copied_with_the_values() {
    let (mut world, entities) = sample();
    world.advance_change_tick(3);
    world.get_mut::<Pos>(entities[3]).unwrap().0 += 1;
    let mut saved = World::new();
    saved.clone_from(&world).unwrap();
    assert_eq!(saved.change_tick(), world.change_tick());
    for &e in entities.iter().filter(|&&e| world.has::<Pos>(e)) {
        assert_eq!(saved.component_ticks::<Pos>(e), world.component_ticks::<Pos>(e));
        assert!(saved.component_ticks::<Pos>(e).is_some());
    }
}

#[test]
fn each_value_is_cloned_and_dropped_once() {
    let live = Arc::new(AtomicUsize::new(0));
    let mut world = World::new();
    for _ in 0..10 {
        world.spawn(Counted(live.clone()));
        live.fetch_add(1, Ordering::Relaxed);
    }
    let mut saved = World::new();
    saved.clone_from(&world).unwrap();
    assert_eq!(live.load(Ordering::Relaxed), 20);
    let gone: Vec<Entity> = world.query::<Entity>().take(4).collect();
    for e in gone {
        world.despawn(e).unwrap();
    }
    assert_eq!(live.load(Ordering::Relaxed), 16);
    saved.clone_from(&world).unwrap();
    assert_eq!(live.load(Ordering::Relaxed), 12);
    world.clone_from(&World::new()).unwrap();
    assert_eq!(live.load(Ordering::Relaxed), 6);
    assert!(world.is_empty());
    drop(saved);
    assert_eq!(live.load(Ordering::Relaxed), 0);
}

#[test]
fn worlds_whose_tables_disagree_are_copied_anew_keeping_the_resources() {
    let (world, _) = sample();
    let mut other = World::new();
    other.spawn(Shield(1));
    other.spawn((Marker, Pos(3)));
    other.insert_resource(Score(7));
    let id = other.id();
    other.clone_from(&world).unwrap();
    other.check_invariants().unwrap();
    assert_ne!(other.id(), id, "a copy anew is a new world for query states");
    assert_eq!(everything(&other), everything(&world));
    assert_eq!(other.get_resource::<Score>(), Some(&Score(7)));
}

#[test]
fn a_target_that_made_more_tables_since_keeps_them_empty() {
    let (mut world, entities) = sample();
    let mut saved = World::new();
    saved.clone_from(&world).unwrap();
    let tables = world.archetypes().len();
    let e = world.spawn((Pos(5), Shield(5), Socket(1)));
    assert!(world.archetypes().len() > tables);
    let id = world.id();
    world.clone_from(&saved).unwrap();
    world.check_invariants().unwrap();
    assert_eq!(world.id(), id);
    assert!(!world.contains(e));
    assert_eq!(everything(&world), everything(&saved));
    assert_eq!(world.get::<Pos>(entities[0]), Some(&Pos(0)));
}

#[test]
fn a_component_that_cannot_be_cloned_is_refused_and_nothing_changes() {
    let (mut world, _) = sample();
    world.spawn(Socket(1));
    let (mut target, _) = sample();
    target.spawn(Pos(-1));
    let before = everything(&target);
    let error = target.clone_from(&world).unwrap_err();
    assert_eq!(error, CloneError::NotCloneable { component: std::any::type_name::<Socket>() });
    assert_eq!(everything(&target), before);
}

#[test]
fn a_panicking_clone_leaves_the_target_empty_and_consistent() {
    let flag = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut world = World::new();
    for i in 0..5 {
        world.spawn((Pos(i), Fragile(flag.clone())));
    }
    let mut saved = World::new();
    saved.clone_from(&world).unwrap();
    let kept: Vec<Entity> = saved.query::<Entity>().collect();
    flag.store(true, Ordering::Relaxed);
    world.spawn((Pos(9), Fragile(flag.clone())));
    let panic = catch_unwind(AssertUnwindSafe(|| saved.clone_from(&world)));
    assert!(panic.is_err());
    saved.check_invariants().unwrap();
    assert!(saved.is_empty());
    assert!(kept.iter().all(|&e| !saved.contains(e)));
    flag.store(false, Ordering::Relaxed);
    saved.clone_from(&world).unwrap();
    assert_eq!(saved.len(), 6);
}
