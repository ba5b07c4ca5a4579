#![doc = include_str!("../README.md")]
#![deny(unsafe_code)]
#![warn(missing_docs)]

// Lets derive output, which names `::archetable`, compile inside this crate.
extern crate self as archetable;

pub use archetable_core::*;
pub use archetable_macros::QueryFilter;
#[cfg(feature = "game-loop")]
pub use archetable_macros::States;
pub use archetable_macros::{Bundle, Component, Query, SystemParam};

/// Save games and data-driven prefabs (the default `serde` feature): see
/// [`archetable_serde`]. The traits that add their methods to `World` and
/// `Commands` are in the prelude.
///
/// Named `data` rather than `serde`, so that `use archetable::*;` next to
/// `use serde::{Deserialize, Serialize};` leaves no doubt which `serde`
/// is meant.
#[cfg(feature = "serde")]
pub use archetable_serde as data;

/// The live inspector (the `inspect` feature, off by default): see
/// [`archetable_inspect`]. Start an [`inspect::Inspector`] and call its
/// `update` once per frame; the page is at the address it prints.
#[cfg(feature = "inspect")]
pub use archetable_inspect as inspect;

/// Everything a game needs in scope: `use archetable::prelude::*;`.
pub mod prelude {
    #[cfg(feature = "game-loop")]
    pub use archetable_core::{in_state, FixedTime, GameLoop, NextState, Stage, State, States};
    pub use archetable_core::{
        Added, Bundle, Changed, CommandQueue, Commands, Component, ComponentError, Entity, EntityCommands, EntityError,
        EntityRef, EventReader, EventWriter, Events, HookWorld, IntoSystem, Local, Mut, Or, Query, QueryEntityError,
        QueryState, Ref, RemovedComponents, Res, ResMut, Reset, Schedule, ScheduleError, System, SystemId, Time, With,
        Without, World,
    };
    #[cfg(feature = "hierarchy")]
    pub use archetable_core::{ChildOf, Children, HierarchyError};
    pub use archetable_core::{CommandBuffer, ParamSet};
    pub use archetable_core::{EntityWorldMut, SpawnAtError};
    #[cfg(feature = "observers")]
    pub use archetable_core::{ObserverId, OnAdd, OnDespawn, OnInsert, OnRemove, OnReplace, Trigger};
    pub use archetable_macros::QueryFilter;
    #[cfg(feature = "game-loop")]
    pub use archetable_macros::States;
    pub use archetable_macros::{Bundle, Component, Query, SystemParam};
    #[cfg(feature = "serde")]
    pub use archetable_serde::{Overrides, PrefabCommandsExt, Prefabs, SerdeWorldExt};
}
