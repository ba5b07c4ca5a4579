//! `QueryData`: what a query fetches per entity, implemented for `&T`,
//! `&mut T`, `Option<Q>`, `Entity` and tuples, and by `#[derive(Query)]`.

use std::marker::PhantomData;
use std::ptr::NonNull;

use crate::component::change::{ChangeMark, ComponentTicks, Mut, Ref, RunTicks, Tick, TickCell, Tracked};
use crate::component::{Component, ComponentId, Components, StorageType};
use crate::entity::{Entity, Handles};
use crate::query::access::Access;
use crate::query::condition::ArchetypeCondition;
use crate::storage::archetype::Archetype;
use crate::storage::column::Column;
use crate::storage::sparse::{SparseRows, TableRef};

/// A type that can be fetched by a query: `&T`, `&mut T` (yielding
/// [`Mut<T>`]), `Option<Q>`, [`Entity`], tuples of these (up to 15), and
/// structs with `#[derive(Query)]`.
///
/// # Safety
/// Implementations promise, for the queries built from them:
/// - `update_access` reports every component that `fetch` reads (as a read)
///   or hands out mutably (as a write);
/// - `match_archetype` returns `Some` only for archetypes where
///   `init_fetch` and `fetch` find everything they read, and the returned
///   cache is what `init_fetch` expects for that archetype;
/// - `fetch` for row `r` touches only row `r` of the archetype given to
///   `init_fetch` (and the sparse values of that row's entity), so items
///   for distinct rows never alias;
/// - if `DENSE` is true, `row_matches` returns true for every row of a
///   matched archetype, so callers may skip calling it;
/// - `condition` covers every archetype that `match_archetype` accepts;
/// - `ReadOnlyQueryData` is implemented only if `fetch` never hands out
///   mutable access.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be fetched by a query",
    label = "not query data",
    note = "query data is `&T` or `&mut T` of a component, `Option<..>`, `Entity`, a tuple of these, or a `#[derive(Query)]` struct"
)]
pub unsafe trait QueryData {
    /// What the query yields per entity.
    type Item<'w>;
    /// Per-archetype cursor: raw pointers to the start of the columns.
    type Fetch<'w>;
    /// Component ids, computed once per query state.
    type State: Clone + Send + Sync + 'static;
    /// Per matched archetype: where the columns are, computed once per
    /// archetype and query state.
    type Cache: Copy + Send + Sync + 'static;

    /// Builds the state, registering the component types it names.
    fn init_state(components: &mut Components) -> Self::State;

    /// Builds the state without registering; `None` if the query can match
    /// no entity of this world (it names a component the world never saw).
    fn get_state(components: &Components) -> Option<Self::State>;

    /// Records what the query reads and writes.
    fn update_access(state: &Self::State, components: &Components, access: &mut Access);

    /// A condition that holds for every archetype the query matches (see
    /// [`ArchetypeCondition`]); used to prove two queries disjoint.
    fn condition(state: &Self::State) -> ArchetypeCondition {
        let _ = state;
        ArchetypeCondition::any()
    }

    /// Whether the query names component `id` (reads it, writes it, asks
    /// whether it is there): an entity holding a default-hiding component
    /// such as [`Disabled`](crate::Disabled) is seen only by a query or
    /// filter that names that component. Query data that names nothing
    /// keeps the default, `false`.
    fn names_component(state: &Self::State, id: ComponentId) -> bool {
        let _ = (state, id);
        false
    }

    /// Whether every row of a matched archetype yields an item: false when
    /// the data reads a component in sparse storage
    /// ([`Component::STORAGE`]), which each row may lack; then callers ask
    /// [`QueryData::row_matches`] before fetching a row.
    const DENSE: bool = true;

    /// Whether the query fetches from `archetype`, and where.
    fn match_archetype(state: &Self::State, archetype: &Archetype) -> Option<Self::Cache>;

    /// A placeholder fetch that is never read.
    fn dangling_fetch<'w>() -> Self::Fetch<'w>;

