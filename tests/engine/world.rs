//! Integration tests of the `World` API: spawning, lookups, insertion, removal,
//! despawning, stale handles, errors and the `Entity` handle itself.

use std::any::type_name;
use std::collections::{BTreeSet, HashSet};
use std::mem::size_of;

use archetable::prelude::*;

#[derive(Component, Debug, Clone, Copy, PartialEq)]
struct Position {
    x: f32,
    y: f32,
}

#[derive(Component, Debug, Clone, Copy, PartialEq)]
struct Velocity {
    x: f32,
    y: f32,
}

#[derive(Component, Debug, Clone, PartialEq)]
struct Name(String);

#[derive(Component, Debug, Clone, Copy, PartialEq)]
struct Health(i32);

#[derive(Component, Debug, PartialEq)]
struct Frozen;

#[derive(Component, Debug, PartialEq)]
struct NeverSpawned(u8);

fn pos(x: f32, y: f32) -> Position {
    Position { x, y }
}

fn vel(x: f32, y: f32) -> Velocity {
    Velocity { x, y }
}

fn names_of(world: &World, e: Entity) -> BTreeSet<&'static str> {
    world.entity(e).expect("entity should be alive").component_names().collect()
}

// ---------------------------------------------------------------- static facts

const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<World>();
    assert_send_sync::<Entity>();
};

#[test]
fn world_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync + 'static>() {}
    assert_send_sync::<World>();

    // And it can actually be moved to another thread and shared between threads.
    let mut world = World::new();
    let e = world.spawn((Health(7),));
    let world = std::thread::spawn(move || {
        assert_eq!(world.get::<Health>(e), Some(&Health(7)));
        world
    })
    .join()
    .unwrap();
    let shared = std::sync::Arc::new(world);
    let handles: Vec<_> = (0..2)
        .map(|_| {
            let w = std::sync::Arc::clone(&shared);
            std::thread::spawn(move || w.get::<Health>(e).copied())
        })
        .collect();
    for h in handles {
        assert_eq!(h.join().unwrap(), Some(Health(7)));
    }
}

#[test]
fn entity_handle_is_eight_bytes_with_niche() {
    assert_eq!(size_of::<Entity>(), 8);
    assert_eq!(size_of::<Option<Entity>>(), 8);
}

#[test]
fn entity_is_copy_eq_ord_hash_debug_display() {
    fn assert_traits<T: Copy + Eq + Ord + std::hash::Hash + std::fmt::Debug + std::fmt::Display>() {}
    assert_traits::<Entity>();

    let mut world = World::new();
    let a = world.spawn((Health(1),));
    let b = world.spawn((Health(2),));
    let a_copy = a;
    assert_eq!(a, a_copy);
    assert_ne!(a, b);
    assert_ne!(a.index(), b.index());
    assert!(a.generation() >= 1, "generations are non-zero");
    assert_eq!(format!("{a}"), format!("{}v{}", a.index(), a.generation()));
    assert_eq!(b.to_string(), format!("{}v{}", b.index(), b.generation()));
    assert!(!format!("{a:?}").is_empty());

    let set: HashSet<Entity> = [a, b, a_copy].into_iter().collect();
    assert_eq!(set.len(), 2);
    let ordered: BTreeSet<Entity> = [b, a, b].into_iter().collect();
    assert_eq!(ordered.len(), 2);
}

#[test]
fn errors_implement_std_error() {
    fn assert_error<E: std::error::Error + Send + Sync + 'static>() {}
    assert_error::<EntityError>();
    assert_error::<ComponentError>();
    assert_error::<QueryEntityError>();
}

// ---------------------------------------------------------------- spawn & get

#[test]
fn new_world_is_empty() {
    let world = World::new();
    assert_eq!(world.len(), 0);
    assert!(world.is_empty());
    assert_eq!(world.query::<Entity>().count(), 0);
}

