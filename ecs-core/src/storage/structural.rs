//! Structural changes: writing a bundle into a new row, inserting one into
//! an entity (moving it to a wider archetype), and taking one out (moving it
//! to a narrower one). Each follows an edge of the archetype graph, whose
//! cached column maps say where every value goes.

use std::any::TypeId;
use std::mem::ManuallyDrop;

use crate::component::bundle::{Bundle, BundleId, BundleInfo, Bundles, ComponentReader, ComponentWriter};
use crate::component::change::Tick;
use crate::component::required::RequiredValue;
use crate::component::{Component, ComponentId, Components, StorageType};
use crate::entity::error::ComponentError;
use crate::entity::{Entities, Entity, EntityLocation};
use crate::storage::archetype::{Archetype, ArchetypeId, Archetypes, Row};
use crate::storage::builder::EntityBuilder;
use crate::storage::column::{Column, Panics};
use crate::storage::graph::{InsertEdge, SPARSE_COLUMN};
use crate::storage::pool::{Pools, ReleaseFields};
use crate::storage::sparse::SparseSets;

/// The sparse half of a bundle write or read: the world's sparse sets, the
/// entity, and the bundle's component ids (to find each sparse one's set).
struct SparsePart<'a> {
    sets: &'a mut SparseSets,
    ids: &'a [ComponentId],
    entity: Entity,
}

/// Appends each value it receives to the next column of a list, or, for a
/// sparse component, to its sparse set.
struct PushColumns<'a> {
    columns: &'a mut [Column],
    /// The column of each bundle component, in component order
    /// (`SPARSE_COLUMN` for a sparse one).
    targets: &'a [u32],
    next: usize,
    /// The tick the values are added at.
    tick: Tick,
    sparse: SparsePart<'a>,
}

impl ComponentWriter for PushColumns<'_> {
    #[inline(always)]
    fn write<C: Component>(&mut self, value: C) {
        let i = self.next;
        self.next += 1;
        if C::STORAGE == StorageType::Sparse {
            let sparse = &mut self.sparse;
            let set = sparse.sets.get_mut(sparse.ids[i]).expect("sparse sets are made before the write");
            // SAFETY: the `i`-th value is of the `i`-th component's type (the
            // `Bundle` contract), whose set this is; the entity is alive. The
            // writer is only used for entities without the component (a
            // spawn, or an insert that adds every component), so nothing is
            // replaced, and the set has room (`reserve_sparse`).
            let replaced = unsafe { set.insert_typed(sparse.entity, value, self.tick) };
            debug_assert!(replaced.is_none(), "a sparse component written twice");
            std::mem::forget(replaced);
            return;
        }
        let column = &mut self.columns[self.targets[i] as usize];
        // SAFETY: the `Bundle` contract makes the `i`-th value written a
        // value of the `i`-th component, and `targets` maps it to that
        // component's column (built from the same component order).
        unsafe { column.push_typed(value, self.tick) };
    }
}

/// Moves each value it is asked for out of one row of a list of columns,
/// or, for a sparse component, out of its sparse set.
struct ReadColumns<'a> {
    columns: &'a [Column],
    /// The column of each bundle component, in component order.
    sources: &'a [u32],
    row: usize,
    next: usize,
    sparse: SparsePart<'a>,
}

impl ComponentReader for ReadColumns<'_> {
    #[inline(always)]
    fn read<C: Component>(&mut self) -> C {
        let i = self.next;
        self.next += 1;
        if C::STORAGE == StorageType::Sparse {
            let sparse = &mut self.sparse;
            // SAFETY: the set of the `i`-th component stores `C` (the
            // `Bundle` contract); the caller checked the entity has a value.
            let value = sparse.sets.get_mut(sparse.ids[i]).and_then(|set| unsafe { set.take_typed(sparse.entity) });
            return value.expect("the entity has every sparse component it is read from");
        }
        let column = &self.columns[self.sources[i] as usize];
        // SAFETY: as for `PushColumns`, the column stores `C`; the row is live
        // and each column is read once, after which the caller forgets the
        // value (`take`).
        unsafe { column.read_typed(self.row) }
    }
}

