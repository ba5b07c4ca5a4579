//! Placing loaded tables in the world in one step (model layer).
//!
//! Putting loaded entities into the world in one step: the values of each
//! table of the save as one [`ColumnBatch`] (one `Vec` per component type),
//! moved into the world's table with one copy per column, every entity in
//! place before any hook runs.

use archetable_core::{AllocatorState, ColumnBatch, Entity, World};

use crate::model::column::Boxed;
use crate::model::error::LoadError;
use crate::model::load::sorted_unique;

/// One table of a save, built: its rows go to `handles`.
pub(crate) struct LoadedTable<'h> {
    pub handles: &'h [Entity],
    pub batch: ColumnBatch,
    /// The values of the components in sparse storage, each with the
    /// function that inserts them and the handles they go to (some of the
    /// table's); inserted once every table is in place.
    pub sparse: Vec<(InsertEach, Boxed, Vec<Entity>)>,
}

/// Inserts value `i` of a type-erased `Vec<T>` into entity `i` of a list.
pub(crate) type InsertEach = fn(Boxed, &[Entity], &mut World);

impl<'h> LoadedTable<'h> {
    /// A table of entities at `handles`, filled from `columns`: table
    /// components go into the batch, sparse ones aside, each with the rows
    /// that have a value (`None`: all of them). A table of sparse
    /// components only places no batch: its entities are bare.
    pub(crate) fn build<'c>(
        handles: &'h [Entity],
        columns: impl IntoIterator<Item = (&'h crate::model::column::ColumnFns, Boxed, Option<&'c [u32]>)>,
        bare: &mut Vec<Entity>,
    ) -> LoadedTable<'h> {
        let mut batch = ColumnBatch::new(handles.len());
        let mut sparse = Vec::new();
        for (fns, values, rows) in columns {
            if fns.sparse {
                let to = match rows {
                    None => handles.to_vec(),
                    Some(rows) => rows.iter().map(|&row| handles[row as usize]).collect(),
                };
                sparse.push((fns.insert_each, values, to));
            } else {
                (fns.into_batch)(values, &mut batch);
            }
        }
        if batch.columns() == 0 {
            bare.extend_from_slice(handles);
        }
        LoadedTable { handles, batch, sparse }
    }
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
    let mut sparse = Vec::new();
    let mut batches = Vec::with_capacity(tables.len());
    for table in tables {
        sparse.extend(table.sparse);
        if table.batch.columns() > 0 {
            batches.push((table.handles, table.batch));
        }
    }
    // Once every table is in place, the sparse components go in entity by
    // entity (their hooks run as for any insert).
    let insert_sparse = |world: &mut World| {
        for (insert, values, handles) in sparse {
            insert(values, &handles, world);
        }
    };
    match arrival {
        Arrival::Exact { state, bare } => {
            world.restore_with_column_batches(state, bare, batches).map_err(LoadError::Allocator)?;
            insert_sparse(world);
            Ok(())
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
            insert_sparse(world);
            Ok(())
        }),
    }
}
