//! Entity handles handed out by systems that run at the same time: a
//! parallel frame gives the same handles as a single-threaded one, whatever
//! the thread count and whichever system reaches the allocator first.

use std::time::Duration;

use archetable::prelude::*;

#[derive(Component, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct A(u64);

#[derive(Component, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct B(u64);

#[derive(Default)]
struct Frame(u64);

const PER_FRAME: u64 = 5_000;

fn spawn_a(mut commands: Commands, frame: Res<Frame>) {
    for i in 0..PER_FRAME {
        commands.spawn(A(frame.0 * 100_000 + i));
    }
}

// Spawns fewer than `spawn_a` in odd frames, so the lanes are uneven.
fn spawn_b(mut commands: Commands, frame: Res<Frame>) {
    let n = if frame.0.is_multiple_of(2) { PER_FRAME } else { PER_FRAME / 7 };
    for i in 0..n {
        let e = commands.spawn(B(frame.0 * 100_000 + i)).id();
        if i.is_multiple_of(5) {
            commands.entity(e).insert(A(u64::MAX - i));
        }
    }
}

// Despawns a third of what there is, so later frames reuse free indices.
fn cull(a: Query<(Entity, &A)>, mut commands: Commands) {
    for (entity, a) in a.iter() {
        if a.0.is_multiple_of(3) {
            commands.despawn(entity);
        }
    }
}

fn next_frame(mut frame: ResMut<Frame>) {
    frame.0 += 1;
}

type Snapshot = Vec<(Entity, Option<A>, Option<B>)>;

fn run(mut schedule: Schedule) -> (Snapshot, World) {
    let mut world = World::new();
    world.init_resource::<Frame>();
    schedule.add_system(spawn_a);
    schedule.add_system(spawn_b);
    schedule.add_system(cull);
    schedule.add_system(next_frame).after(spawn_a).after(spawn_b);
    for _ in 0..4 {
        schedule.run(&mut world);
    }
    world.check_invariants().unwrap();
    let mut all: Snapshot =
        world.query::<(Entity, Option<&A>, Option<&B>)>().map(|(e, a, b)| (e, a.copied(), b.copied())).collect();
    all.sort();
    (all, world)
}

fn parallel() -> Schedule {
    let mut schedule = Schedule::new();
    schedule.set_parallel_threshold(Duration::ZERO);
    schedule
}

#[test]
fn parallel_spawns_give_the_single_threaded_handles() {
    let (expected, world) = run(Schedule::single_threaded());
    // What 4 frames of this workload leave (the single-threaded run defines
    // it; a change to the systems changes these).
    assert_eq!(expected.len(), 25_712);
    assert!(expected.iter().any(|(e, _, _)| e.generation() > 1), "free indices were reused");
    let spawned_b = expected.iter().filter(|(_, _, b)| b.is_some()).count();
    assert_eq!(spawned_b, 10_712);
    let allocated_slots = world.allocator_state();
    for threads in [1, 2, 8] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        for attempt in 0..5 {
            let (got, world) = pool.install(|| run(parallel()));
            assert_eq!(got.len(), expected.len(), "{threads} threads, run {attempt}");
            let first_difference = got.iter().zip(&expected).position(|(g, e)| g != e);
            assert_eq!(first_difference, None, "{threads} threads, run {attempt}");
            assert_eq!(world.allocator_state(), allocated_slots, "{threads} threads, run {attempt}");
        }
    }
}

#[test]
fn a_schedule_that_changes_between_the_pool_and_one_thread_gives_the_same_world() {
    // Any threshold but zero lets each group pick the faster way: its first
    // frame goes to the pool, its second runs on one thread (to measure
    // both), later ones the faster. The world must not tell.
    let (expected, world) = run(Schedule::single_threaded());
    let allocated_slots = world.allocator_state();
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    for attempt in 0..3 {
        let mut schedule = Schedule::new();
        schedule.set_parallel_threshold(Duration::from_nanos(1));
        let (got, world) = pool.install(|| run(schedule));
        assert_eq!(got, expected, "run {attempt}");
        assert_eq!(world.allocator_state(), allocated_slots, "run {attempt}");
    }
}

#[test]
fn lanes_leave_the_skipped_indices_free_for_later_spawns() {
    // Two spawners in one group: the first takes 3 handles, the second 1.
    // The lanes interleave, and the positions the second lane skipped are
    // handed out first afterwards.
    fn three(mut commands: Commands) {
        for i in 0..3 {
            commands.spawn(A(i));
        }
    }
    fn one(mut commands: Commands) {
        commands.spawn(B(0));
    }
    let mut world = World::new();
    let mut schedule = Schedule::single_threaded();
    schedule.add_system(three);
    schedule.add_system(one);
    schedule.run(&mut world);
    let mut got: Vec<(u32, Option<A>, Option<B>)> = world
        .query::<(Entity, Option<&A>, Option<&B>)>()
        .map(|(e, a, b)| (e.index(), a.copied(), b.copied()))
        .collect();
    got.sort();
    assert_eq!(got, [(0, Some(A(0)), None), (1, None, Some(B(0))), (2, Some(A(1)), None), (4, Some(A(2)), None)],);
    world.check_invariants().unwrap();
    assert_eq!(world.spawn(A(9)).index(), 3);
    assert_eq!(world.spawn(A(9)).index(), 5);
    assert_eq!(world.spawn(A(9)).index(), 6);
}
