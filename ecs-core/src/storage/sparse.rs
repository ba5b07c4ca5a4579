//! Sparse storage: the components declared `#[component(storage = "sparse")]`
//! live here, one set per type beside the archetype tables, instead of in
//! table columns. Such a component is not part of any archetype's
//! signature, so adding or removing it moves no table row and splits no
//! archetype; the price is a lookup per entity when a query reads it.
//!
//! ```text
//!   index:     [ 0, 2, 0, 0, 1 ]      by entity index: dense position + 1
//!   entities:  [ e4, e1 ]             by dense position
//!   values:    [ v4, v1 ]             a type-erased column (with ticks)
//! ```
//!
//! Invariants of a set:
//! - `entities` and `values` have the same length, and
//!   `index[entities[d].index()] == d + 1` for every dense position `d`;
//! - every other entry of `index` is zero;
//! - every entity in `entities` is alive in the set's world.

use std::fmt;

use crate::component::change::{ComponentTicks, Tick};
use crate::component::{ComponentId, ComponentInfo, Components};
use crate::entity::Entity;
use crate::storage::column::{CloneColumnFn, Column, Panics};
use crate::storage::pool::Pools;

/// The values of one sparse component type, by entity.
pub struct SparseSet {
    id: ComponentId,
    /// By entity index: the value's dense position plus one, or zero.
    index: Vec<u32>,
    entities: Vec<Entity>,
    values: Column,
}

impl SparseSet {
    fn new(info: &ComponentInfo) -> Self {
        SparseSet { id: info.id(), index: Vec::new(), entities: Vec::new(), values: Column::new(info) }
    }

    /// The component this set stores.
    #[inline]
    pub fn id(&self) -> ComponentId {
        self.id
    }

    /// Number of entities that have the component.
    #[inline]
    pub fn len(&self) -> usize {
        self.entities.len()
    }

