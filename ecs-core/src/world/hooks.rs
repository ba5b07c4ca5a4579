//! Component lifecycle hooks: functions the world calls when an entity gains,
//! writes or loses a component, or is despawned; the restricted world view
//! they receive; and the queue of commands they defer.
//!
//! # When hooks run
//!
//! Every hook runs while the tables are consistent, never in the middle of a
//! row move: `on_add` and `on_insert` after the values are written,
//! `on_replace`, `on_remove` and `on_despawn` before anything is moved or
//! dropped, so the value is still readable. The order is fixed:
//!
//! | operation | hooks, in this order |
//! |---|---|
//! | `spawn` | `on_add` for each component, then `on_insert` for each |
//! | `insert` | `on_replace` for each component the entity had, then the write, then `on_add` for each new one, then `on_insert` for each one written |
//! | `remove` | `on_replace` for each removed component, then `on_remove` for each, then the removal |
//! | `despawn` | `on_despawn` for each component, then `on_replace` for each, then `on_remove` for each, then the entity goes |
//! | `clear` | the `despawn` hooks of every entity (table by table, row by row), then the clear |
//!
//! Commands that hooks queue apply right after the operation, before the
//! world method returns; during `clear`, an entity they spawn is cleared too.
//!
//! Observers of the lifecycle events (`OnAdd<T>`, ... in `observer/`) run
//! at the same moments: for each component, its hooks of one kind, then its
//! observers of that kind, then the next component. Their commands wait
//! with the hooks' commands. Required components (`component/required.rs`) that a
//! spawn or insert adds come after the bundle's own, in each kind.
//!
//! Within one kind, `spawn`, `insert` and `remove` go through the components
//! in the bundle's order (as written in the tuple or struct); `despawn` and
//! `clear` in component id order (the order the world first saw the types).
//! Several hooks of one kind on one component run in registration order.
//!
//! `spawn_batch` runs the spawn hooks of each entity (and applies their
//! commands) before spawning the next. `spawn_built_batch` and
//! `insert_built_batch` place every entity first, then run the hooks of
//! each, so each hook sees the whole batch. Deferred [`Commands`] go through
//! the same world methods, so their hooks fire too; save-game loading and
//! prefab spawns place each entity whole (one table move) and run the hooks
//! of a tuple of its components, a load once all its entities are in place.

mod plan;

use std::any::Any;
use std::fmt;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex, PoisonError};

use crate::component::bundle::{Bundle, BundleId};
use crate::component::change::Mut;
use crate::component::{Component, ComponentId};
use crate::entity::error::{ComponentError, EntityError, QueryEntityError};
use crate::entity::Entity;
use crate::observer::Delivery;
use crate::query::{QueryFilter, QueryIter, ReadOnlyQueryData};
use crate::storage::archetype::ArchetypeId;
use crate::storage::resource::Resource;
use crate::system::Commands;
use crate::world::command_queue::CommandQueue;
use crate::world::entity_ref::EntityRef;
use crate::world::event::Event;
use crate::world::World;

use plan::{AfterInsert, REMOVAL};

/// A hook as stored: shared, so the world can clone it out before calling it
/// with `&mut` access to itself.
/// A hook as the user gives it.
type HookFn = dyn Fn(&mut HookWorld<'_>, Entity) + Send + Sync;

/// An engine hook: a plain function with the whole world, which queues
/// its commands itself (`World::defer`). The location is given when the
/// entity was spawned just now (nothing can point at it yet), `None` for
/// every other call.
pub(crate) type EngineHook = fn(&mut World, Entity, Option<crate::entity::EntityLocation>);

/// A relationship's join for a source spawned just now at the location
/// given, when its target has a list: one push, without the hook
/// machinery. Whether it joined; if not (no list yet, a dead target, a
/// link to refuse), the component's insert hook runs as usual.
#[cfg_attr(not(feature = "hierarchy"), allow(dead_code))]
pub(crate) type SpawnJoin = fn(&mut World, Entity, crate::entity::EntityLocation) -> bool;

/// A registered hook: a plain function (the engine's own, copied out for a
/// call at no cost) or a shared closure (the user's).
#[derive(Clone)]
enum Hook {
    #[cfg(feature = "hierarchy")]
    Plain(EngineHook),
    Shared(Arc<HookFn>),
}

impl Hook {
    /// Whether the hook belongs to the `phase` pass.
    fn runs_in(&self, phase: Phase) -> bool {
        match self {
            #[cfg(feature = "hierarchy")]
            Hook::Plain(_) => phase == Phase::Engine,
            Hook::Shared(_) => phase == Phase::User,
        }
    }
}

/// The five moments a hook can watch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HookKind {
    Add,
    Insert,
    Replace,
    Remove,
    Despawn,
}

