//! `World`: the container of entities and their components, and the entry
//! point of every operation on them.
//!
//! The world layer: it owns the storage below it and changes it only
//! through the operations here. This file has the `World` type, spawning,
//! inserting, removing, despawning, reading components and their ticks,
//! and the queries without a cached state; the other files add one kind
//! of operation each: `allocator.rs` (reserving handles and making them
//! live, the allocator's state), `change_ticks.rs` (the world's change
//! tick), `spawn_batch.rs`, `spawn_bundle.rs` (what `spawn` takes, and
//! entity builders), `entity_mut.rs` / `entity_ref.rs` / `entity_ops.rs`
//! (the entity-level API), `hooks/` (component hooks, their registry, the
//! view a hook receives, and the hooked operations, which also fire the
//! observers), `command_queue.rs` (the commands that hooks and systems
//! defer), `disabling.rs` (disabling entities, and markers that hide
//! them from queries), `named.rs` (entities by name, and how messages
//! name an entity), `resources.rs` and `resource_scope.rs`,
//! `event.rs`, `removed.rs`, `time.rs`, `pools.rs`, `cloning.rs`,
//! `transaction.rs` (all or nothing) and `column_batch.rs` (whole columns
//! at once).

mod allocator;
mod change_ticks;
pub(crate) mod cloning;
#[allow(unsafe_code)]
pub(crate) mod column_batch;
pub(crate) mod command_queue;
mod disabling;
pub(crate) mod entity_mut;
pub(crate) mod entity_ops;
pub(crate) mod entity_ref;
pub(crate) mod event;
pub(crate) mod hooks;
pub(crate) mod named;
mod pools;
pub(crate) mod relations;
pub(crate) mod removed;
pub(crate) mod resource_scope;
pub(crate) mod resources;
mod spawn_batch;
mod spawn_bundle;
#[cfg(test)]
mod tests;
pub(crate) mod time;
pub(crate) mod transaction;

pub use spawn_batch::SpawnBatch;
pub use spawn_bundle::SpawnBundle;

use std::fmt;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use crate::component::bundle::{Bundle, BundleId, BundleInfo, Bundles};
use crate::component::change::{ChangeMark, ComponentTicks, Mut, RunTicks, Tick};
use crate::component::{Component, ComponentId, Components, MutableComponent, StorageType};
use crate::entity::error::QueryEntityError;
use crate::entity::error::{ComponentError, EntityError};
use crate::entity::{Entities, Entity, EntityLocation, TableEntities};
use crate::query::{QueryData, QueryFilter, QueryIter, ReadOnlyQueryData};
use crate::storage::archetype::{Archetype, Archetypes, Row};
use crate::storage::builder::{BuiltBundle, EntityBuilder};
use crate::storage::column::{for_each_unwinding, CloneColumnFn};
use crate::storage::pool::Pools;
use crate::storage::resource::{ResourceId, Resources};
use crate::storage::sparse::{SparseSets, TableRef};
use crate::storage::structural;
use crate::world::entity_ref::EntityRef;
use crate::world::hooks::Hooks;
use crate::world::relations::Relations;
use crate::world::removed::Removals;
use crate::world::time::Time;

/// A process-unique world id, so a query state can refuse a foreign world.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct WorldId(u64);

impl WorldId {
    fn next() -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        WorldId(NEXT.fetch_add(1, Ordering::Relaxed))
    }
}

/// Ages one event type's queue by a frame.
type EventUpdater = fn(&mut World);

/// Entities and their components, stored in archetype tables.
///
/// ```
/// use archetable::{Component, World, Without};
///
/// #[derive(Component)] struct Position { x: f32 }
/// #[derive(Component)] struct Velocity { dx: f32 }
/// #[derive(Component)] struct Frozen;
///
/// let mut world = World::new();
/// let a = world.spawn((Position { x: 0.0 }, Velocity { dx: 1.0 }));
/// let b = world.spawn((Position { x: 0.0 }, Velocity { dx: 1.0 }, Frozen));
/// for (mut pos, vel) in world.query_filtered_mut::<(&mut Position, &Velocity), Without<Frozen>>() {
///     pos.x += vel.dx;
/// }
/// assert_eq!(world.get::<Position>(a).unwrap().x, 1.0);
/// assert_eq!(world.get::<Position>(b).unwrap().x, 0.0);
/// ```
pub struct World {
    id: WorldId,
    entities: Entities,
    components: Components,
    archetypes: Archetypes,
    bundles: Bundles,
    resources: Resources,
    /// One `Events<E>::update` per registered event type, by resource id.
    event_updaters: Vec<(ResourceId, EventUpdater)>,
    /// The current change tick: writes made now are stamped with it. It
    /// advances once per system run and query-state pass.
    change_tick: AtomicU32,
    /// The tick at which stored ticks were last clamped.
    last_check_tick: Tick,
    /// Which entities lost which components, for the types someone reads.
    removals: Removals,
    /// Component lifecycle hooks (see `hooks/`).
    pub(crate) hooks: Hooks,
    /// The reset values of pooled component types, for `spawn_pooled`.
    pools: Pools,
    /// The values of components in sparse storage (see `storage/sparse.rs`).
    sparse: SparseSets,
    /// The relationships' bookkeeping (see `relations.rs`).
    relations: Relations,
    /// Whole-column copies by type, for [`World::clone_from`] (see
    /// [`World::register_clone_from`]).
    cloners: Vec<(std::any::TypeId, CloneColumnFn)>,
    /// The names of the last named entities despawned by commands, so
    /// messages about them can still name them (see `named.rs`).
    pub(crate) departed: named::DepartedNames,
}