    /// The fetch for one archetype, for a reader whose previous and current
    /// runs are `ticks`.
    ///
    /// # Safety
    /// `cache` was returned by `match_archetype(state, archetype)`.
    unsafe fn init_fetch<'w>(
        state: &Self::State,
        cache: Self::Cache,
        table: TableRef<'w>,
        ticks: RunTicks,
    ) -> Self::Fetch<'w>;

    /// Whether row `row` yields an item: whether its entity has the
    /// components in sparse storage that the data reads. Always true for
    /// [`QueryData::DENSE`] data.
    ///
    /// # Safety
    /// As for [`QueryData::fetch`]: `fetch` came from `init_fetch` for an
    /// archetype not changed structurally since, and `row` is below its
    /// length.
    #[inline(always)]
    unsafe fn row_matches(fetch: &Self::Fetch<'_>, row: usize) -> bool {
        let _ = (fetch, row);
        true
    }

    /// The item of row `row`. For data that is not [`QueryData::DENSE`],
    /// only for a row that [`QueryData::row_matches`] accepts (fetching
    /// another panics).
    ///
    /// # Safety
    /// - `fetch` came from `init_fetch` for an archetype that has not been
    ///   changed structurally since, and `row` is below its length;
    /// - nothing mutates the components the query reads while `'w` lasts
    ///   (for `&World` queries, the shared borrow of the world ensures it);
    /// - if the query is not read-only, the caller has exclusive access to
    ///   the fetched components for `'w`, and fetches each row at most once
    ///   while its items live.
    unsafe fn fetch<'w>(fetch: &mut Self::Fetch<'w>, row: usize) -> Self::Item<'w>;

    /// The item of row `row` when a table's rows are fetched one after the
    /// other from the first, as a `for` loop over a query does. Data that
    /// can step a pointer from one row to the next, instead of working out
    /// each row's address from its number, overrides it; the default is
    /// [`QueryData::fetch`].
    ///
    /// # Safety
    /// As for [`QueryData::fetch`]; in addition, the data is
    /// [`QueryData::DENSE`], and since `init_fetch` made `fetch` it has
    /// fetched exactly rows `0..row`, in order, through this function.
    #[inline(always)]
    unsafe fn fetch_next_row<'w>(fetch: &mut Self::Fetch<'w>, row: usize) -> Self::Item<'w> {
        // SAFETY: forwarded contract.
        unsafe { Self::fetch(fetch, row) }
    }
}

/// Query data that only reads, and so may run through a shared `&World`.
///
/// # Safety
/// `fetch` never hands out mutable access to a component.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a read-only query",
    label = "not read-only query data",
    note = "`&World` runs read-only queries: `&T` of a component, `Entity`, `Option<..>` and tuples of these",
    note = "for `&mut T`, use the `_mut` methods: `Query::iter_mut` in a system, `world.query_mut`, `QueryState::iter_mut`"
)]
pub unsafe trait ReadOnlyQueryData: QueryData {}

/// Fetch of one column of `T`: a table column, or for a type in sparse
/// storage, the set's values and where each row's entity has its value.
pub struct ColumnFetch<'w, T> {
    ptr: NonNull<T>,
    /// The value of the row [`ColumnFetch::step`] returns next.
    next: NonNull<T>,
    /// Dangling for a table type.
    rows: SparseRows<'w>,
    _borrow: PhantomData<&'w T>,
}

impl<T> Clone for ColumnFetch<'_, T> {
    fn clone(&self) -> Self {
        ColumnFetch { ptr: self.ptr, next: self.next, rows: self.rows, _borrow: PhantomData }
    }
}

impl<'w, T: Component> ColumnFetch<'w, T> {
    fn dangling() -> Self {
        ColumnFetch {
            ptr: NonNull::dangling(),
            next: NonNull::dangling(),
            rows: SparseRows::dangling(),
            _borrow: PhantomData,
        }
    }

    /// The column of `T`, whose id is `id`, in `table`: column `index` of
    /// the table, or `T`'s sparse set.
    ///
    /// # Safety
    /// For a table type, column `index` of `table` stores `T`; `id` is
    /// `T`'s id in the table's world.
    unsafe fn new(table: TableRef<'w>, id: ComponentId, index: usize) -> Self {
        if T::STORAGE == StorageType::Sparse {
            let (rows, set) = SparseRows::new(table, id);
            let ptr = set.map_or(NonNull::dangling(), |set| set.values().data().cast());
            return ColumnFetch { ptr, next: ptr, rows, _borrow: PhantomData };
        }
        // SAFETY: column `index` exists and stores `T` (caller).
        let ptr = unsafe { table.archetype().column_unchecked(index) }.data().cast();
        ColumnFetch { ptr, next: ptr, rows: SparseRows::dangling(), _borrow: PhantomData }
    }

