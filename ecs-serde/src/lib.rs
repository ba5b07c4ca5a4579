//! Save games and data-driven prefabs for the `archetable` crate, built on serde.
//! Use it through the facade: `archetable::data`, with the extension traits in
//! `archetable::prelude`.
//!
//! - **Registry**: each component or resource type gets a stable name once,
//!   `world.register_serde::<Position>("Position")`. The names are what save
//!   files and prefab files say; Rust type names may change freely.
//! - **Prefabs**: entity types as data, in JSON or RON ([`Prefabs`]). A
//!   prefab may `extend` another; fields not given come from the parent,
//!   then from the component's `Default`. `world.spawn_prefab(&prefabs,
//!   "Ball")`, with [`Overrides`] for per-spawn changes, and the same on
//!   `Commands` ([`PrefabCommandsExt`]).
//! - **Saves**: `world.save_json()`, `save_ron()`, `save_binary()` (text
//!   saves are compact; `save_json_pretty()` and `save_ron_pretty()` write
//!   one line per component);
//!   `World::load_json(&registry, ..)` rebuilds a world with every handle
//!   exactly as saved (allocator included), `world.load_into_json(..)` adds
//!   the saved entities to a populated world with new handles. Handles
//!   stored in components (`Entity` fields, `Vec<Entity>`, maps keyed by
//!   `Entity`) follow their entities in both cases, with no code to write.
//! - **Errors** name the prefab or entity, the component and the field,
//!   and leave the world as it was: nothing is half-spawned or half-loaded.
//! - **One step**: every value is built before the world is touched; then a
//!   prefab spawns as one bundle (one table move, the hooks of a tuple of its
//!   components), and a load places all its entities whole before any hook
//!   runs, so hooks never see a half-built entity. If user code fails on the
//!   way (a `Deserialize` returning an error or panicking, a hook
//!   panicking), the world is as it was, its entity allocator included, and
//!   the panic goes on; a hook that despawns what is being loaded, through
//!   its commands, is no failure.
//! - **Numbers**: a number too large for the `f32` it is read into (`1e39`
//!   in a JSON or RON save, prefab or override) is refused with an error
//!   naming the field, rather than read as infinity. RON saves write NaN
//!   and infinities, so `NaN`, `inf` and `-inf` in RON load as written (and
//!   so does a RON number too large even for `f64`: the RON parser reads it
//!   as infinity). JSON has neither, and refuses numbers past `f64`.
//! - **Limits**: a component or resource value read from a file may nest
//!   [`MAX_DEPTH`] levels of lists, maps, structs, variants and options
//!   ([`MAX_RON_DEPTH`] in RON, whose parser needs more stack per level);
//!   deeper input is refused with an error, never a stack overflow, and
//!   saves refuse to write values their format could not load back. Loads
//!   and prefab spawns at these limits fit in a **256 KiB** thread stack in
//!   a debug build (release builds need far less): that is the smallest
//!   thread stack supported.
//!
//! Entity handles are recognized while a component is read back, through
//! the name `Entity` serializes under ([`archetable_core::ENTITY_SERDE_NAME`]).
//! Handles hidden from that (inside `#[serde(flatten)]` or untagged enums,
//! which serde buffers first) are kept as written.
//!
//! # Layers
//!
//! The sources are built in three layers, each importing only the ones
//! below it. At the bottom, `model` holds what every format shares: value
//! trees, the per-type functions kept in the registry, the registry, and
//! the save and load plans. Above it, `format` holds one module per format,
//! which never import one another: `text` (JSON and RON, which share one
//! writer and one reader), `binary` and `prefab`. On top, `world_ext` is
//! the crate's face, the extension traits on `World` and `Commands`, with
//! `edit` (a running world's components and resources edited by name with
//! JSON values, for tools) and `states` (game-loop states in saves).
//!
//! ```text
//! world_ext, edit, states
//!     |
//! format/          text (JSON, RON)  |  binary  |  prefab
//!     |
//! model/           registry, per-type columns, save and load plans,
//!                  value trees, errors, nesting limits
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod edit;
mod format;
mod model;
mod states;
mod world_ext;

pub use edit::EditError;
pub use format::prefab::{Overrides, Prefabs};
pub use model::depth::{MAX_DEPTH, MAX_RON_DEPTH};
pub use model::error::{Format, LoadError, PrefabError, SaveError};
pub use model::load::{EntityMap, MAX_RETIRED_SLOTS};
pub use model::registry::SerdeRegistry;
pub use model::save::{Saved, SkippedComponent};
pub use world_ext::{PrefabCommandsExt, PrefabSpawnFailed, SerdeWorldExt};
