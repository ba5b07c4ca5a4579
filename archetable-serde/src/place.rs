//! Putting loaded entities into the world in one step: the values of each
//! table of the save as one [`ColumnBatch`] (one `Vec` per component type),
//! moved into the world's table with one copy per column, every entity in
//! place before any hook runs.

use archetable_core::{AllocatorState, ColumnBatch, Entity, World};

use crate::error::LoadError;
use crate::load::sorted_unique;

/// One table of a save, built: its rows go to `handles`.
pub(crate) struct LoadedTable<'h> {
    pub handles: &'h [Entity],
    pub batch: ColumnBatch,
}

/// Refuses a save that lists an entity twice; `lists` hold every saved
/// entity. Dense indices (a real save's) are checked with one bit each;
/// anything else, or two handles of one index, by sorting.
pub(crate) fn check_unique(lists: &[&[Entity]]) -> Result<(), LoadError> {
    let all = || lists.iter().flat_map(|list| list.iter());
    let Some(max) = all().map(|e| e.index() as usize).max() else { return Ok(()) };
    let count: usize = lists.iter().map(|list| list.len()).sum();
    // The bits cost no more than the handles read from the file.
    if max < count.saturating_mul(16).max(4096) {
        let mut seen = vec![0u64; max / 64 + 1];
        let clash = all().any(|e| {
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
    sorted_unique(&all().copied().collect::<Vec<_>>()).map(drop)
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

/// Puts the loaded `tables` into `world` as one step, the rows of each at
/// its handles.
///
/// An exact load restores the allocator state with every entity at its
/// place in its table; a merge makes the handles it peeked live, then
/// fills them. Only then do hooks run; if one panics during a merge, the
/// entities go again, the allocator included, and the panic goes on. (An
/// exact load fills a world of its own, which its caller drops on error.)
pub(crate) fn place_tables(
    world: &mut World,
    tables: Vec<LoadedTable<'_>>,
    arrival: Arrival<'_>,
) -> Result<(), LoadError> {
    let batches = tables.into_iter().map(|t| (t.handles, t.batch));
    match arrival {
        Arrival::Exact { state, bare } => {
            world.restore_with_column_batches(state, bare, batches).map_err(LoadError::Allocator)
        }
        Arrival::Merge { peeked } => world.all_or_nothing(|world| {
            for &expected in peeked {
                let made = world.reserve_entity();
                debug_assert_eq!(made, expected, "a merge makes the handles it peeked");
            }
            world.flush();
            world
                .insert_column_batches(batches)
                .expect("merged entities are live, without components, and listed once");
            Ok(())
        }),
    }
}