impl Default for World {
    fn default() -> Self {
        World::new()
    }
}

impl World {
    /// An empty world.
    pub fn new() -> Self {
        let components = Components::default();
        let mut world = World {
            id: WorldId::next(),
            entities: Entities::default(),
            archetypes: Archetypes::new(&components),
            components,
            bundles: Bundles::default(),
            resources: Resources::default(),
            event_updaters: Vec::new(),
            change_tick: AtomicU32::new(1),
            last_check_tick: Tick::new(1),
            removals: Removals::default(),
            hooks: Hooks::default(),
            pools: Pools::default(),
            sparse: SparseSets::default(),
            relations: Relations::default(),
            cloners: Vec::new(),
            departed: named::DepartedNames::default(),
        };
        world.insert_resource(Time::default());
        world
    }

    /// A world made of copied parts: a fresh id, a default [`Time`], no
    /// other resources, hooks or pools; the engine hooks of every
    /// registered type are installed.
    pub(crate) fn from_parts(
        entities: Entities,
        components: Components,
        archetypes: Archetypes,
        sparse: SparseSets,
        change_tick: Tick,
        last_check_tick: Tick,
    ) -> World {
        let mut world = World::new();
        let installers: Vec<fn(&mut World)> = components.iter().filter_map(|info| info.engine_hooks()).collect();
        world.entities = entities;
        world.components = components;
        world.archetypes = archetypes;
        world.sparse = sparse;
        *world.change_tick.get_mut() = change_tick.get();
        world.last_check_tick = last_check_tick;
        for install in installers {
            install(&mut world);
        }
        world
    }

    /// The entity allocator, for copies.
    pub(crate) fn entities(&self) -> &Entities {
        &self.entities
    }

    /// The tick at which stored ticks were last clamped.
    pub(crate) fn last_check_tick(&self) -> Tick {
        self.last_check_tick
    }

    /// This world's process-unique id.
    #[inline]
    pub fn id(&self) -> WorldId {
        self.id
    }

    /// Spawns an entity with the components of `bundle`: one component, a
    /// tuple, a `#[derive(Bundle)]` struct, or a [`BuiltBundle`] (from
    /// [`EntityBuilder::build`] or [`World::take`]).
    ///
    /// Runs the components' `on_add`, then `on_insert` hooks, if any (see
    /// [`World::register_component_hooks`]).
    ///
    /// # Panics
    /// If the bundle holds one component type twice, or if the entity index
    /// space is exhausted: `u32::MAX` indices, each retired after about four
    /// billion reuses, so only a world that keeps billions of entities alive
    /// gets there. Either panic happens before any entity or table changes:
    /// the bundle is dropped and the world's entities stay as they were.
    #[inline]
    pub fn spawn<B: SpawnBundle>(&mut self, bundle: B) -> Entity {
        bundle.spawn_in(self)
    }

    /// [`World::spawn`] of a static bundle.
    #[inline]
    pub(crate) fn spawn_bundle<B: Bundle>(&mut self, bundle: B) -> Entity {
        if B::ENGINE_HOOKED || (self.hooks.is_active() && self.spawn_runs_hooks::<B>()) {
            return self.spawn_hooked(bundle);
        }
        self.spawn_unhooked(bundle)
    }

    /// [`World::spawn`] without running hooks.
    #[inline]
    pub(crate) fn spawn_unhooked<B: Bundle>(&mut self, bundle: B) -> Entity {
        self.spawn_unhooked_in(bundle).0
    }

    /// [`World::spawn`] without running hooks; returns the entity and the
    /// id of `B`, for the hooks to run next.
    #[inline(always)]
    pub(crate) fn spawn_unhooked_in<B: Bundle>(&mut self, bundle: B) -> (Entity, BundleId) {
        self.flush();
        let tick = self.change_tick();
        let info = self.bundles.register::<B>(&mut self.components);
        let id = info.id();
        let (archetypes, entities, sparse) = (&mut self.archetypes, &mut self.entities, &mut self.sparse);
        (structural::spawn(bundle, info, archetypes, entities, &self.components, sparse, tick), id)
    }

    /// [`World::spawn_unhooked_in`], also returning where the entity is:
    /// for the hooked path, which passes it on to the hooks.
    #[inline(always)]
    pub(crate) fn spawn_unhooked_at<B: Bundle>(&mut self, bundle: B) -> (Entity, BundleId, EntityLocation) {
        self.flush();
        let tick = self.change_tick();
        let info = self.bundles.register::<B>(&mut self.components);
        let id = info.id();
        let (archetypes, entities, sparse) = (&mut self.archetypes, &mut self.entities, &mut self.sparse);
        let (entity, at) = structural::spawn_at(bundle, info, archetypes, entities, &self.components, sparse, tick);
        (entity, id, at)
    }

