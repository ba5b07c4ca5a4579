//! Whole tables in one step: a [`ColumnBatch`] holds the values of many
//! entities that have the same components, one `Vec` per component type,
//! and the world moves each `Vec` into its table's column with one copy,
//! the table found and grown once. Save loading is built on this.
//!
//! ```text
//!   batch (3 rows):  Position [p0 p1 p2]   Hp [h0 h1 h2]
//!
//!   world.insert_column_batches([(&[a, b, c][..], batch)])
//!
//!   table (Position, Hp):  entities [ .. a  b  c ]
//!                          Position [ .. p0 p1 p2 ]     one copy per column
//!                          Hp       [ .. h0 h1 h2 ]
//! ```
//!
//! Every entity of every batch is in place before any hook runs; then each
//! gets the hooks of a spawn (`on_add`, then `on_insert`), as for a tuple of
//! the batch's components.

use std::any::{type_name, TypeId};
use std::error::Error;
use std::fmt;

use crate::component::bundle::BundleId;
use crate::component::change::Tick;
use crate::component::required::RequiredValue;
use crate::component::{Component, ComponentId, Components};
use crate::entity::error::AllocatorStateError;
use crate::entity::{AllocatorState, Entity, EntityLocation};
use crate::storage::archetype::{ArchetypeId, Row};
use crate::storage::column::Column;
use crate::world::World;

/// The values of many entities with the same components, column by
/// column: one `Vec` per component type, each with one value per row. Row
/// `r` of every column belongs to the same entity.
///
/// [`World::spawn_column_batch`] spawns the rows as new entities;
/// [`World::insert_column_batches`] fills entities that exist without
/// components (those [`World::restore_allocator_state`] makes, for
/// example), several batches at once. Either way each column is moved into
/// its table with one copy, and the values are not dropped or cloned.
///
/// ```
/// use archetable::prelude::*;
/// use archetable::ColumnBatch;
///
/// #[derive(Component, Debug, PartialEq)] struct Position(f32, f32);
/// #[derive(Component, Debug, PartialEq)] struct Hp(u32);
///
/// let mut world = World::new();
/// let mut batch = ColumnBatch::new(3);
/// batch.add(vec![Position(0.0, 0.0), Position(1.0, 0.0), Position(2.0, 0.0)]).add(vec![Hp(3), Hp(4), Hp(5)]);
/// let spawned = world.spawn_column_batch(batch);
/// assert_eq!(world.get::<Hp>(spawned[1]), Some(&Hp(4)));
/// assert_eq!(world.get::<Position>(spawned[2]), Some(&Position(2.0, 0.0)));
/// ```
pub struct ColumnBatch {
    rows: usize,
    columns: Vec<Box<dyn BatchColumn>>,
}

/// One component type's values in a batch: a `Vec<T>` behind a trait only
/// this module implements.
trait BatchColumn: Send + Sync {
    fn type_id(&self) -> TypeId;

    fn type_name(&self) -> &'static str;

    /// Registers the type in `components`; its id there.
    fn register(&self, components: &mut Components) -> ComponentId;

    /// Whether spawning the type runs hooks even in a world without any:
    /// it has engine hooks or requires other components.
    fn engine_hooked(&self) -> bool;

    /// Moves every value to the end of `column`, added and changed at
    /// `tick`, and leaves the batch column empty.
    ///
    /// # Safety
    /// `column` stores this column's type.
    unsafe fn move_into(&mut self, column: &mut Column, tick: Tick);
}

impl<T: Component> BatchColumn for Vec<T> {
    fn type_id(&self) -> TypeId {
        TypeId::of::<T>()
    }

