//! The allocator that hands entity handles out and tracks where each live
//! entity is stored (the handle itself is in `handle.rs`).

use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::entity::error::{AllocatorStateError, SpawnAtError};
use crate::entity::handle::Entity;
use crate::entity::location::{ArchetypeId, EntityLocation, Row};

/// A copy of a world's entity allocator, from [`World::allocator_state`]:
/// enough to rebuild a world whose entities get exactly the same handles,
/// now and in every later spawn (for save games, replays and rollback).
///
/// [`World::allocator_state`]: crate::World::allocator_state
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct AllocatorState {
    /// The generation of each slot, by index: the live entity's generation,
    /// or for a free slot the generation the next entity spawned there gets.
    pub generations: Vec<NonZeroU32>,
    /// The free slot indices in allocator order: the last one is reused
    /// first. A slot that is neither live nor free is never reused.
    pub free: Vec<u32>,
}

/// One slot of the entity table: 12 bytes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Slot {
    /// The generation of the live entity in this slot, or of the next entity
    /// to be spawned into it when the slot is free.
    generation: NonZeroU32,
    /// `EntityLocation::VACANT` while the slot is free.
    location: EntityLocation,
}

impl Slot {
    /// The handle of this slot's live entity, whose index is `index`.
    #[inline(always)]
    pub(crate) fn entity(&self, index: u32) -> Entity {
        Entity::new(index, self.generation)
    }
}

/// The entity allocator and location table.
///
/// ```text
///   slots:  [ 0: gen 1, arch 2 row 0 ][ 1: gen 3, VACANT ][ 2: gen 1, arch 2 row 1 ]
///   free:   [ 1 ]          next spawn takes index 1 with generation 3
/// ```
///
/// Invariants:
/// - a slot is live exactly when its location is not `VACANT`; then
///   `Entity::new(index, slot.generation)` is the live handle;
/// - every free slot's index is in `free` exactly once, except retired slots,
///   whose generation is exhausted and which are never handed out again;
/// - `live` counts the live slots;
/// - `slots.len() <= max_slots`.
///
/// Handles can also be *reserved* through a shared borrow (deferred
/// commands spawn this way, from systems running in parallel). The `n`-th
/// reservation since the last flush takes the `n`-th free index from the
/// end of `free`, then indices past the end of `slots`:
///
/// ```text
///   free:  [ 4, 9, 2 ]   slots.len() == 12   reserved == 5
///   handed out: 2, 9, 4, 12, 13
/// ```
///
/// `flush` turns the reservations into live entities. Every operation that
/// changes `free` or `slots` flushes first, so the picture above stays true
/// between flushes.
pub(crate) struct Entities {
    slots: Vec<Slot>,
    free: Vec<u32>,
    live: u32,
    /// The most slots the table may hold: `u32::MAX`, so that every index
    /// and the live count fit in a `u32`. Only a test hook lowers it, to
    /// reach exhaustion without billions of entities.
    max_slots: u32,
    /// Reservation positions since the last flush (handed out, or
    /// skipped by lanes).
    reserved: AtomicU32,
    /// Positions below `reserved` that lanes spanned without handing out,
    /// in increasing order.
    skipped: Vec<u32>,
    /// Open transactions, outermost first (see [`Txn`]).
    txns: Vec<Txn>,
    /// Every index made live while a transaction is open, in order.
    allocated: Vec<u32>,
}

/// What an open transaction (`World::all_or_nothing`) needs to put the
/// allocator back as it was, recorded as it goes rather than copied up
/// front, so that opening one costs nothing per entity:
///
/// ```text
///   free at the start:  [ a b c d e ]        len 5
///   pops since:               d e   (c d e)  low_water = 2: positions 2..5
///   originals:          (e, gen) (d, gen) (c, gen)    as popped
///   rollback:           free[..2] ++ [c d e], their generations restored,
///                       slots past the old length dropped
/// ```
///
/// Positions below `low_water` have not been touched since the start. A
/// rollback needs every entity live at the start still live (else it gives
/// up and leaves the allocator consistent as it is).
#[derive(Debug)]
pub(crate) struct Txn {
    slots: usize,
    live: u32,
    low_water: usize,
    /// The free entries popped from below `low_water`, with their
    /// generation then, in the order they were popped.
    originals: Vec<(u32, NonZeroU32)>,
    /// Where this transaction's part of `Entities::allocated` starts.
    allocated_from: usize,
    /// The whole allocator as it was when `restore` replaced it inside the
    /// transaction.
    replaced: Option<Box<Replaced>>,
}

/// The allocator as a `restore` inside a transaction found it.
#[derive(Debug)]
struct Replaced {
    slots: Vec<Slot>,
    free: Vec<u32>,
    live: u32,
}

/// Reservation lanes: `count` reservers that run at the same time (systems
/// of one parallel group that spawn through `Commands`) each get their own
/// sequence of reservation positions, `base + lane + k * count`, so every
/// handle depends only on the lane and how many the lane took before it,
/// never on which system reached the shared counter first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ReservationLanes {
    /// The first position of lane 0.
    pub base: u32,
    /// How many lanes share the positions.
    pub count: u32,
}

impl Default for Entities {
    fn default() -> Self {
        Entities {
            slots: Vec::new(),
            free: Vec::new(),
            live: 0,
            max_slots: u32::MAX,
            reserved: AtomicU32::new(0),
            skipped: Vec::new(),
            txns: Vec::new(),
            allocated: Vec::new(),
        }
    }
}

impl Entities {
    /// An exact copy: the same slots, free list and pending reservations,
    /// for a copy of the world whose tables keep every entity at the same
    /// archetype and row. Open transactions belong to the original: the
    /// copy has none, and keeps what they made.
    pub fn snapshot(&self) -> Entities {
        Entities {
            slots: self.slots.clone(),
            free: self.free.clone(),
            live: self.live,
            max_slots: self.max_slots,
            reserved: AtomicU32::new(self.reserved.load(Ordering::Relaxed)),
            skipped: self.skipped.clone(),
            txns: Vec::new(),
            allocated: Vec::new(),
        }
    }