const KINDS: usize = 5;

/// Which hooks a pass runs: the engine's own (the relationships' list
/// upkeep) or the user's (hooks and observers). Before an operation the
/// user's run first, so that one that panics stops the operation before the
/// engine has changed anything; after it the engine's run first, so that
/// its upkeep is complete whatever the user's do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Engine,
    User,
}

/// The passes before an operation, in order.
const BEFORE: [Phase; 2] = [Phase::User, Phase::Engine];
/// The passes after an operation, in order.
const AFTER: [Phase; 2] = [Phase::Engine, Phase::User];

/// The hooks registered for one component type; returned by
/// [`World::register_component_hooks`], whose builder methods add to it.
///
/// Registering a second hook of a kind does not replace the first: both run,
/// in registration order. A hook is any
/// `Fn(&mut HookWorld<'_>, Entity) + Send + Sync + 'static`; see
/// [`World::register_component_hooks`] for when each runs.
///
/// ```
/// use archetable::prelude::*;
///
/// #[derive(Component)] struct Health(u32);
/// #[derive(Default)] struct Alive(u32);
///
/// let mut world = World::new();
/// world.init_resource::<Alive>();
/// world
///     .register_component_hooks::<Health>()
///     .on_add(|world, _| world.resource_mut::<Alive>().0 += 1)
///     .on_remove(|world, _| world.resource_mut::<Alive>().0 -= 1);
/// let e = world.spawn(Health(3));
/// world.spawn(Health(5));
/// assert_eq!(world.resource::<Alive>().0, 2);
/// world.despawn(e).unwrap();
/// assert_eq!(world.resource::<Alive>().0, 1);
/// ```
#[derive(Clone, Default)]
pub struct ComponentHooks {
    by_kind: [Vec<Hook>; KINDS],
    /// A relationship component's [`SpawnJoin`], which a spawn runs in
    /// place of its insert hook (the engine's) when nothing else watches.
    #[cfg_attr(not(feature = "hierarchy"), allow(dead_code))]
    spawn_join: Option<SpawnJoin>,
}

