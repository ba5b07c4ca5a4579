//! Component pools: bullets spawned and despawned every frame, whose trails
//! (a `Vec` each) are reused instead of freed and allocated again.
//!
//! `Trail` is `#[component(pooled)]`: when a bullet is despawned its trail
//! is reset (`Reset::reset` clears the points, keeping the capacity) and
//! kept in the world's pool for `Trail`; `spawn_pooled` takes it back. From
//! the second frame on, every bullet gets a trail buffer the first frame
//! allocated: the example compares the buffers' addresses.
//!
//! ```sh
//! cargo run --example pools
//! ```

use std::collections::BTreeSet;

use archetable::prelude::*;

/// A bullet in flight. Not pooled: a plain value, nothing to keep.
#[derive(Component, Default)]
struct Bullet {
    pos: [f32; 2],
    vel: [f32; 2],
}

/// Where the bullet has been, for drawing a trail: heap memory worth
/// keeping.
#[derive(Component, Default)]
#[component(pooled)]
struct Trail {
    points: Vec<[f32; 2]>,
}

impl Reset for Trail {
    fn reset(&mut self) {
        // Back to the state of a fresh trail, but keep the buffer.
        self.points.clear();
    }
}

const BULLETS: usize = 200;
const STEPS: usize = 8;

/// The address of each trail's buffer.
fn buffers(world: &World) -> BTreeSet<usize> {
    world.query::<&Trail>().map(|trail| trail.points.as_ptr() as usize).collect()
}

fn main() {
    let mut world = World::new();
    let mut first_buffers = BTreeSet::new();
    let mut reused_per_frame = Vec::new();
    let mut allocated_per_frame = Vec::new();

    for frame in 1..=4 {
        // Fire: each bullet's trail comes from the pool when it has one
        // (reset, with its buffer) or is `Trail::default()` when it is empty.
        let mut reused = 0;
        for i in 0..BULLETS {
            world.spawn_pooled::<(Bullet, Trail)>(|(bullet, trail)| {
                assert!(trail.points.is_empty(), "a pooled trail comes back reset");
                reused += usize::from(trail.points.capacity() > 0);
                bullet.vel = [1.0, i as f32 * 0.01];
            });
        }

        // Fly: every step appends to the trail; the reused buffers are
        // already big enough.
        for _ in 0..STEPS {
            for (mut bullet, mut trail) in world.query_mut::<(&mut Bullet, &mut Trail)>() {
                let [x, y] = bullet.pos;
                bullet.pos = [x + bullet.vel[0], y + bullet.vel[1]];
                trail.points.push(bullet.pos);
            }
        }
        // Which buffers did this frame allocate?
        let now = buffers(&world);
        let allocated = now.difference(&first_buffers).count();
        if frame == 1 {
            first_buffers = now;
        }

        // Hit: despawn them all; the trails go to the pool.
        let all: Vec<Entity> = world.query::<Entity>().collect();
        for bullet in all {
            world.despawn(bullet).unwrap();
        }
        println!(
            "frame {frame}: {BULLETS} bullets, {reused:3} trails from the pool, {allocated:3} new buffers, \
             {} trails pooled after despawn",
            world.pool_len::<Trail>()
        );
        reused_per_frame.push(reused);
        allocated_per_frame.push(allocated);
    }

    // A cap bounds what a pool keeps; `trim_pools` empties them all, for
    // example between levels.
    world.set_pool_cap::<Trail>(50);
    let capped = world.pool_len::<Trail>();
    world.trim_pools();
    println!("capped at 50: {capped} kept; after trim_pools: {}", world.pool_len::<Trail>());

    // Only the first frame allocated trail buffers; the others reused them.
    assert_eq!(reused_per_frame, [0, BULLETS, BULLETS, BULLETS]);
    assert_eq!(allocated_per_frame, [BULLETS, 0, 0, 0]);
    assert_eq!((capped, world.pool_len::<Trail>()), (50, 0));
}
