//! Archetypes: one table per set of component types, a column per component
//! (struct of arrays) plus the column of entity handles, rows kept dense by
//! swap-remove.

use std::alloc::{self, Layout};
use std::fmt;
use std::ptr::NonNull;

use hashbrown::HashMap;

use crate::component::bundle::{BundleInfo, Bundles};
use crate::component::{ComponentId, Components};
use crate::entity::Entity;
pub use crate::entity::{ArchetypeId, Row};
use crate::storage::bitset::BitSet;
use crate::storage::column::{for_each_unwinding, CloneColumnFn, Column};
use crate::storage::graph::{Edges, InsertEdge, NO_COLUMN};
use crate::storage::pool::Pools;

/// The table of every entity that has exactly one set of component types.
///
/// ```text
///   components: [ Position,  Velocity,  Frozen ]     sorted ids
///   columns:    [ x,y x,y .. dx,dy ..   (0 bytes) ]  one per component
///   entities:   [ 4        7        2 ]              entity indices
/// ```
///
/// The entity column holds each row's entity *index* (4 bytes); the
/// generation is in the world's entity table, which has it anyway to check
/// handles: `Entity` in a query reads it from there.
///
/// A table's first reservation puts every column in one allocation, the
/// table's block: one call to the allocator instead of one per column, and
/// one big block that the allocator keeps for the next table of that size.
/// (Freeing several mid-sized buffers per world let glibc hand the heap
/// back to the system, and the next world of the same shape paid a page
/// fault for every page it wrote again.) A table that outgrows its block
/// moves each column to a buffer of its own, which then grows in place
/// (`realloc`) without touching the others: growing a block would move
/// every column but the first, and leave their old pages resident in the
/// first one's spare room.
///
/// Invariants:
/// - `components` is sorted and duplicate-free, `columns[i]` stores
///   `components[i]`, and `bits` holds exactly the same ids;
/// - until the table is `split`, every column lives in `block` (see
///   `Block`), with a capacity of `block.rows`; once split, every column
///   owns its memory and the block holds none (zero-sized types need no
///   memory, and keep their own capacity throughout);
/// - every column has `entities.len()` values, and row `r` of every column
///   belongs to the live entity of index `entities[r]`;
/// - the world's entity table says the entity of index `entities[r]` lives
///   at this archetype, row `r`.
pub struct Archetype {
    id: ArchetypeId,
    components: Box<[ComponentId]>,
    columns: Box<[Column]>,
    entities: Vec<u32>,
    bits: BitSet,
    /// Rows every column and the entity column can hold without growing: a
    /// lower bound kept by `reserve`, so that a spawn in a reserved batch
    /// checks one number instead of every column.
    capacity: u32,
    /// How many times rows left the table (see
    /// [`Archetype::removal_count`]). Beside `capacity`, both 32 bits, so
    /// the table keeps its size.
    removals: u32,
    /// Whether some column's type has a destructor or a pool.
    drops: bool,
    /// Whether some column's type is pooled (`#[component(pooled)]`).
    pooled: bool,
    /// Whether some column's type hides its entities from the queries
    /// that do not name it (`Disabled`), fixed when the archetype is
    /// created. A flag beside the others, so that the table's size, and
    /// with it the cost of finding a table by id, stays as it was.
    hides: bool,
    /// Whether the columns have left the block for memory of their own.
    split: bool,
    /// The columns' memory until the table is split. Declared after
    /// `columns`, so that it is freed after their values are dropped.
    block: Block,
}

/// The allocation that holds every column of a table, `rows` rows of each.
///
/// The columns sit back to back, by decreasing alignment (in column order
/// among equals): a type's size is a multiple of its alignment, so each
/// column starts aligned, with no padding, at `rows` times the bytes per
/// row of the columns before it. Zero-sized types take no room.
struct Block {
    /// The start, or a dangling pointer aligned to `align` while the block
    /// is zero bytes long.
    data: NonNull<u8>,
    /// Rows of every column it has room for; zero until the table's first
    /// reservation, and again once the table is split.
    rows: usize,
    /// Bytes of one row: the sum of the column types' sizes.
    row_bytes: usize,
    /// The largest alignment among the columns (1 if none).
    align: usize,
}

impl Block {
    fn new(columns: &[Column]) -> Self {
        let align = columns.iter().map(|c| c.item_layout().align()).max().unwrap_or(1);
        let row_bytes = columns.iter().map(|c| c.item_layout().size()).sum();
        Block { data: Block::dangling(align), rows: 0, row_bytes, align }
    }

    fn dangling(align: usize) -> NonNull<u8> {
        NonNull::new(std::ptr::without_provenance_mut(align)).expect("alignment is non-zero")
    }

    /// Bytes allocated.
    #[inline]
    fn size(&self) -> usize {
        self.rows * self.row_bytes
    }

    /// Frees the memory; the block holds no rows after.
    fn free(&mut self) {
        if self.size() != 0 {
            // SAFETY: allocated with this size and alignment
            // (`Archetype::alloc_block`).
            unsafe { alloc::dealloc(self.data.as_ptr(), Layout::from_size_align_unchecked(self.size(), self.align)) }
        }
        self.data = Block::dangling(self.align);
        self.rows = 0;
    }
}

impl Drop for Block {
    fn drop(&mut self) {
        self.free();
    }
}

// SAFETY: the block is plain memory owned by its table; its columns' values,
// which it holds, are `Send + Sync` (`Component`).
unsafe impl Send for Block {}
// SAFETY: as above.
unsafe impl Sync for Block {}