impl ComponentHooks {
    fn push(&mut self, kind: HookKind, hook: impl Fn(&mut HookWorld<'_>, Entity) + Send + Sync + 'static) -> &mut Self {
        self.by_kind[kind as usize].push(Hook::Shared(Arc::new(hook)));
        self
    }

    /// Adds a plain-function hook of `kind`: the engine's own hooks, which
    /// run on every structural change of their components.
    #[cfg(feature = "hierarchy")]
    pub(crate) fn push_plain(&mut self, kind: HookKind, hook: EngineHook) -> &mut Self {
        self.by_kind[kind as usize].push(Hook::Plain(hook));
        self
    }

    /// Sets the quick join a relationship component's spawn may run instead
    /// of its engine insert hook.
    #[cfg(feature = "hierarchy")]
    pub(crate) fn set_spawn_join(&mut self, join: SpawnJoin) -> &mut Self {
        self.spawn_join = Some(join);
        self
    }

    /// Adds a hook that runs when an entity gets the component for the
    /// first time: spawned with it, or given it by an insert while it
    /// lacked one. Runs after the value is written.
    pub fn on_add(&mut self, hook: impl Fn(&mut HookWorld<'_>, Entity) + Send + Sync + 'static) -> &mut Self {
        self.push(HookKind::Add, hook)
    }

    /// Adds a hook that runs on every write of the component by spawn or
    /// insert, including one that overwrites an existing value. Runs after
    /// the value is written (and after the `on_add` hooks).
    pub fn on_insert(&mut self, hook: impl Fn(&mut HookWorld<'_>, Entity) + Send + Sync + 'static) -> &mut Self {
        self.push(HookKind::Insert, hook)
    }

    /// Adds a hook that runs when the component's value is about to be
    /// overwritten by an insert or to leave the entity (remove, despawn,
    /// clear). The old value is still readable.
    pub fn on_replace(&mut self, hook: impl Fn(&mut HookWorld<'_>, Entity) + Send + Sync + 'static) -> &mut Self {
        self.push(HookKind::Replace, hook)
    }

    /// Adds a hook that runs when the component is about to leave the
    /// entity, by remove, despawn or clear. The value is still readable.
    pub fn on_remove(&mut self, hook: impl Fn(&mut HookWorld<'_>, Entity) + Send + Sync + 'static) -> &mut Self {
        self.push(HookKind::Remove, hook)
    }

    /// Adds a hook that runs when an entity that has the component is about
    /// to be despawned (by despawn or clear), before the `on_replace` and
    /// `on_remove` hooks. The value is still readable.
    pub fn on_despawn(&mut self, hook: impl Fn(&mut HookWorld<'_>, Entity) + Send + Sync + 'static) -> &mut Self {
        self.push(HookKind::Despawn, hook)
    }

    /// Whether no hook is registered.
    pub fn is_empty(&self) -> bool {
        self.by_kind.iter().all(Vec::is_empty)
    }
}

impl fmt::Debug for ComponentHooks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [add, insert, replace, remove, despawn] = &self.by_kind;
        f.debug_struct("ComponentHooks")
            .field("on_add", &add.len())
            .field("on_insert", &insert.len())
            .field("on_replace", &replace.len())
            .field("on_remove", &remove.len())
            .field("on_despawn", &despawn.len())
            .finish()
    }
}

/// The world's hooks: per component, and the commands they queued that have
/// not applied yet.
#[derive(Default)]
pub(crate) struct Hooks {
    /// Indexed by component id; shorter than the component registry when
    /// the last types have no hooks.
    by_component: Vec<ComponentHooks>,
    /// Whether any hook was ever registered: the one check on the hot paths.
    active: bool,
    /// Changes whenever hooks are registered, so that the plans know when
    /// to be worked out again.
    generation: u64,
    /// What the hooks after an insert of each bundle come to.
    plans: plan::Plans,
    /// Commands queued by hooks. In a `Mutex` only so the world stays
    /// `Sync` (a command is `Send` but not `Sync`); it is only reached
    /// through `&mut`, never locked.
    queue: Mutex<CommandQueue>,
    /// Whether a world method up the stack is applying `queue`.
    applying: bool,
    /// The observers (see `observer/`): lifecycle events are triggered
    /// beside the hooks, and entity observers go with their entity.
    pub(crate) observers: crate::observer::Observers,
}

impl Hooks {
    /// Whether any hook is registered; when not, the world skips every hook
    /// path.
    #[inline(always)]
    pub(crate) fn is_active(&self) -> bool {
        self.active
    }

    /// The `i`-th `kind` hook of component `id`, cloned out.
    fn get(&self, id: ComponentId, kind: HookKind, i: usize) -> Option<Hook> {
        self.by_component.get(id.index())?.by_kind[kind as usize].get(i).cloned()
    }

    fn has(&self, id: ComponentId, kind: HookKind) -> bool {
        self.by_component.get(id.index()).is_some_and(|hooks| !hooks.by_kind[kind as usize].is_empty())
    }

    /// Whether component `id` has a user hook (not the engine's) of `kind`.
    pub(crate) fn has_user(&self, id: ComponentId, kind: HookKind) -> bool {
        self.by_component
            .get(id.index())
            .is_some_and(|hooks| hooks.by_kind[kind as usize].iter().any(|hook| hook.runs_in(Phase::User)))
    }

    fn queue(&mut self) -> &mut CommandQueue {
        self.queue.get_mut().unwrap_or_else(PoisonError::into_inner)
    }

    /// Makes the world take the hooked paths from now on.
    #[cfg(feature = "observers")]
    pub(crate) fn activate(&mut self) {
        self.active = true;
    }

    /// Queues `commands` with the hooks' commands, to apply after the world
    /// operation under way.
    #[cfg(feature = "observers")]
    pub(crate) fn defer(&mut self, commands: &mut CommandQueue) {
        self.queue().append(commands);
    }
}

impl World {
    /// Queues `command` with the hooks' commands, to apply after the world
    /// operation under way: how the engine's own hooks, which have the
    /// whole world, defer their work.
    #[cfg(feature = "hierarchy")]
    pub(crate) fn defer(&mut self, command: impl FnOnce(&mut World) + Send + 'static) {
        let mut queue = std::mem::take(self.hooks.queue());
        Commands::new(&mut queue, self).add(command);
        *self.hooks.queue() = queue;
    }
}

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

/// The view of the world a hook receives. It reads and writes components
/// and resources, sends events, runs read-only queries and queues commands,
/// but cannot change which components an entity has: the world is in the
/// middle of an operation. Structural changes go through
/// [`HookWorld::commands`] and apply right after that operation.
///
/// ```
/// use archetable::prelude::*;
///
/// #[derive(Component)] struct Enemy;
/// #[derive(Component)] struct HealthBar;
///
/// let mut world = World::new();
/// world.register_component_hooks::<Enemy>().on_add(|world, entity| {
///     world.commands().entity(entity).insert(HealthBar);
/// });
/// let e = world.spawn(Enemy);
/// assert!(world.has::<HealthBar>(e));
/// ```
///
/// It has no `spawn`, `insert`, `remove`, `despawn` or `clear`.
pub struct HookWorld<'w> {
    world: &'w mut World,
    commands: &'w mut CommandQueue,
}

impl<'w> HookWorld<'w> {
    /// The whole world, read-only.
    #[inline]
    pub fn world(&self) -> &World {
        self.world
    }

    /// Records structural changes (spawn, insert, remove, despawn) and other
    /// world changes. They apply right after the world operation that ran
    /// this hook, in the order recorded, before that operation returns; the
    /// hooks they fire in turn queue theirs after them, until none is left.
    /// A command whose entity is gone by then is skipped.
    pub fn commands(&mut self) -> Commands<'_, '_> {
        Commands::new(self.commands, self.world)
    }

    /// Whether `entity` is alive.
    #[inline]
    pub fn contains(&self, entity: Entity) -> bool {
        self.world.contains(entity)
    }

    /// Whether `entity` is alive and has a `T`.
    #[inline]
    pub fn has<T: Component>(&self, entity: Entity) -> bool {
        self.world.has::<T>(entity)
    }

    /// `entity`'s `T`, if it is alive and has one.
    #[inline]
    pub fn get<T: Component>(&self, entity: Entity) -> Option<&T> {
        self.world.get(entity)
    }

    /// Mutable access to `entity`'s `T`, if it is alive and has one.
    #[inline]
    pub fn get_mut<T: Component>(&mut self, entity: Entity) -> Option<Mut<'_, T>> {
        self.world.get_mut(entity)
    }

    /// A read-only view of `entity`, if it is alive.
    #[inline]
    pub fn entity(&self, entity: Entity) -> Option<EntityRef<'_>> {
        self.world.entity(entity)
    }

    /// Iterates the entities that match the read-only query `Q`.
    pub fn query<Q: ReadOnlyQueryData>(&self) -> QueryIter<'_, 'static, Q, ()> {
        self.world.query()
    }

    /// Iterates the entities that match the read-only query `Q` and pass `F`.
    pub fn query_filtered<Q: ReadOnlyQueryData, F: QueryFilter>(&self) -> QueryIter<'_, 'static, Q, F> {
        self.world.query_filtered()
    }

    /// The item of the read-only query `Q` for one entity.
    pub fn query_one<Q: ReadOnlyQueryData>(&self, entity: Entity) -> Result<Q::Item<'_>, QueryEntityError> {
        self.world.query_one::<Q>(entity)
    }