    /// Makes this table an exact copy of `src` in place, as
    /// [`Entities::snapshot`] does, keeping the memory.
    pub fn clone_from_table(&mut self, src: &Entities) {
        self.slots.clone_from(&src.slots);
        self.free.clone_from(&src.free);
        self.live = src.live;
        self.max_slots = src.max_slots;
        *self.reserved.get_mut() = src.reserved.load(Ordering::Relaxed);
        self.skipped.clone_from(&src.skipped);
        self.txns.clear();
        self.allocated.clear();
    }

    /// Number of live entities.
    #[inline]
    pub fn len(&self) -> u32 {
        self.live
    }

    /// An index no lower than any that the next [`Entities::alloc`] can
    /// hand out.
    #[inline]
    pub fn next_index_bound(&self) -> u32 {
        self.slots.len() as u32
    }

    /// Hands out a handle for a new entity at `location`.
    ///
    /// # Panics
    /// When every index is live or retired (`u32::MAX` slots), with a
    /// message that says so; nothing has changed then.
    #[inline]
    pub fn alloc(&mut self, location: EntityLocation) -> Entity {
        debug_assert_eq!(*self.reserved.get_mut(), 0, "reserved entities must be flushed first");
        if let Some(index) = self.free.pop() {
            if !self.txns.is_empty() {
                self.note_pop(self.free.len(), index);
            }
            self.live += 1;
            let slot = &mut self.slots[index as usize];
            slot.location = location;
            Entity::new(index, slot.generation)
        } else {
            if self.slots.len() >= self.max_slots as usize {
                self.exhausted();
            }
            // Fits: `slots.len() < max_slots <= u32::MAX`.
            let index = self.slots.len() as u32;
            self.slots.push(Slot { generation: NonZeroU32::MIN, location });
            self.live += 1;
            if !self.txns.is_empty() {
                self.allocated.push(index);
            }
            Entity::new(index, NonZeroU32::MIN)
        }
    }

    /// Makes the exact handle `entity` live at `location`, for handles that
    /// come from elsewhere (`World::spawn_at`). The slot must be free (on
    /// the free list) with a generation no later than the handle's, or past
    /// the end of the table: the slots skipped to reach it go on the free
    /// list, the lowest on top. A free slot whose generation is later than
    /// the handle's is refused: this allocator handed that handle (or a
    /// later one) out before, and stale copies of it may be around.
    ///
    /// ```text
    ///   slots: [ 0: live ][ 1: free gen 2 ]    free: [ 1 ]
    ///   claim(4v1):  slots 2, 3 free gen 1, slot 4 live gen 1; free: [ 1, 3, 2 ]
    ///   claim(1v5):  slot 1 live gen 5 (taken out of the free list in place)
    /// ```
    ///
    /// Costs a scan of the free list from the top when the slot is inside
    /// the table.
    pub fn claim(&mut self, entity: Entity, location: EntityLocation) -> Result<(), SpawnAtError> {
        debug_assert_eq!(*self.reserved.get_mut(), 0, "reserved entities must be flushed first");
        let index = entity.index as usize;
        if index >= self.slots.len() {
            if index >= self.max_slots as usize {
                return Err(SpawnAtError::IndexOutOfRange(entity));
            }
            let old = self.slots.len();
            self.slots.reserve(index + 1 - old);
            self.free.reserve(index - old);
            self.slots
                .extend((old..index).map(|_| Slot { generation: NonZeroU32::MIN, location: EntityLocation::VACANT }));
            self.slots.push(Slot { generation: entity.generation, location });
            // Fits: `index < max_slots <= u32::MAX`.
            self.free.extend((old..index).rev().map(|i| i as u32));
            self.live += 1;
            if !self.txns.is_empty() {
                self.allocated.push(entity.index);
            }
            return Ok(());
        }
        let slot = self.slots[index];
        if slot.location != EntityLocation::VACANT {
            let occupant = Entity::new(entity.index, slot.generation);
            return Err(if occupant == entity {
                SpawnAtError::AlreadyAlive(entity)
            } else {
                SpawnAtError::SlotOccupied { requested: entity, occupant }
            });
        }
        let stale = SpawnAtError::StaleGeneration { entity, current: slot.generation.get() };
        if entity.generation < slot.generation {
            return Err(stale);
        }
        // Not on the free list: a retired slot, whose last handle was used.
        let Some(position) = self.free.iter().rposition(|&i| i == entity.index) else { return Err(stale) };
        // Open transactions remember the free entries from `position` up,
        // as if popped, so that a rollback puts the list back in order.
        let (txns, free, slots) = (&mut self.txns, &self.free, &self.slots);
        for txn in txns.iter_mut() {
            while txn.low_water > position {
                txn.low_water -= 1;
                let i = free[txn.low_water];
                txn.originals.push((i, slots[i as usize].generation));
            }
        }
        if !self.txns.is_empty() {
            self.allocated.push(entity.index);
        }
        self.free.remove(position);
        self.slots[index] = Slot { generation: entity.generation, location };
        self.live += 1;
        Ok(())
    }

    /// Records, for the open transactions, that the free entry `index` at
    /// `position` was taken and is about to be made live.
    #[cold]
    fn note_pop(&mut self, position: usize, index: u32) {
        let generation = self.slots[index as usize].generation;
        for txn in &mut self.txns {
            if position < txn.low_water {
                debug_assert_eq!(position + 1, txn.low_water, "the free list pops from its end");
                txn.originals.push((index, generation));
                txn.low_water = position;
            }
        }
        self.allocated.push(index);
    }

    /// Opens a transaction (see [`Txn`]). Reservations must be flushed.
    pub fn begin_txn(&mut self) {
        debug_assert_eq!(*self.reserved.get_mut(), 0, "reserved entities must be flushed first");
        self.txns.push(Txn {
            slots: self.slots.len(),
            live: self.live,
            low_water: self.free.len(),
            originals: Vec::new(),
            allocated_from: self.allocated.len(),
            replaced: None,
        });
    }