#[test]
fn spawn_tuple_and_get() {
    let mut world = World::new();
    let a = world.spawn((pos(1.0, 2.0), vel(3.0, 4.0)));
    let b = world.spawn((pos(5.0, 6.0),));
    assert_eq!(world.len(), 2);
    assert!(!world.is_empty());
    assert!(world.contains(a));
    assert!(world.contains(b));

    assert_eq!(world.get::<Position>(a), Some(&pos(1.0, 2.0)));
    assert_eq!(world.get::<Velocity>(a), Some(&vel(3.0, 4.0)));
    assert_eq!(world.get::<Position>(b), Some(&pos(5.0, 6.0)));
    assert_eq!(world.get::<Velocity>(b), None);
    assert!(world.has::<Position>(a));
    assert!(world.has::<Velocity>(a));
    assert!(world.has::<Position>(b));
    assert!(!world.has::<Velocity>(b));
}

#[test]
fn spawn_single_component_without_tuple() {
    let mut world = World::new();
    let e = world.spawn(Health(42));
    assert_eq!(world.get::<Health>(e), Some(&Health(42)));
    assert_eq!(names_of(&world, e), BTreeSet::from([type_name::<Health>()]));
}

#[test]
fn spawn_empty_bundle() {
    let mut world = World::new();
    let e = world.spawn(());
    assert!(world.contains(e));
    assert_eq!(world.len(), 1);
    assert_eq!(names_of(&world, e), BTreeSet::new());
    assert_eq!(world.query::<Entity>().collect::<Vec<_>>(), vec![e]);
    world.insert(e, (Health(3),)).unwrap();
    assert_eq!(world.get::<Health>(e), Some(&Health(3)));
    world.despawn(e).unwrap();
    assert!(world.is_empty());
}

#[test]
fn component_order_in_tuple_does_not_matter() {
    let mut world = World::new();
    let a = world.spawn((pos(1.0, 1.0), vel(2.0, 2.0), Health(3)));
    let b = world.spawn((Health(6), vel(5.0, 5.0), pos(4.0, 4.0)));
    assert_eq!(names_of(&world, a), names_of(&world, b));
    let mut seen: Vec<(Entity, Position, Velocity, Health)> =
        world.query::<(Entity, &Position, &Velocity, &Health)>().map(|(e, p, v, h)| (e, *p, *v, *h)).collect();
    seen.sort_by_key(|t| t.0);
    let mut expected = vec![(a, pos(1.0, 1.0), vel(2.0, 2.0), Health(3)), (b, pos(4.0, 4.0), vel(5.0, 5.0), Health(6))];
    expected.sort_by_key(|t| t.0);
    assert_eq!(seen, expected);
}