    /// [`World::spawn_built`] without running hooks; returns the entity and
    /// the id of the builder's run-time bundle.
    pub(crate) fn spawn_built_unhooked(&mut self, builder: &mut EntityBuilder) -> (Entity, BundleId) {
        self.flush();
        let tick = self.change_tick();
        structural::spawn_built(
            builder,
            &mut self.bundles,
            &mut self.archetypes,
            &mut self.entities,
            &mut self.components,
            &mut self.sparse,
            tick,
        )
    }

    /// The id of the run-time bundle of `builder`'s components.
    pub(crate) fn register_built(&mut self, builder: &mut EntityBuilder) -> BundleId {
        let (ids, values) = builder.prepare(&mut self.components);
        let bundle = self.bundles.register_dynamic(std::any::TypeId::of::<EntityBuilder>(), ids, &self.components);
        builder.return_pointers(values);
        bundle
    }

    /// [`World::insert_built`] without running hooks. On error the builder
    /// keeps its values.
    pub(crate) fn insert_built_unhooked(
        &mut self,
        entity: Entity,
        builder: &mut EntityBuilder,
    ) -> Result<BundleId, EntityError> {
        self.flush();
        let location = self.entities.get(entity).ok_or(EntityError::NoSuchEntity(entity))?;
        let tick = self.change_tick();
        Ok(structural::insert_built(
            builder,
            &mut self.bundles,
            &mut self.archetypes,
            &mut self.entities,
            &mut self.components,
            entity,
            location,
            tick,
            &mut self.pools,
            &mut self.sparse,
        ))
    }

    /// Adds the components of `bundle` to `entity`, overwriting (and
    /// dropping, or pooling) the ones it already has.
    #[inline]
    pub fn insert<B: Bundle>(&mut self, entity: Entity, bundle: B) -> Result<(), EntityError> {
        if B::ENGINE_HOOKED || (self.hooks.is_active() && self.insert_runs_hooks::<B>()) {
            return self.insert_hooked(entity, bundle);
        }
        if B::SPARSE_COMPONENT {
            return self.insert_sparse(entity, bundle);
        }
        self.insert_unhooked(entity, bundle)
    }

    /// [`World::insert`] of one sparse component without hooks: no table
    /// changes, the value goes straight into the component's set. A few
    /// dozen instructions, inlined where it is called.
    #[inline(always)]
    fn insert_sparse<B: Bundle>(&mut self, entity: Entity, bundle: B) -> Result<(), EntityError> {
        self.flush();
        self.entities.get(entity).ok_or(EntityError::NoSuchEntity(entity))?;
        let tick = self.change_tick();
        let (components, sparse, pools) = (&mut self.components, &mut self.sparse, &mut self.pools);
        structural::insert_sparse(bundle, components, sparse, pools, entity, tick);
        Ok(())
    }

    /// [`World::insert`] without running hooks.
    #[inline]
    pub(crate) fn insert_unhooked<B: Bundle>(&mut self, entity: Entity, bundle: B) -> Result<(), EntityError> {
        self.flush();
        let location = self.entities.get(entity).ok_or(EntityError::NoSuchEntity(entity))?;
        let tick = self.change_tick();
        let info = self.bundles.register::<B>(&mut self.components);
        let (archetypes, entities, components) = (&mut self.archetypes, &mut self.entities, &self.components);
        let (pools, sparse) = (&mut self.pools, &mut self.sparse);
        structural::insert(bundle, info, archetypes, entities, components, entity, location, tick, pools, sparse);
        Ok(())
    }

    /// [`World::insert_unhooked`] of a bundle whose id the caller kept
    /// (`known`, checked against `B`, looked up if it is not `B`'s),
    /// leaving the bundle lookup's memory of the last bundles as it was:
    /// for the engine's own inserts between spawns of another bundle.
    /// Returns `B`'s id.
    #[cfg(feature = "hierarchy")]
    #[inline(always)]
    pub(crate) fn insert_unhooked_known<B: Bundle>(
        &mut self,
        entity: Entity,
        bundle: B,
        known: Option<BundleId>,
    ) -> Result<BundleId, EntityError> {
        self.flush();
        let location = self.entities.get(entity).ok_or(EntityError::NoSuchEntity(entity))?;
        let tick = self.change_tick();
        let id = match known.filter(|&id| self.bundles.is_of::<B>(id)) {
            Some(id) => id,
            None => self.bundles.register::<B>(&mut self.components).id(),
        };
        let info = self.bundles.get(id);
        let (archetypes, entities, components) = (&mut self.archetypes, &mut self.entities, &self.components);
        let (pools, sparse) = (&mut self.pools, &mut self.sparse);
        structural::insert(bundle, info, archetypes, entities, components, entity, location, tick, pools, sparse);
        Ok(id)
    }

    /// Removes the components of bundle `B` (one component or several) from
    /// `entity` and returns them. The entity must have all of them.
    #[inline]
    pub fn remove<B: Bundle>(&mut self, entity: Entity) -> Result<B, ComponentError> {
        if self.hooks.is_active() && self.remove_runs_hooks::<B>() {
            return self.remove_hooked(entity);
        }
        if B::SPARSE_COMPONENT {
            return self.remove_sparse(entity);
        }
        self.remove_unhooked(entity)
    }

