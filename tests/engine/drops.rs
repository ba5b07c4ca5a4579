//! Every component value is dropped exactly once: on despawn, insert-overwrite,
//! clear, archetype moves, spawn_batch and when the world drops; a removed value
//! is returned to the caller, not dropped by the world.
//!
//! Each tracked value carries a unique id and a heap allocation; its `Drop`
//! records the id in a log shared by the test, so a leak (id missing), a double
//! drop (id twice) or a drop of the wrong value (wrong id) all show.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use archetable::prelude::*;

#[derive(Clone, Default)]
struct Log {
    dropped: Arc<Mutex<Vec<u64>>>,
    count: Arc<AtomicUsize>,
}

impl Log {
    fn tracker(&self, id: u64) -> Tracker {
        Tracker { id, heap: format!("value #{id}"), log: self.clone() }
    }

    fn count(&self) -> usize {
        self.count.load(Ordering::SeqCst)
    }

    /// The ids dropped so far, sorted.
    fn dropped(&self) -> Vec<u64> {
        let mut v = self.dropped.lock().unwrap().clone();
        v.sort_unstable();
        v
    }
}

struct Tracker {
    id: u64,
    heap: String,
    log: Log,
}

impl Tracker {
    fn check(&self, id: u64) {
        assert_eq!(self.id, id);
        assert_eq!(self.heap, format!("value #{id}"));
    }
}

impl Drop for Tracker {
    fn drop(&mut self) {
        assert_eq!(self.heap, format!("value #{}", self.id), "corrupted value");
        self.log.count.fetch_add(1, Ordering::SeqCst);
        self.log.dropped.lock().unwrap().push(self.id);
    }
}

#[derive(Component)]
struct A(Tracker);

#[derive(Component)]
struct B(Tracker);

#[derive(Component)]
struct C {
    t: Tracker,
    extra: Vec<u64>,
}

#[derive(Component)]
struct Marker;

#[derive(Component, Debug, PartialEq)]
struct Plain(u32);

fn ids(range: std::ops::Range<u64>) -> Vec<u64> {
    range.collect()
}

#[test]
fn world_drop_drops_every_component_once() {
    let log = Log::default();
    {
        let mut world = World::new();
        for i in 0..100 {
            match i % 4 {
                0 => world.spawn((A(log.tracker(i)),)),
                1 => world.spawn((B(log.tracker(i)), Marker)),
                2 => world.spawn((A(log.tracker(i)), C { t: log.tracker(1000 + i), extra: vec![i; 3] })),
                _ => world.spawn((Plain(i as u32), B(log.tracker(i)))),
            };
        }
        assert_eq!(log.count(), 0);
        let mut seen = 0;
        for (a, c) in world.query::<(&A, &C)>() {
            c.t.check(1000 + a.0.id);
            assert_eq!(c.extra, vec![a.0.id; 3]);
            seen += 1;
        }
        assert_eq!(seen, 25);
    }
    let mut expected = ids(0..100);
    expected.extend((0..100).filter(|i| i % 4 == 2).map(|i| 1000 + i));
    expected.sort_unstable();
    assert_eq!(log.dropped(), expected);
}

#[test]
fn despawn_drops_components_once() {
    let log = Log::default();
    let mut world = World::new();
    let es: Vec<Entity> = (0..10).map(|i| world.spawn((A(log.tracker(i)), B(log.tracker(100 + i))))).collect();
    world.despawn(es[3]).unwrap();
    assert_eq!(log.dropped(), vec![3, 103]);
    world.despawn(es[0]).unwrap();
    world.despawn(es[9]).unwrap();
    assert_eq!(log.dropped(), vec![0, 3, 9, 100, 103, 109]);
    // A failed second despawn drops nothing.
    assert_eq!(world.despawn(es[3]), Err(EntityError::NoSuchEntity(es[3])));
    assert_eq!(log.count(), 6);
    // Remaining values are intact (swap-remove moved them, did not drop them).
    for (i, &e) in es.iter().enumerate() {
        if ![0, 3, 9].contains(&i) {
            world.get::<A>(e).unwrap().0.check(i as u64);
            world.get::<B>(e).unwrap().0.check(100 + i as u64);
        }
    }
    drop(world);
    let mut expected: Vec<u64> = ids(0..10);
    expected.extend(100..110);
    assert_eq!(log.dropped(), expected);
}

