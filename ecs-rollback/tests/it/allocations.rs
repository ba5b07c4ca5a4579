//! A save (with its checksum) and a load allocate nothing in steady state:
//! the snapshot's world and the present one keep their tables, sparse
//! sets, entity tables and strings from one copy to the next.
//!
//! A counting global allocator serves the whole test binary (the other
//! modules too), so it counts only on the thread that asks it to, between
//! two points: tests running beside this one are not counted.

// The allocator below must implement the `unsafe` `GlobalAlloc` trait; it
// forwards every call to the system allocator unchanged.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use archetable_core::{Entity, EventReader, EventWriter, IntoSystems, ResMut, Schedule, World};
use archetable_macros::Component;
use archetable_rollback::{RollbackDriver, RollbackRng};

struct Counting;

thread_local! {
    /// Whether this thread's allocations are being counted.
    static ON: Cell<bool> = const { Cell::new(false) };
    /// Allocations and reallocations while counting.
    static ALLOCS: Cell<usize> = const { Cell::new(0) };
}

fn note() {
    // `try_with`: the thread's locals may be gone while it shuts down.
    if ON.try_with(Cell::get).unwrap_or(false) {
        let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
    }
}

// SAFETY: every method forwards to `System` with the caller's arguments, so
// `System`'s guarantees carry over; the counting touches only `Cell`s in
// const-initialized thread locals, which never allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note();
        // SAFETY: the caller's contract for `alloc`, passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note();
        // SAFETY: the caller's contract for `alloc_zeroed`, passed on.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note();
        // SAFETY: the caller's contract for `realloc`, passed on; `ptr` came
        // from `System` through this allocator.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract for `dealloc`, passed on; `ptr` came
        // from `System` through this allocator.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Runs `f` and returns its result and how many allocations it made on
/// this thread.
fn count<R>(f: impl FnOnce() -> R) -> (R, usize) {
    ALLOCS.with(|c| c.set(0));
    ON.with(|on| on.set(true));
    let result = f();
    ON.with(|on| on.set(false));
    (result, ALLOCS.with(Cell::get))
}

#[derive(Component, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[component(clone)]
struct Position(i32, i32);

#[derive(Component, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[component(clone, track_changes)]
struct Velocity(i32, i32);

#[derive(Component, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[component(clone)]
struct Health(u32);

#[derive(Component, Debug, PartialEq, Eq, Hash)]
#[component(clone)]
struct Name(String);

// By hand: `derive(Clone)` does not forward `clone_from`, and a save keeps
// each string's buffer only through it.
impl Clone for Name {
    fn clone(&self) -> Self {
        Name(self.0.clone())
    }

    fn clone_from(&mut self, source: &Self) {
        self.0.clone_from(&source.0);
    }
}

#[derive(Component, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[component(clone, storage = "sparse")]
struct Shield(u8);

/// An event the frames send and read, so that its queue and its readers'
/// positions are in every save and load.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Ping(u32);

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
struct Pings(u32);

fn send_pings(mut pings: EventWriter<Ping>, mut rng: ResMut<RollbackRng>) {
    for _ in 0..1 + rng.range(3) {
        pings.send(Ping(rng.next_u32()));
    }
}

fn count_pings(mut pings: EventReader<Ping>, mut seen: ResMut<Pings>) {
    seen.0 += pings.read().count() as u32;
}

fn unit(i: i32) -> (Position, Velocity, Health, Name) {
    (Position(i, -i), Velocity(1, 2), Health(100), Name(format!("unit {i:05}")))
}

fn driver() -> RollbackDriver<u8> {
    let mut world = World::new();
    for i in 0..2_000 {
        let e = world.spawn(unit(i));
        if i % 5 == 0 {
            world.insert(e, Shield(i as u8)).unwrap();
        }
    }
    world.insert_resource(RollbackRng::new(9));
    world.insert_resource(Pings::default());
    let mut schedule = Schedule::new();
    schedule.add_systems((count_pings, send_pings).chain());
    let mut driver: RollbackDriver<u8> = RollbackDriver::new(world, schedule, 60);
    driver.component::<Position>().component::<Velocity>().component::<Health>().component::<Name>();
    driver.component::<Shield>().resource::<RollbackRng>().resource::<Pings>().event::<Ping>();
    driver
        .copy_with_clone_from::<Position>()
        .copy_with_clone_from::<Velocity>()
        .copy_with_clone_from::<Health>()
        .copy_with_clone_from::<Name>()
        .copy_with_clone_from::<Shield>();
    driver
}

/// What a frame does between a save and a load: moves, edits strings in
/// place, draws a number, sends events, despawns some units and spawns as
/// many.
fn play(world: &mut World, frame: i32) {
    for i in 0..3 {
        world.send_event(Ping(i));
    }
    for (mut pos, vel) in world.query_mut::<(&mut Position, &Velocity)>() {
        pos.0 += vel.0;
    }
    for mut name in world.query_mut::<&mut Name>() {
        name.0.replace_range(0..1, if frame % 2 == 0 { "U" } else { "u" });
    }
    world.resource_mut::<RollbackRng>().next_u32();
    let gone: Vec<Entity> = world.query::<Entity>().skip(frame as usize * 7).step_by(97).take(10).collect();
    for e in gone {
        world.despawn(e).unwrap();
    }
    for i in 0..10 {
        world.spawn(unit(10_000 + frame * 10 + i));
    }
}

#[test]
fn a_save_and_a_load_allocate_nothing_in_steady_state() {
    let mut driver = driver();
    let mut counts = Vec::new();
    for frame in 0..12 {
        let (checksum, save) = count(|| driver.save_now().unwrap());
        play(driver.world_mut(), frame);
        assert_ne!(driver.checksum(), checksum);
        let ((), load) = count(|| driver.load_frame(0).unwrap());
        assert_eq!(driver.checksum(), checksum, "the load restores the save");
        counts.push((save, load));
    }
    // The first save fills the snapshot's world; each copy after reuses it.
    assert!(counts[0].0 > 0);
    assert_eq!(counts[4..], [(0, 0); 8], "allocations of (save, load) per frame: {counts:?}");
}

#[test]
fn saves_into_every_slot_of_a_sync_test_ring_allocate_nothing_once_filled() {
    use archetable_rollback::ggrs::SessionBuilder;
    use archetable_rollback::RollbackConfig;

    let mut driver = driver();
    let session = SessionBuilder::<RollbackConfig<u8>>::new()
        .with_num_players(1)
        .unwrap()
        .with_check_distance(4)
        .start_synctest_session()
        .unwrap();
    driver.start(session).unwrap();
    // Each update loads a frame 4 back, and saves and steps 5 frames: once
    // every slot of the ring has held the world, saves and loads reuse it.
    for _ in 0..30 {
        driver.update(|_, _| 0).unwrap();
    }
    let frame = driver.frame();
    let (checksum, save) = count(|| driver.save_now().unwrap());
    assert_eq!(save, 0);
    play(driver.world_mut(), 1);
    let ((), load) = count(|| driver.load_frame(frame).unwrap());
    assert_eq!(load, 0);
    assert_eq!(driver.checksum(), checksum);
}
