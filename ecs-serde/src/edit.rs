//! The face (beside `world_ext.rs`): edits of a running world by registered name, with values as JSON: one
//! entity's components, a new entity, a resource. For tools that look at
//! and change a live game (an inspector, an editor, a console).
//!
//! Every value is read and checked before the world is touched, so a value
//! that does not fit its type changes nothing.

use std::any::TypeId;
use std::fmt;

use archetable_core::{Entity, EntityBuilder, World};

use crate::model::column::Boxed;
use crate::model::from_value::{Context, EntityMapping};
use crate::model::registry::{ComponentEntry, SerdeRegistry};
use crate::model::value::Value;

/// Why an edit by name was refused. The world is as it was.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum EditError {
    /// No component type is registered under `name`.
    UnknownComponent {
        /// The name asked for.
        name: String,
        /// The registered name closest to it, if one is close.
        suggestion: Option<String>,
    },
    /// No resource type is registered under `name`.
    UnknownResource {
        /// The name asked for.
        name: String,
        /// The registered name closest to it, if one is close.
        suggestion: Option<String>,
    },
    /// The entity is not alive.
    NoSuchEntity(Entity),
    /// The text is not JSON (or nests too deep).
    Syntax {
        /// What the parser said.
        message: String,
    },
    /// The value does not fit the type registered under `name`.
    Invalid {
        /// The component or resource name.
        name: String,
        /// The field the problem is in (`stats.hp`, `path[2]`), empty for
        /// the value itself.
        field: String,
        /// What is wrong.
        message: String,
    },
    /// The type's `Serialize` failed on the value held.
    Unserializable {
        /// The component or resource name.
        name: String,
        /// What it said.
        message: String,
    },
    /// One edit names the same component twice.
    DuplicateComponent {
        /// The name.
        name: String,
    },
    /// The component is kept by the engine from other components (a
    /// relationship's list such as `Children`): it is never written by
    /// name; insert or remove the relationship (`ChildOf`) on each source
    /// instead.
    EngineKept {
        /// The name.
        name: String,
    },
}

impl fmt::Display for EditError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EditError::UnknownComponent { name, suggestion } => {
                write!(f, "no component is registered as `{name}`")?;
                suggestion_text(f, suggestion)
            }
            EditError::UnknownResource { name, suggestion } => {
                write!(f, "no resource is registered as `{name}`")?;
                suggestion_text(f, suggestion)
            }
            EditError::NoSuchEntity(entity) => write!(f, "entity {entity} does not exist"),
            EditError::Syntax { message } => write!(f, "not valid JSON: {message}"),
            EditError::Invalid { name, field, message } if field.is_empty() => write!(f, "`{name}`: {message}"),
            EditError::Invalid { name, field, message } => write!(f, "`{name}`, field `{field}`: {message}"),
            EditError::Unserializable { name, message } => write!(f, "`{name}` could not be written: {message}"),
            EditError::DuplicateComponent { name } => write!(f, "component `{name}` is named twice"),
            EditError::EngineKept { name } => write!(
                f,
                "component `{name}` is kept by the engine from its sources' relationship; \
                 insert or remove the relationship on each source instead"
            ),
        }
    }
}

fn suggestion_text(f: &mut fmt::Formatter<'_>, suggestion: &Option<String>) -> fmt::Result {
    match suggestion {
        Some(s) => write!(f, " (did you mean `{s}`?)"),
        None => Ok(()),
    }
}

impl std::error::Error for EditError {}

/// A JSON text as a value tree, within the usual nesting limit.
fn parse(json: &str) -> Result<Value, EditError> {
    crate::format::prefab::parse_json(json, 0).map_err(|e| match e {
        crate::PrefabError::Syntax { line, column, message, .. } => {
            EditError::Syntax { message: format!("{message} (line {line}, column {column})") }
        }
        other => EditError::Syntax { message: other.to_string() },
    })
}

fn to_json(
    name: &str,
    tree: Result<Value, crate::model::to_value::ToValueError>,
) -> Result<serde_json::Value, EditError> {
    let unserializable = |message: String| EditError::Unserializable { name: name.to_owned(), message };
    let tree = tree.map_err(|e| unserializable(e.to_string()))?;
    // Through text, so an `f32` reads as its shortest form (`0.1`, not
    // `0.10000000149011612`), as in save files.
    let text = serde_json::to_string(&tree).map_err(|e| unserializable(e.to_string()))?;
    serde_json::from_str(&text).map_err(|e| unserializable(e.to_string()))
}

impl SerdeRegistry {
    fn component_or_err(&self, name: &str) -> Result<&ComponentEntry, EditError> {
        self.component(name).ok_or_else(|| EditError::UnknownComponent {
            name: name.to_owned(),
            suggestion: self.suggest_component(name),
        })
    }

    /// The name the component type `type_id` is registered under.
    pub fn component_name_of_type(&self, type_id: TypeId) -> Option<&str> {
        self.component_by_type(type_id).map(|e| e.name.as_str())
    }

    /// The type registered as component `name`.
    pub fn component_type(&self, name: &str) -> Option<TypeId> {
        self.component(name).map(|e| e.type_id)
    }

    /// The name the resource type `type_id` is registered under.
    pub fn resource_name_of_type(&self, type_id: TypeId) -> Option<&str> {
        self.resources().iter().find(|e| e.type_id == type_id).map(|e| e.name.as_str())
    }