    /// The column (table or sparse set) that [`ColumnFetch::new`] reads.
    ///
    /// # Safety
    /// As for [`ColumnFetch::new`].
    unsafe fn column(table: TableRef<'w>, id: ComponentId, index: usize) -> Option<&'w Column> {
        if T::STORAGE == StorageType::Sparse {
            table.sparse_set(id).map(|set| set.values())
        } else {
            // SAFETY: column `index` exists and stores `T` (caller).
            Some(unsafe { table.archetype().column_unchecked(index) })
        }
    }

    /// Whether row `row` has a value: always, for a table type.
    ///
    /// # Safety
    /// `row` is below the table's length.
    #[inline(always)]
    unsafe fn has(&self, row: usize) -> bool {
        // SAFETY: forwarded contract.
        T::STORAGE == StorageType::Table || unsafe { self.rows.dense(row) }.is_some()
    }

    /// The position of row `row`'s value in the column.
    ///
    /// # Panics
    /// For a type in sparse storage, if the row's entity has no value.
    ///
    /// # Safety
    /// `row` is below the table's length.
    #[inline(always)]
    unsafe fn slot(&self, row: usize) -> usize {
        if T::STORAGE == StorageType::Sparse {
            // SAFETY: forwarded contract.
            return unsafe { self.rows.dense(row) }.expect("a row without the sparse component was fetched");
        }
        row
    }

    /// Where row `row`'s value is, when the rows are visited one after the
    /// other from the first: a table column's pointer steps one value on.
    /// Values of 1, 2, 4 or 8 bytes are addressed from the row at no cost
    /// (a scaled index), so those keep [`ColumnFetch::at`].
    ///
    /// # Safety
    /// `row` is below the table's length, and this fetch's `step` has
    /// returned exactly rows `0..row` before, in order.
    #[inline(always)]
    unsafe fn step(&mut self, row: usize) -> *mut T {
        if T::STORAGE == StorageType::Sparse || matches!(size_of::<T>(), 0 | 1 | 2 | 4 | 8) {
            // SAFETY: forwarded contract.
            return unsafe { self.at(row) };
        }
        let at = self.next;
        // SAFETY: `at` is row `row`'s value, in bounds of the column
        // (caller); one past it is at most the column's end.
        self.next = unsafe { at.add(1) };
        at.as_ptr()
    }

    /// # Safety
    /// `row` is below the table's length.
    #[inline(always)]
    unsafe fn at(&self, row: usize) -> *mut T {
        // SAFETY: `slot` is in bounds of the column: the row itself for a
        // table column (caller), the value's dense position for a set.
        unsafe { self.ptr.as_ptr().add(self.slot(row)) }
    }
}

// SAFETY: reads exactly `T`'s column (reported as a read), row `row` only.
unsafe impl<T: Component> QueryData for &T {
    type Item<'w> = &'w T;
    type Fetch<'w> = ColumnFetch<'w, T>;
    type State = ComponentId;
    type Cache = usize;

    fn init_state(components: &mut Components) -> ComponentId {
        components.register::<T>()
    }

    fn get_state(components: &Components) -> Option<ComponentId> {
        components.id::<T>()
    }

    fn update_access(&id: &ComponentId, _: &Components, access: &mut Access) {
        access.add_read(id);
    }

    fn condition(&id: &ComponentId) -> ArchetypeCondition {
        component_condition::<T>(id)
    }

    fn names_component(&own: &ComponentId, id: ComponentId) -> bool {
        own == id
    }

    const DENSE: bool = matches!(T::STORAGE, StorageType::Table);

    #[inline]
    fn match_archetype(&id: &ComponentId, archetype: &Archetype) -> Option<usize> {
        match_component::<T>(id, archetype)
    }

    fn dangling_fetch<'w>() -> Self::Fetch<'w> {
        ColumnFetch::dangling()
    }

    #[inline]
    unsafe fn init_fetch<'w>(&id: &ComponentId, index: usize, table: TableRef<'w>, _: RunTicks) -> Self::Fetch<'w> {
        // SAFETY: `index` is the column of `T`'s id (from `match_archetype`).
        unsafe { ColumnFetch::new(table, id, index) }
    }

    #[inline(always)]
    unsafe fn row_matches(fetch: &Self::Fetch<'_>, row: usize) -> bool {
        // SAFETY: forwarded contract.
        unsafe { fetch.has(row) }
    }

    #[inline(always)]
    unsafe fn fetch<'w>(fetch: &mut Self::Fetch<'w>, row: usize) -> Self::Item<'w> {
        // SAFETY: `row` is in bounds and nothing mutates the column while
        // `'w` lasts (both from the caller's contract).
        unsafe { &*fetch.at(row) }
    }

    #[inline(always)]
    unsafe fn fetch_next_row<'w>(fetch: &mut Self::Fetch<'w>, row: usize) -> Self::Item<'w> {
        // SAFETY: as in `fetch`; the rows come in order (caller).
        unsafe { &*fetch.step(row) }
    }
}

