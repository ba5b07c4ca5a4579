//! Runs one workload on one implementation over and over, for a profiler:
//!
//! ```text
//! cargo build --release -p archetable-bench --bin profile
//! perf record -g target/release/profile simple_insert archetable 5        # about 5 seconds
//! valgrind --tool=callgrind target/release/profile simple_insert archetable 20x   # exactly 20 runs
//! ```
//!
//! The last argument is seconds, or a run count followed by `x`.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use archetable_bench::routine::time_runs;
use archetable_bench::{workloads, Implementation};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [workload, which, amount] = args.as_slice() else {
        eprintln!("usage: profile WORKLOAD IMPLEMENTATION SECONDS|RUNSx");
        return ExitCode::FAILURE;
    };
    let Some(workload) = workloads().into_iter().find(|w| w.name == workload.as_str()) else {
        eprintln!("unknown workload `{workload}`");
        return ExitCode::FAILURE;
    };
    let Some(which) = Implementation::from_name(which) else {
        eprintln!("unknown implementation `{which}`; expected one of archetable, hecs, bevy_ecs, raw");
        return ExitCode::FAILURE;
    };
    let Some(mut routine) = (workload.routine)(which) else {
        eprintln!("{} has no {} routine", workload.name, which.name());
        return ExitCode::FAILURE;
    };
    let (runs, timed) = if let Some(count) = amount.strip_suffix('x') {
        let Ok(count) = count.parse::<u64>() else {
            eprintln!("bad run count `{amount}`");
            return ExitCode::FAILURE;
        };
        (count, time_runs(routine.as_mut(), count))
    } else {
        let Ok(seconds) = amount.parse::<f64>() else {
            eprintln!("bad number of seconds `{amount}`");
            return ExitCode::FAILURE;
        };
        let started = Instant::now();
        let (mut runs, mut timed) = (0, Duration::ZERO);
        while started.elapsed().as_secs_f64() < seconds {
            timed += time_runs(routine.as_mut(), 1);
            runs += 1;
        }
        (runs, timed)
    };
    println!("{} on {}: {runs} runs, {:?} per run", workload.name, which.name(), timed / runs.max(1) as u32);
    ExitCode::SUCCESS
}