    /// Whether no entity has the component.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.entities.is_empty()
    }

    /// The entities that have the component, in storage order.
    #[inline]
    pub fn entities(&self) -> &[Entity] {
        &self.entities
    }

    /// The dense position of the value of the entity at `index`, if it has
    /// one.
    #[inline]
    pub(crate) fn dense(&self, index: u32) -> Option<usize> {
        match self.index.get(index as usize) {
            Some(&slot) if slot != 0 => Some(slot as usize - 1),
            _ => None,
        }
    }

    /// Whether the live `entity` has the component.
    #[inline]
    pub fn contains(&self, entity: Entity) -> bool {
        self.dense(entity.index()).is_some()
    }

    /// The value of `entity`, if it has one and `T` is the set's type.
    #[inline]
    pub(crate) fn get<T: 'static>(&self, entity: Entity) -> Option<&T> {
        self.values.get(self.dense(entity.index())?)
    }

    /// The value of `entity` and, for a tracked type, its ticks.
    #[inline]
    pub(crate) fn get_with_ticks_mut<T: 'static>(
        &mut self,
        entity: Entity,
        now: Tick,
    ) -> Option<(&mut T, Option<(Tick, &mut Tick)>)> {
        let dense = self.dense(entity.index())?;
        self.values.get_with_ticks_mut(dense, now)
    }

    /// The added and changed ticks of `entity`'s value, for a tracked type.
    #[inline]
    pub(crate) fn ticks(&self, entity: Entity) -> Option<ComponentTicks> {
        self.values.ticks_at(self.dense(entity.index())?)
    }

    /// The column of values, by dense position.
    #[inline]
    pub(crate) fn values(&self) -> &Column {
        &self.values
    }

    /// Makes room for one more value, for the entity at `index`: after
    /// this, an insert for it does not allocate.
    #[inline]
    pub(crate) fn reserve_for(&mut self, index: u32) {
        let needed = index as usize + 1;
        if self.index.len() < needed {
            self.index.resize(needed, 0);
        }
        self.entities.reserve(1);
        self.values.reserve(1);
    }

    /// Stores the value at `src` for `entity`, moving it in. If the entity
    /// already had a value, the two are exchanged: `src` then holds the old
    /// value, which the caller owns, and this returns `true`. The value
    /// counts as changed at `tick` (and added, if new).
    ///
    /// # Safety
    /// - `src` points to a valid value of the set's type, outside the set;
    /// - `entity` is alive.
    pub(crate) unsafe fn insert(&mut self, entity: Entity, src: *mut u8, tick: Tick) -> bool {
        if let Some(dense) = self.dense(entity.index()) {
            // SAFETY: `dense` is in bounds (invariant); `src` is a valid value
            // of the column's type outside it (caller).
            unsafe { self.values.swap_value(dense, src, tick) };
            return true;
        }
        self.reserve_for(entity.index());
        // SAFETY: as above; the value is moved in and the caller forgets it.
        unsafe { self.values.push(src, tick) };
        self.entities.push(entity);
        self.index[entity.index() as usize] = self.entities.len() as u32;
        false
    }

    /// [`SparseSet::insert`] of a typed value; returns the old value.
    ///
    /// # Safety
    /// `C` is the set's type and `entity` is alive.
    #[inline]
    pub(crate) unsafe fn insert_typed<C: 'static>(&mut self, entity: Entity, value: C, tick: Tick) -> Option<C> {
        let at = entity.index() as usize;
        if at >= self.index.len() {
            self.grow_index(at);
        }
        // SAFETY: `at` is below the index's length (just made so).
        let slot = unsafe { *self.index.get_unchecked(at) };
        if slot != 0 {
            let mut value = std::mem::ManuallyDrop::new(value);
            // SAFETY: `slot - 1` is in bounds (invariant); `value` is a valid
            // `C`, the set's type (caller), outside the set; after the swap
            // it holds the old value, which is returned.
            unsafe { self.values.swap_value(slot as usize - 1, (&raw mut *value).cast(), tick) };
            return Some(std::mem::ManuallyDrop::into_inner(value));
        }
        // Room first: once the value is in, nothing may panic.
        self.entities.reserve(1);
        self.values.reserve(1);
        // SAFETY: `C` is the column's type (caller).
        unsafe { self.values.push_typed(value, tick) };
        self.entities.push(entity);
        // SAFETY: `at` is below the index's length (above).
        unsafe { *self.index.get_unchecked_mut(at) = self.entities.len() as u32 };
        None
    }

    /// Lengthens the index to cover entity index `at`.
    #[cold]
    #[inline(never)]
    fn grow_index(&mut self, at: usize) {
        self.index.resize(at + 1, 0);
    }

    /// Removes `entity`'s value without dropping it: `out` receives its
    /// address first, to move it out. Returns whether the entity had one.
    ///
    /// # Safety
    /// `out` moves the value out (or leaves it to leak), never drops it in
    /// place, and does not panic.
    #[inline]
    pub(crate) unsafe fn take(&mut self, entity: Entity, out: impl FnOnce(*const u8)) -> bool {
        let Some(dense) = self.dense(entity.index()) else { return false };
        // SAFETY: `dense` is in bounds (invariant).
        out(unsafe { self.values.ptr_at(dense) });
        // SAFETY: in bounds, and `out` moved the value out.
        unsafe { self.values.swap_remove_forget(dense) };
        // SAFETY: `entity`'s value was at `dense`.
        unsafe { self.unlink(entity, dense) };
        true
    }

    /// Moves `entity`'s value out as a `C`.
    ///
    /// # Safety
    /// `C` is the set's type.
    #[inline]
    pub(crate) unsafe fn take_typed<C: 'static>(&mut self, entity: Entity) -> Option<C> {
        let dense = self.dense(entity.index())?;
        // SAFETY: `C` is the set's type (caller) and `dense` is the
        // entity's place.
        Some(unsafe { self.take_at(entity, dense) })
    }

    /// Moves `entity`'s value, at `dense`, out as a `C`.
    ///
    /// # Safety
    /// `C` is the set's type, and `dense` is `entity`'s place
    /// (`self.dense(entity.index())`).
    #[inline]
    pub(crate) unsafe fn take_at<C: 'static>(&mut self, entity: Entity, dense: usize) -> C {
        debug_assert_eq!(self.dense(entity.index()), Some(dense));
        // SAFETY: `C` is the set's type (caller) and `dense` is in bounds.
        let value = unsafe { self.values.swap_remove_typed::<C>(dense) };
        // SAFETY: `entity`'s value was at `dense` (caller).
        unsafe { self.unlink(entity, dense) };
        value
    }

    /// Removes `entity`'s value from the set and releases it (drops it, or
    /// resets and pools it for a pooled type), once the set is consistent.
    /// Returns whether the entity had one.
    pub(crate) fn remove(&mut self, entity: Entity, info: &ComponentInfo, pools: &mut Pools) -> bool {
        let Some(dense) = self.dense(entity.index()) else { return false };
        // SAFETY: `dense` is in bounds (invariant).
        unsafe { self.values.swap_remove_to_end(dense) };
        // SAFETY: `entity`'s value was at `dense`.
        unsafe { self.unlink(entity, dense) };
        // SAFETY: the value just past the end is the removed one, valid and
        // of the set's type; `release` takes it over, and the column never
        // touches it again (the next push overwrites it).
        unsafe { pools.release(info, self.values.ptr_at(self.values.len())) };
        true
    }

    /// Drops the bookkeeping of `entity`, whose value at `dense` was just
    /// swap-removed from `values`: the last value took its place.
    ///
    /// # Safety
    /// `entity` is in the set, at `dense`.
    #[inline]
    unsafe fn unlink(&mut self, entity: Entity, dense: usize) {
        self.entities.swap_remove(dense);
        // SAFETY: every entity in the set has its index below the index's
        // length (invariant), `entity` (caller) and the one moved alike.
        unsafe {
            *self.index.get_unchecked_mut(entity.index() as usize) = 0;
            if let Some(moved) = self.entities.get(dense) {
                *self.index.get_unchecked_mut(moved.index() as usize) = dense as u32 + 1;
            }
        }
    }

    /// Removes every value, dropping them (or resetting and pooling those
    /// of a pooled type), keeping the memory.
    pub(crate) fn clear(&mut self, info: &ComponentInfo, pools: &mut Pools) {
        for entity in self.entities.drain(..) {
            self.index[entity.index() as usize] = 0;
        }
        if info.is_pooled() {
            pools.absorb(info, &mut self.values);
        } else {
            self.values.clear();
        }
    }

    /// Clamps the change ticks (see [`World::check_change_ticks`](crate::World::check_change_ticks)).
    pub(crate) fn check_ticks(&mut self, now: Tick) {
        if self.values.is_tracked() {
            self.values.check_ticks(now);
        }
    }

    /// Appends clones of every value of `src` (same type), for a copy of
    /// the world with the same entities.
    ///
    /// # Safety
    /// `clone` clones values of the set's type.
    pub(crate) unsafe fn clone_from_set(
        src: &SparseSet,
        info: &ComponentInfo,
        clone: unsafe fn(*const u8, *mut u8),
    ) -> Self {
        let mut set = SparseSet::new(info);
        set.index = src.index.clone();
        set.entities = src.entities.clone();
        // SAFETY: same type (both sets store `info`'s), `clone` clones it (caller).
        unsafe { set.values.extend_cloned(&src.values, clone) };
        set
    }

    /// Makes this set a copy of `src` (the same type), in place: the values
    /// by `typed` if given (see [`Column::clone_from_typed`]), else by the
    /// type's clone function, then the index and the entity list, keeping
    /// the memory. A panicking clone leaves the index and entity list as
    /// they were (clear the set then).
    fn clone_set_from(
        &mut self,
        src: &SparseSet,
        info: &ComponentInfo,
        typed: &impl Fn(std::any::TypeId) -> Option<CloneColumnFn>,
    ) {
        debug_assert_eq!(self.id, src.id);
        match typed(info.type_id()) {
            Some(copy) => copy(&mut self.values, &src.values),
            None => {
                let Some(clone) = info.clone_fn() else { panic!("component `{}` is not cloneable", info.name()) };
                // SAFETY: both sets store `info`'s type, and `clone` is its
                // clone function.
                unsafe { self.values.clone_from_erased(&src.values, clone) };
            }
        }
        self.index.clone_from(&src.index);
        self.entities.clone_from(&src.entities);
    }

    /// Bytes held by the set.
    pub fn allocated_bytes(&self) -> usize {
        self.index.capacity() * 4 + self.entities.capacity() * size_of::<Entity>() + self.values.allocated_bytes()
    }

    fn check_invariants(&self, info: &ComponentInfo, alive: impl Fn(Entity) -> bool) -> Result<(), String> {
        self.values.check_invariants(info).map_err(|e| format!("sparse set: {e}"))?;
        if self.values.len() != self.entities.len() {
            return Err(format!(
                "sparse set of `{}`: {} values for {} entities",
                info.name(),
                self.values.len(),
                self.entities.len()
            ));
        }
        for (d, &e) in self.entities.iter().enumerate() {
            if self.index.get(e.index() as usize) != Some(&(d as u32 + 1)) {
                return Err(format!("sparse set of `{}`: {e:?} not indexed at {d}", info.name()));
            }
            if !alive(e) {
                return Err(format!("sparse set of `{}`: {e:?} is not alive", info.name()));
            }
        }
        let linked = self.index.iter().filter(|&&slot| slot != 0).count();
        if linked != self.entities.len() {
            return Err(format!("sparse set of `{}`: {linked} index entries for {} values", info.name(), self.len()));
        }
        Ok(())
    }
}

