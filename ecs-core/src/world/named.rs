//! Entities by [`Name`]: [`World::entities_named`], and
//! [`World::entity_label`], which messages use to name an entity.

use std::fmt;

use crate::component::name::Name;
use crate::entity::Entity;
use crate::world::World;

impl World {
    /// The entities whose [`Name`] is `name`, in handle order within each
    /// table. Like a query, it skips disabled entities
    /// ([`Disabled`](crate::Disabled)); for them, query
    /// `(Entity, &Name, Has<Disabled>)`. It visits every named entity: a
    /// game that looks names up every frame keeps its own index (a hook on
    /// `Name`, as in the README's hooks example).
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// let mut world = World::new();
    /// let a = world.spawn(Name::new("guard"));
    /// world.spawn(Name::new("king"));
    /// let b = world.spawn(Name::new("guard"));
    /// assert_eq!(world.entities_named("guard").collect::<Vec<_>>(), [a, b]);
    /// assert_eq!(world.entities_named("Guard").count(), 0); // exact text
    /// ```
    pub fn entities_named<'w, 'n>(&'w self, name: &'n str) -> impl Iterator<Item = Entity> + use<'w, 'n> {
        self.query::<(Entity, &Name)>().filter(move |(_, n)| n.as_str() == name).map(|(entity, _)| entity)
    }

    /// `entity` as messages show it: its name and handle, `orc (3v1)`, if
    /// it is alive and has a [`Name`], else the handle alone, `3v1`.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// let mut world = World::new();
    /// let orc = world.spawn(Name::new("orc"));
    /// let rock = world.spawn(());
    /// assert_eq!(world.entity_label(orc).to_string(), format!("orc ({orc})"));
    /// assert_eq!(world.entity_label(rock).to_string(), rock.to_string());
    /// ```
    pub fn entity_label(&self, entity: Entity) -> EntityLabel {
        EntityLabel { entity, name: self.get::<Name>(entity).cloned() }
    }
}

/// An entity as messages name it: `orc (3v1)` with a [`Name`], `3v1`
/// without. Made by [`World::entity_label`]; it keeps a copy of the name,
/// so it outlives the entity.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntityLabel {
    /// The handle.
    pub entity: Entity,
    /// Its name when the label was made, if it had one.
    pub name: Option<Name>,
}

impl fmt::Display for EntityLabel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.name {
            Some(name) => write!(f, "{name} ({})", self.entity),
            None => write!(f, "{}", self.entity),
        }
    }
}