/// Makes the sparse sets of `info`'s sparse components and room in each for
/// one more value, for an entity whose index is at most `bound`: once the
/// write starts, nothing allocates.
#[inline]
fn reserve_sparse(info: &BundleInfo, sets: &mut SparseSets, components: &Components, bound: u32) {
    for id in info.sparse_components() {
        sets.get_or_insert(components.info(id)).reserve_for(bound);
    }
}

/// Whether the live `entity` has component `id`, wherever it is stored.
#[inline]
pub(crate) fn has_component(
    archetypes: &Archetypes,
    sets: &SparseSets,
    components: &Components,
    location: EntityLocation,
    entity: Entity,
    id: ComponentId,
) -> bool {
    if components.info(id).is_sparse() {
        sets.get(id).is_some_and(|set| set.contains(entity))
    } else {
        archetypes[location.archetype].contains(id)
    }
}

/// Builds the values of the required components that inserting `info`
/// along `edge` adds, before any table changes.
#[cold]
#[inline(never)]
fn required_values(info: &BundleInfo, edge: &InsertEdge) -> Vec<Box<dyn RequiredValue>> {
    edge.required.iter().map(|&(i, _)| (info.required()[i as usize].ctor)()).collect()
}

/// Appends the values [`required_values`] built to their columns of the
/// edge's target: the row being written.
#[cold]
#[inline(never)]
fn push_required(values: Vec<Box<dyn RequiredValue>>, edge: &InsertEdge, columns: &mut [Column], tick: Tick) {
    for (value, &(_, column)) in values.into_iter().zip(edge.required.iter()) {
        columns[column as usize].push_required(value, tick);
    }
}

/// Spawns `bundle` into its spawn archetype (the target of inserting it into
/// the empty archetype) and returns the new entity.
#[inline]
pub(crate) fn spawn<B: Bundle>(
    bundle: B,
    info: &BundleInfo,
    archetypes: &mut Archetypes,
    entities: &mut Entities,
    components: &Components,
    sparse: &mut SparseSets,
    tick: Tick,
) -> Entity {
    spawn_at(bundle, info, archetypes, entities, components, sparse, tick).0
}

/// [`spawn`], also returning where the entity is.
#[inline(always)]
pub(crate) fn spawn_at<B: Bundle>(
    bundle: B,
    info: &BundleInfo,
    archetypes: &mut Archetypes,
    entities: &mut Entities,
    components: &Components,
    sparse: &mut SparseSets,
    tick: Tick,
) -> (Entity, EntityLocation) {
    let (archetype, edge) = archetypes.spawn_table(info, components);
    spawn_along(bundle, info, archetype, edge, entities, components, sparse, tick)
}

/// Spawns `bundle` into `target`, which must be its spawn archetype (from
/// [`Archetypes::insert_edge`] on the empty archetype); returns the new
/// entity and where it is.
// As for `insert`: the world's parts travel separately.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) fn spawn_into_at<B: Bundle>(
    bundle: B,
    info: &BundleInfo,
    archetypes: &mut Archetypes,
    entities: &mut Entities,
    components: &Components,
    sparse: &mut SparseSets,
    target: ArchetypeId,
    tick: Tick,
) -> (Entity, EntityLocation) {
    let (archetype, edges) = archetypes.table_and_edges(target, ArchetypeId::EMPTY);
    let edge = edges.inserting(info.id());
    assert_eq!(edge.target, target, "spawn target is not the bundle's spawn archetype");
    spawn_along(bundle, info, archetype, edge, entities, components, sparse, tick)
}