    /// [`World::remove`] of one sparse component without hooks: no table
    /// changes, the value comes straight out of the component's set.
    #[inline(always)]
    fn remove_sparse<B: Bundle>(&mut self, entity: Entity) -> Result<B, ComponentError> {
        self.flush();
        self.entities.get(entity).ok_or(ComponentError::NoSuchEntity(entity))?;
        let (taken, id) = structural::take_sparse::<B>(&self.components, &mut self.sparse, entity)?;
        self.removals.sync(&self.components);
        if self.removals.any() {
            self.removals.record(&[id], entity);
        }
        Ok(taken)
    }

    /// [`World::remove`] without running hooks.
    #[inline]
    pub(crate) fn remove_unhooked<B: Bundle>(&mut self, entity: Entity) -> Result<B, ComponentError> {
        if B::SPARSE_COMPONENT {
            return self.remove_sparse(entity);
        }
        self.flush();
        let location = self.entities.get(entity).ok_or(ComponentError::NoSuchEntity(entity))?;
        let info = self.bundles.register::<B>(&mut self.components);
        let (archetypes, entities, sparse) = (&mut self.archetypes, &mut self.entities, &mut self.sparse);
        let taken = structural::take(info, archetypes, entities, &self.components, entity, location, sparse)?;
        self.removals.sync(&self.components);
        if self.removals.any() {
            self.removals.record(info.components(), entity);
        }
        Ok(taken)
    }

    /// Removes `entity` and drops its components (pooled ones are reset and
    /// kept in their pools). Its handle, and every copy of it, becomes
    /// stale.
    pub fn despawn(&mut self, entity: Entity) -> Result<(), EntityError> {
        if self.hooks.is_active() {
            return self.despawn_hooked(entity);
        }
        self.despawn_unhooked(entity)
    }

    /// [`World::despawn`] without running hooks.
    #[inline]
    pub(crate) fn despawn_unhooked(&mut self, entity: Entity) -> Result<(), EntityError> {
        self.flush();
        let location = self.entities.free(entity).ok_or(EntityError::NoSuchEntity(entity))?;
        self.removals.sync(&self.components);
        let archetype = self.archetypes.get_mut(location.archetype);
        if self.removals.any() {
            self.removals.record(archetype.components(), entity);
            if self.sparse.any() {
                let ids: Vec<ComponentId> = self.sparse.components_of(entity).collect();
                self.removals.record(&ids, entity);
            }
        }
        // The last row moves into the hole: record that before any component
        // destructor runs, so the tables stay consistent even if one panics.
        if let Some(&last) = archetype.entity_indices().last()
            && last != entity.index()
        {
            self.entities.set_location(last, location);
        }
        if self.sparse.any() {
            self.despawn_sparse(entity, location);
            return Ok(());
        }
        archetype.remove_row(location.row, &mut self.pools, &self.components);
        Ok(())
    }

