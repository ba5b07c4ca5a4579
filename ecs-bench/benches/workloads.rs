//! Criterion benchmarks of every workload on ecs, hecs, bevy_ecs and the raw
//! floor: the routines of `ecs_bench::workloads`, timed by
//! `ecs_bench::routine::time_runs` as the report binary times them, but with
//! criterion's longer sampling and statistics.
//!
//! ```text
//! cargo bench -p ecs-bench                          # everything (long)
//! cargo bench -p ecs-bench -- simple_iter           # one workload, all implementations
//! cargo bench -p ecs-bench -- 'frag_iter/ecs'       # one cell
//! ```

use std::time::Duration;

use criterion::{Criterion, SamplingMode};
use ecs_bench::routine::time_runs;
use ecs_bench::{workloads, Implementation};

fn main() {
    let mut c = Criterion::default().configure_from_args();
    for workload in workloads() {
        let mut group = c.benchmark_group(workload.name);
        for which in Implementation::ALL {
            let Some(mut routine) = (workload.routine)(which) else { continue };
            if routine.per_run_setup() {
                // Each run needs untimed set-up that can dwarf the run itself:
                // few runs, a fixed number per sample.
                group.sampling_mode(SamplingMode::Flat).sample_size(10).measurement_time(Duration::from_millis(200));
            }
            group.bench_function(which.name(), |b| b.iter_custom(|iters| time_runs(routine.as_mut(), iters)));
        }
        group.finish();
    }
    c.final_summary();
}
