//! Tests of the world's internal consistency, including when a component's
//! destructor panics in the middle of an operation.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use archetable_macros::{Bundle, Component};

use crate::{Entity, QueryState, World};

/// Counts its drops; panics in `drop` when `explode` is set.
#[derive(Component)]
struct Volatile {
    drops: Arc<AtomicUsize>,
    explode: bool,
    _heap: Vec<u8>,
}

impl Volatile {
    fn new(drops: &Arc<AtomicUsize>, explode: bool) -> Self {
        Volatile { drops: drops.clone(), explode, _heap: vec![1, 2, 3] }
    }
}

impl Drop for Volatile {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
        if self.explode && !std::thread::panicking() {
            panic!("destructor panicked");
        }
    }
}

#[derive(Component, Debug, PartialEq)]
struct Tag(u32);

#[derive(Component)]
struct Other(String);

#[derive(Bundle)]
struct Pair {
    tag: Tag,
    other: Other,
}

fn quiet<R>(f: impl FnOnce() -> R) -> std::thread::Result<R> {
    catch_unwind(AssertUnwindSafe(f))
}

#[test]
fn derives_work_inside_the_engine_crate() {
    let mut world = World::new();
    let e = world.spawn(Pair { tag: Tag(4), other: Other("x".into()) });
    assert_eq!(world.get::<Tag>(e), Some(&Tag(4)));
    assert_eq!(world.get::<Other>(e).map(|o| o.0.as_str()), Some("x"));
}

#[test]
fn panicking_destructor_in_despawn_leaves_the_world_consistent() {
    let drops = Arc::new(AtomicUsize::new(0));
    let mut world = World::new();
    let victim = world.spawn((Volatile::new(&drops, true), Tag(0), Other("a".into())));
    let survivor = world.spawn((Volatile::new(&drops, false), Tag(1), Other("b".into())));
    assert!(quiet(|| world.despawn(victim)).is_err());
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    assert!(!world.contains(victim));
    assert_eq!(world.get::<Tag>(survivor), Some(&Tag(1)), "the moved entity's location was fixed first");
    world.check_invariants().unwrap();
    drop(world);
    assert_eq!(drops.load(Ordering::SeqCst), 2);
}

#[test]
fn panicking_destructor_in_overwrite_keeps_the_new_value() {
    let drops = Arc::new(AtomicUsize::new(0));
    let mut world = World::new();
    let e = world.spawn((Volatile::new(&drops, true), Tag(0)));
    let result = quiet(|| world.insert(e, (Volatile::new(&drops, false), Tag(9), Other("new".into()))));
    assert!(result.is_err());
    assert_eq!(drops.load(Ordering::SeqCst), 1, "only the old value was dropped");
    assert_eq!(world.get::<Tag>(e), Some(&Tag(9)));
    assert!(world.get::<Volatile>(e).is_some_and(|v| !v.explode));
    assert_eq!(world.get::<Other>(e).map(|o| o.0.as_str()), Some("new"));
    world.check_invariants().unwrap();
    drop(world);
    assert_eq!(drops.load(Ordering::SeqCst), 2);
}

#[test]
fn panicking_destructor_in_clear_still_drops_everything_else() {
    let drops = Arc::new(AtomicUsize::new(0));
    let mut world = World::new();
    let mut handles: Vec<Entity> = (0..10).map(|i| world.spawn((Volatile::new(&drops, i == 3), Tag(i)))).collect();
    handles.extend((0..5).map(|_| world.spawn((Volatile::new(&drops, false),))));
    assert!(quiet(|| world.clear()).is_err());
    assert_eq!(drops.load(Ordering::SeqCst), 15);
    assert!(world.is_empty());
    assert!(handles.iter().all(|&e| !world.contains(e)));
    world.check_invariants().unwrap();
    let mut tags = QueryState::<&Tag>::new(&mut world);
    assert_eq!(tags.iter(&world).count(), 0);
    let e = world.spawn((Volatile::new(&drops, false), Tag(42)));
    assert_eq!(tags.iter(&world).map(|t| t.0).collect::<Vec<_>>(), [42]);
    assert_eq!(world.get::<Tag>(e), Some(&Tag(42)));
}

#[test]
fn moves_between_archetypes_keep_rows_in_step() {
    let mut world = World::new();
    let entities: Vec<Entity> = (0..100).map(|i| world.spawn((Tag(i),))).collect();
    for (i, &e) in entities.iter().enumerate() {
        if i % 3 == 0 {
            world.insert(e, (Other(i.to_string()),)).unwrap();
        }
        if i % 5 == 0 {
            world.despawn(e).unwrap();
        }
        world.check_invariants().unwrap();
    }
    for (i, &e) in entities.iter().enumerate() {
        if i % 5 == 0 {
            assert!(!world.contains(e));
            continue;
        }
        assert_eq!(world.get::<Tag>(e), Some(&Tag(i as u32)));
        assert_eq!(world.get::<Other>(e).map(|o| o.0.clone()), (i % 3 == 0).then(|| i.to_string()));
    }
    for &e in entities.iter().skip(1).step_by(3) {
        if world.contains(e) && world.has::<Other>(e) {
            world.remove::<Other>(e).unwrap();
        }
    }
    world.check_invariants().unwrap();
    assert_eq!(world.len(), 80);
}