    fn type_name(&self) -> &'static str {
        type_name::<T>()
    }

    fn register(&self, components: &mut Components) -> ComponentId {
        components.register::<T>()
    }

    fn engine_hooked(&self) -> bool {
        T::ENGINE_HOOKS.is_some() || T::REQUIRES.is_some()
    }

    unsafe fn move_into(&mut self, column: &mut Column, tick: Tick) {
        debug_assert_eq!(column.type_id(), TypeId::of::<T>());
        if column.can_adopt() && self.capacity() != 0 {
            let mut values = std::mem::ManuallyDrop::new(std::mem::take(self));
            let (data, len, capacity) = (values.as_mut_ptr(), values.len(), values.capacity());
            // SAFETY: the column stores `T` (caller) and can adopt; `data`
            // is the buffer of a `Vec<T>` of non-zero capacity (so a real
            // allocation by the global allocator, with `Layout::array::<T>`),
            // whose first `len` values are initialized; the vector is
            // forgotten, so the column is the buffer's only owner.
            unsafe { column.adopt(std::ptr::NonNull::new_unchecked(data.cast()), len, capacity, tick) };
            return;
        }
        column.reserve(self.len());
        // SAFETY: the vector holds `len` initialized `T`s back to back, and
        // `column` stores `T` (caller) and is another allocation; the
        // length is set to zero right after, so each value is moved once
        // and never dropped here.
        unsafe {
            column.append_raw(self.as_ptr().cast(), self.len(), tick);
            self.set_len(0);
        }
    }
}

impl ColumnBatch {
    /// An empty batch of `rows` entities; add a column per component type.
    /// A batch without columns spawns entities without components.
    pub fn new(rows: usize) -> Self {
        ColumnBatch { rows, columns: Vec::new() }
    }

    /// Adds the column of component `T`: `values[r]` goes to row `r`.
    ///
    /// # Panics
    /// If `values` does not hold one value per row, the batch has a column
    /// of `T` already, or `T` uses sparse storage (which has no table
    /// column: insert such components after placing the batch). The values
    /// are dropped then.
    ///
    /// ```should_panic
    /// # use archetable::prelude::*;
    /// # use archetable::ColumnBatch;
    /// # #[derive(Component)] struct Hp(u32);
    /// ColumnBatch::new(2).add(vec![Hp(1)]); // one value for two rows
    /// ```
    #[track_caller]
    pub fn add<T: Component>(&mut self, values: Vec<T>) -> &mut Self {
        assert_eq!(
            values.len(),
            self.rows,
            "a column of `{}` with {} values for a batch of {} rows",
            type_name::<T>(),
            values.len(),
            self.rows
        );
        assert!(!self.has::<T>(), "the batch has a column of `{}` already", type_name::<T>());
        assert!(
            T::STORAGE == crate::component::StorageType::Table,
            "`{}` uses sparse storage, which has no table column; insert it after placing the batch",
            type_name::<T>()
        );
        self.columns.push(Box::new(values));
        self
    }

    /// Number of rows (entities).
    pub fn len(&self) -> usize {
        self.rows
    }

    /// Whether the batch has no rows.
    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    /// Number of component types (columns).
    pub fn columns(&self) -> usize {
        self.columns.len()
    }

    /// Whether the batch has a column of `T`.
    pub fn has<T: Component>(&self) -> bool {
        self.columns.iter().any(|c| c.type_id() == TypeId::of::<T>())
    }
}

impl fmt::Debug for ColumnBatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ColumnBatch")
            .field("rows", &self.rows)
            .field("components", &self.columns.iter().map(|c| c.type_name()).collect::<Vec<_>>())
            .finish()
    }
}

/// Why [`World::insert_column_batches`] refused its batches. Nothing was
/// changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColumnBatchError {
    /// The entity is not alive.
    NoSuchEntity(Entity),
    /// The entity has components already.
    HasComponents(Entity),
    /// The entity is listed twice.
    ListedTwice(Entity),
    /// A batch has another number of rows than entities listed for it.
    RowCount {
        /// Entities listed.
        entities: usize,
        /// Rows of the batch.
        rows: usize,
    },
}

impl fmt::Display for ColumnBatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ColumnBatchError::NoSuchEntity(e) => {
                write!(f, "entity {e} does not exist (despawned or never spawned in this world)")
            }
            ColumnBatchError::HasComponents(e) => write!(f, "entity {e} has components already"),
            ColumnBatchError::ListedTwice(e) => write!(f, "entity {e} is listed twice"),
            ColumnBatchError::RowCount { entities, rows } => {
                write!(f, "{entities} entities listed for a batch of {rows} rows")
            }
        }
    }
}

impl Error for ColumnBatchError {}