// SAFETY: only shared references.
unsafe impl<T: Component> ReadOnlyQueryData for &T {}

/// Fetch of one column of `T` and, if `T` tracks changes, its ticks.
pub struct MutFetch<'w, T> {
    column: ColumnFetch<'w, T>,
    /// The column's added and changed ticks; dangling when `T` does not
    /// track changes.
    ticks: TickFetch,
    run: RunTicks,
}

/// Pointers to the start of a column's added and changed tick arrays.
#[derive(Clone, Copy)]
pub struct TickFetch {
    added: NonNull<TickCell>,
    changed: NonNull<TickCell>,
}

impl TickFetch {
    fn dangling() -> Self {
        TickFetch { added: NonNull::dangling(), changed: NonNull::dangling() }
    }

    fn new(column: Option<&Column>) -> Self {
        let Some(column) = column else { return TickFetch::dangling() };
        TickFetch {
            added: NonNull::from(column.added_ticks()).cast(),
            changed: NonNull::from(column.changed_ticks()).cast(),
        }
    }

    /// # Safety
    /// `row` is in bounds of a tracked column, and nothing writes its ticks
    /// while the returned copy is made.
    #[inline(always)]
    unsafe fn get(&self, row: usize) -> ComponentTicks {
        // SAFETY: guaranteed by the caller.
        unsafe {
            ComponentTicks {
                added: *(*self.added.as_ptr().add(row)).get(),
                changed: *(*self.changed.as_ptr().add(row)).get(),
            }
        }
    }
}

impl<'w, T: Component> MutFetch<'w, T> {
    fn dangling() -> Self {
        MutFetch { column: ColumnFetch::dangling(), ticks: TickFetch::dangling(), run: RunTicks::ZERO }
    }

    /// # Safety
    /// As for [`ColumnFetch::new`].
    unsafe fn new(table: TableRef<'w>, id: ComponentId, index: usize, run: RunTicks) -> Self {
        // SAFETY: forwarded contract.
        let (column, ticks) =
            unsafe { (ColumnFetch::new(table, id, index), ColumnFetch::<T>::column(table, id, index)) };
        // Once per table and query run: the column may be written from here.
        if let Some(written) = ticks {
            written.stamp(run.this_run);
        }
        MutFetch { column, ticks: TickFetch::new(ticks), run }
    }

    /// The value of `row` and, for a tracked type, its ticks.
    ///
    /// # Safety
    /// `row` is in bounds, the caller has exclusive access to it for `'w`,
    /// and fetches it once.
    #[inline(always)]
    unsafe fn at(&self, row: usize) -> Mut<'w, T> {
        // SAFETY: forwarded contract; `slot` is the row's place in the
        // column and in its ticks.
        unsafe {
            let slot = self.column.slot(row);
            self.marked(self.column.ptr.as_ptr().add(slot), slot)
        }
    }

    /// [`MutFetch::at`] for rows visited one after the other from the
    /// first ([`ColumnFetch::step`]).
    ///
    /// # Safety
    /// As for [`MutFetch::at`] and [`ColumnFetch::step`].
    #[inline(always)]
    unsafe fn step(&mut self, row: usize) -> Mut<'w, T> {
        // SAFETY: forwarded contract; `step` gives the value at `slot`.
        unsafe {
            let value = self.column.step(row);
            self.marked(value, self.column.slot(row))
        }
    }

    /// The value at `value`, with the ticks at `slot` for a tracked type.
    ///
    /// # Safety
    /// `value` is the column's value at `slot`, in bounds; the caller has
    /// exclusive access to it for `'w` and hands it out once.
    #[inline(always)]
    unsafe fn marked(&self, value: *mut T, slot: usize) -> Mut<'w, T> {
        // SAFETY: in bounds and exclusive (caller). A tracked type's column
        // has one tick cell per row, and the cell's `UnsafeCell` allows the
        // write through the shared borrow of the archetype.
        unsafe {
            let mark = if T::TRACK_CHANGES {
                let added = *(*self.ticks.added.as_ptr().add(slot)).get();
                ChangeMark::new(Some(&mut *(*self.ticks.changed.as_ptr().add(slot)).get()), added, self.run)
            } else {
                ChangeMark::new(None, Tick::default(), self.run)
            };
            Mut::new(&mut *value, mark)
        }
    }
}

