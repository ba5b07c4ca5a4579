//! The engine of the `ecs` crate: entities stored in archetype tables, typed
//! cached queries and bundles. Use it through the `ecs` facade, which adds
//! the derive macros.
//!
//! `unsafe` code lives only in the storage modules (`column`, `archetype`,
//! `bundle`, `structural`), the query modules, and the two places where
//! `world` starts a query iterator; each of those modules opts in with
//! `#[allow(unsafe_code)]`, and every block states why it holds.

#![deny(unsafe_code)]
#![warn(missing_docs)]

// Lets the derive macros' output, which names `::ecs_core`, compile inside
// this crate's own tests.
extern crate self as ecs_core;

#[allow(unsafe_code)]
mod archetype;
mod bitset;
#[allow(unsafe_code)]
mod bundle;
mod change;
#[allow(unsafe_code)]
mod column;
mod component;
mod entity;
mod entity_ref;
mod error;
mod graph;
#[allow(unsafe_code)]
pub mod query;
#[allow(unsafe_code)]
mod structural;
mod tuples;
#[allow(unsafe_code)]
mod world;
#[cfg(test)]
mod world_tests;

pub use archetype::{Archetype, ArchetypeId, Archetypes, Row};
pub use bitset::BitSet;
pub use bundle::{Bundle, BundleId, BundleInfo, ComponentReader, ComponentWriter};
pub use change::Mut;
pub use component::{Component, ComponentId, ComponentInfo, Components};
pub use entity::Entity;
pub use entity_ref::EntityRef;
pub use error::{ComponentError, EntityError, QueryEntityError};
pub use query::{Or, QueryData, QueryFilter, QueryIter, QueryState, ReadOnlyQueryData, With, Without};
pub use world::{SpawnBatch, World, WorldId};

/// Items the derive macros' output names; not part of the public API.
#[doc(hidden)]
pub mod __private {
    pub use crate::query::{ColumnFetch, MutRef};
}