#[test]
fn remove_returns_value_without_dropping_it() {
    let log = Log::default();
    let mut world = World::new();
    let e = world.spawn((A(log.tracker(1)), B(log.tracker(2)), Marker));
    let other = world.spawn((A(log.tracker(3)), B(log.tracker(4)), Marker));

    let a = world.remove::<A>(e).unwrap();
    assert_eq!(log.count(), 0, "remove moves the value out");
    a.0.check(1);
    drop(a);
    assert_eq!(log.dropped(), vec![1]);

    let (b, m) = world.remove::<(B, Marker)>(e).unwrap();
    assert_eq!(log.count(), 1);
    b.0.check(2);
    let Marker = m;
    drop(b);
    assert_eq!(log.dropped(), vec![1, 2]);

    // Failed removes drop nothing and remove nothing.
    assert!(world.remove::<A>(e).is_err());
    assert!(world.remove::<(A, C)>(other).is_err());
    assert_eq!(log.count(), 2);
    world.get::<A>(other).unwrap().0.check(3);

    assert!(world.contains(e));
    drop(world);
    assert_eq!(log.dropped(), vec![1, 2, 3, 4]);
}

#[test]
fn insert_overwrite_drops_old_value_once() {
    let log = Log::default();
    let mut world = World::new();
    let e = world.spawn((A(log.tracker(1)), Plain(1)));
    world.insert(e, (A(log.tracker(2)),)).unwrap();
    assert_eq!(log.dropped(), vec![1]);
    world.get::<A>(e).unwrap().0.check(2);

    // Overwrite one, add another: only the overwritten one drops.
    world.insert(e, (A(log.tracker(3)), B(log.tracker(4)))).unwrap();
    assert_eq!(log.dropped(), vec![1, 2]);
    world.get::<A>(e).unwrap().0.check(3);
    world.get::<B>(e).unwrap().0.check(4);
    assert_eq!(world.get::<Plain>(e), Some(&Plain(1)));

    // Insert into a stale handle: the bundle passed in is dropped, nothing else.
    world.despawn(e).unwrap();
    assert_eq!(log.dropped(), vec![1, 2, 3, 4]);
    assert_eq!(world.insert(e, (A(log.tracker(5)),)), Err(EntityError::NoSuchEntity(e)));
    assert_eq!(log.dropped(), vec![1, 2, 3, 4, 5]);
    drop(world);
    assert_eq!(log.dropped(), vec![1, 2, 3, 4, 5]);
}

#[test]
fn assigning_through_get_mut_drops_old_value() {
    let log = Log::default();
    let mut world = World::new();
    let e = world.spawn((A(log.tracker(1)),));
    *world.get_mut::<A>(e).unwrap() = A(log.tracker(2));
    assert_eq!(log.dropped(), vec![1]);
    drop(world);
    assert_eq!(log.dropped(), vec![1, 2]);
}

#[test]
fn archetype_moves_do_not_drop() {
    let log = Log::default();
    let mut world = World::new();
    let es: Vec<Entity> = (0..30).map(|i| world.spawn((A(log.tracker(i)), Plain(i as u32)))).collect();

    // Add a component to some (moves them to a new table).
    for (i, &e) in es.iter().enumerate() {
        if i % 2 == 0 {
            world.insert(e, (B(log.tracker(100 + i as u64)),)).unwrap();
        }
        if i % 3 == 0 {
            world.insert(e, (Marker,)).unwrap();
        }
    }
    assert_eq!(log.count(), 0, "moving rows must not drop values");

    // Remove another component (moves them again).
    for (i, &e) in es.iter().enumerate() {
        if i % 5 == 0 {
            assert_eq!(world.remove::<Plain>(e), Ok(Plain(i as u32)));
        }
    }
    assert_eq!(log.count(), 0);

    // Remove a tracked component from some: returned, then dropped by us.
    let mut taken = Vec::new();
    for (i, &e) in es.iter().enumerate() {
        if i % 4 == 0 {
            let b = world.remove::<B>(e).unwrap();
            b.0.check(100 + i as u64);
            taken.push(b);
        }
    }
    assert_eq!(log.count(), 0);
    drop(taken);
    let mut expected: Vec<u64> = (0..30).filter(|i| i % 4 == 0).map(|i| 100 + i).collect();
    assert_eq!(log.dropped(), expected);

    // All values still correct.
    for (i, &e) in es.iter().enumerate() {
        world.get::<A>(e).unwrap().0.check(i as u64);
        match world.get::<B>(e) {
            Some(b) => {
                assert!(i % 2 == 0 && i % 4 != 0);
                b.0.check(100 + i as u64);
            }
            None => assert!(i % 2 != 0 || i % 4 == 0),
        }
        assert_eq!(world.has::<Marker>(e), i % 3 == 0);
        assert_eq!(world.has::<Plain>(e), i % 5 != 0);
    }

    drop(world);
    expected.extend(0..30);
    expected.extend((0..30).filter(|i| i % 2 == 0 && i % 4 != 0).map(|i| 100 + i));
    expected.sort_unstable();
    assert_eq!(log.dropped(), expected);
}