/// A batch on its way into the world: its run-time bundle, its table,
/// where each column goes, and the values of the required components it
/// lacks, built before anything moves.
struct Planned {
    bundle: BundleId,
    target: ArchetypeId,
    /// The target column of each batch column, in batch order.
    columns: Box<[u32]>,
    /// For each required component the batch lacks: its target column and
    /// one value per row.
    required: Vec<(u32, Vec<Box<dyn RequiredValue>>)>,
    batch: ColumnBatch,
    hooked: bool,
}

/// Where the rows of the batches go.
enum Handles<'a> {
    /// New handles, allocated in row order.
    Spawn,
    /// These live entities without components, batch by batch.
    Fill(&'a [&'a [Entity]]),
    /// These entities, which a restore made live in the batches' tables
    /// (rows pushed, values to come).
    Restored(&'a [&'a [Entity]]),
}

impl World {
    /// Spawns one entity per row of `batch` and returns their handles, in
    /// row order: one table lookup, each column grown once and moved in
    /// with one copy. Runs the spawn hooks of each entity (`on_add`, then
    /// `on_insert`, as for a tuple of the batch's components) once all are
    /// in place; an entity despawned by an earlier one's hook commands gets
    /// none. Required components the batch lacks are built first, one per
    /// row.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # use archetable::ColumnBatch;
    /// # #[derive(Component, Debug, PartialEq)] struct Hp(u32);
    /// let mut world = World::new();
    /// let mut batch = ColumnBatch::new(1000);
    /// batch.add((0..1000).map(Hp).collect());
    /// let spawned = world.spawn_column_batch(batch);
    /// assert_eq!((world.len(), world.get::<Hp>(spawned[999])), (1000, Some(&Hp(999))));
    /// ```
    ///
    /// # Panics
    /// If the entity index space cannot hold the rows (before anything
    /// changes), or a required component's constructor or a hook panics
    /// (then the batch's values are dropped, and the entities whose hooks
    /// ran stay).
    pub fn spawn_column_batch(&mut self, batch: ColumnBatch) -> Vec<Entity> {
        self.flush();
        let rows = batch.rows;
        let spare = self.entities_mut().spare();
        assert!(rows <= spare, "entity index space exhausted: {rows} entities asked for, room for {spare}");
        let planned = vec![self.plan_batch(batch)];
        self.reserve_batches(&planned);
        let mut spawned = Vec::with_capacity(rows);
        self.place_batches(planned, Handles::Spawn, &mut spawned);
        spawned
    }

    /// Fills live entities that have no components with the rows of
    /// batches: `batches[i].1`'s row `r` goes to `batches[i].0[r]`. Each
    /// batch takes one table lookup and one copy per column. Such entities
    /// come from [`World::restore_allocator_state`], from reserved handles
    /// once [`World::flush`]ed, or from `spawn(())`.
    ///
    /// Checks every entity first (alive, without components, listed once,
    /// one per row) and on error changes nothing. Then every entity of
    /// every batch is placed before any hook runs; each then gets the
    /// hooks of a spawn of the batch's components (`on_add`, then
    /// `on_insert`), batch by batch and row by row. An entity despawned by
    /// an earlier one's hook commands gets none. Required components a
    /// batch lacks are built first, one per row.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # use archetable::ColumnBatch;
    /// # #[derive(Component, Debug, PartialEq)] struct Hp(u32);
    /// # #[derive(Component, Debug, PartialEq)] struct Name(&'static str);
    /// let mut world = World::new();
    /// let (a, b, c) = (world.spawn(()), world.spawn(()), world.spawn(()));
    /// let mut hp = ColumnBatch::new(2);
    /// hp.add(vec![Hp(1), Hp(2)]);
    /// let mut named = ColumnBatch::new(1);
    /// named.add(vec![Hp(3)]).add(vec![Name("ogre")]);
    /// world.insert_column_batches([(&[c, a][..], hp), (&[b][..], named)]).unwrap();
    /// assert_eq!((world.get::<Hp>(a), world.get::<Hp>(c)), (Some(&Hp(2)), Some(&Hp(1))));
    /// assert_eq!(world.get::<Name>(b), Some(&Name("ogre")));
    /// ```
    ///
    /// # Panics
    /// If a required component's constructor or a hook panics: as for
    /// [`World::spawn_column_batch`]. Run it in
    /// [`World::all_or_nothing`] to take the entities back as well.
    pub fn insert_column_batches<'a>(
        &mut self,
        batches: impl IntoIterator<Item = (&'a [Entity], ColumnBatch)>,
    ) -> Result<(), ColumnBatchError> {
        self.flush();
        let (handles, batches): (Vec<&[Entity]>, Vec<ColumnBatch>) = batches.into_iter().unzip();
        self.check_fill(&handles, &batches)?;
        let planned: Vec<Planned> = batches.into_iter().map(|batch| self.plan_batch(batch)).collect();
        self.reserve_batches(&planned);
        self.place_batches(planned, Handles::Fill(&handles), &mut Vec::new());
        Ok(())
    }

