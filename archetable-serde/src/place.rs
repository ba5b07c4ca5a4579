//! Putting loaded entities into the world in one step: the values of each
//! table of the save as one [`ColumnBatch`] (one `Vec` per component type),
//! moved into the world's table with one copy per column, every entity in
//! place before any hook runs.

use archetable_core::{AllocatorState, ColumnBatch, Entity, World};

use crate::error::LoadError;
use crate::load::sorted_unique;

/// One table of a save, built: its rows are the saved entities
/// `first .. first + batch.len()` (in the order the loader lists them).
pub(crate) struct LoadedTable {
    pub first: usize,
    pub batch: ColumnBatch,
}

/// Refuses a save that lists an entity twice. Dense indices (a real
/// save's) are checked with one bit each; anything else, or two handles of
/// one index, by sorting.
pub(crate) fn check_unique(saved: &[Entity]) -> Result<(), LoadError> {
    let Some(max) = saved.iter().map(|e| e.index() as usize).max() else { return Ok(()) };
    // The bits cost no more than the handles read from the file.
    if max < saved.len().saturating_mul(16).max(4096) {
        let mut seen = vec![0u64; max / 64 + 1];
        let clash = saved.iter().any(|e| {
            let i = e.index() as usize;
            let (word, bit) = (i / 64, 1u64 << (i % 64));
            let clash = seen[word] & bit != 0;
            seen[word] |= bit;
            clash
        });
        if !clash {
            return Ok(());
        }
    }
    sorted_unique(saved).map(drop)
}

/// How the entities of a load enter the world.
pub(crate) enum Arrival<'a> {
    /// Into an empty world, whose allocator becomes `state`; `bare` are the
    /// entities without components.
    Exact { state: &'a AllocatorState, bare: &'a [Entity] },
    /// Beside the world's own entities: every loaded entity's new handle,
    /// in the order the world's next spawns hand them out
    /// ([`World::peek_entities`]).
    Merge { peeked: &'a [Entity] },
}

/// The saved entities that are in no table (those without components):
/// `handles` holds every entity, the tables' rows among them.
pub(crate) fn bare(handles: &[Entity], tables: &[LoadedTable]) -> Vec<Entity> {
    let mut in_table = vec![false; handles.len()];
    for table in tables {
        in_table[table.first..table.first + table.batch.len()].fill(true);
    }
    handles.iter().zip(&in_table).filter(|&(_, &t)| !t).map(|(&e, _)| e).collect()
}

/// Puts the loaded `tables` into `world` as one step, the rows of each at
/// its slice of `rows` (the tables' entities back to back).
///
/// An exact load restores the allocator state with every entity at its
/// place in its table; a merge makes the handles it peeked live, then
/// fills them. Only then do hooks run; if one panics, the entities go
/// again, the allocator included, and the panic goes on.
pub(crate) fn place_tables(
    world: &mut World,
    rows: &[Entity],
    tables: Vec<LoadedTable>,
    arrival: Arrival<'_>,
) -> Result<(), LoadError> {
    world.all_or_nothing(|world| {
        let batches = tables.into_iter().map(|t| (&rows[t.first..t.first + t.batch.len()], t.batch));
        match arrival {
            Arrival::Exact { state, bare } => {
                world.restore_with_column_batches(state, bare, batches).map_err(LoadError::Allocator)
            }
            Arrival::Merge { peeked } => {
                for &expected in peeked {
                    let made = world.reserve_entity();
                    debug_assert_eq!(made, expected, "a merge makes the handles it peeked");
                }
                world.flush();
                world
                    .insert_column_batches(batches)
                    .expect("merged entities are live, without components, and listed once");
                Ok(())
            }
        }
    })
}
