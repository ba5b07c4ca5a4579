//! Measures what a rollback costs, in a release build:
//!
//! - save + checksum, load, and the checksum alone, of 10,000 entities with
//!   four components (one a `String`), beside a floor: cloning the same
//!   values into preallocated `Vec`s with `clone_from`;
//! - one frame of the arena with 1,000 rocks under a sync test with a check
//!   distance of 8: a load, 8 resimulated steps with their saves, and the
//!   new frame's step and save.
//!
//! Each figure is the median of many runs, after a warm-up. Run with
//! `cargo run --release -p archetable-rollback --example rollback_speed`.
//!
//! With two arguments, `WORKLOAD RUNS`, it runs one workload `RUNS` times
//! after one warm-up run and prints nothing, for instruction counts under
//! callgrind (the count per run is the difference between two run counts
//! divided by their difference). The workloads: `save` (save + checksum,
//! nothing changed since the last save), `save-moved` (every `Position`
//! written, then save + checksum), `load` (nothing written since the
//! last load), `load-moved` (every `Position` written, then load),
//! `move` (the writes alone), `checksum` (hashing every value
//! anew), `arena` (one frame of the arena rolling back 8 frames), and
//! `save-tracked`, `save-tracked-moved`: the first two with the four types
//! declared `track_changes`, whose unchanged columns keep their hashes.

#[path = "../tests/it/arena.rs"]
mod arena;

use std::hash::Hash;
use std::time::{Duration, Instant};

use archetable_core::{Schedule, World};
use archetable_macros::Component;
use archetable_rollback::ggrs::SessionBuilder;
use archetable_rollback::{RollbackConfig, RollbackDriver, StableHasher};

#[derive(Component, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[component(clone)]
struct Position(i32, i32);

#[derive(Component, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[component(clone)]
struct Velocity(i32, i32);

#[derive(Component, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[component(clone)]
struct Health(u32);

#[derive(Component, Debug, PartialEq, Eq, Hash)]
#[component(clone)]
struct Name(String);

// By hand, so that a save's `clone_from` keeps each string's buffer:
// `derive(Clone)` would clone anew and drop the old string.
impl Clone for Name {
    fn clone(&self) -> Self {
        Name(self.0.clone())
    }

    fn clone_from(&mut self, source: &Self) {
        self.0.clone_from(&source.0);
    }
}

/// The same four types, declared with change ticks: a save keeps the
/// hashes of their columns that nothing wrote to.
mod tracked {
    use archetable_macros::Component;

    #[derive(Component, Clone, Copy, Debug, PartialEq, Eq, Hash)]
    #[component(clone, track_changes)]
    pub struct Position(pub i32, pub i32);

    #[derive(Component, Clone, Copy, Debug, PartialEq, Eq, Hash)]
    #[component(clone, track_changes)]
    pub struct Velocity(pub i32, pub i32);

    #[derive(Component, Clone, Copy, Debug, PartialEq, Eq, Hash)]
    #[component(clone, track_changes)]
    pub struct Health(pub u32);

    #[derive(Component, Debug, PartialEq, Eq, Hash)]
    #[component(clone, track_changes)]
    pub struct Name(pub String);

    impl Clone for Name {
        fn clone(&self) -> Self {
            Name(self.0.clone())
        }

        fn clone_from(&mut self, source: &Self) {
            self.0.clone_from(&source.0);
        }
    }
}

