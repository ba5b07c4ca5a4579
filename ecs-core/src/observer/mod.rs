//! Observers: systems that run the moment an event is triggered, for the
//! whole world or for one entity, and the lifecycle events the world
//! triggers itself when components come and go.
//!
//! # How a trigger runs
//!
//! [`World::trigger`] runs every global observer of the event type, in
//! registration order, with [`Trigger::target`] `None`.
//! [`World::trigger_targets`] runs, for each target in order, first the
//! observers attached to that entity ([`World::entity_observe`]), then the
//! global ones, each in registration order, with the target in
//! [`Trigger::target`]. [`Commands::trigger`](crate::Commands::trigger)
//! does the same when the command applies. The list of observers is taken
//! when each target's turn starts: an observer registered meanwhile (by an
//! observer's commands) first runs on the next trigger, and one removed
//! meanwhile (its entity despawned) does not run again.
//!
//! Each observer is a system: its parameters were checked for aliasing when
//! it was registered (`error[E0002]`, as for
//! [`Schedule::add_system`](crate::Schedule::add_system)), and it runs with
//! the whole world to itself. The [`Commands`](crate::Commands) it records
//! apply right after it returns, before the next observer runs, so the next
//! one sees them. An observer that triggers an event (through its
//! commands) runs that event's observers there and then, nested in the
//! current trigger; the nesting stops with a panic that names the event
//! past [`World::MAX_TRIGGER_DEPTH`] (64) nested triggers.
//!
//! # Lifecycle events
//!
//! The world triggers [`OnAdd<T>`], [`OnInsert<T>`], [`OnReplace<T>`],
//! [`OnRemove<T>`] and [`OnDespawn<T>`] at the same moments as the hooks of
//! the same names (see
//! [`World::register_component_hooks`](crate::World::register_component_hooks)),
//! aimed at the entity concerned. For each component, its hooks run first,
//! then its observers (the entity's own, then the global ones); then the
//! next component. As the world is in the middle of an operation, the
//! commands of a lifecycle observer wait with the hooks' commands and apply
//! right after the operation, before the world method returns.
//!
//! # Panics in observers
//!
//! A panic in an observer leaves [`World::trigger`] (or the world method
//! that set off a lifecycle event). The world stays consistent: the
//! observer is back in its place, the commands it recorded in that run are
//! dropped, and the observers after it in that trigger do not run. What
//! the observers before it did, commands included, stays done.
//!
//! ```
//! use archetable::prelude::*;
//!
//! struct Explode { radius: f32 }
//! #[derive(Component)] struct Crate;
//!
//! let mut world = World::new();
//! world.observe(|trigger: Trigger<Explode>, crates: Query<Entity, With<Crate>>, mut commands: Commands| {
//!     if trigger.radius > 1.0 {
//!         for e in crates.iter() {
//!             commands.despawn(e);
//!         }
//!     }
//! });
//! world.spawn(Crate);
//! world.trigger(Explode { radius: 0.5 });
//! assert_eq!(world.len(), 1);
//! world.trigger(Explode { radius: 2.0 });
//! assert!(world.is_empty());
//! ```

mod commands;
#[allow(unsafe_code)]
pub(crate) mod function;
mod lifecycle;
mod trigger;

use std::any::{type_name, Any, TypeId};
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::{Mutex, PoisonError};

use hashbrown::HashMap;

use crate::component::TypeIdMap;
use crate::entity::error::EntityError;
use crate::entity::Entity;
use crate::system::access::AccessConflict;
use crate::world::command_queue::CommandQueue;
use crate::world::event::Event;
use crate::world::World;
use function::{AnyObserver, IntoObserver};

pub(crate) use lifecycle::{lifecycle_event, LifecycleFn};
pub use lifecycle::{OnAdd, OnDespawn, OnInsert, OnRemove, OnReplace};
pub use trigger::{Trigger, TriggerTargets};

