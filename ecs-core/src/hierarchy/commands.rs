//! The hierarchy through deferred commands: parents set and removed,
//! recursive despawns, and trees built in one go with `with_children`.

use super::ChildOf;
use crate::component::bundle::Bundle;
use crate::entity::Entity;
use crate::system::commands::Reserver;
use crate::system::EntityCommands;
use crate::world::command_queue::CommandQueue;
use crate::world::World;

impl EntityCommands<'_> {
    /// Makes `parent` this entity's parent, as [`World::set_parent`]
    /// does, when the commands apply; a refusal (dead entity, cycle) is
    /// skipped and reported with its reason.
    ///
    /// [`World::set_parent`]: crate::World::set_parent
    pub fn set_parent(&mut self, parent: Entity) -> &mut Self {
        self.push_fallible("set_parent", move |world, child| {
            world.set_parent(child, parent).map_err(|error| Some(error.to_string()))
        });
        self
    }

    /// Takes this entity out of its parent's children when the commands
    /// apply.
    pub fn remove_parent(&mut self) -> &mut Self {
        self.push_fallible("remove_parent", |world, child| {
            world.remove_parent(child).map(drop).map_err(|error| Some(error.to_string()))
        });
        self
    }

    /// Despawns this entity and its descendants when the commands apply.
    pub fn despawn_recursive(&mut self) {
        self.push_fallible("despawn_recursive", |world, entity| {
            world.despawn_named(entity, World::despawn_recursive).map(drop).map_err(|_| None)
        });
    }

    /// Spawns children of this entity: `build` gets a [`ChildSpawner`]
    /// whose spawns carry `ChildOf` this entity, in the order spawned.
    ///
    /// ```
    /// use archetable::prelude::*;
    ///
    /// #[derive(Component)] struct Wheel(u8);
    ///
    /// let mut world = World::new();
    /// let mut queue = CommandQueue::default();
    /// let car = Commands::new(&mut queue, &world)
    ///     .spawn(())
    ///     .with_children(|car| {
    ///         for i in 0..4 {
    ///             car.spawn(Wheel(i));
    ///         }
    ///     })
    ///     .id();
    /// queue.apply(&mut world);
    /// assert_eq!(world.children(car).len(), 4);
    /// ```
    pub fn with_children(&mut self, build: impl FnOnce(&mut ChildSpawner<'_>)) -> &mut Self {
        let parent = self.id();
        let (queue, reserver) = self.reborrow();
        build(&mut ChildSpawner { parent, queue, reserver });
        self
    }
}

/// Spawns the children of one entity; see
/// [`EntityCommands::with_children`].
pub struct ChildSpawner<'a> {
    parent: Entity,
    queue: &'a mut CommandQueue,
    reserver: Reserver<'a>,
}

impl ChildSpawner<'_> {
    /// The parent the spawns join.
    pub fn parent(&self) -> Entity {
        self.parent
    }

    /// Spawns a child with `bundle` (and `ChildOf` the parent); returns its
    /// commands, so it can have children of its own.
    pub fn spawn<B: Bundle>(&mut self, bundle: B) -> EntityCommands<'_> {
        let entity = EntityCommands::spawn_into(self.queue, self.reserver, (bundle, ChildOf(self.parent)));
        EntityCommands::new_raw(entity, self.queue, self.reserver)
    }
}
