//! The errors a driver returns: a type that cannot roll back (found when
//! the session starts, or when a new type shows up later), a missing
//! snapshot, a session error from ggrs, or a sync test's mismatch.

use std::fmt;

use ggrs::{Frame, GgrsError};

/// Why a driver could not start or go on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RollbackError {
    /// A component type in the world is neither rolled back (registered
    /// with a hash function) nor skipped.
    UnregisteredComponent {
        /// The component's type name.
        name: &'static str,
    },
    /// A resource type in the world is neither rolled back nor skipped.
    UnregisteredResource {
        /// The resource's type name.
        name: &'static str,
    },
    /// An event queue (`Events<E>`) in the world is neither rolled back
    /// nor skipped.
    UnregisteredEvent {
        /// The queue's type name.
        name: &'static str,
    },
    /// A component type in the world cannot be copied into a snapshot: it
    /// lacks `#[component(clone)]`.
    NotCloneable {
        /// The component's type name.
        name: &'static str,
    },
    /// ggrs asked to load a frame whose snapshot is no longer kept.
    MissingSnapshot {
        /// The frame asked for.
        frame: Frame,
    },
    /// The driver has no session (call `start` first).
    NoSession,
    /// A sync test found that resimulating frames gave other checksums than
    /// simulating them the first time: the simulation is not
    /// deterministic, or reads something that does not roll back. A
    /// [`RollbackEvent::Desync`](crate::RollbackEvent::Desync) says more.
    Mismatch {
        /// The frames whose checksums differed.
        frames: Vec<Frame>,
    },
    /// Any other error from the ggrs session.
    Session(GgrsError),
}

impl fmt::Display for RollbackError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RollbackError::UnregisteredComponent { name } => write!(
                f,
                "component `{name}` is in the world but not registered for rollback: roll it back with \
                 `driver.component::<{name}>()` (needs `Hash`) or `component_with`, or leave it out with \
                 `driver.skip_component::<{name}>()`"
            ),
            RollbackError::UnregisteredResource { name } => write!(
                f,
                "resource `{name}` is in the world but not registered for rollback: roll it back with \
                 `driver.resource::<{name}>()` (needs `Clone + Hash`) or `resource_with`, or leave it out with \
                 `driver.skip_resource::<{name}>()`"
            ),
            RollbackError::UnregisteredEvent { name } => write!(
                f,
                "event queue `{name}` is in the world but not registered for rollback: roll it back with \
                 `driver.event::<E>()` (needs `Clone + Hash`) or `event_with`, or leave it out with \
                 `driver.skip_event::<E>()`"
            ),
            RollbackError::NotCloneable { name } => write!(
                f,
                "component `{name}` cannot be copied into a snapshot: add `#[component(clone)]` (and `Clone`) \
                 to its definition"
            ),
            RollbackError::MissingSnapshot { frame } => write!(f, "no snapshot of frame {frame} is kept"),
            RollbackError::NoSession => write!(f, "the driver has no session; call `start` first"),
            RollbackError::Mismatch { frames } => {
                write!(f, "resimulated frames {frames:?} gave other checksums: the simulation is not deterministic")
            }
            RollbackError::Session(error) => write!(f, "ggrs: {error}"),
        }
    }
}

impl std::error::Error for RollbackError {}

impl From<GgrsError> for RollbackError {
    fn from(error: GgrsError) -> Self {
        RollbackError::Session(error)
    }
}
