//! Criterion benchmarks of the core operations of `ecs`, each beside its raw
//! floor: the same work on plain `Vec`s (see `ecs_bench` for the workloads).
//!
//! ```text
//! cargo bench -p ecs-bench --bench core
//! cargo bench -p ecs-bench --bench core -- iter_10k      # one group
//! ```

use std::hint::black_box;

use criterion::Criterion;
use ecs::QueryState;
use ecs_bench::{frag, Position, RawBodies, RawTables, Velocity, N};

/// Spawning into a fresh world; the world is dropped outside the timing.
fn spawn_10k(c: &mut Criterion) {
    let mut group = c.benchmark_group("spawn_10k");
    group.bench_function("ecs_spawn", |b| b.iter_with_large_drop(|| ecs_bench::spawn_loop(black_box(N))));
    group.bench_function("ecs_spawn_batch", |b| b.iter_with_large_drop(|| ecs_bench::spawn_batch(black_box(N))));
    group.bench_function("raw", |b| b.iter_with_large_drop(|| RawBodies::spawn(black_box(N))));
    group.bench_function("raw_reserved", |b| b.iter_with_large_drop(|| RawBodies::spawn_reserved(black_box(N))));
    group.finish();
}

/// `position += velocity` over every entity.
fn iter_10k(c: &mut Criterion) {
    let mut group = c.benchmark_group("iter_10k");

    let mut world = ecs_bench::spawn_batch(N);
    let mut state = QueryState::<(&mut Position, &Velocity)>::new(&mut world);
    group.bench_function("ecs_state_for", |b| {
        b.iter(|| {
            for (mut position, velocity) in state.iter_mut(black_box(&mut world)) {
                ecs_bench::step(&mut position, velocity);
            }
        })
    });
    group.bench_function("ecs_state_for_each", |b| {
        b.iter(|| {
            state.for_each_mut(black_box(&mut world), |(mut position, velocity)| {
                ecs_bench::step(&mut position, velocity);
            })
        })
    });
    group.bench_function("ecs_query_mut_for", |b| {
        b.iter(|| {
            for (mut position, velocity) in black_box(&mut world).query_mut::<(&mut Position, &Velocity)>() {
                ecs_bench::step(&mut position, velocity);
            }
        })
    });

    let mut raw = RawBodies::spawn_reserved(N);
    group.bench_function("raw", |b| {
        b.iter(|| {
            let raw = black_box(&mut raw);
            ecs_bench::raw_step_all(&mut raw.positions, &raw.velocities);
        })
    });
    group.finish();
}

/// Inserting `B` into every `(A,)` entity, then removing it from each.
fn add_remove_10k(c: &mut Criterion) {
    let mut group = c.benchmark_group("add_remove_10k");
    let (mut world, entities) = ecs_bench::add_remove_world(N);
    group.bench_function("ecs", |b| b.iter(|| ecs_bench::add_remove_all(black_box(&mut world), &entities)));
    let mut raw = RawTables::new(N);
    group.bench_function("raw_tables", |b| b.iter(|| black_box(&mut raw).add_remove_all()));
    group.finish();
}

/// Doubling `Data` over 26 archetypes of 20 entities each.
fn frag_iter(c: &mut Criterion) {
    let mut group = c.benchmark_group("frag_iter");
    let mut world = frag::world();
    let mut state = QueryState::<&mut frag::Data>::new(&mut world);
    group.bench_function("ecs_state_for", |b| {
        b.iter(|| {
            for mut data in state.iter_mut(black_box(&mut world)) {
                data.0 *= 2.0;
            }
        })
    });
    group.bench_function("ecs_state_for_each", |b| {
        b.iter(|| state.for_each_mut(black_box(&mut world), |mut data| data.0 *= 2.0))
    });
    let mut raw = frag::raw();
    group.bench_function("raw", |b| {
        b.iter(|| {
            for table in black_box(&mut raw).iter_mut() {
                for data in table {
                    data.0 *= 2.0;
                }
            }
        })
    });
    group.finish();
}

// What `criterion_group!` and `criterion_main!` expand to, written out so
// no undocumented public function is generated.
fn main() {
    let mut c = Criterion::default().configure_from_args();
    spawn_10k(&mut c);
    iter_10k(&mut c);
    add_remove_10k(&mut c);
    frag_iter(&mut c);
    c.final_summary();
}
