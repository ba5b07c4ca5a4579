//! Component pools: values of `#[component(pooled)]` types that leave the
//! world (despawn, clear, overwriting insert, discarding remove) come back
//! reset from `spawn_pooled`, with their heap memory; caps and trimming bound
//! what is kept; panics in initializers, resets and destructors leak nothing
//! and drop nothing twice.

use std::collections::HashSet;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use archetable::prelude::*;

#[derive(Component, Default, Debug)]
#[component(pooled)]
struct Trail {
    points: Vec<[f32; 2]>,
}

impl Reset for Trail {
    fn reset(&mut self) {
        self.points.clear();
    }
}

impl Trail {
    fn with(n: usize) -> Self {
        Trail { points: (0..n).map(|i| [i as f32, 0.0]).collect() }
    }
}

/// Not pooled: always comes from `Default`.
#[derive(Component, Default, Debug, PartialEq)]
struct Particle {
    life: f32,
}

/// A pooled marker: zero bytes per value.
#[derive(Component, Default, Debug)]
#[component(pooled)]
struct Spark;

impl Reset for Spark {
    fn reset(&mut self) {}
}

/// What happened to the `Counted` values of one test.
#[derive(Default)]
struct Log {
    made: AtomicUsize,
    resets: AtomicUsize,
    dropped: Mutex<Vec<u32>>,
}

impl Log {
    fn new() -> Arc<Log> {
        Arc::new(Log::default())
    }

    fn counted(self: &Arc<Log>, id: u32) -> Counted {
        self.made.fetch_add(1, Ordering::SeqCst);
        Counted { log: Some(self.clone()), id, panic_on_reset: false, payload: vec![id; 4] }
    }

    fn exploding(self: &Arc<Log>, id: u32) -> Counted {
        let mut value = self.counted(id);
        value.panic_on_reset = true;
        value
    }

    fn made(&self) -> usize {
        self.made.load(Ordering::SeqCst)
    }

    fn resets(&self) -> usize {
        self.resets.load(Ordering::SeqCst)
    }

    /// The ids dropped so far, sorted.
    fn dropped(&self) -> Vec<u32> {
        let mut ids = self.dropped.lock().unwrap().clone();
        ids.sort_unstable();
        ids
    }
}

/// A pooled type that logs its resets and drops (a default one logs
/// nothing).
#[derive(Component, Default)]
#[component(pooled)]
struct Counted {
    log: Option<Arc<Log>>,
    id: u32,
    panic_on_reset: bool,
    payload: Vec<u32>,
}

impl Reset for Counted {
    fn reset(&mut self) {
        if let Some(log) = &self.log {
            log.resets.fetch_add(1, Ordering::SeqCst);
        }
        if self.panic_on_reset {
            panic!("reset of #{} panics", self.id);
        }
        self.payload.clear();
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        if let Some(log) = &self.log {
            log.dropped.lock().unwrap().push(self.id);
        }
    }
}

fn quiet<R>(f: impl FnOnce() -> R) -> std::thread::Result<R> {
    catch_unwind(AssertUnwindSafe(f))
}

#[test]
fn despawned_value_comes_back_reset_with_its_memory() {
    let mut world = World::new();
    let e = world.spawn((Particle { life: 1.0 }, Trail::with(20)));
    let (capacity, ptr) = {
        let trail = world.get::<Trail>(e).unwrap();
        (trail.points.capacity(), trail.points.as_ptr())
    };
    assert!(capacity >= 20);
    world.despawn(e).unwrap();
    assert_eq!(world.pool_len::<Trail>(), 1);
    assert_eq!(world.pool_len::<Particle>(), 0, "a type that is not pooled is dropped");

    let mut seen = None;
    let e = world.spawn_pooled::<(Particle, Trail)>(|(particle, trail)| {
        assert_eq!(*particle, Particle::default());
        seen = Some((trail.points.len(), trail.points.capacity(), trail.points.as_ptr()));
        particle.life = 3.0;
        trail.points.push([7.0, 8.0]);
    });
    assert_eq!(seen, Some((0, capacity, ptr)), "reset: empty, same capacity, same buffer");
    assert_eq!(world.pool_len::<Trail>(), 0);
    assert_eq!(world.get::<Particle>(e), Some(&Particle { life: 3.0 }));
    assert_eq!(world.get::<Trail>(e).unwrap().points, [[7.0, 8.0]]);
    assert_eq!(world.get::<Trail>(e).unwrap().points.as_ptr(), ptr);
    world.check_invariants().unwrap();
}

