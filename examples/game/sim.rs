//! The showcase's simulation: components, resources, systems and the
//! `GameLoop` that runs them, without drawing or files, so that the
//! native run (`main.rs`) and the web page (`ecs-web`) play the same game
//! and can compare checksums.

use std::f32::consts::TAU;
use std::time::Duration;

use archetable::prelude::*;
use serde::{Deserialize, Serialize};

/// Where something is, in arena units (the floor is `y = 0`).
#[derive(Component, Clone, Copy, Debug, Default, Serialize, Deserialize)]
pub struct Position {
    pub x: f32,
    pub y: f32,
}

/// Arena units per second.
#[derive(Component, Clone, Copy, Debug, Default, Serialize, Deserialize)]
pub struct Velocity {
    pub x: f32,
    pub y: f32,
}

/// A rocket on its way up; it bursts when the fuse has burnt down.
#[derive(Component, Debug, Default, Serialize, Deserialize)]
pub struct Rocket {
    pub fuse: f32,
}

/// A spark of a burst, with the seconds it has left to glow.
#[derive(Component, Clone, Copy, Debug, Default, Serialize, Deserialize)]
pub struct Spark {
    pub life: f32,
}

/// Marker: the spark hit a wall and stuck. Frozen sparks fade three times
/// as fast.
#[derive(Component, Debug, Default, Serialize, Deserialize)]
pub struct Frozen;

/// Absorbs one wall hit (the spark bounces instead of freezing), then is
/// removed.
#[derive(Component, Debug, Default, Serialize, Deserialize)]
pub struct Shield;

#[derive(Bundle)]
pub struct RocketBundle {
    pub position: Position,
    pub velocity: Velocity,
    pub rocket: Rocket,
}

#[derive(Bundle)]
pub struct SparkBundle {
    pub position: Position,
    pub velocity: Velocity,
    pub spark: Spark,
}

/// Sent by `motion` when a spark reaches a wall; `floor_or_ceiling` says
/// which way it bounces.
pub struct WallHit {
    pub spark: Entity,
    pub floor_or_ceiling: bool,
}

/// The screens of the game.
#[derive(States, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Screen {
    Menu,
    Playing,
    GameOver,
}

/// What happened this frame, over all its fixed steps.
#[derive(Default, Debug, Serialize, Deserialize)]
pub struct FrameStats {
    pub spawned: usize,
    pub despawned: usize,
    pub bursts: usize,
    pub frozen: usize,
    pub bounced: usize,
    /// Alive at the end of the frame, counted by `census`.
    pub alive: usize,
    /// Of those, frozen.
    pub frozen_now: usize,
}

/// The current level and its running totals.
#[derive(Default, Debug, Serialize, Deserialize)]
pub struct Level {
    pub number: u32,
    pub bursts: usize,
    pub bounced: usize,
    pub frozen: usize,
}

/// Lines for the terminal, printed at the end.
#[derive(Default)]
pub struct Log(pub Vec<String>);

pub const ARENA: f32 = 100.0;
pub const GRAVITY: f32 = -30.0;
/// Sparks per burst.
pub const BURST: usize = 90;
/// Seconds between two rockets.
pub const LAUNCH_EVERY: f32 = 0.25;
/// Sparks frozen to the walls that end a level.
pub const ICED_OVER: usize = 400;
/// The made-up time of one frame: 30 frames a second, two physics steps
/// each.
pub const FRAME: Duration = Duration::from_nanos(1_000_000_000 / 30);

/// A xorshift64 generator: enough randomness for a demo, and deterministic.
pub struct Rng(u64);

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
}

/// `(cos, sin)` of an angle from `f32` arithmetic alone. The standard
/// library's `cos` and `sin` come from the platform's maths library
/// (glibc natively, a port of musl's in wasm), which may round the last bit
/// differently, and the run must end with the same checksum everywhere.
/// A polynomial on a quarter turn, to within a few units in the last place.
fn cos_sin(angle: f32) -> (f32, f32) {
    use std::f32::consts::FRAC_PI_2;
    let quarter = (angle / FRAC_PI_2).round();
    let r = angle - quarter * FRAC_PI_2;
    let r2 = r * r;
    let sin = r * (1.0 + r2 * (-1.0 / 6.0 + r2 * (1.0 / 120.0 - r2 / 5040.0)));
    let cos = 1.0 + r2 * (-0.5 + r2 * (1.0 / 24.0 + r2 * (-1.0 / 720.0 + r2 / 40320.0)));
    match (quarter as i32).rem_euclid(4) {
        0 => (cos, sin),
        1 => (-sin, cos),
        2 => (-cos, -sin),
        _ => (sin, -cos),
    }
}

// --- Every frame ------------------------------------------------------------