/// A handle to an observer registered in a world, to remove it with
/// [`World::remove_observer`].
///
/// ```
/// # use archetable::prelude::*;
/// struct Ping;
/// let mut world = World::new();
/// let id = world.observe(|_: Trigger<Ping>| {});
/// assert!(world.contains_observer(id));
/// assert!(world.remove_observer(id));
/// assert!(!world.contains_observer(id));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObserverId(u32);

/// One registered observer.
struct Slot {
    /// `None` while it runs (lent out to the trigger that runs it). In a
    /// `Mutex` only so the world stays `Sync`; it is only reached through
    /// `&mut`, never locked.
    system: Mutex<Option<Box<dyn AnyObserver>>>,
    event: TypeId,
    /// The entity it is attached to, if any.
    watches: Option<Entity>,
}

impl Slot {
    fn system_mut(&mut self) -> &mut Option<Box<dyn AnyObserver>> {
        self.system.get_mut().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The observers of one event type.
#[derive(Default)]
struct Watchers {
    global: Vec<ObserverId>,
    by_entity: HashMap<Entity, Vec<ObserverId>>,
}

/// The world's observers (kept beside its hooks, in `world/hooks/registry.rs`).
#[derive(Default)]
pub(crate) struct Observers {
    slots: HashMap<ObserverId, Slot>,
    next: u32,
    by_event: TypeIdMap<Watchers>,
    /// The observers attached to each entity, removed with it.
    attached: HashMap<Entity, Vec<ObserverId>>,
    /// How many triggers are running, nested in one another.
    depth: u32,
    /// Counts registrations and removals, so that what the world worked
    /// out from the set of observers (the hooks' plans) knows when to
    /// work it out again.
    generation: u64,
}

impl Observers {
    /// Whether no observer is registered.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Changes whenever an observer is registered or removed.
    #[inline]
    pub(crate) fn generation(&self) -> u64 {
        self.generation
    }

    /// Whether an observer watches events of type `key`.
    #[inline]
    pub(crate) fn watches(&self, key: TypeId) -> bool {
        self.by_event.contains_key(&key)
    }

    fn insert(&mut self, system: Box<dyn AnyObserver>, watches: Option<Entity>) -> ObserverId {
        let id = ObserverId(self.next);
        self.next = self.next.checked_add(1).expect("more than u32::MAX observers registered");
        self.generation += 1;
        let event = system.event_type();
        let watchers = self.by_event.entry(event).or_default();
        match watches {
            Some(entity) => {
                watchers.by_entity.entry(entity).or_default().push(id);
                self.attached.entry(entity).or_default().push(id);
            }
            None => watchers.global.push(id),
        }
        self.slots.insert(id, Slot { system: Mutex::new(Some(system)), event, watches });
        id
    }

    fn remove(&mut self, id: ObserverId) -> Option<Box<dyn AnyObserver>> {
        let slot = self.slots.remove(&id)?;
        self.generation += 1;
        if let Some(watchers) = self.by_event.get_mut(&slot.event) {
            match slot.watches {
                Some(entity) => {
                    if let Some(list) = watchers.by_entity.get_mut(&entity) {
                        list.retain(|&o| o != id);
                        if list.is_empty() {
                            watchers.by_entity.remove(&entity);
                        }
                    }
                    if let Some(list) = self.attached.get_mut(&entity) {
                        list.retain(|&o| o != id);
                        if list.is_empty() {
                            self.attached.remove(&entity);
                        }
                    }
                }
                None => watchers.global.retain(|&o| o != id),
            }
            if watchers.global.is_empty() && watchers.by_entity.is_empty() {
                self.by_event.remove(&slot.event);
            }
        }
        slot.system.into_inner().unwrap_or_else(PoisonError::into_inner)
    }

    /// The observers a trigger of `key` aimed at `target` runs, in order.
    fn listeners(&self, key: TypeId, target: Option<Entity>) -> Vec<ObserverId> {
        let Some(watchers) = self.by_event.get(&key) else { return Vec::new() };
        let own = target.and_then(|t| watchers.by_entity.get(&t)).map_or(&[][..], Vec::as_slice);
        own.iter().chain(&watchers.global).copied().collect()
    }

    /// Removes the observers attached to `entity`; returns them, for the
    /// caller to drop once the world is consistent again.
    pub(crate) fn detach(&mut self, entity: Entity) -> Vec<Box<dyn AnyObserver>> {
        let Some(ids) = self.attached.get(&entity).cloned() else { return Vec::new() };
        ids.into_iter().filter_map(|id| self.remove(id)).collect()
    }

    /// Removes every observer attached to an entity.
    pub(crate) fn detach_all(&mut self) -> Vec<Box<dyn AnyObserver>> {
        let entities: Vec<Entity> = self.attached.keys().copied().collect();
        entities.into_iter().flat_map(|e| self.detach(e)).collect()
    }
}

/// How the commands of the observers of one trigger apply.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Delivery {
    /// Right after each observer (a trigger by the user or by commands).
    Now,
    /// With the hooks' commands, after the world operation under way (a
    /// lifecycle event).
    AfterOperation,
}

impl World {
    /// How deeply triggers may nest (an observer whose commands trigger an
    /// event, whose observer triggers another...): the trigger past this
    /// depth panics, naming its event type.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// struct Echo(u32);
    /// let mut world = World::new();
    /// world.observe(|t: Trigger<Echo>, mut commands: Commands| {
    ///     if t.0 > 0 {
    ///         commands.trigger(Echo(t.0 - 1)); // nested in this trigger
    ///     }
    /// });
    /// world.trigger(Echo(World::MAX_TRIGGER_DEPTH - 1)); // 64 nested: fine
    /// let deeper = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| world.trigger(Echo(64))));
    /// assert!(deeper.is_err());
    /// ```
    pub const MAX_TRIGGER_DEPTH: u32 = 64;