impl fmt::Debug for SparseSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SparseSet").field("id", &self.id).field("len", &self.len()).finish()
    }
}

/// The sparse sets of one world, by component id.
#[derive(Default)]
pub struct SparseSets {
    /// By component index: the set's position in `sets` plus one, or zero.
    by_component: Vec<u32>,
    sets: Vec<SparseSet>,
}

impl SparseSets {
    /// The set of component `id`, if one was made.
    #[inline]
    pub fn get(&self, id: ComponentId) -> Option<&SparseSet> {
        match self.by_component.get(id.index()) {
            Some(&slot) if slot != 0 => Some(&self.sets[slot as usize - 1]),
            _ => None,
        }
    }

    /// The set of component `id`, if one was made.
    #[inline]
    pub(crate) fn get_mut(&mut self, id: ComponentId) -> Option<&mut SparseSet> {
        match self.by_component.get(id.index()) {
            Some(&slot) if slot != 0 => Some(&mut self.sets[slot as usize - 1]),
            _ => None,
        }
    }

    /// The set of component `id`, made from `info()` if needed.
    #[inline]
    pub(crate) fn get_or_insert_with<'i>(
        &mut self,
        id: ComponentId,
        info: impl FnOnce() -> &'i ComponentInfo,
    ) -> &mut SparseSet {
        let slot = match self.by_component.get(id.index()) {
            Some(&slot) if slot != 0 => slot,
            _ => self.make(info()),
        };
        &mut self.sets[slot as usize - 1]
    }

    /// The set of the sparse component `info`, made if needed.
    #[inline]
    pub(crate) fn get_or_insert(&mut self, info: &ComponentInfo) -> &mut SparseSet {
        debug_assert!(info.is_sparse());
        self.get_or_insert_with(info.id(), || info)
    }

    /// Makes the set of `info` and returns its slot.
    #[cold]
    #[inline(never)]
    fn make(&mut self, info: &ComponentInfo) -> u32 {
        if self.by_component.len() <= info.id().index() {
            self.by_component.resize(info.id().index() + 1, 0);
        }
        self.sets.push(SparseSet::new(info));
        let slot = self.sets.len() as u32;
        self.by_component[info.id().index()] = slot;
        slot
    }

    /// Whether any set was made (then despawns look through them).
    #[inline]
    pub(crate) fn any(&self) -> bool {
        !self.sets.is_empty()
    }

    /// Every set, in creation order.
    pub fn iter(&self) -> impl Iterator<Item = &SparseSet> {
        self.sets.iter()
    }

    /// The sparse components `entity` has, in creation order of the sets.
    pub(crate) fn components_of(&self, entity: Entity) -> impl Iterator<Item = ComponentId> + '_ {
        self.sets.iter().filter(move |s| s.contains(entity)).map(|s| s.id)
    }

    /// Removes every value of `entity` and releases it (see
    /// [`SparseSet::remove`]); a panicking destructor or reset does not
    /// stop the others.
    pub(crate) fn remove_entity(&mut self, entity: Entity, components: &Components, pools: &mut Pools) {
        let mut panics = Panics::default();
        for set in self.sets.iter_mut() {
            let info = components.info(set.id);
            panics.run(|| {
                set.remove(entity, info, pools);
            });
        }
        panics.finish();
    }

    /// Removes every value of every set; as [`SparseSet::clear`].
    pub(crate) fn clear(&mut self, components: &Components, pools: &mut Pools) {
        let mut panics = Panics::default();
        for set in self.sets.iter_mut() {
            let info = components.info(set.id);
            panics.run(|| set.clear(info, pools));
        }
        panics.finish();
    }

    /// Clamps every set's change ticks.
    pub(crate) fn check_ticks(&mut self, now: Tick) {
        for set in self.sets.iter_mut() {
            set.check_ticks(now);
        }
    }

    /// Copies of every set, for a copy of the world with the same entities;
    /// `Err` names the first type that is not cloneable and has values.
    pub(crate) fn try_clone(&self, components: &Components) -> Result<SparseSets, &'static str> {
        let mut sets = Vec::with_capacity(self.sets.len());
        for set in &self.sets {
            let info = components.info(set.id);
            match info.clone_fn() {
                // SAFETY: `clone` is the type's own clone function.
                Some(clone) => sets.push(unsafe { SparseSet::clone_from_set(set, info, clone) }),
                None if set.is_empty() => sets.push(SparseSet::new(info)),
                None => return Err(info.name()),
            }
        }
        Ok(SparseSets { by_component: self.by_component.clone(), sets })
    }

    /// Makes these sets copies of `src`'s, for a world copied in place with
    /// the same entities and the same registry: set by set, keeping the
    /// memory, when both hold sets of the same types in the same order;
    /// otherwise as a new copy ([`SparseSets::try_clone`]). `Err` names the
    /// first type that is not cloneable and has values; nothing changes
    /// then.
    ///
    /// # Panics
    /// If a clone panics; each set is then consistent on its own, and the
    /// caller empties them.
    pub(crate) fn clone_from_sets(
        &mut self,
        src: &SparseSets,
        components: &Components,
        typed: impl Fn(std::any::TypeId) -> Option<CloneColumnFn>,
    ) -> Result<(), &'static str> {
        if let Some(set) = src.sets.iter().find(|set| !set.is_empty() && !components.info(set.id).is_cloneable()) {
            return Err(components.info(set.id).name());
        }
        let same = self.sets.len() == src.sets.len() && self.sets.iter().zip(&src.sets).all(|(a, b)| a.id == b.id);
        if !same {
            *self = src.try_clone(components)?;
            return Ok(());
        }
        for (set, from) in self.sets.iter_mut().zip(&src.sets) {
            if set.is_empty() && from.is_empty() {
                continue;
            }
            set.clone_set_from(from, components.info(from.id), &typed);
        }
        self.by_component.clone_from(&src.by_component);
        Ok(())
    }

    /// Bytes held by every set.
    pub fn allocated_bytes(&self) -> usize {
        self.sets.iter().map(SparseSet::allocated_bytes).sum::<usize>() + self.by_component.capacity() * 4
    }

    /// Checks every set's invariants.
    pub(crate) fn check_invariants(
        &self,
        components: &Components,
        alive: impl Fn(Entity) -> bool,
    ) -> Result<(), String> {
        for (i, set) in self.sets.iter().enumerate() {
            if self.by_component.get(set.id.index()) != Some(&(i as u32 + 1)) {
                return Err(format!("sparse set {i} not found by its component"));
            }
            let info = components.info(set.id);
            if !info.is_sparse() {
                return Err(format!("`{}` has a sparse set but table storage", info.name()));
            }
            set.check_invariants(info, &alive)?;
        }
        Ok(())
    }
}