/// Where column `i` starts in a block: the bytes per row of the columns
/// before it in the block's order (by decreasing alignment, then column
/// order).
fn block_start(columns: &[Column], i: usize) -> usize {
    let item = columns[i].item_layout();
    columns
        .iter()
        .enumerate()
        .map(|(j, c)| (j, c.item_layout()))
        .filter(|&(j, other)| other.align() > item.align() || (other.align() == item.align() && j < i))
        .map(|(_, other)| other.size())
        .sum()
}

impl Archetype {
    fn new(id: ArchetypeId, components: Box<[ComponentId]>, registry: &Components) -> Self {
        debug_assert!(components.windows(2).all(|w| w[0] < w[1]));
        let mut bits = BitSet::new();
        for c in components.iter() {
            bits.insert(c.index());
        }
        let columns: Box<[Column]> = components.iter().map(|&c| Column::in_table(registry.info(c))).collect();
        Archetype {
            id,
            block: Block::new(&columns),
            columns,
            drops: components.iter().any(|&c| registry.info(c).drop_fn().is_some() || registry.info(c).is_pooled()),
            pooled: components.iter().any(|&c| registry.info(c).is_pooled()),
            hides: components.iter().any(|&c| registry.info(c).hides_entities()),
            components,
            entities: Vec::new(),
            bits,
            capacity: 0,
            removals: 0,
            split: false,
        }
    }

    /// This archetype's id.
    #[inline]
    pub fn id(&self) -> ArchetypeId {
        self.id
    }

    /// Number of entities (rows).
    #[inline]
    pub fn len(&self) -> usize {
        self.entities.len()
    }

