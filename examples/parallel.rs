//! Parallelism: `par_for_each` / `par_for_each_mut` spread one query's
//! entities over rayon's thread pool, and a `Schedule` runs systems that
//! touch different data at the same time.
//!
//! The results never depend on the threads: each entity is visited by one
//! thread, and systems that conflict keep their order. The example runs the
//! same frames on a parallel and on a single-threaded schedule and checks
//! that the worlds agree.
//!
//! ```sh
//! cargo run --example parallel
//! ```

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use archetable::prelude::*;

#[derive(Component, Clone, Copy)]
struct Position {
    x: f32,
    y: f32,
}

#[derive(Component, Clone, Copy)]
struct Velocity {
    x: f32,
    y: f32,
}

/// Seconds lived.
#[derive(Component)]
struct Age(f32);

/// Radians; spins in place.
#[derive(Component)]
struct Angle(f32);

/// How many particles are in the right half of the arena, per frame.
#[derive(Default)]
struct RightHalf(Vec<usize>);

const PARTICLES: usize = 10_000;
const DT: f32 = 0.1;

/// Moves every particle, spread over the thread pool.
fn movement(mut particles: Query<(&mut Position, &mut Velocity)>) {
    particles.par_for_each_mut(|(mut pos, mut vel)| {
        pos.x += vel.x * DT;
        pos.y += vel.y * DT;
        // Bounce off the walls of a 100 x 100 arena.
        if !(0.0..=100.0).contains(&pos.x) {
            vel.x = -vel.x;
        }
        if !(0.0..=100.0).contains(&pos.y) {
            vel.y = -vel.y;
        }
    });
}

/// Touches only `Age`: may run at the same time as `movement` and `spin`.
fn aging(mut ages: Query<&mut Age>) {
    ages.par_for_each_mut(|mut age| age.0 += DT);
}

/// Touches only `Angle`.
fn spin(mut angles: Query<&mut Angle>) {
    for mut angle in angles.iter_mut() {
        angle.0 = (angle.0 + DT) % std::f32::consts::TAU;
    }
}

/// Reads `Position`, which `movement` writes: always runs after it. A
/// read-only `par_for_each` counts with an atomic.
fn census(positions: Query<&Position>, mut right: ResMut<RightHalf>) {
    let count = AtomicUsize::new(0);
    positions.par_for_each(|pos| {
        if pos.x > 50.0 {
            count.fetch_add(1, Ordering::Relaxed);
        }
    });
    right.0.push(count.into_inner());
}

/// A deterministic world: particle `i` starts at a position and velocity
/// computed from `i`.
fn populate(world: &mut World) {
    world.init_resource::<RightHalf>();
    let particles = (0..PARTICLES).map(|i| {
        let f = i as f32;
        (
            Position { x: (f * 7.3) % 100.0, y: (f * 3.1) % 100.0 },
            Velocity { x: (f % 13.0) - 6.0, y: (f % 7.0) - 3.0 },
            Age(0.0),
            Angle(f % 6.0),
        )
    });
    world.spawn_batch(particles).for_each(drop);
}

fn add_systems(schedule: &mut Schedule) {
    let moved = schedule.add_system(movement).id();
    schedule.add_system(aging);
    schedule.add_system(spin);
    schedule.add_system(census).after(moved);
}

/// A fingerprint of every particle's state, in entity order.
fn fingerprint(world: &World) -> u64 {
    let mut rows: Vec<(Entity, u64)> = world
        .query::<(Entity, &Position, &Velocity, &Age, &Angle)>()
        .map(|(entity, pos, vel, age, angle)| {
            let bits = [pos.x, pos.y, vel.x, vel.y, age.0, angle.0].map(f32::to_bits);
            (entity, bits.iter().fold(0u64, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01B3)))
        })
        .collect();
    rows.sort_unstable_by_key(|&(entity, _)| entity);
    rows.iter().fold(0xCBF2_9CE4_8422_2325, |h, &(_, row)| (h ^ row).wrapping_mul(0x100_0000_01B3))
}

fn main() {
    // Outside a schedule: a `QueryState` with `par_for_each_mut`.
    let mut world = World::new();
    populate(&mut world);
    let mut speeds = QueryState::<&mut Velocity>::new(&mut world);
    speeds.par_for_each_mut(&mut world, |mut vel| {
        vel.x *= 2.0;
        vel.y *= 2.0;
    });
    let fast = AtomicUsize::new(0);
    QueryState::<&Velocity>::new(&mut world).par_for_each(&world, |vel| {
        if vel.x.abs() >= 10.0 {
            fast.fetch_add(1, Ordering::Relaxed);
        }
    });
    let fast = fast.into_inner();
    println!("{PARTICLES} particles, velocities doubled in parallel: {fast} now have |vx| >= 10");

    // The same frames on a parallel schedule and a single-threaded one.
    let mut parallel = Schedule::new();
    // Spread every group of systems over the pool, even short ones (by
    // default a group that took under 20 µs runs on the calling thread).
    parallel.set_parallel_threshold(Duration::ZERO);
    add_systems(&mut parallel);
    let mut serial_world = World::new();
    populate(&mut serial_world);
    let mut serial = Schedule::single_threaded();
    add_systems(&mut serial);
    QueryState::<&mut Velocity>::new(&mut serial_world).for_each_mut(&mut serial_world, |mut vel| {
        vel.x *= 2.0;
        vel.y *= 2.0;
    });

    // `movement`, `aging` and `spin` write different components, so they
    // may run at the same time; `census` reads what `movement` writes, so
    // it waits for it.
    println!("run order: {}", parallel.order(&mut world).join(", "));
    for _ in 0..20 {
        parallel.run(&mut world);
        serial.run(&mut serial_world);
    }
    let census = &world.resource::<RightHalf>().0;
    println!("right half, frames 1, 10, 20: {}, {}, {}", census[0], census[9], census[19]);
    let same = fingerprint(&world) == fingerprint(&serial_world);
    println!("parallel and single-threaded worlds agree: {same}");

    assert!(fast > 0 && fast < PARTICLES);
    assert_eq!(census.len(), 20);
    assert_eq!(census, &serial_world.resource::<RightHalf>().0);
    assert!(same);
}
