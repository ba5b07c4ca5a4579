//! The hooked operations: spawn, insert, remove, despawn, take and clear
//! in a world where some component has hooks or observers, each with its
//! hooks around it, and the commands they queue applied before it returns.
//! How a hook is called, and the plans that let an operation nothing
//! watches skip all of it (`plan.rs`).

use std::any::Any;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

use crate::component::bundle::{Bundle, BundleId};
use crate::component::ComponentId;
use crate::entity::error::{ComponentError, EntityError};
use crate::entity::Entity;
use crate::storage::archetype::ArchetypeId;
use crate::world::World;

use super::plan::{AfterInsert, REMOVAL};
use super::registry::{Hook, HookKind, Phase, AFTER, BEFORE};
use super::view::HookWorld;

/// Which of a bundle's components a hook kind fires for, judged against the
/// archetype the entity was in before the operation.
#[derive(Clone, Copy)]
enum Which<'a> {
    All,
    In(&'a Before),
    NotIn(&'a Before),
}

/// What an entity had before an insert: its archetype, and the components
/// in sparse storage it had (which no archetype records).
pub(crate) struct Before {
    archetype: ArchetypeId,
    sparse: Vec<ComponentId>,
}

impl Before {
    /// Nothing: the state before a spawn.
    pub(crate) const NOTHING: Before = Before { archetype: ArchetypeId::EMPTY, sparse: Vec::new() };

    /// Whether the entity had component `id`.
    fn had(&self, world: &World, id: ComponentId) -> bool {
        if world.components().info(id).is_sparse() {
            self.sparse.contains(&id)
        } else {
            world.archetypes()[self.archetype].contains(id)
        }
    }
}

impl World {
    /// [`World::spawn`] with hooks registered: spawns, then runs `on_add`
    /// and `on_insert`. Not cold: every spawn takes this path in a world
    /// where some component has hooks (any world with a hierarchy).
    #[inline(never)]
    pub(crate) fn spawn_hooked<B: Bundle>(&mut self, bundle: B) -> Entity {
        let (entity, info, at) = self.spawn_unhooked_at(bundle);
        if B::ENGINE_HOOKED {
            // Only a bundle with engine hooks can have a quick join.
            self.after_spawn_at(info, entity, at);
        } else {
            self.after_spawn_hooks(info, entity);
        }
        entity
    }

    /// [`World::after_spawn_at`] in a call of its own: for a loop that
    /// spawns inline and runs hooks only in some worlds.
    #[inline(never)]
    pub(crate) fn after_spawn_call(&mut self, bundle: BundleId, entity: Entity, at: crate::entity::EntityLocation) {
        self.after_spawn_at(bundle, entity, at);
    }

    /// The hooks of a spawn that wrote `bundle` into the fresh `entity` at
    /// `at`: a relationship's quick join when that is all there is to run
    /// (and the target has a list), else [`World::after_spawn_hooks`].
    #[inline(always)]
    pub(crate) fn after_spawn_at(&mut self, bundle: BundleId, entity: Entity, at: crate::entity::EntityLocation) {
        if let Some(join) = self.spawn_join_plan(bundle)
            && join(self, entity, at)
        {
            return;
        }
        self.after_spawn_hooks(bundle, entity);
    }

    /// Whether spawning a `B` runs a hook or an observer, in a world that
    /// has some: most bundles have nothing that watches them, and spawn in
    /// the caller's loop as without hooks. A call of its own, to keep that
    /// loop small; one per operation, so that each stays as small.
    #[inline(never)]
    pub(crate) fn spawn_runs_hooks<B: Bundle>(&mut self) -> bool {
        let bundle = self.bundles.register::<B>(&mut self.components).id();
        self.after_insert_plan(bundle) != AfterInsert::Nothing
    }

    /// Whether inserting a `B` into an entity that has none of its
    /// components runs nothing of the user's: no user hook and no observer
    /// of adding or inserting them or the components they require (the
    /// replacing of a component cannot happen there), only the engine's
    /// own hooks, if any. A relationship's quick join asks it before
    /// placing a target's first list without the hook machinery: the
    /// engine's hook on a list's insert (the one that undoes a list
    /// inserted by hand) lets a list the engine places be.
    #[cfg(feature = "hierarchy")]
    #[inline(always)]
    pub(crate) fn insert_of_new_runs_engine_only<B: Bundle>(&mut self) -> bool {
        match self.known_engine_only_insert(std::any::TypeId::of::<B>()) {
            Some(only) => only,
            None => self.work_out_engine_only_insert::<B>(),
        }
    }

    /// [`World::insert_of_new_runs_engine_only`] of a bundle type other
    /// than the last one asked, or after a hook or an observer came or
    /// went.
    #[cfg(feature = "hierarchy")]
    #[inline(never)]
    fn work_out_engine_only_insert<B: Bundle>(&mut self) -> bool {
        let kind = std::any::TypeId::of::<B>();
        let bundle = self.bundles.register::<B>(&mut self.components).id();
        let only = matches!(self.after_insert_plan(bundle), AfterInsert::Nothing | AfterInsert::Engine { .. });
        self.remember_engine_only_insert(kind, only);
        only
    }

    /// [`World::spawn_runs_hooks`] for an insert.
    #[inline(never)]
    pub(crate) fn insert_runs_hooks<B: Bundle>(&mut self) -> bool {
        let bundle = self.bundles.register::<B>(&mut self.components).id();
        self.insert_runs_anything(bundle)
    }

    /// [`World::spawn_runs_hooks`] for a removal.
    #[inline(never)]
    pub(crate) fn remove_runs_hooks<B: Bundle>(&mut self) -> bool {
        let bundle = self.bundles.register::<B>(&mut self.components).id();
        self.remove_runs_anything(bundle)
    }

    /// Runs a world operation that runs hooks, then applies the commands
    /// they queued ([`World::finish_hooked`]) — also when the operation
    /// stops midway because a hook, a destructor or a reset panicked, so
    /// that what the hooks that did run set in motion (the engine's own
    /// relationship bookkeeping among it) is complete before the panic goes
    /// on.
    fn with_hooks<R>(&mut self, op: impl FnOnce(&mut World) -> R) -> R {
        match catch_unwind(AssertUnwindSafe(|| op(self))) {
            Ok(result) => {
                self.finish_hooked();
                result
            }
            Err(payload) => {
                // A command that panics in turn only loses its own work;
                // the first panic is the one the caller sees.
                let _ = catch_unwind(AssertUnwindSafe(|| self.finish_hooked()));
                resume_unwind(payload)
            }
        }
    }

    /// Runs the hooks of a spawn that just wrote `bundle` into `entity`,
    /// and the commands they queue.
    #[inline(never)]
    pub(crate) fn after_spawn_hooks(&mut self, bundle: BundleId, entity: Entity) {
        match self.after_insert_plan(bundle) {
            AfterInsert::Nothing => {}
            AfterInsert::Engine { start, end } => {
                let spawned = self.entities.get(entity);
                self.with_hooks(|world| world.run_engine_inserts(start, end, entity, spawned))
            }
            AfterInsert::General => {
                self.with_hooks(|world| world.fire_after_insert_in_full(bundle, entity, &Before::NOTHING))
            }
        }
    }

    /// [`World::insert`] with hooks registered.
    #[cold]
    #[inline(never)]
    pub(crate) fn insert_hooked<B: Bundle>(&mut self, entity: Entity, bundle: B) -> Result<(), EntityError> {
        self.flush();
        let location = self.location(entity).ok_or(EntityError::NoSuchEntity(entity))?;
        let info = self.bundle_id::<B>();
        let before = self.before(entity, location);
        self.with_hooks(|world| {
            world.fire_replace_hooks(info, entity, &before);
            // Hooks cannot move rows, so the entity is still where it was.
            world.insert_unhooked(entity, bundle)?;
            world.fire_after_insert(info, entity, &before);
            Ok(())
        })
    }

    /// [`World::insert_built`] with hooks registered: the hooks of
    /// [`World::insert`] for the builder's components.
    #[cold]
    #[inline(never)]
    pub(crate) fn insert_built_hooked(
        &mut self,
        entity: Entity,
        builder: &mut crate::storage::builder::EntityBuilder,
    ) -> Result<(), EntityError> {
        self.flush();
        let location = self.location(entity).ok_or(EntityError::NoSuchEntity(entity))?;
        let bundle = self.register_built(builder);
        let before = self.before(entity, location);
        self.with_hooks(|world| {
            world.fire_replace_hooks(bundle, entity, &before);
            // Hooks cannot move rows, so the entity is still where it was.
            world.insert_built_unhooked(entity, builder)?;
            world.fire_after_insert(bundle, entity, &before);
            Ok(())
        })
    }

    /// The `on_replace` hooks of an insert of run-time bundle `bundle` into
    /// `entity`, which is in `before`: for the components it has.
    pub(crate) fn fire_replace_hooks(&mut self, bundle: BundleId, entity: Entity, before: &Before) {
        for phase in BEFORE {
            self.fire_bundle(HookKind::Replace, bundle, entity, Which::In(before), phase);
        }
    }

    /// The hooks after the write of an insert (or spawn) of `bundle` into
    /// `entity`, which was in `before`: `on_add` for the new components,
    /// `on_insert` for all, the engine's first.
    fn fire_after_insert(&mut self, bundle: BundleId, entity: Entity, before: &Before) {
        match self.after_insert_plan(bundle) {
            AfterInsert::Nothing => {}
            AfterInsert::Engine { start, end } => self.run_engine_inserts(start, end, entity, None),
            AfterInsert::General => self.fire_after_insert_in_full(bundle, entity, before),
        }
    }

    /// [`World::fire_after_insert`] for a bundle something of the user's
    /// (or more than the engine's joins) watches.
    fn fire_after_insert_in_full(&mut self, bundle: BundleId, entity: Entity, before: &Before) {
        for phase in AFTER {
            if phase == Phase::User && !self.user_reacts_to_insert(bundle) {
                // Nothing of the user's to run (the common case of a child
                // spawned with only the engine's relationship upkeep).
                continue;
            }
            self.fire_bundle(HookKind::Add, bundle, entity, Which::NotIn(before), phase);
            self.fire_required(HookKind::Add, bundle, entity, before, phase);
            self.fire_bundle(HookKind::Insert, bundle, entity, Which::All, phase);
            self.fire_required(HookKind::Insert, bundle, entity, before, phase);
        }
    }

    /// Whether the user's pass after an insert of `bundle` has anything to
    /// run: an observer, or a user `on_add` / `on_insert` hook of one of
    /// its components or of those it requires.
    fn user_reacts_to_insert(&self, bundle: BundleId) -> bool {
        if !self.hooks.observers.is_empty() {
            return true;
        }
        let info = self.bundle_info(bundle);
        let ids = self.bundle_components(bundle).iter().copied().chain(info.required().iter().map(|r| r.id));
        ids.into_iter().any(|id| self.hooks.has_user(id, HookKind::Add) || self.hooks.has_user(id, HookKind::Insert))
    }

    /// What `entity`, alive at `location`, has now, for the hooks of an
    /// insert about to happen.
    pub(crate) fn before(&self, entity: Entity, location: crate::entity::EntityLocation) -> Before {
        let sparse =
            if self.sparse_sets().any() { self.sparse_sets().components_of(entity).collect() } else { Vec::new() };
        Before { archetype: location.archetype, sparse }
    }

    /// The hooks that follow the write of an insert of `bundle` into
    /// `entity`, which was in `before`: `on_add` for the new components,
    /// `on_insert` for all; then the commands they queued.
    pub(crate) fn fire_insert_hooks(&mut self, bundle: BundleId, entity: Entity, before: &Before) {
        self.with_hooks(|world| world.fire_after_insert(bundle, entity, before));
    }

    /// [`World::remove`] with hooks registered. Runs no hook if the entity
    /// lacks one of the components (the removal fails).
    #[cold]
    #[inline(never)]
    pub(crate) fn remove_hooked<B: Bundle>(&mut self, entity: Entity) -> Result<B, ComponentError> {
        self.flush();
        self.with_hooks(|world| {
            if let Some(location) = world.location(entity) {
                let info = world.bundle_id::<B>();
                if world.bundle_components(info).iter().all(|&id| world.has_id(entity, location, id)) {
                    for phase in BEFORE {
                        world.fire_bundle(HookKind::Replace, info, entity, Which::All, phase);
                        world.fire_bundle(HookKind::Remove, info, entity, Which::All, phase);
                    }
                }
            }
            world.remove_unhooked::<B>(entity)
        })
    }

    /// [`World::despawn`] with hooks registered.
    #[cold]
    #[inline(never)]
    pub(crate) fn despawn_hooked(&mut self, entity: Entity) -> Result<(), EntityError> {
        self.flush();
        let location = self.location(entity).ok_or(EntityError::NoSuchEntity(entity))?;
        if !self.despawn_runs_anything(location.archetype) {
            return self.despawn_unhooked(entity);
        }
        self.with_hooks(|world| {
            world.fire_despawn(entity, location.archetype, &BEFORE);
            world.despawn_unhooked(entity)
        })
    }

    /// Despawns the live entities of `entities`, in order, as one
    /// operation: each one's hooks run just before it goes, and the commands
    /// the hooks queue are applied after the last (so bookkeeping about an
    /// entity that goes later in the list, such as emptying a parent's list
    /// of children, is not done only to be undone). Returns how many were
    /// despawned.
    #[cfg(feature = "hierarchy")]
    pub(crate) fn despawn_all(&mut self, entities: &[Entity]) -> usize {
        self.flush();
        if !self.hooks.is_active() {
            return entities.iter().filter(|&&e| self.despawn_unhooked(e).is_ok()).count();
        }
        self.with_hooks(|world| {
            let mut despawned = 0;
            for &entity in entities {
                let Some(location) = world.location(entity) else { continue };
                world.fire_despawn(entity, location.archetype, &BEFORE);
                if world.despawn_unhooked(entity).is_ok() {
                    despawned += 1;
                }
            }
            despawned
        })
    }

    /// Despawns a whole tree: `entities` are `root` and all its
    /// descendants, deepest first, as [`World::despawn_all`]. When nothing
    /// but the hierarchy's own upkeep runs for any of them (no user hook,
    /// no observer, no other relationship), the descendants go without
    /// hooks: each one's parent goes too, so leaving the parent's list, and
    /// orphaning children that are already gone, would only tidy lists
    /// that go with their owners, and no user code can see them meanwhile.
    /// The root still leaves its own parent. Inside an `all_or_nothing`,
    /// every hook runs.
    #[cfg(feature = "hierarchy")]
    pub(crate) fn despawn_tree(&mut self, entities: &[Entity], root: Entity) -> usize {
        self.flush();
        if !self.hooks.is_active() || !self.relations().txn_marks.is_empty() {
            return self.despawn_all(entities);
        }
        let hierarchy_only = entities.iter().all(|&entity| match self.location(entity) {
            Some(location) => self.despawn_runs_hierarchy_only(location.archetype),
            None => true,
        });
        if !hierarchy_only {
            return self.despawn_all(entities);
        }
        self.with_hooks(|world| {
            let mut despawned = 0;
            for &entity in entities {
                if entity == root
                    && let Some(location) = world.location(entity)
                {
                    world.fire_despawn(entity, location.archetype, &BEFORE);
                }
                if world.despawn_unhooked(entity).is_ok() {
                    despawned += 1;
                }
            }
            despawned
        })
    }

    /// [`World::take`] with hooks registered: the despawn hooks, then the
    /// values move out.
    #[cold]
    #[inline(never)]
    pub(crate) fn take_hooked(&mut self, entity: Entity) -> Result<crate::storage::builder::BuiltBundle, EntityError> {
        self.flush();
        let location = self.location(entity).ok_or(EntityError::NoSuchEntity(entity))?;
        self.with_hooks(|world| {
            world.fire_despawn(entity, location.archetype, &BEFORE);
            // Hooks cannot move rows, so the entity is still where it was.
            world.take_unhooked(entity)
        })
    }

    /// [`World::clear`] with hooks registered: the user's despawn hooks and
    /// observers of every entity that has a component they watch, then the
    /// clear.
    #[cold]
    #[inline(never)]
    pub(crate) fn clear_hooked(&mut self) {
        self.flush();
        self.with_hooks(|world| {
            // Only what the user watches: the engine's hooks (a
            // relationship's upkeep) are not run, every list going with its
            // owner, so a table of children is passed over whole.
            let reacts = |world: &World, id| world.reacts_to_user(id, &REMOVAL);
            // A sparse component belongs to no archetype: if one reacts,
            // every entity may have it.
            let sparse_reacts = world.sparse_sets().iter().any(|set| !set.is_empty() && reacts(world, set.id()));
            for a in 0..world.archetypes().len() {
                let archetype = &world.archetypes().as_slice()[a];
                if !sparse_reacts && !archetype.components().iter().any(|&id| reacts(world, id)) {
                    continue;
                }
                let id = archetype.id();
                // Hooks cannot move rows, so the table keeps its rows meanwhile.
                for row in 0..archetype.len() {
                    let entity = world.entities().entity_at(world.archetypes()[id].entity_indices()[row]);
                    // The user's hooks only: every list goes with its owner,
                    // so the engine's upkeep would be undone at once.
                    world.fire_despawn(entity, id, &[Phase::User]);
                }
            }
            world.clear_unhooked();
            world.detach_all_observers();
            world.relations_mut().pending.clear();
            world.relations_mut().cuts.clear();
        });
    }

    /// The id of bundle `B`, registering it if needed.
    fn bundle_id<B: Bundle>(&mut self) -> BundleId {
        self.register_bundle::<B>().id()
    }

    /// Runs the despawn hooks of `entity`, which is in `archetype`: for each
    /// kind, over its components in id order.
    fn fire_despawn(&mut self, entity: Entity, archetype: ArchetypeId, phases: &[Phase]) {
        let sparse: Vec<ComponentId> =
            if self.sparse_sets().any() { self.sparse_sets().components_of(entity).collect() } else { Vec::new() };
        for &phase in phases {
            for kind in [HookKind::Despawn, HookKind::Replace, HookKind::Remove] {
                for i in 0..self.archetypes()[archetype].components().len() {
                    let id = self.archetypes()[archetype].components()[i];
                    self.fire(kind, id, entity, phase);
                }
                // Hooks cannot remove components, so the entity still has these.
                for &id in &sparse {
                    self.fire(kind, id, entity, phase);
                }
            }
        }
        self.detach_observers(entity);
    }

    /// Installs the engine hooks ([`Component::ENGINE_HOOKS`]) of the
    /// component types registered since the last call.
    #[inline]
    pub(crate) fn install_engine_hooks(&mut self) {
        if self.components().has_pending_hooks() {
            self.install_pending_hooks();
        }
    }

    /// [`World::install_engine_hooks`] with some to install: once per
    /// component type, out of the way of the lookups that check.
    #[cold]
    #[inline(never)]
    fn install_pending_hooks(&mut self) {
        if let Some(pending) = self.components_mut().take_pending_hooks() {
            for install in pending {
                install(self);
            }
        }
    }

    /// Runs the `kind` hooks of the components of `bundle` that `which`
    /// selects, in bundle order.
    fn fire_bundle(&mut self, kind: HookKind, bundle: BundleId, entity: Entity, which: Which, phase: Phase) {
        self.install_engine_hooks();
        for i in 0..self.bundle_components(bundle).len() {
            let id = self.bundle_components(bundle)[i];
            let selected = match which {
                Which::All => true,
                Which::In(before) => before.had(self, id),
                Which::NotIn(before) => !before.had(self, id),
            };
            if selected {
                self.fire(kind, id, entity, phase);
            }
        }
    }

    /// Runs the `kind` hooks of the required components that inserting
    /// `bundle` into `entity`, which was in `before`, added (those `before`
    /// lacks), in requirement order, after the bundle's own.
    fn fire_required(&mut self, kind: HookKind, bundle: BundleId, entity: Entity, before: &Before, phase: Phase) {
        for i in 0..self.bundle_info(bundle).required().len() {
            let id = self.bundle_info(bundle).required()[i].id;
            if !before.had(self, id) {
                self.fire(kind, id, entity, phase);
            }
        }
    }

    /// Runs the `kind` hooks of component `id` on `entity` that belong to
    /// `phase`, in registration order; in the user's pass, then the
    /// observers of the matching lifecycle event.
    fn fire(&mut self, kind: HookKind, id: ComponentId, entity: Entity, phase: Phase) {
        let mut i = 0;
        while let Some(hook) = self.hooks.get(id, kind, i) {
            i += 1;
            let hook = match hook {
                #[cfg(feature = "hierarchy")]
                Hook::Plain(hook) => {
                    if phase == Phase::Engine {
                        hook(self, entity, None);
                    }
                    continue;
                }
                Hook::Shared(hook) if phase == Phase::User => hook,
                Hook::Shared(_) => continue,
            };
            // The hook's commands go to the world's queue, lent out meanwhile.
            // If the hook panics, the commands it queued are dropped and the
            // ones queued before it stay, for the operation to apply.
            let mut commands = std::mem::take(self.hooks.queue());
            let before = commands.len();
            let result = catch_unwind(AssertUnwindSafe(|| {
                hook(&mut HookWorld { world: &mut *self, commands: &mut commands }, entity);
            }));
            if result.is_err() {
                commands.truncate(before);
            }
            *self.hooks.queue() = commands;
            if let Err(payload) = result {
                resume_unwind(payload);
            }
        }
        if phase == Phase::User && !self.hooks.observers.is_empty() {
            self.fire_observers(kind, id, entity);
        }
    }

    /// Whether adding component `id` to an entity has anything to run: an
    /// `on_add` or `on_insert` hook, or an observer of those events.
    pub(crate) fn reacts_to_insert(&mut self, id: ComponentId) -> bool {
        self.install_engine_hooks();
        let lifecycle = self.components().info(id).lifecycle();
        let mut watched = self.hooks.has(id, HookKind::Add) || self.hooks.has(id, HookKind::Insert);
        for kind in [HookKind::Add, HookKind::Insert].into_iter().filter(|_| !self.hooks.observers.is_empty()) {
            lifecycle(kind, &mut |event, _| watched |= self.hooks.observers.watches(Any::type_id(event)));
        }
        watched
    }

    /// Ends a world operation that ran hooks: applies the commands they
    /// queued, and those that the hooks of those commands queue, until none
    /// is left (unless an operation up the stack is already doing that).
    /// Then makes reserved entities live, as the next spawn needs.
    #[inline]
    fn finish_hooked(&mut self) {
        let idle =
            self.hooks.queue().is_empty() && self.relations().cuts.is_empty() && self.relations().pending.is_empty();
        if idle || self.hooks.applying {
            self.flush();
        } else {
            self.finish_applying();
        }
    }

    /// [`World::finish_hooked`] with commands to apply and no operation up
    /// the stack applying them.
    #[inline(never)]
    fn finish_applying(&mut self) {
        let applied = catch_unwind(AssertUnwindSafe(|| {
            self.hooks.applying = true;
            let applying = Applying(self);
            loop {
                let mut commands = std::mem::take(applying.0.hooks.queue());
                if commands.is_empty() {
                    break;
                }
                commands.apply(applying.0);
            }
        }));
        // Links to cut and lists whose commands were lost to a
        // panicking command before them are done all the same.
        if !self.relations().cuts.is_empty() {
            let _ = catch_unwind(AssertUnwindSafe(|| self.settle_cuts()));
        }
        if !self.relations().pending.is_empty() {
            let _ = catch_unwind(AssertUnwindSafe(|| self.settle_relationships()));
        }
        self.flush();
        if let Err(payload) = applied {
            resume_unwind(payload);
        }
    }
}

/// Marks the world's hook queue as being applied; on drop (also while
/// unwinding from a panicking command) unmarks it. What is left queued is
/// applied by the operation that catches the panic (`World::with_hooks`).
struct Applying<'w>(&'w mut World);

impl Drop for Applying<'_> {
    fn drop(&mut self) {
        self.0.hooks.applying = false;
    }
}