    /// The `T` resource.
    ///
    /// # Panics
    /// If there is none.
    #[track_caller]
    pub fn resource<T: Resource>(&self) -> &T {
        self.world.resource()
    }

    /// The `T` resource, mutably.
    ///
    /// # Panics
    /// If there is none.
    #[track_caller]
    pub fn resource_mut<T: Resource>(&mut self) -> &mut T {
        self.world.resource_mut()
    }

    /// The `T` resource, if there is one.
    pub fn get_resource<T: Resource>(&self) -> Option<&T> {
        self.world.get_resource()
    }

    /// The `T` resource, mutably, if there is one.
    pub fn get_resource_mut<T: Resource>(&mut self) -> Option<&mut T> {
        self.world.get_resource_mut()
    }

    /// Whether the world holds a `T` resource.
    pub fn contains_resource<T: Resource>(&self) -> bool {
        self.world.contains_resource::<T>()
    }

    /// Stores `value` as the world's `T` resource, returning the one it
    /// replaces.
    pub fn insert_resource<T: Resource>(&mut self, value: T) -> Option<T> {
        self.world.insert_resource(value)
    }

    /// Takes the `T` resource out of the world.
    pub fn remove_resource<T: Resource>(&mut self) -> Option<T> {
        self.world.remove_resource()
    }

    /// Sends `event` to the readers of `E`.
    pub fn send_event<E: Event>(&mut self, event: E) {
        self.world.send_event(event);
    }
}

impl fmt::Debug for HookWorld<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HookWorld").field("world", &self.world).finish_non_exhaustive()
    }
}