    /// Rebuilds this empty world's entities in one step, as
    /// [`World::restore_allocator_state`] followed by
    /// [`World::insert_column_batches`] would, without the detour through
    /// the table of entities without components: the allocator becomes a
    /// copy of `state`, the entities of `bare` live without components,
    /// and the rows of `batches[i].1` live at `batches[i].0`, each batch's
    /// columns moved into its table with one copy (or none, for a table it
    /// fills alone: its buffers are taken over). For loading saves.
    ///
    /// Checks the state and the handles first (as
    /// `restore_allocator_state` does) and on error changes nothing; the
    /// batches are dropped. Then the hooks run as for
    /// `insert_column_batches`.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # use archetable::ColumnBatch;
    /// # #[derive(Component, Debug, PartialEq)] struct Hp(u32);
    /// let mut world = World::new();
    /// let all: Vec<Entity> = (0..4).map(|i| world.spawn(Hp(i))).collect();
    /// world.despawn(all[1]).unwrap();
    /// let bare = world.spawn(());
    ///
    /// let mut copy = World::new();
    /// let mut hp = ColumnBatch::new(3);
    /// hp.add(vec![Hp(0), Hp(2), Hp(3)]);
    /// let dressed = [all[0], all[2], all[3]];
    /// copy.restore_with_column_batches(&world.allocator_state(), &[bare], [(&dressed[..], hp)]).unwrap();
    /// assert_eq!(copy.get::<Hp>(all[2]), Some(&Hp(2)));
    /// assert!(copy.contains(bare) && !copy.contains(all[1]));
    /// assert_eq!(copy.spawn(Hp(9)), world.spawn(Hp(9)));
    /// ```
    ///
    /// # Panics
    /// If a batch has another number of rows than entities listed for it
    /// (before anything changes), or as `insert_column_batches`.
    pub fn restore_with_column_batches<'a>(
        &mut self,
        state: &AllocatorState,
        bare: &[Entity],
        batches: impl IntoIterator<Item = (&'a [Entity], ColumnBatch)>,
    ) -> Result<(), AllocatorStateError> {
        self.flush();
        if !self.is_empty() {
            return Err(AllocatorStateError::WorldNotEmpty);
        }
        let (handles, batches): (Vec<&[Entity]>, Vec<ColumnBatch>) = batches.into_iter().unzip();
        for (entities, batch) in handles.iter().zip(&batches) {
            let (entities, rows) = (entities.len(), batch.rows);
            assert_eq!(entities, rows, "{entities} entities listed for a batch of {rows} rows");
        }
        let planned: Vec<Planned> = batches.into_iter().map(|batch| self.plan_batch(batch)).collect();
        self.reserve_batches(&planned);
        // Where each block of entities goes: the rows after those already
        // there (or after an earlier batch's, for two of one table).
        let (entities, _, archetypes, _) = self.storage_mut();
        let mut next_row: Vec<(ArchetypeId, usize)> = Vec::new();
        let mut row_for = |archetype: ArchetypeId, rows: usize| {
            let at = match next_row.iter_mut().find(|(a, _)| *a == archetype) {
                Some(at) => at,
                None => {
                    next_row.push((archetype, archetypes.get(archetype).len()));
                    next_row.last_mut().expect("just pushed")
                }
            };
            at.1 += rows;
            (at.1 - rows) as u32
        };
        let mut blocks = vec![(bare, ArchetypeId::EMPTY, row_for(ArchetypeId::EMPTY, bare.len()))];
        for (plan, list) in planned.iter().zip(&handles) {
            blocks.push((list, plan.target, row_for(plan.target, list.len())));
        }
        archetypes.get_mut(ArchetypeId::EMPTY).reserve_entities(bare.len());
        entities.restore_blocks(state, &blocks)?;
        for &(list, archetype, _) in &blocks {
            archetypes.get_mut(archetype).extend_entities(list);
        }
        self.place_batches(planned, Handles::Restored(&handles), &mut Vec::new());
        Ok(())
    }