impl fmt::Debug for SparseSets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.sets.iter()).finish()
    }
}

/// One archetype table as a query fetch sees it: the table, and the world's
/// sparse sets, where the components in sparse storage of its entities
/// are. Dereferences to the [`Archetype`](crate::storage::Archetype).
#[derive(Clone, Copy)]
pub struct TableRef<'w> {
    archetype: &'w crate::storage::archetype::Archetype,
    sparse: &'w SparseSets,
    handles: crate::entity::Handles<'w>,
}

impl<'w> TableRef<'w> {
    /// The table `archetype`, with its world's sparse sets and entity
    /// generations (see `World::table_ref`).
    #[inline]
    pub(crate) fn new(
        archetype: &'w crate::storage::archetype::Archetype,
        sparse: &'w SparseSets,
        handles: crate::entity::Handles<'w>,
    ) -> Self {
        TableRef { archetype, sparse, handles }
    }

    /// The generations of the world's entities, to make handles of rows.
    #[inline]
    pub(crate) fn handles(self) -> crate::entity::Handles<'w> {
        self.handles
    }

    /// The table.
    #[inline]
    pub fn archetype(self) -> &'w crate::storage::archetype::Archetype {
        self.archetype
    }

    /// The sparse set of component `id`, if the world made one.
    #[inline]
    pub fn sparse_set(self, id: ComponentId) -> Option<&'w SparseSet> {
        self.sparse.get(id)
    }
}

