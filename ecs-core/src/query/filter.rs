//! `QueryFilter`: which entities a query visits without fetching anything,
//! implemented for `With<T>`, `Without<T>`, `Added<T>`, `Changed<T>`,
//! `Or<(..)>` and tuples (all of).

use std::marker::PhantomData;
use std::ptr::NonNull;

use crate::component::change::{RunTicks, Tick, TickCell, Tracked};
use crate::component::{Component, ComponentId, Components, StorageType};
use crate::query::access::Access;
use crate::query::condition::ArchetypeCondition;
use crate::query::fetch::{assert_tracked, component_condition};
use crate::storage::archetype::Archetype;
use crate::storage::sparse::{SparseRows, TableRef};

/// A condition on the entities a query visits: [`With<T>`], [`Without<T>`],
/// [`Or`] of filters, tuples of filters (all must hold), and `()` (none).
///
/// A filter decides per archetype, and, unless it is *archetypal*, also per
/// row (the hook that change-detection filters use).
///
/// # Safety
/// - `matches` and `filter_row` read no component data other than what
///   `init_fetch` points at, and write nothing;
/// - `update_access` reports as reads the components whose data (or ticks)
///   `filter_row` reads;
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

    /// Records what the row test reads; archetypal filters read nothing.
    fn update_access(state: &Self::State, access: &mut Access) {
        let _ = (state, access);
    }

    /// Whether the filter names component `id` (`With`, `Without`,
    /// `Added`, `Changed` of it, alone or inside a tuple or an [`Or`]): an
    /// entity holding a default-hiding component such as
    /// [`Disabled`](crate::Disabled) passes only a query whose data or
    /// filter names that component. The default names nothing.
    fn names_component(state: &Self::State, id: ComponentId) -> bool {
        let _ = (state, id);
        false
    }

    /// Whether entities of `archetype` may pass.
    fn matches(state: &Self::State, archetype: &Archetype) -> bool;

    /// A placeholder fetch that is never read.
    fn dangling_fetch<'w>() -> Self::Fetch<'w>;

    /// The row test's data for an archetype that `matches`, for a reader
    /// whose previous and current runs are `ticks`.
    ///
    /// # Safety
    /// `matches(state, archetype)` is true.
    unsafe fn init_fetch<'w>(state: &Self::State, table: TableRef<'w>, ticks: RunTicks) -> Self::Fetch<'w>;

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

/// A filter that decides per archetype alone: `()`, [`With<T>`],
/// [`Without<T>`], and tuples and [`Or`]s of these. A query whose filter is
/// one knows how many entities it will visit without visiting them, so its
/// iterator is an [`ExactSizeIterator`]; [`Added`] and [`Changed`] test
/// each row and are not archetypal. Neither are `With` and `Without` of a
/// component in sparse storage ([`Component::STORAGE`]), nor query data
/// reading one: `len()` on such a query panics; use `count()`.
///
/// ```
/// # use archetable::prelude::*;
/// # #[derive(Component)] struct Hp(u32);
/// # #[derive(Component)] struct Boss;
/// let mut world = World::new();
/// world.spawn(Hp(1));
/// world.spawn((Hp(2), Boss));
/// assert_eq!(world.query_filtered::<&Hp, Without<Boss>>().len(), 1);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` tests each row, so the query does not know its length up front",
    label = "not an archetypal filter",
    note = "`len()` needs a filter made of `With`, `Without`, `Or` and tuples of these; with `Added` or `Changed`, \
            use `count()`"
)]
pub trait ArchetypeFilter: QueryFilter {}

impl<T: Component> ArchetypeFilter for With<T> {}
impl<T: Component> ArchetypeFilter for Without<T> {}

// SAFETY: decides per archetype from its signature; reads no data (for a
// type in sparse storage, decides per row from the set's index, which no
// query writes).
unsafe impl<T: Component> QueryFilter for With<T> {
    type State = ComponentId;
    type Fetch<'w> = SparseRows<'w>;
    const IS_ARCHETYPAL: bool = matches!(T::STORAGE, StorageType::Table);

    fn init_state(components: &mut Components) -> ComponentId {
        components.register::<T>()
    }

    fn get_state(components: &Components) -> Option<ComponentId> {
        components.id::<T>()
    }

    fn condition(&id: &ComponentId) -> ArchetypeCondition {
        component_condition::<T>(id)
    }

    fn names_component(&own: &ComponentId, id: ComponentId) -> bool {
        own == id
    }

    #[inline]
    fn matches(&id: &ComponentId, archetype: &Archetype) -> bool {
        T::STORAGE == StorageType::Sparse || archetype.contains(id)
    }

    fn dangling_fetch<'w>() -> Self::Fetch<'w> {
        SparseRows::dangling()
    }

    #[inline]
    unsafe fn init_fetch<'w>(&id: &ComponentId, table: TableRef<'w>, _: RunTicks) -> Self::Fetch<'w> {
        if T::STORAGE == StorageType::Sparse {
            SparseRows::new(table, id).0
        } else {
            SparseRows::dangling()
        }
    }

    #[inline(always)]
    unsafe fn filter_row(rows: &mut SparseRows<'_>, row: usize) -> bool {
        // SAFETY: `row` is in bounds of the table (caller).
        T::STORAGE == StorageType::Table || unsafe { rows.dense(row) }.is_some()
    }
}

