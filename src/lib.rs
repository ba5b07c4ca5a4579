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

/// Rollback netcode on ggrs (the `rollback` feature, off by default): see
/// [`archetable_rollback`]. A `RollbackDriver` owns the world, the
/// simulation schedule and the ggrs session, and saves, restores and
/// resimulates the world as ggrs asks.
#[cfg(feature = "rollback")]
pub use archetable_rollback as rollback;

/// Everything a game needs in scope: `use archetable::prelude::*;`.
///
/// What a game's code names often is here: the world and its handles, the
/// derives, the system parameters, query data and filters (`Has`, `AnyOf`,
/// `With`, `Added`, ...), commands and command buffers, run-time bundles
/// (`EntityBuilder`), the errors of everyday calls, and with their
/// features the game loop, the hierarchy (with the relationship traits,
/// whose methods `target` and `sources` need them in scope), observers and
/// saves.
///
/// The rest stays at its path: the machinery of the storage and query
/// layers (`archetable::storage`, `archetable::query`), the traits behind
/// the system glue (`SystemParamFunction`, `IntoObserver`, ...), change
/// ticks, column batches, schedule timings and the less common errors.
pub mod prelude {
    pub use archetable_core::system::QuerySingleError;
    #[cfg(feature = "game-loop")]
    pub use archetable_core::{in_state, FixedTime, GameLoop, NextState, Stage, State, States};
    pub use archetable_core::{
        Added, AnyOf, BuiltBundle, Bundle, Changed, CommandBuffer, CommandQueue, Commands, Component, ComponentError,
        Condition, Disabled, Entity, EntityBuilder, EntityCommands, EntityError, EntityRef, EntityWorldMut, Event,
        EventReader, EventWriter, Events, Has, HookWorld, IntoCondition, IntoSystem, IntoSystems, Local, Mut, Name, Or,
        ParamSet, Query, QueryEntityError, QueryState, Ref, RemovedComponents, Res, ResMut, Reset, Resource, Schedule,
        ScheduleError, SpawnAtError, System, SystemId, SystemParam, Time, With, Without, World,
    };
    #[cfg(feature = "hierarchy")]
    pub use archetable_core::{
        ChildOf, ChildSpawner, Children, HierarchyError, Relationship, RelationshipTarget, SourceList,
    };
    pub use archetable_core::{
        In, InMut, InRef, IntoIoSystem, IoSystem, RegisteredSystemId, ResultSystem, RunSystemError,
    };
    #[cfg(feature = "observers")]
    pub use archetable_core::{ObserverId, OnAdd, OnDespawn, OnInsert, OnRemove, OnReplace, Trigger};
    pub use archetable_core::{Populated, Single, SkippedSystem};
    pub use archetable_macros::QueryFilter;
    #[cfg(feature = "game-loop")]
    pub use archetable_macros::States;
    pub use archetable_macros::{Bundle, Component, Query, SystemParam};
    #[cfg(feature = "serde")]
    pub use archetable_serde::{
        LoadError, Overrides, PrefabCommandsExt, Prefabs, SaveError, SerdeRegistry, SerdeWorldExt,
    };
}