    /// Whether the table has no rows.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.entities.is_empty()
    }

    /// The entity index of each row. The generations are in the world's
    /// entity table: [`World::table_entities`](crate::World::table_entities)
    /// gives the full handles.
    #[inline]
    pub fn entity_indices(&self) -> &[u32] {
        &self.entities
    }

    /// The component types stored here, sorted by id.
    #[inline]
    pub fn components(&self) -> &[ComponentId] {
        &self.components
    }

    /// Whether a component type stored here hides the entities from the
    /// queries that do not name it, such as [`Disabled`](crate::Disabled)
    /// (see [`ComponentInfo::hides_entities`](crate::component::ComponentInfo::hides_entities));
    /// usually false.
    #[inline]
    pub fn hides_entities(&self) -> bool {
        self.hides
    }

    /// Whether the archetype stores component `id`.
    #[inline]
    pub fn contains(&self, id: ComponentId) -> bool {
        self.bits.contains(id.index())
    }

    /// The set of component ids, as bits.
    #[inline]
    pub fn bits(&self) -> &BitSet {
        &self.bits
    }

    /// The position of component `id`'s column.
    #[inline]
    pub fn column_index(&self, id: ComponentId) -> Option<usize> {
        // Most tables have a handful of columns, where a scan takes fewer
        // steps than halving; the ids are sorted, so it stops early.
        if self.components.len() <= 8 {
            return self.components.iter().position(|&c| c >= id).filter(|&i| self.components[i] == id);
        }
        self.components.binary_search(&id).ok()
    }

    #[inline]
    pub(crate) fn column(&self, index: usize) -> &Column {
        &self.columns[index]
    }

    /// Column `index`, without a bounds check: for the query fetches, whose
    /// indices come from [`Archetype::column_index`] on this table.
    ///
    /// # Safety
    /// `index` is below the table's column count.
    #[inline(always)]
    pub(crate) unsafe fn column_unchecked(&self, index: usize) -> &Column {
        // SAFETY: in bounds (caller).
        unsafe { self.columns.get_unchecked(index) }
    }

    #[inline]
    #[cfg_attr(not(feature = "hierarchy"), allow(dead_code))]
    pub(crate) fn columns(&self) -> &[Column] {
        &self.columns
    }

    #[inline]
    pub(crate) fn columns_mut(&mut self) -> &mut [Column] {
        &mut self.columns
    }

    /// The values of component `id`, one per row in row order, if the
    /// table stores it and `T` is its type. For reading whole columns at
    /// once (saving a world, exporting data).
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component, Debug, PartialEq)] struct Hp(u32);
    /// let mut world = World::new();
    /// world.spawn(Hp(3));
    /// world.spawn(Hp(4));
    /// let hp = world.components().id::<Hp>().unwrap();
    /// let table = world.archetypes().as_slice().iter().find(|t| t.contains(hp)).unwrap();
    /// assert_eq!(table.column_slice::<Hp>(hp), Some(&[Hp(3), Hp(4)][..]));
    /// assert_eq!(table.column_slice::<u32>(hp), None);
    /// ```
    #[inline]
    pub fn column_slice<T: 'static>(&self, id: ComponentId) -> Option<&[T]> {
        let column = self.column(self.column_index(id)?);
        if column.type_id() != std::any::TypeId::of::<T>() {
            return None;
        }
        // SAFETY: the column stores `T` (checked above), so its first `len`
        // rows are initialized `T`s, contiguous and aligned from `data`
        // (the column's invariants; a dangling aligned pointer for zero
        // rows or a zero-sized `T`); the shared borrow of the table keeps
        // them from being changed or moved meanwhile.
        Some(unsafe { std::slice::from_raw_parts(column.data().as_ptr().cast::<T>(), column.len()) })
    }

    /// The change tick of the last write that may have changed component
    /// `id`'s column here (a query or `get_mut` handing out `&mut` to it,
    /// a value pushed or replaced), tracked or not; `None` if the table
    /// does not store `id`. Removals are not stamped: compare the table's
    /// entities too to tell that the column is as it was.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component)] struct Plain(u32);
    /// let mut world = World::new();
    /// let a = world.spawn(Plain(1));
    /// let id = world.components().id::<Plain>().unwrap();
    /// let table = |world: &World| world.archetypes().as_slice().iter().find(|t| t.contains(id)).unwrap().id();
    /// let saved = world.next_change_tick();
    /// let written = |world: &World| world.archetypes().get(table(world)).column_written(id).unwrap();
    /// assert!(written(&world).get() < saved.get());
    /// world.get_mut::<Plain>(a).unwrap().0 = 2;
    /// assert_eq!(written(&world), saved);
    /// ```
    #[inline]
    pub fn column_written(&self, id: ComponentId) -> Option<crate::component::change::Tick> {
        Some(self.column(self.column_index(id)?).written())
    }

    /// How many times a row left this table (removed, despawned, moved to
    /// another table, cleared), wrapping at 2^32. Rows are only ever added
    /// at the end, so a table whose entity list and removal count are as
    /// they were holds the same rows as then: with
    /// [`Archetype::column_written`], a column that is as it was.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component)] struct Plain(u32);
    /// let mut world = World::new();
    /// let a = world.spawn(Plain(1));
    /// let id = world.components().id::<Plain>().unwrap();
    /// let count = |world: &World| {
    ///     world.archetypes().as_slice().iter().find(|t| t.contains(id)).unwrap().removal_count()
    /// };
    /// let before = count(&world);
    /// world.despawn(a);
    /// world.spawn(Plain(2)); // the same entity list as before
    /// assert_eq!(count(&world), before.wrapping_add(1));
    /// ```
    #[inline]
    pub fn removal_count(&self) -> u32 {
        self.removals
    }

    /// Whether some value of component `id` in this table was added or
    /// changed after `last_run` and not after `this_run`, as
    /// [`Changed`](crate::Changed) would see it, without reading the
    /// values; `None` if the table does not store `id` or the type does
    /// not track changes. Rows moved by a removal keep their ticks: compare
    /// the table's entities too to tell that the column is as it was.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # use archetable::Tick;
    /// # #[derive(Component)] #[component(track_changes)] struct Hp(u32);
    /// # #[derive(Component)] struct Plain(u32);
    /// let mut world = World::new();
    /// let a = world.spawn((Hp(3), Plain(1)));
    /// let seen = world.next_change_tick();
    /// let since = Tick::new(seen.get() - 1);
    /// let (hp, plain) = (world.components().id::<Hp>().unwrap(), world.components().id::<Plain>().unwrap());
    /// let table = |world: &World| world.archetypes().as_slice().iter().find(|t| t.contains(hp)).unwrap().id();
    /// let changed = |world: &World| world.archetypes().get(table(world)).column_changed_since(hp, since, world.change_tick());
    /// assert_eq!(changed(&world), Some(false));
    /// world.get_mut::<Hp>(a).unwrap().0 = 4;
    /// assert_eq!(changed(&world), Some(true));
    /// // Without ticks, there is nothing to tell.
    /// assert_eq!(world.archetypes().get(table(&world)).column_changed_since(plain, since, world.change_tick()), None);
    /// ```
    pub fn column_changed_since(
        &self,
        id: ComponentId,
        last_run: crate::component::change::Tick,
        this_run: crate::component::change::Tick,
    ) -> Option<bool> {
        self.column(self.column_index(id)?).changed_since(last_run, this_run)
    }

    /// The `T` in `row`, if the archetype stores `T` under `id`.
    #[inline]
    pub(crate) fn get<T: 'static>(&self, id: ComponentId, row: Row) -> Option<&T> {
        self.column(self.column_index(id)?).get(row.index())
    }

    /// Makes room for `additional` more rows in every column.
    #[inline]
    pub(crate) fn reserve(&mut self, additional: usize) {
        // Rows may have been pushed past `capacity` by a growing push, hence
        // the saturating subtraction.
        if additional > (self.capacity as usize).saturating_sub(self.entities.len()) {
            self.grow(additional);
        }
    }

    /// Makes room for `additional` more rows in the entity column only; the
    /// caller grows the columns (or has them take over buffers).
    pub(crate) fn reserve_entities(&mut self, additional: usize) {
        self.entities.reserve(additional);
    }

    #[cold]
    #[inline(never)]
    fn grow(&mut self, additional: usize) {
        let needed = self.entities.len().checked_add(additional).expect("table overflow");
        if !self.split {
            if self.block.rows == 0 {
                self.alloc_block(needed.max(4));
            } else if needed > self.block.rows {
                // Doubling, as a `Vec` grows: amortized constant time per row.
                self.split_block(needed.max(self.block.rows.saturating_mul(2)));
            }
        }
        self.entities.reserve(additional);
        let mut capacity = self.entities.capacity();
        for column in self.columns.iter_mut() {
            if self.split {
                column.reserve(additional);
            } else {
                column.reserve_ticks(additional);
            }
            capacity = capacity.min(column.capacity());
        }
        // Rows are numbered in 32 bits; a larger capacity is never used.
        self.capacity = u32::try_from(capacity).unwrap_or(u32::MAX);
    }

    /// Readies a table that has never had room for a row to be filled by
    /// taking over buffers ([`Column::adopt`]): its columns leave the
    /// (never allocated) block and own their memory from then on, as after
    /// a split, and the entity column gets room for `rows`. Returns false,
    /// changing nothing, if the table has rows or room already.
    pub(crate) fn own_columns_for_adoption(&mut self, rows: usize) -> bool {
        if self.split || self.block.rows != 0 || !self.entities.is_empty() {
            return false;
        }
        self.entities.reserve(rows);
        for column in self.columns.iter_mut() {
            // SAFETY: a table column with no room and no values (the table
            // never allocated its block): zero values are copied to an
            // allocation of zero bytes, and there is no block to free.
            unsafe { column.detach(0) };
        }
        self.split = true;
        true
    }

    /// The table's first reservation: one block of `rows` rows for every
    /// column.
    fn alloc_block(&mut self, rows: usize) {
        debug_assert!(!self.split && self.block.rows == 0);
        let size = rows.checked_mul(self.block.row_bytes).expect("table size overflow");
        if size != 0 {
            let layout = Layout::from_size_align(size, self.block.align).expect("table size overflow");
            // SAFETY: `layout` has a non-zero size.
            let data = unsafe { alloc::alloc(layout) };
            self.block.data = NonNull::new(data).unwrap_or_else(|| alloc::handle_alloc_error(layout));
        }
        self.block.rows = rows;
        let base = self.block.data.as_ptr();
        for i in 0..self.columns.len() {
            let before = block_start(&self.columns, i);
            // SAFETY: the block holds `rows` values of every column, column
            // `i`'s from `before * rows` on, aligned (columns by decreasing
            // alignment); the column is a table's and still empty (its
            // first room).
            unsafe { self.columns[i].set_storage(NonNull::new_unchecked(base.add(before * rows)), rows) };
        }
    }

    /// Gives every column a buffer of its own with room for `rows` values,
    /// copies the values there, and frees the block: the table has
    /// outgrown it.
    fn split_block(&mut self, rows: usize) {
        // Every size is checked before anything moves, so an overflow
        // leaves the table as it was.
        for column in self.columns.iter() {
            crate::storage::column::array_layout(column.item_layout(), rows);
        }
        for column in self.columns.iter_mut() {
            // SAFETY: a table column, whose values are in the block; `rows`
            // is above the block's rows, so above its length.
            unsafe { column.detach(rows) };
        }
        self.split = true;
        self.block.free();
    }

    /// Appends `entity` to the entity column and returns its row. The caller
    /// pushes one value to every column before the archetype is used again.
    #[inline]
    pub(crate) fn push_entity(&mut self, entity: Entity) -> Row {
        let row = Row(self.entities.len() as u32);
        self.entities.push(entity.index());
        row
    }

    /// Appends `entities` to the entity column, a block of rows from the
    /// current length. The caller pushes one value per row to every column
    /// before the archetype is used again.
    pub(crate) fn extend_entities(&mut self, entities: &[Entity]) {
        self.entities.extend(entities.iter().map(|e| e.index()));
    }

    /// Removes `row` from a table without columns (the empty table), the
    /// last row moving into its place; returns the index of the entity
    /// moved there, for the caller to record.
    ///
    /// # Panics
    /// If the table has columns, or the row is out of bounds.
    pub(crate) fn remove_bare_row(&mut self, row: Row) -> Option<u32> {
        assert!(self.columns.is_empty(), "remove_bare_row on a table with columns");
        self.removals = self.removals.wrapping_add(1);
        self.entities.swap_remove(row.index());
        self.entities.get(row.index()).copied()
    }

    /// Removes `row` and drops its values, or resets and pools the values
    /// of pooled types; the last row moves into its place (the caller
    /// records that move in the entity table first).
    ///
    /// Every column and the entity column are made consistent before the
    /// first destructor or reset runs, and one that panics does not stop the
    /// others from running.
    pub(crate) fn remove_row(&mut self, row: Row, pools: &mut Pools, registry: &Components) {
        let r = row.index();
        assert!(r < self.entities.len(), "row out of bounds");
        self.removals = self.removals.wrapping_add(1);
        self.entities.swap_remove(r);
        if !self.drops {
            // Nothing to drop: fill the hole with the last row, without
            // reading the removed values.
            for column in self.columns.iter_mut() {
                // SAFETY: every column has `len + 1 > r` rows (invariant), and
                // the removed value needs no drop.
                unsafe { column.swap_remove_forget(r) };
            }
            return;
        }
        if self.pooled {
            self.remove_row_pooled(r, pools, registry);
            return;
        }
        for column in self.columns.iter_mut() {
            // SAFETY: every column has `len + 1 > r` rows (invariant).
            unsafe { column.swap_remove_to_end(r) };
        }
        for_each_unwinding(self.columns.iter_mut(), |column| {
            // SAFETY: each column had its removed value moved past its end
            // above, and it is dropped once here.
            unsafe { column.drop_past_end() }
        });
    }

    /// Removes `row` without dropping its values: first hands `out` each
    /// component's id and the address of the row's value, to move it out;
    /// then the last row moves into the hole (the caller records that move
    /// in the entity table).
    ///
    /// # Safety
    /// - `row` is in bounds;
    /// - `out` moves each value out (or leaves it to leak), never drops it
    ///   in place, and does not panic: the values count as moved out once
    ///   it has been called.
    pub(crate) unsafe fn take_row(&mut self, row: Row, mut out: impl FnMut(ComponentId, *const u8)) {
        let r = row.index();
        debug_assert!(r < self.entities.len());
        for (column, &id) in self.columns.iter().zip(self.components.iter()) {
            // SAFETY: `r` is in bounds of every column (caller, invariant).
            out(id, unsafe { column.ptr_at(r) });
        }
        self.removals = self.removals.wrapping_add(1);
        self.entities.swap_remove(r);
        for column in self.columns.iter_mut() {
            // SAFETY: `r` is in bounds, and `out` moved the value out.
            unsafe { column.swap_remove_forget(r) };
        }
    }

    /// [`Archetype::remove_row`] for a table with pooled columns. First,
    /// with no user code: each pooled value with room in its pool moves
    /// straight there from row `r` (the last row fills the hole), and every
    /// other value moves past its column's end. Then the pooled values are
    /// reset and the others dropped; a panic there does not stop the rest.
    fn remove_row_pooled(&mut self, r: usize, pools: &mut Pools, registry: &Components) {
        // Room first: once values start moving, nothing may panic.
        for &id in self.components.iter() {
            let info = registry.info(id);
            if info.is_pooled() {
                pools.reserve_one(info);
            }
        }
        // Bit `i`: column `i` is done (its value went to its pool, or needs
        // no drop). Columns from 64 on take the slower way, past the end
        // and through `release`.
        let mut pooled_now = 0u64;
        let mut forgotten = 0u64;
        for (i, (column, &id)) in self.columns.iter_mut().zip(self.components.iter()).enumerate() {
            let info = registry.info(id);
            // SAFETY: every column has `len + 1 > r` rows (invariant); a
            // value `accept` took is moved out, and one without a destructor
            // may be forgotten, so `swap_remove_forget` forgets both; any
            // other moves past the end for below.
            unsafe {
                if i < 64 && info.is_pooled() && pools.accept(info, column.ptr_at(r)) {
                    column.swap_remove_forget(r);
                    pooled_now |= 1 << i;
                } else if i < 64 && info.drop_fn().is_none() {
                    column.swap_remove_forget(r);
                    forgotten |= 1 << i;
                } else {
                    column.swap_remove_to_end(r);
                }
            }
        }
        let (ids, columns) = (&self.components, &mut self.columns);
        for_each_unwinding(0..columns.len(), |i| {
            let bit = if i < 64 { 1 << i } else { 0 };
            if forgotten & bit != 0 {
                return;
            }
            let info = registry.info(ids[i]);
            if pooled_now & bit != 0 {
                pools.reset_last(info);
            } else {
                let column = &columns[i];
                // SAFETY: the value just past the column's end is the removed
                // one, valid and of the column's type; `release` takes it
                // over, and the column never touches it again.
                unsafe { pools.release(info, column.ptr_at(column.len())) }
            }
        });
    }

    /// Moves `row` into `dst` along a cached column map: `map[i]` is the
    /// column of `dst` that receives column `i`, or `NO_COLUMN` for a
    /// component `dst` lacks, whose value is forgotten (the caller moved it
    /// out). Returns the new row in `dst` and the index of the entity moved
    /// into `row` here.
    ///
    /// # Safety
    /// - `row` is in bounds;
    /// - `map` has one entry per column here, and each entry other than
    ///   `NO_COLUMN` is the column of `dst` storing the same component, each
    ///   used once;
    /// - for every `NO_COLUMN` entry, the value in `row` has been moved out;
    /// - after the call, the caller pushes a value to every column of `dst`
    ///   that `map` does not name, before `dst` is used again.
    #[inline]
    pub(crate) unsafe fn move_row(&mut self, row: Row, dst: &mut Archetype, map: &[u32]) -> (Row, Option<u32>) {
        debug_assert_eq!(map.len(), self.columns.len());
        // Grow first: once values start moving, nothing may panic.
        dst.reserve(1);
        let r = row.index();
        self.removals = self.removals.wrapping_add(1);
        let index = self.entities.swap_remove(r);
        let new_row = Row(dst.entities.len() as u32);
        dst.entities.push(index);
        for (column, &to) in self.columns.iter_mut().zip(map) {
            if to == NO_COLUMN {
                // SAFETY: the caller moved this value out already.
                unsafe { column.swap_remove_forget(r) };
            } else {
                debug_assert!((to as usize) < dst.columns.len());
                // SAFETY: `r` is in bounds; the map sends this column to a
                // column of `dst` (so `to` is in bounds there) of the same
                // component (caller), which `move_to` re-checks in debug
                // builds.
                unsafe { column.move_to(r, dst.columns.get_unchecked_mut(to as usize)) };
            }
        }
        (new_row, self.entities.get(r).copied())
    }

    /// Makes this table's rows copies of `src`'s (the same signature), in
    /// place: see [`Archetypes::clone_from_same_layout`].
    fn clone_rows_from(
        &mut self,
        src: &Archetype,
        registry: &Components,
        typed: &impl Fn(std::any::TypeId) -> Option<CloneColumnFn>,
        keep: &dyn Fn(ArchetypeId, ComponentId) -> bool,
    ) {
        debug_assert_eq!(self.components, src.components);
        if self.is_empty() && src.is_empty() {
            return;
        }
        if src.len() > self.len() {
            self.reserve(src.len() - self.len());
        }
        let same_rows = self.entities == src.entities;
        for (i, column) in self.columns.iter_mut().enumerate() {
            if same_rows && keep(self.id, self.components[i]) {
                // Same rows, and the caller vouches for the values: only
                // the stamp is copied, as a copy would.
                column.copy_stamp(&src.columns[i]);
                continue;
            }
            match typed(column.type_id()) {
                Some(copy) => copy(column, &src.columns[i]),
                None => {
                    let info = registry.info(self.components[i]);
                    let Some(clone) = info.clone_fn() else { panic!("component `{}` is not cloneable", info.name()) };
                    // SAFETY: both columns store `components[i]`'s type (same
                    // signature, same registry), and `clone` is that type's
                    // clone function.
                    unsafe { column.clone_from_erased(&src.columns[i], clone) };
                }
            }
        }
        // Every column now holds one value per row of `src`, in its rows.
        if !same_rows {
            self.removals = self.removals.wrapping_add(1);
        }
        self.entities.clone_from(&src.entities);
    }

    /// Clamps the change ticks of every tracked column (see
    /// [`World::check_change_ticks`](crate::World::check_change_ticks)).
    pub(crate) fn check_ticks(&mut self, now: crate::component::change::Tick) {
        for column in self.columns.iter_mut().filter(|c| c.is_tracked()) {
            column.check_ticks(now);
        }
    }

    /// Removes every row, dropping the values (or resetting and pooling
    /// those of pooled types) and keeping the memory.
    pub(crate) fn clear(&mut self, pools: &mut Pools, registry: &Components) {
        self.removals = self.removals.wrapping_add(1);
        self.entities.clear();
        if !self.pooled {
            for_each_unwinding(self.columns.iter_mut(), Column::clear);
            return;
        }
        let ids = &self.components;
        for_each_unwinding(self.columns.iter_mut().zip(ids.iter()), |(column, &id)| {
            let info = registry.info(id);
            if info.is_pooled() {
                pools.absorb(info, column);
            } else {
                column.clear();
            }
        });
    }

    /// Bytes held by the columns, entity column included.
    pub fn allocated_bytes(&self) -> usize {
        let columns = self.columns.iter().map(Column::allocated_bytes).sum::<usize>();
        // While the columns live in the block, their room is the block's.
        self.entities.capacity() * std::mem::size_of::<u32>() + columns
    }

    /// Checks the per-table invariants.
    pub(crate) fn check_invariants(&self, registry: &Components) -> Result<(), String> {
        if self.columns.len() != self.components.len() {
            return Err(format!(
                "archetype {:?}: {} columns for {} components",
                self.id,
                self.columns.len(),
                self.components.len()
            ));
        }
        if !self.bits.iter().eq(self.components.iter().map(|c| c.index())) {
            return Err(format!("archetype {:?}: bit set differs from the signature", self.id));
        }
        for (i, column) in self.columns.iter().enumerate() {
            column
                .check_invariants(registry.info(self.components[i]))
                .map_err(|e| format!("archetype {:?}: {e}", self.id))?;
            if column.is_tracked() != registry.info(self.components[i]).tracks_changes() {
                return Err(format!("archetype {:?}: column {i} keeps ticks unlike its type", self.id));
            }
            if column.len() != self.entities.len() {
                return Err(format!(
                    "archetype {:?}: column {i} has {} rows, entity column {}",
                    self.id,
                    column.len(),
                    self.entities.len()
                ));
            }
        }
        if !self.components.windows(2).all(|w| w[0] < w[1]) {
            return Err(format!("archetype {:?}: signature not sorted", self.id));
        }
        if self.split && self.block.rows != 0 {
            return Err(format!("archetype {:?}: split, yet its block holds {} rows", self.id, self.block.rows));
        }
        let mut misplaced = None;
        for (i, column) in self.columns.iter().enumerate() {
            let expected = self.block.data.as_ptr().wrapping_add(block_start(&self.columns, i) * self.block.rows);
            let in_place = if column.item_layout().size() == 0 {
                true
            } else if self.split {
                column.owns_memory()
            } else {
                !column.owns_memory()
                    && column.capacity() == self.block.rows
                    && (self.block.rows == 0 || column.data().as_ptr() == expected)
            };
            if !in_place {
                misplaced.get_or_insert(i);
            }
        }
        match misplaced {
            Some(i) => Err(format!("archetype {:?}: column {i} is not where the table keeps it", self.id)),
            None => Ok(()),
        }
    }
}