/// Starts the frame's counters at zero, in a stage of our own before the
/// physics; `.debug()` runs it while paused too, so a paused frame reports
/// that nothing happened rather than repeating the last frame's counts.
fn new_frame(mut stats: ResMut<FrameStats>) {
    *stats = FrameStats::default();
}

/// Counts what is alive for the frame's figures (`.debug()`: paused too).
fn census(mut stats: ResMut<FrameStats>, sparks: Query<Option<&Frozen>, With<Position>>) {
    for frozen in sparks.iter() {
        stats.alive += 1;
        stats.frozen_now += usize::from(frozen.is_some());
    }
}

// --- Physics: fixed_update, 60 steps a second -------------------------------

/// Gravity and motion for everything that is not frozen; sparks that reach
/// a wall are reported, rockets just stay inside.
fn motion(
    mut moving: Query<(Entity, &mut Position, &mut Velocity, Option<&Rocket>), Without<Frozen>>,
    fixed: Res<FixedTime>,
    mut hits: EventWriter<WallHit>,
) {
    let dt = fixed.step_secs();
    for (entity, mut pos, mut vel, rocket) in moving.iter_mut() {
        vel.y += GRAVITY * dt;
        pos.x += vel.x * dt;
        pos.y += vel.y * dt;
        let off_x = !(0.0..=ARENA).contains(&pos.x);
        let off_y = !(0.0..=ARENA).contains(&pos.y);
        if off_x || off_y {
            pos.x = pos.x.clamp(0.0, ARENA);
            pos.y = pos.y.clamp(0.0, ARENA);
            if rocket.is_none() {
                hits.send(WallHit { spark: entity, floor_or_ceiling: off_y });
            }
        }
    }
}

/// A shield absorbs the hit and is used up; otherwise the spark freezes.
fn walls(
    mut hits: EventReader<WallHit>,
    mut shielded: Query<&mut Velocity, With<Shield>>,
    mut commands: Commands,
    mut stats: ResMut<FrameStats>,
) {
    for hit in hits.read() {
        if let Ok(mut vel) = shielded.get_mut(hit.spark) {
            if hit.floor_or_ceiling {
                vel.y *= -0.8;
            } else {
                vel.x = -vel.x;
            }
            commands.entity(hit.spark).remove::<Shield>();
            stats.bounced += 1;
        } else {
            commands.entity(hit.spark).insert(Frozen);
            stats.frozen += 1;
        }
    }
}

/// Rockets whose fuse has burnt down burst into a ring of sparks; every
/// fourth spark carries a shield.
fn fuses(
    mut rockets: Query<(Entity, &mut Rocket, &Position, &Velocity)>,
    fixed: Res<FixedTime>,
    mut rng: ResMut<Rng>,
    mut commands: Commands,
    mut stats: ResMut<FrameStats>,
) {
    for (entity, mut rocket, pos, vel) in rockets.iter_mut() {
        rocket.fuse -= fixed.step_secs();
        if rocket.fuse > 0.0 {
            continue;
        }
        commands.despawn(entity);
        let speed = rng.range(18.0, 32.0);
        for i in 0..BURST {
            let angle = TAU * i as f32 / BURST as f32 + rng.range(0.0, 0.05);
            let s = speed * rng.range(0.7, 1.0);
            let (cos, sin) = cos_sin(angle);
            let mut spark = commands.spawn(SparkBundle {
                position: *pos,
                velocity: Velocity { x: 0.3 * vel.x + s * cos, y: 0.3 * vel.y + s * sin },
                spark: Spark { life: rng.range(1.6, 2.6) },
            });
            if i % 4 == 0 {
                spark.insert(Shield);
            }
        }
        stats.bursts += 1;
        stats.spawned += BURST;
        stats.despawned += 1;
    }
}

/// Sparks fade; frozen ones three times as fast. The faded are despawned.
fn fading(
    mut sparks: Query<(Entity, &mut Spark, Option<&Frozen>)>,
    fixed: Res<FixedTime>,
    mut commands: Commands,
    mut stats: ResMut<FrameStats>,
) {
    let dt = fixed.step_secs();
    for (entity, mut spark, frozen) in sparks.iter_mut() {
        spark.life -= if frozen.is_some() { 3.0 * dt } else { dt };
        if spark.life <= 0.0 {
            commands.despawn(entity);
            stats.despawned += 1;
        }
    }
}

// --- Update: input, launches, and the state machine -------------------------

/// Stands in for the player: "presses start" after half a second of menu.
fn menu(time: Res<Time>, mut waited: Local<f32>, mut next: ResMut<NextState<Screen>>) {
    *waited += time.delta_secs();
    if *waited >= 0.5 {
        *waited = 0.0;
        next.set(Screen::Playing);
    }
}

