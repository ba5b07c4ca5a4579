//! Fireworks in a walled arena, run by a `GameLoop`: rockets climb from the
//! floor and burst into sparks; sparks fall, bounce off a wall if a shield
//! absorbs the hit, stick and freeze otherwise, fade and vanish. When the
//! floor is iced over, the game is over, and the next level starts from a
//! cleared world. It shows the API a newcomer needs:
//!
//! - `#[derive(Component)]`, `#[derive(Bundle)]`, `#[derive(States)]`,
//!   resources, `Time` and `FixedTime`;
//! - systems as plain functions: `Query` with filters, `Res`/`ResMut`,
//!   `Commands` (deferred spawn, insert, remove, despawn, `clear_world`),
//!   events, `Local`;
//! - a `GameLoop`: physics in `fixed_update` at 60 steps a second whatever
//!   the frame rate (a chain of systems in a set), a stage of our own
//!   before it, `on_enter`/`on_exit` systems and `in_state` conditions
//!   shared by several systems for a menu / playing / game-over state
//!   machine, `.debug()` systems that run while paused, slow motion
//!   with `Time::set_scale`, a hitch absorbed by the cap on fixed steps,
//!   drawing between two physics steps with `FixedTime::alpha`.
//!
//! The run draws itself (see `pictures.rs`): an animated GIF of the arena,
//! a PNG every few frames, a strip of four moments and a chart of the
//! per-frame figures, written into a folder it names at the end. It is
//! deterministic: the random numbers come from a small xorshift generator
//! with a fixed seed, frame times are made up rather than measured, and
//! systems that touch the same data always run in the same order, so every
//! run ends with the same checksum.
//!
//! ```text
//! cargo run --release --example game                      # pictures into target/showcase
//! cargo run --release --example game -- --out some/folder
//! cargo run --release --example game -- --readme          # also refresh docs/showcase.png
//! cargo run --release --example game --features inspect -- --inspect
//!                          # plays in real time, with the live inspector's page at the address it prints
//! ```

mod pictures;

use std::f32::consts::TAU;
use std::path::{Path, PathBuf};
use std::time::Duration;

use archetable::prelude::*;
use pictures::{Figures, Look, Recorder};
use serde::{Deserialize, Serialize};

/// Where something is, in arena units (the floor is `y = 0`).
#[derive(Component, Clone, Copy, Debug, Default, Serialize, Deserialize)]
struct Position {
    x: f32,
    y: f32,
}

/// Arena units per second.
#[derive(Component, Clone, Copy, Debug, Default, Serialize, Deserialize)]
struct Velocity {
    x: f32,
    y: f32,
}

/// A rocket on its way up; it bursts when the fuse has burnt down.
#[derive(Component, Debug, Default, Serialize, Deserialize)]
struct Rocket {
    fuse: f32,
}

/// A spark of a burst, with the seconds it has left to glow.
#[derive(Component, Clone, Copy, Debug, Default, Serialize, Deserialize)]
struct Spark {
    life: f32,
}

/// Marker: the spark hit a wall and stuck. Frozen sparks fade three times
/// as fast.
#[derive(Component, Debug, Default, Serialize, Deserialize)]
struct Frozen;

/// Absorbs one wall hit (the spark bounces instead of freezing), then is
/// removed.
#[derive(Component, Debug, Default, Serialize, Deserialize)]
struct Shield;

#[derive(Bundle)]
struct RocketBundle {
    position: Position,
    velocity: Velocity,
    rocket: Rocket,
}

#[derive(Bundle)]
struct SparkBundle {
    position: Position,
    velocity: Velocity,
    spark: Spark,
}

/// Sent by `motion` when a spark reaches a wall; `floor_or_ceiling` says
/// which way it bounces.
struct WallHit {
    spark: Entity,
    floor_or_ceiling: bool,
}

/// The screens of the game.
#[derive(States, Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Screen {
    Menu,
    Playing,
    GameOver,
}

/// What happened this frame, over all its fixed steps.
#[derive(Default, Debug, Serialize, Deserialize)]
struct FrameStats {
    spawned: usize,
    despawned: usize,
    bursts: usize,
    frozen: usize,
    bounced: usize,
    /// Alive at the end of the frame, counted by `census`.
    alive: usize,
    /// Of those, frozen.
    frozen_now: usize,
}