    /// Registers a global observer: it runs on every event of its type
    /// triggered in this world, targeted or not. See the [module
    /// documentation](crate::observer) for the order and for when its
    /// commands apply.
    ///
    /// ```
    /// use archetable::prelude::*;
    ///
    /// struct LevelUp { level: u32 }
    /// #[derive(Default)] struct Log(Vec<String>);
    ///
    /// let mut world = World::new();
    /// world.init_resource::<Log>();
    /// world.observe(|t: Trigger<LevelUp>, mut log: ResMut<Log>| log.0.push(format!("level {}", t.level)));
    /// world.trigger(LevelUp { level: 2 });
    /// assert_eq!(world.resource::<Log>().0, ["level 2"]);
    /// ```
    ///
    /// # Panics
    /// If two of the observer's parameters would alias (`error[E0002]`, see
    /// [`World::try_observe`]).
    #[track_caller]
    pub fn observe<E: Event, M>(&mut self, observer: impl IntoObserver<E, M>) -> ObserverId {
        match self.try_observe(observer) {
            Ok(id) => id,
            Err(conflict) => panic!("{conflict}"),
        }
    }

    /// Registers a global observer, or returns the conflict between two of
    /// its parameters.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component)] struct Hp(u32);
    /// struct Heal;
    /// let mut world = World::new();
    /// let refused = world.try_observe(|_: Trigger<Heal>, _: Query<&mut Hp>, _: Query<&Hp>| {});
    /// assert!(refused.unwrap_err().to_string().starts_with("error[E0002]"));
    /// ```
    pub fn try_observe<E: Event, M>(
        &mut self,
        observer: impl IntoObserver<E, M>,
    ) -> Result<ObserverId, AccessConflict> {
        self.register_observer(observer.into_observer().inner, None)
    }