/// Spawns `bundle` into `archetype` along `edge`, the bundle's insert edge
/// out of the empty archetype, which leads there; returns the new entity
/// and where it is.
// As for `insert`: the world's parts travel separately.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn spawn_along<B: Bundle>(
    bundle: B,
    info: &BundleInfo,
    archetype: &mut Archetype,
    edge: &InsertEdge,
    entities: &mut Entities,
    components: &Components,
    sparse: &mut SparseSets,
    tick: Tick,
) -> (Entity, EntityLocation) {
    debug_assert_eq!(info.type_id(), TypeId::of::<B>());
    debug_assert_eq!(archetype.id(), edge.target);
    let target = edge.target;
    // `None` when nothing is required: no vector to drop on the common path.
    let required = if edge.required.is_empty() { None } else { Some(required_values(info, edge)) };
    // Grow first: once the row is started, nothing may panic.
    archetype.reserve(1);
    if info.has_sparse() {
        reserve_sparse(info, sparse, components, entities.next_index_bound());
    }
    let row = Row(archetype.len() as u32);
    let location = EntityLocation { archetype: target, row };
    let entity = entities.alloc(location);
    archetype.push_entity(entity);
    if let Some(required) = required {
        push_required(required, edge, archetype.columns_mut(), tick);
    }
    bundle.write_components(&mut PushColumns {
        columns: archetype.columns_mut(),
        targets: &edge.columns,
        next: 0,
        tick,
        sparse: SparsePart { sets: sparse, ids: info.components(), entity },
    });
    (entity, location)
}

/// Inserts `bundle` into the live `entity` at `location`: moves it to the
/// archetype that has the bundle's components as well as its own, then
/// writes each component, adding it or overwriting the old value, which is
/// dropped (or reset and pooled, for a pooled type). The tables and the
/// entity table are consistent before any old value is dropped or reset.
/// Every written value counts as changed at `tick`.
// The world's parts travel separately so each can be borrowed on its own.
#[allow(clippy::too_many_arguments)]
pub(crate) fn insert<B: Bundle>(
    bundle: B,
    info: &BundleInfo,
    archetypes: &mut Archetypes,
    entities: &mut Entities,
    components: &Components,
    entity: Entity,
    location: EntityLocation,
    tick: Tick,
    pools: &mut Pools,
    sparse: &mut SparseSets,
) {
    debug_assert_eq!(info.type_id(), TypeId::of::<B>());
    let source = location.archetype;
    let target = archetypes.insert_edge(source, info, components);
    if info.has_sparse() {
        reserve_sparse(info, sparse, components, entity.index());
    }
    let sparse = SparsePart { sets: sparse, ids: info.components(), entity };
    if target == source {
        // Every table component exists: overwrite in place.
        let (archetype, edges) = archetypes.table_and_edges(source, source);
        let edge = edges.inserting(info.id());
        overwrite(
            bundle,
            info,
            archetype.columns_mut(),
            location.row,
            &edge.columns,
            &edge.existed,
            components,
            tick,
            pools,
            sparse,
        );
        return;
    }
    let (src, dst, edges) = archetypes.pair_mut(source, target);
    let edge = edges.inserting(info.id());
    // `None` when nothing is required: no vector to drop on the common path.
    let required = if edge.required.is_empty() { None } else { Some(required_values(info, edge)) };
    // SAFETY: `location.row` is the entity's live row; the insert edge's map
    // sends every source column to the target column of the same component
    // (no `NO_COLUMN`: the target has every source component); the columns
    // the map does not name are the bundle's new components and its new
    // required ones, written below.
    let (row, moved) = unsafe { src.move_row(location.row, dst, &edge.move_map) };
    record_move(entities, entity, moved, location, EntityLocation { archetype: target, row });
    // Required values first: `overwrite` ends by dropping old values, whose
    // destructors may panic, and the row must be complete by then.
    if let Some(required) = required {
        push_required(required, edge, dst.columns_mut(), tick);
    }
    if edge.adds_only {
        let columns = dst.columns_mut();
        bundle.write_components(&mut PushColumns { columns, targets: &edge.columns, next: 0, tick, sparse });
    } else {
        overwrite(bundle, info, dst.columns_mut(), row, &edge.columns, &edge.existed, components, tick, pools, sparse);
    }
}

