//! Runs every workload briefly on archetable, hecs, bevy_ecs and the raw floor,
//! measures memory per entity, and prints and writes `ecs-bench/REPORT.md`
//! with the chart `ecs-bench/report.svg`. Every measurement runs in a child
//! process (this program, re-run with a hidden first argument).
//!
//! ```text
//! cargo run -p archetable-bench --release --bin report                      # everything, writes the report
//! cargo run -p archetable-bench --release --bin report -- simple_iter frag_iter   # some workloads, prints only
//! cargo run -p archetable-bench --release --bin report -- save_load               # a section's workloads
//! ```
//!
//! A workload with a baseline (`tracked_iter`, against `simple_iter`) brings
//! its baseline along, so the page can show their ratio.

use std::path::Path;
use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

use archetable_bench::memory::{self, Scenario};
use archetable_bench::report::{self, Machine, MemoryRow, Row, Samples};
use archetable_bench::{save_load, workloads, Implementation, Section, Workload};

/// The argument that makes this program a memory-measuring child.
const MEMORY_CHILD: &str = "--memory-child";
/// The argument that makes this program a timing child: each routine is
/// timed in a fresh process, so that no implementation inherits another's
/// heap (the allocator's state changes the cost of the spawn workloads).
const TIME_CHILD: &str = "--time-child";
/// The argument that makes this program a child timing archetable and the
/// raw floor of one workload in turn ([`report::sample_in_turn`]).
const TURNS_CHILD: &str = "--turns-child";
const CHART: &str = "report.svg";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some(MEMORY_CHILD) => return memory_child(&args[1..]),
        Some(TIME_CHILD) => return time_child(&args[1..]),
        Some(TURNS_CHILD) => return turns_child(&args[1..]),
        _ => {}
    }
    let all = workloads();
    let named = |w: &Workload, arg: &str| w.name == arg || w.section.name() == Some(arg);
    if let Some(unknown) = args.iter().find(|a| !all.iter().any(|w| named(w, a))) {
        let names: Vec<_> = all.iter().map(|w| w.name).collect();
        eprintln!(
            "unknown workload `{unknown}`; expected some of {names:?}, `save_load`, or nothing for the full report"
        );
        return ExitCode::FAILURE;
    }
    let full = args.is_empty();
    let asked = |w: &Workload| full || args.iter().any(|a| named(w, a));
    let selected: Vec<&Workload> =
        all.iter().filter(|w| asked(w) || all.iter().any(|v| asked(v) && v.baseline == Some(w.name))).collect();
    let started = Instant::now();
    let machine = Machine::detect();
    eprintln!("{} on {} cores, {}", machine.cpu, machine.cores, machine.rustc);

    let exe = std::env::current_exe().expect("path of this program");
    let mut rows = Vec::new();
    for workload in selected.iter().copied() {
        let present: Vec<Implementation> =
            Implementation::ALL.into_iter().filter(|&which| (workload.routine)(which).is_some()).collect();
        // A variant's baseline on archetable takes its turn too, so that
        // the ratio the goal reads covers the same rounds.
        let in_turn = workload.baseline.filter(|_| present.contains(&Implementation::Ours));
        // An iteration workload's ratio to the floor is read from the two
        // timed in turn in one process, in a slot of its own.
        let with_floor =
            workload.iteration && present.contains(&Implementation::Ours) && present.contains(&Implementation::Raw);
        let floor_slot = present.len() + usize::from(in_turn.is_some());
        let slots = floor_slot + usize::from(with_floor);
        let budget = report::BUDGET / (report::ROUNDS * slots) as u32;
        let mut samples: Vec<Vec<Samples>> = vec![Vec::new(); present.len()];
        let mut rounds_in_turn: Vec<(Samples, Samples)> = Vec::new();
        let mut floor_rounds: Vec<(Samples, Samples)> = Vec::new();
        let workload_started = Instant::now();
        for round in 0..report::ROUNDS {
            if round >= report::MIN_ROUNDS && workload_started.elapsed() > report::WORKLOAD_CAP {
                break;
            }
            let (mut ours, mut base) = (None, None);
            for k in 0..slots {
                let k = (k + round) % slots;
                if with_floor && k == floor_slot {
                    match turns_in_child(&exe, workload.name, budget) {
                        Ok(pair) => floor_rounds.push(pair),
                        Err(why) => eprintln!("{} with the floor in turn: {why}", workload.name),
                    }
                    continue;
                }
                if k == present.len() {
                    let baseline = in_turn.expect("a slot for the baseline only with one");
                    match time_in_child(&exe, baseline, Implementation::Ours, budget) {
                        Ok(s) => base = Some(s),
                        Err(why) => eprintln!("{baseline} (in turn with {}): {why}", workload.name),
                    }
                    continue;
                }
                match time_in_child(&exe, workload.name, present[k], budget) {
                    Ok(s) => {
                        if present[k] == Implementation::Ours {
                            ours = Some(s.clone());
                        }
                        samples[k].push(s)
                    }
                    Err(why) => eprintln!("{} {}: {why}", workload.name, present[k].name()),
                }
            }
            if let (Some(ours), Some(base)) = (ours, base) {
                rounds_in_turn.push((ours, base));
            }
        }
        let in_turn = in_turn.and_then(|_| report::in_turn_ratio(&rounds_in_turn));
        if let (Some(baseline), Some(ratio)) = (workload.baseline, in_turn) {
            eprintln!("{:<28} / {baseline} on archetable, in turn: {ratio:.2}x", workload.name);
        }
        let floor_in_turn = report::in_turn_ratio(&floor_rounds);
        if let Some(ratio) = floor_in_turn {
            eprintln!("{:<28} archetable / raw, in turn: {ratio:.2}x", workload.name);
        }
        let mut timings = [None; 4];
        for (which, samples) in present.into_iter().zip(samples) {
            if samples.is_empty() {
                continue;
            }
            let timing = report::summarize(&samples);
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
        rows.push(Row {
            name: workload.name,
            about: workload.about,
            iteration: workload.iteration,
            section: workload.section,
            baseline: workload.baseline,
            timings,
            in_turn,
            floor_in_turn,
        });
    }

    // Sizes are not timings: measured here, once.
    let sizes = if selected.iter().any(|w| matches!(w.section, Section::SaveLoad(..) | Section::SaveLoadHecsRows(..))) {
        let sizes = save_load::sizes();
        for s in &sizes {
            eprintln!(
                "size {:<18} archetable {:>10} B   hecs column {:>10} B   hecs row {:>10?} B",
                s.format.name(),
                s.ours,
                s.hecs,
                s.hecs_rows
            );
        }
        sizes
    } else {
        Vec::new()
    };

    let mut memory_rows = Vec::new();
    if full {
        for which in Implementation::ALL {
            let measurements = Scenario::ALL.map(|s| memory::measure_in_child(&exe, &[MEMORY_CHILD], which, s));
            for (scenario, m) in Scenario::ALL.iter().zip(&measurements) {
                match m {
                    Ok(m) => eprintln!(
                        "memory {:<9} {:<10} allocated {:>6} bytes/entity, peak RSS {:6.1} bytes/entity",
                        which.name(),
                        scenario.name(),
                        m.allocated_per_entity().map_or("-".to_owned(), |b| format!("{b:.1}")),
                        m.bytes_per_entity()
                    ),
                    Err(why) => eprintln!("memory {:<9} {:<10} {why}", which.name(), scenario.name()),
                }
            }
            memory_rows.push(MemoryRow { which, measurements });
        }
    }

    let web_figures = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(report::WEB_FIGURES);
    let web = std::fs::read_to_string(&web_figures).ok();
    if web.is_none() {
        eprintln!("no {}: the browser section says how to get it", web_figures.display());
    }
    let page = report::markdown(&machine, &rows, &sizes, &memory_rows, web.as_deref(), CHART, started.elapsed());
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

/// Runs `exe --time-child WORKLOAD IMPLEMENTATION MILLISECONDS` and reads
/// the samples it prints.
fn time_in_child(exe: &Path, workload: &str, which: Implementation, budget: Duration) -> Result<Samples, String> {
    let output = Command::new(exe)
        .args([TIME_CHILD, workload, which.name(), &budget.as_millis().to_string()])
        .output()
        .map_err(|error| format!("cannot run {}: {error}", exe.display()))?;
    if !output.status.success() {
        return Err(format!("failed: {}", String::from_utf8_lossy(&output.stderr)));
    }
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .find_map(Samples::from_line)
        .ok_or_else(|| "printed no samples".into())
}

/// Runs `exe --turns-child WORKLOAD MILLISECONDS` and reads the two lines
/// of samples it prints: archetable's, then the floor's.
fn turns_in_child(exe: &Path, workload: &str, budget: Duration) -> Result<(Samples, Samples), String> {
    let output = Command::new(exe)
        .args([TURNS_CHILD, workload, &budget.as_millis().to_string()])
        .output()
        .map_err(|error| format!("cannot run {}: {error}", exe.display()))?;
    if !output.status.success() {
        return Err(format!("failed: {}", String::from_utf8_lossy(&output.stderr)));
    }
    let text = String::from_utf8_lossy(&output.stdout);
    let mut lines = text.lines().filter_map(Samples::from_line);
    match (lines.next(), lines.next()) {
        (Some(ours), Some(raw)) => Ok((ours, raw)),
        _ => Err("printed fewer than two lines of samples".into()),
    }
}

/// `--turns-child WORKLOAD MILLISECONDS`: sample archetable and the raw
/// floor of one workload in turn in this fresh process, and print the
/// samples of each on a line, archetable's first.
fn turns_child(args: &[String]) -> ExitCode {
    let [workload, millis] = args else {
        eprintln!("usage: report {TURNS_CHILD} WORKLOAD MILLISECONDS");
        return ExitCode::FAILURE;
    };
    let routines = workloads()
        .into_iter()
        .find(|w| w.name == workload.as_str())
        .and_then(|w| Some(((w.routine)(Implementation::Ours)?, (w.routine)(Implementation::Raw)?)));
    let (Some((mut ours, mut raw)), Ok(millis)) = (routines, millis.parse()) else {
        eprintln!("no routines `{workload}` on archetable and the floor, or a bad budget `{millis}`");
        return ExitCode::FAILURE;
    };
    for samples in report::sample_in_turn(ours.as_mut(), raw.as_mut(), Duration::from_millis(millis)) {
        println!("{}", samples.to_line());
    }
    ExitCode::SUCCESS
}

/// `--time-child WORKLOAD IMPLEMENTATION MILLISECONDS`: sample one routine
/// in this fresh process and print the samples on one line.
fn time_child(args: &[String]) -> ExitCode {
    let [workload, which, millis] = args else {
        eprintln!("usage: report {TIME_CHILD} WORKLOAD IMPLEMENTATION MILLISECONDS");
        return ExitCode::FAILURE;
    };
    let routine = workloads()
        .into_iter()
        .find(|w| w.name == workload.as_str())
        .zip(Implementation::from_name(which))
        .and_then(|(workload, which)| (workload.routine)(which));
    let (Some(mut routine), Ok(millis)) = (routine, millis.parse()) else {
        eprintln!("no routine `{workload}` on `{which}`, or a bad budget `{millis}`");
        return ExitCode::FAILURE;
    };
    println!("{}", report::sample(routine.as_mut(), Duration::from_millis(millis)).to_line());
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