#[test]
fn empty_pool_and_unpooled_types_give_default() {
    let mut world = World::new();
    let mut capacities = Vec::new();
    let e = world.spawn_pooled::<(Trail, Particle)>(|(trail, particle)| {
        capacities.push(trail.points.capacity());
        assert_eq!(*particle, Particle::default());
    });
    assert_eq!(capacities, [0], "an empty pool hands out `Default`");
    assert_eq!(world.get::<Particle>(e), Some(&Particle { life: 0.0 }));
    assert_eq!(world.pool_len::<Trail>(), 0);

    // A single component, and the empty bundle.
    let one = world.spawn_pooled::<Particle>(|p| p.life = 2.0);
    assert_eq!(world.get::<Particle>(one), Some(&Particle { life: 2.0 }));
    let none = world.spawn_pooled::<()>(|()| {});
    assert!(world.contains(none));
    assert_eq!(world.len(), 3);

    assert_eq!(world.pool_cap::<Particle>(), 0);
    assert_eq!(world.pool_cap::<Trail>(), World::DEFAULT_POOL_CAP);
    assert_eq!(World::DEFAULT_POOL_CAP, 65_536);
    world.check_invariants().unwrap();
}

#[test]
fn values_are_reused_last_in_first_out() {
    let mut world = World::new();
    let es: Vec<Entity> = (1..=3).map(|n| world.spawn(Trail::with(n * 10))).collect();
    let ptrs: Vec<*const [f32; 2]> = es.iter().map(|&e| world.get::<Trail>(e).unwrap().points.as_ptr()).collect();
    for &e in &es {
        world.despawn(e).unwrap();
    }
    assert_eq!(world.pool_len::<Trail>(), 3);
    let mut reused = Vec::new();
    for _ in 0..4 {
        world.spawn_pooled::<Trail>(|t| reused.push((t.points.as_ptr(), t.points.capacity(), t.points.len())));
    }
    for (i, &(ptr, cap, len)) in reused[..3].iter().enumerate() {
        assert_eq!(ptr, ptrs[2 - i], "the last value in is the first out");
        assert_eq!((cap, len), ([30, 20, 10][i], 0));
    }
    assert_eq!(reused[3].1, 0, "the pool ran dry: a default value");
    assert_eq!(world.pool_len::<Trail>(), 0);
}

#[test]
fn clear_pools_every_value_of_every_table() {
    let mut world = World::new();
    for i in 0..10 {
        match i % 3 {
            0 => world.spawn(Trail::with(5)),
            1 => world.spawn((Trail::with(5), Particle { life: 1.0 }, Spark)),
            _ => world.spawn((Particle { life: 1.0 }, Spark)),
        };
    }
    world.clear();
    assert!(world.is_empty());
    assert_eq!(world.pool_len::<Trail>(), 7);
    assert_eq!(world.pool_len::<Spark>(), 6, "zero-sized pooled values are pooled too");
    assert_eq!(world.pool_len::<Particle>(), 0);
    world.check_invariants().unwrap();
    let mut ptrs = HashSet::new();
    for _ in 0..7 {
        world.spawn_pooled::<(Trail, Spark)>(|(t, _)| {
            assert!(t.points.is_empty() && t.points.capacity() >= 5);
            ptrs.insert(t.points.as_ptr());
        });
    }
    assert_eq!(ptrs.len(), 7, "seven distinct buffers");
    assert_eq!((world.pool_len::<Trail>(), world.pool_len::<Spark>()), (0, 0));
    world.check_invariants().unwrap();
}