/// Writes each component of `bundle` into `row`: appended where `existed`
/// says the entity lacked it (that column ends at `row`), swapped in where it
/// had it. Then drops the old values (or pools them), which the swap left in
/// the bundle's memory. Both count as writes at `tick`.
// As for `insert`: the world's parts travel separately.
#[allow(clippy::too_many_arguments)]
fn overwrite<B: Bundle>(
    bundle: B,
    info: &BundleInfo,
    columns: &mut [Column],
    row: Row,
    targets: &[u32],
    existed: &[bool],
    components: &Components,
    tick: Tick,
    pools: &mut Pools,
    sparse: SparsePart<'_>,
) {
    let r = row.index();
    let mut bundle = ManuallyDrop::new(bundle);
    let mut field = 0;
    // A sparse component exists or not per entity: its flag is set as its
    // value is written.
    // Small bundles keep the flags on the stack: a sparse insert every
    // frame should not allocate.
    let mut on_stack = [false; 16];
    let mut on_heap = Vec::new();
    let existed_now: &mut [bool] = match existed.len() {
        _ if !info.has_sparse() => &mut [],
        n if n <= on_stack.len() => &mut on_stack[..n],
        _ => {
            on_heap.resize(existed.len(), false);
            &mut on_heap
        }
    };
    existed_now.copy_from_slice(if info.has_sparse() { existed } else { &[] });
    let SparsePart { sets, ids, entity } = sparse;
    // SAFETY: `bundle` is a valid `B` and, by the `Bundle` contract, its
    // `field`-th pointer is a value of the `field`-th component, whose column
    // is `targets[field]` (or whose sparse set is `ids[field]`'s, with room
    // made by `reserve_sparse`). A new component's column ends at `r` and an
    // existing one holds a value at `r`: asserted before each write. Every
    // value is moved out of the bundle or swapped with the old one.
    unsafe {
        B::get_components(&mut *bundle, &mut |ptr| {
            let target = targets[field];
            if target == SPARSE_COLUMN {
                let set = sets.get_mut(ids[field]).expect("sparse sets are made before the write");
                existed_now[field] = set.insert(entity, ptr, tick);
                field += 1;
                return;
            }
            let column = &mut columns[target as usize];
            if existed[field] {
                assert!(r < column.len(), "overwritten component has no value");
                column.swap_value(r, ptr, tick);
            } else {
                assert_eq!(column.len(), r, "added component column out of step");
                column.push(ptr, tick);
            }
            field += 1;
        });
    }
    let existed = if info.has_sparse() { &*existed_now } else { existed };
    // Every table is consistent now; drop the replaced values, which sit in
    // the bundle's memory. If one destructor panics, the guard drops the
    // rest while unwinding.
    // SAFETY: the bundle's memory is ours (`ManuallyDrop`); the fields of
    // existing components hold the old values, swapped in, valid and owned
    // by nobody else; the others were moved into columns and are skipped.
    unsafe { ReleaseFields::new(&raw mut *bundle, info.components(), Some(existed), components, pools) }
        .release_remaining();
}

