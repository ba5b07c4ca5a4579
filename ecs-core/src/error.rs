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
    /// The entity is alive but lacks what the query fetches or fails its filter.
    QueryDoesNotMatch {
        /// The entity.
        entity: Entity,
        /// The query's type name.
        query: &'static str,
    },
}

impl fmt::Display for QueryEntityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QueryEntityError::NoSuchEntity(e) => EntityError::NoSuchEntity(*e).fmt(f),
            QueryEntityError::QueryDoesNotMatch { entity, query } => {
                write!(f, "entity {entity} does not match query `{query}`")
            }
        }
    }
}

impl Error for QueryEntityError {}
