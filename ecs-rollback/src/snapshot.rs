//! The ring of snapshots ggrs saves into and loads from, and the checksum
//! of a world.
//!
//! Each slot keeps a world of its own, and a save makes it a copy of the
//! present one in place (`World::clone_from`: every entity with its handle
//! and generation, the allocator's free list, every table and sparse set,
//! the hierarchy lists, the change tick), plus a copy of each rolled-back
//! resource; the slot for a frame is `frame % len`. The copy goes into the
//! memory the slot's world has from earlier saves, so once every slot has
//! held a world of the present size, a save allocates nothing (for the
//! types copied with `clone_from`, see
//! [`RollbackDriver::copy_with_clone_from`](crate::RollbackDriver::copy_with_clone_from)).
//! ggrs keeps at most `max_prediction + 2` frames alive, so a ring a little
//! longer than that never overwrites a frame ggrs may still ask for; each
//! slot remembers its frame and a load checks it.
//!
//! A save also copies the rolled-back event queues and the removal logs
//! `RemovedComponents` reads; a load puts them back and sends their
//! readers back to where they were at the save (`Events::rewind_to`,
//! `World::rewind_removals`).
//!
//! A load copies the slot's world back into the present one, in place too
//! (the slot stays, as ggrs may load the same frame again), and puts the
//! rolled-back resources back. The present world keeps its id, so the
//! schedule's systems and query states stay set up, and its resources, so
//! the skipped ones keep their present values; skipped components are
//! handed to the slot before the copy, so that they come back as they
//! were before the load.
//!
//! The checksum is taken table column by table column. Each slot keeps the
//! hashes of its world's columns, and the ring keeps those of the present
//! world (from its last save, or from the slot its last load restored):
//! a save moves the world's change tick on, and the next save hashes again
//! only the columns whose table's entities changed or whose write stamp
//! ([`Archetype::column_written`](archetable_core::storage::Archetype::column_written),
//! kept for every column, tracked or not) shows a write since.
//!
//! The ring also knows, for each present column, which slots hold the
//! same entities and values in it (set by a save into or a load from that
//! slot, cleared by a write or a change of the table's entities). A save
//! leaves such a column of its slot as it is, and a load leaves such a
//! column of the present world as it is (`World::clone_from_keeping`).

use std::hash::Hasher;

use archetable_core::{ComponentId, Entity, RemovalRecord, StorageType, Tick, World, WorldId};
use ggrs::Frame;

use crate::checksum::StableHasher;
use crate::error::RollbackError;
use crate::registry::{Detail, Registry, Stored};

struct Slot {
    frame: Frame,
    /// Whether `world` holds the save of `frame`.
    saved: bool,
    world: World,
    resources: Vec<Stored>,
    /// The present world's removal logs at the save.
    removals: RemovalRecord,
    checksum: u128,
    /// The hash of each table column of `world`, as of its change tick.
    columns: Hashes,
}

/// The hash of one table's column of one rolled-back component, with the
/// hash of the table's entity list it was taken with; for the present
/// world, also the slots whose copy of the table has the same entities and
/// the same values in this column (bit `i` for slot `i`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ColumnHash {
    table: u32,
    kind: u32,
    entities: u64,
    /// The table's removal count when the hash was taken (never part of
    /// the checksum: it depends on the peer's history, not its state).
    removals: u32,
    values: u128,
    same: u64,
}

/// A present column left alone by a load: its table, its component and
/// the slots it equals.
#[derive(Clone, Copy)]
struct KeptColumn {
    table: u32,
    id: ComponentId,
    same: u64,
}

/// The bit of slot `index` in [`ColumnHash::same`]; none past 64 slots.
fn slot_bit(index: usize) -> u64 {
    if index < 64 {
        1 << index
    } else {
        0
    }
}

/// Whether a column stamped `written` was written at or after `since`.
fn written_since(written: Tick, since: Tick) -> bool {
    written.get().wrapping_sub(since.get()) < 1 << 31
}