    /// The end of a despawn in a world with sparse sets: the row and the
    /// entity's sparse values go, each set consistent before any value is
    /// released; a panicking destructor or reset does not stop the others.
    #[cold]
    #[inline(never)]
    fn despawn_sparse(&mut self, entity: Entity, location: EntityLocation) {
        let (archetypes, pools, components) = (&mut self.archetypes, &mut self.pools, &self.components);
        let row = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            archetypes.get_mut(location.archetype).remove_row(location.row, pools, components);
        }));
        self.sparse.remove_entity(entity, components, pools);
        if let Err(payload) = row {
            std::panic::resume_unwind(payload);
        }
    }

    /// Moves every component of `entity` out into a [`BuiltBundle`] and
    /// despawns it, running the despawn hooks as [`World::despawn`] does
    /// (the values are still in place while they run). The bundle spawns
    /// into any world with [`World::spawn`], this one or another; types the
    /// other world has not seen are registered there. Change ticks are not
    /// carried: the spawn stamps its own. A relationship's list of sources
    /// (`Children`, a derive's `relationship_target`) is
    /// left behind and dropped: the engine keeps it from the sources, and
    /// rebuilds it wherever they are. A relationship source
    /// (`ChildOf`) is carried like any component, and
    /// the world that spawns it checks its target as for any insert.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component, Debug, PartialEq)] struct Hp(u32);
    /// # #[derive(Component, Debug, PartialEq)] struct Name(&'static str);
    /// let mut level = World::new();
    /// let hero = level.spawn((Hp(7), Name("hero")));
    /// let mut next_level = World::new();
    /// let hero_there = next_level.spawn(level.take(hero).unwrap());
    /// assert!(!level.contains(hero));
    /// assert_eq!(next_level.get::<Name>(hero_there), Some(&Name("hero")));
    /// ```
    pub fn take(&mut self, entity: Entity) -> Result<BuiltBundle, EntityError> {
        if self.hooks.is_active() {
            return self.take_hooked(entity);
        }
        self.take_unhooked(entity)
    }

    /// [`World::take`] without running hooks.
    pub(crate) fn take_unhooked(&mut self, entity: Entity) -> Result<BuiltBundle, EntityError> {
        self.flush();
        let location = self.entities.get(entity).ok_or(EntityError::NoSuchEntity(entity))?;
        let mut taken = EntityBuilder::new().build();
        let mut left_behind = EntityBuilder::new();
        // Room first, so nothing fails once the entity starts to go.
        let infos = self.archetypes[location.archetype].components().iter().map(|&id| self.components.info(id));
        taken.builder_mut().reserve_raw(infos.clone().filter(|info| !info.engine_kept()));
        left_behind.reserve_raw(infos.filter(|info| info.engine_kept()));
        self.entities.free(entity);
        self.removals.sync(&self.components);
        if self.removals.any() {
            self.removals.record(self.archetypes[location.archetype].components(), entity);
            let ids: Vec<ComponentId> = self.sparse.components_of(entity).collect();
            self.removals.record(&ids, entity);
        }
        let (archetypes, components, sparse) = (&mut self.archetypes, &self.components, &mut self.sparse);
        let builder = taken.builder_mut();
        let filler = structural::take_all(archetypes, components, location, builder, &mut left_behind, sparse, entity);
        if let Some(filler) = filler {
            self.entities.set_location(filler, location);
        }
        // The tables are consistent: destructors may run now.
        drop(left_behind);
        Ok(taken)
    }

    /// Whether `entity` is alive in this world.
    #[inline]
    pub fn contains(&self, entity: Entity) -> bool {
        self.entities.get(entity).is_some()
    }

    /// Whether `entity` is alive and has a `T`.
    pub fn has<T: Component>(&self, entity: Entity) -> bool {
        match (self.entities.get(entity), self.components.id::<T>()) {
            (Some(_), Some(id)) if T::STORAGE == StorageType::Sparse => {
                self.sparse.get(id).is_some_and(|set| set.contains(entity))
            }
            (Some(location), Some(id)) => self.archetypes[location.archetype].contains(id),
            _ => false,
        }
    }

    /// Whether the live `entity` at `location` has component `id`, in
    /// whichever storage the type uses.
    #[inline]
    pub(crate) fn has_id(&self, entity: Entity, location: EntityLocation, id: ComponentId) -> bool {
        structural::has_component(&self.archetypes, &self.sparse, &self.components, location, entity, id)
    }

    /// The table `archetype` of this world, as queries open it: with the
    /// sparse sets and the entity generations they read beside it.
    #[inline]
    pub(crate) fn table_ref<'w>(&'w self, archetype: &'w Archetype) -> TableRef<'w> {
        TableRef::new(archetype, self.sparse_sets(), self.entities().handles())
    }

    /// The world's sparse sets (see [`Component::STORAGE`]).
    #[inline]
    pub fn sparse_sets(&self) -> &SparseSets {
        &self.sparse
    }

    /// `entity`'s `T`, if it is alive and has one.
    #[inline]
    pub fn get<T: Component>(&self, entity: Entity) -> Option<&T> {
        let location = self.entities.get(entity)?;
        let id = self.components.id::<T>()?;
        if T::STORAGE == StorageType::Sparse {
            return self.sparse.get(id)?.get(entity);
        }
        self.archetypes[location.archetype].get(id, location.row)
    }

    /// `entity`'s `A`, if it is alive and has one, and whether it has a `B`
    /// too: one lookup of the entity, for the engine's relationship hooks.
    #[cfg(feature = "hierarchy")]
    #[inline]
    pub(crate) fn get_and_has<A: Component, B: Component>(&self, entity: Entity) -> Option<(&A, bool)> {
        if A::STORAGE == StorageType::Sparse || B::STORAGE == StorageType::Sparse {
            return self.get::<A>(entity).map(|a| (a, self.has::<B>(entity)));
        }
        let location = self.entities.get(entity)?;
        let table = &self.archetypes[location.archetype];
        let a = table.get(self.components.id::<A>()?, location.row)?;
        Some((a, self.components.id::<B>().is_some_and(|id| table.contains(id))))
    }

    /// Where `T` is in the table of `at`: the column's position, to look
    /// the value up again with [`World::get_in_column`].
    #[cfg(feature = "hierarchy")]
    #[inline]
    pub(crate) fn column_of<T: Component>(&self, at: EntityLocation) -> Option<usize> {
        if T::STORAGE == StorageType::Sparse {
            return None;
        }
        self.archetypes[at.archetype].column_index(self.components.id::<T>()?)
    }

    /// The `T` of the entity at `at`, from column `column` of its table (a
    /// position [`World::column_of`] gave): `None` if that column does not
    /// hold `T`s.
    #[cfg(feature = "hierarchy")]
    #[inline(always)]
    pub(crate) fn get_in_column<T: Component>(&self, at: EntityLocation, column: usize) -> Option<&T> {
        self.archetypes[at.archetype].columns().get(column)?.get(at.row.index())
    }

    /// The component of column `column` of table `table`, if `T` is the
    /// one it holds: a remembered column, checked before use.
    #[cfg(feature = "hierarchy")]
    #[inline(always)]
    pub(crate) fn component_in_column<T: Component>(
        &self,
        table: crate::entity::ArchetypeId,
        column: usize,
    ) -> Option<ComponentId> {
        let table = self.archetypes.as_slice().get(table.index())?;
        let held = table.columns().get(column)?.type_id() == std::any::TypeId::of::<T>();
        held.then(|| table.components()[column])
    }

    /// The column of component `id` in the table at `at`, if it has one:
    /// [`World::column_of`] for a caller that knows the id.
    #[cfg(feature = "hierarchy")]
    #[inline(always)]
    pub(crate) fn column_of_id(&self, at: EntityLocation, id: ComponentId) -> Option<usize> {
        self.archetypes[at.archetype].column_index(id)
    }

    /// [`World::get_mut_changed`] through a remembered place: `entity`'s
    /// `T`, if `entity` is still at `at` and column `column` there holds
    /// `T`s.
    #[cfg(feature = "hierarchy")]
    #[inline]
    pub(crate) fn get_mut_changed_in_column<T: Component>(
        &mut self,
        entity: Entity,
        at: EntityLocation,
        column: usize,
    ) -> Option<&mut T> {
        if !self.entities.is_at(entity, at) {
            return None;
        }
        let now = self.change_tick();
        let column = self.archetypes.get_mut(at.archetype).columns_mut().get_mut(column)?;
        let (value, ticks) = column.get_with_ticks_mut(at.row.index(), now)?;
        if let Some((_, changed)) = ticks {
            *changed = now;
        }
        Some(value)
    }

    /// `entity`'s `T`, if it is alive and has one, marked changed now: for
    /// the engine's own writes (a relationship's list), which always change
    /// the value.
    #[cfg(feature = "hierarchy")]
    #[inline]
    pub(crate) fn get_mut_changed<T: Component>(&mut self, entity: Entity) -> Option<&mut T> {
        if T::STORAGE == StorageType::Sparse {
            return self.get_mut_any::<T>(entity).map(Mut::into_inner);
        }
        let location = self.entities.get(entity)?;
        let id = self.components.id::<T>()?;
        let now = self.change_tick();
        let archetype = self.archetypes.get_mut(location.archetype);
        let index = archetype.column_index(id)?;
        let (value, ticks) = archetype.columns_mut()[index].get_with_ticks_mut(location.row.index(), now)?;
        if let Some((_, changed)) = ticks {
            *changed = now;
        }
        Some(value)
    }

    /// Mutable access to `entity`'s `T`, if it is alive and has one. A
    /// write through the returned [`Mut`] marks the value changed, for types
    /// that track changes.
    #[inline]
    pub fn get_mut<T: Component + MutableComponent>(&mut self, entity: Entity) -> Option<Mut<'_, T>> {
        self.get_mut_any(entity)
    }

    /// [`World::get_mut`] of any component, immutable ones included: for
    /// the engine's own upkeep of the values it keeps.
    #[inline]
    pub(crate) fn get_mut_any<T: Component>(&mut self, entity: Entity) -> Option<Mut<'_, T>> {
        let location = self.entities.get(entity)?;
        let id = self.components.id::<T>()?;
        let now = self.change_tick();
        let (value, ticks) = if T::STORAGE == StorageType::Sparse {
            self.sparse.get_mut(id)?.get_with_ticks_mut(entity, now)?
        } else {
            let archetype = self.archetypes.get_mut(location.archetype);
            let index = archetype.column_index(id)?;
            archetype.columns_mut()[index].get_with_ticks_mut(location.row.index(), now)?
        };
        let run = RunTicks { last_run: now, this_run: now };
        let mark = match ticks {
            Some((added, changed)) => ChangeMark::new(Some(changed), added, run),
            None => ChangeMark::new(None, Tick::default(), run),
        };
        Some(Mut::new(value, mark))
    }

    /// When `entity`'s `T` was added and last changed, if it is alive, has
    /// one, and `T` tracks changes.
    pub fn component_ticks<T: Component>(&self, entity: Entity) -> Option<ComponentTicks> {
        let location = self.entities.get(entity)?;
        let id = self.components.id::<T>()?;
        if T::STORAGE == StorageType::Sparse {
            return self.sparse.get(id)?.ticks(entity);
        }
        let archetype = &self.archetypes[location.archetype];
        archetype.column(archetype.column_index(id)?).ticks_at(location.row.index())
    }

    /// A read-only view of `entity`, if it is alive.
    pub fn entity(&self, entity: Entity) -> Option<EntityRef<'_>> {
        let location = self.entities.get(entity)?;
        Some(EntityRef::new(self, entity, location))
    }

    /// Number of live entities.
    #[inline]
    pub fn len(&self) -> usize {
        self.entities.len() as usize
    }

    /// Whether no entity is alive.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.entities.len() == 0
    }

    /// Despawns every entity. The tables keep their memory for the next
    /// level's entities, query states stay valid, and every old handle stays
    /// stale. Resources, events and the values in pools are kept. Runs the
    /// despawn hooks of every entity first (see
    /// [`World::register_component_hooks`]); the commands they queue apply
    /// after the clear, except that the entities they spawn are cleared
    /// with the rest (their spawn commands are skipped).
    pub fn clear(&mut self) {
        self.departed.clear();
        if self.hooks.is_active() {
            return self.clear_hooked();
        }
        self.clear_unhooked();
    }

    /// [`World::clear`] without running hooks.
    pub(crate) fn clear_unhooked(&mut self) {
        self.flush();
        self.removals.sync(&self.components);
        if self.removals.any() {
            for archetype in self.archetypes.as_slice() {
                let entities = archetype.entity_indices().iter().map(|&index| self.entities.entity_at(index));
                self.removals.record_all(archetype.components(), entities);
            }
            for set in self.sparse.iter() {
                self.removals.record_all(&[set.id()], set.entities().iter().copied());
            }
        }
        self.entities.clear();
        let (pools, components, sparse) = (&mut self.pools, &self.components, &mut self.sparse);
        let tables = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            for_each_unwinding(self.archetypes.as_mut_slice().iter_mut(), |archetype| {
                archetype.clear(pools, components)
            });
        }));
        sparse.clear(components, pools);
        if let Err(payload) = tables {
            std::panic::resume_unwind(payload);
        }
    }

    pub(crate) fn entities_mut(&mut self) -> &mut Entities {
        &mut self.entities
    }

    /// The entity table, component registry, tables and bundle registry,
    /// borrowed apart (for whole-table placement, `column_batch.rs`).
    pub(crate) fn storage_mut(&mut self) -> (&mut Entities, &mut Components, &mut Archetypes, &mut Bundles) {
        (&mut self.entities, &mut self.components, &mut self.archetypes, &mut self.bundles)
    }

    /// The registry of component types this world has seen.
    #[inline]
    pub fn components(&self) -> &Components {
        &self.components
    }

    #[inline]
    pub(crate) fn components_mut(&mut self) -> &mut Components {
        &mut self.components
    }

    /// The id of component `T` in this world, registering it if needed.
    pub fn register_component<T: Component>(&mut self) -> ComponentId {
        let id = self.components.register::<T>();
        self.install_engine_hooks();
        id
    }

    /// The archetype tables.
    #[inline]
    pub fn archetypes(&self) -> &Archetypes {
        &self.archetypes
    }

    /// The entity of each row of `table`, one of this world's tables, in
    /// row order. (A table's entity column holds indices; the generations
    /// are in the world's entity table.)
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component)] struct Hp(u32);
    /// let mut world = World::new();
    /// let a = world.spawn(Hp(1));
    /// let b = world.spawn(Hp(2));
    /// let table = world.archetypes().as_slice().iter().find(|table| !table.is_empty()).unwrap();
    /// assert!(world.table_entities(table).eq([a, b]));
    /// ```
    ///
    /// # Panics
    /// When iterated, if `table` is another world's and names an index this
    /// world never used.
    #[inline]
    pub fn table_entities<'w>(&'w self, table: &'w Archetype) -> TableEntities<'w> {
        TableEntities::new(table.entity_indices(), &self.entities)
    }

    /// The entity in row `row` of `table`, one of this world's tables.
    ///
    /// # Panics
    /// If `row` is out of bounds (or `table` is another world's and names
    /// an index this world never used).
    #[inline]
    pub fn table_entity(&self, table: &Archetype, row: usize) -> Entity {
        self.entities.entity_at(table.entity_indices()[row])
    }

    /// The info of bundle `B`, registering it if needed.
    pub(crate) fn register_bundle<B: Bundle>(&mut self) -> &BundleInfo {
        self.bundles.register::<B>(&mut self.components)
    }

    /// The info of a registered bundle.
    pub(crate) fn bundle_info(&self, bundle: BundleId) -> &BundleInfo {
        self.bundles.get(bundle)
    }

    /// The components of a registered bundle, in bundle order.
    pub(crate) fn bundle_components(&self, bundle: BundleId) -> &[ComponentId] {
        self.bundles.get(bundle).components()
    }

    #[inline]
    pub(crate) fn location(&self, entity: Entity) -> Option<EntityLocation> {
        self.entities.get(entity)
    }

    /// Bytes of table memory: component columns and entity columns of every
    /// archetype, plus the entity table.
    pub fn allocated_bytes(&self) -> usize {
        self.archetypes.as_slice().iter().map(|a| a.allocated_bytes()).sum::<usize>()
            + self.entities.allocated_bytes()
            + self.sparse.allocated_bytes()
    }

    /// Checks the world's internal invariants: every live entity's location
    /// points at a row that holds that entity, every row belongs to a live
    /// entity, columns agree in length and type with the signature, the free
    /// list is sane (every free index on it once, none lost) and every cached
    /// edge of the archetype graph joins the right tables. For tests.
    #[doc(hidden)]
    pub fn check_invariants(&self) -> Result<(), String> {
        self.entities.check_invariants()?;
        self.archetypes.check_invariants(&self.components, &self.bundles)?;
        self.pools.check_invariants()?;
        let mut rows = 0;
        for archetype in self.archetypes.as_slice() {
            for (r, &index) in archetype.entity_indices().iter().enumerate() {
                let expected = EntityLocation { archetype: archetype.id(), row: Row(r as u32) };
                let found = self.entities.live_at(index);
                if found.map(|(_, location)| location) != Some(expected) {
                    return Err(format!(
                        "entity index {index} in archetype {:?} row {r} is recorded at {found:?}",
                        archetype.id(),
                    ));
                }
            }
            rows += archetype.len();
        }
        if rows != self.len() {
            return Err(format!("{rows} rows but {} live entities", self.len()));
        }
        self.sparse.check_invariants(&self.components, |e| self.contains(e))?;
        for check in &self.relations.checks {
            check(self)?;
        }
        Ok(())
    }
}