impl fmt::Debug for Archetype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Archetype")
            .field("id", &self.id)
            .field("components", &self.components)
            .field("len", &self.len())
            .finish()
    }
}

/// Every archetype of a world, and the index from signature to archetype.
pub struct Archetypes {
    archetypes: Vec<Archetype>,
    /// The graph: `edges[i]` holds the cached transitions out of archetype `i`.
    edges: Vec<Edges>,
    by_signature: HashMap<Box<[ComponentId]>, ArchetypeId>,
}

impl Archetypes {
    pub(crate) fn new(components: &Components) -> Self {
        let mut archetypes = Archetypes { archetypes: Vec::new(), edges: Vec::new(), by_signature: HashMap::new() };
        let empty = archetypes.get_or_create(Box::new([]), components);
        debug_assert_eq!(empty, ArchetypeId::EMPTY);
        archetypes
    }

    /// Number of archetypes. Ids are `0..len`, in order of creation.
    #[inline]
    pub fn len(&self) -> usize {
        self.archetypes.len()
    }

    /// Always false: the empty archetype exists from the start.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.archetypes.is_empty()
    }

    /// All archetypes, indexed by id.
    #[inline]
    pub fn as_slice(&self) -> &[Archetype] {
        &self.archetypes
    }

    #[inline]
    pub(crate) fn as_mut_slice(&mut self) -> &mut [Archetype] {
        &mut self.archetypes
    }

    /// The archetype with `id`.
    #[inline]
    pub fn get(&self, id: ArchetypeId) -> &Archetype {
        &self.archetypes[id.index()]
    }

    #[inline]
    pub(crate) fn get_mut(&mut self, id: ArchetypeId) -> &mut Archetype {
        &mut self.archetypes[id.index()]
    }

    /// The transitions cached out of archetype `id`.
    #[inline]
    pub(crate) fn edges(&self, id: ArchetypeId) -> &Edges {
        &self.edges[id.index()]
    }

    #[inline]
    pub(crate) fn edges_mut(&mut self, id: ArchetypeId) -> &mut Edges {
        &mut self.edges[id.index()]
    }

    /// Two distinct archetypes, both mutable, and the edges out of the first.
    #[inline(always)]
    pub(crate) fn pair_mut(&mut self, a: ArchetypeId, b: ArchetypeId) -> (&mut Archetype, &mut Archetype, &Edges) {
        assert_ne!(a, b, "pair_mut needs two distinct archetypes");
        let edges = &self.edges[a.index()];
        let (a, b) = (a.index(), b.index());
        if a < b {
            let (lo, hi) = self.archetypes.split_at_mut(b);
            (&mut lo[a], &mut hi[0], edges)
        } else {
            let (lo, hi) = self.archetypes.split_at_mut(a);
            (&mut hi[0], &mut lo[b], edges)
        }
    }

    /// The table a spawn of `bundle` writes into, mutable, and the edge
    /// into it from the empty archetype, computed first if new: one edge
    /// lookup on the common path.
    #[inline(always)]
    pub(crate) fn spawn_table(
        &mut self,
        bundle: &BundleInfo,
        components: &Components,
    ) -> (&mut Archetype, &InsertEdge) {
        let empty = ArchetypeId::EMPTY.index();
        let at = match self.edges[empty].insert_position(bundle.id()) {
            Some(at) => at,
            None => {
                self.insert_edge(ArchetypeId::EMPTY, bundle, components);
                self.edges[empty].insert_position(bundle.id()).expect("insert edge computed first")
            }
        };
        let edge = self.edges[empty].inserting_at(at);
        (&mut self.archetypes[edge.target.index()], edge)
    }

    /// Archetype `table`, mutable, and the edges out of archetype `from`
    /// (the same or another).
    #[inline]
    pub(crate) fn table_and_edges(&mut self, table: ArchetypeId, from: ArchetypeId) -> (&mut Archetype, &Edges) {
        (&mut self.archetypes[table.index()], &self.edges[from.index()])
    }

    /// Checks every table, the index from signature to archetype and every
    /// cached edge of the graph.
    pub(crate) fn check_invariants(&self, registry: &Components, bundles: &Bundles) -> Result<(), String> {
        if self.edges.len() != self.archetypes.len() || self.by_signature.len() != self.archetypes.len() {
            return Err("archetype, edge and signature tables differ in length".to_owned());
        }
        for (i, archetype) in self.archetypes.iter().enumerate() {
            if archetype.id().index() != i || self.by_signature.get(archetype.components()) != Some(&archetype.id()) {
                return Err(format!("archetype {i} is indexed under another id"));
            }
            archetype.check_invariants(registry)?;
            self.edges[i].check_invariants(archetype, self, bundles)?;
        }
        Ok(())
    }

    /// The first component, in archetype then column order, of a row some
    /// entity holds, whose type cannot be cloned.
    pub(crate) fn first_not_cloneable(&self, registry: &Components) -> Option<ComponentId> {
        self.archetypes
            .iter()
            .filter(|archetype| !archetype.is_empty())
            .flat_map(|archetype| archetype.components.iter().copied())
            .find(|&id| !registry.info(id).is_cloneable())
    }

    /// A copy of every archetype, with the same ids and rows, every value
    /// cloned with its ticks; the graph's cached edges start empty.
    ///
    /// # Panics
    /// If a component of a row some entity holds is not cloneable (check
    /// [`Archetypes::first_not_cloneable`] first), or a clone panics.
    pub(crate) fn clone_all(&self, registry: &Components) -> Archetypes {
        let mut copy = Archetypes::new(registry);
        for archetype in &self.archetypes {
            let id = copy.get_or_create(archetype.components.clone(), registry);
            debug_assert_eq!(id, archetype.id);
            let target = &mut copy.archetypes[id.index()];
            if archetype.is_empty() {
                continue;
            }
            target.reserve(archetype.len());
            for (i, column) in archetype.columns.iter().enumerate() {
                let info = registry.info(archetype.components[i]);
                let Some(clone) = info.clone_fn() else { panic!("component `{}` is not cloneable", info.name()) };
                // SAFETY: both columns store `archetype.components[i]`'s
                // type (same signature, same registry), and `clone` is that
                // type's clone function.
                unsafe { target.columns[i].extend_cloned(column, clone) };
            }
            // Every column now holds one value per entity, in the same rows.
            target.entities.extend_from_slice(&archetype.entities);
        }
        copy
    }

    /// Makes these tables copies of `src`'s, in place: the same rows of
    /// the same entity indices, every value cloned with its ticks into the
    /// columns already here (`typed` gives a type's whole-column copy, see
    /// [`Column::clone_from_typed`]; other types go through their clone
    /// function). Tables only `src` has are created here; tables only this
    /// list has are emptied. Nothing is allocated when every table has room
    /// for `src`'s rows and every value's `clone_from` reuses its memory.
    ///
    /// Returns false, changing nothing, if the two lists disagree on the
    /// signature of some id: then only a new copy will do
    /// ([`Archetypes::clone_all`]). The cached edges stay: they lead to the
    /// same signatures in both.
    ///
    /// # Panics
    /// If a component of a row of `src` is not cloneable (check
    /// [`Archetypes::first_not_cloneable`] first) or a clone panics; the
    /// tables are then consistent each on its own, and the caller empties
    /// them.
    pub(crate) fn clone_from_same_layout(
        &mut self,
        src: &Archetypes,
        registry: &Components,
        pools: &mut Pools,
        typed: impl Fn(std::any::TypeId) -> Option<CloneColumnFn>,
        keep: &dyn Fn(ArchetypeId, ComponentId) -> bool,
    ) -> bool {
        let common = self.archetypes.len().min(src.archetypes.len());
        if (0..common).any(|i| self.archetypes[i].components != src.archetypes[i].components) {
            return false;
        }
        for archetype in &src.archetypes[common..] {
            let id = self.get_or_create(archetype.components.clone(), registry);
            debug_assert_eq!(id, archetype.id);
        }
        for (target, archetype) in self.archetypes.iter_mut().zip(&src.archetypes) {
            target.clone_rows_from(archetype, registry, &typed, keep);
        }
        for extra in &mut self.archetypes[src.archetypes.len()..] {
            if !extra.is_empty() {
                extra.clear(pools, registry);
            }
        }
        true
    }

    /// The archetype whose signature is `components` (sorted, no duplicates),
    /// created if it does not exist yet.
    pub(crate) fn get_or_create(&mut self, components: Box<[ComponentId]>, registry: &Components) -> ArchetypeId {
        if let Some(&id) = self.by_signature.get(&components) {
            return id;
        }
        let id = ArchetypeId(u32::try_from(self.archetypes.len()).expect("more than u32::MAX archetypes"));
        self.archetypes.push(Archetype::new(id, components.clone(), registry));
        self.edges.push(Edges::default());
        self.by_signature.insert(components, id);
        id
    }
}