/// A rocket every `LAUNCH_EVERY` seconds of game time, from the floor.
fn launch(
    time: Res<Time>,
    mut timer: Local<f32>,
    mut rng: ResMut<Rng>,
    mut commands: Commands,
    mut stats: ResMut<FrameStats>,
) {
    *timer += time.delta_secs();
    while *timer >= LAUNCH_EVERY {
        *timer -= LAUNCH_EVERY;
        commands.spawn(RocketBundle {
            position: Position { x: rng.range(20.0, 80.0), y: 0.0 },
            velocity: Velocity { x: rng.range(-8.0, 8.0), y: rng.range(52.0, 62.0) },
            rocket: Rocket { fuse: rng.range(1.0, 1.4) },
        });
        stats.spawned += 1;
    }
}

/// Keeps the level's totals; the game is over once enough sparks have
/// frozen to the walls.
fn referee(mut level: ResMut<Level>, stats: Res<FrameStats>, mut next: ResMut<NextState<Screen>>) {
    level.bursts += stats.bursts;
    level.bounced += stats.bounced;
    level.frozen += stats.frozen;
    if level.frozen >= ICED_OVER {
        next.set(Screen::GameOver);
    }
}

/// Shows the fireworks fade for a second, then asks for a cleared world and
/// the menu.
fn game_over(
    time: Res<Time>,
    mut waited: Local<f32>,
    mut commands: Commands,
    mut next: ResMut<NextState<Screen>>,
    mut log: ResMut<Log>,
) {
    *waited += time.delta_secs();
    if *waited >= 1.0 {
        *waited = 0.0;
        commands.clear_world();
        next.set(Screen::Menu);
        log.0.push("game over: the world is cleared, back to the menu".to_string());
    }
}

fn start_level(mut level: ResMut<Level>, mut log: ResMut<Log>) {
    level.number += 1;
    (level.bursts, level.bounced, level.frozen) = (0, 0, 0);
    log.0.push(format!("level {}: playing", level.number));
}

fn end_level(level: Res<Level>, time: Res<Time>, mut log: ResMut<Log>) {
    log.0.push(format!(
        "level {}: iced over at {:.1} s of game time: {} bursts, {} sparks frozen, {} bounced",
        level.number,
        time.elapsed().as_secs_f32(),
        level.bursts,
        level.frozen,
        level.bounced
    ));
}

// --- The game and its checksum ---------------------------------------------

/// The game: its resources, stages, systems and states.
pub fn new_game(parallel: bool) -> GameLoop {
    let mut game = if parallel { GameLoop::new() } else { GameLoop::single_threaded() };
    game.set_fixed_step(Duration::from_secs_f64(1.0 / 60.0)).set_max_fixed_steps(4);
    if parallel {
        // Parallel even for systems this small, to show it changes nothing.
        game.set_parallel_threshold(Duration::ZERO);
    }
    game.add_state(Screen::Menu)
        .insert_resource(Rng(0x2545_F491_4F6C_DD1D))
        .init_resource::<FrameStats>()
        .init_resource::<Level>()
        .init_resource::<Log>();

    game.add_stage_before(Stage::FixedUpdate, "frame_start").add_system(new_frame).debug();
    // Physics: four steps, each after the one before, as one set.
    game.add_systems(Stage::FixedUpdate, (motion, walls, fuses, fading).chain().in_set("physics"));
    // One state's systems run in a frame, which the schedule cannot know:
    // the chain orders the systems that set `NextState<Screen>`, and puts
    // `referee` after the `FrameStats` that `launch` writes (the order they
    // always ran in), so the stage reports no ambiguous pair.
    game.add_systems(
        Stage::Update,
        (
            menu.run_if(in_state(Screen::Menu)),
            (launch, referee).chain().run_if(in_state(Screen::Playing)),
            game_over.run_if(in_state(Screen::GameOver)),
        )
            .chain(),
    );
    game.add_systems(Stage::LateUpdate, census.debug());
    game.on_enter(Screen::Playing, start_level);
    game.on_exit(Screen::Playing, end_level);
    game
}

/// A number that depends on every entity's handle and position, bit for
/// bit: the same run gives the same checksum.
pub fn checksum(world: &World) -> u64 {
    let mut positions: Vec<(Entity, u64)> = world
        .query::<(Entity, &Position)>()
        .map(|(e, p)| (e, u64::from(p.x.to_bits()) << 32 | u64::from(p.y.to_bits())))
        .collect();
    positions.sort_unstable_by_key(|&(e, _)| e);
    positions
        .iter()
        .fold(0u64, |sum, &(e, bits)| (sum ^ bits ^ e.to_bits()).wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(5))
}