    /// Checks that `handles[i]` lists one live entity without components
    /// per row of `batches[i]`, none twice.
    fn check_fill(&mut self, handles: &[&[Entity]], batches: &[ColumnBatch]) -> Result<(), ColumnBatchError> {
        let empty_rows = self.archetypes().get(ArchetypeId::EMPTY).len();
        // One mark per row of the empty table: a live entity there is
        // listed twice exactly when its row is marked twice.
        let mut marked = vec![false; empty_rows];
        for (&entities, batch) in handles.iter().zip(batches) {
            if entities.len() != batch.rows {
                return Err(ColumnBatchError::RowCount { entities: entities.len(), rows: batch.rows });
            }
            for &entity in entities {
                let location = self.location(entity).ok_or(ColumnBatchError::NoSuchEntity(entity))?;
                if location.archetype != ArchetypeId::EMPTY {
                    return Err(ColumnBatchError::HasComponents(entity));
                }
                if std::mem::replace(&mut marked[location.row.index()], true) {
                    return Err(ColumnBatchError::ListedTwice(entity));
                }
            }
        }
        Ok(())
    }

    /// Registers the batch's components and run-time bundle, finds its
    /// table, and builds the values of the required components it lacks
    /// (user code, which may panic: nothing has moved yet).
    fn plan_batch(&mut self, batch: ColumnBatch) -> Planned {
        let (_, components, archetypes, bundles) = self.storage_mut();
        let ids: Vec<ComponentId> = batch.columns.iter().map(|c| c.register(components)).collect();
        let bundle = bundles.register_dynamic(
            std::any::TypeId::of::<crate::storage::builder::EntityBuilder>(),
            &ids,
            components,
        );
        let info = bundles.get(bundle);
        let target = archetypes.insert_edge(ArchetypeId::EMPTY, info, components);
        let edge = archetypes.edges(ArchetypeId::EMPTY).inserting(bundle);
        let columns = edge.columns.clone();
        let wanted: Vec<(u32, u32)> = edge.required.to_vec();
        let hooked = batch.columns.iter().any(|c| c.engine_hooked());
        let ctors: Vec<_> =
            wanted.iter().map(|&(i, column)| (column, info.required()[i as usize].ctor.clone())).collect();
        let required =
            ctors.into_iter().map(|(column, ctor)| (column, (0..batch.rows).map(|_| ctor()).collect())).collect();
        Planned { bundle, target, columns, required, batch, hooked }
    }

    /// Checks that every batch column goes to a column of its own type,
    /// and makes room in the tables for every batch (a table that one
    /// batch fills from empty takes over that batch's buffers instead):
    /// once values move, nothing may panic.
    fn reserve_batches(&mut self, planned: &[Planned]) {
        let (_, components, archetypes, _) = self.storage_mut();
        let mut room: Vec<(ArchetypeId, usize)> = Vec::new();
        for plan in planned {
            let table = archetypes.get(plan.target);
            for (column, &to) in plan.batch.columns.iter().zip(plan.columns.iter()) {
                let id = table.components()[to as usize];
                assert_eq!(column.type_id(), components.info(id).type_id(), "a batch column sent to another type");
            }
            match room.iter_mut().find(|(target, _)| *target == plan.target) {
                Some((_, rows)) => *rows += plan.batch.rows,
                None => room.push((plan.target, plan.batch.rows)),
            }
        }
        for &(target, rows) in &room {
            let table = archetypes.get_mut(target);
            // A table that one batch fills from empty takes over the
            // batch's own buffers: no copy, no second allocation.
            let sole = planned.iter().filter(|p| p.target == target).count() == 1;
            if sole && table.own_columns_for_adoption(rows) {
                for column in table.columns_mut() {
                    if column.can_adopt() {
                        column.reserve_ticks(rows);
                    } else {
                        // A zero-sized type: room without memory.
                        column.reserve(rows);
                    }
                }
            } else {
                // The table grows as a whole (its columns share one block).
                table.reserve(rows);
            }
        }
    }

