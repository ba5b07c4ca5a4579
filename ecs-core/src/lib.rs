//! The engine of the `archetable` crate: entities stored in archetype tables, typed
//! cached queries and bundles, systems and the schedule that runs them,
//! resources and events. Use it through the `archetable` facade, which adds the
//! derive macros.
//!
//! `unsafe` code lives only in the storage modules (`column`, `archetype`,
//! `sparse`, `builder`, `bundle`, `structural`, `table_load`, `pool`, `resource`), the query and
//! system-parameter fetch modules (`query`, `system`), and the schedule's
//! executor, which runs systems through a shared world once their accesses
//! are proven disjoint; each of those opts in with `#[allow(unsafe_code)]`,
//! and every block states why it holds.

#![deny(unsafe_code)]
#![warn(missing_docs)]

// Lets the derive macros' output, which names `::archetable_core`, compile inside
// this crate's own tests.
extern crate self as archetable_core;

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
pub use component::required::Requires;
pub use component::{Component, ComponentId, StorageType};
pub use entity::error::SpawnAtError;
pub use entity::error::{AllocatorStateError, ComponentError, EntityError, QueryEntityError};
#[cfg(feature = "serde")]
pub use entity::ENTITY_SERDE_NAME;
pub use entity::{AllocatorState, Entity};
#[cfg(feature = "game-loop")]
pub use game_loop::{in_state, FixedTime, GameLoop, NextState, Stage, State, States};
#[cfg(feature = "hierarchy")]
pub use hierarchy::{ChildOf, ChildSpawner, Children, HierarchyError, Relationship, RelationshipTarget};
#[cfg(feature = "observers")]
pub use observer::{ObserverId, OnAdd, OnDespawn, OnInsert, OnRemove, OnReplace, Trigger, TriggerTargets};
pub use query::{Added, Changed, Or, QueryData, QueryFilter, QueryIter, QueryState, ReadOnlyQueryData, With, Without};
pub use query::{AnyOf, ArchetypeFilter, Has, QueryCombinationIter, QueryManyIter, QueryManyIterMut, QueryParIter};
pub use schedule::{
    IntoSystemSelector, Schedule, ScheduleError, SystemConfig, SystemId, SystemSelector, SystemTiming, Timings,
};
pub use storage::builder::{BuiltBundle, EntityBuilder};
pub use storage::pool::{PooledBundle, Reset};
pub use storage::resource::{Resource, ResourceId};
#[cfg(feature = "observers")]
pub use system::IntoObserver;
pub use system::{CommandBuffer, ParamSet};
pub use system::{
    CommandQueue, Commands, EntityCommands, EventReader, EventWriter, ForeignQueueError, IntoSystem, Local, Query,
    RemovedComponents, Res, ResMut, System, SystemParam,
};
pub use world::cloning::CloneError;
pub use world::column_batch::{ColumnBatch, ColumnBatchError};
pub use world::entity_mut::EntityWorldMut;
pub use world::entity_ref::EntityRef;
pub use world::event::{Event, EventCursor, Events};
pub use world::hooks::{ComponentHooks, HookWorld};
pub use world::time::Time;
pub use world::{SpawnBatch, SpawnBundle, World, WorldId};

/// Items the derive macros' output names; not part of the public API.
#[doc(hidden)]
pub mod __private {
    #[cfg(feature = "hierarchy")]
    pub use crate::hierarchy::{install_relationship, install_target};
    pub use crate::query::{ColumnFetch, MutRef};
    pub use crate::storage::pool::PoolFns;
}
