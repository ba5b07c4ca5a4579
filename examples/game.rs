//! A tiny particle game: 4,000 particles fly around a walled arena for ten
//! frames. It shows the API a newcomer needs:
//!
//! - `#[derive(Component)]` and `#[derive(Bundle)]`, and `spawn_batch`;
//! - a `QueryState` kept across frames (the movement query);
//! - filters: `Without<Frozen>` on the kept query, `With<Frozen>` on a
//!   one-off `query_filtered_mut`;
//! - `insert` of a marker (`Frozen`, when a particle hits a wall) and
//!   `remove` of a component (a `Shield` absorbs the first hit);
//! - `despawn` when a lifetime runs out, and a wave of new particles each frame;
//! - `world.entity(e)` to print an entity for debugging.
//!
//! Every frame prints what happened. The run is deterministic: the random
//! numbers come from a small xorshift generator with a fixed seed.
//!
//! ```text
//! cargo run --release --example game
//! ```

use ecs::prelude::*;

/// Where a particle is, in arena units.
#[derive(Component, Clone, Copy, Debug)]
struct Position {
    x: f32,
    y: f32,
}

/// Arena units per frame.
#[derive(Component, Clone, Copy, Debug)]
struct Velocity {
    x: f32,
    y: f32,
}

/// Frames left to live.
#[derive(Component, Clone, Copy, Debug)]
struct Lifetime(u32);

/// Marker: the particle hit a wall and stopped moving. Frozen particles
/// melt (age) three times as fast.
#[derive(Component, Debug)]
struct Frozen;

/// Absorbs one wall hit (the particle bounces instead of freezing), then
/// is removed.
#[derive(Component, Debug)]
struct Shield;

/// The components every particle is spawned with.
#[derive(Bundle)]
struct Particle {
    position: Position,
    velocity: Velocity,
    lifetime: Lifetime,
}

const PARTICLES: usize = 4_000;
const FRAMES: u32 = 10;
/// Particles spawned per frame.
const WAVE: usize = 120;
const ARENA: f32 = 100.0;

/// A xorshift64 generator: enough randomness for a demo, and deterministic.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A float in `lo..hi`.
    fn range(&mut self, lo: f32, hi: f32) -> f32 {
        let unit = (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32;
        lo + (hi - lo) * unit
    }

    fn particle(&mut self) -> Particle {
        Particle {
            position: Position { x: self.range(0.0, ARENA), y: self.range(0.0, ARENA) },
            velocity: Velocity { x: self.range(-3.0, 3.0), y: self.range(-3.0, 3.0) },
            lifetime: Lifetime(5 + (self.next_u64() % 30) as u32),
        }
    }
}

/// Spawns `n` particles; every fourth one gets a shield.
fn spawn_particles(world: &mut World, rng: &mut Rng, n: usize) -> usize {
    let spawned: Vec<Entity> = world.spawn_batch((0..n).map(|_| rng.particle())).collect();
    for &entity in spawned.iter().step_by(4) {
        world.insert(entity, Shield).expect("just spawned");
    }
    spawned.len()
}

/// An order-independent hash of every position, to compare runs.
fn checksum(world: &World) -> u64 {
    world
        .query::<&Position>()
        .map(|p| (u64::from(p.x.to_bits()) << 32 | u64::from(p.y.to_bits())).wrapping_mul(0x9E37_79B9_7F4A_7C15))
        .fold(0, u64::wrapping_add)
}

fn main() {
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    let mut world = World::new();
    spawn_particles(&mut world, &mut rng, PARTICLES);

    // Built once, reused every frame: it caches the matching archetypes and
    // only looks at archetypes created since the previous frame.
    let mut movement = QueryState::<(Entity, &mut Position, &Velocity), Without<Frozen>>::new(&mut world);
    let mut first_frozen = None;

    for frame in 1..=FRAMES {
        // Move every particle that is not frozen; note who crossed a wall.
        // The world cannot change shape while a query borrows it, so the
        // hits are collected and handled after the loop.
        let mut moved = 0;
        let mut hits = Vec::new();
        for (entity, mut pos, vel) in movement.iter_mut(&mut world) {
            pos.x += vel.x;
            pos.y += vel.y;
            moved += 1;
            if !(0.0..ARENA).contains(&pos.x) || !(0.0..ARENA).contains(&pos.y) {
                pos.x = pos.x.clamp(0.0, ARENA);
                pos.y = pos.y.clamp(0.0, ARENA);
                hits.push(entity);
            }
        }

        // A shield absorbs the hit and is used up; otherwise the particle freezes.
        let (mut frozen, mut bounced) = (0, 0);
        for entity in hits {
            if world.remove::<Shield>(entity).is_ok() {
                let mut vel = world.get_mut::<Velocity>(entity).expect("movers have a velocity");
                vel.x = -vel.x;
                vel.y = -vel.y;
                bounced += 1;
            } else {
                world.insert(entity, Frozen).expect("entity is alive");
                first_frozen.get_or_insert(entity);
                frozen += 1;
            }
        }

        // Everyone ages by one frame; frozen particles melt two frames more.
        for mut life in world.query_filtered_mut::<&mut Lifetime, With<Frozen>>() {
            life.0 = life.0.saturating_sub(2);
        }
        let mut expired = Vec::new();
        for (entity, mut life) in world.query_mut::<(Entity, &mut Lifetime)>() {
            life.0 = life.0.saturating_sub(1);
            if life.0 == 0 {
                expired.push(entity);
            }
        }

        // Despawn the expired; a wave of newcomers arrives every frame.
        let despawned = expired.len();
        for entity in expired {
            world.despawn(entity).expect("entity is alive");
        }
        let spawned = spawn_particles(&mut world, &mut rng, WAVE);

        println!(
            "frame {frame:2}: alive {:4}  moved {moved:4}  froze {frozen:3}  bounced {bounced:3}  \
             despawned {despawned:3}  spawned {spawned:3}  checksum {:016x}",
            world.len(),
            checksum(&world),
        );
    }

    // `world.entity` is a read-only view for debugging. A despawned entity's
    // handle is stale, never reused for another entity: it gives `None`.
    let frozen_now: Vec<Entity> = world.query_filtered::<Entity, With<Frozen>>().collect();
    for entity in first_frozen.into_iter().chain(frozen_now.first().copied()) {
        match world.entity(entity) {
            Some(view) => println!("{view:?} at {:?}", view.get::<Position>()),
            None => println!("{entity}: despawned, the handle is stale"),
        }
    }
    println!("{} particles alive, {} of them frozen", world.len(), frozen_now.len());
}