impl World {
    /// The hooks of component `T`, to add to: `on_add`, `on_insert`,
    /// `on_replace`, `on_remove`, `on_despawn`. Registers `T` if needed.
    ///
    /// A hook runs when the tables are consistent, with a [`HookWorld`]
    /// that cannot make structural changes; the commands it queues apply
    /// right after the operation that ran it. The order, for each
    /// operation:
    ///
    /// - `spawn`: `on_add` for each component, then `on_insert` for each;
    /// - `insert`: `on_replace` for each component the entity already had,
    ///   the write, `on_add` for each new one, `on_insert` for each written;
    /// - `remove`: `on_replace`, then `on_remove`, for each removed
    ///   component, then the removal;
    /// - `despawn`: `on_despawn`, then `on_replace`, then `on_remove`, for
    ///   each component, then the entity goes;
    /// - `clear`: the despawn hooks of every entity, table by table and row
    ///   by row, then the clear (which leaves the world empty: an entity a
    ///   hook spawns through its commands is cleared too).
    ///
    /// Within one kind, the components of a spawn, insert or remove come in
    /// the bundle's order, those of a despawn in component id order. Adding
    /// a second hook of a kind keeps the first: both run, in registration
    /// order. `spawn_batch` runs each entity's hooks before spawning the
    /// next.
    ///
    /// Observers of the lifecycle events of the same names
    /// (`OnAdd<T>`, ...; the `observers` feature) run right after each component's
    /// hooks of that kind; components a spawn or insert adds because the
    /// bundle's components require them come after the bundle's own.
    ///
    /// If a hook panics, the panic leaves the world method that ran it. The
    /// world stays consistent: the operation is complete if the hook ran
    /// after it (`on_add`, `on_insert`) and not started if before (the
    /// others). Commands queued by hooks that have not applied yet are
    /// dropped (an entity they reserved becomes live, without components,
    /// at the next structural change, as with any dropped command).
    ///
    /// ```
    /// use std::collections::HashMap;
    /// use archetable::prelude::*;
    ///
    /// #[derive(Component)] struct Name(&'static str);
    /// #[derive(Default)] struct ByName(HashMap<&'static str, Entity>);
    ///
    /// let mut world = World::new();
    /// world.init_resource::<ByName>();
    /// world
    ///     .register_component_hooks::<Name>()
    ///     .on_insert(|world, entity| {
    ///         let name = world.get::<Name>(entity).unwrap().0;
    ///         world.resource_mut::<ByName>().0.insert(name, entity);
    ///     })
    ///     .on_replace(|world, entity| {
    ///         let name = world.get::<Name>(entity).unwrap().0;
    ///         world.resource_mut::<ByName>().0.remove(name);
    ///     });
    ///
    /// let e = world.spawn(Name("orc"));
    /// world.insert(e, Name("troll")).unwrap();
    /// assert_eq!(world.resource::<ByName>().0, HashMap::from([("troll", e)]));
    /// world.despawn(e).unwrap();
    /// assert!(world.resource::<ByName>().0.is_empty());
    /// ```
    pub fn register_component_hooks<T: Component>(&mut self) -> &mut ComponentHooks {
        let id = self.register_component::<T>();
        self.hooks_of(id)
    }

    /// The hooks of component `id`, made active.
    fn hooks_of(&mut self, id: ComponentId) -> &mut ComponentHooks {
        let hooks = &mut self.hooks;
        hooks.active = true;
        hooks.generation += 1;
        if hooks.by_component.len() <= id.index() {
            hooks.by_component.resize_with(id.index() + 1, ComponentHooks::default);
        }
        &mut hooks.by_component[id.index()]
    }

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

    /// [`World::clear`] with hooks registered: the despawn hooks of every
    /// entity that has a hooked component, then the clear.
    #[cold]
    #[inline(never)]
    pub(crate) fn clear_hooked(&mut self) {
        self.flush();
        self.with_hooks(|world| {
            // A sparse component belongs to no archetype: if one reacts,
            // every entity may have it.
            let sparse_reacts =
                world.sparse_sets().iter().any(|set| !set.is_empty() && world.reacts_to(set.id(), &REMOVAL));
            for a in 0..world.archetypes().len() {
                let archetype = &world.archetypes().as_slice()[a];
                if !sparse_reacts && !archetype.components().iter().any(|&id| world.reacts_to(id, &REMOVAL)) {
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

    /// Triggers the lifecycle event of `kind` for component `id` at
    /// `entity` (`OnAdd<T>`, ...), if anything observes it.
    #[cold]
    #[inline(never)]
    fn fire_observers(&mut self, kind: HookKind, id: ComponentId, entity: Entity) {
        let lifecycle = self.components().info(id).lifecycle();
        lifecycle(kind, &mut |event, name| {
            self.run_observers(event, name, Some(entity), Delivery::AfterOperation);
        });
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