/// The column hashes of a world, as it was at change tick `tick` (every
/// later write is stamped with a newer tick), ordered by table then type.
#[derive(Clone, Debug, Default)]
pub(crate) struct Hashes {
    tick: Tick,
    columns: Vec<ColumnHash>,
}

impl Hashes {
    fn find(&self, table: u32, kind: u32) -> Option<&ColumnHash> {
        let at = self.columns.binary_search_by_key(&(table, kind), |c| (c.table, c.kind)).ok()?;
        Some(&self.columns[at])
    }
}

/// What a checksum needs between calls: the present world's column hashes
/// (kept from the last save or load, for the world of that id) and scratch
/// space, so that a checksum allocates nothing once warmed up.
#[derive(Default)]
pub(crate) struct Kept {
    world: Option<WorldId>,
    present: Hashes,
    next: Vec<ColumnHash>,
    ids: Vec<Option<ComponentId>>,
    keep: Vec<KeptColumn>,
}

/// The saved frames, one slot per frame modulo the ring's length.
pub(crate) struct Ring {
    slots: Vec<Slot>,
    kept: Kept,
}

impl Ring {
    pub(crate) fn new(len: usize) -> Self {
        let slots = (0..len.max(1))
            .map(|_| Slot {
                frame: ggrs::NULL_FRAME,
                saved: false,
                world: World::new(),
                resources: Vec::new(),
                removals: RemovalRecord::default(),
                checksum: 0,
                columns: Hashes::default(),
            })
            .collect();
        Ring { slots, kept: Kept::default() }
    }

