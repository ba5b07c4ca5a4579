//! The type-erased column: a growable array of one component type's values,
//! known only by layout and drop function. One of the few modules with
//! `unsafe` code; everything above it works through the methods here.

use std::alloc::{self, Layout};
use std::any::{Any, TypeId};
use std::mem::MaybeUninit;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::ptr::NonNull;

use crate::component::change::{ComponentTicks, Tick, TickCell};
use crate::component::required::RequiredValue;
use crate::component::ComponentInfo;

/// A whole-column copy for one type, [`Column::clone_from_typed`] of it:
/// what [`World::register_clone_from`](crate::World::register_clone_from)
/// keeps per type.
pub(crate) type CloneColumnFn = fn(&mut Column, &Column);

/// A `Vec` of one component type, with the type erased.
///
/// Invariants:
/// - `data` points to `capacity * layout.size()` bytes aligned to
///   `layout.align()`, or is a dangling aligned pointer when that is zero
///   bytes (no capacity yet, or a zero-sized type, whose capacity is
///   `usize::MAX`). An owned column (`owned`) allocated them itself, with
///   exactly that layout; a table's column lives in its table's block (see
///   [`Archetype`](crate::storage::archetype::Archetype)), which the table grows
///   and frees: such a column never allocates, grows or frees;
/// - rows `0..len` hold initialized values of the type `type_id`; rows
///   `len..capacity` are uninitialized;
/// - the allocation only grows: removing values never frees memory, so a world
///   that despawns and respawns reuses it;
/// - if the type tracks changes, `ticks` holds the added and changed ticks
///   of every row (`ticks.len() == len`); otherwise it is empty and never
///   allocates.
pub(crate) struct Column {
    data: NonNull<u8>,
    len: usize,
    capacity: usize,
    layout: Layout,
    drop: Option<unsafe fn(*mut u8)>,
    type_id: TypeId,
    tracked: bool,
    /// Whether the column allocated `data` itself (pools), rather than
    /// living in a table's block.
    owned: bool,
    ticks: TickColumns,
    /// The change tick of the last write that may have changed a value of
    /// the column (see [`Column::written`]).
    written: std::sync::atomic::AtomicU32,
}

/// The added and changed ticks of a column's rows, as two arrays: a write
/// in a query loop stores one `u32` into a dense array.
#[derive(Default)]
struct TickColumns {
    added: Vec<TickCell>,
    changed: Vec<TickCell>,
}

impl TickColumns {
    #[inline]
    fn len(&self) -> usize {
        self.changed.len()
    }

    #[inline]
    fn push(&mut self, ticks: ComponentTicks) {
        self.added.push(TickCell::new(ticks.added));
        self.changed.push(TickCell::new(ticks.changed));
    }

    #[inline]
    fn swap_remove(&mut self, row: usize) -> ComponentTicks {
        let mut added = self.added.swap_remove(row);
        let mut changed = self.changed.swap_remove(row);
        ComponentTicks { added: *added.get_mut(), changed: *changed.get_mut() }
    }

    #[inline]
    fn get(&self, row: usize) -> Option<ComponentTicks> {
        // SAFETY: a shared borrow of the column; writers of a row's ticks
        // hold exclusive access to the row, which excludes this borrow.
        let read = |cell: &TickCell| unsafe { *cell.get() };
        Some(ComponentTicks { added: read(self.added.get(row)?), changed: read(self.changed.get(row)?) })
    }

    fn reserve(&mut self, additional: usize) {
        self.added.reserve(additional);
        self.changed.reserve(additional);
    }

    fn clear(&mut self) {
        self.added.clear();
        self.changed.clear();
    }

    fn allocated_bytes(&self) -> usize {
        (self.added.capacity() + self.changed.capacity()) * std::mem::size_of::<TickCell>()
    }
}

// SAFETY: a column owns values of one component type, and `Component`
// requires `Send + Sync`; the raw pointer is only an owning pointer.
unsafe impl Send for Column {}
// SAFETY: as above; shared access only hands out shared references or raw
// pointers whose use the query layer guards.
unsafe impl Sync for Column {}

impl Column {
    /// A column that allocates its own memory, growing by doubling.
    pub fn new(info: &ComponentInfo) -> Self {
        let layout = info.layout();
        Column {
            data: dangling(layout),
            len: 0,
            capacity: if layout.size() == 0 { usize::MAX } else { 0 },
            layout,
            drop: info.drop_fn(),
            type_id: info.type_id(),
            tracked: info.tracks_changes(),
            owned: true,
            ticks: TickColumns::default(),
            written: std::sync::atomic::AtomicU32::new(0),
        }
    }

    /// A column of a table, whose memory the table gives it with
    /// [`Column::set_storage`]; until then it has no room (except for a
    /// zero-sized type, which needs none).
    pub fn in_table(info: &ComponentInfo) -> Self {
        let mut column = Column::new(info);
        column.owned = false;
        column
    }

    /// The layout of one value.
    #[inline]
    pub fn item_layout(&self) -> Layout {
        self.layout
    }