    /// Closes the innermost transaction, keeping what it did.
    pub fn commit_txn(&mut self) {
        let txn = self.txns.pop().expect("a transaction is open");
        if self.txns.is_empty() {
            self.allocated.clear();
        }
        drop(txn);
    }

    /// The live entities made since the innermost transaction opened.
    pub fn txn_entities(&self) -> Vec<Entity> {
        let txn = self.txns.last().expect("a transaction is open");
        let mut entities: Vec<Entity> = self.allocated[txn.allocated_from..]
            .iter()
            .map(|&index| Entity::new(index, self.slots[index as usize].generation))
            .filter(|&entity| self.get(entity).is_some())
            .collect();
        entities.sort_unstable();
        entities.dedup();
        entities
    }

    /// Closes the innermost transaction and puts the allocator back as it
    /// was when it opened, once the entities it made are gone. Returns
    /// false, changing nothing, if that is not possible: an entity that
    /// was live then is gone (or one made since is still live).
    pub fn rollback_txn(&mut self) -> bool {
        debug_assert_eq!(*self.reserved.get_mut(), 0, "reserved entities must be flushed first");
        let txn = self.txns.pop().expect("a transaction is open");
        self.allocated.truncate(txn.allocated_from);
        if let Some(replaced) = txn.replaced {
            if self.live != 0 {
                return false;
            }
            let Replaced { slots, free, live } = *replaced;
            debug_assert_eq!(live, 0, "only an allocator without live entities is replaced");
            (self.slots, self.free, self.live) = (slots, free, live);
            return true;
        }
        if self.live != txn.live || self.slots[txn.slots..].iter().any(|s| s.location != EntityLocation::VACANT) {
            return false;
        }
        self.slots.truncate(txn.slots);
        self.free.truncate(txn.low_water);
        for &(index, generation) in txn.originals.iter().rev() {
            self.slots[index as usize].generation = generation;
            self.free.push(index);
        }
        true
    }

    /// Hands out a handle for an entity that [`Entities::flush`] will make
    /// live later.
    ///
    /// # Panics
    /// When all `u32::MAX` indices would be in use; nothing is reserved then.
    pub fn reserve_entity(&self) -> Entity {
        let mut n = self.reserved.load(Ordering::Relaxed);
        loop {
            // Computed (and the exhaustion checked) before the count moves,
            // so a caught exhaustion panic leaves no reservation behind.
            let entity = self.handle_at(n as usize);
            match self.reserved.compare_exchange_weak(n, n + 1, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => return entity,
                Err(now) => n = now,
            }
        }
    }

    /// The handle that reservation position `n` (counted since the last
    /// flush) stands for: the `n`-th free index from the end of `free`, then
    /// indices past the end of `slots`.
    ///
    /// # Panics
    /// If that index would reach the slot limit.
    #[inline]
    fn handle_at(&self, n: usize) -> Entity {
        if let Some(free_at) = self.free.len().checked_sub(n + 1) {
            let index = self.free[free_at];
            self.slots[index as usize].entity(index)
        } else {
            let index = self.slots.len() + (n - self.free.len());
            if index >= self.max_slots as usize {
                self.exhausted();
            }
            Entity::new(index as u32, NonZeroU32::MIN)
        }
    }

    /// The handles the next `n` allocations after the next flush will get,
    /// in order, without changing anything: the positions lanes skipped
    /// (the flush leaves them free, the lowest on top), then the positions
    /// after the reservations.
    ///
    /// # Panics
    /// As [`Entities::reserve_entity`], when the index space would run out.
    pub fn peek(&self, n: usize) -> Vec<Entity> {
        let reserved = self.reserved.load(Ordering::Relaxed) as usize;
        let mut skipped: Vec<usize> = self.skipped.iter().map(|&p| p as usize).collect();
        skipped.sort_unstable();
        let mut handles: Vec<Entity> = skipped.into_iter().take(n).map(|p| self.handle_at(p)).collect();
        let rest = n - handles.len();
        handles.extend((0..rest).map(|k| self.handle_at(reserved + k)));
        handles
    }

    /// Starts handing out reservations in lanes (see [`ReservationLanes`]):
    /// returns the first position the lanes share.
    pub fn begin_lanes(&mut self) -> u32 {
        *self.reserved.get_mut()
    }

    /// The `k`-th handle of lane `lane` out of `lanes` that started at
    /// position `base`: position `base + lane + k * lanes`. Touches no
    /// shared state, so lanes reserve from parallel systems without
    /// depending on which runs first.
    ///
    /// # Panics
    /// As [`Entities::reserve_entity`], when the index space would run out.
    pub fn reserve_in_lane(&self, lanes: ReservationLanes, lane: u32, k: u32) -> Entity {
        let position = u64::from(k) * u64::from(lanes.count) + u64::from(lane) + u64::from(lanes.base);
        match usize::try_from(position) {
            Ok(n) if position < u64::from(u32::MAX) => self.handle_at(n),
            _ => self.exhausted(),
        }
    }

    /// Ends lanes that started at `lanes.base`; `used[r]` is how many
    /// handles lane `r` handed out. The positions the lanes span and did
    /// not use are skipped: the next flush leaves them free.
    pub fn end_lanes(&mut self, lanes: ReservationLanes, used: &[u32]) {
        debug_assert_eq!(used.len(), lanes.count as usize);
        debug_assert_eq!(*self.reserved.get_mut(), lanes.base, "reserved outside the lanes while they ran");
        let rounds = used.iter().copied().max().unwrap_or(0);
        for k in 0..rounds {
            for (r, &n) in used.iter().enumerate() {
                if k >= n {
                    self.skipped.push(lanes.base + k * lanes.count + r as u32);
                }
            }
        }
        *self.reserved.get_mut() = lanes.base + rounds * lanes.count;
    }

    /// Whether handles were reserved since the last flush.
    #[inline]
    pub fn has_reserved(&mut self) -> bool {
        *self.reserved.get_mut() != 0
    }

