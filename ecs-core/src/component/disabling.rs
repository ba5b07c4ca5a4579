//! Default-hiding components: [`Disabled`], and the mark the registry keeps
//! on every component type that hides the entities holding it from the
//! queries that do not name it.
//!
//! The registry marks a type as hiding (`Disabled` from the start, others
//! through `World::register_disabling_component`); an archetype records
//! the hiding types among its columns when it is created, and a query
//! state skips such an archetype when it matches archetypes, unless its
//! data or filter names each of them. Iteration itself never looks.

use crate::component::Component;

/// Marks an entity as disabled: it keeps its components, but no query sees
/// it unless the query names `Disabled` (`With<Disabled>`, `Has<Disabled>`,
/// `Option<&Disabled>`, `&Disabled`). [`World::get`](crate::World::get),
/// [`World::entity`](crate::World::entity) and commands still reach it by
/// handle.
///
/// The marker cannot be borrowed mutably (`&mut Disabled` does not
/// compile): disabling and enabling insert and remove it, so they move the
/// entity to another table but run no hook or observer of its other
/// components; hooks and observers registered on `Disabled` itself do run
/// (`OnAdd<Disabled>` when it is disabled, `OnRemove<Disabled>` when it is
/// enabled again). Saves keep it: the serde registry knows it as
/// `"Disabled"`.
///
/// ```
/// use archetable::prelude::*;
///
/// #[derive(Component)] struct Hp(u32);
///
/// let mut world = World::new();
/// let orc = world.spawn(Hp(3));
/// let ghost = world.spawn(Hp(5));
/// world.disable(ghost).unwrap();
/// assert_eq!(world.query::<&Hp>().map(|hp| hp.0).collect::<Vec<_>>(), [3]);
/// assert_eq!(world.query_filtered::<Entity, With<Disabled>>().collect::<Vec<_>>(), [ghost]);
/// assert_eq!(world.get::<Hp>(ghost).map(|hp| hp.0), Some(5)); // by handle
/// world.enable(ghost).unwrap();
/// assert_eq!(world.query::<&Hp>().count(), 2);
/// # let _ = orc;
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Disabled;

// Not offered in the compiler's "other types implement" notes.
#[diagnostic::do_not_recommend]
impl Component for Disabled {
    const CLONE: Option<fn(&Self) -> Self> = Some(|_| Disabled);
}