    /// Gives a table column its room in the table's block: `capacity`
    /// values at `data`. Does nothing for a zero-sized type, which needs no
    /// memory.
    ///
    /// # Safety
    /// The column is a table's (`in_table`) and empty; `data` is aligned
    /// for the type, valid for `capacity` values, and stays valid until the
    /// column is dropped or detached.
    pub unsafe fn set_storage(&mut self, data: NonNull<u8>, capacity: usize) {
        debug_assert!(!self.owned && self.len == 0, "set_storage on a column that owns its memory or has values");
        if self.layout.size() != 0 {
            self.data = data;
            self.capacity = capacity;
        }
    }

    /// Whether the column allocated its memory itself.
    #[inline]
    pub fn owns_memory(&self) -> bool {
        self.owned
    }

    /// Moves a table column's values out of its table's block into a
    /// buffer of its own, with room for `capacity` values; from then on the
    /// column grows by itself.
    ///
    /// # Safety
    /// The column is a table's (`in_table`) and its values are in the
    /// block, which is still allocated; `capacity >= len`, and the caller
    /// frees the block after.
    pub unsafe fn detach(&mut self, capacity: usize) {
        debug_assert!(!self.owned && capacity >= self.len);
        if self.layout.size() != 0 {
            let layout = array_layout(self.layout, capacity);
            let data = if layout.size() == 0 {
                dangling(self.layout)
            } else {
                // SAFETY: `layout` has a non-zero size.
                let data = unsafe { alloc::alloc(layout) };
                NonNull::new(data).unwrap_or_else(|| alloc::handle_alloc_error(layout))
            };
            // SAFETY: the `len` values are valid in the block (caller), the
            // new buffer has room for them, and the two do not overlap.
            unsafe { std::ptr::copy_nonoverlapping(self.data.as_ptr(), data.as_ptr(), self.len * self.layout.size()) };
            self.data = data;
            self.capacity = capacity;
        }
        self.owned = true;
    }

    /// Makes room for `additional` more change ticks, for a tracked table
    /// column whose values the table has made room for.
    pub fn reserve_ticks(&mut self, additional: usize) {
        if self.tracked {
            self.ticks.reserve(additional);
        }
    }

    /// The type of the values the column stores.
    #[inline]
    pub fn type_id(&self) -> TypeId {
        self.type_id
    }

    /// A column that keeps no change ticks even if the type tracks changes:
    /// storage outside the tables (pools), which nothing queries.
    pub fn without_ticks(info: &ComponentInfo) -> Self {
        let mut column = Column::new(info);
        column.tracked = false;
        column
    }

    /// Whether the column keeps change ticks.
    #[inline]
    pub fn is_tracked(&self) -> bool {
        self.tracked
    }

    /// The added tick of every row; empty if the type does not track
    /// changes.
    #[inline]
    pub fn added_ticks(&self) -> &[TickCell] {
        &self.ticks.added
    }

    /// The changed tick of every row; empty if the type does not track
    /// changes.
    #[inline]
    pub fn changed_ticks(&self) -> &[TickCell] {
        &self.ticks.changed
    }

    /// Whether some row's changed tick is after `last_run` and not after
    /// `this_run` (see [`Tick::is_newer_than`]); `None` if the type does not
    /// track changes. A pass over the column's ticks, without its values.
    pub fn changed_since(&self, last_run: Tick, this_run: Tick) -> Option<bool> {
        if !self.tracked {
            return None;
        }
        let since_last_run = this_run.get().wrapping_sub(last_run.get());
        // The youngest change's age, taken branch-free so that the pass
        // runs in wide steps.
        let youngest = self.ticks.changed.iter().fold(u32::MAX, |youngest, cell| {
            // SAFETY: a shared borrow of the column; writers of a row's
            // ticks hold exclusive access to the row, which excludes this
            // borrow.
            let tick = unsafe { *cell.get() };
            youngest.min(this_run.get().wrapping_sub(tick.get()))
        });
        Some(youngest < since_last_run)
    }

    /// The ticks of `row`, if the type tracks changes and the row exists.
    #[inline]
    pub fn ticks_at(&self, row: usize) -> Option<ComponentTicks> {
        self.ticks.get(row)
    }

