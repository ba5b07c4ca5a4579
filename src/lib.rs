#![doc = include_str!("../README.md")]
#![deny(unsafe_code)]
#![warn(missing_docs)]

// Lets derive output, which names `::ecs`, compile inside this crate.
extern crate self as ecs;

pub use ecs_core::*;
pub use ecs_macros::{Bundle, Component, Query, SystemParam};

/// Everything a game needs in scope: `use ecs::prelude::*;`.
pub mod prelude {
    pub use ecs_core::{
        Bundle, CommandQueue, Commands, Component, ComponentError, Entity, EntityCommands, EntityError, EntityRef,
        EventReader, EventWriter, Events, IntoSystem, Local, Mut, Or, Query, QueryEntityError, QueryState, Res, ResMut,
        Schedule, ScheduleError, System, SystemId, Time, With, Without, World,
    };
    pub use ecs_macros::{Bundle, Component, Query, SystemParam};
}
