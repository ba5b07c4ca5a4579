//! The property-based suites: the world, change tracking, hierarchies and
//! save/load, each checked against a model over random operation sequences;
//! and 300 component types in one world, checked against a model
//! (`many_types`).
//! One module per suite, in one test binary so that a cold `cargo test`
//! links the engine once (`cargo test -p archetable-tests model::`).
//! `PROPTEST_CASES` sets the number of cases of every suite.

mod change_model;
mod hierarchy_model;
mod many_types;
mod model;
mod save_load;