impl std::ops::Index<ArchetypeId> for Archetypes {
    type Output = Archetype;

    #[inline]
    fn index(&self, id: ArchetypeId) -> &Archetype {
        self.get(id)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    use archetable_macros::Component;

    use crate::{Entity, World};

    #[derive(Component, Clone, Debug, PartialEq)]
    #[component(clone)]
    struct Byte(u8);
    #[derive(Component, Clone, Debug, PartialEq)]
    #[component(clone)]
    struct Wide(u64, u16);
    #[derive(Component, Debug, PartialEq)]
    #[component(track_changes)]
    struct Word(u32);
    #[derive(Component, Clone, Debug, PartialEq)]
    #[component(clone)]
    struct Marker;
    #[derive(Component)]
    struct Counted(#[allow(dead_code)] String, Arc<AtomicUsize>);
    impl Drop for Counted {
        fn drop(&mut self) {
            self.1.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn check(world: &World, entities: &[Entity]) {
        world.check_invariants().unwrap();
        for (i, &e) in entities.iter().enumerate() {
            assert_eq!(world.get::<Byte>(e), Some(&Byte(i as u8)));
            assert_eq!(world.get::<Wide>(e), Some(&Wide(i as u64 * 3, i as u16)));
            assert_eq!(world.get::<Word>(e), Some(&Word(i as u32 + 7)));
            assert_eq!(world.get::<Marker>(e), Some(&Marker));
        }
    }

    #[test]
    fn a_table_keeps_its_values_in_its_block_and_after_outgrowing_it() {
        let drops = Arc::new(AtomicUsize::new(0));
        let row = |i: usize| {
            (
                Byte(i as u8),
                Wide(i as u64 * 3, i as u16),
                Word(i as u32 + 7),
                Marker,
                Counted(i.to_string(), drops.clone()),
            )
        };
        let mut world = World::new();
        // One batch: the whole table in one block.
        let mut entities: Vec<Entity> = world.spawn_batch((0..1000).map(row)).collect();
        check(&world, &entities);
        // One more row: the table moves to a buffer per column.
        entities.push(world.spawn(row(1000)));
        check(&world, &entities);
        entities.extend(world.spawn_batch((1001..5000).map(row)).collect::<Vec<_>>());
        check(&world, &entities);
        // Moving rows out and back, and despawning, keep every value once.
        for &e in entities.iter().step_by(7) {
            world.remove::<Marker>(e).unwrap();
            world.insert(e, Marker).unwrap();
        }
        check(&world, &entities);
        for e in entities.drain(2500..) {
            world.despawn(e).unwrap();
        }
        assert_eq!(drops.load(Ordering::Relaxed), 2500);
        check(&world, &entities);
        drop(world);
        assert_eq!(drops.load(Ordering::Relaxed), 5000);
    }

    #[test]
    fn tables_of_one_row_and_of_markers_only_are_consistent() {
        let mut world = World::new();
        let a = world.spawn(Marker);
        let b = world.spawn((Byte(1), Marker));
        let c = world.spawn_batch([(Wide(1, 2),)]).next().unwrap();
        world.check_invariants().unwrap();
        for _ in 0..10 {
            world.spawn(Marker);
            world.spawn((Byte(2), Marker));
        }
        world.check_invariants().unwrap();
        assert_eq!(world.get::<Byte>(b), Some(&Byte(1)));
        assert_eq!(world.get::<Wide>(c), Some(&Wide(1, 2)));
        assert!(world.contains(a));
        // Cloned worlds get blocks of their own.
        let copy = world.try_clone().unwrap();
        copy.check_invariants().unwrap();
        assert_eq!(copy.get::<Byte>(b), Some(&Byte(1)));
    }
}