/// Takes the components of bundle `B` out of the live `entity` at
/// `location` and moves the entity to the archetype without them.
pub(crate) fn take<B: Bundle>(
    info: &BundleInfo,
    archetypes: &mut Archetypes,
    entities: &mut Entities,
    components: &Components,
    entity: Entity,
    location: EntityLocation,
    sparse: &mut SparseSets,
) -> Result<B, ComponentError> {
    debug_assert_eq!(info.type_id(), TypeId::of::<B>());
    let source = location.archetype;
    let has = |id| has_component(archetypes, sparse, components, location, entity, id);
    if let Some(&missing) = info.components().iter().find(|&&id| !has(id)) {
        return Err(ComponentError::MissingComponent { entity, component: components.name(missing) });
    }
    let target = archetypes.remove_edge(source, info, components);
    let sparse = SparsePart { sets: sparse, ids: info.components(), entity };
    if target == source {
        // No table component: nothing moves (sparse values are read out of
        // their sets).
        let (src, edges) = archetypes.table_and_edges(source, source);
        let sources = &edges.removing(info.id()).columns;
        let mut reader =
            ReadColumns { columns: src.columns_mut(), sources, row: location.row.index(), next: 0, sparse };
        return Ok(B::read_components(&mut reader));
    }
    let (src, dst, edges) = archetypes.pair_mut(source, target);
    let edge = edges.removing(info.id());
    // Grow the target before reading: once the values are moved out, an
    // allocation failure must not unwind and drop them a second time.
    dst.reserve(1);
    let value = B::read_components(&mut ReadColumns {
        columns: src.columns_mut(),
        sources: &edge.columns,
        row: location.row.index(),
        next: 0,
        sparse,
    });
    // SAFETY: `location.row` is live; the remove edge's map sends each kept
    // column to the target column of the same component and marks the
    // removed ones `NO_COLUMN`, whose values were just moved out into
    // `value`; the target has no column the source lacks.
    let (row, moved) = unsafe { src.move_row(location.row, dst, &edge.move_map) };
    record_move(entities, entity, moved, location, EntityLocation { archetype: target, row });
    Ok(value)
}

/// Moves every component of the entity at `location` into `builder` (type-
/// erased, one copy per value) and removes its row, whose hole the last row
/// fills. Components the engine keeps from others (relationship lists) go
/// to `left_behind` instead, for the caller to drop once the tables are
/// consistent. Returns the index of the entity moved into the row, if any,
/// for the caller to record. The entity's slot must already be freed.
pub(crate) fn take_all(
    archetypes: &mut Archetypes,
    components: &Components,
    location: EntityLocation,
    builder: &mut EntityBuilder,
    left_behind: &mut EntityBuilder,
    sparse: &mut SparseSets,
    entity: Entity,
) -> Option<u32> {
    let archetype = archetypes.get_mut(location.archetype);
    // Room first: once values start moving, nothing may panic.
    let sparse_ids: Vec<ComponentId> = sparse.components_of(entity).collect();
    let infos = archetype.components().iter().chain(&sparse_ids).map(|&id| components.info(id));
    builder.reserve_raw(infos.clone().filter(|info| !info.engine_kept()));
    left_behind.reserve_raw(infos.filter(|info| info.engine_kept()));
    for &id in &sparse_ids {
        let info = components.info(id);
        let set = sparse.get_mut(id).expect("the entity's sparse set");
        let out = if info.engine_kept() { &mut *left_behind } else { &mut *builder };
        // SAFETY: `push_raw` moves the value into the builder, which holds
        // no value of this type (as below), without allocating or panicking.
        unsafe { set.take(entity, |value| out.push_raw(info, value)) };
    }
    // SAFETY: `location.row` is the entity's live row; `push_raw` moves each
    // value into one of the builders, which hold none of these types (an
    // archetype has each once, and both builders start without them), and
    // cannot allocate or panic after `reserve_raw` made room for exactly
    // the values each receives.
    unsafe {
        archetype.take_row(location.row, |id, value| {
            let info = components.info(id);
            if info.engine_kept() {
                left_behind.push_raw(info, value);
            } else {
                builder.push_raw(info, value);
            }
        });
    }
    archetype.entity_indices().get(location.row.index()).copied()
}

/// Records a row move in the entity table: `entity` went from `from` to
/// `to`, and `filler`, if any, took its old row.
#[inline]
fn record_move(entities: &mut Entities, entity: Entity, filler: Option<u32>, from: EntityLocation, to: EntityLocation) {
    if let Some(filler) = filler {
        entities.set_location(filler, from);
    }
    entities.set_location(entity.index(), to);
}

