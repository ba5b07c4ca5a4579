//! The proof that pools remove allocation from a spawn-and-despawn loop:
//! 10,000 bullets, each with a `Trail` whose `Vec` gets a few points, are
//! spawned with `spawn_pooled` and despawned every frame for 100 frames.
//! After the first frame has grown every table, pool and trail buffer, the
//! heap is not touched again.
//!
//! A counting global allocator serves the whole test binary (the other
//! modules of `engine` too), so it counts only on the thread that asks it
//! to, between two points: tests running beside this one are not counted.

// The allocator below must implement the `unsafe` `GlobalAlloc` trait; it
// forwards every call to the system allocator unchanged.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use archetable::prelude::*;

struct Counting;

thread_local! {
    /// Whether this thread's allocations are being counted.
    static ON: Cell<bool> = const { Cell::new(false) };
    /// Allocations (including reallocations) and frees while counting.
    static ALLOCS: Cell<usize> = const { Cell::new(0) };
    static FREES: Cell<usize> = const { Cell::new(0) };
}

fn note(counter: &'static std::thread::LocalKey<Cell<usize>>) {
    // `try_with`: the thread's locals may be gone while it shuts down.
    if ON.try_with(Cell::get).unwrap_or(false) {
        let _ = counter.try_with(|c| c.set(c.get() + 1));
    }
}

// SAFETY: every method forwards to `System` with the caller's arguments, so
// `System`'s guarantees carry over; the counting touches only `Cell`s in
// const-initialized thread locals, which never allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(&ALLOCS);
        // SAFETY: the caller's contract for `alloc`, passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(&ALLOCS);
        // SAFETY: the caller's contract for `alloc_zeroed`, passed on.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(&ALLOCS);
        // SAFETY: the caller's contract for `realloc`, passed on; `ptr` came
        // from `System` through this allocator.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        note(&FREES);
        // SAFETY: the caller's contract for `dealloc`, passed on; `ptr` came
        // from `System` through this allocator.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Runs `f` and returns how many allocations and frees it made on this
/// thread.
fn count(f: impl FnOnce()) -> (usize, usize) {
    ALLOCS.with(|c| c.set(0));
    FREES.with(|c| c.set(0));
    ON.with(|on| on.set(true));
    f();
    ON.with(|on| on.set(false));
    (ALLOCS.with(Cell::get), FREES.with(Cell::get))
}

#[derive(Component, Default)]
struct Bullet {
    pos: [f32; 2],
    vel: [f32; 2],
}

#[derive(Component, Default)]
#[component(pooled)]
struct Trail {
    points: Vec<[f32; 2]>,
}

impl Reset for Trail {
    fn reset(&mut self) {
        self.points.clear();
    }
}

const BULLETS: usize = 10_000;
const FRAMES: usize = 100;

#[test]
fn spawning_from_pools_stops_allocating_after_the_first_frame() {
    let mut world = World::new();
    world.set_pool_cap::<Trail>(BULLETS);
    let mut movers = QueryState::<(&mut Bullet, &mut Trail)>::new(&mut world);
    let mut bullets: Vec<Entity> = Vec::with_capacity(BULLETS);
    let mut frames = Vec::with_capacity(FRAMES);

    for frame in 0..FRAMES {
        let counts = count(|| {
            for i in 0..BULLETS {
                let x = i as f32;
                bullets.push(world.spawn_pooled::<(Bullet, Trail)>(|(bullet, trail)| {
                    bullet.pos = [x, 0.0];
                    bullet.vel = [0.0, 1.0];
                    trail.points.extend([[x, -2.0], [x, -1.0], [x, 0.0]]);
                }));
            }
            for (mut bullet, mut trail) in movers.iter_mut(&mut world) {
                bullet.pos[1] += bullet.vel[1];
                let pos = bullet.pos;
                trail.points.push(pos);
            }
            for e in bullets.drain(..) {
                world.despawn(e).unwrap();
            }
        });
        frames.push(counts);
        assert_eq!(world.len(), 0);
        assert_eq!(world.pool_len::<Trail>(), BULLETS, "frame {frame}");
    }

    // Frame 1 allocates: one buffer per trail, plus the growth of the
    // bullets' table, the entity table and its free list, the pool, and the
    // query's cache of matching tables.
    let (allocs, frees) = frames[0];
    assert_eq!(allocs, BULLETS + FIRST_FRAME_TABLE_ALLOCS, "frame 1: {:?}", frames[0]);
    // One free: the bullets' table starts with one block for all its
    // columns, and frees it when it outgrows it; every other growth
    // reallocates in place of a free.
    assert_eq!(frees, 1, "frame 1 frees the table's first block and nothing else");
    // From then on, nothing: every frame reuses the trails and the tables.
    let later: Vec<(usize, (usize, usize))> =
        frames.iter().copied().enumerate().skip(1).filter(|&(_, counts)| counts != (0, 0)).collect();
    assert_eq!(later, [], "(frame index, (allocations, frees)) after frame 1");
    world.check_invariants().unwrap();
}

/// Allocations of the first frame besides the trail buffers: the doubling
/// growth of the table, the entity table, the free list and the pool, and
/// the registration of the new types and table (measured; a change in how
/// storage grows changes it, and only this number should need updating).
const FIRST_FRAME_TABLE_ALLOCS: usize = 92;