// SAFETY: writes exactly `T`'s column and its ticks (reported as a write),
// row `row` only.
unsafe impl<T: Component + crate::component::MutableComponent> QueryData for &mut T {
    type Item<'w> = Mut<'w, T>;
    type Fetch<'w> = MutFetch<'w, T>;
    type State = ComponentId;
    type Cache = usize;

    fn init_state(components: &mut Components) -> ComponentId {
        components.register::<T>()
    }

    fn get_state(components: &Components) -> Option<ComponentId> {
        components.id::<T>()
    }

    fn update_access(&id: &ComponentId, _: &Components, access: &mut Access) {
        access.add_write(id);
    }

    fn condition(&id: &ComponentId) -> ArchetypeCondition {
        component_condition::<T>(id)
    }

    fn names_component(&own: &ComponentId, id: ComponentId) -> bool {
        own == id
    }

    const DENSE: bool = matches!(T::STORAGE, StorageType::Table);

    #[inline]
    fn match_archetype(&id: &ComponentId, archetype: &Archetype) -> Option<usize> {
        match_component::<T>(id, archetype)
    }

    fn dangling_fetch<'w>() -> Self::Fetch<'w> {
        MutFetch::dangling()
    }

    #[inline]
    unsafe fn init_fetch<'w>(&id: &ComponentId, index: usize, table: TableRef<'w>, run: RunTicks) -> Self::Fetch<'w> {
        // SAFETY: `index` is the column of `T`'s id (from `match_archetype`).
        unsafe { MutFetch::new(table, id, index, run) }
    }

    #[inline(always)]
    unsafe fn row_matches(fetch: &Self::Fetch<'_>, row: usize) -> bool {
        // SAFETY: forwarded contract.
        unsafe { fetch.column.has(row) }
    }

    #[inline(always)]
    unsafe fn fetch<'w>(fetch: &mut Self::Fetch<'w>, row: usize) -> Self::Item<'w> {
        // SAFETY: `row` is in bounds, the caller has exclusive access to the
        // column for `'w` and fetches each row once.
        unsafe { fetch.at(row) }
    }

    #[inline(always)]
    unsafe fn fetch_next_row<'w>(fetch: &mut Self::Fetch<'w>, row: usize) -> Self::Item<'w> {
        // SAFETY: as in `fetch`; the rows come in order (caller).
        unsafe { fetch.step(row) }
    }
}

/// Query data that yields a plain `&mut T`. It is what a `&'w mut T` field of
/// a `#[derive(Query)]` struct fetches; tuple queries use `&mut T`, which
/// yields [`Mut<T>`]. Writes through a plain reference cannot be observed
/// one by one, so handing it out counts as a change.
pub struct MutRef<T>(PhantomData<fn() -> T>);

// SAFETY: as for `&mut T`, with the reference unwrapped.
unsafe impl<T: Component + crate::component::MutableComponent> QueryData for MutRef<T> {
    type Item<'w> = &'w mut T;
    type Fetch<'w> = MutFetch<'w, T>;
    type State = ComponentId;
    type Cache = usize;

    fn init_state(components: &mut Components) -> ComponentId {
        <&mut T as QueryData>::init_state(components)
    }

    fn get_state(components: &Components) -> Option<ComponentId> {
        <&mut T as QueryData>::get_state(components)
    }

    fn update_access(id: &ComponentId, components: &Components, access: &mut Access) {
        <&mut T as QueryData>::update_access(id, components, access)
    }

    fn condition(id: &ComponentId) -> ArchetypeCondition {
        <&mut T as QueryData>::condition(id)
    }

    fn names_component(&own: &ComponentId, id: ComponentId) -> bool {
        own == id
    }

    const DENSE: bool = <&mut T as QueryData>::DENSE;

    #[inline]
    fn match_archetype(id: &ComponentId, archetype: &Archetype) -> Option<usize> {
        <&mut T as QueryData>::match_archetype(id, archetype)
    }

    fn dangling_fetch<'w>() -> Self::Fetch<'w> {
        MutFetch::dangling()
    }

