//! Integration tests of the layers above one operation, as a user's crate
//! meets them: systems and schedules, the game loop and its states,
//! hierarchies, observers, required components, sparse storage, prefabs
//! and saves. One module per topic; filter by module as before
//! (`cargo test --test gameplay hierarchy::`).
//!
//! The topics share one test binary so that a cold `cargo test` links the
//! engine once for all of them, not once per file. The modules that read
//! the engine's warnings capture them through `logs`, which keeps each
//! test's warnings to the thread that asked for them.

mod logs;

mod command_warnings;
mod determinism;
mod disabling;
mod first_lists;
mod game_loop;
mod game_resume;
mod hierarchy;
mod hierarchy_data;
mod hierarchy_integrity;
mod hierarchy_misuse;
mod hierarchy_refusals;
mod load_atomicity;
mod names;
mod observers;
mod param_wrappers;
mod piping;
mod prefabs;
mod registered_systems;
mod required;
mod resume_warning;
mod save_report;
mod schedule;
mod schedule_ambiguities;
mod schedule_sets;
mod serde_small_stacks;
mod showcase;
mod single_populated;
mod sparse;
mod spawn_joins;
mod states;
mod system_params_more;
mod systems;
mod time_extremes;
