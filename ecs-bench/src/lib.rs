//! Benchmark workloads.
