//! Entities by [`Name`]: [`World::entities_named`], and
//! [`World::entity_label`], which messages use to name an entity, even
//! one that deferred commands despawned a moment ago.

use std::collections::VecDeque;
use std::fmt;

use crate::component::name::Name;
use crate::entity::error::EntityError;
use crate::entity::Entity;
use crate::world::World;

impl World {
    /// The entities whose [`Name`] is `name`, in handle order within each
    /// table. Like a query, it skips disabled entities
    /// ([`Disabled`](crate::Disabled)); for them, query
    /// `(Entity, &Name, Has<Disabled>)`.
    ///
    /// # Cost, and why there is no index
    /// It visits every named entity: a length test per entity, and a
    /// comparison of the text when the lengths agree. Measured on a release
    /// build with one table of entities with distinct names (callgrind
    /// instruction counts, and wall time on a busy two-core machine):
    ///
    /// | named entities | instructions per lookup | time per lookup |
    /// |---:|---:|---:|
    /// | 1 000 | 5 300 | 1.5–5.6 µs |
    /// | 10 000 | 50 000 | 19–30 µs |
    /// | 100 000 | 2 000 000 (most lengths agree) | 0.64–0.70 ms |
    ///
    /// An index kept by the world would put a hash-map update in every
    /// spawn, insert, removal and despawn of a named entity, a cost paid
    /// by every game for lookups most games make a few times per level;
    /// and it would miss renames, since [`Name::set`] through `&mut Name`
    /// (a query or `get_mut`) runs no hook. So lookups scan. A game that
    /// looks names up every frame keeps its own index of the names it
    /// needs, with hooks on `Name` (as in the README's hooks example) and
    /// names changed only by inserting a new `Name`.
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
    /// it has a [`Name`], else the handle alone, `3v1`. A dead entity is
    /// still named if a command despawned it recently (the world keeps
    /// the names of the last 64 named entities that commands despawned,
    /// forgotten on [`World::clear`]), so a skipped command's "entity
    /// gone" warning says which one.
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
        let name = match self.contains(entity) {
            true => self.get::<Name>(entity).cloned(),
            false => self.departed.name_of(entity),
        };
        EntityLabel { entity, name }
    }

    /// Despawns `entity` as a command does: with `despawn`
    /// ([`World::despawn`] or a recursive despawn), remembering its
    /// [`Name`], if any, for [`World::entity_label`].
    pub(crate) fn despawn_named<T>(
        &mut self,
        entity: Entity,
        despawn: fn(&mut World, Entity) -> Result<T, EntityError>,
    ) -> Result<T, EntityError> {
        let name = self.get::<Name>(entity).cloned();
        let despawned = despawn(self, entity)?;
        if let Some(name) = name {
            self.departed.remember(entity, name);
        }
        Ok(despawned)
    }
}

/// The names of the last [`DepartedNames::CAPACITY`] named entities that
/// commands despawned, oldest first.
#[derive(Default)]
pub(crate) struct DepartedNames(VecDeque<(Entity, Name)>);

impl DepartedNames {
    /// How many names are kept: enough for the commands of a frame that
    /// race for the same entities, bounded so a long game keeps no list of
    /// everything it ever despawned.
    const CAPACITY: usize = 64;

    fn remember(&mut self, entity: Entity, name: Name) {
        if self.0.len() == Self::CAPACITY {
            self.0.pop_front();
        }
        self.0.push_back((entity, name));
    }

    fn name_of(&self, entity: Entity) -> Option<Name> {
        self.0.iter().rev().find(|(departed, _)| *departed == entity).map(|(_, name)| name.clone())
    }

    pub(crate) fn clear(&mut self) {
        self.0.clear();
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