    /// Attaches an observer to `entity`: it runs on the events of its type
    /// aimed at that entity ([`World::trigger_targets`], and the lifecycle
    /// events of the entity's components), before the global observers,
    /// and goes away when the entity is despawned (or the world cleared).
    ///
    /// ```
    /// use archetable::prelude::*;
    ///
    /// struct Hit;
    /// #[derive(Default)] struct Hits(u32);
    ///
    /// let mut world = World::new();
    /// world.init_resource::<Hits>();
    /// let (shielded, other) = (world.spawn(()), world.spawn(()));
    /// let id = world.entity_observe(shielded, |_: Trigger<Hit>, mut hits: ResMut<Hits>| hits.0 += 1).unwrap();
    /// world.trigger_targets(Hit, [shielded, other]);
    /// assert_eq!(world.resource::<Hits>().0, 1);
    /// world.despawn(shielded).unwrap();
    /// assert!(!world.contains_observer(id));
    /// ```
    ///
    /// # Errors
    /// If `entity` is not alive; nothing is registered then.
    ///
    /// # Panics
    /// If two of the observer's parameters would alias (`error[E0002]`).
    #[track_caller]
    pub fn entity_observe<E: Event, M>(
        &mut self,
        entity: Entity,
        observer: impl IntoObserver<E, M>,
    ) -> Result<ObserverId, EntityError> {
        self.flush();
        if !self.contains(entity) {
            return Err(EntityError::NoSuchEntity(entity));
        }
        match self.register_observer(observer.into_observer().inner, Some(entity)) {
            Ok(id) => Ok(id),
            Err(conflict) => panic!("{conflict}"),
        }
    }

    fn register_observer(
        &mut self,
        mut system: Box<dyn AnyObserver>,
        watches: Option<Entity>,
    ) -> Result<ObserverId, AccessConflict> {
        system.initialize(self)?;
        // Entity observers go with their entity on despawn, and lifecycle
        // events are set off where hooks are: both need the hooked paths.
        self.hooks.activate();
        Ok(self.hooks.observers.insert(system, watches))
    }

    /// Removes an observer; returns whether it was registered. An observer
    /// that removes itself (through its commands) finishes its run.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Default)] struct Count(u32);
    /// struct Tick;
    /// let mut world = World::new();
    /// world.init_resource::<Count>();
    /// let id = world.observe(|_: Trigger<Tick>, mut n: ResMut<Count>| n.0 += 1);
    /// world.trigger(Tick);
    /// assert!(world.remove_observer(id));
    /// world.trigger(Tick);
    /// assert_eq!(world.resource::<Count>().0, 1);
    /// ```
    pub fn remove_observer(&mut self, id: ObserverId) -> bool {
        self.hooks.observers.remove(id).is_some()
    }

    /// Whether observer `id` is registered in this world (an entity
    /// observer goes when its entity does).
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// struct Hit;
    /// let mut world = World::new();
    /// let e = world.spawn(());
    /// let id = world.entity_observe(e, |_: Trigger<Hit>| {}).unwrap();
    /// assert!(world.contains_observer(id));
    /// world.clear();
    /// assert!(!world.contains_observer(id));
    /// ```
    pub fn contains_observer(&self, id: ObserverId) -> bool {
        self.hooks.observers.slots.contains_key(&id)
    }

    /// Triggers `event` without a target: runs every global observer of its
    /// type now, in registration order, each followed by its commands.
    /// Nothing happens if there is none. See [`World::observe`].
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// struct Save { slot: u8 }
    /// #[derive(Default)] struct Saved(Vec<u8>);
    /// let mut world = World::new();
    /// world.init_resource::<Saved>();
    /// world.observe(|t: Trigger<Save>, mut saved: ResMut<Saved>| saved.0.push(t.slot));
    /// world.trigger(Save { slot: 2 });
    /// assert_eq!(world.resource::<Saved>().0, [2]);
    /// ```
    ///
    /// # Panics
    /// If an observer panics (the world stays consistent, see the [module
    /// documentation](crate::observer)), or past
    /// [`World::MAX_TRIGGER_DEPTH`] nested triggers.
    pub fn trigger<E: Event>(&mut self, event: E) {
        self.flush();
        self.run_observers(&event, type_name::<E>(), None, Delivery::Now);
    }

