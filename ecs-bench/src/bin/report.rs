//! Runs every workload briefly on ecs, hecs, bevy_ecs and the raw floor,
//! measures memory per entity (each implementation in a child process), and
//! prints and writes `ecs-bench/REPORT.md` with the chart `ecs-bench/report.svg`.
//!
//! ```text
//! cargo run -p ecs-bench --release --bin report                      # everything, writes the report
//! cargo run -p ecs-bench --release --bin report -- simple_iter frag_iter   # some workloads, prints only
//! ```

use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use ecs_bench::memory::{self, Scenario};
use ecs_bench::report::{self, Machine, MemoryRow, Row};
use ecs_bench::{workloads, Implementation};

/// The argument that makes this program a memory-measuring child.
const MEMORY_CHILD: &str = "--memory-child";
const CHART: &str = "report.svg";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some(MEMORY_CHILD) {
        return memory_child(&args[1..]);
    }
    let all = workloads();
    if let Some(unknown) = args.iter().find(|a| !all.iter().any(|w| w.name == a.as_str())) {
        let names: Vec<_> = all.iter().map(|w| w.name).collect();
        eprintln!("unknown workload `{unknown}`; expected some of {names:?}, or nothing for the full report");
        return ExitCode::FAILURE;
    }
    let full = args.is_empty();
    let started = Instant::now();
    let machine = Machine::detect();
    eprintln!("{} on {} cores, {}", machine.cpu, machine.cores, machine.rustc);

    let mut rows = Vec::new();
    for workload in all.iter().filter(|w| full || args.iter().any(|a| a == w.name)) {
        let (whiches, mut routines): (Vec<_>, Vec<_>) =
            Implementation::ALL.into_iter().filter_map(|which| Some((which, (workload.routine)(which)?))).unzip();
        let measured = report::sample_side_by_side(&mut routines, report::BUDGET);
        drop(routines);
        let mut timings = [None; 4];
        for (which, timing) in whiches.into_iter().zip(measured) {
            eprintln!(
                "{:<28} {:<9} {:>10}  ({} samples of {} runs)",
                workload.name,
                which.name(),
                report::format_duration(timing.median),
                timing.samples,
                timing.runs_per_sample
            );
            let index = Implementation::ALL.iter().position(|&i| i == which).expect("listed");
            timings[index] = Some(timing);
        }
        rows.push(Row { name: workload.name, about: workload.about, iteration: workload.iteration, timings });
    }

    let mut memory_rows = Vec::new();
    if full {
        let exe = std::env::current_exe().expect("path of this program");
        for which in Implementation::ALL {
            let measurements = Scenario::ALL.map(|s| memory::measure_in_child(&exe, &[MEMORY_CHILD], which, s));
            for (scenario, m) in Scenario::ALL.iter().zip(&measurements) {
                match m {
                    Ok(m) => eprintln!(
                        "memory {:<9} {:<10} {:6.1} bytes/entity",
                        which.name(),
                        scenario.name(),
                        m.bytes_per_entity()
                    ),
                    Err(why) => eprintln!("memory {:<9} {:<10} {why}", which.name(), scenario.name()),
                }
            }
            memory_rows.push(MemoryRow { which, measurements });
        }
    }

    let page = report::markdown(&machine, &rows, &memory_rows, CHART, started.elapsed());
    println!("{page}");
    if full {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
        for (name, text) in [("REPORT.md", page), (CHART, report::svg(&rows))] {
            let path = dir.join(name);
            if let Err(error) = std::fs::write(&path, text) {
                eprintln!("cannot write {}: {error}", path.display());
                return ExitCode::FAILURE;
            }
            eprintln!("wrote {}", path.display());
        }
    }
    eprintln!("took {:.1} s", started.elapsed().as_secs_f64());
    ExitCode::SUCCESS
}

/// `--memory-child IMPLEMENTATION SCENARIO`: measure and print one line.
fn memory_child(args: &[String]) -> ExitCode {
    let which = args.first().and_then(|a| Implementation::from_name(a));
    let scenario = args.get(1).and_then(|a| Scenario::from_name(a));
    let (Some(which), Some(scenario)) = (which, scenario) else {
        eprintln!("usage: report {MEMORY_CHILD} IMPLEMENTATION SCENARIO");
        return ExitCode::FAILURE;
    };
    match memory::measure(which, scenario) {
        Some(m) => {
            println!("{}", m.to_line());
            ExitCode::SUCCESS
        }
        None => {
            eprintln!("no VmHWM in /proc/self/status");
            ExitCode::FAILURE
        }
    }
}
