//! Runs one workload on one implementation over and over, for a profiler:
//!
//! ```text
//! cargo build --release -p archetable-bench --bin profile
//! perf record -g target/release/profile simple_insert archetable 5        # about 5 seconds
//! valgrind --tool=callgrind target/release/profile simple_insert archetable 20x   # exactly 20 runs
//! ```
//!
//! The last argument is seconds, or a run count followed by `x`.
//!
//! Two implementations joined by a comma are timed against each other in
//! this one process, in turns of about a millisecond each for the given
//! seconds, so that the machine's drift reaches both alike; it prints each
//! one's median run over its turns and their ratio:
//!
//! ```text
//! target/release/profile frag_iter archetable,raw 10
//! ```

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
    if let Some((first, second)) = which.split_once(',') {
        return in_turns(&workload, first, second, amount);
    }
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

/// Times `first` and `second` on `workload` in alternating turns for
/// `seconds`, and prints each one's median run and their ratio.
fn in_turns(workload: &archetable_bench::Workload, first: &str, second: &str, seconds: &str) -> ExitCode {
    let (Some(a), Some(b)) = (Implementation::from_name(first), Implementation::from_name(second)) else {
        eprintln!("unknown implementation in `{first},{second}`");
        return ExitCode::FAILURE;
    };
    let Ok(seconds) = seconds.parse::<f64>() else {
        eprintln!("bad number of seconds `{seconds}`; turns are timed, not counted");
        return ExitCode::FAILURE;
    };
    let (Some(mut ra), Some(mut rb)) = ((workload.routine)(a), (workload.routine)(b)) else {
        eprintln!("{} lacks one of the two routines", workload.name);
        return ExitCode::FAILURE;
    };
    // Runs per turn: about a millisecond of each, from a first timing.
    let per_turn = |routine: &mut dyn archetable_bench::routine::Routine| {
        let one = time_runs(routine, 16).as_secs_f64() / 16.0;
        ((1e-3 / one.max(1e-9)) as u64).max(1)
    };
    let (na, nb) = (per_turn(ra.as_mut()), per_turn(rb.as_mut()));
    let (mut ta, mut tb) = (Vec::new(), Vec::new());
    // At least one turn each, whatever the seconds.
    let started = Instant::now();
    loop {
        ta.push(time_runs(ra.as_mut(), na).as_secs_f64() / na as f64);
        tb.push(time_runs(rb.as_mut(), nb).as_secs_f64() / nb as f64);
        if started.elapsed().as_secs_f64() >= seconds {
            break;
        }
    }
    let median = |mut runs: Vec<f64>| {
        runs.sort_by(f64::total_cmp);
        runs[runs.len() / 2]
    };
    let turns = ta.len();
    let (ma, mb) = (median(ta), median(tb));
    println!(
        "{}: {} {:?}, {} {:?} per run (medians of {turns} turns each); {} / {} = {:.3}x",
        workload.name,
        a.name(),
        Duration::from_secs_f64(ma),
        b.name(),
        Duration::from_secs_f64(mb),
        a.name(),
        b.name(),
        ma / mb
    );
    ExitCode::SUCCESS
}
