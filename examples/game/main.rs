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

#[cfg(feature = "inspect")]
mod page_client;
mod pictures;
mod sim;

use std::path::{Path, PathBuf};
use std::time::Duration;

use archetable::prelude::*;
use pictures::{Figures, Look, Recorder};
use sim::*;
// For the showcase's test, which checks the stages' ambiguity reports.
#[allow(unused_imports)]
pub use sim::new_game;

/// Frames in the run.
const FRAMES: u64 = 330;

// --- Pictures and the summary ---------------------------------------------------

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
/// `--page-client` runs a scripted client that asks what the page asks, at
/// its rates (see `page_client.rs`); `--fast` plays the frames back to
/// back, each 1/60 s of game time, for a profiler.
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
    let fast = args.iter().any(|a| a == "--fast");
    let mut inspector = Inspector::start(config)?;
    println!("inspector: {}", inspector.url());
    let client = args.iter().any(|a| a == "--page-client").then(|| page_client::PageClient::start(inspector.addr()));
    if !fast {
        println!("the fireworks run in real time; Ctrl-C ends them");
    }
    let frame_time = Duration::from_secs_f64(1.0 / 60.0);
    let mut last = Instant::now();
    let mut frame = 0;
    // What the inspector costs the game: each `update`'s time, summed up
    // when `--frames` ends the run.
    let mut updates = Vec::new();
    while frames.is_none_or(|n| frame < n) {
        let now = Instant::now();
        game.advance(if fast { frame_time } else { now - last });
        last = now;
        if let Some(client) = &client {
            client.before_frame(frame, || inspector.waiting());
        }
        let update = Instant::now();
        inspector.update(&mut game);
        if frames.is_some() {
            updates.push(update.elapsed());
        }
        if let Some(client) = &client {
            client.after_frame(frame);
        }
        frame += 1;
        if let Some(rest) = frame_time.checked_sub(now.elapsed()).filter(|_| !fast) {
            std::thread::sleep(rest);
        }
    }
    if !updates.is_empty() {
        updates.sort();
        let at = |q: f64| updates[((updates.len() - 1) as f64 * q) as usize].as_secs_f64() * 1e6;
        println!(
            "inspector.update over {} frames: median {:.1} us, p90 {:.1} us, p99 {:.1} us, max {:.1} us",
            updates.len(),
            at(0.5),
            at(0.9),
            at(0.99),
            at(1.0)
        );
    }
    drop(client);
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
