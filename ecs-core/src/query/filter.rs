//! `QueryFilter`: which entities a query visits without fetching anything,
//! implemented for `With<T>`, `Without<T>`, `Or<(..)>` and tuples (all of).

use std::marker::PhantomData;

use crate::archetype::Archetype;
use crate::component::{Component, ComponentId, Components};
use crate::query::condition::ArchetypeCondition;

/// A condition on the entities a query visits: [`With<T>`], [`Without<T>`],
/// [`Or`] of filters, tuples of filters (all must hold), and `()` (none).
///
/// A filter decides per archetype, and, unless it is *archetypal*, also per
/// row (the hook that change-detection filters use).
///
/// # Safety
/// - `matches` and `filter_row` read no component data other than what
///   `init_fetch` points at, and write nothing;
/// - `condition` covers every archetype that `matches` accepts;
/// - if `IS_ARCHETYPAL` is true, `filter_row` returns true for every row of
///   an archetype that `matches`, so callers may skip calling it.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a query filter",
    label = "not a filter",
    note = "filters are `With<T>`, `Without<T>`, `Or<(..)>`, tuples of filters, or `()`"
)]
pub unsafe trait QueryFilter {
    /// Component ids, computed once per query state.
    type State: Clone + Send + Sync + 'static;
    /// Per-archetype data for the row test.
    type Fetch<'w>;
    /// Whether the filter decides per archetype alone.
    const IS_ARCHETYPAL: bool;

    /// Builds the state, registering the component types it names.
    fn init_state(components: &mut Components) -> Self::State;

    /// Builds the state without registering; `None` if no entity of this
    /// world can pass.
    fn get_state(components: &Components) -> Option<Self::State>;

    /// A condition that holds for every archetype that `matches` accepts
    /// (see [`ArchetypeCondition`]); used to prove two queries disjoint.
    fn condition(state: &Self::State) -> ArchetypeCondition {
        let _ = state;
        ArchetypeCondition::any()
    }

    /// Whether entities of `archetype` may pass.
    fn matches(state: &Self::State, archetype: &Archetype) -> bool;

    /// A placeholder fetch that is never read.
    fn dangling_fetch<'w>() -> Self::Fetch<'w>;

    /// The row test's data for an archetype that `matches`.
    ///
    /// # Safety
    /// `matches(state, archetype)` is true.
    unsafe fn init_fetch<'w>(state: &Self::State, archetype: &'w Archetype) -> Self::Fetch<'w>;

    /// Whether row `row` passes.
    ///
    /// # Safety
    /// `fetch` came from `init_fetch` for an archetype not changed
    /// structurally since, and `row` is below its length.
    unsafe fn filter_row(fetch: &mut Self::Fetch<'_>, row: usize) -> bool;
}

/// Passes entities that have component `T`, without fetching it.
pub struct With<T>(PhantomData<fn() -> T>);

/// Passes entities that do not have component `T`.
pub struct Without<T>(PhantomData<fn() -> T>);

/// Passes entities that pass at least one filter of the tuple:
/// `Or<(With<A>, With<B>)>`.
pub struct Or<T>(PhantomData<fn() -> T>);

// SAFETY: decides per archetype from its signature; reads no data.
unsafe impl<T: Component> QueryFilter for With<T> {
    type State = ComponentId;
    type Fetch<'w> = ();
    const IS_ARCHETYPAL: bool = true;

    fn init_state(components: &mut Components) -> ComponentId {
        components.register::<T>()
    }

    fn get_state(components: &Components) -> Option<ComponentId> {
        components.id::<T>()
    }

    fn condition(&id: &ComponentId) -> ArchetypeCondition {
        ArchetypeCondition::with(id)
    }

    #[inline]
    fn matches(&id: &ComponentId, archetype: &Archetype) -> bool {
        archetype.contains(id)
    }

    fn dangling_fetch<'w>() -> Self::Fetch<'w> {}

    unsafe fn init_fetch<'w>(_: &ComponentId, _: &'w Archetype) -> Self::Fetch<'w> {}

    #[inline(always)]
    unsafe fn filter_row(_: &mut (), _: usize) -> bool {
        true
    }
}

// SAFETY: decides per archetype from its signature; reads no data.
unsafe impl<T: Component> QueryFilter for Without<T> {
    /// `None` when the world has never seen `T`: then nothing has it.
    type State = Option<ComponentId>;
    type Fetch<'w> = ();
    const IS_ARCHETYPAL: bool = true;

    fn init_state(components: &mut Components) -> Option<ComponentId> {
        Some(components.register::<T>())
    }

    fn get_state(components: &Components) -> Option<Option<ComponentId>> {
        Some(components.id::<T>())
    }