#[test]
fn overwriting_insert_pools_the_replaced_value() {
    let mut world = World::new();
    let e = world.spawn(Trail::with(8));
    let old = world.get::<Trail>(e).unwrap().points.as_ptr();
    // In place: the entity keeps its table.
    world.insert(e, Trail::with(1)).unwrap();
    assert_eq!(world.pool_len::<Trail>(), 1);
    assert_eq!(world.get::<Trail>(e).unwrap().points.len(), 1);
    // Moving to a wider table while overwriting.
    world.insert(e, (Particle { life: 5.0 }, Trail::with(2))).unwrap();
    assert_eq!(world.pool_len::<Trail>(), 2);
    assert_eq!(world.get::<Trail>(e).unwrap().points.len(), 2);
    assert_eq!(world.get::<Particle>(e), Some(&Particle { life: 5.0 }));
    // Adding a component the entity lacks replaces nothing.
    world.insert(e, Spark).unwrap();
    assert_eq!((world.pool_len::<Trail>(), world.pool_len::<Spark>()), (2, 0));
    world.check_invariants().unwrap();
    // The newest pooled value is the one replaced last; the first one is under it.
    world.spawn_pooled::<Trail>(|t| assert_eq!(t.points.capacity(), 1));
    world.spawn_pooled::<Trail>(|t| assert_eq!(t.points.as_ptr(), old));
}

#[test]
fn discarding_remove_pools_and_returning_remove_does_not() {
    let mut world = World::new();
    let a = world.spawn((Particle { life: 1.0 }, Trail::with(3)));
    let b = world.spawn((Particle { life: 1.0 }, Trail::with(3), Spark));

    let returned: Trail = world.remove::<Trail>(a).unwrap();
    assert_eq!(returned.points.len(), 3, "`remove` hands the value back untouched");
    assert_eq!(world.pool_len::<Trail>(), 0);

    world.discard::<(Trail, Spark)>(b).unwrap();
    assert_eq!((world.pool_len::<Trail>(), world.pool_len::<Spark>()), (1, 1));
    assert!(!world.has::<Trail>(b) && world.has::<Particle>(b));
    assert!(matches!(world.discard::<Trail>(b), Err(ComponentError::MissingComponent { .. })));
    world.despawn(b).unwrap();
    assert!(matches!(world.discard::<Trail>(b), Err(ComponentError::NoSuchEntity(_))));
    assert_eq!(world.pool_len::<Trail>(), 1);

    // The command's `remove` discards.
    let c = world.spawn((Trail::with(2), Particle::default()));
    let mut queue = CommandQueue::default();
    Commands::new(&mut queue, &world).entity(c).remove::<Trail>();
    let report = queue.apply(&mut world);
    assert_eq!((report.applied(), report.skipped()), (1, 0));
    assert_eq!(world.pool_len::<Trail>(), 2);
    assert!(!world.has::<Trail>(c));
    world.check_invariants().unwrap();
}

