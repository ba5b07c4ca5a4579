//! The engine of the `archetable` crate: entities stored in archetype tables, typed
//! cached queries and bundles, systems and the schedule that runs them,
//! resources and events. Use it through the `archetable` facade, which adds the
//! derive macros.
//!
//! The folders of `src/` are the engine's layers, lowest first; each
//! `mod.rs` says what its layer holds. A layer imports only the ones below
//! it, but for the few arrows listed, each with its reason, in
//! `layer_rules.rs` (a test that fails on any other):
//!
//! ```text
//! entity/     handles, the allocator, entity locations, the errors that name an entity
//! component/  the Component trait and registry, bundles, required components, change ticks
//! storage/    columns, tables, sparse sets, pools, the table graph, bit sets, table moves, resources
//! world/      World and every operation on it: spawn, insert, remove, despawn, hooks,
//!             resources and events, cloning, transactions, column batches, pools
//! query/      fetch, filters, QueryState, iterators, parallel iteration
//! system/     system parameters, function systems, commands, event readers and writers
//! schedule/   ordering, groups, the executor, timings
//! observer/, hierarchy/, game_loop/   the layers above one frame
//! ```
//!
//! `clock.rs`, `names.rs`, `trace.rs` and `tuples.rs` at the root are
//! utilities that import no layer.
//!
//! `unsafe` code lives only in the storage modules (`storage/`: `column`,
//! `archetype`, `sparse`, `builder`, `structural`, `pool`, `resource`; the
//! bundle traits and the erased drop and clone in `component/bundle.rs` and
//! `component/erased.rs`; the column batches' writes in
//! `world/column_batch.rs`), the query and system-parameter fetch modules
//! (`query`, `system`, and `observer/function.rs`, which runs an
//! observer's parameters), and the schedule's executor, which runs systems
//! through a shared world once their accesses are proven disjoint; each of
//! those opts in with `#[allow(unsafe_code)]`, and every block states why it
//! holds.

#![deny(unsafe_code)]
#![warn(missing_docs)]

// Lets the derive macros' output, which names `::archetable_core`, compile inside
// this crate's own tests.
extern crate self as archetable_core;

mod clock;
mod component;
mod entity;
#[cfg(feature = "game-loop")]
mod game_loop;
#[cfg(feature = "hierarchy")]
mod hierarchy;
#[cfg(test)]
mod layer_rules;
mod names;
#[cfg(feature = "observers")]
pub mod observer;
#[cfg(not(feature = "observers"))]
#[path = "observer/disabled.rs"]
mod observer;
#[allow(unsafe_code)]
pub mod query;
mod schedule;
pub mod storage;
#[allow(unsafe_code)]
pub mod system;
mod trace;
mod tuples;
mod world;

pub use component::bundle::Bundle;
pub use component::change::{ComponentTicks, Mut, Ref, RunTicks, Tick, Tracked};
pub use component::disabling::Disabled;
pub use component::erased::Reset;
pub use component::name::Name;
pub use component::required::Requires;
pub use component::{Component, ComponentId, MutableComponent, StorageType};
pub use entity::error::SpawnAtError;
pub use entity::error::{AllocatorStateError, ComponentError, EntityError, QueryEntityError};
#[cfg(feature = "serde")]
pub use entity::ENTITY_SERDE_NAME;
pub use entity::{AllocatorState, Entity};
#[cfg(feature = "game-loop")]
pub use game_loop::{in_state, FixedTime, GameLoop, LoopStarted, NextState, Stage, State, States};
#[cfg(feature = "hierarchy")]
pub use hierarchy::{
    ChildOf, ChildSpawner, Children, HierarchyError, Relationship, RelationshipTarget, SourceIter, SourceList,
};
#[cfg(feature = "observers")]
pub use observer::{ObserverId, OnAdd, OnDespawn, OnInsert, OnRemove, OnReplace, Trigger, TriggerTargets};
pub use query::{Added, Changed, Or, QueryData, QueryFilter, QueryIter, QueryState, ReadOnlyQueryData, With, Without};
pub use query::{AnyOf, ArchetypeFilter, Has, QueryCombinationIter, QueryManyIter, QueryManyIterMut, QueryParIter};
pub use schedule::{
    Ambiguities, Ambiguity, Clash, Condition, IntoCondition, IntoSystemSelector, IntoSystems, Schedule, ScheduleError,
    SetConfig, SystemConfig, SystemId, SystemSelector, SystemTiming, Systems, Timings,
};
pub use storage::builder::{BuiltBundle, EntityBuilder};
pub use storage::pool::PooledBundle;
pub use storage::resource::{Resource, ResourceId};
#[cfg(feature = "observers")]
pub use system::IntoObserver;
pub use system::{CommandBuffer, ParamSet};
pub use system::{
    Commands, EntityCommands, EventReader, EventWriter, IntoSystem, Local, Query, RemovedComponents, Res, ResMut,
    System, SystemParam,
};
pub use system::{In, InMut, InRef, IntoIoSystem, IoSystem, RegisteredSystemId, ResultSystem, RunSystemError};
pub use system::{Populated, Single, SkippedSystem};
pub use world::cloning::CloneError;
pub use world::column_batch::{ColumnBatch, ColumnBatchError};
pub use world::command_queue::{CommandQueue, ForeignQueueError};
pub use world::entity_mut::EntityWorldMut;
pub use world::entity_ref::EntityRef;
pub use world::event::{Event, EventCursor, Events};
pub use world::hooks::{ComponentHooks, HookWorld};
pub use world::named::EntityLabel;
pub use world::removed::RemovalRecord;
pub use world::time::Time;
pub use world::{SpawnBatch, SpawnBundle, World, WorldId};

/// Items the derive macros' output names; not part of the public API.
#[doc(hidden)]
pub mod __private {
    pub use crate::component::erased::PoolFns;
    #[cfg(feature = "hierarchy")]
    pub use crate::hierarchy::{install_relationship, install_target, EngineAccess};
    pub use crate::query::{ColumnFetch, MutRef};
    pub use crate::system::registered::registry_type_id;
}
