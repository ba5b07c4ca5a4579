//! Memory per entity: spawns 1,000,000 entities of `(Position, Velocity)`
//! and reports the bytes of component data per entity, the world's own
//! count of table bytes (`World::allocated_bytes`) per entity, and the growth
//! of the process's peak resident memory (`VmHWM` in `/proc/self/status`,
//! Linux only), so the overhead beyond component data can be stated.
//!
//! Two scenarios, each in a fresh process so one's peak does not hide the
//! other's: `spawn` (one `spawn` call per entity, columns growing by
//! doubling) and `batch` (one `spawn_batch` of exactly 1,000,000, reserved
//! up front).
//!
//! ```text
//! cargo run --release -p ecs-bench --bin memory            # both scenarios
//! cargo run --release -p ecs-bench --bin memory -- batch   # one
//! ```

use std::process::{Command, ExitCode};

use ecs::World;
use ecs_bench::{Position, Velocity};

const ENTITIES: usize = 1_000_000;
const SCENARIOS: [&str; 2] = ["spawn", "batch"];

fn main() -> ExitCode {
    match std::env::args().nth(1).as_deref() {
        None => {
            println!("{ENTITIES} entities of (Position, Velocity)");
            println!("component data: {} bytes per entity", component_bytes());
            for scenario in SCENARIOS {
                let exe = std::env::current_exe().expect("path of this program");
                let status = Command::new(exe).arg(scenario).status().expect("run a scenario");
                if !status.success() {
                    return ExitCode::FAILURE;
                }
            }
            ExitCode::SUCCESS
        }
        Some(scenario) if SCENARIOS.contains(&scenario) => {
            measure(scenario);
            ExitCode::SUCCESS
        }
        Some(other) => {
            eprintln!("unknown scenario `{other}`; expected one of {SCENARIOS:?} or none");
            ExitCode::FAILURE
        }
    }
}

fn component_bytes() -> usize {
    size_of::<Position>() + size_of::<Velocity>()
}

fn bundle(i: usize) -> (Position, Velocity) {
    let f = i as f32;
    (Position([f, f, f]), Velocity([1.0, 0.0, 0.0]))
}

fn measure(scenario: &str) {
    let before = peak_resident_bytes();
    let mut world = World::new();
    if scenario == "batch" {
        world.spawn_batch((0..ENTITIES).map(bundle)).for_each(drop);
    } else {
        for i in 0..ENTITIES {
            world.spawn(bundle(i));
        }
    }
    let after = peak_resident_bytes();
    assert_eq!(world.len(), ENTITIES);

    let data = component_bytes() as f64;
    let per_entity = |bytes: usize| bytes as f64 / ENTITIES as f64;
    let allocated = per_entity(world.allocated_bytes());
    println!("\n[{scenario}]");
    println!(
        "  allocated_bytes:   {allocated:6.2} bytes/entity, overhead {:6.2} beyond component data",
        allocated - data
    );
    match (before, after) {
        (Some(before), Some(after)) => {
            let grown = per_entity(after.saturating_sub(before));
            println!("  peak resident:     {:.1} MiB before, {:.1} MiB after", mib(before), mib(after));
            println!(
                "  peak growth:       {grown:6.2} bytes/entity, overhead {:6.2} beyond component data",
                grown - data
            );
        }
        _ => println!("  peak resident:     unavailable (no VmHWM in /proc/self/status)"),
    }
}

fn mib(bytes: usize) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// The process's peak resident set size, from `VmHWM` (reported in kB).
fn peak_resident_bytes() -> Option<usize> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    let kib: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}