/// Queries without a `QueryState` to keep. In `World`'s own module so that
/// compiler notes name them `World::query` and so on.
impl World {
    /// Iterates the entities that match the read-only query `Q`.
    ///
    /// Builds no cache; for a query run every frame, keep a
    /// [`QueryState`](crate::QueryState).
    pub fn query<Q: ReadOnlyQueryData>(&self) -> QueryIter<'_, 'static, Q, ()> {
        self.query_filtered::<Q, ()>()
    }

    /// Iterates the entities that match the read-only query `Q` and pass `F`.
    pub fn query_filtered<Q: ReadOnlyQueryData, F: QueryFilter>(&self) -> QueryIter<'_, 'static, Q, F> {
        QueryIter::over_world(self)
    }

    /// Iterates the entities that match `Q`, with mutable access.
    ///
    /// # Panics
    /// If `Q` would alias a component (`(&mut A, &A)`).
    pub fn query_mut<Q: QueryData>(&mut self) -> QueryIter<'_, 'static, Q, ()> {
        self.query_filtered_mut::<Q, ()>()
    }

    /// Iterates the entities that match `Q` and pass `F`, with mutable access.
    ///
    /// # Panics
    /// If `Q` would alias a component (`(&mut A, &A)`).
    pub fn query_filtered_mut<Q: QueryData, F: QueryFilter>(&mut self) -> QueryIter<'_, 'static, Q, F> {
        QueryIter::over_world_mut(self)
    }