    #[inline]
    unsafe fn init_fetch<'w>(id: &ComponentId, index: usize, table: TableRef<'w>, run: RunTicks) -> Self::Fetch<'w> {
        // SAFETY: forwarded contract.
        unsafe { <&mut T as QueryData>::init_fetch(id, index, table, run) }
    }

    #[inline(always)]
    unsafe fn row_matches(fetch: &Self::Fetch<'_>, row: usize) -> bool {
        // SAFETY: forwarded contract.
        unsafe { <&mut T as QueryData>::row_matches(fetch, row) }
    }

    #[inline(always)]
    unsafe fn fetch<'w>(fetch: &mut Self::Fetch<'w>, row: usize) -> Self::Item<'w> {
        // SAFETY: forwarded contract.
        unsafe { <&mut T as QueryData>::fetch(fetch, row) }.into_inner()
    }

    #[inline(always)]
    unsafe fn fetch_next_row<'w>(fetch: &mut Self::Fetch<'w>, row: usize) -> Self::Item<'w> {
        // SAFETY: forwarded contract.
        unsafe { <&mut T as QueryData>::fetch_next_row(fetch, row) }.into_inner()
    }
}

/// Fetch of one column of a tracked `T` and its ticks.
pub struct RefFetch<'w, T> {
    column: ColumnFetch<'w, T>,
    ticks: TickFetch,
    run: RunTicks,
}

// SAFETY: reads `T`'s column and its ticks (reported as a read), row `row`
// only.
unsafe impl<T: Component + Tracked> QueryData for Ref<'_, T> {
    type Item<'w> = Ref<'w, T>;
    type Fetch<'w> = RefFetch<'w, T>;
    type State = ComponentId;
    type Cache = usize;

    fn init_state(components: &mut Components) -> ComponentId {
        assert_tracked::<T>();
        <&T as QueryData>::init_state(components)
    }

    fn get_state(components: &Components) -> Option<ComponentId> {
        assert_tracked::<T>();
        <&T as QueryData>::get_state(components)
    }

    fn update_access(id: &ComponentId, components: &Components, access: &mut Access) {
        <&T as QueryData>::update_access(id, components, access)
    }

    fn condition(id: &ComponentId) -> ArchetypeCondition {
        <&T as QueryData>::condition(id)
    }

    fn names_component(&own: &ComponentId, id: ComponentId) -> bool {
        own == id
    }

    const DENSE: bool = <&T as QueryData>::DENSE;

    #[inline]
    fn match_archetype(id: &ComponentId, archetype: &Archetype) -> Option<usize> {
        <&T as QueryData>::match_archetype(id, archetype)
    }

    fn dangling_fetch<'w>() -> Self::Fetch<'w> {
        RefFetch { column: ColumnFetch::dangling(), ticks: TickFetch::dangling(), run: RunTicks::ZERO }
    }

    #[inline]
    unsafe fn init_fetch<'w>(&id: &ComponentId, index: usize, table: TableRef<'w>, run: RunTicks) -> Self::Fetch<'w> {
        // SAFETY: `index` is the column of `T`'s id (from `match_archetype`).
        let (column, ticks) =
            unsafe { (ColumnFetch::new(table, id, index), ColumnFetch::<T>::column(table, id, index)) };
        RefFetch { column, ticks: TickFetch::new(ticks), run }
    }

    #[inline(always)]
    unsafe fn row_matches(fetch: &Self::Fetch<'_>, row: usize) -> bool {
        // SAFETY: forwarded contract.
        unsafe { fetch.column.has(row) }
    }

    #[inline(always)]
    unsafe fn fetch<'w>(fetch: &mut Self::Fetch<'w>, row: usize) -> Self::Item<'w> {
        // SAFETY: `row` is in bounds and nothing mutates the row while `'w`
        // lasts (caller); `T` tracks changes (checked when the state was
        // built), so its column has one tick cell per value.
        unsafe {
            let slot = fetch.column.slot(row);
            Ref::new(&*fetch.column.ptr.as_ptr().add(slot), fetch.ticks.get(slot), fetch.run)
        }
    }
}

// SAFETY: only shared references and copies of ticks.
unsafe impl<T: Component + Tracked> ReadOnlyQueryData for Ref<'_, T> {}

