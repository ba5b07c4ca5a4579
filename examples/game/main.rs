//! A tiny particle game run by a `Schedule`: particles fly around a walled
//! arena, freeze when they hit a wall (unless a shield absorbs the hit), age
//! and vanish, while waves of newcomers arrive. It shows the API a newcomer
//! needs:
//!
//! - `#[derive(Component)]`, `#[derive(Bundle)]`, resources and `Time`;
//! - systems as plain functions: `Query` with filters, `Res`/`ResMut`,
//!   `Commands` (deferred spawn, insert, remove, despawn), events, `Local`;
//! - ordering with `.after(..)`, a `.debug()` system that runs while paused,
//!   slow motion with `Time::set_scale`, per-system timings;
//! - `Schedule::clear_world` between levels, with an `on_clear` hook that
//!   sets up the next level.
//!
//! The run draws itself (see `pictures.rs`): an animated GIF of the arena,
//! a PNG every few frames, a strip of four moments and a chart of the
//! per-frame figures, written into a folder it names at the end. It is
//! deterministic: the random numbers come from a small xorshift generator
//! with a fixed seed, and systems that touch the same data always run in
//! the same order, so the same run gives the same checksum.
//!
//! ```text
//! cargo run --release --example game                      # pictures into target/showcase
//! cargo run --release --example game -- --out some/folder
//! cargo run --release --example game -- --readme          # also refresh docs/showcase.png
//! ```

mod pictures;

use std::path::{Path, PathBuf};
use std::time::Duration;

use archetable::prelude::*;
use pictures::{Figures, Look, Recorder};

/// Where a particle is, in arena units.
#[derive(Component, Clone, Copy, Debug)]
struct Position {
    x: f32,
    y: f32,
}

/// Arena units per second.
#[derive(Component, Clone, Copy, Debug)]
struct Velocity {
    x: f32,
    y: f32,
}

/// Seconds left to live.
#[derive(Component, Clone, Copy, Debug)]
struct Lifetime(f32);

/// Marker: the particle hit a wall and stopped. Frozen particles melt
/// (age) three times as fast.
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

/// Sent by `movement` when a particle crosses a wall.
struct WallHit(Entity);

/// What happened this frame, for the frame line.
#[derive(Default, Debug)]
struct FrameStats {
    moved: usize,
    frozen: usize,
    bounced: usize,
    expired: usize,
    spawned: usize,
    /// Alive at the end of the frame, counted by `census`.
    alive: usize,
    /// Of those, frozen.
    frozen_now: usize,
}

const PARTICLES: usize = 4_000;
/// Particles spawned per frame.
const WAVE: usize = 120;
const ARENA: f32 = 100.0;
/// The frame time the game loop pretends to take.
const FRAME: Duration = Duration::from_millis(16);

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
            velocity: Velocity { x: self.range(-180.0, 180.0), y: self.range(-180.0, 180.0) },
            lifetime: Lifetime(self.range(0.1, 0.5)),
        }
    }
}

/// Spawns `n` particles through `commands`; every fourth one gets a shield.
fn spawn_particles(commands: &mut Commands, rng: &mut Rng, n: usize) {
    for i in 0..n {
        let mut particle = commands.spawn(rng.particle());
        if i % 4 == 0 {
            particle.insert(Shield);
        }
    }
}

/// A wave of newcomers every frame.
fn spawn_wave(mut commands: Commands, mut rng: ResMut<Rng>, mut stats: ResMut<FrameStats>) {
    spawn_particles(&mut commands, &mut rng, WAVE);
    stats.spawned = WAVE;
}

