//! Components: the typed model the storage below holds without knowing it.
//!
//! - `registry.rs`: the [`Component`] trait, [`StorageType`], [`ComponentId`],
//!   and the per-world registry of [`ComponentInfo`] (layout, drop and
//!   clone functions, hooks, pools): everything the storage needs to handle a
//!   component type by id alone.
//! - `bundle.rs`: [`Bundle`](bundle::Bundle), a set of components inserted
//!   together, and the registry of bundle ids.
//! - `required.rs`: required components, added with a component that needs them.
//! - `change.rs`: change ticks and the `Mut` / `Ref` wrappers that set and read them.
//! - `disabling.rs`: [`Disabled`](disabling::Disabled), the marker that hides an entity
//!   from the queries that do not name it, and what default-hiding means.
//! - `name.rs`: [`Name`](name::Name), an entity's readable name.
//!
//! Uses the entity layer only; the `Component` trait names a few types of
//! the layers above in its contract (see DESIGN.md, "Layers").

#[allow(unsafe_code)]
pub(crate) mod bundle;
pub(crate) mod change;
pub(crate) mod disabling;
#[allow(unsafe_code)]
pub(crate) mod erased;
pub(crate) mod name;
mod registry;
pub(crate) mod required;

pub(crate) use registry::TypeIdMap;
pub use registry::{Component, ComponentId, ComponentInfo, Components, MutableComponent, StorageType};
