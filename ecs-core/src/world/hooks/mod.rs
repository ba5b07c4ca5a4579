//! Component lifecycle hooks: functions the world calls when an entity gains,
//! writes or loses a component, or is despawned; the restricted world view
//! they receive; and the queue of commands they defer.
//!
//! # When hooks run
//!
//! Every hook runs while the tables are consistent, never in the middle of a
//! row move: `on_add` and `on_insert` after the values are written,
//! `on_replace`, `on_remove` and `on_despawn` before anything is moved or
//! dropped, so the value is still readable. The order is fixed:
//!
//! | operation | hooks, in this order |
//! |---|---|
//! | `spawn` | `on_add` for each component, then `on_insert` for each |
//! | `insert` | `on_replace` for each component the entity had, then the write, then `on_add` for each new one, then `on_insert` for each one written |
//! | `remove` | `on_replace` for each removed component, then `on_remove` for each, then the removal |
//! | `despawn` | `on_despawn` for each component, then `on_replace` for each, then `on_remove` for each, then the entity goes |
//! | `clear` | the `despawn` hooks of every entity (table by table, row by row), then the clear |
//!
//! Commands that hooks queue apply right after the operation, before the
//! world method returns; during `clear`, an entity they spawn is cleared too.
//!
//! Observers of the lifecycle events (`OnAdd<T>`, ... in `observer/`) run
//! at the same moments: for each component, its hooks of one kind, then its
//! observers of that kind, then the next component. Their commands wait
//! with the hooks' commands. Required components (`component/required.rs`) that a
//! spawn or insert adds come after the bundle's own, in each kind.
//!
//! Within one kind, `spawn`, `insert` and `remove` go through the components
//! in the bundle's order (as written in the tuple or struct); `despawn` and
//! `clear` in component id order (the order the world first saw the types).
//! Several hooks of one kind on one component run in registration order.
//!
//! `spawn_batch` runs the spawn hooks of each entity (and applies their
//! commands) before spawning the next. `spawn_built_batch` and
//! `insert_built_batch` place every entity first, then run the hooks of
//! each, so each hook sees the whole batch. Deferred [`Commands`] go through
//! the same world methods, so their hooks fire too; save-game loading and
//! prefab spawns place each entity whole (one table move) and run the hooks
//! of a tuple of its components, a load once all its entities are in place.
//!
//! # Where it is
//!
//! - `registry.rs`: the hook kinds, [`ComponentHooks`], the world's
//!   registry of hooks and [`World::register_component_hooks`];
//! - `view.rs`: [`HookWorld`], the view of the world a hook receives;
//! - `operations.rs`: the hooked operations and how a hook is called;
//! - `plan.rs`: what each bundle's and table's hooks come to, worked out
//!   once, so that an operation nothing watches skips the hook paths.

mod operations;
mod plan;
mod registry;
mod view;

pub(crate) use operations::Before;
pub use registry::ComponentHooks;
use registry::Hook;
pub(crate) use registry::{EngineHook, HookKind, Hooks, SpawnJoin};
pub use view::HookWorld;