#[test]
fn caps_bound_the_pools_and_trim_empties_them() {
    let log = Log::new();
    let mut world = World::new();
    world.set_pool_cap::<Counted>(3);
    assert_eq!(world.pool_cap::<Counted>(), 3);
    for id in 0..5 {
        world.spawn(log.counted(id));
    }
    world.clear();
    assert_eq!(world.pool_len::<Counted>(), 3);
    assert_eq!(log.dropped().len(), 2, "the two over the cap are dropped");
    assert_eq!(log.resets(), 3, "only the kept ones are reset");

    // A despawn into a full pool drops.
    let e = world.spawn(log.counted(5));
    world.despawn(e).unwrap();
    assert_eq!(world.pool_len::<Counted>(), 3);
    assert_eq!(log.dropped().len(), 3);
    assert!(log.dropped().contains(&5));

    // Lowering the cap drops the excess now; raising it keeps what is there.
    world.set_pool_cap::<Counted>(1);
    assert_eq!((world.pool_len::<Counted>(), world.pool_cap::<Counted>()), (1, 1));
    assert_eq!(log.dropped().len(), 5);
    world.set_pool_cap::<Counted>(10);
    assert_eq!(world.pool_len::<Counted>(), 1);

    // A zero cap pools nothing.
    world.set_pool_cap::<Trail>(0);
    let t = world.spawn(Trail::with(4));
    world.despawn(t).unwrap();
    assert_eq!(world.pool_len::<Trail>(), 0);

    world.trim_pools();
    assert_eq!(world.pool_len::<Counted>(), 0);
    assert_eq!(log.dropped(), [0, 1, 2, 3, 4, 5], "every value dropped once");
    assert_eq!(world.pool_cap::<Counted>(), 10, "trimming keeps the caps");
    world.spawn_pooled::<Counted>(|c| assert!(c.log.is_none(), "a trimmed pool gives `Default`"));
    world.check_invariants().unwrap();
}

#[test]
fn set_pool_cap_refuses_a_type_that_is_not_pooled() {
    let mut world = World::new();
    let err = quiet(|| world.set_pool_cap::<Particle>(4)).unwrap_err();
    let message = err.downcast_ref::<String>().unwrap();
    assert!(message.contains("Particle") && message.contains("#[component(pooled)]"), "{message}");
}

#[test]
fn every_value_is_dropped_exactly_once() {
    let log = Log::new();
    {
        let mut world = World::new();
        let es: Vec<Entity> = (0..40).map(|id| world.spawn((log.counted(id), Particle::default()))).collect();
        for &e in &es[..10] {
            world.despawn(e).unwrap();
        }
        for (i, &e) in es[10..20].iter().enumerate() {
            world.insert(e, log.counted(100 + i as u32)).unwrap();
        }
        for &e in &es[20..25] {
            world.discard::<Counted>(e).unwrap();
        }
        let kept: Counted = world.remove::<Counted>(es[25]).unwrap();
        assert_eq!(world.pool_len::<Counted>(), 25);
        assert_eq!(log.resets(), 25);
        assert!(log.dropped().is_empty(), "nothing dropped yet: pooled or still alive");
        // Take half back; every one is reset, with its id and buffer.
        let mut ids = Vec::new();
        for _ in 0..12 {
            world.spawn_pooled::<Counted>(|c| {
                assert!(c.payload.is_empty() && c.payload.capacity() >= 4);
                ids.push(c.id);
            });
        }
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), 12);
        drop(kept);
        world.clear();
        world.check_invariants().unwrap();
        assert_eq!(log.dropped(), [25]);
    }
    // Dropping the world drops what its pools hold.
    let mut expected: Vec<u32> = (0..40).chain(100..110).collect();
    expected.sort_unstable();
    assert_eq!(log.made(), 50);
    assert_eq!(log.dropped(), expected);
}

#[test]
fn a_panicking_initializer_drops_what_it_took_and_spawns_nothing() {
    let log = Log::new();
    let mut world = World::new();
    let es: Vec<Entity> = (0..2).map(|id| world.spawn((log.counted(id), Trail::with(3)))).collect();
    for e in es {
        world.despawn(e).unwrap();
    }
    assert_eq!((world.pool_len::<Counted>(), world.pool_len::<Trail>()), (2, 2));
    let before = world.len();
    let result = quiet(|| {
        world.spawn_pooled::<(Counted, Trail)>(|(c, _)| {
            c.payload.push(9);
            panic!("initializer fails");
        })
    });
    assert!(result.is_err());
    assert_eq!(world.len(), before, "no entity");
    assert_eq!(log.dropped(), [1], "the value taken (the last in) is dropped once");
    assert_eq!((world.pool_len::<Counted>(), world.pool_len::<Trail>()), (1, 1));
    world.check_invariants().unwrap();
    drop(world);
    assert_eq!(log.dropped(), [0, 1]);
}

