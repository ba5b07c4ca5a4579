//! `EntityBuilder`: components chosen at run time, spawned or inserted in
//! one table move with the hooks of a tuple, every value dropped or pooled
//! exactly once.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use archetable::prelude::*;
use archetable::EntityBuilder;

#[derive(Component, Debug, PartialEq, Clone, Copy)]
struct A(u32);
#[derive(Component, Debug, PartialEq, Clone, Copy)]
struct B(u32);
#[derive(Component, Debug, PartialEq, Clone, Copy)]
struct Marker;
#[derive(Component, Debug, PartialEq, Clone, Copy)]
#[repr(align(64))]
struct Wide([u8; 3]);

/// Counts its drops.
#[derive(Component)]
struct Counted(Arc<AtomicUsize>);

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[derive(Component, Default, Debug)]
#[component(pooled)]
struct Trail(Vec<u32>);

impl Reset for Trail {
    fn reset(&mut self) {
        self.0.clear();
    }
}

type HookLog = Arc<Mutex<Vec<String>>>;

/// Hooks on `A` and `B` that record what they see of the entity: their
/// kind, their component, and whether the other component is there.
fn hooked_world() -> (World, HookLog) {
    let log: HookLog = Arc::default();
    let mut world = World::new();
    for (name, is_a) in [("A", true), ("B", false)] {
        let (add, insert, replace) = (log.clone(), log.clone(), log.clone());
        let seen = move |world: &HookWorld<'_>, e: Entity| {
            format!("a={:?} b={:?}", world.get::<A>(e).map(|a| a.0), world.get::<B>(e).map(|b| b.0))
        };
        let hooks = if is_a { world.register_component_hooks::<A>() } else { world.register_component_hooks::<B>() };
        hooks
            .on_add(move |w, e| add.lock().unwrap().push(format!("add {name}: {}", seen(w, e))))
            .on_insert(move |w, e| insert.lock().unwrap().push(format!("insert {name}: {}", seen(w, e))))
            .on_replace(move |w, e| replace.lock().unwrap().push(format!("replace {name}: {}", seen(w, e))));
    }
    (world, log)
}

#[test]
fn a_built_spawn_is_one_move_with_the_hooks_of_a_tuple() {
    let (mut tupled, tuple_log) = hooked_world();
    let t = tupled.spawn((B(2), A(1), Marker));
    let (mut built, built_log) = hooked_world();
    let mut builder = EntityBuilder::new();
    builder.add(B(2)).add(A(1)).add(Marker);
    assert_eq!((builder.len(), builder.get::<A>()), (3, Some(&A(1))));
    let e = built.spawn_built(&mut builder);
    assert!(builder.is_empty());

    let expected = ["add B: a=Some(1) b=Some(2)", "add A: a=Some(1) b=Some(2)", "insert B: a=Some(1) b=Some(2)"];
    assert_eq!(built_log.lock().unwrap()[..3], expected);
    assert_eq!(*built_log.lock().unwrap(), *tuple_log.lock().unwrap());
    assert_eq!(built_log.lock().unwrap().len(), 4);
    assert_eq!(built.query_one::<(&A, &B, &Marker)>(e).unwrap(), (&A(1), &B(2), &Marker));
    // One table besides the empty one: no intermediate tables were made.
    let tables = |w: &World| w.archetypes().as_slice().iter().filter(|a| !a.components().is_empty()).count();
    assert_eq!((tables(&built), tables(&tupled)), (1, 1));
    assert_eq!(tupled.query_one::<(&A, &B)>(t).unwrap(), (&A(1), &B(2)));
    built.check_invariants().unwrap();
}

#[test]
fn a_built_insert_adds_and_overwrites_with_the_hooks_of_insert() {
    let (mut world, log) = hooked_world();
    let e = world.spawn(A(1));
    log.lock().unwrap().clear();
    let mut builder = EntityBuilder::new();
    builder.add(A(10)).add(B(20));
    world.insert_built(e, &mut builder).unwrap();
    assert_eq!(
        *log.lock().unwrap(),
        [
            "replace A: a=Some(1) b=None",
            "add B: a=Some(10) b=Some(20)",
            "insert A: a=Some(10) b=Some(20)",
            "insert B: a=Some(10) b=Some(20)",
        ]
    );
    assert_eq!(world.query_one::<(&A, &B)>(e).unwrap(), (&A(10), &B(20)));

    // A dead entity: an error, and the builder keeps its values.
    world.despawn(e).unwrap();
    builder.add(A(5));
    assert_eq!(world.insert_built(e, &mut builder), Err(EntityError::NoSuchEntity(e)));
    assert_eq!(builder.get::<A>(), Some(&A(5)));
    world.check_invariants().unwrap();
}

#[test]
fn every_value_is_dropped_or_pooled_exactly_once() {
    let drops = Arc::new(AtomicUsize::new(0));
    let counted = || Counted(drops.clone());
    {
        // Replaced in the builder, dropped with the builder, cleared.
        let mut builder = EntityBuilder::new();
        builder.add(counted()).add(A(1));
        builder.add(counted());
        assert_eq!(drops.load(Ordering::SeqCst), 1);
        builder.clear();
        assert_eq!(drops.load(Ordering::SeqCst), 2);
        builder.add(counted());
    }
    assert_eq!(drops.load(Ordering::SeqCst), 3);

    let mut world = World::new();
    let mut builder = EntityBuilder::new();
    builder.add(counted()).add(Trail(vec![1, 2, 3]));
    let e = world.spawn_built(&mut builder);
    assert_eq!(drops.load(Ordering::SeqCst), 3, "moved into the world, not dropped");
    builder.add(counted()).add(Trail(vec![4]));
    world.insert_built(e, &mut builder).unwrap();
    assert_eq!(drops.load(Ordering::SeqCst), 4, "the overwritten value is dropped");
    assert_eq!(world.pool_len::<Trail>(), 1, "the overwritten pooled value is reset and kept");
    assert_eq!(world.get::<Trail>(e).unwrap().0, [4]);
    world.spawn_pooled::<Trail>(|t| assert!(t.0.is_empty() && t.0.capacity() >= 3));
    world.check_invariants().unwrap();
    drop(world);
    assert_eq!(drops.load(Ordering::SeqCst), 5);
}

#[test]
fn alignment_zero_sized_values_and_growth() {
    let mut world = World::new();
    let mut builder = EntityBuilder::new();
    for round in 0..50u32 {
        builder.add(Marker).add(A(round)).add(Wide([round as u8; 3])).add(B(round * 2));
        let e = world.spawn_built(&mut builder);
        let (a, wide, b, marker) = world.query_one::<(&A, &Wide, &B, &Marker)>(e).unwrap();
        assert_eq!((a, wide, b, marker), (&A(round), &Wide([round as u8; 3]), &B(round * 2), &Marker));
        assert_eq!(std::ptr::from_ref(wide) as usize % 64, 0);
    }
    assert_eq!(world.len(), 50);
    world.check_invariants().unwrap();
}
