//! The report: a short timing of every routine ([`sample`]),
//! the machine it ran on ([`Machine`]), and the rendering of the results as a
//! Markdown page ([`markdown`]) and a hand-written SVG bar chart ([`svg`]).
//! The page holds the main table, the save and load section, and memory.

use std::fmt::Write as _;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::memory::{self, Measurement, Scenario};
use crate::routine::time_runs;
use crate::save_load::{self, Direction, Format, Sizes};
use crate::{Implementation, Routine, Section};

/// How long the implementations of one workload are sampled in all, at
/// least (plus their untimed set-up and their processes' start).
pub const BUDGET: Duration = Duration::from_secs(6);
/// Each implementation of a workload is measured in this many fresh
/// processes, the implementations taking turns, so that a change in the
/// machine's load falls on all of them alike.
pub const ROUNDS: usize = 6;
/// A workload stops taking rounds once its processes have taken this long
/// in all, after at least [`MIN_ROUNDS`]: a round of the slowest save and
/// load workloads takes several seconds (three samples of a run of a
/// second, plus building the save).
pub const WORKLOAD_CAP: Duration = Duration::from_secs(12);
/// See [`WORKLOAD_CAP`].
pub const MIN_ROUNDS: usize = 2;
/// Fewest samples per process, even when that overruns the budget.
pub const MIN_SAMPLES: usize = 3;
/// Most samples per process.
pub const MAX_SAMPLES: usize = 60;
/// Target length of one sample of a routine without per-run set-up: short,
/// so that on a busy machine many samples fit between two preemptions and
/// the median stays clean.
pub const SAMPLE_TARGET: Duration = Duration::from_millis(2);

/// Timing of one routine.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Timing {
    /// Median time of one run over the samples.
    pub median: Duration,
    /// Number of samples taken.
    pub samples: usize,
    /// Runs per sample (of the first process, when there were several).
    pub runs_per_sample: u64,
}

/// The samples one process took of one routine.
#[derive(Clone, Debug, PartialEq)]
pub struct Samples {
    /// Runs per sample.
    pub runs_per_sample: u64,
    /// Time of one run, in seconds, per sample.
    pub per_run: Vec<f64>,
}

impl Samples {
    /// The line a child process prints for its parent.
    pub fn to_line(&self) -> String {
        let times: Vec<String> = self.per_run.iter().map(|t| format!("{t:e}")).collect();
        format!("samples runs={} {}", self.runs_per_sample, times.join(" "))
    }

    /// Parses [`Samples::to_line`]'s output.
    pub fn from_line(line: &str) -> Option<Self> {
        let mut words = line.trim().strip_prefix("samples runs=")?.split(' ');
        let runs_per_sample = words.next()?.parse().ok()?;
        let per_run = words.map(|w| w.parse().ok()).collect::<Option<Vec<f64>>>()?;
        Some(Samples { runs_per_sample, per_run })
    }
}

/// Times `routine` briefly: warms it up and sizes its samples, then samples
/// it until `budget` has passed (at least [`MIN_SAMPLES`], at most
/// [`MAX_SAMPLES`] samples).
pub fn sample(routine: &mut dyn Routine, budget: Duration) -> Samples {
    let started = Instant::now();
    let runs_per_sample = runs_per_sample(routine);
    let mut per_run = Vec::with_capacity(MAX_SAMPLES);
    while per_run.len() < MIN_SAMPLES || (per_run.len() < MAX_SAMPLES && started.elapsed() < budget) {
        per_run.push(time_runs(routine, runs_per_sample).as_secs_f64() / runs_per_sample as f64);
    }
    Samples { runs_per_sample, per_run }
}

/// Times `first` and `second` in turn in this one process: warms each up
/// and sizes its samples, then takes a sample of one, then of the other,
/// until `budget` has passed (each at least [`MIN_SAMPLES`], at most
/// [`MAX_SAMPLES`] samples), so that the two see the same stretch of the
/// machine's time and the same process.
pub fn sample_in_turn(first: &mut dyn Routine, second: &mut dyn Routine, budget: Duration) -> [Samples; 2] {
    let started = Instant::now();
    let runs = [runs_per_sample(first), runs_per_sample(second)];
    let mut per_run = [Vec::with_capacity(MAX_SAMPLES), Vec::with_capacity(MAX_SAMPLES)];
    while per_run[0].len() < MIN_SAMPLES || (per_run[0].len() < MAX_SAMPLES && started.elapsed() < budget) {
        per_run[0].push(time_runs(first, runs[0]).as_secs_f64() / runs[0] as f64);
        per_run[1].push(time_runs(second, runs[1]).as_secs_f64() / runs[1] as f64);
    }
    let [a, b] = per_run;
    [Samples { runs_per_sample: runs[0], per_run: a }, Samples { runs_per_sample: runs[1], per_run: b }]
}

/// The median of all the samples that the processes of one routine took.
///
/// # Panics
/// If there is no sample.
pub fn summarize(samples: &[Samples]) -> Timing {
    let mut all: Vec<f64> = samples.iter().flat_map(|s| s.per_run.iter().copied()).collect();
    assert!(!all.is_empty(), "no samples to summarize");
    all.sort_by(f64::total_cmp);
    Timing {
        median: Duration::from_secs_f64(median(&all)),
        samples: all.len(),
        runs_per_sample: samples[0].runs_per_sample,
    }
}

/// Warms `routine` up and picks how many runs make a sample of about
/// [`SAMPLE_TARGET`]: one, for routines with per-run set-up.
fn runs_per_sample(routine: &mut dyn Routine) -> u64 {
    let first = time_runs(routine, 1);
    if routine.per_run_setup() {
        return 1;
    }
    // Double the runs until a batch is long enough to time, then keep the
    // fastest of three such batches as the estimate.
    let mut runs: u64 = 1;
    let mut took = first;
    while took < SAMPLE_TARGET / 4 && runs < 1 << 24 {
        runs *= 2;
        took = time_runs(routine, runs);
    }
    let fastest = (0..2).map(|_| time_runs(routine, runs)).fold(took, Duration::min);
    let one = fastest.as_secs_f64() / runs as f64;
    ((SAMPLE_TARGET.as_secs_f64() / one.max(1e-9)) as u64).max(1)
}

/// A variant over its baseline from samples taken in turn: the median run
/// of the variant's samples over the median run of the baseline's, both
/// pooled over the rounds that have both, so that each side covers the
/// same stretch of the machine's time. `None` without such a round.
pub fn in_turn_ratio(rounds: &[(Samples, Samples)]) -> Option<f64> {
    let pooled = |side: &dyn Fn(&(Samples, Samples)) -> &Samples| {
        let mut runs: Vec<f64> = rounds
            .iter()
            .filter(|(variant, baseline)| !variant.per_run.is_empty() && !baseline.per_run.is_empty())
            .flat_map(|round| side(round).per_run.iter().copied())
            .collect();
        runs.sort_by(f64::total_cmp);
        (!runs.is_empty()).then(|| median(&runs))
    };
    let ratio = pooled(&|round| &round.0)? / pooled(&|round| &round.1)?;
    ratio.is_finite().then_some(ratio)
}

fn median(sorted: &[f64]) -> f64 {
    let mid = sorted.len() / 2;
    if sorted.len() % 2 == 1 {
        sorted[mid]
    } else {
        (sorted[mid - 1] + sorted[mid]) / 2.0
    }
}

/// Where and with what the report ran.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Machine {
    /// Logical cores available to the process.
    pub cores: usize,
    /// The CPU model, from `/proc/cpuinfo`.
    pub cpu: String,
    /// The UTC date of the run, `YYYY-MM-DD`.
    pub date: String,
    /// `rustc --version` of the compiler that built the report.
    pub rustc: String,
    /// Versions of the peer crates, from the lock file.
    pub hecs: String,
    /// See [`Machine::hecs`].
    pub bevy_ecs: String,
    /// The 1-minute load average when the run started: other work on the
    /// machine competes with the measurements.
    pub load: String,
}

impl Machine {
    /// Reads the machine and the build's versions.
    pub fn detect() -> Self {
        let cpu = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|info| {
                info.lines()
                    .find(|line| line.starts_with("model name"))
                    .and_then(|line| line.split_once(':'))
                    .map(|(_, model)| model.trim().to_owned())
            })
            .unwrap_or_else(|| "unknown".to_owned());
        let days = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs() / 86_400).unwrap_or(0);
        Machine {
            cores: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
            cpu,
            date: civil_date(days),
            rustc: env!("ECS_BENCH_RUSTC").to_owned(),
            hecs: env!("ECS_BENCH_HECS").to_owned(),
            bevy_ecs: env!("ECS_BENCH_BEVY_ECS").to_owned(),
            load: load_average(),
        }
    }
}