    /// The value of `row` as a `T`, mutably, with its added tick and its
    /// changed tick (mutable) if the type tracks changes.
    #[inline]
    #[allow(clippy::type_complexity)]
    /// Stamps the column as written at `now` ([`Column::written`]).
    pub fn get_with_ticks_mut<T: 'static>(
        &mut self,
        row: usize,
        now: Tick,
    ) -> Option<(&mut T, Option<(Tick, &mut Tick)>)> {
        if row >= self.len || self.type_id != TypeId::of::<T>() {
            return None;
        }
        *self.written.get_mut() = now.get();
        // SAFETY: row `row` holds an initialized `T` (checked above), and the
        // exclusive borrow of the column makes this the only reference.
        let value = unsafe { &mut *self.ptr_at(row).cast::<T>() };
        let ticks = match (self.ticks.added.get_mut(row), self.ticks.changed.get_mut(row)) {
            (Some(added), Some(changed)) => Some((*added.get_mut(), changed.get_mut())),
            _ => None,
        };
        Some((value, ticks))
    }

    /// The change tick of the last write that may have changed a value of
    /// the column in place: a query or a `get_mut` that handed out `&mut`
    /// to it, a value replaced. Tracked or not, one stamp per column.
    /// Rows added, removed or moved are not stamped (that would cost every
    /// spawn and move a store per value): they change the table's entity
    /// list or its removal count (`Archetype::removal_count`).
    #[inline]
    pub fn written(&self) -> Tick {
        Tick::new(self.written.load(std::sync::atomic::Ordering::Relaxed))
    }

    /// Records a possible write at `tick` (through a shared borrow: a
    /// query stamps the columns it may write as it starts on a table).
    #[inline]
    pub fn stamp(&self, tick: Tick) {
        self.written.store(tick.get(), std::sync::atomic::Ordering::Relaxed);
    }

    /// Records that the values are `src`'s, as written as of `src`'s stamp.
    #[inline]
    pub fn copy_stamp(&mut self, src: &Column) {
        *self.written.get_mut() = src.written().get();
    }

    /// Clamps every tick older than [`Tick::MAX_AGE`] relative to `now`.
    pub fn check_ticks(&mut self, now: Tick) {
        if self.tracked {
            *self.written.get_mut() = now.get();
        }
        for cell in self.ticks.added.iter_mut().chain(&mut self.ticks.changed) {
            cell.get_mut().clamp_age(now);
        }
    }

    #[inline]
    fn push_ticks(&mut self, tick: Tick) {
        if self.tracked {
            self.ticks.push(ComponentTicks::new(tick));
        }
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Bytes held by the allocation (zero for zero-sized types), ticks
    /// included.
    pub fn allocated_bytes(&self) -> usize {
        self.values_bytes() + self.ticks.allocated_bytes()
    }

    /// Bytes of room for values (zero for zero-sized types).
    pub fn values_bytes(&self) -> usize {
        if self.layout.size() == 0 {
            0
        } else {
            self.capacity * self.layout.size()
        }
    }

    /// The start of the values: row `r` is at `data + r * size`.
    #[inline]
    pub fn data(&self) -> NonNull<u8> {
        self.data
    }

    /// How many values fit without growing (`usize::MAX` for zero-sized
    /// types).
    #[inline]
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Makes room for `additional` more values.
    #[inline]
    pub fn reserve(&mut self, additional: usize) {
        if additional > self.capacity - self.len {
            self.grow(additional);
        }
        if self.tracked {
            self.ticks.reserve(additional);
        }
    }

    #[cold]
    #[inline(never)]
    fn grow(&mut self, additional: usize) {
        // Not an `assert!` on the caller's side: every table path reserves
        // the table's rows before it pushes, so this never fires; growing
        // one column alone would take it out of the table's block.
        assert!(self.owned, "a table column grows with its table: reserve the table's rows first");
        let needed = self.len.checked_add(additional).expect("column overflow");
        let new_capacity = needed.max(self.capacity.saturating_mul(2)).max(4);
        let new_layout = array_layout(self.layout, new_capacity);
        let new_data = if self.capacity == 0 {
            // SAFETY: `new_layout` has a non-zero size: the type is not
            // zero-sized (those have `usize::MAX` capacity) and
            // `new_capacity >= 4`.
            unsafe { alloc::alloc(new_layout) }
        } else {
            let old_layout = array_layout(self.layout, self.capacity);
            // SAFETY: `data` was allocated with `old_layout` (invariant) and the
            // new size is non-zero and fits `isize` (checked by `array_layout`).
            unsafe { alloc::realloc(self.data.as_ptr(), old_layout, new_layout.size()) }
        };
        self.data = NonNull::new(new_data).unwrap_or_else(|| alloc::handle_alloc_error(new_layout));
        self.capacity = new_capacity;
    }

    /// Appends a clone of every value of `src`, in order, with its ticks.
    /// A panicking clone leaves the values cloned so far in place.
    ///
    /// # Safety
    /// `src` stores this column's type, and `clone` clones that type (its
    /// [`ComponentInfo`]'s clone function).
    pub unsafe fn extend_cloned(&mut self, src: &Column, clone: unsafe fn(*const u8, *mut u8)) {
        debug_assert_eq!(self.type_id, src.type_id);
        self.reserve(src.len);
        let stamp =
            if self.len == 0 { src.written() } else { Tick::new(self.written().get().max(src.written().get())) };
        *self.written.get_mut() = stamp.get();
        for row in 0..src.len {
            // SAFETY: `row < src.len` is a valid value of the type; row
            // `self.len` is within the capacity reserved above, aligned and
            // empty; `src` is another column, so the two do not overlap.
            unsafe { clone(src.ptr_at(row), self.ptr_at(self.len)) };
            self.len += 1;
            if self.tracked {
                let ticks = src.ticks.get(row).unwrap_or(ComponentTicks::new(Tick::new(0)));
                self.ticks.push(ticks);
            }
        }
    }

    /// Makes this column's values clones of `src`'s, with their ticks,
    /// reusing what is here: the first rows are assigned with
    /// `Clone::clone_from` (a `String` keeps its buffer; a `Copy` type is
    /// copied in bulk), the rest cloned in or dropped, and the memory kept.
    /// A panicking clone leaves the values cloned so far in place (the
    /// ticks may then disagree with the values: clear the column).
    ///
    /// # Panics
    /// If either column does not store `T`, or if this column is a table's
    /// and has no room for `src`'s values (reserve the table's rows first).
    pub fn clone_from_typed<T: Clone + 'static>(&mut self, src: &Column) {
        let of_t = TypeId::of::<T>();
        assert!(self.type_id == of_t && src.type_id == of_t, "clone_from_typed with another type's columns");
        if src.len > self.capacity {
            self.reserve(src.len - self.len);
        }
        let common = self.len.min(src.len);
        // SAFETY: `src` stores `T` (checked above) and its rows `0..len`
        // are initialized values; its data is aligned for `T`.
        let from = unsafe { std::slice::from_raw_parts(src.data.as_ptr().cast::<T>(), src.len) };
        {
            // SAFETY: this column stores `T` too, rows `0..common` are
            // initialized, and the exclusive borrow of `self` (another
            // column than `src`) makes this the only reference to them.
            let into = unsafe { std::slice::from_raw_parts_mut(self.data.as_ptr().cast::<T>(), common) };
            into.clone_from_slice(&from[..common]);
        }
        if src.len < self.len {
            let old = std::mem::replace(&mut self.len, src.len);
            // SAFETY: rows `src.len..old` held initialized `T`s and are past
            // the length now, so each is dropped once, here.
            unsafe {
                std::ptr::drop_in_place(std::ptr::slice_from_raw_parts_mut(
                    self.ptr_at(src.len).cast::<T>(),
                    old - src.len,
                ))
            };
        } else {
            for value in &from[common..] {
                let clone = value.clone();
                // SAFETY: row `len` is below `src.len <= capacity` (reserved
                // above), aligned for `T`, and holds no value.
                unsafe { self.ptr_at(self.len).cast::<T>().write(clone) };
                self.len += 1;
            }
        }
        self.clone_ticks_from(src);
    }

    /// [`Column::clone_from_typed`] for a type known only by its clone
    /// function: drops every value, then clones `src`'s in, with their
    /// ticks (each value is allocated anew if it owns memory).
    ///
    /// # Safety
    /// `src` stores this column's type, and `clone` clones that type (its
    /// [`ComponentInfo`]'s clone function).
    pub unsafe fn clone_from_erased(&mut self, src: &Column, clone: unsafe fn(*const u8, *mut u8)) {
        self.clear();
        // SAFETY: forwarded contract.
        unsafe { self.extend_cloned(src, clone) };
    }

    /// Makes this column's ticks copies of `src`'s, keeping the memory.
    fn clone_ticks_from(&mut self, src: &Column) {
        self.copy_stamp(src);
        if !self.tracked {
            return;
        }
        self.ticks.clear();
        if src.tracked {
            // SAFETY: a shared borrow of `src`; writers of a row's ticks hold
            // exclusive access to the row, which excludes this borrow.
            let read = |cell: &TickCell| TickCell::new(unsafe { *cell.get() });
            self.ticks.added.extend(src.ticks.added.iter().map(read));
            self.ticks.changed.extend(src.ticks.changed.iter().map(read));
        } else {
            self.ticks.added.resize_with(src.len, || TickCell::new(Tick::new(0)));
            self.ticks.changed.resize_with(src.len, || TickCell::new(Tick::new(0)));
        }
    }

    /// The address of row `row`.
    ///
    /// # Safety
    /// `row <= capacity` (one past the end is allowed for writing).
    #[inline]
    pub unsafe fn ptr_at(&self, row: usize) -> *mut u8 {
        // SAFETY: within the allocation (or zero bytes from a dangling pointer
        // for zero-sized types), by the caller's bound.
        unsafe { self.data.as_ptr().add(row * self.layout.size()) }
    }

    /// Appends the value at `src`, moving it in (the caller must not use or
    /// drop it afterwards), added and changed at `tick`.
    ///
    /// # Safety
    /// - `src` points to a valid value of this column's type;
    /// - `src` does not point into this column.
    #[inline]
    pub unsafe fn push(&mut self, src: *const u8, tick: Tick) {
        self.push_ticks(tick);
        // SAFETY: forwarded contract.
        unsafe { self.push_value(src) }
    }

    /// Appends the value at `src` without touching the ticks.
    ///
    /// # Safety
    /// As for [`Column::push`].
    #[inline]
    unsafe fn push_value(&mut self, src: *const u8) {
        if self.len == self.capacity {
            self.grow(1);
        }
        // SAFETY: the growth check made row `len` part of the allocation, and
        // the caller guarantees `src` is a distinct valid value of the same layout.
        unsafe { copy_value(src, self.ptr_at(self.len), self.layout.size()) };
        self.len += 1;
    }

    /// Appends the `count` values that lie back to back from `src`, moving
    /// them in with one copy (the caller must not use or drop them
    /// afterwards), each added and changed at `tick`. Grows first, so a
    /// failed allocation moves nothing.
    ///
    /// # Safety
    /// - `src` points to `count` valid, initialized values of this column's
    ///   type, aligned and contiguous (a slice of them);
    /// - they do not lie in this column.
    pub unsafe fn append_raw(&mut self, src: *const u8, count: usize, tick: Tick) {
        self.reserve(count);
        if self.tracked {
            self.ticks.added.extend((0..count).map(|_| TickCell::new(tick)));
            self.ticks.changed.extend((0..count).map(|_| TickCell::new(tick)));
        }
        // SAFETY: `reserve` made rows `len .. len + count` part of the
        // allocation (or the type is zero-sized and nothing is copied);
        // `src` holds `count` values of the same layout outside the column
        // (caller), so the two ranges do not overlap.
        unsafe { std::ptr::copy_nonoverlapping(src, self.ptr_at(self.len), count * self.layout.size()) };
        self.len += count;
    }

    /// Whether the column may take over a buffer ([`Column::adopt`]): it
    /// owns its memory (not a table column in its table's block), is
    /// empty without an allocation, and its type is not zero-sized.
    #[inline]
    pub fn can_adopt(&self) -> bool {
        // A table's column lives in its table's block (or, once the table
        // split it, grows with the table): only a column that owns its
        // memory and has none yet may take a buffer over.
        self.owned && self.len == 0 && self.capacity == 0 && self.layout.size() != 0
    }

    /// Takes over a buffer of `capacity` values of this column's type whose
    /// first `count` are initialized (a `Vec`'s), as its own allocation,
    /// instead of copying the values: each is added and changed at `tick`.
    /// Room for the ticks was made with [`Column::reserve_ticks`], so
    /// nothing allocates.
    ///
    /// # Safety
    /// - [`Column::can_adopt`] holds;
    /// - `data` was allocated by the global allocator for `capacity` values
    ///   of the column's type, as `Vec` allocates (`Layout::array`), and the
    ///   caller hands it over: it never uses or frees it again;
    /// - `count <= capacity`, and the first `count` values are initialized
    ///   values of the column's type.
    pub unsafe fn adopt(&mut self, data: NonNull<u8>, count: usize, capacity: usize, tick: Tick) {
        debug_assert!(self.can_adopt() && count <= capacity);
        if self.tracked {
            self.ticks.added.extend((0..count).map(|_| TickCell::new(tick)));
            self.ticks.changed.extend((0..count).map(|_| TickCell::new(tick)));
        }
        // The invariants hold: `data` is an allocation of `capacity *
        // size` bytes aligned for the type (the layout `Vec` uses is the
        // column's `array_layout`), rows below `count` are initialized,
        // and the column had no allocation to free.
        self.data = data;
        self.capacity = capacity;
        self.len = count;
    }

    /// Appends a required component's value, built by its constructor
    /// before the table write started (`component/required.rs`), added and
    /// changed at `tick`.
    ///
    /// # Panics
    /// If this column does not store the value's type (a bug in the
    /// caller); before anything is written.
    pub(crate) fn push_required(&mut self, value: Box<dyn RequiredValue>, tick: Tick) {
        assert_eq!(self.type_id, value.value_type(), "a required value pushed into a column of another type");
        // SAFETY: the value is of this column's type (checked above), lives
        // outside the column, and `hand_over` forgets it once `push` has
        // moved it in.
        value.hand_over(&mut |src| unsafe { self.push(src, tick) });
    }

    /// Appends `value`, added and changed at `tick`.
    ///
    /// # Safety
    /// `C` is this column's type.
    #[inline]
    pub unsafe fn push_typed<C: 'static>(&mut self, value: C, tick: Tick) {
        debug_assert_eq!(self.type_id, TypeId::of::<C>());
        self.push_ticks(tick);
        if self.len == self.capacity {
            self.grow(1);
        }
        // SAFETY: the growth check made row `len` part of the allocation,
        // which is aligned for `C` (the caller's type promise).
        unsafe { self.ptr_at(self.len).cast::<C>().write(value) };
        self.len += 1;
    }

    /// Moves the value at `row` out as a `C`, leaving the row uninitialized:
    /// the caller must then remove the row with [`Column::swap_remove_forget`].
    ///
    /// # Safety
    /// - `C` is this column's type;
    /// - `row < len`, and the value is read out only once.
    #[inline]
    pub unsafe fn read_typed<C: 'static>(&self, row: usize) -> C {
        debug_assert_eq!(self.type_id, TypeId::of::<C>());
        debug_assert!(row < self.len);
        // SAFETY: a valid `C` at an in-bounds row (caller).
        unsafe { self.ptr_at(row).cast::<C>().read() }
    }

    /// Moves the value at `row` out as a `C` and fills the hole with the
    /// last value (and its ticks): [`Column::read_typed`] and
    /// [`Column::swap_remove_forget`] with the copy typed.
    ///
    /// # Safety
    /// `C` is this column's type and `row < len`.
    #[inline]
    pub unsafe fn swap_remove_typed<C: 'static>(&mut self, row: usize) -> C {
        debug_assert_eq!(self.type_id, TypeId::of::<C>());
        debug_assert!(row < self.len);
        if self.tracked {
            self.ticks.swap_remove(row);
        }
        let base = self.data.as_ptr().cast::<C>();
        let last = self.len - 1;
        self.len = last;
        // SAFETY: rows `row` and `last` hold valid `C`s (caller); the value
        // at `row` is moved out, and the last one moved into its place
        // (row `last` is past the new end).
        unsafe {
            let value = base.add(row).read();
            if row != last {
                std::ptr::copy_nonoverlapping(base.add(last), base.add(row), 1);
            }
            value
        }
    }

    /// Exchanges the value at `row` with the one at `other`: the column takes
    /// the value from `other`, and `other` receives the old one, which the
    /// caller now owns. The row counts as changed at `tick`.
    ///
    /// # Safety
    /// - `row < len`;
    /// - `other` points to a valid value of this column's type, outside it.
    #[inline]
    pub unsafe fn swap_value(&mut self, row: usize, other: *mut u8, tick: Tick) {
        debug_assert!(row < self.len);
        *self.written.get_mut() = tick.get();
        if let Some(cell) = self.ticks.changed.get_mut(row) {
            *cell.get_mut() = tick;
        }
        // SAFETY: both are valid, distinct values of the same layout.
        unsafe { std::ptr::swap_nonoverlapping(self.ptr_at(row), other, self.layout.size()) }
    }

    /// Removes the value at `row` without dropping it, moving the last value
    /// into its place. The caller must already have moved the value out.
    ///
    /// # Safety
    /// `row < len`, and the value at `row` has been moved out (it is treated
    /// as uninitialized).
    #[inline]
    pub unsafe fn swap_remove_forget(&mut self, row: usize) {
        debug_assert!(row < self.len);
        if self.tracked {
            self.ticks.swap_remove(row);
        }
        // SAFETY: forwarded contract.
        unsafe { self.forget_value(row) }
    }

    /// [`Column::swap_remove_forget`] for the values only, ticks untouched.
    ///
    /// # Safety
    /// As for [`Column::swap_remove_forget`].
    #[inline]
    unsafe fn forget_value(&mut self, row: usize) {
        debug_assert!(row < self.len);
        let last = self.len - 1;
        if row != last {
            // SAFETY: both rows are in bounds and distinct.
            unsafe {
                copy_value(self.ptr_at(last), self.ptr_at(row), self.layout.size());
            }
        }
        self.len = last;
    }

    /// Removes the value at `row` by exchanging it with the last value and
    /// shortening the column, leaving the removed value just past the end,
    /// where [`Column::drop_past_end`] drops it.
    ///
    /// Splitting removal from dropping lets a caller bring every column and
    /// the entity table into a consistent state before any user `Drop` code
    /// runs, so a panicking destructor cannot leave them half-updated.
    ///
    /// # Safety
    /// `row < len`.
    #[inline]
    pub unsafe fn swap_remove_to_end(&mut self, row: usize) {
        debug_assert!(row < self.len);
        if self.tracked {
            self.ticks.swap_remove(row);
        }
        let last = self.len - 1;
        if row != last {
            // SAFETY: both rows are in bounds and distinct.
            unsafe { std::ptr::swap_nonoverlapping(self.ptr_at(last), self.ptr_at(row), self.layout.size()) };
        }
        self.len = last;
    }

    /// Drops the value just past the end, left there by
    /// [`Column::swap_remove_to_end`].
    ///
    /// # Safety
    /// Called once after each `swap_remove_to_end`, before any push.
    #[inline]
    pub unsafe fn drop_past_end(&mut self) {
        if let Some(drop) = self.drop {
            // SAFETY: the row past the end holds the initialized value that
            // `swap_remove_to_end` moved there; it is dropped once.
            unsafe { drop(self.ptr_at(self.len)) }
        }
    }

    /// Moves the value at `row`, with its ticks, to the end of `dst` and
    /// fills the hole with this column's last value.
    ///
    /// # Safety
    /// - `row < len`;
    /// - `dst` stores the same component type.
    #[inline]
    pub unsafe fn move_to(&mut self, row: usize, dst: &mut Column) {
        debug_assert_eq!(self.type_id, dst.type_id, "moving a value between columns of different types");
        if self.tracked {
            // Same type, so `dst` keeps ticks too.
            let ticks = self.ticks.swap_remove(row);
            dst.ticks.push(ticks);
        }
        debug_assert!(row < self.len);
        if dst.len == dst.capacity {
            dst.grow(1);
        }
        let last = self.len - 1;
        let size = self.layout.size();
        // SAFETY: `row` and `last` are in bounds here and row `dst.len` is
        // part of `dst`'s allocation (the growth check); the two columns are
        // distinct allocations. The value at `row` is valid and of `dst`'s
        // type; after the copy it is treated as moved out and the hole is
        // filled with the last value, whose old place is then past the end.
        unsafe {
            let (at, end) = (self.ptr_at(row), dst.ptr_at(dst.len));
            if row == last {
                copy_value(at, end, size);
            } else {
                move_and_fill(at, end, self.ptr_at(last), size);
            }
        }
        dst.len += 1;
        self.len = last;
    }

    /// The value at `row` as a `T`, if `row` is in bounds and `T` is the
    /// column's type.
    #[inline]
    pub fn get<T: 'static>(&self, row: usize) -> Option<&T> {
        if row >= self.len || self.type_id != TypeId::of::<T>() {
            return None;
        }
        // SAFETY: row `row` holds an initialized `T` (checked above), and the
        // shared borrow of the column keeps it from being mutated.
        Some(unsafe { &*self.ptr_at(row).cast::<T>() })
    }

    /// Checks that the column stores the component described by `info` and
    /// that its length, capacity and pointer agree; for the world's
    /// consistency check.
    pub fn check_invariants(&self, info: &ComponentInfo) -> Result<(), String> {
        if self.type_id != info.type_id() || self.layout != info.layout() {
            return Err(format!("column does not store `{}`", info.name()));
        }
        if self.len > self.capacity {
            return Err(format!("column of `{}`: length {} over capacity {}", info.name(), self.len, self.capacity));
        }
        if !self.data.as_ptr().addr().is_multiple_of(self.layout.align()) {
            return Err(format!("column of `{}`: data misaligned", info.name()));
        }
        let expected_ticks = if self.tracked { self.len } else { 0 };
        if (self.tracked && !info.tracks_changes()) || self.ticks.len() != expected_ticks {
            return Err(format!(
                "column of `{}`: {} ticks for {} rows (tracked: {})",
                info.name(),
                self.ticks.len(),
                self.len,
                self.tracked
            ));
        }
        Ok(())
    }

    /// Drops every value and keeps the memory.
    pub fn clear(&mut self) {
        self.ticks.clear();
        let len = std::mem::replace(&mut self.len, 0);
        let Some(drop_fn) = self.drop else { return };
        // The length is zero before any destructor runs, so a panicking one
        // cannot lead to a double drop, and the others still run.
        let column = &*self;
        for_each_unwinding(0..len, |row| {
            // SAFETY: rows below the old length held initialized values, each
            // visited once.
            unsafe { drop_fn(column.ptr_at(row)) }
        });
    }
}