/// Moves every particle that is not frozen; reports who crossed a wall.
fn movement(
    mut particles: Query<(Entity, &mut Position, &Velocity), Without<Frozen>>,
    time: Res<Time>,
    mut hits: EventWriter<WallHit>,
    mut stats: ResMut<FrameStats>,
) {
    let dt = time.delta_secs();
    stats.moved = 0;
    for (entity, mut pos, vel) in particles.iter_mut() {
        pos.x += vel.x * dt;
        pos.y += vel.y * dt;
        stats.moved += 1;
        if !(0.0..ARENA).contains(&pos.x) || !(0.0..ARENA).contains(&pos.y) {
            pos.x = pos.x.clamp(0.0, ARENA);
            pos.y = pos.y.clamp(0.0, ARENA);
            hits.send(WallHit(entity));
        }
    }
}

/// A shield absorbs the hit and is used up; otherwise the particle freezes.
fn walls(
    mut hits: EventReader<WallHit>,
    mut shielded: Query<&mut Velocity, With<Shield>>,
    mut commands: Commands,
    mut stats: ResMut<FrameStats>,
) {
    (stats.frozen, stats.bounced) = (0, 0);
    for WallHit(entity) in hits.read() {
        if let Ok(mut vel) = shielded.get_mut(*entity) {
            vel.x = -vel.x;
            vel.y = -vel.y;
            commands.entity(*entity).remove::<Shield>();
            stats.bounced += 1;
        } else {
            commands.entity(*entity).insert(Frozen);
            stats.frozen += 1;
        }
    }
}

/// Everyone ages; frozen particles three times as fast. The expired are
/// despawned at the end of the frame.
fn aging(
    mut lives: Query<(Entity, &mut Lifetime, Option<&Frozen>)>,
    time: Res<Time>,
    mut commands: Commands,
    mut stats: ResMut<FrameStats>,
) {
    let dt = time.delta_secs();
    stats.expired = 0;
    for (entity, mut life, frozen) in lives.iter_mut() {
        life.0 -= if frozen.is_some() { 3.0 * dt } else { dt };
        if life.0 <= 0.0 {
            commands.despawn(entity);
            stats.expired += 1;
        }
    }
}

/// Starts the frame's counters at zero; `.debug()` runs it while paused
/// too, so a paused frame reports that nothing moved rather than repeating
/// the last frame's counts.
fn new_frame(mut stats: ResMut<FrameStats>) {
    *stats = FrameStats::default();
}

/// Counts the particles for the frame's figures; `.debug()` keeps it
/// running while paused.
fn census(mut stats: ResMut<FrameStats>, particles: Query<Option<&Frozen>, With<Position>>) {
    for frozen in particles.iter() {
        stats.alive += 1;
        stats.frozen_now += usize::from(frozen.is_some());
    }
}

/// A number that depends on every particle's position, bit for bit: the
/// same run gives the same checksum.
fn checksum(world: &World) -> u64 {
    let mut positions: Vec<(Entity, u64)> = world
        .query::<(Entity, &Position)>()
        .map(|(e, p)| (e, u64::from(p.x.to_bits()) << 32 | u64::from(p.y.to_bits())))
        .collect();
    positions.sort_unstable_by_key(|&(e, _)| e);
    positions
        .iter()
        .fold(0u64, |sum, &(e, bits)| (sum ^ bits ^ e.to_bits()).wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(5))
}

/// Draws the arena and keeps the frame's figures.
fn record(world: &World, schedule: &Schedule, frame: u64, recorder: &mut Recorder) -> std::io::Result<()> {
    let dots = world.query::<(&Position, Option<&Frozen>, Option<&Shield>)>().map(|(p, frozen, shield)| {
        let look = match (frozen, shield) {
            (Some(_), _) => Look::Frozen,
            (None, Some(_)) => Look::Shielded,
            (None, None) => Look::Flying,
        };
        (p.x, p.y, look)
    });
    recorder.picture(frame, ARENA, dots)?;
    let stats = world.resource::<FrameStats>();
    recorder.figures(Figures {
        frame,
        alive: stats.alive,
        frozen: stats.frozen_now,
        spawned: stats.spawned,
        despawned: stats.expired,
        systems: schedule.timings().iter().map(|t| (t.name().to_string(), t.last())).collect(),
    });
    Ok(())
}