/// The 1-minute load average, from `/proc/loadavg`.
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|text| text.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "unknown".to_owned())
}

/// The `YYYY-MM-DD` date `days` days after 1970-01-01 (proleptic Gregorian).
pub fn civil_date(days: u64) -> String {
    // Shift the epoch to 0000-03-01, so leap days end each 400-year era.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era = (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * shifted_month + 2) / 5 + 1;
    let month = if shifted_month < 10 { shifted_month + 3 } else { shifted_month - 9 };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

/// The timings of one workload, per implementation (`None`: not run).
#[derive(Clone, Debug)]
pub struct Row {
    /// The workload's name.
    pub name: &'static str,
    /// The workload's one-line description.
    pub about: &'static str,
    /// Whether the workload is held to the 1.2x floor goal.
    pub iteration: bool,
    /// Where the page shows it.
    pub section: Section,
    /// The workload it is a variant of (see
    /// [`Workload::baseline`](crate::Workload::baseline)).
    pub baseline: Option<&'static str>,
    /// Timings in [`Implementation::ALL`] order.
    pub timings: [Option<Timing>; 4],
    /// For a variant: archetable on it over archetable on its baseline,
    /// both timed in turn in the same rounds ([`in_turn_ratio`]), so that
    /// the machine's drift between the two rows' turns does not enter the
    /// ratio. `None` when not measured so.
    pub in_turn: Option<f64>,
    /// For an iteration workload: archetable over the raw floor, the two
    /// timed in turn inside the same processes ([`sample_in_turn`], pooled
    /// as [`in_turn_ratio`] pools), so that neither a process's luck nor
    /// the machine's drift between two processes enters the ratio. `None`
    /// when not measured so.
    pub floor_in_turn: Option<f64>,
}

impl Row {
    /// The median of `which`.
    pub fn time(&self, which: Implementation) -> Option<Duration> {
        let index = Implementation::ALL.iter().position(|&i| i == which).expect("listed");
        self.timings[index].map(|t| t.median)
    }

    /// The fastest peer and its time.
    pub fn best_peer(&self) -> Option<(Implementation, Duration)> {
        Implementation::PEERS.into_iter().filter_map(|p| Some((p, self.time(p)?))).min_by_key(|&(_, t)| t)
    }

    /// Ours divided by the fastest peer.
    pub fn vs_best_peer(&self) -> Option<f64> {
        Some(self.time(Implementation::Ours)?.as_secs_f64() / self.best_peer()?.1.as_secs_f64())
    }

    /// Ours divided by the raw floor: timed in turn when it was
    /// ([`Row::floor_in_turn`]), else the two cells' medians.
    pub fn vs_floor(&self) -> Option<f64> {
        self.floor_in_turn.or_else(|| {
            Some(self.time(Implementation::Ours)?.as_secs_f64() / self.time(Implementation::Raw)?.as_secs_f64())
        })
    }

    /// Ours divided by hecs.
    pub fn vs_hecs(&self) -> Option<f64> {
        Some(self.time(Implementation::Ours)?.as_secs_f64() / self.time(Implementation::Hecs)?.as_secs_f64())
    }

    /// Ours on this workload divided by ours on its baseline: timed in
    /// turn when it was ([`Row::in_turn`]), else from the two rows'
    /// medians, found among `rows`.
    pub fn vs_baseline(&self, rows: &[Row]) -> Option<f64> {
        self.in_turn.or_else(|| self.vs_baseline_on(rows, Implementation::Ours))
    }

    /// This variant's time over its baseline row's, on `which`.
    pub fn vs_baseline_on(&self, rows: &[Row], which: Implementation) -> Option<f64> {
        let baseline = rows.iter().find(|r| Some(r.name) == self.baseline)?;
        Some(self.time(which)?.as_secs_f64() / baseline.time(which)?.as_secs_f64())
    }
}

/// Peak memory of one implementation in both scenarios.
#[derive(Clone, Debug)]
pub struct MemoryRow {
    /// Who spawned.
    pub which: Implementation,
    /// Per scenario, in [`Scenario::ALL`] order: the measurement or why
    /// there is none.
    pub measurements: [Result<Measurement, String>; 2],
}

/// Formats a duration with three significant digits and a unit.
pub fn format_duration(d: Duration) -> String {
    let ns = d.as_secs_f64() * 1e9;
    let (value, unit) = if ns < 1e3 {
        (ns, "ns")
    } else if ns < 1e6 {
        (ns / 1e3, "µs")
    } else if ns < 1e9 {
        (ns / 1e6, "ms")
    } else {
        (ns / 1e9, "s")
    };
    let digits = if value < 10.0 {
        2
    } else if value < 100.0 {
        1
    } else {
        0
    };
    format!("{value:.digits$} {unit}")
}

/// `n` with a comma between groups of three digits.
pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// From this ratio up (1.01x once rounded), archetable is reported slower.
const SLOWER: f64 = 1.005;

/// The goal for iteration workloads: at most this multiple of the raw
/// floor; also the goal for change tracking over untracked iteration.
pub const ITERATION_GOAL: f64 = 1.2;

/// The most an iteration workload may take over the raw floor: the
/// [`ITERATION_GOAL`], and less for `frag_iter`, whose floor is the same
/// nested loop the engine runs, table after table.
pub fn floor_goal(name: &str) -> f64 {
    match name {
        "frag_iter" => 1.15,
        _ => ITERATION_GOAL,
    }
}

/// The most a variant may take over its baseline row, for the variants
/// with a goal: a plain `for` loop against `for_each` (1.15x on dense
/// tables, 1.3x over many small ones), change tracking against none, and
/// spawning the sources of one target (`ChildOf`, or a relationship of the
/// user's) against spawning without one (1.5x).
pub fn variant_goal(name: &str) -> Option<f64> {
    match name {
        "simple_iter_for" => Some(1.15),
        "frag_iter_for" => Some(1.3),
        "tracked_iter" => Some(ITERATION_GOAL),
        "wide_spawn_100k" | "wide_user_spawn_100k" | "wide_respawn_100k" => Some(1.5),
        _ => None,
    }
}

/// Whether a variant's raw cell is the floor written the same way as the
/// variant (rather than its baseline's floor), so that the floor's own
/// variant / baseline ratio shows what the form itself costs: a `for` loop,
/// or the stores of a spawned source (its relationship, the ticks of a
/// tracked one, its entry in the target's list) on top of a plain spawn's.
pub fn floor_has_variant(name: &str) -> bool {
    matches!(name, "frag_iter_for" | "schedule_for" | "wide_spawn_100k" | "wide_user_spawn_100k" | "wide_respawn_100k")
}

fn format_ratio(ratio: Option<f64>) -> String {
    ratio.map_or_else(|| "–".to_owned(), |r| format!("{r:.2}x"))
}

/// The Markdown report: the machine, the timing table, the chart link, the
/// save and load tables (with `sizes`, when there are such rows), the
/// memory table and the notes. `elapsed` is how long the whole run took.
#[allow(clippy::too_many_arguments)]
pub fn markdown(
    machine: &Machine,
    rows: &[Row],
    sizes: &[Sizes],
    memory: &[MemoryRow],
    web: Option<&str>,
    chart: &str,
    elapsed: Duration,
) -> String {
    let mut md = String::new();
    let w = &mut md;
    let _ = writeln!(w, "# Benchmark report\n");
    let _ = writeln!(
        w,
        "Written by `cargo run -p archetable-bench --release --bin report` (a short run: median of a few samples per \
         cell, each implementation in {} fresh processes taking turns with the others' (at least \
         {MIN_ROUNDS} for workloads whose rounds pass {} s); {:.0} s in all). A variant's baseline on archetable \
         takes a turn in the variant's rounds too, and the variant's line below divides the two as timed in those \
         rounds, so that the machine's drift between rows stays out of it. For careful numbers run `cargo bench -p \
         archetable-bench`, which times the same routines with criterion.\n",
        ROUNDS,
        WORKLOAD_CAP.as_secs(),
        elapsed.as_secs_f64()
    );
    let _ = writeln!(w, "| | |\n| --- | --- |");
    let _ = writeln!(w, "| date (UTC) | {} |", machine.date);
    let _ = writeln!(w, "| CPU | {} |", machine.cpu);
    let _ = writeln!(w, "| cores | {} |", machine.cores);
    let _ = writeln!(w, "| load average (1 min) | {} at the start, {} at the end |", machine.load, load_average());
    let _ = writeln!(w, "| compiler | {} |", machine.rustc);
    let _ = writeln!(
        w,
        "| crates | archetable {}, hecs {}, bevy_ecs {} |\n",
        env!("CARGO_PKG_VERSION"),
        machine.hecs,
        machine.bevy_ecs
    );

    let busy = |load: &str| load.parse::<f64>().is_ok_and(|l| l > machine.cores as f64);
    if busy(&machine.load) || busy(&load_average()) {
        let _ = writeln!(
            w,
            "**The machine was busy** (more runnable work than its {} cores, by the load average above): every \
             engine and the floor lost time to other programs, unevenly from row to row. Read these numbers as a \
             smoke test, not as measurements; rerun on a quiet machine before comparing them with a goal.\n",
            machine.cores
        );
    }
    let _ = writeln!(w, "## Time per run (median)\n");
    let _ = writeln!(
        w,
        "Lower is better. *archetable / best peer* below 1 means archetable is faster than both peers; *archetable / raw* is the \
         price of the engine over plain `Vec`s (the goal for iteration workloads, marked †, is at most 1.2x, and 1.15x for \
         `frag_iter`). For the † rows it is not the two cells divided: archetable and the floor take turns inside the \
         same processes as well, and the ratio is of those turns, which the machine's drift and each process's luck \
         reach alike.\n"
    );
    let _ = writeln!(
        w,
        "| workload | archetable | hecs | bevy_ecs | raw floor | archetable / best peer | archetable / raw |"
    );
    let _ = writeln!(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
    let suite: Vec<&Row> = rows.iter().filter(|r| r.section == Section::Suite).collect();
    for row in &suite {
        let cell = |which| row.time(which).map_or_else(|| "–".to_owned(), format_duration);
        let best = row.best_peer().map(|(p, _)| p);
        let peer_cell = |which: Implementation| {
            let text = cell(which);
            if Some(which) == best {
                format!("**{text}**")
            } else {
                text
            }
        };
        let vs_peer = format_ratio(row.vs_best_peer());
        let vs_peer = match row.vs_best_peer() {
            Some(r) if r >= SLOWER => format!("{vs_peer} (slower)"),
            _ => vs_peer,
        };
        let _ = writeln!(
            w,
            "| {}{} | {} | {} | {} | {} | {} | {} |",
            row.name,
            if row.iteration { " †" } else { "" },
            cell(Implementation::Ours),
            peer_cell(Implementation::Hecs),
            peer_cell(Implementation::Bevy),
            cell(Implementation::Raw),
            vs_peer,
            format_ratio(row.vs_floor()),
        );
    }
    let _ = writeln!(
        w,
        "\nThe faster peer of each row is in bold. On a 2-core machine shared with other work, differences of a \
         few percent are within run-to-run noise.\n"
    );
    let slower: Vec<String> = suite
        .iter()
        .filter_map(|row| row.vs_best_peer().filter(|&r| r >= SLOWER).map(|r| format!("`{}` ({r:.2}x)", row.name)))
        .collect();
    let above_floor: Vec<String> = suite
        .iter()
        .filter(|row| row.iteration)
        .filter_map(|row| {
            let goal = floor_goal(row.name);
            row.vs_floor().filter(|&r| r > goal).map(|r| format!("`{}` ({r:.2}x, goal {goal}x)", row.name))
        })
        .collect();
    let list = |items: Vec<String>| if items.is_empty() { "none".to_owned() } else { items.join(", ") };
    let _ = writeln!(w, "- archetable slower than the best peer: {}.", list(slower));
    let _ = writeln!(w, "- iteration workloads above their goal over the raw floor: {}.", list(above_floor));
    for row in suite.iter().filter(|r| r.baseline.is_some()) {
        let baseline = row.baseline.unwrap_or_default();
        let ratio = row.vs_baseline(rows);
        // Variants with a goal say whether they meet it; others just say
        // what the variant changes.
        let verdict = match (variant_goal(row.name), ratio) {
            (_, None) => " (not measured together)".to_owned(),
            (Some(goal), Some(r)) => format!(" (goal: at most {goal}x, {})", if r > goal { "missed" } else { "met" }),
            (None, Some(_)) => String::new(),
        };
        let floor = match floor_has_variant(row.name) {
            true => format!(
                "; the raw floor written the same way: {}",
                format_ratio(row.vs_baseline_on(rows, Implementation::Raw))
            ),
            false => String::new(),
        };
        let how = if row.in_turn.is_some() { ", the two timed in turn" } else { "" };
        let _ =
            writeln!(w, "- `{}` / `{baseline}` on archetable: {}{how}{verdict}{floor}.", row.name, format_ratio(ratio));
    }
    let _ = writeln!(w, "\n![archetable / best peer and archetable / raw floor, per workload]({chart})\n");

    if rows.iter().any(|r| matches!(r.section, Section::SaveLoad(..) | Section::SaveLoadHecsRows(..)))
        || !sizes.is_empty()
    {
        save_load_section(w, rows, sizes);
    }
    if rows.iter().any(|r| matches!(r.section, Section::Parallel { .. })) {
        parallel_section(w, rows, machine.cores);
    }
    if rows.iter().any(|r| matches!(r.section, Section::Heavy { .. })) {
        heavy_section(w, rows, machine.cores);
    }
    if rows.iter().any(|r| matches!(r.section, Section::Rollback(..))) {
        rollback_section(w, rows);
    }

    let _ = writeln!(w, "## What each workload does\n");
    for row in rows {
        let _ = writeln!(w, "- `{}`: {}.", row.name, row.about);
    }

    let _ = writeln!(w, "\n## Memory: {} entities of (Position, Velocity)\n", thousands(memory::ENTITIES));
    let _ = writeln!(
        w,
        "Per entity, each implementation in a fresh process, after a warm-up world of {} entities made and \
         dropped the same way: *allocated*, the growth of the bytes the C allocator has handed out (glibc's \
         `mallinfo2`, with the allocator's headers and rounding), and *peak RSS*, the growth of the peak resident \
         set (`VmHWM`) while spawning. Component data alone is {} bytes per entity. *batch*: one `spawn_batch` (a `Vec::with_capacity` \
         for the floor); *one by one*: one `spawn` per entity (`push` for the floor), so storage grows by \
         doubling and the peak can hold the old and the new buffer at once.\n",
        thousands(memory::WARM_UP),
        memory::component_bytes()
    );
    let _ = writeln!(
        w,
        "| implementation | batch: allocated / entity | batch: peak RSS / entity | batch: peak RSS | one by one: allocated / entity | one by one: peak RSS / entity | one by one: peak RSS |"
    );
    let _ = writeln!(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
    for row in memory {
        let mut cells = Vec::new();
        for m in &row.measurements {
            match m {
                Ok(m) => {
                    cells.push(m.allocated_per_entity().map_or("–".to_owned(), |b| format!("{b:.1}")));
                    cells.push(format!("{:.1}", m.bytes_per_entity()));
                    cells.push(format!("{:.1} MiB", m.after as f64 / (1024.0 * 1024.0)));
                }
                Err(_) => cells.extend(["–".to_owned(), "–".to_owned(), "–".to_owned()]),
            }
        }
        let _ = writeln!(w, "| {} | {} |", row.which.name(), cells.join(" | "));
    }
    for row in memory {
        for (scenario, m) in Scenario::ALL.iter().zip(&row.measurements) {
            if let Err(why) = m {
                let _ = writeln!(w, "\n{} ({}): {why}", row.which.name(), scenario.name());
            }
        }
    }

    web_section(w, web);

    let _ = writeln!(w, "\n## How each implementation runs\n");
    let _ = writeln!(w, "{NOTES}");
    md
}

/// Where `scripts/web-test.sh` leaves its figures, which the report reads.
pub const WEB_FIGURES: &str = "target/web/figures.txt";

/// The "In a browser" section, from the figures `scripts/web-test.sh` kept
/// ([`WEB_FIGURES`]: `key value` lines); says how to get them when there
/// are none.
pub fn web_section(w: &mut String, figures: Option<&str>) {
    let _ = writeln!(w, "\n## In a browser (wasm32)\n");
    let Some(figures) = figures else {
        let _ = writeln!(
            w,
            "No figures: run `scripts/web-test.sh` (it builds the fireworks page for wasm32, checks it in Node and \
             headless Chromium, and keeps its figures in `{WEB_FIGURES}`), then this report."
        );
        return;
    };
    let get = |key: &str| {
        figures.lines().find_map(|line| line.strip_prefix(key).and_then(|rest| rest.strip_prefix(' '))).unwrap_or("–")
    };
    let number = |key: &str| get(key).parse::<f64>().ok();
    let kb = |key: &str| number(key).map_or_else(|| "–".to_owned(), |b| format!("{:.0} KB", b / 1000.0));
    let _ = writeln!(
        w,
        "By `scripts/web-test.sh` on {} (load average {}; Node {}, {}), in the same run as its checks. The wasm \
         figures are Node's (V8, as in Chromium); the page's frame is timed by the page itself in headless \
         Chromium.\n",
        get("date"),
        get("load_average"),
        get("node"),
        get("chromium"),
    );
    let _ = writeln!(w, "| | native | wasm | wasm / native |\n| --- | ---: | ---: | ---: |");
    let _ = writeln!(
        w,
        "| the page's module (`fireworks.wasm`) | | {} ({} built, {} gzipped) | |",
        kb("wasm_bytes"),
        kb("wasm_built_bytes"),
        kb("wasm_gzip_bytes")
    );
    let _ = writeln!(w, "| the tests' module (`checks.wasm`, every layer) | | {} | |", kb("checks_wasm_bytes"));
    for (what, key) in [
        ("one pass of a `QueryState` over {} entities (`for_each`, two components)", "query_us"),
        ("one run of a `Schedule` of three systems over them", "schedule_us"),
    ] {
        let native = number(&format!("native_{key}"));
        let wasm = number(&format!("wasm_{key}"));
        let us = |v: Option<f64>| v.map_or_else(|| "–".to_owned(), |v| format!("{v:.1} µs"));
        let ratio = match (native, wasm) {
            (Some(n), Some(m)) if n > 0.0 => format!("{:.2}", m / n),
            _ => "–".to_owned(),
        };
        let entities = get("native_entities").parse::<usize>().map_or_else(|_| "–".to_owned(), thousands);
        let what = what.replace("{}", &entities);
        let _ = writeln!(w, "| {what} | {} | {} | {ratio} |", us(native), us(wasm));
    }
    let _ = writeln!(w, "| the page's frame: {} | | | |", get("page_frame"));
}

/// The "Save and load" section: time per format and direction on archetable and
/// hecs (its column layout, and its row layout as an extra), then the size of
/// each save.
fn save_load_section(w: &mut String, rows: &[Row], sizes: &[Sizes]) {
    let _ = writeln!(w, "## Save and load: {} entities of 4 components\n", thousands(save_load::ENTITIES));
    let _ = writeln!(
        w,
        "Position and velocity (three `f32` each), health (a `u32`) and an 8-letter name (a `String`), the same \
         serde types in both engines, saved to memory and loaded into a fresh world; every load is checked field \
         by field against the original once before timing. archetable uses `archetable-serde` with its defaults \
         (`save_json` / `World::load_json` and the same for RON and binary); hecs uses `hecs::serialize` with \
         serde_json, ron and postcard, in its column layout (`hecs::serialize::column`, per archetype one array \
         per component: its best form, which its documentation points data programs at), and in its row layout \
         as an extra (a map from entity to components; postcard cannot write its maps of unknown length). \
         bevy_ecs is left out: it has no world serialization without `bevy_scene` and `bevy_reflect`. There is no \
         floor.\n"
    );
    let find =
        |format: Format, direction: Direction| rows.iter().find(|r| r.section == Section::SaveLoad(format, direction));
    let find_rows = |format: Format, direction: Direction| {
        rows.iter().find(|r| r.section == Section::SaveLoadHecsRows(format, direction))
    };
    let cell =
        |row: Option<&Row>, which| row.and_then(|r| r.time(which)).map_or_else(|| "–".to_owned(), format_duration);
    let ratio = |row: Option<&Row>| format_ratio(row.and_then(Row::vs_hecs));
    let measured: Vec<Format> = Format::ALL
        .into_iter()
        .filter(|&f| find(f, Direction::Save).is_some() || find(f, Direction::Load).is_some())
        .collect();
    if !measured.is_empty() {
        let _ = writeln!(
            w,
            "| format | archetable save | hecs column save | archetable / hecs column | hecs row save | archetable load | hecs column load | archetable / hecs column | hecs row load |"
        );
        let _ = writeln!(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
        for format in measured {
            let (save, load) = (find(format, Direction::Save), find(format, Direction::Load));
            let _ = writeln!(
                w,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                format.name(),
                cell(save, Implementation::Ours),
                cell(save, Implementation::Hecs),
                ratio(save),
                cell(find_rows(format, Direction::Save), Implementation::Hecs),
                cell(load, Implementation::Ours),
                cell(load, Implementation::Hecs),
                ratio(load),
                cell(find_rows(format, Direction::Load), Implementation::Hecs),
            );
        }
        let _ = writeln!(w);
    }
    if !sizes.is_empty() {
        let n = save_load::ENTITIES as f64;
        let _ = writeln!(
            w,
            "| format | archetable size | archetable bytes / entity | hecs column size | hecs column bytes / entity | archetable / hecs column | hecs row size |"
        );
        let _ = writeln!(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
        for s in sizes {
            let _ = writeln!(
                w,
                "| {} | {:.2} MB | {:.1} | {:.2} MB | {:.1} | {:.2}x | {} |",
                s.format.name(),
                s.ours as f64 / 1e6,
                s.ours as f64 / n,
                s.hecs as f64 / 1e6,
                s.hecs as f64 / n,
                s.ours as f64 / s.hecs as f64,
                s.hecs_rows.map_or_else(|| "–".to_owned(), |b| format!("{:.2} MB", b as f64 / 1e6)),
            );
        }
        let _ = writeln!(
            w,
            "\nAn archetable save also holds a format tag and version, the component names and the entity allocator. \
             Its compact text forms are columnar (layout version 3): per table, its entities (an index where the \
             generation is 1, else the handle's text), then one array of values per component; its binary form is \
             written table by table the same way, the values back to back in postcard. An archetable load places each saved \
             table in one step (`ColumnBatch`). hecs's column layout writes per archetype the component ids, the \
             count, the entities' handles as 64-bit numbers and one array per component; its row layout a map from \
             each handle to its components.\n"
        );
    }
}

/// The goal of a rollback save (with its checksum) and of a load of
/// 10,000 entities, in microseconds.
pub const ROLLBACK_GOAL_US: f64 = 50.0;

/// The "Rollback snapshots" section: a save and a load on archetable's
/// driver, on bevy_ecs as `bevy_ggrs` does them, and the floor.
fn rollback_section(w: &mut String, rows: &[Row]) {
    use crate::rollback::Step;
    let _ = writeln!(w, "## Rollback snapshots\n");
    let _ = writeln!(
        w,
        "One frame of rollback netcode's bookkeeping on {} entities of four components (two `i32` pairs, a `u32` \
         and a `String`): a save copies the world into a snapshot kept from earlier frames and computes the \
         frame's checksum; a load puts a snapshot back. archetable: `archetable-rollback`'s driver (`save_now`, \
         `load_frame`; every component registered with `component` and `copy_with_clone_from`). bevy_ecs: what \
         `bevy_ggrs` does, each registered component of each rolled-back entity cloned into a new map from \
         rollback id to value, and its checksum plugin's per-entity hashes (with archetable's hasher in place of \
         SeaHash); a load assigns each entity's value from the map. The floor clones the same values into \
         `Vec`s that keep their memory and back, and hashes nothing. archetable's snapshots are incremental: \
         a column neither written in place nor changed in its rows since the last save or load is neither \
         copied nor hashed again, and in these rows the frame wrote nothing (bevy_ecs and the floor copy \
         everything whatever the frame did). A frame that writes every value of a column pays that column's \
         copy and hash in full: `cargo run --release -p archetable-rollback --example rollback_speed` prints \
         both cases. The goal: at most {ROLLBACK_GOAL_US} µs each for archetable.\n",
        thousands(crate::rollback::ENTITIES)
    );
    let _ = writeln!(
        w,
        "| step | archetable | bevy_ecs (`bevy_ggrs`'s way) | raw floor | archetable / bevy_ecs | archetable / raw |"
    );
    let _ = writeln!(w, "| --- | ---: | ---: | ---: | ---: | ---: |");
    for (step, label) in [(Step::Save, "save + checksum"), (Step::Load, "load")] {
        let Some(row) = rows.iter().find(|r| r.section == Section::Rollback(step)) else { continue };
        let cell = |which| row.time(which).map_or_else(|| "–".to_owned(), format_duration);
        let ratio = |which| match (row.time(Implementation::Ours), row.time(which)) {
            (Some(ours), Some(other)) => format_ratio(Some(ours.as_secs_f64() / other.as_secs_f64())),
            _ => format_ratio(None),
        };
        let _ = writeln!(
            w,
            "| {label} | {} | {} | {} | {} | {} |",
            cell(Implementation::Ours),
            cell(Implementation::Bevy),
            cell(Implementation::Raw),
            ratio(Implementation::Bevy),
            ratio(Implementation::Raw),
        );
    }
    let _ = writeln!(w);
}

/// The goal of the parallel sweep: `par_for_each_mut` at most this multiple
/// of `for_each_mut`, at every count.
pub const PARALLEL_GOAL: f64 = 1.1;

/// The "Parallel iteration" section: per entity count, each engine's
/// parallel loop beside its serial one, and archetable's worst ratio.
fn parallel_section(w: &mut String, rows: &[Row], cores: usize) {
    let _ = writeln!(w, "## Parallel iteration on {cores} cores\n");
    let _ = writeln!(
        w,
        "One loop over that many movers (position += velocity, then {} rounds of a square root per coordinate: \
         modest work per entity), run in parallel and on the calling thread, on each engine the way its users write \
         it: archetable `par_for_each_mut` against `for_each_mut` (a kept `QueryState`), hecs rayon over \
         `query_mut().into_iter_batched({})` against `query_mut().into_iter().for_each`, bevy_ecs `par_iter_mut` \
         (default batching, compute task pool) against `iter_mut().for_each`. *par / serial* below 1 means the \
         parallel loop is faster; the goal for archetable is at most {PARALLEL_GOAL}x at every count. \
         archetable's ratio is of its two loops timed in turn in the same rounds, not of the two cells.\n",
        crate::par_sweep::DRIFT_ROUNDS,
        crate::par_sweep::HECS_BATCH,
    );
    let _ = writeln!(
        w,
        "| entities | archetable par | archetable serial | par / serial | hecs par | hecs serial | par / serial | bevy_ecs par | bevy_ecs serial | par / serial |"
    );
    let _ = writeln!(w, "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    let find =
        |entities: usize, parallel: bool| rows.iter().find(|r| r.section == Section::Parallel { entities, parallel });
    let counts = sweep_counts(rows, |section| match section {
        Section::Parallel { entities, .. } => Some(entities),
        _ => None,
    });
    let mut worst = Worst::default();
    for &n in &counts {
        let (par, serial) = (find(n, true), find(n, false));
        let time = |row: Option<&Row>, which| row.and_then(|r| r.time(which));
        let mut cells = vec![thousands(n)];
        for which in [Implementation::Ours, Implementation::Hecs, Implementation::Bevy] {
            let (p, s) = (time(par, which), time(serial, which));
            // archetable's two loops also took turns in the same rounds:
            // their ratio comes from those.
            let in_turn = par.and_then(|r| r.in_turn).filter(|_| which == Implementation::Ours);
            let ratio = in_turn.or_else(|| p.zip(s).map(|(p, s)| p.as_secs_f64() / s.as_secs_f64()));
            if which == Implementation::Ours {
                worst.see(ratio, n);
            }
            cells.push(p.map_or_else(|| "–".to_owned(), format_duration));
            cells.push(s.map_or_else(|| "–".to_owned(), format_duration));
            cells.push(format_ratio(ratio));
        }
        let _ = writeln!(w, "| {} |", cells.join(" | "));
    }
    worst.write(w, "archetable par / serial", PARALLEL_GOAL);
}

/// The entity counts of the sweep rows that `count` picks out, in order.
fn sweep_counts(rows: &[Row], count: impl Fn(Section) -> Option<usize>) -> Vec<usize> {
    let mut counts: Vec<usize> = rows.iter().filter_map(|r| count(r.section)).collect();
    counts.sort_unstable();
    counts.dedup();
    counts
}

/// The largest ratio of a sweep and the entity count it was seen at.
#[derive(Default)]
struct Worst(Option<(f64, usize)>);

impl Worst {
    fn see(&mut self, ratio: Option<f64>, entities: usize) {
        if let Some(r) = ratio {
            if self.0.is_none_or(|(w, _)| r > w) {
                self.0 = Some((r, entities));
            }
        }
    }

    /// The sweep's verdict line against `goal`.
    fn write(&self, w: &mut String, what: &str, goal: f64) {
        let _ = match self.0 {
            Some((r, n)) => {
                let verdict = if r <= goal { "met" } else { "missed" };
                writeln!(
                    w,
                    "\n- worst {what}: {r:.2}x, at {} entities (goal: at most {goal}x, {verdict}).\n",
                    thousands(n)
                )
            }
            None => writeln!(w, "\n- {what}: not measured together.\n"),
        };
    }
}

/// The goal of the heavy sweep: the default parallel call at most this
/// multiple of the better of the serial loop and `batch_size(64)`.
pub const HEAVY_GOAL: f64 = 1.1;

/// The "Heavy work" section: archetable's default parallel call against its
/// serial loop and `batch_size(64)`, per entity count.
fn heavy_section(w: &mut String, rows: &[Row], cores: usize) {
    use crate::par_sweep::{HeavyCall, HEAVY_BATCH, HEAVY_INVERSIONS};
    let _ = writeln!(
        w,
        "## Heavy work on {cores} cores
"
    );
    let _ = writeln!(
        w,
        "One loop over that many bodies doing about a microsecond of work each ({HEAVY_INVERSIONS} inversions of \
         a 4x4 matrix, then position += velocity), on archetable: *default* is `par_for_each_mut` with no batch \
         size, as a user writes it (the engine decides from the work); *serial* is `for_each_mut`; \
         *batch_size({HEAVY_BATCH})* is `par_iter_mut().batch_size({HEAVY_BATCH}).for_each`. *default / best* \
         divides the default call by the faster of the other two; the goal is at most {HEAVY_GOAL}x at every \
         count. The default call and the serial one take turns in the same rounds, and their ratio is of those \
         turns; against `batch_size({HEAVY_BATCH})`, timed in rounds of its own, the default call is compared \
         cell to cell.\n"
    );
    let _ =
        writeln!(w, "| entities | default | serial | batch_size({HEAVY_BATCH}) | default / serial | default / best |");
    let _ = writeln!(w, "| ---: | ---: | ---: | ---: | ---: | ---: |");
    let find = |entities: usize, call: HeavyCall| rows.iter().find(|r| r.section == Section::Heavy { entities, call });
    let time = |entities: usize, call: HeavyCall| find(entities, call).and_then(|r| r.time(Implementation::Ours));
    let counts = sweep_counts(rows, |section| match section {
        Section::Heavy { entities, .. } => Some(entities),
        _ => None,
    });
    let mut worst = Worst::default();
    for &n in &counts {
        let (default, serial, batched) =
            (time(n, HeavyCall::Default), time(n, HeavyCall::Serial), time(n, HeavyCall::Batched));
        let ratio = |a: Option<Duration>, b: Option<Duration>| a.zip(b).map(|(a, b)| a.as_secs_f64() / b.as_secs_f64());
        // The default call took turns with the serial one in the same
        // rounds: their ratio is of those turns. The batched call took
        // turns with the serial one in rounds of its own, so against it
        // the default call is compared cell to cell, never through two
        // ratios from different rounds.
        let default_vs_serial = find(n, HeavyCall::Default).and_then(|r| r.in_turn).or_else(|| ratio(default, serial));
        let batched_is_best = batched.is_some_and(|b| serial.is_none_or(|s| b < s));
        let vs_best = if batched_is_best { ratio(default, batched) } else { default_vs_serial };
        worst.see(vs_best, n);
        let cell = |t: Option<Duration>| t.map_or_else(|| "–".to_owned(), format_duration);
        let _ = writeln!(
            w,
            "| {} | {} | {} | {} | {} | {} |",
            thousands(n),
            cell(default),
            cell(serial),
            cell(batched),
            format_ratio(default_vs_serial),
            format_ratio(vs_best)
        );
    }
    worst.write(w, "default / best", HEAVY_GOAL);
}

/// How the implementations are driven, for the report's readers.
pub const NOTES: &str = "\
- **Every routine** calls its timed step the way a game calls a system once a frame: a boxed closure \
(`Box<dyn FnMut>`) called through its vtable once per run, for every engine and the floor alike (the schedule \
rows run a schedule of systems inside that step). Until this report the step was a generic closure compiled \
into the routine's own run. Measured with callgrind in the report's build, the change adds about ten \
instructions a run (the extra indirect call) and no row's loop compiles differently: `frag_iter_for` on \
archetable 3,607 then 3,621 instructions a run, its floor 4,440 then 4,451, `simple_iter_for` 130,066 then \
130,080.
- **archetable**: `spawn_batch`; a `QueryState` kept across runs, driven by `for_each_mut`; `insert` / `remove` / \
`despawn`; `heavy_compute` uses `QueryState::par_iter_mut(..).for_each` with the engine's defaults (it decides \
from the work whether to share it with rayon's threads), `heavy_compute_batch64` the same with `batch_size(64)`; \
`schedule` is an `archetable::Schedule` of three function systems, which runs non-conflicting \
systems in parallel on rayon; `schedule_for` writes each system as `for .. in query.iter_mut()`.
- **hecs**: `spawn_batch`; `query_mut` (hecs caches each query type's matching archetypes in the world); \
`insert_one` / `remove_one` / `despawn`; `heavy_compute` runs rayon over `into_iter_batched(64)` (hecs has no \
default batch). hecs has no \
scheduler: `schedule` runs `ab` beside `cd` with `rayon::join` (disjoint components, borrows checked at run \
time), then `ce`; `schedule_for` does the same with `for` loops over `query().iter()` and `query_mut()`. The sparse and first-query worlds are built with `EntityBuilder`.
- **bevy_ecs**: default features off except `std` and `multi_threaded`; `spawn_batch`; a `QueryState` kept \
across runs (`iter_mut().for_each`); `entity_mut().insert` / `remove`; `despawn`; `heavy_compute` uses \
`par_iter_mut` on the compute task pool (default batching; `BatchingStrategy::fixed(64)` in \
`heavy_compute_batch64`); `schedule` is a `Schedule` of three systems on the \
`MultiThreadedExecutor`; `schedule_for` writes each system as `for .. in query.iter_mut()`.
- **raw floor**: the same arithmetic over plain `Vec`s (struct of arrays) allocated at their final size; \
`heavy_compute` with rayon; `schedule` one loop after another; `add_remove` moves rows between two hand-made \
tables with a location array; `sparse_query` iterates only the matching tables. There is no floor for \
`first_query_10k_archetypes` and `despawn_100k_random`. The floors of `wide_spawn_100k` and \
`wide_user_spawn_100k` store what a spawned source adds to a plain spawn: its target's handle (8 bytes), for \
`ChildOf` the added and changed ticks of that handle, and its entry in the target's list.
- `tracked_iter` is `simple_iter` over `TrackedPosition` and `TrackedVelocity`, which wrap the same values and \
carry `#[component(track_changes)]`; bevy_ecs tracks changes on every component, so its cell is its \
`simple_iter`; hecs has no change tracking; the floor is `simple_iter`'s.
- Save workloads drop the bytes they wrote inside the timing; load workloads drop the loaded world outside it.
- `first_query_10k_archetypes` and `despawn_100k_random` build a fresh world before each run, outside the \
timing; spawn workloads drop their world outside the timing. The respawn workloads spawn into one world \
cleared before each run, outside the timing (`World::clear`; bevy_ecs: `World::clear_entities`), whose tables \
keep their memory, and the floor pushes into `Vec`s that keep theirs: the spawns without the allocator's work.";

/// The chart: per workload, archetable / best peer and archetable / raw floor as bars from
/// 1 on a log scale (left of 1: archetable faster).
/// Only the main table's rows are drawn.
pub fn svg(rows: &[Row]) -> String {
    let rows: Vec<&Row> = rows.iter().filter(|r| r.section == Section::Suite).collect();
    const WIDTH: f64 = 960.0;
    const LABEL: f64 = 250.0;
    const RIGHT: f64 = 70.0;
    const TOP: f64 = 70.0;
    const ROW: f64 = 34.0;
    const BAR: f64 = 12.0;
    let height = TOP + ROW * rows.len() as f64 + 44.0;

    let ratios = rows.iter().flat_map(|r| [r.vs_best_peer(), r.vs_floor()]).flatten();
    let (mut lo, mut hi) = (0.5f64, 2.0f64);
    for r in ratios {
        lo = lo.min(r);
        hi = hi.max(r);
    }
    let (lo, hi) = (lo.log2().floor(), hi.log2().ceil());
    let plot = WIDTH - LABEL - RIGHT;
    let x = |ratio: f64| LABEL + (ratio.log2() - lo) / (hi - lo) * plot;

    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="22" font-size="15" font-weight="bold">archetable time as a multiple of the best peer and of the raw floor (log scale; left of 1: archetable faster)</text>"#,
        10
    );
    let _ = writeln!(s, r##"<rect x="{LABEL}" y="34" width="12" height="12" fill="#3569b5"/>"##);
    let _ = writeln!(s, r#"<text x="{}" y="44">archetable / best peer</text>"#, LABEL + 18.0);
    let _ = writeln!(s, r##"<rect x="{}" y="34" width="12" height="12" fill="#a0a0a0"/>"##, LABEL + 150.0);
    let _ = writeln!(s, r#"<text x="{}" y="44">archetable / raw floor</text>"#, LABEL + 168.0);

    // Grid: one line per power of two, the line at 1 darker.
    let bottom = TOP + ROW * rows.len() as f64;
    for p in (lo as i32)..=(hi as i32) {
        let ratio = 2f64.powi(p);
        let gx = x(ratio);
        let (stroke, width) = if p == 0 { ("#000", 1.5) } else { ("#ddd", 1.0) };
        let _ = writeln!(
            s,
            r#"<line x1="{gx:.1}" y1="{}" x2="{gx:.1}" y2="{bottom}" stroke="{stroke}" stroke-width="{width}"/>"#,
            TOP - 6.0
        );
        let label = if p >= 0 { format!("{}x", 1u64 << p) } else { format!("1/{}", 1u64 << -p) };
        let _ = writeln!(s, r#"<text x="{gx:.1}" y="{}" text-anchor="middle">{label}</text>"#, bottom + 16.0);
    }
    let one = x(1.0);
    let _ = writeln!(
        s,
        r##"<text x="{:.1}" y="{}" text-anchor="end" fill="#555">&#8592; archetable faster</text>"##,
        one - 6.0,
        bottom + 32.0
    );
    let _ = writeln!(
        s,
        r##"<text x="{:.1}" y="{}" fill="#555">archetable slower &#8594;</text>"##,
        one + 6.0,
        bottom + 32.0
    );

    for (i, row) in rows.iter().enumerate() {
        let y = TOP + ROW * i as f64;
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{:.1}" text-anchor="end">{}</text>"#,
            LABEL - 8.0,
            y + ROW / 2.0 + 4.0,
            row.name
        );
        for (k, (ratio, color)) in
            [(row.vs_best_peer(), "#3569b5"), (row.vs_floor(), "#a0a0a0")].into_iter().enumerate()
        {
            let by = y + 4.0 + k as f64 * (BAR + 1.0);
            let Some(ratio) = ratio else {
                let _ = writeln!(
                    s,
                    r##"<text x="{:.1}" y="{:.1}" fill="#888">no floor</text>"##,
                    x(1.0) + 4.0,
                    by + BAR - 2.0
                );
                continue;
            };
            let (x0, x1) = (x(1.0).min(x(ratio)), x(1.0).max(x(ratio)));
            let _ = writeln!(
                s,
                r#"<rect x="{x0:.1}" y="{by:.1}" width="{:.1}" height="{BAR}" fill="{color}"><title>{}: {ratio:.2}x</title></rect>"#,
                (x1 - x0).max(1.0),
                row.name
            );
            let (tx, anchor) = if ratio >= 1.0 { (x1 + 4.0, "start") } else { (x0 - 4.0, "end") };
            let _ = writeln!(
                s,
                r#"<text x="{tx:.1}" y="{:.1}" text-anchor="{anchor}" font-size="10">{ratio:.2}x</text>"#,
                by + BAR - 2.0
            );
        }
    }
    let _ = writeln!(s, "</svg>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A quiet two-core machine, for pages built in tests.
    fn test_machine() -> Machine {
        Machine {
            cores: 2,
            cpu: "cpu".into(),
            date: "2000-01-01".into(),
            rustc: "rustc".into(),
            hecs: "1".into(),
            bevy_ecs: "2".into(),
            load: "0.00".into(),
        }
    }

    fn row(times_us: [Option<u64>; 4]) -> Row {
        let timing =
            |us: Option<u64>| us.map(|us| Timing { median: Duration::from_micros(us), samples: 5, runs_per_sample: 1 });
        Row {
            name: "w",
            about: "a workload",
            iteration: true,
            section: Section::Suite,
            baseline: None,
            timings: times_us.map(timing),
            in_turn: None,
            floor_in_turn: None,
        }
    }

    #[test]
    fn ratios_compare_ours_with_the_faster_peer_and_the_floor() {
        let r = row([Some(30), Some(60), Some(40), Some(20)]);
        assert_eq!(r.best_peer(), Some((Implementation::Bevy, Duration::from_micros(40))));
        assert_eq!(r.vs_best_peer(), Some(0.75));
        assert_eq!(r.vs_floor(), Some(1.5));
        let r = row([Some(30), Some(60), Some(40), None]);
        assert_eq!(r.vs_floor(), None);
    }

    #[test]
    fn the_rollback_section_sets_archetable_beside_bevy_and_the_floor() {
        use crate::rollback::Step;
        let mut save = row([Some(150), None, Some(3_000), Some(100)]);
        save.section = Section::Rollback(Step::Save);
        let mut load = row([Some(80), None, Some(800), Some(40)]);
        load.section = Section::Rollback(Step::Load);
        let page = markdown(&test_machine(), &[save, load], &[], &[], None, "report.svg", Duration::from_secs(1));
        let section = &page[page.find("## Rollback snapshots").expect("the section")..];
        assert!(section.contains("| save + checksum | 150 µs | 3.00 ms | 100 µs | 0.05x | 1.50x |"), "{section}");
        assert!(section.contains("| load | 80.0 µs | 800 µs | 40.0 µs | 0.10x | 2.00x |"), "{section}");
    }

    #[test]
    fn dates_and_durations_read_well() {
        assert_eq!(civil_date(0), "1970-01-01");
        assert_eq!(civil_date(11_016), "2000-02-29");
        assert_eq!(civil_date(20_000), "2024-10-04");
        assert_eq!(format_duration(Duration::from_nanos(1_234)), "1.23 µs");
        assert_eq!(format_duration(Duration::from_micros(45_600)), "45.6 ms");
        assert_eq!(format_duration(Duration::from_nanos(312)), "312 ns");
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(100_000), "100,000");
        assert_eq!(thousands(1_000_000), "1,000,000");
    }

    #[test]
    fn the_chart_and_the_page_name_every_workload() {
        let rows = [row([Some(30), Some(60), Some(40), Some(20)]), row([Some(10), Some(5), Some(8), None])];
        let chart = svg(&rows);
        assert!(chart.starts_with("<svg") && chart.trim_end().ends_with("</svg>"));
        assert_eq!(chart.matches("<rect x=").count(), 2 + 3, "two legend boxes and three bars");
        let machine = test_machine();
        let page = markdown(&machine, &rows, &[], &[], None, "report.svg", Duration::from_secs(1));
        assert!(page.contains("| w † | 30.0 µs | 60.0 µs | **40.0 µs** | 20.0 µs | 0.75x | 1.50x |"), "{page}");
        assert!(page.contains("![archetable / best peer and archetable / raw floor, per workload](report.svg)"));
    }

    #[test]
    fn the_page_shows_baselines_and_the_save_and_load_tables() {
        let mut simple = row([Some(10), Some(12), Some(11), Some(9)]);
        simple.name = "simple_iter";
        let mut tracked = row([Some(11), None, Some(11), Some(9)]);
        tracked.name = "tracked_iter";
        tracked.baseline = Some("simple_iter");
        let mut save = row([Some(300), Some(100), None, None]);
        save.name = "save_load_json_save";
        save.section = Section::SaveLoad(Format::Json, Direction::Save);
        let mut load = row([Some(200), Some(400), None, None]);
        load.name = "save_load_json_load";
        load.section = Section::SaveLoad(Format::Json, Direction::Load);
        let rows = [simple, tracked, save, load];
        assert!((rows[1].vs_baseline(&rows).expect("both measured") - 1.1).abs() < 1e-12);
        assert_eq!(rows[0].vs_baseline(&rows), None, "no baseline");
        let sizes = [Sizes { format: Format::Json, ours: 2_000_000, hecs: 1_500_000, hecs_rows: Some(3_000_000) }];
        let machine = test_machine();
        let page = markdown(&machine, &rows, &sizes, &[], None, "report.svg", Duration::from_secs(1));
        assert!(
            page.contains("- `tracked_iter` / `simple_iter` on archetable: 1.10x (goal: at most 1.2x, met)."),
            "{page}"
        );
        assert!(page.contains("| JSON | 300 µs | 100 µs | 3.00x | – | 200 µs | 400 µs | 0.50x | – |"), "{page}");
        assert!(page.contains("| JSON | 2.00 MB | 20.0 | 1.50 MB | 15.0 | 1.33x | 3.00 MB |"), "{page}");
        assert!(!page.contains("| save_load_json_save"), "save and load rows stay out of the main table");
        assert_eq!(svg(&rows).matches("<title>").count(), 4, "two bars for each main row only");
    }

    #[test]
    fn a_user_relationship_spawn_is_held_to_the_child_spawn_goal() {
        let mut flat = row([Some(10), None, Some(20), Some(2)]);
        flat.name = "flat_spawn_100k";
        let mut wide = row([Some(14), None, Some(50), Some(3)]);
        wide.name = "wide_spawn_100k";
        wide.baseline = Some("flat_spawn_100k");
        let mut user = row([Some(16), None, None, Some(3)]);
        user.name = "wide_user_spawn_100k";
        user.baseline = Some("flat_spawn_100k");
        let rows = [flat, wide, user];
        let page = markdown(&test_machine(), &rows, &[], &[], None, "report.svg", Duration::from_secs(1));
        assert!(
            page.contains(
                "- `wide_spawn_100k` / `flat_spawn_100k` on archetable: 1.40x (goal: at most 1.5x, met); the raw \
                 floor written the same way: 1.50x."
            ),
            "{page}"
        );
        assert!(
            page.contains(
                "- `wide_user_spawn_100k` / `flat_spawn_100k` on archetable: 1.60x (goal: at most 1.5x, missed); the \
                 raw floor written the same way: 1.50x."
            ),
            "{page}"
        );
    }

    #[test]
    fn a_variant_timed_in_turn_is_judged_by_the_ratio_of_its_rounds() {
        let samples = |runs: &[f64]| Samples { runs_per_sample: 1, per_run: runs.to_vec() };
        // Pooled: the variant's runs 3, 4, 5, 9, 10 (median 5), the
        // baseline's 2, 2, 2, 3, 4 (median 2); the last round has no
        // baseline and counts on neither side.
        let rounds = [
            (samples(&[4.0, 5.0, 3.0]), samples(&[2.0])),
            (samples(&[9.0]), samples(&[3.0, 2.0, 4.0])),
            (samples(&[10.0]), samples(&[2.0])),
            (samples(&[100.0]), samples(&[])),
        ];
        assert_eq!(in_turn_ratio(&rounds), Some(2.5));
        assert_eq!(in_turn_ratio(&[]), None);
        assert_eq!(in_turn_ratio(&[(samples(&[1.0]), samples(&[]))]), None, "a round without a baseline");

        // The rows' medians say 1.4x; the rounds taken in turn say 1.6x.
        let mut flat = row([Some(10), None, Some(20), Some(2)]);
        flat.name = "flat_spawn_100k";
        let mut wide = row([Some(14), None, Some(50), Some(3)]);
        wide.name = "wide_spawn_100k";
        wide.baseline = Some("flat_spawn_100k");
        wide.in_turn = Some(1.6);
        let rows = [flat, wide];
        assert_eq!(rows[1].vs_baseline(&rows), Some(1.6));
        let page = markdown(&test_machine(), &rows, &[], &[], None, "report.svg", Duration::from_secs(1));
        assert!(
            page.contains(
                "- `wide_spawn_100k` / `flat_spawn_100k` on archetable: 1.60x, the two timed in turn (goal: at most \
                 1.5x, missed); the raw floor written the same way: 1.50x."
            ),
            "{page}"
        );
    }

    /// Logs each run of a routine by its letter; its runs have set-up, so
    /// that a sample is one run and the log shows each sample.
    struct Logged(char, std::rc::Rc<std::cell::RefCell<String>>);

    impl Routine for Logged {
        fn per_run_setup(&self) -> bool {
            true
        }

        fn run(&mut self) {
            self.1.borrow_mut().push(self.0);
        }
    }

    #[test]
    fn two_routines_timed_in_turn_alternate_sample_by_sample() {
        let log = std::rc::Rc::new(std::cell::RefCell::new(String::new()));
        let (mut a, mut b) = (Logged('a', log.clone()), Logged('b', log.clone()));
        let [first, second] = sample_in_turn(&mut a, &mut b, Duration::ZERO);
        // One warm-up run each, then a sample of one, then of the other.
        assert_eq!(log.borrow().as_str(), "abababab");
        assert_eq!((first.runs_per_sample, first.per_run.len()), (1, MIN_SAMPLES));
        assert_eq!((second.runs_per_sample, second.per_run.len()), (1, MIN_SAMPLES));
    }

    #[test]
    fn an_iteration_row_timed_in_turn_with_the_floor_is_judged_by_that_ratio() {
        // The cells say 1.10x; the turns say 1.17x, over frag_iter's 1.15x
        // goal and under every other row's 1.2x.
        let mut frag = row([Some(110), Some(150), Some(200), Some(100)]);
        frag.name = "frag_iter";
        let mut other = frag.clone();
        other.name = "iter_10k";
        assert_eq!(frag.vs_floor(), Some(1.1));
        frag.floor_in_turn = Some(1.17);
        other.floor_in_turn = Some(1.17);
        assert_eq!(frag.vs_floor(), Some(1.17));
        let page = markdown(&test_machine(), &[frag, other], &[], &[], None, "report.svg", Duration::from_secs(1));
        assert!(page.contains("| frag_iter † | 110 µs | **150 µs** | 200 µs | 100 µs | 0.73x | 1.17x |"), "{page}");
        assert!(
            page.contains(
                "- iteration workloads above their goal over the raw floor: `frag_iter` (1.17x, goal 1.15x)."
            ),
            "{page}"
        );
    }

    #[test]
    fn the_page_pairs_each_parallel_loop_with_its_serial_one() {
        let sweep = |name, entities, parallel, us: [Option<u64>; 3]| {
            let mut r = row([us[0], us[1], us[2], None]);
            r.name = name;
            r.section = Section::Parallel { entities, parallel };
            r
        };
        let rows = [
            sweep("par_10", 10, true, [Some(11), Some(50), Some(40)]),
            sweep("par_10_serial", 10, false, [Some(10), Some(10), Some(10)]),
            sweep("par_1m", 1_000_000, true, [Some(600), Some(500), Some(700)]),
            sweep("par_1m_serial", 1_000_000, false, [Some(1000), Some(1000), Some(1000)]),
        ];
        let machine = test_machine();
        let page = markdown(&machine, &rows, &[], &[], None, "report.svg", Duration::from_secs(1));
        assert!(page.contains("## Parallel iteration on 2 cores"), "{page}");
        // Timed in turn, archetable's loops say 1.20x at 10 entities, where
        // the cells say 1.10x; the peers keep their cells' ratios.
        let mut in_turn = rows.clone();
        in_turn[0].in_turn = Some(1.2);
        let turned = markdown(&machine, &in_turn, &[], &[], None, "report.svg", Duration::from_secs(1));
        assert!(
            turned
                .contains("| 10 | 11.0 µs | 10.0 µs | 1.20x | 50.0 µs | 10.0 µs | 5.00x | 40.0 µs | 10.0 µs | 4.00x |"),
            "{turned}"
        );
        assert!(
            turned.contains("- worst archetable par / serial: 1.20x, at 10 entities (goal: at most 1.1x, missed)."),
            "{turned}"
        );
        assert!(
            page.contains("| 10 | 11.0 µs | 10.0 µs | 1.10x | 50.0 µs | 10.0 µs | 5.00x | 40.0 µs | 10.0 µs | 4.00x |"),
            "{page}"
        );
        assert!(page.contains("| 1,000,000 | 600 µs | 1.00 ms | 0.60x |"), "{page}");
        assert!(
            page.contains("- worst archetable par / serial: 1.10x, at 10 entities (goal: at most 1.1x, met)."),
            "{page}"
        );
        assert!(!page.contains("| par_10"), "sweep rows stay out of the main table");
    }

    #[test]
    fn the_heavy_section_compares_the_default_call_with_the_better_of_the_others() {
        use crate::par_sweep::HeavyCall;
        let heavy = |name, entities, call, us: u64| {
            let mut r = row([Some(us), None, None, None]);
            r.name = name;
            r.section = Section::Heavy { entities, call };
            r
        };
        let rows = [
            heavy("heavy_10", 10, HeavyCall::Default, 10),
            heavy("heavy_10_serial", 10, HeavyCall::Serial, 10),
            heavy("heavy_10_batch64", 10, HeavyCall::Batched, 11),
            heavy("heavy_100", 100, HeavyCall::Default, 60),
            heavy("heavy_100_serial", 100, HeavyCall::Serial, 100),
            heavy("heavy_100_batch64", 100, HeavyCall::Batched, 50),
        ];
        let machine = test_machine();
        let page = markdown(&machine, &rows, &[], &[], None, "report.svg", Duration::from_secs(1));
        assert!(page.contains("## Heavy work on 2 cores"), "{page}");
        // A load above the cores at the start marks the page as a smoke test.
        let busy = Machine { load: "5.00".into(), ..machine.clone() };
        let busy_page = markdown(&busy, &rows, &[], &[], None, "report.svg", Duration::from_secs(1));
        assert!(busy_page.contains("**The machine was busy** (more runnable work than its 2 cores"), "{busy_page}");
        assert!(page.contains("| 10 | 10.0 µs | 10.0 µs | 11.0 µs | 1.00x | 1.00x |"), "{page}");
        assert!(page.contains("| 100 | 60.0 µs | 100 µs | 50.0 µs | 0.60x | 1.20x |"), "{page}");
        assert!(
            page.contains("- worst default / best: 1.20x, at 100 entities (goal: at most 1.1x, missed)."),
            "{page}"
        );
        assert!(!page.contains("| heavy_10"), "sweep rows stay out of the main table");

        // Timed in turn with the serial call, the default is 1.15x at 10
        // (the cells say 1.00x), where the serial call is the best; at 100
        // the batched call is the best, and the default is compared with
        // its cell (1.20x), not through the batched call's own ratio to
        // the serial one, taken in other rounds.
        let mut in_turn = rows.clone();
        in_turn[0].in_turn = Some(1.15);
        in_turn[2].in_turn = Some(1.5);
        in_turn[3].in_turn = Some(0.5);
        in_turn[5].in_turn = Some(0.3);
        let turned = markdown(&machine, &in_turn, &[], &[], None, "report.svg", Duration::from_secs(1));
        assert!(turned.contains("| 10 | 10.0 µs | 10.0 µs | 11.0 µs | 1.15x | 1.15x |"), "{turned}");
        assert!(turned.contains("| 100 | 60.0 µs | 100 µs | 50.0 µs | 0.50x | 1.20x |"), "{turned}");
        assert!(
            turned.contains("- worst default / best: 1.20x, at 100 entities (goal: at most 1.1x, missed)."),
            "{turned}"
        );
    }

    #[test]
    fn sampling_takes_at_least_the_minimum_of_samples() {
        let mut steady = crate::routine::Steady::new(0u64, |runs| *runs += 1);
        let samples = sample(&mut steady, Duration::ZERO);
        assert_eq!(samples.per_run.len(), MIN_SAMPLES);
        assert_eq!(Samples::from_line(&samples.to_line()), Some(samples.clone()));
        let built = sample(&mut crate::routine::Build::new(|| vec![0u8; 64]), Duration::ZERO);
        assert_eq!(built.runs_per_sample, 1);
        let timing = summarize(&[samples, built]);
        assert_eq!(timing.samples, 2 * MIN_SAMPLES);
    }

    #[test]
    fn the_browser_section_reads_the_web_checks_figures() {
        let figures = "date 2026-11-28 17:40 UTC\nload_average 0.50 at the start, 1.20 at the end\nnode v20.20.2\n\
                       chromium Chromium 156.0\nwasm_built_bytes 629000\nwasm_bytes 432400\nwasm_gzip_bytes 156000\n\
                       checks_wasm_bytes 1830000\nnative_entities 10000\nnative_query_us 7.10\nnative_schedule_us 27.00\n\
                       native_schedule_one_thread_us 26.00\nwasm_query_us 8.52\nwasm_schedule_us 83.00\n\
                       page_frame frame work with 900 to 1,100 entities: median 0.61 ms\n";
        let mut w = String::new();
        web_section(&mut w, Some(figures));
        assert!(w.contains("on 2026-11-28 17:40 UTC (load average 0.50 at the start, 1.20 at the end; Node v20.20.2"));
        assert!(
            w.contains("| the page's module (`fireworks.wasm`) | | 432 KB (629 KB built, 156 KB gzipped) | |"),
            "{w}"
        );
        assert!(w.contains("| the tests' module (`checks.wasm`, every layer) | | 1830 KB | |"), "{w}");
        assert!(w.contains("over 10,000 entities (`for_each`, two components) | 7.1 µs | 8.5 µs | 1.20 |"), "{w}");
        assert!(w.contains("| one run of a `Schedule` of three systems over them | 27.0 µs | 83.0 µs | 3.07 |"), "{w}");
        assert!(w.contains("| the page's frame: frame work with 900 to 1,100 entities: median 0.61 ms | | | |"), "{w}");

        let mut none = String::new();
        web_section(&mut none, None);
        assert!(none.contains("No figures: run `scripts/web-test.sh`"), "{none}");
    }
}