impl Drop for Column {
    fn drop(&mut self) {
        // Frees the memory even if a value's destructor panics.
        struct Free<'a>(&'a mut Column);
        impl Drop for Free<'_> {
            fn drop(&mut self) {
                let column = &mut *self.0;
                if column.owned && column.layout.size() != 0 && column.capacity != 0 {
                    // SAFETY: allocated with exactly this layout (invariant).
                    unsafe { alloc::dealloc(column.data.as_ptr(), array_layout(column.layout, column.capacity)) }
                }
            }
        }
        Free(self).0.clear();
    }
}

/// Calls `f` on every item; if calls panic, the remaining items are still
/// visited, and the first panic goes on once all are (see [`Panics`]). Used
/// to run component destructors and resets, so that panicking ones neither
/// leak the values after them nor abort the process.
pub(crate) fn for_each_unwinding<I: Iterator>(items: I, mut f: impl FnMut(I::Item)) {
    let mut panics = Panics::default();
    for item in items {
        panics.run(|| f(item));
    }
    panics.finish();
}

/// Collects the panics of user code (destructors, resets) that the engine
/// runs one after another: each is caught, so a second one never starts
/// while the first unwinds (which would abort), and the first is resumed
/// once the work is done.
#[derive(Default)]
pub(crate) struct Panics(Option<Box<dyn Any + Send>>);