#[test]
fn clear_drops_everything_once() {
    let log = Log::default();
    let mut world = World::new();
    for i in 0..50 {
        if i % 2 == 0 {
            world.spawn((A(log.tracker(i)),));
        } else {
            world.spawn((B(log.tracker(i)), C { t: log.tracker(100 + i), extra: vec![1, 2, 3] }));
        }
    }
    world.clear();
    let mut expected = ids(0..50);
    expected.extend((0..50).filter(|i| i % 2 == 1).map(|i| 100 + i));
    expected.sort_unstable();
    assert_eq!(log.dropped(), expected);

    // Spawning into the cleared (pooled) tables and dropping the world drops only the new ones.
    for i in 200..210 {
        world.spawn((A(log.tracker(i)),));
    }
    assert_eq!(log.dropped(), expected);
    world.clear();
    world.clear();
    expected.extend(200..210);
    assert_eq!(log.dropped(), expected);
    drop(world);
    assert_eq!(log.dropped(), expected);
}

#[test]
fn spawn_batch_drops_once() {
    let log = Log::default();
    let mut world = World::new();
    let got: Vec<Entity> = world.spawn_batch((0..100).map(|i| (A(log.tracker(i)), Marker))).take(5).collect();
    assert_eq!(got.len(), 5);
    assert_eq!(world.len(), 100);
    assert_eq!(log.count(), 0);
    let all: Vec<u64> = {
        let mut v: Vec<u64> = world.query::<&A>().map(|a| a.0.id).collect();
        v.sort_unstable();
        v
    };
    assert_eq!(all, ids(0..100));
    drop(world);
    assert_eq!(log.dropped(), ids(0..100));
}

#[test]
fn pooled_rows_are_reused_without_stale_drops() {
    // Despawn everything and respawn many times: only the values that existed
    // are ever dropped, each once.
    let log = Log::default();
    let mut world = World::new();
    let mut next = 0u64;
    let mut expected = Vec::new();
    for _round in 0..10 {
        let es: Vec<Entity> = (0..20)
            .map(|_| {
                next += 1;
                world.spawn((A(log.tracker(next)),))
            })
            .collect();
        for &e in es.iter().rev() {
            let id = world.get::<A>(e).unwrap().0.id;
            world.despawn(e).unwrap();
            expected.push(id);
        }
        expected.sort_unstable();
        assert_eq!(log.dropped(), expected);
    }
    drop(world);
    assert_eq!(log.dropped(), expected);
}

#[test]
fn query_mut_replacing_values_drops_old() {
    let log = Log::default();
    let mut world = World::new();
    for i in 0..10 {
        world.spawn((A(log.tracker(i)),));
    }
    for mut a in world.query_mut::<&mut A>() {
        let id = a.0.id;
        *a = A(log.tracker(100 + id));
    }
    assert_eq!(log.dropped(), ids(0..10));
    drop(world);
    let mut expected = ids(0..10);
    expected.extend(100..110);
    assert_eq!(log.dropped(), expected);
}

#[test]
fn panic_on_duplicate_bundle_does_not_double_drop() {
    let log = Log::default();
    let mut world = World::new();
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        world.spawn((A(log.tracker(1)), A(log.tracker(2))));
    }));
    assert!(r.is_err());
    // The values may leak (never observed) but must not be dropped twice.
    let dropped = log.dropped();
    assert!(dropped == Vec::<u64>::new() || dropped == vec![1, 2], "dropped {dropped:?}");
}

