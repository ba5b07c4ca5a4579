//! The hooks' types and the world's registry of them: the hook kinds, the
//! hooks of one component type ([`ComponentHooks`], which
//! [`World::register_component_hooks`] hands out), and [`Hooks`], which the
//! world keeps: per component, the queue of the commands hooks defer, the
//! plans (`plan.rs`) and the observers, which run beside the hooks.

use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use crate::component::{Component, ComponentId};
use crate::entity::Entity;
use crate::world::command_queue::CommandQueue;
use crate::world::World;

use super::plan;
use super::view::HookWorld;

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
pub(super) enum Hook {
    #[cfg(feature = "hierarchy")]
    Plain(EngineHook),
    Shared(Arc<HookFn>),
}

impl Hook {
    /// Whether the hook belongs to the `phase` pass.
    pub(super) fn runs_in(&self, phase: Phase) -> bool {
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
pub(super) enum Phase {
    Engine,
    User,
}

/// The passes before an operation, in order.
pub(super) const BEFORE: [Phase; 2] = [Phase::User, Phase::Engine];
/// The passes after an operation, in order.
pub(super) const AFTER: [Phase; 2] = [Phase::Engine, Phase::User];

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
    pub(super) by_kind: [Vec<Hook>; KINDS],
    /// A relationship component's [`SpawnJoin`], which a spawn runs in
    /// place of its insert hook (the engine's) when nothing else watches.
    #[cfg_attr(not(feature = "hierarchy"), allow(dead_code))]
    pub(super) spawn_join: Option<SpawnJoin>,
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
    pub(super) by_component: Vec<ComponentHooks>,
    /// Whether any hook was ever registered: the one check on the hot paths.
    pub(super) active: bool,
    /// Changes whenever hooks are registered, so that the plans know when
    /// to be worked out again.
    pub(super) generation: u64,
    /// What the hooks after an insert of each bundle come to.
    pub(super) plans: plan::Plans,
    /// Commands queued by hooks. In a `Mutex` only so the world stays
    /// `Sync` (a command is `Send` but not `Sync`); it is only reached
    /// through `&mut`, never locked.
    pub(super) queue: Mutex<CommandQueue>,
    /// Whether a world method up the stack is applying `queue`.
    pub(super) applying: bool,
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
    pub(super) fn get(&self, id: ComponentId, kind: HookKind, i: usize) -> Option<Hook> {
        self.by_component.get(id.index())?.by_kind[kind as usize].get(i).cloned()
    }

    pub(super) fn has(&self, id: ComponentId, kind: HookKind) -> bool {
        self.by_component.get(id.index()).is_some_and(|hooks| !hooks.by_kind[kind as usize].is_empty())
    }

    /// Whether component `id` has a user hook (not the engine's) of `kind`.
    pub(crate) fn has_user(&self, id: ComponentId, kind: HookKind) -> bool {
        self.by_component
            .get(id.index())
            .is_some_and(|hooks| hooks.by_kind[kind as usize].iter().any(|hook| hook.runs_in(Phase::User)))
    }

    pub(crate) fn queue(&mut self) -> &mut CommandQueue {
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
}