#[test]
fn spawn_fifteen_component_tuple() {
    macro_rules! fifteen {
        ($($n:ident = $v:expr),*) => {
            $( #[derive(Component, Debug, PartialEq)] struct $n(u64); )*
            let mut world = World::new();
            let e = world.spawn(($($n($v),)*));
            $( assert_eq!(world.get::<$n>(e), Some(&$n($v))); )*
            assert_eq!(names_of(&world, e).len(), 15);
            let n = world.query::<($(&$n,)*)>().count();
            assert_eq!(n, 1);
            let removed = world.remove::<($($n,)*)>(e).unwrap();
            let ($($n(_),)*) = removed;
            assert!(world.contains(e));
            assert_eq!(names_of(&world, e).len(), 0);
        };
    }
    fifteen!(
        F0 = 0,
        F1 = 1,
        F2 = 2,
        F3 = 3,
        F4 = 4,
        F5 = 5,
        F6 = 6,
        F7 = 7,
        F8 = 8,
        F9 = 9,
        F10 = 10,
        F11 = 11,
        F12 = 12,
        F13 = 13,
        F14 = 14
    );
}

#[test]
fn get_unknown_component_type_is_none() {
    let mut world = World::new();
    let e = world.spawn((Health(1),));
    assert_eq!(world.get::<NeverSpawned>(e), None);
    assert!(world.get_mut::<NeverSpawned>(e).is_none());
    assert!(!world.has::<NeverSpawned>(e));
    assert_eq!(world.query::<&NeverSpawned>().count(), 0);
    assert_eq!(world.query::<(Entity, Option<&NeverSpawned>)>().count(), 1);
}

#[test]
fn get_mut_writes_are_visible() {
    let mut world = World::new();
    let a = world.spawn((pos(1.0, 2.0), Name("a".into())));
    let b = world.spawn((pos(10.0, 20.0), Name("b".into())));
    {
        let mut p = world.get_mut::<Position>(a).unwrap();
        p.x += 100.0;
        p.y = -1.0;
    }
    world.get_mut::<Name>(b).unwrap().0.push_str("-renamed");
    *world.get_mut::<Name>(a).unwrap() = Name("alpha".into());

    assert_eq!(world.get::<Position>(a), Some(&pos(101.0, -1.0)));
    assert_eq!(world.get::<Position>(b), Some(&pos(10.0, 20.0)));
    assert_eq!(world.get::<Name>(a), Some(&Name("alpha".into())));
    assert_eq!(world.get::<Name>(b), Some(&Name("b-renamed".into())));
    let p = world.get_mut::<Position>(b).unwrap();
    assert_eq!(p.x, 10.0, "Mut derefs to the value");
    assert!(world.get_mut::<Velocity>(a).is_none());
}

// ---------------------------------------------------------------- insert

#[test]
fn insert_adds_new_components() {
    let mut world = World::new();
    let a = world.spawn((pos(1.0, 1.0),));
    let b = world.spawn((pos(2.0, 2.0),));
    assert_eq!(world.insert(a, (Frozen,)), Ok(()));
    assert_eq!(world.insert(a, (vel(3.0, 3.0), Health(9))), Ok(()));
    assert!(world.has::<Frozen>(a));
    assert_eq!(world.get::<Frozen>(a), Some(&Frozen));
    assert_eq!(world.get::<Position>(a), Some(&pos(1.0, 1.0)));
    assert_eq!(world.get::<Velocity>(a), Some(&vel(3.0, 3.0)));
    assert_eq!(world.get::<Health>(a), Some(&Health(9)));
    assert_eq!(
        names_of(&world, a),
        BTreeSet::from([
            type_name::<Position>(),
            type_name::<Velocity>(),
            type_name::<Health>(),
            type_name::<Frozen>(),
        ])
    );
    // b untouched
    assert_eq!(world.get::<Position>(b), Some(&pos(2.0, 2.0)));
    assert!(!world.has::<Frozen>(b));
    assert_eq!(names_of(&world, b), BTreeSet::from([type_name::<Position>()]));
    assert_eq!(world.len(), 2);
}

#[test]
fn insert_single_component_without_tuple() {
    let mut world = World::new();
    let e = world.spawn((pos(0.0, 0.0),));
    world.insert(e, Health(5)).unwrap();
    assert_eq!(world.get::<Health>(e), Some(&Health(5)));
}

#[test]
fn insert_overwrites_existing_value() {
    let mut world = World::new();
    let e = world.spawn((pos(1.0, 1.0), Name("old".into())));
    world.insert(e, (Name("new".into()),)).unwrap();
    assert_eq!(world.get::<Name>(e), Some(&Name("new".into())));
    assert_eq!(world.get::<Position>(e), Some(&pos(1.0, 1.0)));
    assert_eq!(names_of(&world, e), BTreeSet::from([type_name::<Position>(), type_name::<Name>()]));

    // Mixed: one overwritten, one new.
    world.insert(e, (pos(7.0, 7.0), Health(1))).unwrap();
    assert_eq!(world.get::<Position>(e), Some(&pos(7.0, 7.0)));
    assert_eq!(world.get::<Health>(e), Some(&Health(1)));
    assert_eq!(world.get::<Name>(e), Some(&Name("new".into())));
    assert_eq!(world.query::<&Position>().count(), 1);
}

#[test]
fn insert_keeps_other_entities_intact() {
    // Moving an entity out of a table swap-removes its row; the entity moved
    // into the hole must still be found with its own values.
    let mut world = World::new();
    let es: Vec<Entity> = (0..10).map(|i| world.spawn((pos(i as f32, 0.0), Health(i)))).collect();
    world.insert(es[0], (Frozen,)).unwrap();
    world.insert(es[4], (Frozen,)).unwrap();
    world.insert(es[9], (Frozen,)).unwrap();
    for (i, &e) in es.iter().enumerate() {
        assert_eq!(world.get::<Position>(e), Some(&pos(i as f32, 0.0)), "{i}");
        assert_eq!(world.get::<Health>(e), Some(&Health(i as i32)), "{i}");
        assert_eq!(world.has::<Frozen>(e), [0, 4, 9].contains(&i), "{i}");
    }
}

// ---------------------------------------------------------------- remove

#[test]
fn remove_returns_the_value() {
    let mut world = World::new();
    let e = world.spawn((pos(1.0, 2.0), vel(3.0, 4.0), Name("n".into())));
    assert_eq!(world.remove::<Velocity>(e), Ok(vel(3.0, 4.0)));
    assert!(!world.has::<Velocity>(e));
    assert_eq!(world.get::<Velocity>(e), None);
    assert_eq!(world.get::<Position>(e), Some(&pos(1.0, 2.0)));
    assert_eq!(world.get::<Name>(e), Some(&Name("n".into())));
    assert!(world.contains(e));

    let (p, n) = world.remove::<(Position, Name)>(e).unwrap();
    assert_eq!(p, pos(1.0, 2.0));
    assert_eq!(n, Name("n".into()));
    assert!(world.contains(e), "removing all components keeps the entity");
    assert_eq!(names_of(&world, e), BTreeSet::new());
    assert_eq!(world.len(), 1);
}

#[test]
fn remove_missing_component_names_it_and_leaves_entity_intact() {
    let mut world = World::new();
    let e = world.spawn((pos(1.0, 2.0), Health(3)));

    let err = world.remove::<Velocity>(e).unwrap_err();
    match err {
        ComponentError::MissingComponent { entity, component } => {
            assert_eq!(entity, e);
            assert_eq!(component, type_name::<Velocity>());
        }
        other => panic!("expected MissingComponent, got {other:?}"),
    }
    let msg = err.to_string();
    assert!(msg.contains("Velocity"), "message `{msg}` names the type");
    assert!(msg.contains(&e.to_string()), "message `{msg}` names {e}");

    assert_eq!(world.get::<Position>(e), Some(&pos(1.0, 2.0)));
    assert_eq!(world.get::<Health>(e), Some(&Health(3)));
    assert_eq!(names_of(&world, e), BTreeSet::from([type_name::<Position>(), type_name::<Health>()]));
}

#[test]
fn remove_tuple_with_one_missing_removes_nothing() {
    let mut world = World::new();
    let e = world.spawn((pos(1.0, 2.0), Health(3)));
    let err = world.remove::<(Position, Velocity)>(e).unwrap_err();
    assert_eq!(err, ComponentError::MissingComponent { entity: e, component: type_name::<Velocity>() });
    assert_eq!(world.get::<Position>(e), Some(&pos(1.0, 2.0)));
    assert_eq!(world.get::<Health>(e), Some(&Health(3)));
}

#[test]
fn remove_of_never_seen_type_is_missing_component() {
    let mut world = World::new();
    let e = world.spawn((Health(3),));
    assert_eq!(
        world.remove::<NeverSpawned>(e),
        Err(ComponentError::MissingComponent { entity: e, component: type_name::<NeverSpawned>() })
    );
    assert_eq!(world.get::<Health>(e), Some(&Health(3)));
}

#[test]
fn insert_remove_cycles_keep_values() {
    let mut world = World::new();
    let es: Vec<Entity> = (0..50).map(|i| world.spawn((pos(i as f32, -(i as f32)),))).collect();
    for round in 0..20 {
        for (i, &e) in es.iter().enumerate() {
            if (i + round) % 3 == 0 {
                world.insert(e, (Health(round as i32), Frozen)).unwrap();
            } else if world.has::<Health>(e) {
                assert!(world.remove::<Health>(e).is_ok());
                assert_eq!(world.remove::<Frozen>(e), Ok(Frozen));
            }
        }
        for (i, &e) in es.iter().enumerate() {
            assert_eq!(world.get::<Position>(e), Some(&pos(i as f32, -(i as f32))));
            let should = (i + round) % 3 == 0;
            assert_eq!(world.has::<Health>(e), should);
            assert_eq!(world.has::<Frozen>(e), should);
            if should {
                assert_eq!(world.get::<Health>(e), Some(&Health(round as i32)));
            }
        }
    }
}

// ---------------------------------------------------------------- despawn

#[test]
fn despawn_removes_entity() {
    let mut world = World::new();
    let a = world.spawn((pos(1.0, 1.0),));
    let b = world.spawn((pos(2.0, 2.0),));
    assert_eq!(world.despawn(a), Ok(()));
    assert_eq!(world.len(), 1);
    assert!(!world.contains(a));
    assert!(world.contains(b));
    assert_eq!(world.get::<Position>(b), Some(&pos(2.0, 2.0)));
    assert_eq!(world.despawn(a), Err(EntityError::NoSuchEntity(a)));
    assert_eq!(world.despawn(b), Ok(()));
    assert!(world.is_empty());
}

#[test]
fn despawned_index_is_reused_with_higher_generation() {
    let mut world = World::new();
    let a = world.spawn((pos(1.0, 1.0),));
    world.despawn(a).unwrap();
    let b = world.spawn((pos(2.0, 2.0),));
    assert_eq!(b.index(), a.index(), "the free index is reused");
    assert!(b.generation() > a.generation());
    assert_ne!(a, b);
}

/// Checks every API entry point with a stale handle `old` whose index is now
/// held by `new`, and that `new` is untouched afterwards.
fn assert_stale(world: &mut World, old: Entity, new: Entity) {
    assert_eq!(old.index(), new.index());
    assert!(new.generation() > old.generation());

    assert!(!world.contains(old));
    assert_eq!(world.get::<Position>(old), None);
    assert!(world.get_mut::<Position>(old).is_none());
    assert!(!world.has::<Position>(old));
    assert!(world.entity(old).is_none());
    assert_eq!(world.insert(old, (Health(666),)), Err(EntityError::NoSuchEntity(old)));
    assert_eq!(world.remove::<Position>(old), Err(ComponentError::NoSuchEntity(old)));
    assert_eq!(world.remove::<Velocity>(old), Err(ComponentError::NoSuchEntity(old)));
    assert_eq!(world.despawn(old), Err(EntityError::NoSuchEntity(old)));

    let mut state = QueryState::<&Position>::new(world);
    assert!(matches!(
        state.get(world, old),
        Err(QueryEntityError::NoSuchEntity(e)) if e == old
    ));
    assert!(matches!(
        state.get_mut(world, old),
        Err(QueryEntityError::NoSuchEntity(e)) if e == old
    ));
    let mut mstate = QueryState::<&mut Position>::new(world);
    assert!(matches!(
        mstate.get_mut(world, old),
        Err(QueryEntityError::NoSuchEntity(e)) if e == old
    ));

    // The new entity is untouched by all of the above.
    assert!(world.contains(new));
    assert!(!world.has::<Health>(new));
    assert_eq!(world.get::<Position>(new), Some(&pos(9.0, 9.0)));
    assert_eq!(state.get(world, new).ok(), Some(&pos(9.0, 9.0)));
    assert_eq!(world.entity(new).map(|r| r.id()), Some(new));
}

#[test]
fn stale_handle_is_never_aliased() {
    let mut world = World::new();
    let old = world.spawn((pos(1.0, 1.0), vel(1.0, 1.0)));
    world.despawn(old).unwrap();
    let new = world.spawn((pos(9.0, 9.0),));
    assert_stale(&mut world, old, new);
    assert_eq!(world.len(), 1);
}

#[test]
fn stale_handle_after_clear() {
    let mut world = World::new();
    let old = world.spawn((pos(1.0, 1.0),));
    world.clear();
    assert!(!world.contains(old));
    let new = world.spawn((pos(9.0, 9.0),));
    assert_stale(&mut world, old, new);
}

#[test]
fn many_generations_of_one_index() {
    let mut world = World::new();
    let keep = world.spawn((Health(-1),));
    let mut olds = Vec::new();
    let mut e = world.spawn((Health(0),));
    let index = e.index();
    for i in 1..=500 {
        world.despawn(e).unwrap();
        olds.push(e);
        e = world.spawn((Health(i),));
        assert_eq!(e.index(), index);
    }
    let generations: HashSet<u32> = olds.iter().map(|o| o.generation()).collect();
    assert_eq!(generations.len(), 500, "every generation is distinct");
    assert!(!generations.contains(&e.generation()));
    for &o in &olds {
        assert!(!world.contains(o));
        assert_eq!(world.get::<Health>(o), None);
    }
    assert_eq!(world.get::<Health>(e), Some(&Health(500)));
    assert_eq!(world.get::<Health>(keep), Some(&Health(-1)));
    assert_eq!(world.len(), 2);
}

#[test]
fn despawn_in_middle_keeps_other_rows() {
    let mut world = World::new();
    let es: Vec<Entity> = (0..20).map(|i| world.spawn((Health(i), Name(format!("e{i}"))))).collect();
    for &i in &[0usize, 7, 8, 19, 10] {
        world.despawn(es[i]).unwrap();
    }
    for (i, &e) in es.iter().enumerate() {
        if [0usize, 7, 8, 19, 10].contains(&i) {
            assert!(!world.contains(e));
        } else {
            assert_eq!(world.get::<Health>(e), Some(&Health(i as i32)));
            assert_eq!(world.get::<Name>(e), Some(&Name(format!("e{i}"))));
        }
    }
    assert_eq!(world.len(), 15);
}

// ---------------------------------------------------------------- clear

#[test]
fn clear_despawns_everything() {
    let mut world = World::new();
    let es: Vec<Entity> = (0..100)
        .map(|i| if i % 2 == 0 { world.spawn((Health(i),)) } else { world.spawn((Health(i), Frozen)) })
        .collect();
    world.clear();
    assert_eq!(world.len(), 0);
    assert!(world.is_empty());
    for &e in &es {
        assert!(!world.contains(e));
        assert_eq!(world.get::<Health>(e), None);
    }
    assert_eq!(world.query::<&Health>().count(), 0);
    assert_eq!(world.query::<Entity>().count(), 0);

    // The world is usable afterwards, and new handles differ from old ones.
    let fresh: Vec<Entity> = (0..100).map(|i| world.spawn((Health(i),))).collect();
    let old: HashSet<Entity> = es.iter().copied().collect();
    assert!(fresh.iter().all(|e| !old.contains(e)));
    assert_eq!(world.len(), 100);
    assert_eq!(world.query::<&Health>().map(|h| h.0).sum::<i32>(), (0..100).sum::<i32>());
}

#[test]
fn clear_empty_world_twice() {
    let mut world = World::new();
    world.clear();
    world.clear();
    assert!(world.is_empty());
}

// ---------------------------------------------------------------- entity()

#[test]
fn entity_ref_reads_components() {
    let mut world = World::new();
    let e = world.spawn((pos(1.0, 2.0), Frozen, Name("x".into())));
    let r = world.entity(e).unwrap();
    assert_eq!(r.id(), e);
    assert_eq!(r.get::<Position>(), Some(&pos(1.0, 2.0)));
    assert_eq!(r.get::<Name>(), Some(&Name("x".into())));
    assert_eq!(r.get::<Velocity>(), None);
    assert!(r.has::<Frozen>());
    assert!(!r.has::<Velocity>());
    assert!(!r.has::<NeverSpawned>());
    let names: BTreeSet<&'static str> = r.component_names().collect();
    assert_eq!(names, BTreeSet::from([type_name::<Position>(), type_name::<Frozen>(), type_name::<Name>(),]));
    assert_eq!(r.component_names().count(), 3);
}

// ---------------------------------------------------------------- errors

#[test]
fn error_display_names_entity_and_component() {
    let mut world = World::new();
    let e = world.spawn((Health(1),));
    world.despawn(e).unwrap();

    let err = world.despawn(e).unwrap_err();
    assert_eq!(err, EntityError::NoSuchEntity(e));
    let msg = err.to_string();
    assert!(msg.contains(&e.to_string()), "`{msg}` names {e}");

    let err = world.remove::<Health>(e).unwrap_err();
    assert_eq!(err, ComponentError::NoSuchEntity(e));
    assert!(err.to_string().contains(&e.to_string()));

    let alive = world.spawn((Health(1),));
    let err = world.remove::<Position>(alive).unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains(&alive.to_string()), "`{msg}` names {alive}");
    assert!(msg.contains(type_name::<Position>()), "`{msg}` names Position");

    let boxed: Box<dyn std::error::Error> = Box::new(err);
    assert_eq!(boxed.to_string(), msg);
}