impl Panics {
    /// Runs `f`, keeping its panic if it is the first.
    #[inline]
    pub fn run(&mut self, f: impl FnOnce()) {
        if let Err(payload) = catch_unwind(AssertUnwindSafe(f)) {
            self.keep(payload);
        }
    }

    /// Keeps `payload` if no panic is kept yet (a later one is dropped).
    pub fn keep(&mut self, payload: Box<dyn Any + Send>) {
        if self.0.is_none() {
            self.0 = Some(payload);
        }
    }

    /// Resumes the first panic, if any. While the thread already unwinds
    /// from another panic (this runs in a drop guard), the kept one is
    /// dropped instead: a second unwinding would abort.
    pub fn finish(self) {
        if let Some(payload) = self.0
            && !std::thread::panicking()
        {
            resume_unwind(payload);
        }
    }
}

/// Copies one value of `size` bytes. Component values are mostly small:
/// sizes up to 32 bytes are copied with two possibly overlapping loads and
/// stores of a fixed width, instead of a `memcpy` call.
///
/// # Safety
/// `src` and `dst` are valid for `size` bytes and do not overlap.
#[inline(always)]
unsafe fn copy_value(src: *const u8, dst: *mut u8, size: usize) {
    /// Copies `[0, W)` and `[size - W, size)`: all of `size` when
    /// `W <= size <= 2 * W`.
    ///
    /// # Safety
    /// As for `copy_value`, with `W <= size`.
    #[inline(always)]
    unsafe fn two<W: Copy>(src: *const u8, dst: *mut u8, size: usize) {
        let w = std::mem::size_of::<W>();
        // SAFETY: both windows lie within the `size` valid bytes. The bytes
        // travel as `MaybeUninit<W>`, which may hold padding, niches and
        // pointers with their provenance, like the value's own bytes; reads
        // and writes are unaligned.
        unsafe {
            let head = src.cast::<MaybeUninit<W>>().read_unaligned();
            let tail = src.add(size - w).cast::<MaybeUninit<W>>().read_unaligned();
            dst.cast::<MaybeUninit<W>>().write_unaligned(head);
            dst.add(size - w).cast::<MaybeUninit<W>>().write_unaligned(tail);
        }
    }
    // SAFETY: each arm stays within `size` bytes (caller's bounds).
    unsafe {
        match size {
            0 => {}
            4..=7 => two::<u32>(src, dst, size),
            8..=15 => two::<u64>(src, dst, size),
            16..=32 => two::<u128>(src, dst, size),
            _ => std::ptr::copy_nonoverlapping(src, dst, size),
        }
    }
}