/// Spawns the components of `builder` (which ends empty) and returns the
/// new entity and the id of the builder's run-time bundle.
pub(crate) fn spawn_built(
    builder: &mut EntityBuilder,
    bundles: &mut Bundles,
    archetypes: &mut Archetypes,
    entities: &mut Entities,
    components: &mut Components,
    sparse: &mut SparseSets,
    tick: Tick,
) -> (Entity, BundleId) {
    let (ids, values) = builder.prepare(components);
    let bundle = bundles.register_dynamic(std::any::TypeId::of::<EntityBuilder>(), ids, components);
    let info = bundles.get(bundle);
    // SAFETY: `values[i]` is the builder's valid value of component
    // `ids[i]` (the bundle's order); the builder forgets them right after,
    // so they are moved, not copied.
    let entity = unsafe { spawn_raw(&values, info, archetypes, entities, components, sparse, tick) };
    builder.forget_values();
    builder.return_pointers(values);
    (entity, bundle)
}

/// Inserts the components of `builder` (which ends empty) into the live
/// `entity` at `location`; returns the id of the builder's run-time bundle.
// As for `insert`: the world's parts travel separately.
#[allow(clippy::too_many_arguments)]
pub(crate) fn insert_built(
    builder: &mut EntityBuilder,
    bundles: &mut Bundles,
    archetypes: &mut Archetypes,
    entities: &mut Entities,
    components: &mut Components,
    entity: Entity,
    location: EntityLocation,
    tick: Tick,
    pools: &mut Pools,
    sparse: &mut SparseSets,
) -> BundleId {
    let (ids, values) = builder.prepare(components);
    let bundle = bundles.register_dynamic(std::any::TypeId::of::<EntityBuilder>(), ids, components);
    let info = bundles.get(bundle);
    // Required values are built while the builder still owns its values:
    // if a constructor panics, the builder drops them as usual.
    let target = archetypes.insert_edge(location.archetype, info, components);
    let edge = archetypes.edges(location.archetype).inserting(info.id());
    let required =
        if target == location.archetype || edge.required.is_empty() { Vec::new() } else { required_values(info, edge) };
    // The builder lets go of its values first: from here on each one is
    // moved into a column, or released after a swap, exactly once, even if
    // a release panics.
    builder.forget_values();
    // SAFETY: as in `spawn_built`; `required` was built for this insert.
    unsafe {
        insert_raw(&values, info, required, archetypes, entities, components, entity, location, tick, pools, sparse)
    };
    builder.return_pointers(values);
    bundle
}

/// Spawns the values at `values` (one per component of the run-time bundle
/// `info`, in its order) into the bundle's spawn archetype, moving them out,
/// and returns the new entity.
///
/// # Safety
/// `values[i]` points to a valid value of the type of
/// `info.components()[i]`, which this call takes over: the caller never
/// uses or drops it again.
unsafe fn spawn_raw(
    values: &[*mut u8],
    info: &BundleInfo,
    archetypes: &mut Archetypes,
    entities: &mut Entities,
    components: &Components,
    sparse: &mut SparseSets,
    tick: Tick,
) -> Entity {
    debug_assert_eq!(values.len(), info.components().len());
    let target = archetypes.insert_edge(ArchetypeId::EMPTY, info, components);
    let (archetype, edges) = archetypes.table_and_edges(target, ArchetypeId::EMPTY);
    let edge = edges.inserting(info.id());
    let required = if edge.required.is_empty() { Vec::new() } else { required_values(info, edge) };
    // Grow first: once the row is started, nothing may panic.
    archetype.reserve(1);
    if info.has_sparse() {
        reserve_sparse(info, sparse, components, entities.next_index_bound());
    }
    let row = Row(archetype.len() as u32);
    let entity = entities.alloc(EntityLocation { archetype: target, row });
    archetype.push_entity(entity);
    if !required.is_empty() {
        push_required(required, edge, archetype.columns_mut(), tick);
    }
    let columns = archetype.columns_mut();
    for (i, (&value, &column)) in values.iter().zip(edge.columns.iter()).enumerate() {
        if column == SPARSE_COLUMN {
            let set = sparse.get_mut(info.components()[i]).expect("sparse sets are made before the write");
            // SAFETY: the value is valid, of the set's type, and ours
            // (caller); the entity is new, so nothing is replaced, and
            // room was made.
            unsafe { set.insert(entity, value, tick) };
            continue;
        }
        // SAFETY: the edge maps the `i`-th bundle component to its column
        // in the target, which stores that type; the value is valid and
        // ours (caller); room was reserved, so the push does not grow.
        unsafe { columns[column as usize].push(value, tick) };
    }
    entity
}

