//! Measures saving and loading 100,000 entities of 4 components in every
//! format: the median time of several runs, and the size of each save.
//!
//! ```sh
//! cargo run --release -p archetable-serde --example save_load_speed [ENTITIES] [RUNS]
//! ```

use std::time::{Duration, Instant};

use archetable::prelude::*;
use serde::{Deserialize, Serialize};

/// Where an entity is.
#[derive(Component, Serialize, Deserialize, Default, Clone, Copy, PartialEq, Debug)]
struct Position {
    x: f32,
    y: f32,
    z: f32,
}

/// How it moves.
#[derive(Component, Serialize, Deserialize, Default, Clone, Copy, PartialEq, Debug)]
struct Velocity {
    x: f32,
    y: f32,
    z: f32,
}

/// Hit points.
#[derive(Component, Serialize, Deserialize, Default, Clone, Copy, PartialEq, Debug)]
struct Health {
    current: u32,
    max: u32,
}

/// Which side it is on.
#[derive(Component, Serialize, Deserialize, Default, Clone, Copy, PartialEq, Debug)]
enum Team {
    #[default]
    Red,
    Blue,
}

fn world(n: usize) -> World {
    let mut world = World::new();
    world
        .register_serde::<Position>("Position")
        .register_serde::<Velocity>("Velocity")
        .register_serde::<Health>("Health")
        .register_serde::<Team>("Team");
    // Varied values, so the text formats write realistic numbers.
    let mut seed = 0x9E37_79B9_u32;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        seed
    };
    let mut unit = move || (next() % 20_000) as f32 / 100.0 - 100.0;
    let bundles: Vec<_> = (0..n)
        .map(|i| {
            (
                Position { x: unit(), y: unit(), z: unit() },
                Velocity { x: unit(), y: unit(), z: unit() },
                Health { current: (i % 100) as u32, max: 100 },
                if i % 2 == 0 { Team::Red } else { Team::Blue },
            )
        })
        .collect();
    world.spawn_batch(bundles).for_each(drop);
    world
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn measure<T>(runs: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut times = Vec::with_capacity(runs);
    let mut last = None;
    for _ in 0..runs {
        let start = Instant::now();
        let out = f();
        times.push(start.elapsed());
        last = Some(out);
    }
    (median(times), last.expect("at least one run"))
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(100_000);
    let runs: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(7);
    let world = world(n);
    let registry = world.serde_registry();
    println!("{n} entities x 4 components, median of {runs} runs");
    println!("| format | save | load (fresh world) | load (merge) | size | bytes/entity |");
    println!("|---|---|---|---|---|---|");

    let (save, json) = measure(runs, || world.save_json().unwrap().data);
    let (load, copy) = measure(runs, || World::load_json(&registry, &json).unwrap());
    let (merge, _) = measure(runs, || world.serde_registry_world().load_into_json(&json).unwrap());
    check(&world, &copy);
    row("JSON", save, load, merge, json.len(), n);

    let (save, ron) = measure(runs, || world.save_ron().unwrap().data);
    let (load, copy) = measure(runs, || World::load_ron(&registry, &ron).unwrap());
    let (merge, _) = measure(runs, || world.serde_registry_world().load_into_ron(&ron).unwrap());
    check(&world, &copy);
    row("RON", save, load, merge, ron.len(), n);

    let (save, bin) = measure(runs, || world.save_binary().unwrap().data);
    let (load, copy) = measure(runs, || World::load_binary(&registry, &bin).unwrap());
    let (merge, _) = measure(runs, || world.serde_registry_world().load_into_binary(&bin).unwrap());
    check(&world, &copy);
    row("binary (postcard)", save, load, merge, bin.len(), n);
}

fn row(name: &str, save: Duration, load: Duration, merge: Duration, size: usize, n: usize) {
    println!(
        "| {name} | {} | {} | {} | {:.2} MB | {:.1} |",
        ms(save),
        ms(load),
        ms(merge),
        size as f64 / 1e6,
        size as f64 / n as f64
    );
}

/// The loaded world holds the same values under the same handles.
fn check(original: &World, copy: &World) {
    assert_eq!(original.len(), copy.len());
    for (e, p) in original.query::<(Entity, &Position)>() {
        assert_eq!(copy.get::<Position>(e), Some(p));
        assert_eq!(copy.get::<Team>(e), original.get::<Team>(e));
    }
}

/// An empty world with the same registry, to merge into.
trait EmptyCopy {
    fn serde_registry_world(&self) -> World;
}

impl EmptyCopy for World {
    fn serde_registry_world(&self) -> World {
        let mut world = World::new();
        world.insert_resource(self.serde_registry());
        world
    }
}