    /// Moves the planned batches into their tables, at new handles, at the
    /// listed entities, or beside the entities a restore already placed,
    /// pushing new handles to `spawned`; then runs the hooks. The caller
    /// checked the batches and made room for them
    /// ([`World::reserve_batches`]): once values move, nothing may panic.
    fn place_batches(&mut self, planned: Vec<Planned>, handles: Handles<'_>, spawned: &mut Vec<Entity>) {
        let tick = self.change_tick();
        let (entities, _, archetypes, _) = self.storage_mut();
        if let Handles::Fill(lists) = handles {
            // Out of the empty table, last listed first: a block at the end
            // of the table (a restored save's order) leaves it with pops.
            let empty = archetypes.get_mut(ArchetypeId::EMPTY);
            for &entity in lists.iter().rev().flat_map(|list| list.iter().rev()) {
                let row = entities.get(entity).expect("checked alive").row;
                if let Some(moved) = empty.remove_bare_row(row) {
                    entities.set_location(moved, EntityLocation { archetype: ArchetypeId::EMPTY, row });
                }
            }
        }
        let mut done: Vec<(BundleId, usize, bool)> = Vec::with_capacity(planned.len());
        for (i, mut plan) in planned.into_iter().enumerate() {
            let table = archetypes.get_mut(plan.target);
            let first = table.len();
            match handles {
                Handles::Spawn => {
                    for r in 0..plan.batch.rows {
                        let row = Row((first + r) as u32);
                        let entity = entities.alloc(EntityLocation { archetype: plan.target, row });
                        table.push_entity(entity);
                        spawned.push(entity);
                    }
                }
                Handles::Fill(lists) => {
                    for &entity in lists[i] {
                        let row = table.push_entity(entity);
                        entities.set_location(entity.index(), EntityLocation { archetype: plan.target, row });
                    }
                }
                Handles::Restored(_) => {}
            }
            let columns = table.columns_mut();
            for (column, &to) in plan.batch.columns.iter_mut().zip(plan.columns.iter()) {
                // SAFETY: the target column stores the batch column's type
                // (asserted above, by type id), and room was reserved.
                unsafe { column.move_into(&mut columns[to as usize], tick) };
            }
            for (to, values) in plan.required {
                for value in values {
                    columns[to as usize].push_required(value, tick);
                }
            }
            done.push((plan.bundle, plan.batch.rows, plan.hooked));
        }
        let hooked = done.iter().any(|d| d.2);
        if !(self.hooks.is_active() || hooked) {
            return;
        }
        self.with_placed_lists(|world| world.fire_batch_hooks(&done, spawned, &handles));
    }

    /// The spawn hooks of the rows `place` wrote, batch by batch.
    fn fire_batch_hooks(&mut self, done: &[(BundleId, usize, bool)], spawned: &[Entity], handles: &Handles<'_>) {
        let mut next = 0;
        for (i, &(bundle, rows, _)) in done.iter().enumerate() {
            // A batch none of whose components has a hook or an observer
            // (the usual case in a world whose only hooks are the engine's
            // own, for other types) skips the per-entity calls.
            let info = self.bundle_info(bundle);
            let ids: Vec<ComponentId> =
                info.components().iter().copied().chain(info.required().iter().map(|r| r.id)).collect();
            if !ids.into_iter().any(|id| self.reacts_to_insert(id)) {
                next += rows;
                continue;
            }
            for r in 0..rows {
                let entity = match handles {
                    Handles::Spawn => spawned[next + r],
                    Handles::Fill(lists) | Handles::Restored(lists) => lists[i][r],
                };
                if self.contains(entity) {
                    self.fire_insert_hooks(bundle, entity, &crate::world::hooks::Before::NOTHING);
                }
            }
            next += rows;
        }
    }
}
