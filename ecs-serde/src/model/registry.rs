//! The registry of saved component and resource types (model layer).
//!
//! `SerdeRegistry`: the stable names under which component and resource
//! types are saved, loaded and named in prefab files, with the type-erased
//! functions that do the work.

use std::any::{type_name, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use archetable_core::storage::Archetype;
use archetable_core::{
    ChildOf, Children, Component, Disabled, Entity, EntityBuilder, FixedTime, LoopStarted, Name, Resource, Time, World,
};
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::model::column::{Boxed, ColumnFns};
use crate::model::from_value::{from_value, Context, FromValueError};
use crate::model::suggest::nearest;
use crate::model::text_column::TextColumn;
use crate::model::to_value::{to_value, ToValueError};
use crate::model::typed::TypedPlan;
use crate::model::value::Value;

/// How to handle one registered component type.
#[derive(Clone)]
pub(crate) struct ComponentEntry {
    pub name: String,
    pub type_id: TypeId,
    /// The tree of `T::default()`, for types registered with a default.
    pub default: Option<fn() -> Result<Value, ToValueError>>,
    /// The tree of an entity's `T`, if it has one.
    pub save: fn(&World, Entity) -> Option<Result<Value, ToValueError>>,
    pub load: fn(&Value, &Context<'_>) -> Result<Boxed, FromValueError>,
    /// Reads a `T` and writes it back: the value as the type sees it.
    pub normalize: fn(&Value, &Context<'_>) -> Result<Value, FromValueError>,
    /// Adds a value made by `load` to an entity being built.
    pub add: fn(&mut EntityBuilder, Boxed),
    /// Inserts a value made by `load` into a live entity, and removes an
    /// entity's value (whether it had one), for edits of a running world.
    pub insert: fn(&mut World, Entity, Boxed) -> Result<(), archetable_core::EntityError>,
    pub remove: fn(&mut World, Entity) -> bool,
    /// Gives the type its component id in a world.
    pub register: fn(&mut World),
    /// The engine derives the type's value from other components (a
    /// relationship's list, `Children`): an edit by name may not write it.
    pub engine_kept: bool,
    /// Writes, reads and inserts whole columns, for binary saves.
    pub column: ColumnFns,
    /// A table's values of the type, for text saves.
    pub text_column: for<'w> fn(&'w World, &'w Archetype) -> Box<dyn TextColumn + 'w>,
    /// What binary saves may write typed, found once, here.
    pub typed: Arc<TypedPlan>,
}

/// How to handle one registered resource type.
#[derive(Clone)]
pub(crate) struct ResourceEntry {
    pub name: String,
    pub type_id: TypeId,
    pub save: fn(&World) -> Option<Result<Value, ToValueError>>,
    pub load: fn(&Value, &Context<'_>) -> Result<Boxed, FromValueError>,
    pub insert: fn(&mut World, Boxed),
}

#[derive(Clone, Default)]
struct Entries {
    components: Vec<ComponentEntry>,
    component_names: HashMap<String, usize>,
    component_types: HashMap<TypeId, usize>,
    resources: Vec<ResourceEntry>,
    resource_names: HashMap<String, usize>,
    resource_types: HashMap<TypeId, usize>,
}

/// Maps stable names to component and resource types, for save files and
/// prefab files.
///
/// A world keeps its registry as a resource; the usual way to fill it is
/// through the world ([`SerdeWorldExt::register_serde`]). Cloning a
/// registry is cheap (the entries are shared until one copy changes).
///
/// ```
/// use archetable::prelude::*;
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Component, Serialize, Deserialize, Default)]
/// struct Position { x: f32, y: f32 }
///
/// let mut world = World::new();
/// world.register_serde::<Position>("Position");
/// assert_eq!(world.serde_registry().component_name::<Position>(), Some("Position"));
/// ```
///
/// [`SerdeWorldExt::register_serde`]: crate::SerdeWorldExt::register_serde
#[derive(Clone)]
pub struct SerdeRegistry {
    entries: Arc<Entries>,
}

impl Default for SerdeRegistry {
    /// A registry that knows the engine's own types: the hierarchy
    /// components [`ChildOf`] (as `"ChildOf"`) and [`Children`] (as
    /// `"Children"`), so saves keep their trees (child order included) and
    /// prefabs may name them, the marker [`Disabled`] (as `"Disabled"`), so
    /// disabled entities load disabled, [`Name`] (as `"Name"`; a type of
    /// your own registered as `"Name"` takes that name over, and the
    /// engine's `Name` is then saved as `"archetable::Name"`), the [`Time`] and [`FixedTime`] resources
    /// (as `"Time"` and `"FixedTime"`), so a loaded game resumes its clock
    /// (elapsed time, scale, pause, frame) and its fixed steps, and
    /// [`LoopStarted`] (as `"LoopStarted"`), so a save made before a game
    /// loop's first frame resumes like that frame.
    fn default() -> Self {
        let mut registry = SerdeRegistry { entries: Arc::default() };
        registry.register_without_default::<ChildOf>("ChildOf");
        registry.register::<Children>("Children");
        registry.register::<Disabled>("Disabled");
        registry.register::<Name>("Name");
        registry.register_resource::<Time>("Time");
        registry.register_resource::<FixedTime>("FixedTime");
        registry.register_resource::<LoopStarted>("LoopStarted");
        registry
    }
}

impl SerdeRegistry {
    /// A registry with only the engine's own hierarchy components (see
    /// [`SerdeRegistry::default`]).
    pub fn new() -> Self {
        SerdeRegistry::default()
    }

    /// Registers component `T` under `name`. Prefab fields that are not
    /// given come from `T::default()`.
    ///
    /// Registering runs `T`'s `Deserialize` once, on made-up input, to learn
    /// whether binary saves may write `T` straight through its own
    /// `Serialize` or need self-describing trees; saves themselves never
    /// call `Deserialize`. A `Deserialize` that panics on that input has
    /// the panic caught (the panic hook still reports it; built with
    /// `panic = "abort"`, the process ends), and its values are saved as
    /// trees.
    ///
    /// # Panics
    /// If `name` is taken by another type, or `T` is registered under
    /// another name.
    #[track_caller]
    pub fn register<T>(&mut self, name: &str) -> &mut Self
    where
        T: Component + Serialize + DeserializeOwned + Default,
    {
        self.add_component::<T>(name, Some(|| to_value(&T::default())))
    }

    /// Registers component `T`, which has no `Default`, under `name`. A
    /// prefab must then give every field (or the type marks its own fields
    /// `#[serde(default)]`). Runs `T`'s `Deserialize` once, as
    /// [`SerdeRegistry::register`] does.
    ///
    /// # Panics
    /// As [`SerdeRegistry::register`].
    #[track_caller]
    pub fn register_without_default<T>(&mut self, name: &str) -> &mut Self
    where
        T: Component + Serialize + DeserializeOwned,
    {
        self.add_component::<T>(name, None)
    }

    /// Registers resource `R` under `name`, so saves hold it.
    ///
    /// # Panics
    /// If `name` is taken by another resource type, or `R` is registered
    /// under another name.
    #[track_caller]
    pub fn register_resource<R>(&mut self, name: &str) -> &mut Self
    where
        R: Resource + Serialize + DeserializeOwned,
    {
        let entry = ResourceEntry {
            name: name.to_owned(),
            type_id: TypeId::of::<R>(),
            save: |world| world.get_resource::<R>().map(to_value),
            load: |value, cx| from_value::<R>(value, cx).map(|r| Box::new(r) as Boxed),
            insert: |world, value| {
                world.insert_resource(unbox::<R>(value));
            },
        };
        let entries = Arc::make_mut(&mut self.entries);
        let index = add(
            &mut entries.resources,
            &mut entries.resource_names,
            &mut entries.resource_types,
            entry,
            |e| (&e.name, e.type_id),
            type_name::<R>(),
            "resource",
        );
        debug_assert!(index < entries.resources.len());
        self
    }

    /// Moves the engine's [`Name`] from `"Name"` to `"archetable::Name"`,
    /// for a type of the game's own that is registered as `"Name"` (games
    /// written before the engine had one).
    fn yield_name(&mut self) {
        let entries = Arc::make_mut(&mut self.entries);
        let Some(&index) = entries.component_names.get("Name") else { return };
        if entries.components[index].type_id != TypeId::of::<Name>() {
            return;
        }
        entries.component_names.remove("Name");
        entries.components[index].name = "archetable::Name".to_owned();
        entries.component_names.insert("archetable::Name".to_owned(), index);
    }

    #[track_caller]
    fn add_component<T>(&mut self, name: &str, default: Option<fn() -> Result<Value, ToValueError>>) -> &mut Self
    where
        T: Component + Serialize + DeserializeOwned,
    {
        if name == "Name" && TypeId::of::<T>() != TypeId::of::<Name>() {
            self.yield_name();
        }
        let entry = ComponentEntry {
            name: name.to_owned(),
            type_id: TypeId::of::<T>(),
            engine_kept: T::ENGINE_KEPT,
            default,
            save: |world, entity| world.get::<T>(entity).map(to_value),
            load: |value, cx| from_value::<T>(value, cx).map(|c| Box::new(c) as Boxed),
            normalize: |value, cx| {
                let typed = from_value::<T>(value, cx)?;
                to_value(&typed).map_err(<FromValueError as serde::de::Error>::custom)
            },
            add: |builder, value| {
                builder.add(unbox::<T>(value));
            },
            insert: |world, entity, value| world.insert(entity, unbox::<T>(value)),
            remove: |world, entity| world.remove::<T>(entity).is_ok(),
            register: |world| {
                world.register_component::<T>();
            },
            column: ColumnFns::of::<T>(),
            text_column: crate::model::text_column::column_of::<T>,
            typed: Arc::new(TypedPlan::of::<T>()),
        };
        let entries = Arc::make_mut(&mut self.entries);
        add(
            &mut entries.components,
            &mut entries.component_names,
            &mut entries.component_types,
            entry,
            |e| (&e.name, e.type_id),
            type_name::<T>(),
            "component",
        );
        self
    }

    /// The name component `T` is registered under.
    pub fn component_name<T: Component>(&self) -> Option<&str> {
        let &i = self.entries.component_types.get(&TypeId::of::<T>())?;
        Some(&self.entries.components[i].name)
    }

    /// The name resource `R` is registered under.
    pub fn resource_name<R: Resource>(&self) -> Option<&str> {
        let &i = self.entries.resource_types.get(&TypeId::of::<R>())?;
        Some(&self.entries.resources[i].name)
    }

    /// The registered component names, in registration order.
    pub fn component_names(&self) -> impl Iterator<Item = &str> {
        self.entries.components.iter().map(|e| e.name.as_str())
    }

    /// The registered resource names, in registration order.
    pub fn resource_names(&self) -> impl Iterator<Item = &str> {
        self.entries.resources.iter().map(|e| e.name.as_str())
    }

    pub(crate) fn component(&self, name: &str) -> Option<&ComponentEntry> {
        self.entries.component_names.get(name).map(|&i| &self.entries.components[i])
    }

    pub(crate) fn component_by_type(&self, type_id: TypeId) -> Option<&ComponentEntry> {
        self.entries.component_types.get(&type_id).map(|&i| &self.entries.components[i])
    }

    /// Gives every registered component type its id in `world`, in
    /// registration order.
    pub(crate) fn register_components(&self, world: &mut World) {
        for entry in &self.entries.components {
            (entry.register)(world);
        }
    }

    pub(crate) fn resources(&self) -> &[ResourceEntry] {
        &self.entries.resources
    }

    pub(crate) fn resource(&self, name: &str) -> Option<&ResourceEntry> {
        self.entries.resource_names.get(name).map(|&i| &self.entries.resources[i])
    }

    /// The registered component name closest to `name`.
    pub(crate) fn suggest_component(&self, name: &str) -> Option<String> {
        nearest(name, self.component_names()).map(str::to_owned)
    }

    /// The registered resource name closest to `name`.
    pub(crate) fn suggest_resource(&self, name: &str) -> Option<String> {
        nearest(name, self.resource_names()).map(str::to_owned)
    }
}

/// The world's registry, or an empty one.
pub(crate) fn registry_of(world: &World) -> SerdeRegistry {
    world.get_resource::<SerdeRegistry>().cloned().unwrap_or_default()
}

/// Adds `entry` to a list with its name and type indices; replaces an equal
/// registration, panics on a conflicting one.
#[track_caller]
fn add<E>(
    list: &mut Vec<E>,
    names: &mut HashMap<String, usize>,
    types: &mut HashMap<TypeId, usize>,
    entry: E,
    key: impl Fn(&E) -> (&String, TypeId),
    type_name: &str,
    kind: &str,
) -> usize {
    let (name, type_id) = key(&entry);
    match (names.get(name.as_str()).copied(), types.get(&type_id).copied()) {
        (Some(a), Some(b)) if a == b => {
            list[a] = entry;
            a
        }
        (Some(_), _) => {
            panic!("{kind} name `{name}` is already registered for another type (registering `{type_name}`)")
        }
        (None, Some(i)) => {
            panic!("{kind} `{type_name}` is already registered as `{}`, not `{name}`", key(&list[i]).0)
        }
        (None, None) => {
            let i = list.len();
            names.insert(name.clone(), i);
            types.insert(type_id, i);
            list.push(entry);
            i
        }
    }
}

fn unbox<T: 'static>(value: Boxed) -> T {
    *value.downcast::<T>().unwrap_or_else(|_| unreachable!("a registry entry received a value of another type"))
}

impl fmt::Debug for SerdeRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SerdeRegistry")
            .field("components", &self.component_names().collect::<Vec<_>>())
            .field("resources", &self.resource_names().collect::<Vec<_>>())
            .finish()
    }
}