impl std::ops::Deref for TableRef<'_> {
    type Target = crate::storage::archetype::Archetype;

    #[inline]
    fn deref(&self) -> &Self::Target {
        self.archetype
    }
}

impl fmt::Debug for TableRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.archetype.fmt(f)
    }
}

/// Where the values of one sparse component are for the rows of one table:
/// the table's entity column and the set's index, read per row by the
/// query fetches of sparse components.
#[derive(Clone, Copy)]
pub struct SparseRows<'w> {
    entities: std::ptr::NonNull<u32>,
    index: std::ptr::NonNull<u32>,
    index_len: usize,
    _borrow: std::marker::PhantomData<&'w SparseSet>,
}

impl<'w> SparseRows<'w> {
    /// Rows that never have a value.
    #[inline]
    pub(crate) fn dangling() -> Self {
        SparseRows {
            entities: std::ptr::NonNull::dangling(),
            index: std::ptr::NonNull::dangling(),
            index_len: 0,
            _borrow: std::marker::PhantomData,
        }
    }

    /// The rows of `table` for component `id`, and the set if there is one.
    #[inline]
    pub(crate) fn new(table: TableRef<'w>, id: ComponentId) -> (Self, Option<&'w SparseSet>) {
        let set = table.sparse_set(id);
        let index = set.map_or(&[][..], |set| &set.index[..]);
        let rows = SparseRows {
            entities: std::ptr::NonNull::from(table.archetype.entity_indices()).cast(),
            index: std::ptr::NonNull::from(index).cast(),
            index_len: index.len(),
            _borrow: std::marker::PhantomData,
        };
        (rows, set)
    }

    /// The dense position of row `row`'s value, if its entity has one.
    ///
    /// # Safety
    /// `row` is below the length of the table the rows were made for,
    /// which has not changed structurally since (any `row` for
    /// [`SparseRows::dangling`]).
    #[inline(always)]
    pub(crate) unsafe fn dense(&self, row: usize) -> Option<usize> {
        // Rows made without a set (`dangling`, or a set never made) have no
        // values; their entity pointer may dangle, so it is not read.
        if self.index_len == 0 {
            return None;
        }
        // SAFETY: `row` is in bounds of the entity column (caller), and the
        // index is read below its length; both are borrowed for `'w`.
        unsafe {
            let index = *self.entities.as_ptr().add(row) as usize;
            if index >= self.index_len {
                return None;
            }
            match *self.index.as_ptr().add(index) {
                0 => None,
                slot => Some(slot as usize - 1),
            }
        }
    }
}