    /// The item of the read-only query `Q` for one entity: several
    /// components at once, `Option`s for the ones it may lack.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component, Debug, PartialEq)] struct Hp(u32);
    /// # #[derive(Component, Debug, PartialEq)] struct Name(&'static str);
    /// let mut world = World::new();
    /// let e = world.spawn((Hp(3), Name("orc")));
    /// let (hp, name) = world.query_one::<(&Hp, Option<&Name>)>(e).unwrap();
    /// assert_eq!((hp, name), (&Hp(3), Some(&Name("orc"))));
    /// ```
    pub fn query_one<Q: ReadOnlyQueryData>(&self, entity: Entity) -> Result<Q::Item<'_>, QueryEntityError> {
        crate::query::query_one::<Q>(self, entity)
    }

    /// The item of query `Q` for one entity, with mutable access.
    ///
    /// # Panics
    /// If `Q` would alias a component (`(&mut A, &A)`).
    pub fn query_one_mut<Q: QueryData>(&mut self, entity: Entity) -> Result<Q::Item<'_>, QueryEntityError> {
        crate::query::query_one_mut::<Q>(self, entity)
    }

    /// The items of the read-only query `Q` for several entities, in the
    /// order given; an entity may be named more than once.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component, Debug, PartialEq)] struct Hp(u32);
    /// let mut world = World::new();
    /// let (a, b) = (world.spawn(Hp(1)), world.spawn(Hp(2)));
    /// assert_eq!(world.query_many::<&Hp, 2>([b, a]).unwrap(), [&Hp(2), &Hp(1)]);
    /// ```
    ///
    /// # Errors
    /// The first entity, in the order given, that is not alive or does not
    /// match.
    pub fn query_many<Q: ReadOnlyQueryData, const N: usize>(
        &self,
        entities: [Entity; N],
    ) -> Result<[Q::Item<'_>; N], QueryEntityError> {
        crate::query::query_many::<N, Q>(self, entities)
    }

    /// The items of query `Q` for several distinct entities, with mutable
    /// access, in the order given.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component, Debug, PartialEq)] struct Health(u32);
    /// let mut world = World::new();
    /// let (a, b) = (world.spawn(Health(10)), world.spawn(Health(4)));
    /// let [mut x, mut y] = world.query_many_mut::<&mut Health, 2>([a, b]).unwrap();
    /// x.0 -= 3;
    /// y.0 += 3;
    /// assert_eq!(world.get::<Health>(b), Some(&Health(7)));
    /// assert_eq!(
    ///     world.query_many_mut::<&mut Health, 2>([a, a]).err(),
    ///     Some(QueryEntityError::AliasedMutability(a))
    /// );
    /// ```
    ///
    /// # Errors
    /// [`QueryEntityError::AliasedMutability`] if an entity is named twice
    /// (checked first); else the first entity, in the order given, that is
    /// not alive or does not match.
    ///
    /// # Panics
    /// If `Q` would alias a component (`(&mut A, &A)`).
    pub fn query_many_mut<Q: QueryData, const N: usize>(
        &mut self,
        entities: [Entity; N],
    ) -> Result<[Q::Item<'_>; N], QueryEntityError> {
        crate::query::query_many_mut::<N, Q>(self, entities)
    }

    /// Despawns every entity that passes filter `F` (for example
    /// `With<Expired>`, `(With<Enemy>, Without<Boss>)`), running the
    /// despawn hooks of each, and returns how many it despawned. Change
    /// filters (`Changed`, `Added`) count every change the world still
    /// remembers. An entity that an earlier entity's hook commands
    /// despawned is not counted.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component)] struct Hp(u32);
    /// # #[derive(Component)] struct Dead;
    /// let mut world = World::new();
    /// let alive = world.spawn(Hp(3));
    /// world.spawn((Hp(0), Dead));
    /// world.spawn(Dead);
    /// assert_eq!(world.despawn_where::<With<Dead>>(), 2);
    /// assert_eq!((world.len(), world.contains(alive)), (1, true));
    /// ```
    pub fn despawn_where<F: QueryFilter>(&mut self) -> usize {
        self.flush();
        let doomed: Vec<Entity> = self.query_filtered::<Entity, F>().collect();
        self.despawn_each(doomed)
    }
}

impl fmt::Debug for World {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("World")
            .field("entities", &self.len())
            .field("archetypes", &self.archetypes.len())
            .field("components", &self.components.len())
            .field("resources", &self.resources.len())
            .finish()
    }
}
