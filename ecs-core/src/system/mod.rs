//! Systems: functions whose parameters declare what they touch, and the
//! parameters themselves.
//!
//! A system is a plain function (or closure) whose parameters are
//! [`SystemParam`]s: [`Query`], [`Res`], [`ResMut`], `Option<Res<T>>`,
//! [`Local`], [`Commands`], [`EventReader`], [`EventWriter`],
//! [`RemovedComponents`], `&World` (reads everything), [`ParamSet`],
//! [`Single`] and [`Populated`] (whose system is skipped for a run when
//! the query has not exactly one, or not any, entity),
//! tuples of these and `#[derive(SystemParam)]` structs. A function taking only
//! `&mut World` is an *exclusive* system, and a [`System`] struct is one too.
//!
//! A system may also take an input first ([`In`], [`InRef`], [`InMut`]) and
//! return a value ([`IntoIoSystem`]): such systems are chained with
//! [`pipe`](IntoIoSystem::pipe) and [`map`](IntoIoSystem::map), and run by
//! id once registered in a world ([`World::register_system`](crate::World::register_system)).
//!
//! # Aliasing (error `E0002`)
//! Adding a system whose parameters would alias (`Query<&mut A>` beside
//! `Query<&A>`, or `ResMut<T>` beside `Res<T>`) fails with `error[E0002]`,
//! naming the system, both parameters and the component or resource. Two
//! queries that can never visit the same entity, because a `With<T>` in one
//! meets a `Without<T>` in the other, do not alias.

pub(crate) mod access;
mod buffer;
pub(crate) mod commands;
mod events;
pub(crate) mod function;
pub(crate) mod io;
pub(crate) mod param;
mod param_set;
mod query;
pub(crate) mod registered;
mod removed;
mod single;
mod world_param;

pub use access::{AccessConflict, SystemAccess};
pub use buffer::CommandBuffer;
pub use commands::{Commands, EntityCommands};
pub use events::{EventReader, EventWriter};
pub(crate) use function::AnySystem;
pub use function::{
    BoxedSystem, IntoSystem, IsExclusiveSystem, IsFunctionSystem, IsStructSystem, System, SystemParamFunction,
};
// Kept at their public paths; they live in the world layer.
pub use crate::world::command_queue::{CommandError, CommandQueue, CommandReport, ForeignQueueError, SkippedCommand};
// Kept at their public paths; they live in the observer layer.
#[cfg(feature = "observers")]
pub use crate::observer::function::{BoxedObserver, IntoObserver, IsObserverFunction, ObserverFunction};
pub use io::{
    HasInput, In, InMut, InRef, IntoIoSystem, IoSystem, IsExclusiveIoFunction, IsIoFunction, IsIoSystem, IsPipedSystem,
    NoInput, ResultSystem, SystemFunction, SystemInput,
};
pub use param::{Local, Res, ResMut, SkippedSystem, SystemMeta, SystemParam, SystemParamItem};
pub use param_set::ParamSet;
pub use query::{Query, QuerySingleError};
pub use registered::{RegisteredSystemId, RunSystemError};
pub use removed::{RemovalCursor, RemovedComponents};
pub use single::{Populated, Single};
