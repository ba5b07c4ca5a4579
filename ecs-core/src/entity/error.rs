//! The error types of world operations. Each names the entity and, where one
//! is involved, the component type.

use std::error::Error;
use std::fmt;

use crate::entity::Entity;

/// An operation named an entity that is not alive: never spawned in this
/// world, despawned, or cleared away.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntityError {
    /// The handle is stale or was never valid here.
    NoSuchEntity(Entity),
}

impl fmt::Display for EntityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EntityError::NoSuchEntity(e) => {
                write!(f, "entity {e} does not exist (despawned or never spawned in this world)")
            }
        }
    }
}

impl Error for EntityError {}

/// A component operation failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ComponentError {
    /// The entity is not alive.
    NoSuchEntity(Entity),
    /// The entity is alive but lacks the component.
    MissingComponent {
        /// The entity.
        entity: Entity,
        /// The type name of the missing component.
        component: &'static str,
    },
}

impl fmt::Display for ComponentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ComponentError::NoSuchEntity(e) => EntityError::NoSuchEntity(*e).fmt(f),
            ComponentError::MissingComponent { entity, component } => {
                write!(f, "entity {entity} has no component `{component}`")
            }
        }
    }
}

impl Error for ComponentError {}

impl From<EntityError> for ComponentError {
    fn from(error: EntityError) -> Self {
        match error {
            EntityError::NoSuchEntity(e) => ComponentError::NoSuchEntity(e),
        }
    }
}

/// Fetching one entity through a query failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueryEntityError {
    /// The entity is not alive.
    NoSuchEntity(Entity),
    /// The entity is alive but lacks what the query fetches, fails its
    /// filter, or is hidden from it: it holds [`Disabled`](crate::Disabled)
    /// (or another default-hiding component) and the query does not name it.
    QueryDoesNotMatch {
        /// The entity.
        entity: Entity,
        /// The query's type name.
        query: &'static str,
    },
    /// A many-entity mutable fetch (`query_many_mut`, `get_many_mut`) named
    /// this entity more than once: its items would alias.
    AliasedMutability(Entity),
}

impl fmt::Display for QueryEntityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QueryEntityError::NoSuchEntity(e) => EntityError::NoSuchEntity(*e).fmt(f),
            QueryEntityError::QueryDoesNotMatch { entity, query } => {
                write!(f, "entity {entity} does not match query `{query}`")
            }
            QueryEntityError::AliasedMutability(e) => {
                write!(f, "entity {e} is named more than once in a mutable many-entity fetch")
            }
        }
    }
}

impl Error for QueryEntityError {}

/// [`World::spawn_at`](crate::World::spawn_at) refused a handle; nothing
/// was changed.
///
/// ```
/// # use archetable::prelude::*;
/// # #[derive(Component)] struct Hp(u32);
/// let mut world = World::new();
/// let e = world.spawn(Hp(1));
/// world.despawn(e).unwrap();
/// assert_eq!(
///     world.spawn_at(e, Hp(2)),
///     Err(SpawnAtError::StaleGeneration { entity: e, current: 2 })
/// );
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpawnAtError {
    /// The entity is alive already.
    AlreadyAlive(Entity),
    /// Another generation of the slot is alive: `occupant`.
    SlotOccupied {
        /// The handle asked for.
        requested: Entity,
        /// The live entity in its slot.
        occupant: Entity,
    },
    /// The slot's next generation is later than the handle's, or the slot
    /// is retired: this world handed the handle out before, and stale
    /// copies of it may still be held, so it is not brought back.
    StaleGeneration {
        /// The handle asked for.
        entity: Entity,
        /// The generation the slot would give its next entity.
        current: u32,
    },
    /// The index is past the last one the world can hold.
    IndexOutOfRange(Entity),
}

impl fmt::Display for SpawnAtError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SpawnAtError::AlreadyAlive(e) => write!(f, "entity {e} is already alive"),
            SpawnAtError::SlotOccupied { requested, occupant } => {
                write!(f, "cannot spawn {requested}: its slot holds the live entity {occupant}")
            }
            SpawnAtError::StaleGeneration { entity, current } => write!(
                f,
                "cannot spawn {entity}: its slot is at generation {current}, so the handle was already used here"
            ),
            SpawnAtError::IndexOutOfRange(e) => write!(f, "cannot spawn {e}: the index is past the entity limit"),
        }
    }
}

impl Error for SpawnAtError {}

/// An [`AllocatorState`](crate::AllocatorState) that cannot be restored:
/// it contradicts itself or the list of live entities, or the world is not
/// empty. Nothing was changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AllocatorStateError {
    /// The world still has live (or reserved) entities.
    WorldNotEmpty,
    /// More slots than entity indices exist.
    TooManySlots(usize),
    /// The free list names a slot past the end of the table.
    FreeIndexOutOfRange(u32),
    /// The free list names a slot twice.
    DuplicateFreeIndex(u32),
    /// A live entity's index is past the end of the table.
    LiveIndexOutOfRange(Entity),
    /// A live entity's slot is on the free list.
    LiveEntityIsFree(Entity),
    /// An entity is listed as live twice.
    DuplicateLiveEntity(Entity),
    /// A live entity's generation is not its slot's.
    GenerationMismatch {
        /// The entity.
        entity: Entity,
        /// The generation the state records for its slot.
        slot_generation: u32,
    },
    /// A slot is neither live, nor on the free list, nor retired (at the
    /// last generation): its index would never be handed out again.
    LostIndex(u32),
}

impl fmt::Display for AllocatorStateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AllocatorStateError::WorldNotEmpty => write!(f, "the allocator can only be restored into an empty world"),
            AllocatorStateError::TooManySlots(n) => write!(f, "{n} entity slots are more than the index space holds"),
            AllocatorStateError::FreeIndexOutOfRange(i) => write!(f, "free list names slot {i}, past the last slot"),
            AllocatorStateError::DuplicateFreeIndex(i) => write!(f, "free list names slot {i} twice"),
            AllocatorStateError::LiveIndexOutOfRange(e) => write!(f, "live entity {e} is past the last slot"),
            AllocatorStateError::LiveEntityIsFree(e) => write!(f, "live entity {e} is in a slot on the free list"),
            AllocatorStateError::DuplicateLiveEntity(e) => write!(f, "entity {e} is listed as live twice"),
            AllocatorStateError::GenerationMismatch { entity, slot_generation } => {
                write!(f, "live entity {entity} does not match its slot's generation {slot_generation}")
            }
            AllocatorStateError::LostIndex(i) => {
                write!(f, "slot {i} is neither live, free nor retired, so its index would be lost")
            }
        }
    }
}

impl Error for AllocatorStateError {}

/// Reports something the engine undid or skipped on the user's behalf:
/// through the `log` facade when a logger is installed, else on standard
/// error, so it is seen either way.
pub(crate) fn warn(message: &str) {
    if log::max_level() == log::LevelFilter::Off {
        eprintln!("warning: {message}");
    } else {
        log::warn!("{message}");
    }
}