#[test]
fn a_panicking_reset_drops_that_value_and_keeps_the_world_consistent() {
    let log = Log::new();
    let mut world = World::new();

    // Despawn: the row is gone, the value dropped, the row's other values pooled.
    let bad = world.spawn((log.exploding(0), Trail::with(2)));
    let good = world.spawn((log.counted(1), Trail::with(2)));
    assert!(quiet(|| world.despawn(bad)).is_err());
    assert!(!world.contains(bad) && world.contains(good));
    assert_eq!(log.dropped(), [0]);
    assert_eq!((world.pool_len::<Counted>(), world.pool_len::<Trail>()), (0, 1));
    world.check_invariants().unwrap();

    // Overwrite: the new value is in place, the old one dropped.
    world.insert(good, log.exploding(2)).unwrap();
    assert_eq!(world.pool_len::<Counted>(), 1);
    assert!(quiet(|| world.insert(good, log.counted(3))).is_err());
    assert_eq!(world.get::<Counted>(good).map(|c| c.id), Some(3));
    assert_eq!(log.dropped(), [0, 2]);
    world.check_invariants().unwrap();

    // Discard: the component is gone, the value dropped.
    world.insert(good, log.exploding(4)).unwrap();
    assert!(quiet(|| world.discard::<(Counted, Trail)>(good)).is_err());
    assert!(!world.has::<Counted>(good) && !world.has::<Trail>(good));
    assert_eq!(log.dropped(), [0, 2, 4]);
    assert_eq!(world.pool_len::<Counted>(), 2, "#1 and #3, replaced earlier");
    assert_eq!(world.pool_len::<Trail>(), 2, "the other component of the bundle is pooled");
    world.check_invariants().unwrap();

    // Clear: rows 4, 3, .. 0 enter the pool in that order; #2's reset
    // panics and it is dropped, the others are reset and kept.
    world.trim_pools();
    assert_eq!(log.dropped(), [0, 1, 2, 3, 4]);
    let ids: Vec<u32> = (10..15).collect();
    for &id in &ids {
        world.spawn(if id == 12 { log.exploding(id) } else { log.counted(id) });
    }
    let resets = log.resets();
    assert!(quiet(|| world.clear()).is_err());
    assert!(world.is_empty());
    assert_eq!(world.pool_len::<Counted>(), 4);
    assert_eq!(log.resets() - resets, 5);
    assert_eq!(log.dropped(), [0, 1, 2, 3, 4, 12]);
    world.check_invariants().unwrap();
    // #10, the last in, took #12's place and was reset after it.
    world.spawn_pooled::<Counted>(|c| assert_eq!(c.id, 11));
    world.spawn_pooled::<Counted>(|c| assert_eq!(c.id, 10));
    world.spawn_pooled::<Counted>(|c| assert_eq!(c.id, 13));
    world.spawn_pooled::<Counted>(|c| assert_eq!(c.id, 14));
    drop(world);
    assert_eq!(log.dropped(), [0, 1, 2, 3, 4, 10, 11, 12, 13, 14]);
}

/// A second pooled type with the same logging, for entities and tables
/// with two pooled columns.
#[derive(Component, Default)]
#[component(pooled)]
struct Second(Counted);

impl Reset for Second {
    fn reset(&mut self) {
        self.0.reset();
    }
}

fn panic_text(payload: Box<dyn std::any::Any + Send>) -> String {
    payload.downcast_ref::<String>().cloned().unwrap_or_default()
}