// SAFETY: as for `With`.
unsafe impl<T: Component> QueryFilter for Without<T> {
    /// `None` when the world has never seen `T`: then nothing has it.
    type State = Option<ComponentId>;
    type Fetch<'w> = SparseRows<'w>;
    const IS_ARCHETYPAL: bool = matches!(T::STORAGE, StorageType::Table);

    fn init_state(components: &mut Components) -> Option<ComponentId> {
        Some(components.register::<T>())
    }

    fn get_state(components: &Components) -> Option<Option<ComponentId>> {
        Some(components.id::<T>())
    }

    fn condition(id: &Option<ComponentId>) -> ArchetypeCondition {
        match id {
            Some(id) if T::STORAGE == StorageType::Table => ArchetypeCondition::without(*id),
            _ => ArchetypeCondition::any(),
        }
    }

    fn names_component(own: &Option<ComponentId>, id: ComponentId) -> bool {
        *own == Some(id)
    }

    #[inline]
    fn matches(id: &Option<ComponentId>, archetype: &Archetype) -> bool {
        T::STORAGE == StorageType::Sparse || id.is_none_or(|id| !archetype.contains(id))
    }

    fn dangling_fetch<'w>() -> Self::Fetch<'w> {
        SparseRows::dangling()
    }

    #[inline]
    unsafe fn init_fetch<'w>(id: &Option<ComponentId>, table: TableRef<'w>, _: RunTicks) -> Self::Fetch<'w> {
        match id {
            Some(id) if T::STORAGE == StorageType::Sparse => SparseRows::new(table, *id).0,
            _ => SparseRows::dangling(),
        }
    }

    #[inline(always)]
    unsafe fn filter_row(rows: &mut SparseRows<'_>, row: usize) -> bool {
        // SAFETY: `row` is in bounds of the table (caller).
        T::STORAGE == StorageType::Table || unsafe { rows.dense(row) }.is_none()
    }
}

/// Passes entities that got component `T` since the reader last ran: a
/// spawn or an insert of a `T` they lacked. `T` must track changes
/// (`#[component(track_changes)]`).
///
/// Each reader (a system, or a [`QueryState`](crate::QueryState)) sees each
/// addition exactly once, whatever the order of the systems.
///
/// ```
/// use archetable::prelude::*;
///
/// #[derive(Component)]
/// #[component(track_changes)]
/// struct Hp(u32);
///
/// let mut world = World::new();
/// let mut added = QueryState::<Entity, Added<Hp>>::new(&mut world);
/// let a = world.spawn(Hp(1));
/// assert_eq!(added.iter(&world).collect::<Vec<_>>(), [a]);
/// assert_eq!(added.iter(&world).count(), 0, "seen once");
/// ```
pub struct Added<T>(PhantomData<fn() -> T>);

/// Passes entities whose `T` was written (through [`Mut`](crate::Mut),
/// `World::get_mut`, or an insert) or added since the reader last ran. `T`
/// must track changes (`#[component(track_changes)]`).
///
/// ```
/// use archetable::prelude::*;
///
/// #[derive(Component)]
/// #[component(track_changes)]
/// struct Hp(u32);
///
/// let mut world = World::new();
/// let a = world.spawn(Hp(1));
/// let b = world.spawn(Hp(1));
/// let mut changed = QueryState::<Entity, Changed<Hp>>::new(&mut world);
/// assert_eq!(changed.iter(&world).count(), 2, "additions count as changes");
/// world.get_mut::<Hp>(b).unwrap().0 = 0;
/// assert_eq!(changed.iter(&world).collect::<Vec<_>>(), [b]);
/// # let _ = a;
/// ```
pub struct Changed<T>(PhantomData<fn() -> T>);

/// The row test of [`Added`] and [`Changed`]: the column's added or
/// changed ticks.
pub struct TicksFetch<'w> {
    ticks: NonNull<TickCell>,
    run: RunTicks,
    /// For a type in sparse storage, where each row's value is; dangling
    /// for a table type.
    rows: SparseRows<'w>,
    _borrow: PhantomData<&'w Tick>,
}

impl TicksFetch<'_> {
    fn dangling() -> Self {
        TicksFetch {
            ticks: NonNull::dangling(),
            run: RunTicks::ZERO,
            rows: SparseRows::dangling(),
            _borrow: PhantomData,
        }
    }

    /// # Safety
    /// `row` is in bounds of a tracked column, and nothing writes its ticks
    /// while the fetch lives.
    #[inline(always)]
    unsafe fn at(&self, row: usize) -> Tick {
        // SAFETY: guaranteed by the caller.
        unsafe { *(*self.ticks.as_ptr().add(row)).get() }
    }
}

