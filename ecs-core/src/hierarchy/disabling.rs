//! Disabling whole trees: [`World::disable_recursive`] and
//! [`World::enable_recursive`], and the same through commands. A plain
//! [`World::disable`] leaves the children enabled.

use crate::entity::error::EntityError;
use crate::entity::Entity;
use crate::system::EntityCommands;
use crate::world::World;

impl World {
    /// Disables `entity` and every descendant (see [`World::disable`]),
    /// parents first, and returns how many entities the tree holds. Those
    /// already disabled stay so.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// #[derive(Component)] struct Part;
    /// let mut world = World::new();
    /// let tank = world.spawn(Part);
    /// let turret = world.spawn((Part, ChildOf(tank)));
    /// let barrel = world.spawn((Part, ChildOf(turret)));
    /// assert_eq!(world.disable_recursive(turret), Ok(2));
    /// assert_eq!(world.query_filtered::<Entity, With<Part>>().collect::<Vec<_>>(), [tank]);
    /// assert_eq!(world.enable_recursive(tank), Ok(3));
    /// assert_eq!(world.query::<&Part>().count(), 3);
    /// # let _ = barrel;
    /// ```
    ///
    /// # Errors
    /// [`EntityError::NoSuchEntity`] if `entity` is not alive; nothing
    /// changes then.
    pub fn disable_recursive(&mut self, entity: Entity) -> Result<usize, EntityError> {
        self.each_in_tree(entity, World::disable)
    }

    /// Enables `entity` and every descendant again (see
    /// [`World::enable`]), parents first, and returns how many entities
    /// the tree holds.
    ///
    /// # Errors
    /// [`EntityError::NoSuchEntity`] if `entity` is not alive; nothing
    /// changes then.
    pub fn enable_recursive(&mut self, entity: Entity) -> Result<usize, EntityError> {
        self.each_in_tree(entity, World::enable)
    }

    /// Calls `op` on `entity` and its descendants, listed before any runs.
    /// An entity that `op`'s hooks despawned meanwhile is skipped.
    fn each_in_tree(
        &mut self,
        entity: Entity,
        op: fn(&mut World, Entity) -> Result<(), EntityError>,
    ) -> Result<usize, EntityError> {
        if !self.contains(entity) {
            return Err(EntityError::NoSuchEntity(entity));
        }
        let mut tree = vec![entity];
        tree.extend(self.descendants(entity));
        for &member in &tree {
            // Only a hook's despawn makes this fail; the others still go.
            let _ = op(self, member);
        }
        Ok(tree.len())
    }
}

impl EntityCommands<'_> {
    /// Disables this entity and its descendants when the commands apply
    /// (see [`World::disable_recursive`]); a dead entity is skipped and
    /// reported.
    pub fn disable_recursive(&mut self) -> &mut Self {
        self.push_fallible("disable_recursive", |world, entity| {
            world.disable_recursive(entity).map(drop).map_err(|_| None)
        });
        self
    }

    /// Enables this entity and its descendants when the commands apply
    /// (see [`World::enable_recursive`]); a dead entity is skipped and
    /// reported.
    pub fn enable_recursive(&mut self) -> &mut Self {
        self.push_fallible("enable_recursive", |world, entity| {
            world.enable_recursive(entity).map(drop).map_err(|_| None)
        });
        self
    }
}