// ---------------------------------------------------------------- spawn_batch

#[test]
fn spawn_batch_spawns_all_with_values() {
    let mut world = World::new();
    let before = world.spawn((Health(-1),));
    let many: Vec<Entity> = world.spawn_batch((0..10_000).map(|i| (pos(i as f32, 0.0), Health(i)))).collect();
    assert_eq!(many.len(), 10_000);
    assert_eq!(world.len(), 10_001);
    let distinct: HashSet<Entity> = many.iter().copied().collect();
    assert_eq!(distinct.len(), 10_000);
    assert!(!distinct.contains(&before));
    for (i, &e) in many.iter().enumerate() {
        assert!(world.contains(e));
        assert_eq!(world.get::<Health>(e), Some(&Health(i as i32)));
        assert_eq!(world.get::<Position>(e), Some(&pos(i as f32, 0.0)));
    }
    assert_eq!(world.query::<(&Position, &Health)>().count(), 10_000);
}

#[test]
fn spawn_batch_dropped_early_still_spawns_everything() {
    let mut world = World::new();
    let first: Vec<Entity> = world.spawn_batch((0..1000).map(|i| (Health(i),))).take(10).collect();
    assert_eq!(first.len(), 10);
    assert_eq!(world.len(), 1000);
    for (i, &e) in first.iter().enumerate() {
        assert_eq!(world.get::<Health>(e), Some(&Health(i as i32)));
    }
    let mut all: Vec<i32> = world.query::<&Health>().map(|h| h.0).collect();
    all.sort_unstable();
    assert_eq!(all, (0..1000).collect::<Vec<_>>());

    // Dropped without being polled at all.
    drop(world.spawn_batch((0..500).map(|i| (Health(i), Frozen))));
    assert_eq!(world.len(), 1500);
    assert_eq!(world.query::<(&Health, &Frozen)>().count(), 500);
}

