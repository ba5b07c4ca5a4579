//! Integration tests of the engine's public API, as a user's crate meets it:
//! the world and its entities, components and bundles, queries, storage,
//! pools, hooks, cloning, transactions and disabled entities. One module
//! per topic; filter by module as before (`cargo test --test engine
//! queries::`).
//!
//! The topics share one test binary so that a cold `cargo test` links the
//! engine once for all of them, not once per file. A module that needs
//! something global to the process says how it keeps to itself: the
//! counting allocator of `pool_allocations` counts only on the thread that
//! asks it to.

mod access;
mod builder;
mod change_tracking;
mod cloning;
mod cloning_in_place;
mod column_batch;
mod combinations;
mod command_buffer;
mod derive;
mod derive_hygiene;
mod derive_more;
mod despawn_where;
mod disabling;
mod drops;
mod entity_mut;
mod for_each_tails;
mod glob_import;
mod hook_plans;
mod hooks;
mod insert_batch;
mod names;
mod pool_allocations;
mod pools;
mod prelude;
mod queries;
mod query_many;
mod query_steps;
mod query_terms;
mod reliability_limits;
mod spawn_at;
mod take;
mod transaction;
mod world;
mod write_stamps;
