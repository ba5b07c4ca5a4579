//! Entities: the copyable handle and the allocator that hands handles out.
//!
//! The lowest layer of the engine: it imports nothing from the others. An
//! [`Entity`] is an index and a generation; the allocator (`Entities`)
//! keeps one slot per index with the entity's current generation and its
//! location (table and row), recycles despawned indices with the next
//! generation, and reserves handles from other threads. The errors that
//! name an entity live here too, since every layer above returns them.

mod allocator;
pub(crate) mod error;
mod handle;
mod location;
#[cfg(feature = "serde")]
mod serde_impl;

pub use allocator::{AllocatorHooks, AllocatorState, TableEntities};
pub(crate) use allocator::{Entities, Handles, ReservationLanes};
pub use handle::Entity;
pub(crate) use location::EntityLocation;
pub use location::{ArchetypeId, Row};
#[cfg(feature = "serde")]
pub use serde_impl::ENTITY_SERDE_NAME;