    /// Triggers `event` at each of `targets` in turn: for each, the
    /// observers attached to that entity, then the global ones, each with
    /// the target in [`Trigger::target`]. See [`World::entity_observe`].
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Default)] struct Log(Vec<String>);
    /// struct Poke;
    /// let mut world = World::new();
    /// world.init_resource::<Log>();
    /// let (a, b) = (world.spawn(()), world.spawn(()));
    /// world.observe(|t: Trigger<Poke>, mut log: ResMut<Log>| log.0.push(format!("global {}", t.target().unwrap())));
    /// world.entity_observe(b, |_: Trigger<Poke>, mut log: ResMut<Log>| log.0.push("b's own".into())).unwrap();
    /// world.trigger_targets(Poke, [a, b]);
    /// assert_eq!(world.resource::<Log>().0, [format!("global {a}"), "b's own".into(), format!("global {b}")]);
    /// ```
    ///
    /// # Panics
    /// As [`World::trigger`].
    pub fn trigger_targets<E: Event>(&mut self, event: E, targets: impl TriggerTargets) {
        self.flush();
        for &target in targets.targets() {
            self.run_observers(&event, type_name::<E>(), Some(target), Delivery::Now);
        }
    }

    /// Runs the observers of `event`'s type for `target`, in order.
    pub(crate) fn run_observers(&mut self, event: &dyn Any, name: &str, target: Option<Entity>, delivery: Delivery) {
        let listeners = self.hooks.observers.listeners(Any::type_id(event), target);
        if listeners.is_empty() {
            return;
        }
        let depth = self.hooks.observers.depth;
        if depth >= Self::MAX_TRIGGER_DEPTH {
            panic!(
                "triggering `{}` nested {depth} triggers deep: an observer keeps triggering events (its own, or \
                 one whose observers trigger it back); World::MAX_TRIGGER_DEPTH is {}",
                crate::names::short_type_name(name),
                Self::MAX_TRIGGER_DEPTH
            );
        }
        self.hooks.observers.depth += 1;
        let result = catch_unwind(AssertUnwindSafe(|| {
            for id in listeners {
                self.run_observer(id, event, target, delivery);
            }
        }));
        self.hooks.observers.depth -= 1;
        if let Err(payload) = result {
            resume_unwind(payload);
        }
    }

    /// Runs one observer, if it is still registered, then delivers its
    /// commands.
    fn run_observer(&mut self, id: ObserverId, event: &dyn Any, target: Option<Entity>, delivery: Delivery) {
        let Some(mut system) = self.hooks.observers.slots.get_mut(&id).and_then(|slot| slot.system_mut().take()) else {
            return;
        };
        let _span = crate::trace::span!("observer", system.name());
        let mut commands = CommandQueue::default();
        let result = catch_unwind(AssertUnwindSafe(|| system.run(self, event, target, &mut commands)));
        if result.is_err() {
            system.discard_deferred();
            commands.clear();
        }
        if let Some(slot) = self.hooks.observers.slots.get_mut(&id) {
            *slot.system_mut() = Some(system);
        }
        if let Err(payload) = result {
            resume_unwind(payload);
        }
        match delivery {
            Delivery::Now => {
                commands.apply(self);
            }
            Delivery::AfterOperation => self.hooks.defer(&mut commands),
        }
    }

    /// Removes the observers attached to `entity`, which is being
    /// despawned.
    pub(crate) fn detach_observers(&mut self, entity: Entity) {
        if !self.hooks.observers.attached.is_empty() {
            drop(self.hooks.observers.detach(entity));
        }
    }

    /// Removes every observer attached to an entity: the world is being
    /// cleared.
    pub(crate) fn detach_all_observers(&mut self) {
        if !self.hooks.observers.attached.is_empty() {
            drop(self.hooks.observers.detach_all());
        }
    }
}