macro_rules! impl_tick_filter {
    ($filter:ident, $ticks:ident) => {
        // SAFETY: reads only `T`'s ticks, reported as a read of `T`; matches
        // exactly the archetypes with `T`.
        unsafe impl<T: Component + Tracked> QueryFilter for $filter<T> {
            type State = ComponentId;
            type Fetch<'w> = TicksFetch<'w>;
            const IS_ARCHETYPAL: bool = false;

            fn init_state(components: &mut Components) -> ComponentId {
                assert_tracked::<T>();
                components.register::<T>()
            }

            fn get_state(components: &Components) -> Option<ComponentId> {
                assert_tracked::<T>();
                components.id::<T>()
            }

            fn condition(&id: &ComponentId) -> ArchetypeCondition {
                ArchetypeCondition::with(id)
            }

            fn update_access(&id: &ComponentId, access: &mut Access) {
                access.add_read(id);
            }

            fn names_component(&own: &ComponentId, id: ComponentId) -> bool {
                own == id
            }

            #[inline]
            fn matches(&id: &ComponentId, archetype: &Archetype) -> bool {
                T::STORAGE == StorageType::Sparse || archetype.contains(id)
            }

            fn dangling_fetch<'w>() -> Self::Fetch<'w> {
                TicksFetch::dangling()
            }

            #[inline]
            unsafe fn init_fetch<'w>(&id: &ComponentId, table: TableRef<'w>, run: RunTicks) -> Self::Fetch<'w> {
                if T::STORAGE == StorageType::Sparse {
                    let (rows, set) = SparseRows::new(table, id);
                    let ticks = set.map_or(NonNull::dangling(), |set| NonNull::from(set.values().$ticks()).cast());
                    return TicksFetch { ticks, run, rows, _borrow: PhantomData };
                }
                let index = table.column_index(id).expect("the filter matched an archetype without its component");
                let ticks = NonNull::from(table.archetype().column(index).$ticks()).cast();
                TicksFetch { ticks, run, rows: SparseRows::dangling(), _borrow: PhantomData }
            }

            #[inline(always)]
            unsafe fn filter_row(fetch: &mut Self::Fetch<'_>, row: usize) -> bool {
                let slot = if T::STORAGE == StorageType::Sparse {
                    // SAFETY: `row` is in bounds of the table (caller).
                    match unsafe { fetch.rows.dense(row) } {
                        Some(dense) => dense,
                        None => return false,
                    }
                } else {
                    row
                };
                // SAFETY: `slot` is in bounds (caller) of `T`'s column or
                // set, which has one tick cell per value since `T` tracks
                // changes; the reported read keeps writers away.
                let tick = unsafe { fetch.at(slot) };
                tick.is_newer_than(fetch.run.last_run, fetch.run.this_run)
            }
        }
    };
}

impl_tick_filter!(Added, added_ticks);
impl_tick_filter!(Changed, changed_ticks);

macro_rules! impl_query_filter_for_tuple {
    ($($name:ident $index:tt),*) => {
        impl<$($name: ArchetypeFilter),*> ArchetypeFilter for ($($name,)*) {}
        impl<$($name: ArchetypeFilter),*> ArchetypeFilter for Or<($($name,)*)> {}

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

            fn update_access(state: &Self::State, access: &mut Access) {
                $($name::update_access(&state.$index, access);)*
            }

            fn names_component(state: &Self::State, id: ComponentId) -> bool {
                false $(|| $name::names_component(&state.$index, id))*
            }

            #[inline]
            fn matches(state: &Self::State, archetype: &Archetype) -> bool {
                true $(&& $name::matches(&state.$index, archetype))*
            }

            fn dangling_fetch<'w>() -> Self::Fetch<'w> {
                ($($name::dangling_fetch(),)*)
            }

            #[inline]
            unsafe fn init_fetch<'w>(state: &Self::State, table: TableRef<'w>, ticks: RunTicks) -> Self::Fetch<'w> {
                // SAFETY: the tuple matches only if every element does.
                ($(unsafe { $name::init_fetch(&state.$index, table, ticks) },)*)
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

            fn update_access(state: &Self::State, access: &mut Access) {
                $(if let Some(s) = &state.$index {
                    $name::update_access(s, access);
                })*
            }

            fn names_component(state: &Self::State, id: ComponentId) -> bool {
                false $(|| state.$index.as_ref().is_some_and(|s| $name::names_component(s, id)))*
            }

            #[inline]
            fn matches(state: &Self::State, archetype: &Archetype) -> bool {
                false $(|| state.$index.as_ref().is_some_and(|s| $name::matches(s, archetype)))*
            }

            fn dangling_fetch<'w>() -> Self::Fetch<'w> {
                ($((false, $name::dangling_fetch()),)*)
            }

            #[inline]
            unsafe fn init_fetch<'w>(state: &Self::State, table: TableRef<'w>, ticks: RunTicks) -> Self::Fetch<'w> {
                ($(
                    match &state.$index {
                        Some(s) if $name::matches(s, table.archetype()) => {
                            // SAFETY: this element matches the archetype.
                            (true, unsafe { $name::init_fetch(s, table, ticks) })
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