fn tracked_units() -> RollbackDriver<u8> {
    use tracked::*;
    let mut world = World::new();
    for i in 0..N as i32 {
        world.spawn((Position(i, -i), Velocity(1, 2), Health(100), Name(format!("unit {i}"))));
    }
    let mut driver: RollbackDriver<u8> = RollbackDriver::new(world, Schedule::new(), 60);
    driver.component::<Position>().component::<Velocity>().component::<Health>().component::<Name>();
    driver
        .copy_with_clone_from::<Position>()
        .copy_with_clone_from::<Velocity>()
        .copy_with_clone_from::<Health>()
        .copy_with_clone_from::<Name>();
    driver
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn measure(runs: usize, mut f: impl FnMut()) -> Duration {
    for _ in 0..runs / 10 + 1 {
        f();
    }
    median(
        (0..runs)
            .map(|_| {
                let start = Instant::now();
                f();
                start.elapsed()
            })
            .collect(),
    )
}

const N: usize = 10_000;

fn units() -> RollbackDriver<u8> {
    let mut world = World::new();
    for i in 0..N as i32 {
        world.spawn((Position(i, -i), Velocity(1, 2), Health(100), Name(format!("unit {i}"))));
    }
    let mut driver: RollbackDriver<u8> = RollbackDriver::new(world, Schedule::new(), 60);
    driver.component::<Position>().component::<Velocity>().component::<Health>().component::<Name>();
    driver
        .copy_with_clone_from::<Position>()
        .copy_with_clone_from::<Velocity>()
        .copy_with_clone_from::<Health>()
        .copy_with_clone_from::<Name>();
    driver
}

fn arena_driver() -> RollbackDriver<arena::Input> {
    let mut driver: RollbackDriver<arena::Input> = RollbackDriver::new(arena::world(1000), arena::schedule(), 60);
    arena::register(&mut driver);
    let session = SessionBuilder::<RollbackConfig<arena::Input>>::new()
        .with_num_players(2)
        .unwrap()
        .with_max_prediction_window(10)
        .with_check_distance(8)
        .start_synctest_session()
        .unwrap();
    driver.start(session).unwrap();
    driver
}

fn move_all(driver: &mut RollbackDriver<u8>) {
    for mut position in driver.world_mut().query_mut::<&mut Position>() {
        position.0 += 1;
    }
}

/// Runs one workload `runs` times, after one run to warm up.
fn repeat(workload: &str, runs: usize) {
    let mut driver = units();
    driver.save_now().unwrap();
    let mut run: Box<dyn FnMut()> = match workload {
        "save" => Box::new(move || {
            std::hint::black_box(driver.save_now().unwrap());
        }),
        "save-moved" => Box::new(move || {
            move_all(&mut driver);
            std::hint::black_box(driver.save_now().unwrap());
        }),
        "load" => Box::new(move || driver.load_frame(0).unwrap()),
        "load-moved" => Box::new(move || {
            move_all(&mut driver);
            driver.load_frame(0).unwrap();
        }),
        "move" => Box::new(move || move_all(&mut driver)),
        "save-tracked" => {
            let mut driver = tracked_units();
            driver.save_now().unwrap();
            Box::new(move || {
                std::hint::black_box(driver.save_now().unwrap());
            })
        }
        "save-tracked-moved" => {
            let mut driver = tracked_units();
            driver.save_now().unwrap();
            Box::new(move || {
                for mut position in driver.world_mut().query_mut::<&mut tracked::Position>() {
                    position.0 += 1;
                }
                std::hint::black_box(driver.save_now().unwrap());
            })
        }
        "checksum" => Box::new(move || {
            std::hint::black_box(driver.checksum());
        }),
        "arena" => {
            let mut driver = arena_driver();
            let mut frame = 0;
            for _ in 0..50 {
                driver.update(|handle, _| arena::script(handle, frame)).unwrap();
                frame += 1;
            }
            Box::new(move || {
                driver.update(|handle, _| arena::script(handle, frame)).unwrap();
                frame += 1;
            })
        }
        other => panic!("no workload {other:?}: see the top of this file"),
    };
    for _ in 0..=runs {
        run();
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [workload, runs] = &args[..] {
        repeat(workload, runs.parse().expect("a number of runs"));
        return;
    }
    let mut driver = units();
    let save = measure(200, || {
        std::hint::black_box(driver.save_now().unwrap());
    });
    let load = measure(200, || driver.load_frame(0).unwrap());
    let load_moved = measure(200, || {
        move_all(&mut driver);
        driver.load_frame(0).unwrap();
    });
    let checksum = measure(200, || {
        std::hint::black_box(driver.checksum());
    });
    let save_moved = measure(200, || {
        move_all(&mut driver);
        std::hint::black_box(driver.save_now().unwrap());
    });
    let copy = measure(200, || {
        std::hint::black_box(driver.world().try_clone().unwrap());
    });

    // The floor: the same values cloned into Vecs that keep their buffers.
    let source: Vec<(Position, Velocity, Health, Name)> = driver
        .world()
        .query::<(&Position, &Velocity, &Health, &Name)>()
        .map(|(p, v, h, n)| (*p, *v, *h, n.clone()))
        .collect();
    let (mut ps, mut vs, mut hs, mut ns) = (Vec::new(), Vec::new(), Vec::new(), Vec::<Name>::new());
    let floor = measure(200, || {
        ps.clear();
        vs.clear();
        hs.clear();
        ps.extend(source.iter().map(|s| s.0));
        vs.extend(source.iter().map(|s| s.1));
        hs.extend(source.iter().map(|s| s.2));
        ns.resize_with(source.len(), || Name(String::new()));
        for (dst, s) in ns.iter_mut().zip(&source) {
            dst.0.clone_from(&s.3 .0);
        }
        std::hint::black_box((&ps, &vs, &hs, &ns));
    });
    let floor_hash = measure(200, || {
        let mut h = StableHasher::new();
        source.hash(&mut h);
        std::hint::black_box(h.finish128());
    });

    println!("10,000 entities of Position, Velocity, Health, Name(String):");
    println!("  save + checksum        {:>9.1} us", us(save));
    println!("  load                   {:>9.1} us", us(load));
    println!("  every Position written, then load {:>9.1} us", us(load_moved));
    println!("  checksum alone, every value hashed anew {:>9.1} us", us(checksum));
    println!("  every Position written, then save + checksum {:>9.1} us", us(save_moved));
    let mut tracked = tracked_units();
    let save_tracked = measure(200, || {
        std::hint::black_box(tracked.save_now().unwrap());
    });
    let save_tracked_moved = measure(200, || {
        for mut position in tracked.world_mut().query_mut::<&mut tracked::Position>() {
            position.0 += 1;
        }
        std::hint::black_box(tracked.save_now().unwrap());
    });
    println!("the same, the four types declared track_changes:");
    println!("  save + checksum        {:>9.1} us", us(save_tracked));
    println!("  every Position written, then save + checksum {:>9.1} us", us(save_tracked_moved));
    println!("  World::try_clone alone {:>9.1} us", us(copy));
    println!("  floor: clone_from into kept Vecs {:>9.1} us", us(floor));
    println!("  floor: hash the same values      {:>9.1} us", us(floor_hash));

    // The arena with 1,000 rocks, 8 frames rolled back every frame.
    let mut driver = arena_driver();
    let mut frame = 0;
    let mut step = || {
        driver.update(|handle, _| arena::script(handle, frame)).unwrap();
        frame += 1;
    };
    for _ in 0..50 {
        step();
    }
    let rollback = measure(300, step);
    println!("arena, 1,000 rocks (about 1,020 entities), sync test with check distance 8:");
    println!("  one frame: load + 8 resimulated steps and saves + 1 step and save {:>9.1} us", us(rollback));
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}
