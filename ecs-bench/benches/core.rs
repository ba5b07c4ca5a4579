//! Criterion benchmarks of the core operations beside the raw floor.

fn main() {}
