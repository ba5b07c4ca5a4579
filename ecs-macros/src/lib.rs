//! Derive macros for the `archetable` crate: `Component`, `Bundle`, `Query`,
//! `QueryFilter`, `SystemParam` and `States`.
//!
//! Each entry point parses its input, hands it to the module of the same
//! name, and turns a `syn::Error` into a `compile_error!` at the offending
//! span. The output names the engine through the path found by
//! `path::engine`, so it works from any crate that depends on `archetable`.

mod bundle;
mod component;
mod filter;
mod path;
mod query;
mod states;
mod system_param;

use proc_macro::TokenStream;
use syn::{parse_macro_input, DeriveInput};

/// Implements `Component` for a `'static + Send + Sync` struct or enum.
///
/// Options, in `#[component(..)]`:
/// - `track_changes`: the world keeps an added and a changed tick per
///   value, which `Added<T>`, `Changed<T>` and `Ref<T>` read;
/// - `pooled`: a value that leaves the world is reset (the type implements
///   `Reset`) and kept for the next `spawn_pooled`, instead of dropped;
/// - `requires(Transform, Velocity = Velocity::ZERO)`: spawning or
///   inserting the component also inserts each listed component the entity
///   lacks (and what those require), in the same table move, from its
///   `Default` or the expression given; see `Component::REQUIRES`.
/// - `clone`: values can be copied by `World::clone_entity` and
///   `World::try_clone` (the type implements `Clone`).
/// - `storage = "sparse"`: values live in a sparse set beside the tables,
///   so adding and removing the component moves no row;
/// - `immutable`: no safe path gives `&mut` to a value (`&mut T` in a
///   query, `get_mut`, a hook's `get_mut` do not compile): only an insert
///   replaces it, so its hooks and observers see every change. Without it
///   the derive implements `MutableComponent`;
/// - `relationship(target = List)` on a component holding one entity, and
///   `relationship_target(source = Link, despawn_sources)` on the list the
///   engine keeps at that entity (as `ChildOf` and `Children` are): needs
///   the facade's `hierarchy` feature (on by default). Both are immutable.
#[proc_macro_derive(Component, attributes(component))]
pub fn derive_component(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    component::derive(input).unwrap_or_else(syn::Error::into_compile_error).into()
}

/// Implements `Bundle` for a struct whose fields are components or bundles.
#[proc_macro_derive(Bundle)]
pub fn derive_bundle(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    bundle::derive(input).unwrap_or_else(syn::Error::into_compile_error).into()
}

/// Implements `QueryData` for a struct of `&'w T`, `&'w mut T`, `Mut<'w, T>`,
/// `Entity`, other derived queries (`Inner<'w>`) and `Option<..>` fields, so
/// it can be used as a query. The struct may have type parameters
/// (`struct Pair<'w, A: Component, B: Component> { a: &'w A, b: &'w B }`).
#[proc_macro_derive(Query)]
pub fn derive_query(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    query::derive(input).unwrap_or_else(syn::Error::into_compile_error).into()
}

/// Implements `QueryFilter` for a struct whose fields are filters (`With<T>`,
/// `Without<T>`, `Or<(..)>`, `Added<T>`, `Changed<T>`, other derived
/// filters): it passes the entities that pass every field's filter, and
/// names the combination, as in `Query<&Hp, Enemies>`. It is also an
/// `ArchetypeFilter` (exact `len()`) when every field is `With`, `Without`,
/// or an `Or` of these; a nested derived filter counts as per-row.
#[proc_macro_derive(QueryFilter)]
pub fn derive_query_filter(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    filter::derive(input).unwrap_or_else(syn::Error::into_compile_error).into()
}

/// Implements `SystemParam` for a struct whose fields are system
/// parameters, so a system can take them as one argument. The struct has
/// two lifetime parameters, the world's and the state's: `struct
/// Physics<'w, 's> { bodies: Query<'w, 's, &'static mut Body>, time:
/// Res<'w, Time> }`.
#[proc_macro_derive(SystemParam)]
pub fn derive_system_param(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    system_param::derive(input).unwrap_or_else(syn::Error::into_compile_error).into()
}

/// Implements `States` for an enum, making its variants the states of a
/// `GameLoop` (`game.add_state(Screen::Menu)`); the facade exports it with
/// its `game-loop` feature (on by default). The enum also needs `Clone`,
/// `PartialEq`, `Eq`, `Hash` and `Debug`:
///
/// ```text
/// #[derive(States, Clone, Copy, PartialEq, Eq, Hash, Debug)]
/// enum Screen { Menu, Playing, GameOver }
/// ```
#[proc_macro_derive(States)]
pub fn derive_states(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    states::derive(input).unwrap_or_else(syn::Error::into_compile_error).into()
}