/// The current level and its running totals.
#[derive(Default, Debug, Serialize, Deserialize)]
struct Level {
    number: u32,
    bursts: usize,
    bounced: usize,
    frozen: usize,
}

/// Lines for the terminal, printed at the end.
#[derive(Default)]
struct Log(Vec<String>);

const ARENA: f32 = 100.0;
const GRAVITY: f32 = -30.0;
/// Sparks per burst.
const BURST: usize = 90;
/// Seconds between two rockets.
const LAUNCH_EVERY: f32 = 0.25;
/// Sparks frozen to the walls that end a level.
const ICED_OVER: usize = 400;
/// The made-up time of one frame: 30 frames a second, two physics steps
/// each.
const FRAME: Duration = Duration::from_nanos(1_000_000_000 / 30);
/// Frames in the run.
const FRAMES: u64 = 330;

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
            let mut spark = commands.spawn(SparkBundle {
                position: *pos,
                velocity: Velocity { x: 0.3 * vel.x + s * angle.cos(), y: 0.3 * vel.y + s * angle.sin() },
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

// --- Pictures and the summary ---------------------------------------------------

/// A number that depends on every entity's handle and position, bit for
/// bit: the same run gives the same checksum.
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

/// Draws the arena (positions moved on by `alpha` of a step, so motion is
/// smooth between physics steps) and keeps the frame's figures.
fn record(game: &GameLoop, frame: u64, recorder: &mut Recorder) -> std::io::Result<()> {
    let world = game.world();
    let ahead = (game.alpha() as f32) * game.fixed_time().step_secs();
    let dots = world.query::<(&Position, &Velocity, Option<&Spark>, Option<&Frozen>, Option<&Shield>)>().map(
        |(p, v, spark, frozen, shield)| {
            let look = match (spark, frozen, shield) {
                (None, ..) => Look::Rocket,
                (Some(_), Some(_), _) => Look::Frozen,
                (Some(_), None, Some(_)) => Look::Shielded,
                (Some(s), None, None) if s.life > 1.5 => Look::Hot,
                (Some(s), None, None) if s.life > 0.7 => Look::Warm,
                (Some(_), None, None) => Look::Cool,
            };
            let (dx, dy) = if frozen.is_some() { (0.0, 0.0) } else { (v.x * ahead, v.y * ahead) };
            (p.x + dx, p.y + dy, look)
        },
    );
    recorder.picture(frame, ARENA, dots)?;
    let stats = world.resource::<FrameStats>();
    let systems = [Stage::FixedUpdate, Stage::Update]
        .into_iter()
        .flat_map(|stage| {
            game.stage(stage).timings().iter().map(|t| (t.name().to_string(), t.last())).collect::<Vec<_>>()
        })
        .collect();
    recorder.figures(Figures {
        frame,
        alive: stats.alive,
        frozen: stats.frozen_now,
        spawned: stats.spawned,
        despawned: stats.despawned,
        systems,
    });
    Ok(())
}

/// Where the pictures go: `--out DIR`, or `target/showcase`.
fn out_dir(args: &[String]) -> PathBuf {
    match args.iter().position(|a| a == "--out") {
        Some(i) => PathBuf::from(args.get(i + 1).expect("--out needs a folder")),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("target").join("showcase"),
    }
}

/// What a run leaves behind.
pub struct Run {
    /// The lines the game logged, in order.
    pub log: Vec<String>,
    /// Physics steps run.
    pub steps: u64,
    /// Physics steps dropped by the cap on steps per frame.
    pub dropped: u64,
    /// Frames during which the game was paused.
    pub paused_frames: u32,
    /// The files written.
    pub files: Vec<PathBuf>,
    /// See [`checksum`].
    pub checksum: u64,
}

/// The game: its resources, stages, systems and states.
fn new_game(parallel: bool) -> GameLoop {
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
    game.add_systems(Stage::Update, menu.run_if(in_state(Screen::Menu)));
    game.add_systems(Stage::Update, (launch, referee).run_if(in_state(Screen::Playing)));
    game.add_systems(Stage::Update, game_over.run_if(in_state(Screen::GameOver)));
    game.add_systems(Stage::LateUpdate, census.debug());
    game.on_enter(Screen::Playing, start_level);
    game.on_exit(Screen::Playing, end_level);
    game
}

/// Plays the scripted run, drawing it into `out`; `parallel` lets the
/// loop run systems on threads (the result is the same either way).
pub fn play(out: &Path, parallel: bool) -> std::io::Result<Run> {
    let mut game = new_game(parallel);
    let mut recorder = Recorder::new(out, 30, [75, 115, 165, 320])?;
    let mut paused_frames = 0;
    for frame in 0..FRAMES {
        // The run's script: a pause, slow motion, and one long hitch.
        let time = game.world_mut().resource_mut::<Time>();
        match frame {
            60 => time.pause(),
            68 => time.resume(),
            90 => time.set_scale(0.25),
            120 => time.set_scale(1.0),
            _ => {}
        }
        paused_frames += u32::from(time.is_paused());
        let real_dt = if frame == 140 { Duration::from_millis(400) } else { FRAME };
        game.advance(real_dt);
        record(&game, frame, &mut recorder)?;
    }
    Ok(Run {
        log: std::mem::take(&mut game.world_mut().resource_mut::<Log>().0),
        steps: game.fixed_time().index(),
        dropped: game.fixed_time().dropped_total(),
        paused_frames,
        files: recorder.finish()?,
        checksum: checksum(game.world()),
    })
}

/// The value after `name` in the arguments.
#[cfg(feature = "inspect")]
fn option<'a>(args: &'a [String], name: &str) -> Option<&'a str> {
    args.iter()
        .position(|a| a == name)
        .map(|i| args.get(i + 1).map(String::as_str).unwrap_or_else(|| panic!("{name} needs a value")))
}

