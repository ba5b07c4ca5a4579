//! Query data about which components an entity has: [`Has<T>`], a `bool`
//! that borrows nothing, and [`AnyOf`], which fetches whichever of several
//! components are there and skips entities that have none of them.

use std::marker::PhantomData;

use crate::component::change::RunTicks;
use crate::component::{Component, ComponentId, Components, StorageType};
use crate::query::access::Access;
use crate::query::condition::ArchetypeCondition;
use crate::query::fetch::{QueryData, ReadOnlyQueryData};
use crate::storage::archetype::Archetype;
use crate::storage::sparse::{SparseRows, TableRef};

/// Query data that is `true` for entities that have a `T` and `false` for
/// the others. It matches every entity and reads nothing, so it conflicts
/// with no access to `T`: `(&mut T, Has<T>)` is fine.
///
/// ```
/// use archetable::prelude::*;
///
/// #[derive(Component)] struct Hp(u32);
/// #[derive(Component)] struct Shield;
///
/// let mut world = World::new();
/// world.spawn((Hp(10), Shield));
/// world.spawn(Hp(10));
/// for (mut hp, shielded) in world.query_mut::<(&mut Hp, Has<Shield>)>() {
///     hp.0 -= if shielded { 1 } else { 5 };
/// }
/// let mut left: Vec<u32> = world.query::<&Hp>().map(|hp| hp.0).collect();
/// left.sort();
/// assert_eq!(left, [5, 9]);
/// ```
pub struct Has<T>(PhantomData<fn() -> T>);

// SAFETY: reads no component, only the archetype's signature, once per
// archetype (`match_archetype`); `fetch` copies a flag and touches no row
// (for a type in sparse storage, it looks the row's entity up in the set's
// index, which no query writes).
unsafe impl<T: Component> QueryData for Has<T> {
    type Item<'w> = bool;
    type Fetch<'w> = (bool, SparseRows<'w>);
    /// `None` when the world never saw `T`: no entity has one.
    type State = Option<ComponentId>;
    type Cache = bool;

    fn init_state(components: &mut Components) -> Self::State {
        Some(components.register::<T>())
    }

    fn get_state(components: &Components) -> Option<Self::State> {
        Some(components.id::<T>())
    }

    fn update_access(_: &Self::State, _: &Components, _: &mut Access) {}

    fn names_component(state: &Self::State, id: ComponentId) -> bool {
        *state == Some(id)
    }

    #[inline]
    fn match_archetype(state: &Self::State, archetype: &Archetype) -> Option<bool> {
        Some(state.is_some_and(|id| archetype.contains(id)))
    }

    fn dangling_fetch<'w>() -> Self::Fetch<'w> {
        (false, SparseRows::dangling())
    }

    #[inline]
    unsafe fn init_fetch<'w>(state: &Self::State, has: bool, table: TableRef<'w>, _: RunTicks) -> Self::Fetch<'w> {
        match state {
            Some(id) if T::STORAGE == StorageType::Sparse => (false, SparseRows::new(table, *id).0),
            _ => (has, SparseRows::dangling()),
        }
    }

    #[inline(always)]
    unsafe fn fetch<'w>(fetch: &mut Self::Fetch<'w>, row: usize) -> Self::Item<'w> {
        if T::STORAGE == StorageType::Sparse {
            // SAFETY: `row` is in bounds of the table (caller).
            return unsafe { fetch.1.dense(row) }.is_some();
        }
        fetch.0
    }
}

// SAFETY: hands out a copied flag only.
unsafe impl<T: Component> ReadOnlyQueryData for Has<T> {}

/// Query data over a tuple of query data, `AnyOf<(&A, &mut B, ...)>`: a
/// tuple of `Option`s, one per element, and only entities for which at
/// least one element is there. Like `(Option<&A>, Option<&mut B>, ...)`
/// without the entities that have none of them.
///
/// ```
/// use archetable::prelude::*;
///
/// #[derive(Component, Debug, PartialEq)] struct Sword(u32);
/// #[derive(Component, Debug, PartialEq)] struct Bow(u32);
/// #[derive(Component)] struct Name;
///
/// let mut world = World::new();
/// world.spawn((Sword(3), Name));
/// world.spawn((Sword(2), Bow(5)));
/// world.spawn(Name); // no weapon: not visited
/// let mut damage = 0;
/// for (sword, bow) in world.query_mut::<AnyOf<(&Sword, &mut Bow)>>() {
///     damage += sword.map_or(0, |s| s.0) + bow.map_or(0, |b| b.0);
/// }
/// assert_eq!(damage, 10);
/// ```
pub struct AnyOf<T>(PhantomData<fn() -> T>);

