//! `#[component(clone)]`, `World::clone_entity` and `World::try_clone`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use archetable::prelude::*;
use archetable::{CloneError, Has};

#[derive(Component, Clone, Debug, PartialEq)]
#[component(clone, track_changes)]
struct Pos(i32);

#[derive(Component, Clone, Debug, PartialEq)]
#[component(clone)]
struct Name(String);

#[derive(Component, Clone, Debug, PartialEq)]
#[component(clone)]
struct Marker;

#[derive(Component, Debug)]
struct Socket(#[allow(dead_code)] u32);

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

#[test]
fn clone_entity_copies_every_component_into_a_new_entity() {
    let mut world = World::new();
    let a = world.spawn((Pos(1), Name("a".into()), Marker));
    let b = world.clone_entity(a).unwrap();
    assert_ne!(a, b);
    assert_eq!(world.get::<Pos>(b), Some(&Pos(1)));
    assert_eq!(world.get::<Name>(b), Some(&Name("a".into())));
    assert!(world.has::<Marker>(b));
    world.get_mut::<Name>(b).unwrap().0.push('!');
    assert_eq!(world.get::<Name>(a), Some(&Name("a".into())), "a deep copy");
    assert_eq!(world.len(), 2);
    world.check_invariants().unwrap();
}

#[test]
fn clone_entity_names_the_first_component_that_is_not_cloneable() {
    let mut world = World::new();
    let e = world.spawn((Pos(1), Socket(3)));
    let err = world.clone_entity(e).unwrap_err();
    assert_eq!(err, CloneError::NotCloneable { component: std::any::type_name::<Socket>() });
    assert_eq!(
        err.to_string(),
        format!(
            "component `{}` is not cloneable; add `#[component(clone)]` (and `Clone`) to its definition",
            std::any::type_name::<Socket>()
        )
    );
    assert_eq!(world.len(), 1, "nothing spawned");
    world.despawn(e).unwrap();
    assert_eq!(world.clone_entity(e), Err(CloneError::NoSuchEntity(e)));
}

#[test]
fn a_cloned_entity_is_added_now() {
    let mut world = World::new();
    let a = world.spawn(Pos(1));
    let mut added = QueryState::<Entity, Added<Pos>>::new(&mut world);
    assert_eq!(added.iter(&world).collect::<Vec<_>>(), [a]);
    let b = world.clone_entity(a).unwrap();
    assert_eq!(added.iter(&world).collect::<Vec<_>>(), [b]);
}

#[test]
fn clones_and_drops_balance() {
    let live = Arc::new(AtomicUsize::new(1));
    {
        let mut world = World::new();
        let e = world.spawn(Counted(live.clone()));
        world.clone_entity(e).unwrap();
        assert_eq!(live.load(Ordering::Relaxed), 2);
        let copy = world.try_clone().unwrap();
        assert_eq!(live.load(Ordering::Relaxed), 4);
        drop(copy);
        assert_eq!(live.load(Ordering::Relaxed), 2);
    }
    assert_eq!(live.load(Ordering::Relaxed), 0);
}

fn build() -> (World, Vec<Entity>) {
    let mut world = World::new();
    let mut e = Vec::new();
    for i in 0..50 {
        e.push(match i % 3 {
            0 => world.spawn(Pos(i)),
            1 => world.spawn((Pos(i), Name(format!("n{i}")))),
            _ => world.spawn((Marker, Name(format!("m{i}")))),
        });
    }
    for &gone in e.iter().step_by(7) {
        world.despawn(gone).unwrap();
    }
    world.advance_change_tick(10);
    for &x in e.iter().skip(1).step_by(5) {
        if let Some(mut p) = world.get_mut::<Pos>(x) {
            p.0 += 1000;
        }
    }
    (world, e)
}

fn contents(world: &World) -> Vec<(Entity, Option<Pos>, Option<String>, bool)> {
    let mut all: Vec<_> = world
        .query::<(Entity, Option<&Pos>, Option<&Name>, Has<Marker>)>()
        .map(|(e, p, n, m)| (e, p.cloned(), n.map(|n| n.0.clone()), m))
        .collect();
    all.sort_by_key(|r| r.0.index());
    all
}

#[test]
fn try_clone_keeps_handles_values_ticks_and_the_allocator() {
    let (mut world, e) = build();
    let mut copy = world.try_clone().unwrap();
    assert_ne!(copy.id(), world.id());
    copy.check_invariants().unwrap();
    assert_eq!(contents(&copy), contents(&world));
    assert_eq!(copy.len(), world.len());
    assert_eq!(copy.change_tick(), world.change_tick());
    for &x in &e {
        assert_eq!(copy.contains(x), world.contains(x));
        assert_eq!(copy.component_ticks::<Pos>(x), world.component_ticks::<Pos>(x));
    }
    assert_eq!(copy.allocator_state(), world.allocator_state());
    // The same later spawns get the same handles.
    for i in 0..10 {
        assert_eq!(copy.spawn(Pos(i)), world.spawn(Pos(i)));
    }
    // Change detection sees the same changes in both.
    let changed = |w: &mut World| {
        let mut q = QueryState::<Entity, Changed<Pos>>::new(w);
        let mut v: Vec<Entity> = q.iter(w).collect();
        v.sort();
        v
    };
    assert_eq!(changed(&mut copy), changed(&mut world));
}

#[test]
fn try_clone_is_independent_and_restores() {
    let (mut world, e) = build();
    let saved = world.try_clone().unwrap();
    let before = contents(&world);
    world.get_mut::<Pos>(e[1]).unwrap().0 = -1;
    world.despawn(e[2]).unwrap();
    world.spawn(Marker);
    assert_ne!(contents(&world), before);
    assert_eq!(contents(&saved), before);
    world = saved.try_clone().unwrap();
    assert_eq!(contents(&world), before);
    world.check_invariants().unwrap();
}

#[test]
fn try_clone_copies_pending_reservations() {
    let mut world = World::new();
    world.spawn(Pos(1));
    let reserved = world.reserve_entity();
    let mut copy = world.try_clone().unwrap();
    copy.flush();
    world.flush();
    assert!(copy.contains(reserved) && world.contains(reserved));
    assert_eq!(copy.allocator_state(), world.allocator_state());
}

#[test]
fn try_clone_refuses_a_world_holding_a_component_that_is_not_cloneable() {
    let mut world = World::new();
    world.spawn(Pos(1));
    let socket = world.spawn(Socket(1));
    assert_eq!(world.try_clone().unwrap_err(), CloneError::NotCloneable { component: std::any::type_name::<Socket>() });
    // Only components some entity holds count.
    world.despawn(socket).unwrap();
    assert_eq!(world.try_clone().unwrap().len(), 1);
}

#[test]
fn try_clone_leaves_resources_behind_but_for_time() {
    let mut world = World::new();
    world.insert_resource(5u32);
    let copy = world.try_clone().unwrap();
    assert!(!copy.contains_resource::<u32>());
    assert!(copy.contains_resource::<Time>());
}

#[test]
fn a_panicking_clone_leaves_both_worlds_sound() {
    #[derive(Component, Debug)]
    #[component(clone)]
    struct Fragile(u32);
    impl Clone for Fragile {
        fn clone(&self) -> Self {
            if self.0 == 3 {
                panic!("fragile");
            }
            Fragile(self.0)
        }
    }
    let mut world = World::new();
    for i in 0..6 {
        world.spawn((Fragile(i), Name(format!("{i}"))));
    }
    let e3 = world.query::<(Entity, &Fragile)>().find(|(_, f)| f.0 == 3).unwrap().0;
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| world.try_clone()));
    assert!(result.is_err());
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| world.clone_entity(e3)));
    assert!(result.is_err());
    assert_eq!(world.len(), 6);
    world.check_invariants().unwrap();
}