    /// How many frames the ring keeps.
    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }

    fn index(&self, frame: Frame) -> usize {
        frame.rem_euclid(self.slots.len() as Frame) as usize
    }

    /// Saves `world` as frame `frame`; its checksum. Moves the world's
    /// change tick on first, so that the writes made after the save are
    /// told from those before it.
    pub(crate) fn save(&mut self, world: &mut World, registry: &Registry, frame: Frame) -> Result<u128, RollbackError> {
        let tick = world.next_change_tick();
        let world = &*world;
        let index = self.index(frame);
        // The checksum first: it finds the columns unwritten since the
        // last save or load, which the slot may already hold.
        let checksum = checksum_kept(world, registry, &mut self.kept);
        let bit = slot_bit(index);
        let slot = &mut self.slots[index];
        let (present, ids) = (&self.kept.present.columns, &self.kept.ids);
        let keep = |table: archetable_core::storage::ArchetypeId, id: ComponentId| {
            kind_of(ids, id).is_some_and(|kind| {
                let at = present.binary_search_by_key(&(table.index() as u32, kind), |c| (c.table, c.kind));
                at.is_ok_and(|at| present[at].same & bit != 0)
            })
        };
        slot.world.clone_from_keeping(world, &keep).map_err(|error| match error {
            archetable_core::CloneError::NotCloneable { component } => RollbackError::NotCloneable { name: component },
            archetable_core::CloneError::NoSuchEntity(_) => unreachable!("a whole-world copy names no entity"),
        })?;
        slot.saved = true;
        slot.resources.resize_with(registry.resources.len(), || None);
        for (entry, stored) in registry.resources.iter().zip(&mut slot.resources) {
            (entry.save)(world, stored);
        }
        world.save_removals(&mut slot.removals);
        slot.frame = frame;
        slot.checksum = checksum;
        for column in &mut self.kept.present.columns {
            column.same |= bit;
        }
        self.kept.present.tick = tick;
        slot.columns.tick = tick;
        slot.columns.columns.clone_from(&self.kept.present.columns);
        Ok(slot.checksum)
    }

    /// Makes `world` the snapshot of frame `frame`.
    pub(crate) fn load(&mut self, world: &mut World, registry: &Registry, frame: Frame) -> Result<(), RollbackError> {
        let index = self.index(frame);
        let slot = &mut self.slots[index];
        if !slot.saved || slot.frame != frame {
            return Err(RollbackError::MissingSnapshot { frame });
        }
        for skipped in &registry.skipped_components {
            (skipped.carry)(world, &mut slot.world);
        }
        // The present columns that equal the slot's and were not written
        // since the last save or load stay as they are.
        let bit = slot_bit(index);
        let Kept { world: kept_world, present, ids, keep, .. } = &mut self.kept;
        keep.clear();
        if *kept_world == Some(world.id()) {
            let components = world.components();
            ids.clear();
            ids.extend(registry.components.iter().map(|entry| (entry.id)(components)));
            let tables = world.archetypes().as_slice();
            let mut entities = (u32::MAX, 0u64);
            for column in present.columns.iter().filter(|c| c.same & bit != 0) {
                let Some(id) = ids[column.kind as usize] else { continue };
                let table = &tables[column.table as usize];
                if entities.0 != column.table {
                    let mut e = StableHasher::new();
                    e.write_u32s(table.entity_indices());
                    entities = (column.table, e.finish());
                }
                let unwritten = table.column_written(id).is_some_and(|w| !written_since(w, present.tick));
                let same_rows = entities.1 == column.entities && table.removal_count() == column.removals;
                if unwritten && same_rows && !table.is_empty() {
                    keep.push(KeptColumn { table: column.table, id, same: column.same });
                }
            }
        }
        let kept_columns = &*keep;
        let keeping = |table: archetable_core::storage::ArchetypeId, id: ComponentId| {
            kept_columns.iter().any(|k| k.table == table.index() as u32 && k.id == id)
        };
        world.clone_from_keeping(&slot.world, &keeping).expect("a snapshot is a copy, so it copies back");
        for (entry, stored) in registry.resources.iter().zip(&slot.resources) {
            (entry.load)(world, stored);
        }
        world.rewind_removals(&slot.removals);
        // The world is the slot's now, tables and ticks alike (a copy
        // stamps nothing), so the slot's column hashes are the world's.
        self.kept.world = Some(world.id());
        self.kept.present.tick = slot.columns.tick;
        self.kept.present.columns.clone_from(&slot.columns.columns);
        let Kept { present, ids, keep, .. } = &mut self.kept;
        let tables = world.archetypes().as_slice();
        for column in &mut present.columns {
            column.same = bit;
            // The rows are the slot's now, under the table's present count.
            if let Some(table) = tables.get(column.table as usize) {
                column.removals = table.removal_count();
            }
            let id = ids.get(column.kind as usize).copied().flatten();
            if let Some(k) = keep.iter().find(|k| k.table == column.table && Some(k.id) == id) {
                column.same = k.same;
            }
        }
        Ok(())
    }

    /// The world saved as frame `frame` (without its resources), if that
    /// frame is still kept.
    pub(crate) fn world_of(&self, frame: Frame) -> Option<&World> {
        let slot = &self.slots[self.index(frame)];
        (slot.saved && slot.frame == frame).then_some(&slot.world)
    }

    /// The checksum saved with frame `frame`, if that frame is still kept.
    pub(crate) fn checksum_of(&self, frame: Frame) -> Option<u128> {
        let slot = &self.slots[self.index(frame)];
        (slot.frame == frame && slot.saved).then_some(slot.checksum)
    }
}

/// The checksum of `world`: the allocator (every slot's generation and the
/// free list); then each non-empty table in table order (the order queries
/// visit them), with its length, the hash of its entity list and the hash
/// of each rolled-back component's column, in row order; then each
/// rolled-back component stored in sparse sets (each holder's handle and
/// value, in query order) and each rolled-back resource, in registration
/// order. Hashes every value anew.
pub(crate) fn checksum(world: &World, registry: &Registry) -> u128 {
    checksum_with(world, registry, None, &mut Vec::new(), &mut Vec::new())
}

/// [`checksum`], keeping the hash of each column that has not changed since
/// the hashes in `kept` were taken (same entity list, no value written
/// since), and leaving the new hashes in `kept`.
fn checksum_kept(world: &World, registry: &Registry, kept: &mut Kept) -> u128 {
    let Kept { world: id, present, next, ids, .. } = kept;
    let previous = (*id == Some(world.id())).then_some(&*present);
    let checksum = checksum_with(world, registry, previous, next, ids);
    std::mem::swap(&mut present.columns, next);
    *id = Some(world.id());
    checksum
}