    fn condition(id: &Option<ComponentId>) -> ArchetypeCondition {
        id.map_or_else(ArchetypeCondition::any, ArchetypeCondition::without)
    }

    #[inline]
    fn matches(id: &Option<ComponentId>, archetype: &Archetype) -> bool {
        id.is_none_or(|id| !archetype.contains(id))
    }

    fn dangling_fetch<'w>() -> Self::Fetch<'w> {}

    unsafe fn init_fetch<'w>(_: &Option<ComponentId>, _: &'w Archetype) -> Self::Fetch<'w> {}

    #[inline(always)]
    unsafe fn filter_row(_: &mut (), _: usize) -> bool {
        true
    }
}

macro_rules! impl_query_filter_for_tuple {
    ($($name:ident $index:tt),*) => {
        // SAFETY: all elements must pass; each keeps its own contract, and the
        // tuple is archetypal only if every element is.
        #[allow(unused_variables, clippy::unused_unit)]
        unsafe impl<$($name: QueryFilter),*> QueryFilter for ($($name,)*) {
            type State = ($($name::State,)*);
            type Fetch<'w> = ($($name::Fetch<'w>,)*);
            const IS_ARCHETYPAL: bool = true $(&& $name::IS_ARCHETYPAL)*;

            fn init_state(components: &mut Components) -> Self::State {
                ($($name::init_state(components),)*)
            }

            fn get_state(components: &Components) -> Option<Self::State> {
                Some(($($name::get_state(components)?,)*))
            }

            fn condition(state: &Self::State) -> ArchetypeCondition {
                let condition = ArchetypeCondition::any();
                $(let condition = condition.and(&$name::condition(&state.$index));)*
                condition
            }

            #[inline]
            fn matches(state: &Self::State, archetype: &Archetype) -> bool {
                true $(&& $name::matches(&state.$index, archetype))*
            }

            fn dangling_fetch<'w>() -> Self::Fetch<'w> {
                ($($name::dangling_fetch(),)*)
            }

            #[inline]
            unsafe fn init_fetch<'w>(state: &Self::State, archetype: &'w Archetype) -> Self::Fetch<'w> {
                // SAFETY: the tuple matches only if every element does.
                ($(unsafe { $name::init_fetch(&state.$index, archetype) },)*)
            }

            #[inline(always)]
            unsafe fn filter_row(fetch: &mut Self::Fetch<'_>, row: usize) -> bool {
                // SAFETY: forwarded contract, element by element.
                true $(&& unsafe { $name::filter_row(&mut fetch.$index, row) })*
            }
        }

        // SAFETY: some element must pass. An element whose state is `None`
        // (it names a component the world never saw) never passes. Each
        // element's row test runs only where that element matched the
        // archetype (the `bool` beside its fetch).
        #[allow(unused_variables, clippy::unused_unit)]
        unsafe impl<$($name: QueryFilter),*> QueryFilter for Or<($($name,)*)> {
            type State = ($(Option<$name::State>,)*);
            type Fetch<'w> = ($((bool, $name::Fetch<'w>),)*);
            const IS_ARCHETYPAL: bool = true $(&& $name::IS_ARCHETYPAL)*;

            fn init_state(components: &mut Components) -> Self::State {
                ($(Some($name::init_state(components)),)*)
            }

            fn get_state(components: &Components) -> Option<Self::State> {
                Some(($($name::get_state(components),)*))
            }

            fn condition(state: &Self::State) -> ArchetypeCondition {
                let condition = ArchetypeCondition::none();
                $(let condition = match &state.$index {
                    Some(s) => condition.or($name::condition(s)),
                    None => condition,
                };)*
                condition
            }

            #[inline]
            fn matches(state: &Self::State, archetype: &Archetype) -> bool {
                false $(|| state.$index.as_ref().is_some_and(|s| $name::matches(s, archetype)))*
            }

            fn dangling_fetch<'w>() -> Self::Fetch<'w> {
                ($((false, $name::dangling_fetch()),)*)
            }

            #[inline]
            unsafe fn init_fetch<'w>(state: &Self::State, archetype: &'w Archetype) -> Self::Fetch<'w> {
                ($(
                    match &state.$index {
                        Some(s) if $name::matches(s, archetype) => {
                            // SAFETY: this element matches the archetype.
                            (true, unsafe { $name::init_fetch(s, archetype) })
                        }
                        _ => (false, $name::dangling_fetch()),
                    },
                )*)
            }

            #[inline(always)]
            unsafe fn filter_row(fetch: &mut Self::Fetch<'_>, row: usize) -> bool {
                // SAFETY: each element's fetch is used only where it matched.
                false $(|| (fetch.$index.0 && unsafe { $name::filter_row(&mut fetch.$index.1, row) }))*
            }
        }
    };
}

crate::tuples::all_tuples!(impl_query_filter_for_tuple);