    /// Makes every reserved handle a live entity, placed where `place` puts
    /// it (called once per handle, in reservation order). Positions that
    /// lanes skipped stay (or become) free slots.
    pub fn flush(&mut self, mut place: impl FnMut(Entity) -> EntityLocation) {
        let n = std::mem::take(self.reserved.get_mut()) as usize;
        let skipped = std::mem::take(&mut self.skipped);
        let mut skipped = skipped.iter().map(|&p| p as usize).peekable();
        let mut left_free = Vec::new();
        let f = self.free.len();
        let from_free = n.min(f);
        if !self.txns.is_empty() {
            for p in 0..from_free {
                self.note_pop(f - 1 - p, self.free[f - 1 - p]);
            }
        }
        for p in 0..from_free {
            let index = self.free[f - 1 - p];
            if skipped.next_if_eq(&p).is_some() {
                left_free.push(index);
                continue;
            }
            let slot = &mut self.slots[index as usize];
            slot.location = place(Entity::new(index, slot.generation));
            self.live += 1;
        }
        self.free.truncate(f - from_free);
        for p in from_free..n {
            let index = self.slots.len() as u32;
            self.slots.push(Slot { generation: NonZeroU32::MIN, location: EntityLocation::VACANT });
            if !self.txns.is_empty() {
                self.allocated.push(index);
            }
            if skipped.next_if_eq(&p).is_some() {
                left_free.push(index);
                continue;
            }
            self.slots[index as usize].location = place(Entity::new(index, NonZeroU32::MIN));
            self.live += 1;
        }
        debug_assert!(skipped.next().is_none(), "a skipped position past the reservations");
        // The lowest skipped position ends on top, to be handed out first.
        self.free.extend(left_free.into_iter().rev());
    }

    #[cold]
    #[inline(never)]
    fn exhausted(&self) -> ! {
        panic!(
            "entity index space exhausted: all {} entity slots are live or retired ({} live)",
            self.slots.len(),
            self.live
        );
    }

    /// How many more entities can be allocated before the index space runs out.
    pub fn spare(&self) -> usize {
        self.free.len() + (self.max_slots as usize - self.slots.len())
    }

    /// Makes room for `additional` more entities without reallocating, as
    /// far as the index space allows.
    pub fn reserve(&mut self, additional: usize) {
        let new_slots = additional.saturating_sub(self.free.len());
        self.slots.reserve(new_slots.min(self.max_slots as usize - self.slots.len()));
    }

    /// Bytes held by the slot table and the free list.
    pub fn allocated_bytes(&self) -> usize {
        self.slots.capacity() * std::mem::size_of::<Slot>() + self.free.capacity() * 4
    }

    /// Frees `entity`'s slot and returns where its components were, or `None`
    /// if the handle is stale.
    pub fn free(&mut self, entity: Entity) -> Option<EntityLocation> {
        debug_assert_eq!(*self.reserved.get_mut(), 0, "reserved entities must be flushed first");
        let slot = self.slots.get_mut(entity.index as usize)?;
        if slot.generation != entity.generation || slot.location == EntityLocation::VACANT {
            return None;
        }
        let location = slot.location;
        slot.location = EntityLocation::VACANT;
        self.live -= 1;
        // An exhausted generation retires the slot: it never goes back on the
        // free list, so no handle equal to an old one is ever handed out.
        if let Some(next) = slot.generation.checked_add(1) {
            slot.generation = next;
            self.free.push(entity.index);
        }
        Some(location)
    }

    /// Where `entity` is stored, or `None` if it is not alive.
    #[inline]
    pub fn get(&self, entity: Entity) -> Option<EntityLocation> {
        let slot = self.slots.get(entity.index as usize)?;
        (slot.generation == entity.generation && slot.location != EntityLocation::VACANT).then_some(slot.location)
    }

    /// Whether `entity` is alive and stored at `at`, a location of a live
    /// entity: one comparison less than [`Entities::get`].
    #[inline]
    #[cfg_attr(not(feature = "hierarchy"), allow(dead_code))]
    pub(crate) fn is_at(&self, entity: Entity, at: EntityLocation) -> bool {
        debug_assert!(at != EntityLocation::VACANT);
        self.slots
            .get(entity.index as usize)
            .is_some_and(|slot| slot.generation == entity.generation && slot.location == at)
    }

    /// The handle of the live entity in slot `index`: table rows record
    /// indices, and the generation is here.
    ///
    /// # Panics
    /// If `index` is past the end of the table (never for a table row's).
    #[inline]
    pub fn entity_at(&self, index: u32) -> Entity {
        self.slots[index as usize].entity(index)
    }

    /// The live entity in slot `index` and its location, if the slot is
    /// live.
    pub fn live_at(&self, index: u32) -> Option<(Entity, EntityLocation)> {
        let slot = self.slots.get(index as usize)?;
        (slot.location != EntityLocation::VACANT).then(|| (slot.entity(index), slot.location))
    }