/// Inserts the values at `values` (one per component of the run-time bundle
/// `info`, in its order) into the live `entity` at `location`, as
/// [`insert`] does for a typed bundle: one move, then each value added or
/// swapped with the old one, and the old values released (dropped, or
/// reset and pooled) once the tables are consistent. The old values are
/// released from `values`' memory, which the caller then treats as empty.
/// `required` holds the values of the required components the insert adds
/// ([`required_values`] on its edge).
///
/// # Safety
/// As for [`spawn_raw`].
// As for `insert`: the world's parts travel separately.
#[allow(clippy::too_many_arguments)]
unsafe fn insert_raw(
    values: &[*mut u8],
    info: &BundleInfo,
    required: Vec<Box<dyn RequiredValue>>,
    archetypes: &mut Archetypes,
    entities: &mut Entities,
    components: &Components,
    entity: Entity,
    location: EntityLocation,
    tick: Tick,
    pools: &mut Pools,
    sparse: &mut SparseSets,
) {
    debug_assert_eq!(values.len(), info.components().len());
    let source = location.archetype;
    let target = archetypes.insert_edge(source, info, components);
    if info.has_sparse() {
        reserve_sparse(info, sparse, components, entity.index());
    }
    let (columns, row, edge) = if target == source {
        // The entity has every component, required ones included.
        debug_assert!(required.is_empty());
        let (archetype, edges) = archetypes.table_and_edges(source, source);
        (archetype.columns_mut(), location.row, edges.inserting(info.id()))
    } else {
        let (src, dst, edges) = archetypes.pair_mut(source, target);
        let edge = edges.inserting(info.id());
        assert_eq!(required.len(), edge.required.len(), "required values built for another insert");
        // SAFETY: as in `insert`: the edge's map sends every source column
        // to the target column of the same component; the columns it does
        // not name are the bundle's new components and its new required
        // ones, written below.
        let (row, moved) = unsafe { src.move_row(location.row, dst, &edge.move_map) };
        record_move(entities, entity, moved, location, EntityLocation { archetype: target, row });
        if !required.is_empty() {
            push_required(required, edge, dst.columns_mut(), tick);
        }
        (dst.columns_mut(), row, edge)
    };
    let r = row.index();
    let mut replaced = false;
    // Per value for a sparse component, which may or may not exist.
    let mut existed = edge.existed.to_vec();
    for (i, &value) in values.iter().enumerate() {
        if edge.columns[i] == SPARSE_COLUMN {
            let set = sparse.get_mut(info.components()[i]).expect("sparse sets are made before the write");
            // SAFETY: the value is valid, of the set's type, and ours
            // (caller); an old value is swapped into its memory; room was
            // made.
            existed[i] = unsafe { set.insert(entity, value, tick) };
            replaced |= existed[i];
            continue;
        }
        let column = &mut columns[edge.columns[i] as usize];
        // SAFETY: the column stores the `i`-th component's type, as the
        // value does (caller). A new component's column ends at `r` (the
        // moved row is its last) and an existing one holds a value at `r`:
        // asserted first. A swap leaves the old value in `value`'s memory.
        unsafe {
            if edge.existed[i] {
                assert!(r < column.len(), "overwritten component has no value");
                column.swap_value(r, value, tick);
                replaced = true;
            } else {
                assert_eq!(column.len(), r, "added component column out of step");
                column.push(value, tick);
            }
        }
    }
    if replaced {
        let mut panics = Panics::default();
        for (i, &value) in values.iter().enumerate().filter(|&(i, _)| existed[i]) {
            let info = components.info(info.components()[i]);
            // SAFETY: the old value, swapped out of its column, valid and
            // owned by nobody else; released once.
            panics.run(|| unsafe { pools.release(info, value) });
        }
        panics.finish();
    }
}