#[test]
fn spawn_batch_empty_and_filtered_source() {
    let mut world = World::new();
    assert_eq!(world.spawn_batch(std::iter::empty::<(Health,)>()).count(), 0);
    assert!(world.is_empty());
    // A source without an exact size hint.
    let es: Vec<Entity> = world.spawn_batch((0..100).filter(|i| i % 3 == 0).map(|i| (Health(i),))).collect();
    assert_eq!(es.len(), 34);
    assert_eq!(world.len(), 34);
}

#[test]
fn spawn_batch_from_an_endless_source_reserves_only_what_it_takes() {
    // An endless range promises no length: nothing is reserved up front, and
    // `take` gives the batch an exact length.
    let mut world = World::new();
    let es: Vec<Entity> = world.spawn_batch((0..).map(|i| (Health(i),)).take(50)).collect();
    assert_eq!((es.len(), world.len()), (50, 50));
    world.check_invariants().unwrap();
}

#[test]
fn spawn_batch_whose_source_panics_keeps_what_it_spawned() {
    let mut world = World::new();
    let source = (0..10).map(|i| {
        assert!(i != 3, "bundle source failed");
        (Health(i),)
    });
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| world.spawn_batch(source).count()));
    assert!(result.is_err());
    // Entities 0, 1 and 2 were spawned; the source was not polled again while
    // unwinding.
    let mut spawned: Vec<i32> = world.query::<&Health>().map(|h| h.0).collect();
    spawned.sort_unstable();
    assert_eq!(spawned, [0, 1, 2]);
    world.check_invariants().unwrap();
}

