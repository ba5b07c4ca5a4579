//! Counts the heap allocations of one save (with its checksum) and one load
//! in steady state, for 10,000 entities of four components (one a
//! `String`), and for one frame of the arena under a sync test that rolls
//! back 8 frames. A counting global allocator serves this whole binary, so
//! it is its own example, apart from the timings.
//!
//! Run with `cargo run --release -p archetable-rollback --example rollback_allocations`.

#[path = "../tests/it/arena.rs"]
mod arena;

use std::alloc::System;

use archetable_core::{Schedule, World};
use archetable_macros::Component;
use archetable_rollback::ggrs::SessionBuilder;
use archetable_rollback::{RollbackConfig, RollbackDriver};
use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

#[derive(Component, Clone, Copy, Hash)]
#[component(clone)]
struct Position(i32, i32);

#[derive(Component, Clone, Copy, Hash)]
#[component(clone)]
struct Velocity(i32, i32);

#[derive(Component, Clone, Copy, Hash)]
#[component(clone)]
struct Health(u32);

#[derive(Component, Hash)]
#[component(clone)]
struct Name(String);

// By hand, so that a save's `clone_from` keeps each string's buffer:
// `derive(Clone)` would clone anew and drop the old string.
impl Clone for Name {
    fn clone(&self) -> Self {
        Name(self.0.clone())
    }

    fn clone_from(&mut self, source: &Self) {
        self.0.clone_from(&source.0);
    }
}

fn main() {
    let mut world = World::new();
    for i in 0..10_000 {
        world.spawn((Position(i, -i), Velocity(1, 2), Health(100), Name(format!("unit {i}"))));
    }
    let mut driver: RollbackDriver<u8> = RollbackDriver::new(world, Schedule::new(), 60);
    driver.component::<Position>().component::<Velocity>().component::<Health>().component::<Name>();
    driver
        .copy_with_clone_from::<Position>()
        .copy_with_clone_from::<Velocity>()
        .copy_with_clone_from::<Health>()
        .copy_with_clone_from::<Name>();
    for _ in 0..5 {
        driver.save_now().unwrap();
        driver.load_frame(0).unwrap();
    }
    let region = Region::new(GLOBAL);
    driver.save_now().unwrap();
    let save = region.change();
    let region = Region::new(GLOBAL);
    driver.load_frame(0).unwrap();
    let load = region.change();
    println!("10,000 entities of Position, Velocity, Health, Name(String), steady state:");
    println!(
        "  save + checksum: {} allocations, {} bytes",
        save.allocations + save.reallocations,
        save.bytes_allocated
    );
    println!(
        "  load:            {} allocations, {} bytes",
        load.allocations + load.reallocations,
        load.bytes_allocated
    );

    let mut driver: RollbackDriver<arena::Input> = RollbackDriver::new(arena::world(1000), arena::schedule(), 60);
    arena::register(&mut driver);
    let session = SessionBuilder::<RollbackConfig<arena::Input>>::new()
        .with_num_players(2)
        .unwrap()
        .with_max_prediction_window(10)
        .with_check_distance(8)
        .start_synctest_session()
        .unwrap();
    driver.start(session).unwrap();
    for frame in 0..100 {
        driver.update(|handle, _| arena::script(handle, frame)).unwrap();
    }
    let region = Region::new(GLOBAL);
    driver.update(|handle, _| arena::script(handle, 100)).unwrap();
    let frame = region.change();
    println!("arena, 1,000 rocks, one sync-test frame (a load, 9 steps, 9 saves):");
    println!("  {} allocations, {} bytes", frame.allocations + frame.reallocations, frame.bytes_allocated);
}