/// Inserts the single sparse component `bundle` into the live `entity`:
/// the value goes into its set, and an old value is released (dropped, or
/// reset and pooled) once the set holds the new one. The fast path of
/// `World::insert` for [`Bundle::SPARSE_COMPONENT`] bundles.
#[inline]
pub(crate) fn insert_sparse<B: Bundle>(
    bundle: B,
    components: &mut Components,
    sets: &mut SparseSets,
    pools: &mut Pools,
    entity: Entity,
    tick: Tick,
) {
    debug_assert!(B::SPARSE_COMPONENT);
    bundle.write_components(&mut SparseOnly { components, sets, pools, entity, tick });
}

/// Writes single sparse components (see [`insert_sparse`]).
struct SparseOnly<'a> {
    components: &'a mut Components,
    sets: &'a mut SparseSets,
    pools: &'a mut Pools,
    entity: Entity,
    tick: Tick,
}

impl ComponentWriter for SparseOnly<'_> {
    #[inline]
    fn write<C: Component>(&mut self, value: C) {
        assert!(C::STORAGE == StorageType::Sparse, "a table component on the sparse path");
        let id = self.components.register::<C>();
        let components = &*self.components;
        let set = self.sets.get_or_insert_with(id, || components.info(id));
        // SAFETY: the set is `C`'s (made for its id); the entity is alive
        // (the caller checked).
        let Some(old) = (unsafe { set.insert_typed(self.entity, value, self.tick) }) else { return };
        let info = components.info(id);
        if info.is_pooled() {
            let mut old = ManuallyDrop::new(old);
            // SAFETY: a valid `C`, of `info`'s type, which `release` takes
            // over; `ManuallyDrop` keeps it from being dropped here too.
            unsafe { self.pools.release(info, (&raw mut *old).cast()) };
        } else {
            drop(old);
        }
    }
}

/// Takes the single sparse component `B` out of the live `entity`, or
/// reports that it has none. The fast path of `World::remove` for
/// [`Bundle::SPARSE_COMPONENT`] bundles.
#[inline]
pub(crate) fn take_sparse<B: Bundle>(
    components: &Components,
    sets: &mut SparseSets,
    entity: Entity,
) -> Result<(B, ComponentId), ComponentError> {
    debug_assert!(B::SPARSE_COMPONENT);
    let missing = || ComponentError::MissingComponent { entity, component: std::any::type_name::<B>() };
    let id = components.id_of_type(TypeId::of::<B>()).ok_or_else(missing)?;
    let set = sets.get_mut(id).ok_or_else(missing)?;
    let dense = set.dense(entity.index()).ok_or_else(missing)?;
    let mut reader = SparseTake { set, entity, dense };
    Ok((B::read_components(&mut reader), id))
}

/// Reads the one value of a single sparse component (see [`take_sparse`]).
struct SparseTake<'a> {
    set: &'a mut crate::storage::sparse::SparseSet,
    entity: Entity,
    /// Where the entity's value is in the set.
    dense: usize,
}

impl ComponentReader for SparseTake<'_> {
    #[inline]
    fn read<C: Component>(&mut self) -> C {
        assert!(C::STORAGE == StorageType::Sparse, "a table component on the sparse path");
        // SAFETY: a single-component bundle reads its own type, `B`, whose
        // set this is (looked up by `B`'s type id); `dense` is the entity's
        // place in it (`take_sparse` looked it up), and it is read once.
        unsafe { self.set.take_at::<C>(self.entity, self.dense) }
    }
}