    /// What a query needs to turn table rows into handles.
    #[inline]
    pub fn handles(&self) -> Handles<'_> {
        Handles { slots: &self.slots }
    }

    /// Records that the live entity in slot `index` now lives at `location`.
    #[inline]
    pub fn set_location(&mut self, index: u32, location: EntityLocation) {
        self.slots[index as usize].location = location;
    }

    /// Frees every live slot, as if each live entity were despawned.
    pub fn clear(&mut self) {
        debug_assert_eq!(*self.reserved.get_mut(), 0, "reserved entities must be flushed first");
        // Every live slot goes on the free list: grown once, not by doubling.
        self.free.reserve(self.live as usize);
        for (index, slot) in self.slots.iter_mut().enumerate() {
            if slot.location == EntityLocation::VACANT {
                continue;
            }
            slot.location = EntityLocation::VACANT;
            if let Some(next) = slot.generation.checked_add(1) {
                slot.generation = next;
                self.free.push(index as u32);
            }
        }
        self.live = 0;
    }

    /// Checks the allocator's invariants; used by the world's consistency check.
    pub fn check_invariants(&self) -> Result<(), String> {
        let mut seen = vec![false; self.slots.len()];
        for &index in &self.free {
            let i = index as usize;
            if i >= self.slots.len() {
                return Err(format!("free list holds out-of-range index {index}"));
            }
            if std::mem::replace(&mut seen[i], true) {
                return Err(format!("free list holds index {index} twice"));
            }
            if self.slots[i].location != EntityLocation::VACANT {
                return Err(format!("free list holds live index {index}"));
            }
        }
        for (i, slot) in self.slots.iter().enumerate() {
            if slot.location == EntityLocation::VACANT && !seen[i] && slot.generation != NonZeroU32::MAX {
                return Err(format!(
                    "index {i} is free with generation {} but not on the free list (lost, not retired)",
                    slot.generation
                ));
            }
        }
        let live = self.slots.iter().filter(|s| s.location != EntityLocation::VACANT).count();
        if live != self.live as usize {
            return Err(format!("live count {} but {live} live slots", self.live));
        }
        if self.slots.len() > self.max_slots as usize {
            return Err(format!("{} slots, more than the limit of {}", self.slots.len(), self.max_slots));
        }
        Ok(())
    }

    /// Test hooks into the allocator; see [`AllocatorHooks`].
    pub fn hooks(&mut self) -> AllocatorHooks<'_> {
        AllocatorHooks { entities: self }
    }

    /// The allocator's state, borrowed: every slot's generation, in index
    /// order, and the free list.
    pub fn state_view(&self) -> (impl ExactSizeIterator<Item = NonZeroU32> + '_, &[u32]) {
        (self.slots.iter().map(|slot| slot.generation), &self.free)
    }

    /// A copy of the allocator's state: every slot's generation and the
    /// free list. Handles reserved but not yet flushed are not included.
    pub fn state(&self) -> AllocatorState {
        AllocatorState { generations: self.slots.iter().map(|slot| slot.generation).collect(), free: self.free.clone() }
    }

    /// Replaces the allocator of a table with no live entity by `state`, and
    /// makes each of `live` alive where `place` puts it (called once per
    /// handle, in order). Checks everything before changing anything.
    pub fn restore(
        &mut self,
        state: &AllocatorState,
        live: &[Entity],
        place: impl FnMut(Entity) -> EntityLocation,
    ) -> Result<(), AllocatorStateError> {
        self.restore_each(state, live.iter().copied(), place)
    }

    /// [`Entities::restore`] for entities placed a block at a time: the
    /// entities of each `(handles, archetype, first)` live at consecutive
    /// rows of `archetype` from row `first` (the caller puts them there).
    /// Checks everything before changing anything.
    ///
    /// The checks are those of [`Entities::restore`], in the same order,
    /// made while the new table is built: its slots start vacant, the free
    /// ones are marked, each live one takes its location (or shows why it
    /// cannot), then a last pass finds lost slots and unmarks the free
    /// ones.
    pub fn restore_blocks(
        &mut self,
        state: &AllocatorState,
        blocks: &[(&[Entity], ArchetypeId, u32)],
    ) -> Result<(), AllocatorStateError> {
        debug_assert_eq!(*self.reserved.get_mut(), 0, "reserved entities must be flushed first");
        debug_assert_eq!(self.live, 0, "restore needs an allocator with no live entity");
        /// Marks a free slot while the table is built; no live location.
        const FREE: EntityLocation = EntityLocation { archetype: ArchetypeId::INVALID, row: Row(u32::MAX - 1) };
        let len = state.generations.len();
        if len > self.max_slots as usize {
            return Err(AllocatorStateError::TooManySlots(len));
        }
        let mut slots: Vec<Slot> =
            state.generations.iter().map(|&generation| Slot { generation, location: EntityLocation::VACANT }).collect();
        for &index in &state.free {
            match slots.get_mut(index as usize) {
                None => return Err(AllocatorStateError::FreeIndexOutOfRange(index)),
                Some(slot) if slot.location == FREE => return Err(AllocatorStateError::DuplicateFreeIndex(index)),
                Some(slot) => slot.location = FREE,
            }
        }
        let mut count = 0;
        for &(handles, archetype, first) in blocks {
            for (r, &entity) in handles.iter().enumerate() {
                let slot = match slots.get_mut(entity.index as usize) {
                    None => return Err(AllocatorStateError::LiveIndexOutOfRange(entity)),
                    Some(slot) if slot.location == FREE => return Err(AllocatorStateError::LiveEntityIsFree(entity)),
                    Some(slot) if slot.location != EntityLocation::VACANT => {
                        return Err(AllocatorStateError::DuplicateLiveEntity(entity))
                    }
                    Some(slot) if slot.generation != entity.generation => {
                        return Err(AllocatorStateError::GenerationMismatch {
                            entity,
                            slot_generation: slot.generation.get(),
                        })
                    }
                    Some(slot) => slot,
                };
                slot.location = EntityLocation { archetype, row: Row(first + r as u32) };
            }
            count += handles.len();
        }
        // Every other slot must be retired, or its index is lost for good.
        // (When the live and free slots are all of them, there is none.)
        if count + state.free.len() < len {
            for (i, slot) in slots.iter().enumerate() {
                if slot.location == EntityLocation::VACANT && slot.generation != NonZeroU32::MAX {
                    return Err(AllocatorStateError::LostIndex(i as u32));
                }
            }
        }
        for &index in &state.free {
            slots[index as usize].location = EntityLocation::VACANT;
        }
        for txn in self.txns.iter_mut().filter(|txn| txn.replaced.is_none()) {
            txn.replaced =
                Some(Box::new(Replaced { slots: self.slots.clone(), free: self.free.clone(), live: self.live }));
        }
        self.slots = slots;
        self.free.clear();
        self.free.extend_from_slice(&state.free);
        if !self.txns.is_empty() {
            self.allocated.extend(blocks.iter().flat_map(|&(handles, _, _)| handles.iter().map(|e| e.index)));
        }
        self.live = count as u32;
        Ok(())
    }

    /// [`Entities::restore`] with the live handles given by an iterator,
    /// which is walked twice (to check, then to place).
    pub fn restore_each(
        &mut self,
        state: &AllocatorState,
        live: impl Iterator<Item = Entity> + Clone,
        mut place: impl FnMut(Entity) -> EntityLocation,
    ) -> Result<(), AllocatorStateError> {
        self.check_restore(state, live.clone())?;
        self.install(state);
        let txn = !self.txns.is_empty();
        for entity in live {
            self.slots[entity.index as usize].location = place(entity);
            self.live += 1;
            if txn {
                self.allocated.push(entity.index);
            }
        }
        Ok(())
    }

    /// Checks that this allocator, with no live entity, may become `state`
    /// with `live` alive; returns how many they are.
    fn check_restore(
        &mut self,
        state: &AllocatorState,
        live: impl Iterator<Item = Entity>,
    ) -> Result<usize, AllocatorStateError> {
        debug_assert_eq!(*self.reserved.get_mut(), 0, "reserved entities must be flushed first");
        debug_assert_eq!(self.live, 0, "restore needs an allocator with no live entity");
        let len = state.generations.len();
        if len > self.max_slots as usize {
            return Err(AllocatorStateError::TooManySlots(len));
        }
        const FREE: u8 = 1;
        const LIVE: u8 = 2;
        let mut marks = vec![0u8; len];
        for &index in &state.free {
            match marks.get_mut(index as usize) {
                None => return Err(AllocatorStateError::FreeIndexOutOfRange(index)),
                Some(mark) if *mark != 0 => return Err(AllocatorStateError::DuplicateFreeIndex(index)),
                Some(mark) => *mark = FREE,
            }
        }
        let mut count = 0;
        for entity in live {
            let i = entity.index as usize;
            match marks.get_mut(i) {
                None => return Err(AllocatorStateError::LiveIndexOutOfRange(entity)),
                Some(&mut FREE) => return Err(AllocatorStateError::LiveEntityIsFree(entity)),
                Some(&mut LIVE) => return Err(AllocatorStateError::DuplicateLiveEntity(entity)),
                Some(_) if state.generations[i] != entity.generation => {
                    return Err(AllocatorStateError::GenerationMismatch {
                        entity,
                        slot_generation: state.generations[i].get(),
                    })
                }
                Some(mark) => *mark = LIVE,
            }
            count += 1;
        }
        // Every other slot must be retired, or its index is lost for good.
        if let Some(i) = marks.iter().zip(&state.generations).position(|(&m, &g)| m == 0 && g != NonZeroU32::MAX) {
            return Err(AllocatorStateError::LostIndex(i as u32));
        }
        Ok(count)
    }

    /// Replaces the slots and the free list by `state`'s, every slot
    /// vacant (the caller then places the live ones), remembering the old
    /// ones for open transactions.
    fn install(&mut self, state: &AllocatorState) {
        for txn in self.txns.iter_mut().filter(|txn| txn.replaced.is_none()) {
            txn.replaced =
                Some(Box::new(Replaced { slots: self.slots.clone(), free: self.free.clone(), live: self.live }));
        }
        self.slots.clear();
        self.slots
            .extend(state.generations.iter().map(|&generation| Slot { generation, location: EntityLocation::VACANT }));
        self.free.clear();
        self.free.extend_from_slice(&state.free);
    }

    #[cfg(test)]
    pub(crate) fn set_generation_for_test(&mut self, index: u32, generation: NonZeroU32) {
        self.slots[index as usize].generation = generation;
    }
}