    /// The registered component name closest to `name`, for "did you mean"
    /// messages, if one is close enough to be a likely typo.
    pub fn nearest_component_name(&self, name: &str) -> Option<String> {
        self.suggest_component(name)
    }

    /// The value of `entity`'s component registered as `name`, as JSON
    /// (entity handles as `"3v1"`); `None` if the entity has none.
    ///
    /// ```
    /// use archetable::prelude::*;
    /// use serde::{Deserialize, Serialize};
    ///
    /// #[derive(Component, Serialize, Deserialize, Default)]
    /// struct Hp(u32);
    ///
    /// let mut world = World::new();
    /// world.register_serde::<Hp>("Hp");
    /// let orc = world.spawn(Hp(3));
    /// let registry = world.serde_registry();
    /// registry.insert_components_json(&mut world, orc, &[("Hp", "7")]).unwrap();
    /// assert_eq!(registry.component_json(&world, orc, "Hp").unwrap(), Some(serde_json::json!(7)));
    /// assert!(registry.insert_components_json(&mut world, orc, &[("Hp", "-1")]).is_err());
    /// assert!(registry.component_json(&world, orc, "HP").is_err()); // did you mean `Hp`?
    /// ```
    pub fn component_json(
        &self,
        world: &World,
        entity: Entity,
        name: &str,
    ) -> Result<Option<serde_json::Value>, EditError> {
        let entry = self.component_or_err(name)?;
        if !world.contains(entity) {
            return Err(EditError::NoSuchEntity(entity));
        }
        (entry.save)(world, entity).map(|tree| to_json(name, tree)).transpose()
    }

    /// Reads each `(name, json)` pair as the component registered under
    /// that name; if all read, inserts them into `entity` in order
    /// (replacing the values it has), running their hooks and observers.
    /// If any is refused, nothing is inserted.
    pub fn insert_components_json(
        &self,
        world: &mut World,
        entity: Entity,
        values: &[(&str, &str)],
    ) -> Result<(), EditError> {
        let built = self.read_components(values)?;
        if !world.contains(entity) {
            return Err(EditError::NoSuchEntity(entity));
        }
        for (entry, value) in built {
            (entry.insert)(world, entity, value).map_err(|_| EditError::NoSuchEntity(entity))?;
        }
        Ok(())
    }

    /// Spawns an entity with each `(name, json)` pair read as the component
    /// registered under that name, as one bundle (one table move). If any
    /// is refused, nothing is spawned.
    pub fn spawn_json(&self, world: &mut World, values: &[(&str, &str)]) -> Result<Entity, EditError> {
        let built = self.read_components(values)?;
        let mut builder = EntityBuilder::new();
        for (entry, value) in built {
            (entry.add)(&mut builder, value);
        }
        Ok(world.spawn(builder.build()))
    }

    /// Removes `entity`'s component registered as `name`; whether it had one.
    pub fn remove_component_by_name(&self, world: &mut World, entity: Entity, name: &str) -> Result<bool, EditError> {
        let entry = self.component_or_err(name)?;
        if entry.engine_kept {
            return Err(EditError::EngineKept { name: name.to_owned() });
        }
        if !world.contains(entity) {
            return Err(EditError::NoSuchEntity(entity));
        }
        Ok((entry.remove)(world, entity))
    }

    fn read_components<'a>(&'a self, values: &[(&str, &str)]) -> Result<Vec<(&'a ComponentEntry, Boxed)>, EditError> {
        let mut built: Vec<(&ComponentEntry, Boxed)> = Vec::with_capacity(values.len());
        for &(name, json) in values {
            let entry = self.component_or_err(name)?;
            if entry.engine_kept {
                return Err(EditError::EngineKept { name: name.to_owned() });
            }
            if built.iter().any(|(e, _)| e.type_id == entry.type_id) {
                return Err(EditError::DuplicateComponent { name: name.to_owned() });
            }
            let tree = parse(json)?;
            let cx = Context::new(EntityMapping::Keep);
            let value = (entry.load)(&tree, &cx).map_err(|e| EditError::Invalid {
                name: name.to_owned(),
                field: e.path(),
                message: e.to_string(),
            })?;
            built.push((entry, value));
        }
        Ok(built)
    }

    /// The resource registered as `name`, as JSON; `None` if the world has
    /// none.
    pub fn resource_json(&self, world: &World, name: &str) -> Result<Option<serde_json::Value>, EditError> {
        let entry = self.resource(name).ok_or_else(|| EditError::UnknownResource {
            name: name.to_owned(),
            suggestion: self.suggest_resource(name),
        })?;
        (entry.save)(world).map(|tree| to_json(name, tree)).transpose()
    }

    /// Reads `json` as the resource registered under `name` and inserts it,
    /// replacing the one the world has. If it is refused, nothing changes.
    pub fn insert_resource_json(&self, world: &mut World, name: &str, json: &str) -> Result<(), EditError> {
        let entry = self.resource(name).ok_or_else(|| EditError::UnknownResource {
            name: name.to_owned(),
            suggestion: self.suggest_resource(name),
        })?;
        let tree = parse(json)?;
        let cx = Context::new(EntityMapping::Keep);
        let value = (entry.load)(&tree, &cx).map_err(|e| EditError::Invalid {
            name: name.to_owned(),
            field: e.path(),
            message: e.to_string(),
        })?;
        (entry.insert)(world, value);
        Ok(())
    }
}