/// `--inspect`: plays in real time, level after level (or for
/// `--frames N`), with the live inspector: its page is at the address
/// printed (`--port N` to choose it). The components and resources are
/// registered with serde, so the page shows and edits their values.
#[cfg(feature = "inspect")]
fn inspect(args: &[String]) -> std::io::Result<()> {
    use archetable::inspect::{Inspector, InspectorConfig};
    use std::time::Instant;

    let mut game = new_game(true);
    game.world_mut()
        .register_serde::<Position>("Position")
        .register_serde::<Velocity>("Velocity")
        .register_serde::<Rocket>("Rocket")
        .register_serde::<Spark>("Spark")
        .register_serde::<Frozen>("Frozen")
        .register_serde::<Shield>("Shield")
        .register_serde_resource::<FrameStats>("FrameStats")
        .register_serde_resource::<Level>("Level");
    let mut config = InspectorConfig::new();
    if let Some(port) = option(args, "--port") {
        config = config.port(port.parse().expect("--port needs a number"));
    }
    let frames: Option<u64> = option(args, "--frames").map(|n| n.parse().expect("--frames needs a number"));
    let mut inspector = Inspector::start(config)?;
    println!("inspector: {}", inspector.url());
    println!("the fireworks run in real time; Ctrl-C ends them");
    let frame_time = Duration::from_secs_f64(1.0 / 60.0);
    let mut last = Instant::now();
    let mut frame = 0;
    while frames.is_none_or(|n| frame < n) {
        let now = Instant::now();
        game.advance(now - last);
        last = now;
        inspector.update(&mut game);
        frame += 1;
        if let Some(rest) = frame_time.checked_sub(now.elapsed()) {
            std::thread::sleep(rest);
        }
    }
    Ok(())
}

#[cfg(not(feature = "inspect"))]
fn inspect(_args: &[String]) -> std::io::Result<()> {
    eprintln!(
        "the inspector is the `inspect` feature: cargo run --release --example game --features inspect -- --inspect"
    );
    std::process::exit(2)
}

#[allow(dead_code)] // A test includes this file as a module and calls `play`.
fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--inspect") {
        return inspect(&args);
    }
    let out = out_dir(&args);
    let run = play(&out, true)?;
    for line in &run.log {
        println!("{line}");
    }
    println!(
        "{FRAMES} frames ({} paused), {} physics steps; the 400 ms hitch dropped {} of them",
        run.paused_frames, run.steps, run.dropped
    );
    if args.iter().any(|a| a == "--readme") {
        let picture = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs").join("showcase.png");
        std::fs::copy(out.join("strip.png"), &picture)?;
        println!("refreshed {}", picture.display());
    }
    println!("{} pictures and a chart in {}", run.files.len() - 1, out.display());
    println!("(run checksum {:016x})", run.checksum);
    Ok(())
}
