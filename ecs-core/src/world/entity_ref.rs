//! `EntityRef`: a read-only view of one live entity, for inspection and
//! debugging.

use std::fmt;

use crate::component::name::Name;
use crate::component::Component;
use crate::entity::{Entity, EntityLocation};
use crate::storage::archetype::Archetype;
use crate::world::World;

/// A read-only view of one live entity: its components by type, and their
/// names. Returned by [`World::entity`]. `Debug` shows the handle, the
/// entity's [`Name`] if it has one, and its components' type names.
///
/// ```
/// # use archetable::prelude::*;
/// let mut world = World::new();
/// let orc = world.spawn(Name::new("orc"));
/// let shown = format!("{:?}", world.entity(orc).unwrap());
/// assert_eq!(shown, format!(r#"EntityRef {{ id: {orc}, name: "orc", components: ["archetable_core::component::name::Name"] }}"#));
/// ```
#[derive(Clone, Copy)]
pub struct EntityRef<'w> {
    world: &'w World,
    entity: Entity,
    location: EntityLocation,
}

impl<'w> EntityRef<'w> {
    pub(crate) fn new(world: &'w World, entity: Entity, location: EntityLocation) -> Self {
        EntityRef { world, entity, location }
    }

    fn archetype(&self) -> &'w Archetype {
        self.world.archetypes().get(self.location.archetype)
    }

    /// The entity's handle.
    pub fn id(&self) -> Entity {
        self.entity
    }

    /// The entity's `T`, if it has one.
    pub fn get<T: Component>(&self) -> Option<&'w T> {
        let world: &'w World = self.world;
        world.get::<T>(self.entity)
    }

    /// Whether the entity has a `T`.
    pub fn has<T: Component>(&self) -> bool {
        self.world.has::<T>(self.entity)
    }

    /// The type names of the entity's components: those in its table in
    /// component id order, then those in sparse storage.
    pub fn component_names(&self) -> impl Iterator<Item = &'static str> + 'w + use<'w> {
        let components = self.world.components();
        let entity = self.entity;
        let sparse = self.world.sparse_sets().components_of(entity);
        self.archetype().components().iter().copied().chain(sparse).map(move |id| components.name(id))
    }
}

impl fmt::Debug for EntityRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut view = f.debug_struct("EntityRef");
        view.field("id", &self.entity);
        if let Some(name) = self.get::<Name>() {
            view.field("name", name);
        }
        view.field("components", &self.component_names().collect::<Vec<_>>()).finish()
    }
}