fn checksum_with(
    world: &World,
    registry: &Registry,
    previous: Option<&Hashes>,
    out: &mut Vec<ColumnHash>,
    ids: &mut Vec<Option<ComponentId>>,
) -> u128 {
    let mut h = StableHasher::new();
    hash_allocator(world, &mut h);
    let components = world.components();
    ids.clear();
    ids.extend(registry.components.iter().map(|entry| (entry.id)(components)));
    out.clear();
    for (index, table) in world.archetypes().as_slice().iter().enumerate() {
        if table.is_empty() {
            continue;
        }
        let mut e = StableHasher::new();
        e.write_u32s(table.entity_indices());
        let entities = e.finish();
        h.write_usize(table.len());
        h.write_u64(entities);
        for (kind, (entry, id)) in registry.components.iter().zip(ids.iter()).enumerate() {
            let Some(id) = *id else { continue };
            if !table.contains(id) {
                continue;
            }
            let (table_index, kind) = (index as u32, kind as u32);
            let unchanged = previous.and_then(|previous| {
                let kept = previous.find(table_index, kind)?;
                let unwritten = table.column_written(id).is_some_and(|w| !written_since(w, previous.tick));
                let same_rows = kept.entities == entities && kept.removals == table.removal_count();
                (same_rows && unwritten).then_some((kept.values, kept.same))
            });
            let (values, same) = unchanged.unwrap_or_else(|| {
                let mut v = StableHasher::new();
                (entry.hash_column)(table, id, &mut v);
                (v.finish128(), 0)
            });
            h.write_u32(kind);
            h.write_u128(values);
            out.push(ColumnHash { table: table_index, kind, entities, removals: table.removal_count(), values, same });
        }
    }
    for (kind, (entry, id)) in registry.components.iter().zip(ids.iter()).enumerate() {
        // A set without holders counts as no set: a type registered after
        // a save (and still registered after a load of it) does not change
        // the checksum of the world of that save.
        let held = |id: ComponentId| world.sparse_sets().get(id).is_some_and(|set| !set.is_empty());
        if id.is_some_and(|id| components.info(id).storage() == StorageType::Sparse && held(id)) {
            h.write_usize(kind);
            (entry.hash)(world, &mut h);
        }
    }
    for (kind, entry) in registry.resources.iter().enumerate() {
        h.write_usize(kind);
        (entry.hash)(world, &mut h);
    }
    h.finish128()
}

/// The place of component `id` in the registry's list.
fn kind_of(ids: &[Option<ComponentId>], id: ComponentId) -> Option<u32> {
    ids.iter().position(|&i| i == Some(id)).map(|kind| kind as u32)
}

fn hash_allocator(world: &World, h: &mut StableHasher) {
    let (mut generations, free) = world.allocator_view();
    h.write_usize(generations.len());
    // Two generations to a word.
    while let Some(low) = generations.next() {
        let high = generations.next().map_or(0, |g| g.get());
        h.write_u64(u64::from(low.get()) | (u64::from(high) << 32));
    }
    h.write_u32s(free);
}

fn hash_entities(world: &World, h: &mut StableHasher) {
    hash_allocator(world, h);
    h.write_usize(world.len());
    for entity in world.query::<Entity>() {
        h.write_u64(entity.to_bits());
    }
}

/// The debug record of `world`: one hash per entity (its place in query
/// order), per component value and per resource, for naming the first
/// thing two records disagree on.
pub(crate) fn details(world: &World, registry: &Registry, out: &mut Vec<Detail>) {
    out.clear();
    let mut h = StableHasher::new();
    hash_entities(world, &mut h);
    out.push(Detail { kind: u32::MAX, entity: None, hash: h.finish() });
    for (kind, entry) in registry.components.iter().enumerate() {
        (entry.detail)(world, kind as u32, out);
    }
    let base = registry.components.len();
    for (kind, entry) in registry.resources.iter().enumerate() {
        let mut h = StableHasher::new();
        (entry.hash)(world, &mut h);
        out.push(Detail { kind: (base + kind) as u32, entity: None, hash: h.finish() });
    }
}

#[cfg(test)]
mod tests;