/// Panics unless `T` keeps change ticks: `Tracked` is implemented by the
/// derive together with `TRACK_CHANGES`, so this fails only for a
/// hand-written `Tracked` impl that forgot the constant.
#[track_caller]
pub(crate) fn assert_tracked<T: Component>() {
    assert!(
        T::TRACK_CHANGES,
        "`{}` implements `Tracked` but `Component::TRACK_CHANGES` is false; derive `Component` with \
         `#[component(track_changes)]` instead of implementing `Tracked` by hand",
        std::any::type_name::<T>()
    );
}

/// The fetch of [`Entity`] in a query: a table's entity indices, and the
/// world's slots that hold the generations.
#[derive(Clone, Copy)]
pub struct EntityFetch<'w> {
    indices: NonNull<u32>,
    handles: Handles<'w>,
}

// SAFETY: reads only the archetype's entity column and the world's entity
// generations, which queries never mutate.
unsafe impl QueryData for Entity {
    type Item<'w> = Entity;
    type Fetch<'w> = EntityFetch<'w>;
    type State = ();
    type Cache = ();

    fn init_state(_: &mut Components) {}

    fn get_state(_: &Components) -> Option<()> {
        Some(())
    }

    fn update_access(_: &(), _: &Components, _: &mut Access) {}

    #[inline]
    fn match_archetype(_: &(), _: &Archetype) -> Option<()> {
        Some(())
    }

    fn dangling_fetch<'w>() -> Self::Fetch<'w> {
        EntityFetch { indices: NonNull::dangling(), handles: Handles::dangling() }
    }

    #[inline]
    unsafe fn init_fetch<'w>(_: &(), _: (), table: TableRef<'w>, _: RunTicks) -> Self::Fetch<'w> {
        EntityFetch { indices: NonNull::from(table.archetype().entity_indices()).cast(), handles: table.handles() }
    }

    #[inline(always)]
    unsafe fn fetch<'w>(fetch: &mut Self::Fetch<'w>, row: usize) -> Self::Item<'w> {
        // SAFETY: `row` is below the archetype's length (caller), and the
        // index there is a live entity's of the world the handles are from,
        // so in bounds of its slots.
        unsafe {
            let index = fetch.indices.as_ptr().add(row).read();
            fetch.handles.slots().get_unchecked(index as usize).entity(index)
        }
    }
}

// SAFETY: entity handles are copied out.
unsafe impl ReadOnlyQueryData for Entity {}

// SAFETY: forwards to `Q` where it matches, and yields `None` elsewhere; the
// access is `Q`'s, reported even though some rows do not touch it.
unsafe impl<Q: QueryData> QueryData for Option<Q> {
    type Item<'w> = Option<Q::Item<'w>>;
    type Fetch<'w> = Option<Q::Fetch<'w>>;
    type State = Option<Q::State>;
    type Cache = Option<Q::Cache>;

    fn init_state(components: &mut Components) -> Self::State {
        Some(Q::init_state(components))
    }

    fn get_state(components: &Components) -> Option<Self::State> {
        Some(Q::get_state(components))
    }

    fn update_access(state: &Self::State, components: &Components, access: &mut Access) {
        if let Some(state) = state {
            Q::update_access(state, components, access);
        }
    }

    fn names_component(state: &Self::State, id: ComponentId) -> bool {
        state.as_ref().is_some_and(|state| Q::names_component(state, id))
    }

    #[inline]
    fn match_archetype(state: &Self::State, archetype: &Archetype) -> Option<Self::Cache> {
        Some(state.as_ref().and_then(|s| Q::match_archetype(s, archetype)))
    }

    fn dangling_fetch<'w>() -> Self::Fetch<'w> {
        None
    }

    #[inline]
    unsafe fn init_fetch<'w>(
        state: &Self::State,
        cache: Self::Cache,
        table: TableRef<'w>,
        run: RunTicks,
    ) -> Self::Fetch<'w> {
        match (state, cache) {
            // SAFETY: `cache` came from `Q::match_archetype` for this archetype.
            (Some(state), Some(cache)) => Some(unsafe { Q::init_fetch(state, cache, table, run) }),
            _ => None,
        }
    }

    #[inline(always)]
    unsafe fn fetch<'w>(fetch: &mut Self::Fetch<'w>, row: usize) -> Self::Item<'w> {
        // SAFETY: forwarded contract; a row `Q` does not match yields `None`.
        fetch.as_mut().and_then(|f| unsafe { (Q::DENSE || Q::row_matches(f, row)).then(|| Q::fetch(f, row)) })
    }

    #[inline(always)]
    unsafe fn fetch_next_row<'w>(fetch: &mut Self::Fetch<'w>, row: usize) -> Self::Item<'w> {
        if !Q::DENSE {
            // SAFETY: forwarded contract.
            return unsafe { Self::fetch(fetch, row) };
        }
        // SAFETY: forwarded contract: `Q` is dense, and a table it matches
        // has its rows fetched in order here.
        fetch.as_mut().map(|f| unsafe { Q::fetch_next_row(f, row) })
    }
}