/// Totals over some frames, for the summary lines.
#[derive(Default)]
struct Totals {
    frames: u64,
    paused: u64,
    slow: u64,
    spawned: usize,
    expired: usize,
}

impl Totals {
    fn add(&mut self, world: &World) {
        let (stats, time) = (world.resource::<FrameStats>(), world.resource::<Time>());
        self.frames += 1;
        self.paused += u64::from(time.is_paused());
        self.slow += u64::from(!time.is_paused() && time.scale() != 1.0);
        self.spawned += stats.spawned;
        self.expired += stats.expired;
    }

    fn line(&self, name: &str, world: &World) -> String {
        format!(
            "{name}: {} frames ({} paused, {} in slow motion), {} spawned, {} expired, {} alive at the end",
            self.frames,
            self.paused,
            self.slow,
            self.spawned,
            self.expired,
            world.len()
        )
    }
}

/// Where the pictures go: `--out DIR`, or `target/showcase`.
fn out_dir(args: &[String]) -> PathBuf {
    match args.iter().position(|a| a == "--out") {
        Some(i) => PathBuf::from(args.get(i + 1).expect("--out needs a folder")),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("target").join("showcase"),
    }
}

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let out = out_dir(&args);
    let mut recorder = Recorder::new(&out, 15, [8, 45, 75, 112])?;

    let mut world = World::new();
    world.insert_resource(Rng(0x2545_F491_4F6C_DD1D));
    world.init_resource::<FrameStats>();

    let mut schedule = Schedule::new();
    schedule.add_system(new_frame).priority(-10).debug();
    let moved = schedule.add_system(movement).id();
    schedule.add_system(walls).after(moved);
    schedule.add_system(aging).after(walls);
    schedule.add_system(spawn_wave).priority(-1).on_clear(|world| {
        // A new level: a fresh swarm, spawned directly into the empty world.
        let mut queue = CommandQueue::default();
        let mut rng = world.remove_resource::<Rng>().expect("inserted above");
        spawn_particles(&mut Commands::new(&mut queue, world), &mut rng, PARTICLES);
        queue.apply(world);
        world.insert_resource(rng);
    });
    schedule.add_system(census).priority(10).debug();

    // Level 1.
    let mut queue = CommandQueue::default();
    let mut rng = world.remove_resource::<Rng>().expect("inserted above");
    spawn_particles(&mut Commands::new(&mut queue, &world), &mut rng, PARTICLES);
    queue.apply(&mut world);
    world.insert_resource(rng);

    let mut level = Totals::default();
    for frame in 0..90 {
        match frame {
            30 => world.resource_mut::<Time>().pause(),
            40 => {
                world.resource_mut::<Time>().resume();
                world.resource_mut::<Time>().set_scale(0.25);
            }
            60 => world.resource_mut::<Time>().set_scale(1.0),
            _ => {}
        }
        world.resource_mut::<Time>().advance(FRAME);
        schedule.run(&mut world);
        level.add(&world);
        record(&world, &schedule, frame, &mut recorder)?;
    }
    println!("{}", level.line("level 1", &world));

    // Level 2: every entity goes, old handles stay stale, hooks set it up.
    schedule.clear_world(&mut world);
    let mut level = Totals::default();
    for frame in 90..120 {
        world.resource_mut::<Time>().advance(FRAME);
        schedule.run(&mut world);
        level.add(&world);
        record(&world, &schedule, frame, &mut recorder)?;
    }
    println!("{}", level.line("level 2", &world));

    let report = schedule.command_report();
    println!("last frame: {} commands applied, {} skipped", report.applied(), report.skipped());
    let files = recorder.finish()?;
    if args.iter().any(|a| a == "--readme") {
        let picture = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs").join("showcase.png");
        std::fs::copy(out.join("strip.png"), &picture)?;
        println!("refreshed {}", picture.display());
    }
    println!("{} pictures and a chart in {}", files.len() - 1, out.display());
    println!("(run checksum {:016x})", checksum(&world));
    Ok(())
}
