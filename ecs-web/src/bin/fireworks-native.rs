//! The native side of the web checks: the scripted run's checksum, the
//! digest of the pass over every layer, and the figures' timings, printed
//! in the same lines the Node run prints, for `scripts/web-test.sh` to
//! compare.
//!
//! ```text
//! fireworks-native checksum [FRAMES]   # checksum FRAMES HEX
//! fireworks-native layers              # layers HEX
//! fireworks-native figures             # query_us ..., schedule_us ..., schedule_one_thread_us ...
//! ```

use std::time::Instant;

use archetable_web::figures::{Workloads, ENTITIES};
use archetable_web::{layers, script};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("checksum") => {
            let frames = match args.get(1) {
                Some(n) => n.parse().expect("FRAMES is a number"),
                None => script::FRAMES,
            };
            let game = script::run(frames, true);
            println!("checksum {frames} {:016x}", game.checksum());
        }
        Some("layers") => {
            println!("layers {:016x}", layers::digest());
            for (name, check) in layers::CHECKS {
                println!("  {name} {:016x}", check());
            }
        }
        Some("figures") => figures(),
        _ => {
            eprintln!("usage: fireworks-native checksum [FRAMES] | layers | figures");
            std::process::exit(2);
        }
    }
}

/// Median microseconds per call of `f` over `runs` runs of `reps` calls.
fn median_us(runs: usize, reps: u32, mut f: impl FnMut() -> f32) -> f64 {
    let mut sink = 0.0f32;
    let mut times: Vec<f64> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..reps {
                sink += std::hint::black_box(f());
            }
            start.elapsed().as_secs_f64() * 1e6 / f64::from(reps)
        })
        .collect();
    std::hint::black_box(sink);
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

fn figures() {
    let mut workloads = Workloads::new();
    for _ in 0..50 {
        workloads.query();
        workloads.schedule();
    }
    let query = median_us(15, 200, || workloads.query());
    let schedule = median_us(15, 100, || workloads.schedule());
    workloads.set_single_threaded();
    let one_thread = median_us(15, 100, || workloads.schedule());
    println!("entities {ENTITIES}");
    println!("query_us {query:.2}");
    println!("schedule_us {schedule:.2}");
    println!("schedule_one_thread_us {one_thread:.2}");
}