// SAFETY: `Q` is read-only.
unsafe impl<Q: ReadOnlyQueryData> ReadOnlyQueryData for Option<Q> {}

macro_rules! impl_query_data_for_tuple {
    ($($name:ident $index:tt),*) => {
        // SAFETY: each element keeps its own contract; the tuple matches only
        // where all do and reports all their accesses.
        #[allow(unused_variables, clippy::unused_unit)]
        unsafe impl<$($name: QueryData),*> QueryData for ($($name,)*) {
            type Item<'w> = ($($name::Item<'w>,)*);
            type Fetch<'w> = ($($name::Fetch<'w>,)*);
            type State = ($($name::State,)*);
            type Cache = ($($name::Cache,)*);

            fn init_state(components: &mut Components) -> Self::State {
                ($($name::init_state(components),)*)
            }

            fn get_state(components: &Components) -> Option<Self::State> {
                Some(($($name::get_state(components)?,)*))
            }

            fn update_access(state: &Self::State, components: &Components, access: &mut Access) {
                $($name::update_access(&state.$index, components, access);)*
            }

            fn condition(state: &Self::State) -> ArchetypeCondition {
                let condition = ArchetypeCondition::any();
                $(let condition = condition.and(&$name::condition(&state.$index));)*
                condition
            }

            fn names_component(state: &Self::State, id: ComponentId) -> bool {
                false $(|| $name::names_component(&state.$index, id))*
            }

            const DENSE: bool = true $(&& $name::DENSE)*;

            #[inline]
            fn match_archetype(state: &Self::State, archetype: &Archetype) -> Option<Self::Cache> {
                Some(($($name::match_archetype(&state.$index, archetype)?,)*))
            }

            fn dangling_fetch<'w>() -> Self::Fetch<'w> {
                ($($name::dangling_fetch(),)*)
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
                ($(unsafe { $name::init_fetch(&state.$index, cache.$index, table, run) },)*)
            }

            #[inline(always)]
            unsafe fn row_matches(fetch: &Self::Fetch<'_>, row: usize) -> bool {
                // SAFETY: forwarded contract, element by element.
                true $(&& ($name::DENSE || unsafe { $name::row_matches(&fetch.$index, row) }))*
            }

            #[inline(always)]
            unsafe fn fetch<'w>(fetch: &mut Self::Fetch<'w>, row: usize) -> Self::Item<'w> {
                // SAFETY: forwarded contract, element by element.
                ($(unsafe { $name::fetch(&mut fetch.$index, row) },)*)
            }

            #[inline(always)]
            unsafe fn fetch_next_row<'w>(fetch: &mut Self::Fetch<'w>, row: usize) -> Self::Item<'w> {
                // SAFETY: forwarded contract, element by element: each is
                // dense when the tuple is.
                ($(unsafe { $name::fetch_next_row(&mut fetch.$index, row) },)*)
            }
        }

        // SAFETY: every element is read-only.
        unsafe impl<$($name: ReadOnlyQueryData),*> ReadOnlyQueryData for ($($name,)*) {}
    };
}

crate::tuples::all_tuples!(impl_query_data_for_tuple);

/// The condition a component read puts on the archetypes a query visits:
/// that they hold it, for a table type; none for a sparse one, which no
/// archetype records.
pub(crate) fn component_condition<T: Component>(id: ComponentId) -> ArchetypeCondition {
    if T::STORAGE == StorageType::Sparse {
        ArchetypeCondition::any()
    } else {
        ArchetypeCondition::with(id)
    }
}

/// Where a read of `T` finds it in `archetype`: its column, or for a
/// sparse type, which every archetype may hold, its set (any cache does).
#[inline]
pub(crate) fn match_component<T: Component>(id: ComponentId, archetype: &Archetype) -> Option<usize> {
    if T::STORAGE == StorageType::Sparse {
        Some(usize::MAX)
    } else {
        archetype.column_index(id)
    }
}