/// Copies the `size` bytes at `at` to `end`, then the `size` bytes at
/// `last` to `at`: a row moved out of a column and its hole filled with
/// the last row, with one dispatch on the size for both copies.
///
/// # Safety
/// Each pointer is valid for `size` bytes; `end` overlaps neither `at`
/// nor `last`, and `at` and `last` do not overlap.
#[inline(always)]
unsafe fn move_and_fill(at: *mut u8, end: *mut u8, last: *const u8, size: usize) {
    /// Both copies through `[0, W)` and `[size - W, size)` windows: all of
    /// `size` when `W <= size <= 2 * W`.
    ///
    /// # Safety
    /// As for `move_and_fill`, with `W <= size`.
    #[inline(always)]
    unsafe fn two<W: Copy>(at: *mut u8, end: *mut u8, last: *const u8, size: usize) {
        let w = std::mem::size_of::<W>();
        // SAFETY: every window lies within the `size` valid bytes of its
        // value; both windows of a value are read before either is written.
        // The bytes travel as `MaybeUninit<W>`, unaligned, as in
        // `copy_value`.
        unsafe {
            let head = at.cast::<MaybeUninit<W>>().read_unaligned();
            let tail = at.add(size - w).cast::<MaybeUninit<W>>().read_unaligned();
            end.cast::<MaybeUninit<W>>().write_unaligned(head);
            end.add(size - w).cast::<MaybeUninit<W>>().write_unaligned(tail);
            let head = last.cast::<MaybeUninit<W>>().read_unaligned();
            let tail = last.add(size - w).cast::<MaybeUninit<W>>().read_unaligned();
            at.cast::<MaybeUninit<W>>().write_unaligned(head);
            at.add(size - w).cast::<MaybeUninit<W>>().write_unaligned(tail);
        }
    }
    // SAFETY: each arm stays within `size` bytes of each value (caller's
    // bounds), and copies `at` out before overwriting it.
    unsafe {
        match size {
            0 => {}
            4..=7 => two::<u32>(at, end, last, size),
            8..=15 => two::<u64>(at, end, last, size),
            16..=32 => two::<u128>(at, end, last, size),
            _ => {
                std::ptr::copy_nonoverlapping(at, end, size);
                std::ptr::copy_nonoverlapping(last, at, size);
            }
        }
    }
}