#[test]
fn spawn_batch_reuses_freed_indices() {
    let mut world = World::new();
    let es: Vec<Entity> = world.spawn_batch((0..10).map(|i| (Health(i),))).collect();
    for &e in &es[..5] {
        world.despawn(e).unwrap();
    }
    let again: Vec<Entity> = world.spawn_batch((10..20).map(|i| (Health(i),))).collect();
    assert_eq!(world.len(), 15);
    let all: HashSet<Entity> = es[5..].iter().chain(&again).copied().collect();
    assert_eq!(all.len(), 15);
    for &e in &es[..5] {
        assert!(!world.contains(e));
    }
    for (i, &e) in again.iter().enumerate() {
        assert_eq!(world.get::<Health>(e), Some(&Health(10 + i as i32)));
    }
}

// ---------------------------------------------------------------- bundles

#[test]
#[should_panic(expected = "Health")]
fn duplicate_component_in_tuple_panics_at_spawn() {
    let mut world = World::new();
    world.spawn((Health(1), Health(2)));
}

#[test]
fn duplicate_component_in_tuple_panics_at_insert() {
    let mut world = World::new();
    let e = world.spawn((pos(0.0, 0.0),));
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = world.insert(e, (Health(1), pos(1.0, 1.0), Health(2)));
    }));
    let payload = r.expect_err("a bundle naming Health twice must panic");
    let msg = payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default();
    assert!(msg.contains("Health"), "panic message `{msg}` names Health");
}