// ---------------------------------------------------------------- zero-sized values with Drop

static ZST_DROPS: AtomicUsize = AtomicUsize::new(0);

/// A zero-sized component whose destructor must still run once per value.
/// Only `zero_sized_components_are_dropped` uses it (the counter is global).
#[derive(Component)]
struct ZstDrop;

impl Drop for ZstDrop {
    fn drop(&mut self) {
        ZST_DROPS.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn zero_sized_components_are_dropped() {
    assert_eq!(std::mem::size_of::<ZstDrop>(), 0);
    let drops = || ZST_DROPS.load(Ordering::SeqCst);
    let mut world = World::new();
    let es: Vec<Entity> = (0..10).map(|i| world.spawn((ZstDrop, Plain(i)))).collect();
    assert_eq!(drops(), 0);
    world.despawn(es[0]).unwrap();
    assert_eq!(drops(), 1);
    world.insert(es[1], ZstDrop).unwrap(); // overwrite
    assert_eq!(drops(), 2);
    world.insert(es[2], Marker).unwrap(); // move
    assert_eq!(drops(), 2);
    let z = world.remove::<ZstDrop>(es[3]).unwrap();
    assert_eq!(drops(), 2);
    drop(z);
    assert_eq!(drops(), 3);
    let _: Vec<Entity> = world.spawn_batch((0..5).map(|_| (ZstDrop,))).collect();
    world.clear();
    assert_eq!(drops(), 3 + 8 + 5);
    world.spawn(ZstDrop);
    drop(world);
    assert_eq!(drops(), 17);
}

// ---------------------------------------------------------------- panicking destructors

/// Panics when dropped while `armed`.
#[derive(Component)]
struct Bomb {
    armed: bool,
}

impl Drop for Bomb {
    fn drop(&mut self) {
        if self.armed {
            self.armed = false;
            panic!("bomb destructor");
        }
    }
}

fn consistent(world: &World) {
    if let Err(e) = world.check_invariants() {
        panic!("world invariants broken: {e}");
    }
}

#[test]
fn panicking_destructor_in_despawn_drops_the_rest_once() {
    let log = Log::default();
    let mut world = World::new();
    let es: Vec<Entity> = (0..5).map(|i| world.spawn((Bomb { armed: i == 1 }, A(log.tracker(i))))).collect();
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| world.despawn(es[1])));
    assert!(r.is_err(), "the destructor's panic propagates");
    consistent(&world);
    assert_eq!(log.dropped(), vec![1], "the entity's other components are dropped");
    assert_eq!(world.len(), 4);
    assert!(!world.contains(es[1]));
    for (i, &e) in es.iter().enumerate() {
        if i != 1 {
            world.get::<A>(e).unwrap().0.check(i as u64);
        }
    }
    // The world keeps working.
    let f = world.spawn((Bomb { armed: false }, A(log.tracker(10))));
    world.despawn(es[4]).unwrap();
    assert_eq!(log.dropped(), vec![1, 4]);
    world.get::<A>(f).unwrap().0.check(10);
    consistent(&world);
    drop(world);
    assert_eq!(log.dropped(), vec![0, 1, 2, 3, 4, 10]);
}

#[test]
fn panicking_destructor_in_clear_drops_the_rest_once() {
    let log = Log::default();
    let mut world = World::new();
    for i in 0..6 {
        world.spawn((Bomb { armed: i == 2 }, A(log.tracker(i))));
    }
    for i in 6..9 {
        world.spawn((B(log.tracker(i)),));
    }
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| world.clear()));
    assert!(r.is_err());
    consistent(&world);
    assert_eq!(world.len(), 0);
    assert_eq!(log.dropped(), ids(0..9));
    world.spawn((Bomb { armed: false }, A(log.tracker(9))));
    drop(world);
    assert_eq!(log.dropped(), ids(0..10));
}

