//! Criterion benchmarks of every workload on archetable, hecs, bevy_ecs and the raw
//! floor: the routines of `archetable_bench::workloads`, timed by
//! `archetable_bench::routine::time_runs` as the report binary times them, but with
//! criterion's longer sampling and statistics.
//!
//! ```text
//! cargo bench -p archetable-bench                          # everything (long)
//! cargo bench -p archetable-bench -- simple_iter           # one workload, all implementations
//! cargo bench -p archetable-bench -- 'frag_iter/archetable'       # one cell
//! cargo bench -p archetable-bench -- save_load             # the save and load workloads
//! ```

use std::time::Duration;

use archetable_bench::routine::time_runs;
use archetable_bench::{workloads, Implementation};
use criterion::{Criterion, SamplingMode};

/// From this time per run up, a routine without per-run set-up is sampled as
/// the routines with set-up are: few runs per sample (the save and load
/// workloads take tens of milliseconds or more a run).
const SLOW: Duration = Duration::from_millis(10);

fn main() {
    let mut c = Criterion::default().configure_from_args();
    for workload in workloads() {
        let mut group = c.benchmark_group(workload.name);
        let mut routines: Vec<_> =
            Implementation::ALL.into_iter().filter_map(|which| Some((which, (workload.routine)(which)?))).collect();
        // One untimed run each, also a warm-up, tells the slow groups apart.
        let slow = routines.iter_mut().any(|(_, r)| r.per_run_setup() || time_runs(r.as_mut(), 1) > SLOW);
        if slow {
            // Each run needs untimed set-up that can dwarf the run itself,
            // or is long: few runs, a fixed number per sample.
            group.sampling_mode(SamplingMode::Flat).sample_size(10).measurement_time(Duration::from_millis(200));
        }
        for (which, mut routine) in routines {
            group.bench_function(which.name(), |b| b.iter_custom(|iters| time_runs(routine.as_mut(), iters)));
        }
        group.finish();
    }
    c.final_summary();
}