/// Test hooks into a world's entity allocator, to reach its limits (index
/// exhaustion, generation wrap-around) without spawning billions of
/// entities. Not part of the API: reached through the hidden
/// `World::entity_allocator_hooks`, for the engine's own tests.
#[doc(hidden)]
pub struct AllocatorHooks<'a> {
    entities: &'a mut Entities,
}

impl AllocatorHooks<'_> {
    /// Ends the index space after `max_slots` slots instead of `u32::MAX`.
    ///
    /// # Panics
    /// If more slots than that are in use already.
    pub fn limit_slots(&mut self, max_slots: u32) {
        assert!(max_slots as usize >= self.entities.slots.len(), "{} slots already in use", self.entities.slots.len());
        self.entities.max_slots = max_slots;
    }

    /// Moves the next generation of every free slot forward to at least
    /// `u32::MAX - left`, so that the slot retires after `left + 1` more uses.
    pub fn age_free_slots(&mut self, left: u32) {
        let aged = NonZeroU32::new(u32::MAX - left).unwrap_or(NonZeroU32::MIN);
        for &index in &self.entities.free {
            let slot = &mut self.entities.slots[index as usize];
            slot.generation = slot.generation.max(aged);
        }
    }

    /// Number of slots in the entity table: live, free and retired.
    pub fn slots(&self) -> usize {
        self.entities.slots.len()
    }

    /// How many more entities can be spawned before the index space runs out.
    pub fn spare(&self) -> usize {
        self.entities.spare()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loc(row: u32) -> EntityLocation {
        EntityLocation { archetype: ArchetypeId(0), row: Row(row) }
    }

    #[test]
    fn option_entity_is_eight_bytes() {
        assert_eq!(std::mem::size_of::<Entity>(), 8);
        assert_eq!(std::mem::size_of::<Option<Entity>>(), 8);
    }

    #[test]
    fn a_slot_costs_twelve_bytes() {
        assert_eq!(std::mem::size_of::<Slot>(), 12);
    }

    #[test]
    fn bits_round_trip() {
        let e = Entity::new(17, NonZeroU32::new(5).unwrap());
        assert_eq!(e.to_bits(), (5 << 32) | 17);
        assert_eq!(Entity::from_bits(e.to_bits()), Some(e));
        assert_eq!(Entity::from_bits(17), None);
    }

    #[test]
    fn freed_slot_comes_back_with_next_generation() {
        let mut entities = Entities::default();
        let a = entities.alloc(loc(0));
        let b = entities.alloc(loc(1));
        assert_eq!(entities.free(a), Some(loc(0)));
        assert_eq!(entities.free(a), None);
        assert_eq!(entities.get(a), None);
        let c = entities.alloc(loc(2));
        assert_eq!((c.index(), c.generation()), (a.index(), 2));
        assert_eq!(entities.get(a), None);
        assert_eq!(entities.get(c), Some(loc(2)));
        assert_eq!(entities.get(b), Some(loc(1)));
        assert_eq!(entities.len(), 2);
        entities.check_invariants().unwrap();
    }

    #[test]
    fn exhausted_generation_retires_the_slot() {
        let mut entities = Entities::default();
        let a = entities.alloc(loc(0));
        entities.set_generation_for_test(a.index(), NonZeroU32::MAX);
        let a = Entity::new(a.index(), NonZeroU32::MAX);
        assert_eq!(entities.free(a), Some(loc(0)));
        let b = entities.alloc(loc(0));
        assert_ne!(b.index(), a.index(), "a retired slot is never reused");
        assert_eq!(entities.get(a), None);
        entities.check_invariants().unwrap();
    }

    #[test]
    fn peek_names_the_next_allocations_after_a_flush() {
        let mut entities = Entities::default();
        let taken: Vec<Entity> = (0..6).map(|i| entities.alloc(loc(i))).collect();
        for &e in &taken[1..4] {
            entities.free(e);
        }
        // Two reserved, then lanes of three that use 2, 0 and 1 handles.
        entities.reserve_entity();
        entities.reserve_entity();
        let base = entities.begin_lanes();
        let lanes = ReservationLanes { base, count: 3 };
        entities.reserve_in_lane(lanes, 0, 0);
        entities.reserve_in_lane(lanes, 0, 1);
        entities.reserve_in_lane(lanes, 2, 0);
        entities.end_lanes(lanes, &[2, 0, 1]);
        let peeked = entities.peek(5);
        assert_eq!(entities.peek(5), peeked, "peeking changes nothing");
        entities.flush(|_| loc(0));
        let got: Vec<Entity> = (0..5).map(|_| entities.alloc(loc(0))).collect();
        assert_eq!(got, peeked);
        assert!(got.iter().all(|e| e.index() >= 6), "every free slot went to the reservations");
        entities.check_invariants().unwrap();
        // With nothing reserved: the free slots from the top, then new ones.
        let mut entities = Entities::default();
        let taken: Vec<Entity> = (0..3).map(|i| entities.alloc(loc(i))).collect();
        entities.free(taken[0]);
        entities.free(taken[2]);
        let peeked = entities.peek(3);
        assert_eq!(peeked.iter().map(|e| (e.index(), e.generation())).collect::<Vec<_>>(), [(2, 2), (0, 2), (3, 1)]);
        assert_eq!((0..3).map(|_| entities.alloc(loc(0))).collect::<Vec<_>>(), peeked);
        assert_eq!(entities.peek(0), []);
    }

    #[test]
    fn reserved_handles_take_free_slots_then_new_ones() {
        let mut entities = Entities::default();
        let a = entities.alloc(loc(0));
        let b = entities.alloc(loc(1));
        entities.free(a);
        entities.free(b);
        let r: Vec<_> = (0..3).map(|_| entities.reserve_entity()).collect();
        assert_eq!(r.iter().map(|e| (e.index(), e.generation())).collect::<Vec<_>>(), [(1, 2), (0, 2), (2, 1)]);
        assert!(r.iter().all(|&e| entities.get(e).is_none()), "not live before the flush");
        let mut row = 10;
        entities.flush(|_| {
            row += 1;
            loc(row)
        });
        assert_eq!(
            r.iter().map(|&e| entities.get(e)).collect::<Vec<_>>(),
            [Some(loc(11)), Some(loc(12)), Some(loc(13))]
        );
        assert_eq!(entities.len(), 3);
        assert!(!entities.has_reserved());
        entities.check_invariants().unwrap();
        assert_eq!(entities.alloc(loc(0)).index(), 3);
    }

    #[test]
    fn check_invariants_finds_a_lost_free_index() {
        let mut entities = Entities::default();
        let a = entities.alloc(loc(0));
        entities.alloc(loc(1));
        entities.free(a);
        entities.check_invariants().unwrap();
        entities.free.pop();
        let problem = entities.check_invariants().unwrap_err();
        assert!(problem.contains("not on the free list"), "{problem}");
    }

    #[test]
    fn state_restores_exact_handles() {
        let mut entities = Entities::default();
        let handles: Vec<_> = (0..6).map(|i| entities.alloc(loc(i))).collect();
        entities.free(handles[4]);
        entities.free(handles[1]);
        let live: Vec<_> = handles.iter().copied().filter(|&e| entities.get(e).is_some()).collect();
        let state = entities.state();
        let mut copy = Entities::default();
        let mut row = 0;
        copy.restore(&state, &live, |_| {
            row += 1;
            loc(row - 1)
        })
        .unwrap();
        copy.check_invariants().unwrap();
        assert_eq!(copy.state(), state);
        assert!(live.iter().all(|&e| copy.get(e).is_some()));
        assert_eq!((copy.alloc(loc(9)), copy.alloc(loc(9))), (entities.alloc(loc(9)), entities.alloc(loc(9))));
    }

    #[test]
    fn restore_rejects_inconsistent_states() {
        let g = |n| NonZeroU32::new(n).unwrap();
        let state = AllocatorState { generations: vec![g(1), g(2), g(1)], free: vec![1] };
        let restore = |state: &AllocatorState, live: &[Entity]| Entities::default().restore(state, live, |_| loc(0));
        assert_eq!(restore(&state, &[Entity::new(0, g(1)), Entity::new(2, g(1))]), Ok(()));
        // Slot 2 neither live, free nor retired: its index would be lost.
        assert_eq!(restore(&state, &[Entity::new(0, g(1))]), Err(AllocatorStateError::LostIndex(2)));
        let retired = AllocatorState { generations: vec![g(1), g(2), NonZeroU32::MAX], free: vec![1] };
        assert_eq!(restore(&retired, &[Entity::new(0, g(1))]), Ok(()));
        assert_eq!(
            restore(&state, &[Entity::new(3, g(1))]),
            Err(AllocatorStateError::LiveIndexOutOfRange(Entity::new(3, g(1))))
        );
        assert_eq!(
            restore(&state, &[Entity::new(1, g(2))]),
            Err(AllocatorStateError::LiveEntityIsFree(Entity::new(1, g(2))))
        );
        assert_eq!(
            restore(&state, &[Entity::new(0, g(1)), Entity::new(0, g(1))]),
            Err(AllocatorStateError::DuplicateLiveEntity(Entity::new(0, g(1))))
        );
        assert_eq!(
            restore(&state, &[Entity::new(2, g(5))]),
            Err(AllocatorStateError::GenerationMismatch { entity: Entity::new(2, g(5)), slot_generation: 1 })
        );
        let bad_free = AllocatorState { free: vec![1, 7], ..state.clone() };
        assert_eq!(restore(&bad_free, &[]), Err(AllocatorStateError::FreeIndexOutOfRange(7)));
        let dup_free = AllocatorState { free: vec![1, 1], ..state };
        assert_eq!(restore(&dup_free, &[]), Err(AllocatorStateError::DuplicateFreeIndex(1)));
    }

    #[test]
    fn a_restore_by_blocks_checks_as_a_restore_by_entity() {
        let g = |n| NonZeroU32::new(n).unwrap();
        let e = |i, n| Entity::new(i, g(n));
        let states = [
            AllocatorState { generations: vec![g(1), g(2), g(1), g(3)], free: vec![1] },
            AllocatorState { generations: vec![g(1), g(2), NonZeroU32::MAX, g(3)], free: vec![3, 1] },
            AllocatorState { generations: vec![g(1), g(2)], free: vec![1, 1] },
            AllocatorState { generations: vec![g(1), g(2)], free: vec![5] },
            AllocatorState { generations: vec![g(1); 5], free: vec![] },
        ];
        let lives: [&[Entity]; 9] = [
            &[e(0, 1), e(2, 1), e(3, 3)],
            &[e(0, 1), e(3, 3)],
            &[e(0, 1), e(2, 1)],
            &[e(0, 1), e(9, 1)],
            &[e(0, 1), e(1, 2)],
            &[e(0, 1), e(0, 1)],
            &[e(0, 1), e(2, 4)],
            &[e(4, 1), e(3, 1), e(2, 1), e(1, 1), e(0, 1)],
            &[],
        ];
        for state in &states {
            for live in lives {
                let mut one = Entities::default();
                let by_entity = one.restore(state, live, |_| loc(0));
                // Two blocks: the first entity alone, then the rest.
                let split = live.len().min(1);
                let blocks = [(&live[..split], ArchetypeId(1), 0), (&live[split..], ArchetypeId(2), 0)];
                let mut other = Entities::default();
                assert_eq!(other.restore_blocks(state, &blocks), by_entity, "{state:?} {live:?}");
                if by_entity.is_ok() {
                    assert_eq!(other.state(), one.state());
                    assert_eq!(other.len(), live.len() as u32);
                    other.check_invariants().unwrap();
                    for (r, &entity) in live[split..].iter().enumerate() {
                        assert_eq!(
                            other.get(entity),
                            Some(EntityLocation { archetype: ArchetypeId(2), row: Row(r as u32) })
                        );
                    }
                } else {
                    assert_eq!(other.state(), Entities::default().state(), "a refused restore changes nothing");
                }
            }
        }
    }

    #[test]
    fn clear_makes_every_handle_stale() {
        let mut entities = Entities::default();
        let handles: Vec<_> = (0..5).map(|i| entities.alloc(loc(i))).collect();
        entities.clear();
        assert_eq!(entities.len(), 0);
        assert!(handles.iter().all(|&e| entities.get(e).is_none()));
        let again = entities.alloc(loc(0));
        assert_eq!(again.generation(), 2);
        entities.check_invariants().unwrap();
    }
}