#[test]
#[should_panic(expected = "Health")]
fn duplicate_component_in_remove_panics() {
    let mut world = World::new();
    let e = world.spawn((Health(1),));
    let _ = world.remove::<(Health, Health)>(e);
}

#[test]
#[should_panic(expected = "Health")]
fn duplicate_component_in_spawn_batch_panics() {
    let mut world = World::new();
    let _ = world.spawn_batch((0..3).map(|i| (Health(i), Frozen, Health(i)))).count();
}

#[test]
fn entity_bits_round_trip() {
    let mut world = World::new();
    let a = world.spawn(());
    world.despawn(a).unwrap();
    let b = world.spawn(());
    for e in [a, b] {
        assert_eq!(Entity::from_bits(e.to_bits()), Some(e));
    }
    assert_eq!(Entity::from_bits(0), None);
    assert_eq!(Entity::from_bits(u64::from(u32::MAX)), None);
}

/// One component of each size class a row move copies differently: none,
/// 1 to 3 bytes, 4 to 7, 8 to 15, 16 to 32, and above 32.
mod sizes {
    use archetable::prelude::*;

    #[derive(Component, Debug, Clone, Copy, PartialEq)]
    pub struct Zero;
    #[derive(Component, Debug, Clone, Copy, PartialEq)]
    pub struct Three(pub [u8; 3]);
    #[derive(Component, Debug, Clone, Copy, PartialEq)]
    pub struct Six(pub [u8; 6]);
    #[derive(Component, Debug, Clone, Copy, PartialEq)]
    pub struct Twelve(pub [u32; 3]);
    #[derive(Component, Debug, Clone, Copy, PartialEq)]
    pub struct Twenty(pub [u32; 5]);
    #[derive(Component, Debug, Clone, Copy, PartialEq)]
    pub struct Forty(pub [u64; 5]);
    #[derive(Component, Debug, Clone, PartialEq)]
    pub struct Owned(pub String);
    #[derive(Component, Debug, Clone, Copy, PartialEq)]
    pub struct Added(pub u16);
}