#[test]
fn panicking_destructor_in_overwrite_keeps_new_value() {
    let log = Log::default();
    let mut world = World::new();
    let e = world.spawn((Bomb { armed: true }, A(log.tracker(1))));
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        world.insert(e, (Bomb { armed: false }, A(log.tracker(2))))
    }));
    assert!(r.is_err());
    consistent(&world);
    assert!(world.contains(e));
    assert!(!world.get::<Bomb>(e).unwrap().armed, "the new value is stored");
    world.get::<A>(e).unwrap().0.check(2);
    // The old A is still dropped although the old Bomb's destructor panicked
    // before it; the new A is dropped with the world.
    assert_eq!(log.dropped(), ids(1..2));
    drop(world);
    assert_eq!(log.dropped(), ids(1..3));
}

#[test]
fn panicking_destructor_when_world_drops() {
    let log = Log::default();
    let mut world = World::new();
    for i in 0..4 {
        world.spawn((Bomb { armed: i == 0 }, A(log.tracker(i))));
    }
    world.spawn((B(log.tracker(4)),));
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || drop(world)));
    assert!(r.is_err());
    assert_eq!(log.dropped(), ids(0..5));
}

#[test]
fn panicking_destructor_in_an_insert_that_moves_the_entity() {
    let log = Log::default();
    let mut world = World::new();
    let e = world.spawn((Bomb { armed: true }, A(log.tracker(1))));
    let other = world.spawn((Bomb { armed: false }, A(log.tracker(2))));
    // The entity moves to (Bomb, A, B); Bomb and A are overwritten there.
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        world.insert(e, (Bomb { armed: false }, B(log.tracker(3)), A(log.tracker(4))))
    }));
    assert!(r.is_err());
    consistent(&world);
    assert!(!world.get::<Bomb>(e).unwrap().armed, "the new value is stored");
    world.get::<A>(e).unwrap().0.check(4);
    world.get::<B>(e).unwrap().0.check(3);
    world.get::<A>(other).unwrap().0.check(2);
    assert_eq!(log.dropped(), vec![1], "the old A is dropped although the old Bomb panicked");
    drop(world);
    assert_eq!(log.dropped(), ids(1..5));
}

#[test]
fn panic_inside_a_query_loop_leaves_the_world_whole() {
    let log = Log::default();
    let mut world = World::new();
    let es: Vec<Entity> = (0..10).map(|i| world.spawn((A(log.tracker(i)), Plain(i as u32)))).collect();
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        for (mut a, plain) in world.query_mut::<(&mut A, &Plain)>() {
            if plain.0 == 4 {
                panic!("query loop");
            }
            *a = A(log.tracker(100 + u64::from(plain.0)));
        }
    }));
    assert!(r.is_err());
    consistent(&world);
    // Rows are visited in spawn order here: 0..4 were replaced before the panic.
    assert_eq!(log.dropped(), ids(0..4));
    for (i, &e) in es.iter().enumerate() {
        let want = if i < 4 { 100 + i as u64 } else { i as u64 };
        world.get::<A>(e).unwrap().0.check(want);
    }
    // The world keeps working.
    world.despawn(es[0]).unwrap();
    assert_eq!(world.query::<&A>().count(), 9);
    drop(world);
    let mut expected = ids(0..10);
    expected.extend(100..104);
    assert_eq!(log.dropped(), expected);
}

#[test]
fn panic_while_building_a_bundle_mid_spawn_batch() {
    let log = Log::default();
    let mut world = World::new();
    let early = world.spawn((A(log.tracker(1000)), B(log.tracker(1001))));
    let source = (0..10).map(|i| {
        let a = A(log.tracker(i));
        if i == 6 {
            // `a` is built, `B` is not: the half-built bundle unwinds.
            panic!("bundle source failed");
        }
        (a, B(log.tracker(100 + i)))
    });
    let mut spawned = Vec::new();
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        for e in world.spawn_batch(source) {
            spawned.push(e);
        }
    }));
    assert!(r.is_err());
    consistent(&world);
    assert_eq!(log.dropped(), vec![6], "only the half-built bundle's value is dropped");
    assert_eq!(spawned.len(), 6);
    assert_eq!(world.len(), 7);
    for (i, &e) in spawned.iter().enumerate() {
        world.get::<A>(e).unwrap().0.check(i as u64);
        world.get::<B>(e).unwrap().0.check(100 + i as u64);
    }
    world.get::<A>(early).unwrap().0.check(1000);
    drop(world);
    let mut expected = ids(0..7);
    expected.extend(100..106);
    expected.extend([1000, 1001]);
    assert_eq!(log.dropped(), expected);
}
