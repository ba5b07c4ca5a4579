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

#[allow(unsafe_code)]
mod archetype;
mod bitset;
#[allow(unsafe_code)]
mod builder;
#[allow(unsafe_code)]
mod bundle;
mod change;
mod cloning;
#[allow(unsafe_code)]
mod column;
mod component;
mod entity;
mod entity_mut;
mod entity_ops;
mod entity_ref;
#[cfg(feature = "serde")]
mod entity_serde;
mod error;
mod event;
#[cfg(feature = "game-loop")]
mod game_loop;
mod graph;
#[cfg(feature = "hierarchy")]
mod hierarchy;
mod hooks;
#[cfg(feature = "observers")]
pub mod observer;
#[cfg(not(feature = "observers"))]
#[path = "observer/disabled.rs"]
mod observer;
#[allow(unsafe_code)]
mod pool;
#[allow(unsafe_code)]
pub mod query;
mod removed;
mod required;
#[allow(unsafe_code)]
mod resource;
mod resource_scope;
mod schedule;
#[allow(unsafe_code)]
mod sparse;
#[allow(unsafe_code)]
mod structural;
#[allow(unsafe_code)]
pub mod system;
#[allow(unsafe_code)]
mod table_load;
mod time;
mod trace;
mod transaction;
mod tuples;
mod world;
#[cfg(test)]
mod world_tests;

pub use builder::{BuiltBundle, EntityBuilder};
pub use bundle::{Bundle, SpawnBundle};
pub use change::{ComponentTicks, Mut, Ref, RunTicks, Tick, Tracked};
pub use cloning::CloneError;
pub use component::{Component, ComponentId, StorageType};
pub use entity::{AllocatorState, Entity};
pub use entity_mut::EntityWorldMut;
pub use entity_ref::EntityRef;
#[cfg(feature = "serde")]
pub use entity_serde::ENTITY_SERDE_NAME;
pub use error::SpawnAtError;
pub use error::{AllocatorStateError, ComponentError, EntityError, QueryEntityError};
pub use event::{Event, EventCursor, Events};
#[cfg(feature = "game-loop")]
pub use game_loop::{in_state, FixedTime, GameLoop, NextState, Stage, State, States};
#[cfg(feature = "hierarchy")]
pub use hierarchy::{ChildOf, ChildSpawner, Children, HierarchyError, Relationship, RelationshipTarget};
pub use hooks::{ComponentHooks, HookWorld};
#[cfg(feature = "observers")]
pub use observer::{ObserverId, OnAdd, OnDespawn, OnInsert, OnRemove, OnReplace, Trigger, TriggerTargets};
pub use pool::{PooledBundle, Reset};
pub use query::{Added, Changed, Or, QueryData, QueryFilter, QueryIter, QueryState, ReadOnlyQueryData, With, Without};
pub use query::{AnyOf, ArchetypeFilter, Has, QueryCombinationIter, QueryManyIter, QueryManyIterMut, QueryParIter};
pub use required::Requires;
pub use resource::{Resource, ResourceId};
pub use schedule::{
    IntoSystemSelector, Schedule, ScheduleError, SystemConfig, SystemId, SystemSelector, SystemTiming, Timings,
};
#[cfg(feature = "observers")]
pub use system::IntoObserver;
pub use system::{CommandBuffer, ParamSet};
pub use system::{
    CommandQueue, Commands, EntityCommands, EventReader, EventWriter, ForeignQueueError, IntoSystem, Local, Query,
    RemovedComponents, Res, ResMut, System, SystemParam,
};
pub use table_load::{ColumnBatch, ColumnBatchError};
pub use time::Time;
pub use world::{SpawnBatch, World, WorldId};

/// The storage layer under the world: archetype tables, the component and
/// bundle registries, and the traits through which bundles hand over their
/// values. Needed to implement [`QueryData`], [`QueryFilter`] or [`Bundle`]
/// by hand, or to inspect how a world is laid out.
pub mod storage {
    pub use crate::archetype::{Archetype, ArchetypeId, Archetypes, Row};
    pub use crate::bitset::BitSet;
    pub use crate::bundle::{BundleId, BundleInfo, ComponentReader, ComponentWriter};
    pub use crate::component::{ComponentInfo, Components};
    pub use crate::entity::TableEntities;
    pub use crate::pool::PoolSource;
    pub use crate::sparse::{SparseRows, SparseSet, SparseSets, TableRef};
}

/// Items the derive macros' output names; not part of the public API.
#[doc(hidden)]
pub mod __private {
    #[cfg(feature = "hierarchy")]
    pub use crate::hierarchy::{install_relationship, install_target};
    pub use crate::pool::PoolFns;
    pub use crate::query::{ColumnFetch, MutRef};
}
