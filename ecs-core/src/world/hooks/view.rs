//! The view of the world a hook receives, [`HookWorld`]: reads and writes
//! of components and resources, events. Its queries are in the query layer
//! (`query/hook_world.rs`) and its commands in the system layer
//! (`system/commands.rs`), each an `impl HookWorld` beside what it hands
//! out.

use std::fmt;

use crate::component::change::Mut;
use crate::component::Component;
use crate::entity::Entity;
use crate::storage::resource::Resource;
use crate::world::command_queue::CommandQueue;
use crate::world::entity_ref::EntityRef;
use crate::world::event::Event;
use crate::world::World;

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
    pub(crate) world: &'w mut World,
    pub(crate) commands: &'w mut CommandQueue,
}

impl<'w> HookWorld<'w> {
    /// The whole world, read-only.
    #[inline]
    pub fn world(&self) -> &World {
        self.world
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
    pub fn get_mut<T: Component + crate::component::MutableComponent>(&mut self, entity: Entity) -> Option<Mut<'_, T>> {
        self.world.get_mut(entity)
    }

    /// A read-only view of `entity`, if it is alive.
    #[inline]
    pub fn entity(&self, entity: Entity) -> Option<EntityRef<'_>> {
        self.world.entity(entity)
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
