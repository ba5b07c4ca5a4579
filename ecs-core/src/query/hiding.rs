//! Default-hiding components at archetype-matching time: an archetype that
//! holds [`Disabled`](crate::Disabled) (or another type registered with
//! `World::register_disabling_component`) is matched only by a query whose
//! data or filter names that type. Query states decide it once per
//! archetype, when they first see it, so iteration pays nothing for it.

use crate::component::Components;
use crate::query::fetch::QueryData;
use crate::query::filter::QueryFilter;
use crate::storage::archetype::Archetype;

/// Whether a query of data `Q` and filter `F` may see the entities of
/// `archetype`: it names every hiding component the archetype holds.
#[inline]
pub(crate) fn sees<Q: QueryData, F: QueryFilter>(
    components: &Components,
    q: &Q::State,
    f: &F::State,
    archetype: &Archetype,
) -> bool {
    !archetype.hides_entities() || names_every_hider::<Q, F>(components, q, f, archetype)
}

/// The rare half of [`sees`], out of line so that the common test stays one
/// flag.
#[cold]
#[inline(never)]
fn names_every_hider<Q: QueryData, F: QueryFilter>(
    components: &Components,
    q: &Q::State,
    f: &F::State,
    archetype: &Archetype,
) -> bool {
    archetype
        .components()
        .iter()
        .filter(|&&id| components.info(id).hides_entities())
        .all(|&id| Q::names_component(q, id) || F::names_component(f, id))
}