#[test]
fn any_number_of_panicking_resets_unwind_once_and_lose_nothing() {
    let log = Log::new();
    let mut world = World::new();

    // One entity with two pooled components whose resets both panic: the
    // first panic goes on, both values are dropped, once.
    let bad = world.spawn((log.exploding(0), Second(log.exploding(1))));
    let good = world.spawn((log.counted(2), Second(log.counted(3))));
    let payload = quiet(|| world.despawn(bad)).unwrap_err();
    assert_eq!(panic_text(payload), "reset of #0 panics");
    assert!(!world.contains(bad) && world.contains(good));
    assert_eq!(log.dropped(), [0, 1]);
    assert_eq!((world.pool_len::<Counted>(), world.pool_len::<Second>()), (0, 0));
    world.check_invariants().unwrap();

    // Clear with panicking resets in three tables and in both pooled
    // types: every value is pooled or dropped exactly once.
    world.spawn(log.exploding(4));
    world.spawn(log.counted(5));
    world.spawn((Particle { life: 1.0 }, log.exploding(6)));
    world.spawn((Particle { life: 1.0 }, Second(log.exploding(7))));
    world.spawn((Particle { life: 1.0 }, Second(log.exploding(8))));
    let payload = quiet(|| world.clear()).unwrap_err();
    assert!(panic_text(payload).starts_with("reset of #"));
    assert!(world.is_empty());
    assert_eq!(log.dropped(), [0, 1, 4, 6, 7, 8]);
    assert_eq!((world.pool_len::<Counted>(), world.pool_len::<Second>()), (2, 1));
    world.check_invariants().unwrap();

    // Overwriting two pooled components at once, both resets panicking.
    let e = world.spawn((log.exploding(9), Second(log.exploding(10))));
    let payload = quiet(|| world.insert(e, (log.counted(11), Second(log.counted(12))))).unwrap_err();
    assert_eq!(panic_text(payload), "reset of #9 panics");
    assert_eq!(world.get::<Counted>(e).map(|c| c.id), Some(11));
    assert_eq!(world.get::<Second>(e).map(|c| c.0.id), Some(12));
    assert_eq!(log.dropped(), [0, 1, 4, 6, 7, 8, 9, 10]);
    world.check_invariants().unwrap();

    drop(world);
    assert_eq!(log.dropped(), (0..=12).collect::<Vec<_>>());
}

#[test]
fn commands_spawn_pooled_reserves_at_once_and_initializes_on_apply() {
    let mut world = World::new();
    let old = world.spawn(Trail::with(6));
    let ptr = world.get::<Trail>(old).unwrap().points.as_ptr();
    world.despawn(old).unwrap();

    let mut queue = CommandQueue::default();
    let e = Commands::new(&mut queue, &world)
        .spawn_pooled::<(Particle, Trail)>(|(p, t)| {
            p.life = 4.0;
            t.points.push([1.0, 1.0]);
        })
        .id();
    assert!(!world.contains(e));
    assert_eq!(world.pool_len::<Trail>(), 1, "nothing is taken before the commands apply");
    queue.apply(&mut world);
    assert_eq!(world.pool_len::<Trail>(), 0);
    assert_eq!(world.get::<Particle>(e), Some(&Particle { life: 4.0 }));
    let trail = world.get::<Trail>(e).unwrap();
    assert_eq!((trail.points.as_ptr(), trail.points.len()), (ptr, 1));

    // In a system: a value spawned and despawned by commands in one frame
    // goes back to the pool and serves the next spawn, all one buffer.
    fn spawner(mut commands: Commands) {
        let e = commands.spawn_pooled::<Trail>(|t| t.points.push([2.0, 2.0])).id();
        commands.despawn(e);
        commands.spawn_pooled::<Trail>(|t| t.points.push([3.0, 3.0]));
    }
    world.despawn(e).unwrap();
    let mut schedule = Schedule::new();
    schedule.add_system(spawner);
    schedule.run(&mut world);
    assert_eq!(world.query::<&Trail>().map(|t| t.points.clone()).collect::<Vec<_>>(), [vec![[3.0, 3.0]]]);
    assert_eq!(world.pool_len::<Trail>(), 0);
    assert_eq!(world.query::<&Trail>().next().unwrap().points.as_ptr(), ptr);
    world.check_invariants().unwrap();
}