#[test]
fn a_row_move_keeps_every_value_of_the_moved_row_and_of_the_one_filling_its_place() {
    use sizes::*;
    let mut world = World::new();
    let value = |i: u8| {
        (
            Zero,
            Three([i; 3]),
            Six([i.wrapping_add(1); 6]),
            Twelve([u32::from(i) * 3; 3]),
            Twenty([u32::from(i) * 5; 5]),
            Forty([u64::from(i) * 7; 5]),
            Owned(format!("entity {i}")),
        )
    };
    let entities: Vec<Entity> = (0..5).map(|i| world.spawn(value(i))).collect();
    // From the middle (the last row fills the hole), then the last row.
    world.insert(entities[1], Added(1)).unwrap();
    world.insert(entities[3], Added(3)).unwrap();
    world.insert(entities[1], Added(10)).unwrap();
    for (i, &entity) in entities.iter().enumerate() {
        let i = i as u8;
        let (zero, three, six, twelve, twenty, forty, owned) = value(i);
        assert_eq!(world.get::<Zero>(entity), Some(&zero));
        assert_eq!(world.get::<Three>(entity), Some(&three));
        assert_eq!(world.get::<Six>(entity), Some(&six));
        assert_eq!(world.get::<Twelve>(entity), Some(&twelve));
        assert_eq!(world.get::<Twenty>(entity), Some(&twenty));
        assert_eq!(world.get::<Forty>(entity), Some(&forty));
        assert_eq!(world.get::<Owned>(entity), Some(&owned));
        let added = match i {
            1 => Some(Added(10)),
            3 => Some(Added(3)),
            _ => None,
        };
        assert_eq!(world.get::<Added>(entity).copied(), added);
    }
    // Back out of the wider table, from its first row.
    assert_eq!(world.remove::<Added>(entities[1]), Ok(Added(10)));
    assert_eq!(world.get::<Owned>(entities[1]), Some(&Owned("entity 1".into())));
    assert_eq!(world.get::<Forty>(entities[3]), Some(&Forty([21; 5])));
    assert_eq!(world.get::<Added>(entities[3]), Some(&Added(3)));
    world.check_invariants().unwrap();
}