macro_rules! impl_any_of_for_tuple {
    ($($name:ident $index:tt),*) => {
        // SAFETY: each element goes through `Option<Q>`, which keeps `Q`'s
        // contract where it matches and yields `None` elsewhere; every
        // element's access is reported; `match_archetype` accepts only
        // archetypes where some element matches, and `condition` is the
        // union of the elements' conditions, which covers them.
        #[allow(unused_variables, clippy::unused_unit)]
        unsafe impl<$($name: QueryData),*> QueryData for AnyOf<($($name,)*)> {
            type Item<'w> = ($(Option<$name::Item<'w>>,)*);
            type Fetch<'w> = ($(Option<$name::Fetch<'w>>,)*);
            type State = ($(Option<$name::State>,)*);
            type Cache = ($(Option<$name::Cache>,)*);

            fn init_state(components: &mut Components) -> Self::State {
                ($(<Option<$name> as QueryData>::init_state(components),)*)
            }

            fn get_state(components: &Components) -> Option<Self::State> {
                Some(($(<Option<$name> as QueryData>::get_state(components)?,)*))
            }

            fn update_access(state: &Self::State, components: &Components, access: &mut Access) {
                $(<Option<$name> as QueryData>::update_access(&state.$index, components, access);)*
            }

            fn condition(state: &Self::State) -> ArchetypeCondition {
                let condition = ArchetypeCondition::none();
                $(let condition = match &state.$index {
                    Some(state) => condition.or($name::condition(state)),
                    None => condition,
                };)*
                condition
            }

            fn names_component(state: &Self::State, id: ComponentId) -> bool {
                false $(|| <Option<$name> as QueryData>::names_component(&state.$index, id))*
            }

            const DENSE: bool = true $(&& $name::DENSE)*;

            #[inline]
            fn match_archetype(state: &Self::State, archetype: &Archetype) -> Option<Self::Cache> {
                let cache = ($(<Option<$name> as QueryData>::match_archetype(&state.$index, archetype)?,)*);
                let any = false $(|| cache.$index.is_some())*;
                any.then_some(cache)
            }

            fn dangling_fetch<'w>() -> Self::Fetch<'w> {
                ($(<Option<$name> as QueryData>::dangling_fetch(),)*)
            }

            #[inline]
            unsafe fn init_fetch<'w>(
                state: &Self::State,
                cache: Self::Cache,
                table: TableRef<'w>,
                run: RunTicks,
            ) -> Self::Fetch<'w> {
                // SAFETY: each element's cache came from its own
                // `match_archetype` for this archetype.
                ($(unsafe { <Option<$name> as QueryData>::init_fetch(&state.$index, cache.$index, table, run) },)*)
            }

            #[inline(always)]
            unsafe fn row_matches(fetch: &Self::Fetch<'_>, row: usize) -> bool {
                // SAFETY: forwarded contract, element by element: some
                // element is there for this row.
                false $(|| fetch.$index.as_ref().is_some_and(|f| $name::DENSE || unsafe { $name::row_matches(f, row) }))*
            }

            #[inline(always)]
            unsafe fn fetch<'w>(fetch: &mut Self::Fetch<'w>, row: usize) -> Self::Item<'w> {
                // SAFETY: forwarded contract, element by element.
                ($(unsafe { <Option<$name> as QueryData>::fetch(&mut fetch.$index, row) },)*)
            }
        }

        // SAFETY: every element is read-only.
        unsafe impl<$($name: ReadOnlyQueryData),*> ReadOnlyQueryData for AnyOf<($($name,)*)> {}
    };
}

crate::tuples::all_tuples!(impl_any_of_for_tuple);
