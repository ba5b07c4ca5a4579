//! The storage layer under the world: archetype tables, the component and
//! bundle registries, and the traits through which bundles hand over their
//! values. Needed to implement [`QueryData`](crate::QueryData),
//! [`QueryFilter`](crate::QueryFilter) or [`Bundle`](crate::Bundle) by hand,
//! or to inspect how a world is laid out.
//!
//! Inside the engine this folder is the memory: columns (`column.rs`),
//! tables (`archetype.rs`), sparse sets (`sparse.rs`), component pools
//! (`pool.rs`), the add/remove transition cache between tables
//! (`graph.rs`), bit sets (`bitset.rs`), moving an entity's row from one
//! table to another (`structural.rs`), the type-erased bundle of
//! [`EntityBuilder`](crate::EntityBuilder) (`builder.rs`) and the
//! resources (`resource.rs`). It uses the entity and component layers
//! below it, never the world above.

#[allow(unsafe_code)]
pub(crate) mod archetype;
pub(crate) mod bitset;
#[allow(unsafe_code)]
pub(crate) mod builder;
#[allow(unsafe_code)]
pub(crate) mod column;
pub(crate) mod graph;
#[allow(unsafe_code)]
pub(crate) mod pool;
#[allow(unsafe_code)]
pub(crate) mod resource;
#[allow(unsafe_code)]
pub(crate) mod sparse;
#[allow(unsafe_code)]
pub(crate) mod structural;

pub use crate::component::bundle::{BundleId, BundleInfo, ComponentReader, ComponentWriter};
pub use crate::component::{ComponentInfo, Components};
pub use crate::entity::TableEntities;
pub use archetype::{Archetype, ArchetypeId, Archetypes, Row};
pub use bitset::BitSet;
pub use pool::PoolSource;
pub use sparse::{SparseRows, SparseSet, SparseSets, TableRef};