/// The generations of a world's entity slots, as a query reads them to make
/// handles of a table's rows (the entity column holds indices only).
#[derive(Clone, Copy)]
pub(crate) struct Handles<'w> {
    slots: &'w [Slot],
}

impl<'w> Handles<'w> {
    /// Handles for no world: read by nothing (a query's dangling fetch).
    pub(crate) fn dangling() -> Self {
        Handles { slots: &[] }
    }

    /// The slots, by entity index.
    #[inline(always)]
    pub(crate) fn slots(self) -> &'w [Slot] {
        self.slots
    }
}

/// The entity of each row of one table, in row order: the iterator of
/// [`World::table_entities`](crate::World::table_entities).
#[derive(Clone)]
pub struct TableEntities<'w> {
    indices: std::slice::Iter<'w, u32>,
    handles: Handles<'w>,
}

impl<'w> TableEntities<'w> {
    pub(crate) fn new(indices: &'w [u32], entities: &'w Entities) -> Self {
        TableEntities { indices: indices.iter(), handles: entities.handles() }
    }
}

impl Iterator for TableEntities<'_> {
    type Item = Entity;

    #[inline]
    fn next(&mut self) -> Option<Entity> {
        let &index = self.indices.next()?;
        Some(self.handles.slots()[index as usize].entity(index))
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.indices.size_hint()
    }
}

impl DoubleEndedIterator for TableEntities<'_> {
    #[inline]
    fn next_back(&mut self) -> Option<Entity> {
        let &index = self.indices.next_back()?;
        Some(self.handles.slots()[index as usize].entity(index))
    }
}

impl ExactSizeIterator for TableEntities<'_> {}

impl std::iter::FusedIterator for TableEntities<'_> {}