fn dangling(layout: Layout) -> NonNull<u8> {
    // An address equal to the alignment is non-null and aligned; it is never
    // dereferenced for more than zero bytes.
    NonNull::new(std::ptr::without_provenance_mut(layout.align())).expect("alignment is non-zero")
}

pub(crate) fn array_layout(item: Layout, n: usize) -> Layout {
    item.size()
        .checked_mul(n)
        .and_then(|size| Layout::from_size_align(size, item.align()).ok())
        .expect("column capacity overflow")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::component::Components;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    struct Counted(#[allow(dead_code)] String, Arc<AtomicUsize>);
    impl Drop for Counted {
        fn drop(&mut self) {
            self.1.fetch_add(1, Ordering::Relaxed);
        }
    }
    impl crate::Component for Counted {}

    #[test]
    fn push_remove_and_drop_each_value_once() {
        let mut components = Components::default();
        let id = components.register::<Counted>();
        let mut column = Column::new(components.info(id));
        let drops = Arc::new(AtomicUsize::new(0));
        for i in 0..10 {
            let value = std::mem::ManuallyDrop::new(Counted(i.to_string(), drops.clone()));
            // SAFETY: a valid `Counted` outside the column, never used again.
            unsafe { column.push((&*value as *const Counted).cast(), Tick::default()) };
        }
        // SAFETY: row 3 is in bounds; the removed value is dropped right after.
        unsafe {
            column.swap_remove_to_end(3);
            column.drop_past_end();
        }
        assert_eq!(drops.load(Ordering::Relaxed), 1);
        assert_eq!(column.len(), 9);
        assert_eq!(column.get::<Counted>(3).map(|c| c.0.as_str()), Some("9"));
        assert!(column.get::<u32>(3).is_none(), "wrong type is refused");
        assert!(column.get::<Counted>(9).is_none(), "out of bounds is refused");
        let bytes = column.allocated_bytes();
        column.clear();
        assert_eq!(drops.load(Ordering::Relaxed), 10);
        assert_eq!(column.allocated_bytes(), bytes, "clear keeps the memory");
    }
}
