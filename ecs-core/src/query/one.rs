//! One-off queries of a single entity: `World::query_one` and
//! `World::query_one_mut`, for reading several components of one entity at
//! once without building a `QueryState`.

use crate::entity::error::QueryEntityError;
use crate::entity::Entity;
use crate::query::fetch::{QueryData, ReadOnlyQueryData};
use crate::query::hiding::sees;
use crate::query::state::{check_distinct, init_checked};
use crate::world::World;

/// The item of read-only query `Q` for `entity`.
pub(crate) fn query_one<Q: ReadOnlyQueryData>(world: &World, entity: Entity) -> Result<Q::Item<'_>, QueryEntityError> {
    let state = Q::get_state(world.components());
    // SAFETY: `Q` is read-only and the world is borrowed shared for the
    // item's lifetime.
    unsafe { fetch_one::<Q>(world, entity, state.as_ref()) }
}

/// The item of query `Q` for `entity`, with mutable access.
///
/// # Panics
/// If `Q` would alias a component (`(&mut A, &A)`).
pub(crate) fn query_one_mut<Q: QueryData>(world: &mut World, entity: Entity) -> Result<Q::Item<'_>, QueryEntityError> {
    let (state, ()) = init_checked::<Q, ()>(world.components_mut());
    let world: &World = world;
    // SAFETY: the exclusive borrow of the world covers the item's lifetime,
    // and `init_checked` refused aliasing queries.
    unsafe { fetch_one::<Q>(world, entity, Some(&state)) }
}

/// The items of read-only query `Q` for several entities.
pub(crate) fn query_many<const N: usize, Q: ReadOnlyQueryData>(
    world: &World,
    entities: [Entity; N],
) -> Result<[Q::Item<'_>; N], QueryEntityError> {
    let state = Q::get_state(world.components());
    // SAFETY: `Q` is read-only and the world is borrowed shared for the
    // items' lifetime.
    unsafe { fetch_many::<N, Q>(world, entities, state.as_ref()) }
}

/// The items of query `Q` for several distinct entities, with mutable
/// access.
///
/// # Panics
/// If `Q` would alias a component (`(&mut A, &A)`).
pub(crate) fn query_many_mut<const N: usize, Q: QueryData>(
    world: &mut World,
    entities: [Entity; N],
) -> Result<[Q::Item<'_>; N], QueryEntityError> {
    let (state, ()) = init_checked::<Q, ()>(world.components_mut());
    check_distinct(&entities)?;
    let world: &World = world;
    // SAFETY: the exclusive borrow of the world covers the items' lifetime,
    // `init_checked` refused aliasing queries, and the entities are
    // distinct.
    unsafe { fetch_many::<N, Q>(world, entities, Some(&state)) }
}

/// # Safety
/// Unless `Q` is read-only, the caller has exclusive access to the world for
/// `'w`, `Q`'s access has no conflicts, and `entities` are distinct.
unsafe fn fetch_many<'w, const N: usize, Q: QueryData>(
    world: &'w World,
    entities: [Entity; N],
    state: Option<&Q::State>,
) -> Result<[Q::Item<'w>; N], QueryEntityError> {
    let mut error = None;
    let items: [Option<Q::Item<'w>>; N] = std::array::from_fn(|i| {
        if error.is_some() {
            return None;
        }
        // SAFETY: forwarded contract; distinct entities live in distinct
        // rows, and `fetch` touches only its own row, so no two items alias.
        match unsafe { fetch_one::<Q>(world, entities[i], state) } {
            Ok(item) => Some(item),
            Err(e) => {
                error = Some(e);
                None
            }
        }
    });
    match error {
        Some(error) => Err(error),
        None => Ok(items.map(|item| item.expect("every item was fetched"))),
    }
}

/// # Safety
/// Unless `Q` is read-only, the caller has exclusive access to the world for
/// `'w`, and `Q`'s access has no conflicts.
unsafe fn fetch_one<'w, Q: QueryData>(
    world: &'w World,
    entity: Entity,
    state: Option<&Q::State>,
) -> Result<Q::Item<'w>, QueryEntityError> {
    let location = world.location(entity).ok_or(QueryEntityError::NoSuchEntity(entity))?;
    let archetype = world.archetypes().get(location.archetype);
    let mismatch = || QueryEntityError::QueryDoesNotMatch { entity, query: std::any::type_name::<Q>() };
    let state = state.ok_or_else(mismatch)?;
    if !sees::<Q, ()>(world.components(), state, &(), archetype) {
        return Err(mismatch());
    }
    let cache = Q::match_archetype(state, archetype).ok_or_else(mismatch)?;
    // SAFETY: `cache` was made for this archetype, and `location.row` is the
    // entity's live row; the access condition is the caller's.
    unsafe {
        let table = world.table_ref(archetype);
        let mut fetch = Q::init_fetch(state, cache, table, world.one_off_ticks());
        let row = location.row.index();
        if !Q::DENSE && !Q::row_matches(&fetch, row) {
            return Err(mismatch());
        }
        Ok(Q::fetch(&mut fetch, row))
    }
}
