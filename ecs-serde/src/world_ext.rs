//! The methods this crate adds to `World` and `Commands` (top layer: the
//! crate's face, above the formats and the model).

use archetable_core::system::CommandError;
use archetable_core::{Commands, Component, Entity, EntityCommands, Resource, States, World};
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::format::binary;
use crate::format::prefab::{self, Overrides, Prefabs};
use crate::format::text;
use crate::model::error::{Format, LoadError, PrefabError, SaveError};
use crate::model::load::EntityMap;
use crate::model::registry::{registry_of, SerdeRegistry};
use crate::model::save::Saved;
use crate::model::text_column::Text;

mod sealed {
    pub trait Sealed {}
    impl Sealed for archetable_core::World {}
    impl Sealed for archetable_core::Commands<'_, '_> {}
}

fn registry_mut(world: &mut World) -> &mut SerdeRegistry {
    if !world.contains_resource::<SerdeRegistry>() {
        world.insert_resource(SerdeRegistry::new());
    }
    world.resource_mut::<SerdeRegistry>()
}

/// Saving, loading and prefabs on a [`World`]; in `archetable::prelude`.
///
/// The world keeps its [`SerdeRegistry`] as a resource: register each
/// component (and resource) type once, under a stable name, before saving,
/// loading or spawning prefabs.
///
/// ```
/// use archetable::prelude::*;
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Component, Serialize, Deserialize, Default, Debug, PartialEq)]
/// struct Position { x: f32, y: f32 }
/// #[derive(Component, Serialize, Deserialize, Debug, PartialEq)]
/// struct Follows(Entity);
///
/// let mut world = World::new();
/// world
///     .register_serde::<Position>("Position")
///     .register_serde_without_default::<Follows>("Follows");
/// let leader = world.spawn(Position { x: 1.0, y: 2.0 });
/// let follower = world.spawn((Position::default(), Follows(leader)));
///
/// let save = world.save_json()?;
/// assert!(save.skipped.is_empty());
///
/// // Exact: a fresh world with the same handles.
/// let copy = World::load_json(&world.serde_registry(), &save.data)?;
/// assert_eq!(copy.get::<Follows>(follower), Some(&Follows(leader)));
///
/// // Merge: new handles, and the references follow them.
/// let map = world.load_into_json(&save.data)?;
/// let (new_leader, new_follower) = (map.get(leader).unwrap(), map.get(follower).unwrap());
/// assert_eq!(world.get::<Follows>(new_follower), Some(&Follows(new_leader)));
/// assert_eq!(world.len(), 4);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait SerdeWorldExt: sealed::Sealed {
    /// Registers component `T` under `name` for saves and prefabs. Prefab
    /// fields that are not given come from `T::default()`. Also gives `T`
    /// its component id now, so worlds that register the same types in the
    /// same order (a fresh world from [`SerdeWorldExt::load_json`] does)
    /// number them alike. Runs `T`'s `Deserialize` once on made-up input,
    /// as [`SerdeRegistry::register`] does.
    ///
    /// # Panics
    /// If `name` is taken by another type, or `T` has another name.
    fn register_serde<T>(&mut self, name: &str) -> &mut Self
    where
        T: Component + Serialize + DeserializeOwned + Default;

    /// Registers component `T`, which has no `Default`, under `name`; a
    /// prefab must give all its fields.
    ///
    /// # Panics
    /// As [`SerdeWorldExt::register_serde`].
    fn register_serde_without_default<T>(&mut self, name: &str) -> &mut Self
    where
        T: Component + Serialize + DeserializeOwned;

    /// Registers resource `R` under `name`, so saves hold it.
    ///
    /// # Panics
    /// If `name` is taken by another resource type, or `R` has another name.
    fn register_serde_resource<R>(&mut self, name: &str) -> &mut Self
    where
        R: Resource + Serialize + DeserializeOwned;

    /// Registers game state `S` under `name`, so saves hold its current
    /// value and its pending request (see
    /// [`SerdeRegistry::register_state`]); a loaded save goes on in
    /// `GameLoop::resume`.
    ///
    /// # Panics
    /// As [`SerdeWorldExt::register_serde_resource`].
    fn register_serde_state<S>(&mut self, name: &str) -> &mut Self
    where
        S: States + Serialize + DeserializeOwned;

    /// A copy of the world's registry (cheap: the entries are shared).
    fn serde_registry(&self) -> SerdeRegistry;

    /// Spawns prefab `name`, or fails without spawning anything.
    fn spawn_prefab(&mut self, prefabs: &Prefabs, name: &str) -> Result<Entity, PrefabError>;

    /// Spawns prefab `name` with `overrides` merged field by field over its
    /// components, or fails without spawning anything.
    ///
    /// ```
    /// use archetable::prelude::*;
    /// use serde::{Deserialize, Serialize};
    ///
    /// #[derive(Component, Serialize, Deserialize, Default)]
    /// struct Color { color: String, shade: u8 }
    /// #[derive(Component, Serialize, Deserialize, Default)]
    /// struct Name(String);
    ///
    /// let mut world = World::new();
    /// world.register_serde::<Color>("Color").register_serde::<Name>("Name");
    /// let prefabs = Prefabs::from_json_str(r#"{ "Ball": { "Color": { "color": "blue", "shade": 3 } } }"#)?;
    /// let chet = Overrides::new().set("Color", "color", "red").component("Name", "Chet");
    /// let ball = world.spawn_prefab_with(&prefabs, "Ball", &chet)?;
    /// let color = world.get::<Color>(ball).unwrap();
    /// assert_eq!((color.color.as_str(), color.shade), ("red", 3));
    /// assert_eq!(world.get::<Name>(ball).unwrap().0, "Chet");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn spawn_prefab_with(
        &mut self,
        prefabs: &Prefabs,
        name: &str,
        overrides: &Overrides,
    ) -> Result<Entity, PrefabError>;

    /// Saves every entity with its registered components, the registered
    /// resources and the entity allocator, as compact JSON (no spaces or
    /// line breaks; [`SerdeWorldExt::save_json_pretty`] writes one line per
    /// component, for saves people read or compare).
    /// Unregistered components are left out and listed in
    /// [`Saved::skipped`]. JSON cannot hold NaN or infinite numbers: a
    /// component holding one fails the save (RON and binary keep them).
    ///
    /// Values are written straight from the tables, table by table
    /// (layout version 3): each table's entities, then one array of values
    /// per component, each value written as in the pretty save. An entity
    /// is written as its index when its generation is 1, else as its
    /// handle (`"2v3"`). Components in sparse storage, which only some of
    /// a table's entities may have, list the rows they cover. Every loader
    /// reads this layout and the entity-by-entity one of earlier saves and
    /// of pretty saves.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # use serde::{Deserialize, Serialize};
    /// #[derive(Component, Serialize, Deserialize, Default)]
    /// struct Hp(u32);
    ///
    /// let mut world = World::new();
    /// world.register_serde::<Hp>("Hp");
    /// world.spawn_batch([Hp(3), Hp(4)]).for_each(drop);
    /// let tables = r#""tables":[{"entities":[0,1],"columns":{"Hp":[3,4]}}]"#;
    /// assert!(world.save_json()?.data.contains(tables));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn save_json(&self) -> Result<Saved<String>, SaveError>;

    /// Saves as [`SerdeWorldExt::save_json`] does, with one line per
    /// entity and per component:
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # use serde::{Deserialize, Serialize};
    /// #[derive(Component, Serialize, Deserialize, Default)]
    /// struct Hp(u32);
    ///
    /// let mut world = World::new();
    /// world.register_serde::<Hp>("Hp");
    /// world.spawn(Hp(3));
    /// let pretty = world.save_json_pretty()?.data;
    /// assert!(pretty.contains("\"entities\": {\n    \"0v1\": {\n      \"Hp\": 3\n    }\n  }"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// Pretty saves keep the entity-by-entity layout (version 1), easier
    /// to read and to compare line by line.
    fn save_json_pretty(&self) -> Result<Saved<String>, SaveError>;

    /// Saves as [`SerdeWorldExt::save_json`] does, as compact RON, in the
    /// same columnar layout (version 3:
    /// `tables:[(entities:[0],columns:{"Position":[(x:1.0)]})]`). The
    /// loaders also read the layouts of earlier RON saves: version 1,
    /// entity by entity, and version 2, entity by entity with components
    /// named by their index in the save's `components` list.
    fn save_ron(&self) -> Result<Saved<String>, SaveError>;

    /// Saves as [`SerdeWorldExt::save_ron`] does, with one line per entity
    /// and per component, and components by name (layout version 1).
    fn save_ron_pretty(&self) -> Result<Saved<String>, SaveError>;

    /// Saves as [`SerdeWorldExt::save_json`] does, in the compact binary
    /// form (postcard). Structs whose fields were all written keep their
    /// values only, in declaration order, so load a binary save with the
    /// same component definitions; use JSON or RON for saves that must
    /// outlive a change of a component's fields. Writes layout version 2
    /// (each component name once per table, values straight from their
    /// types); the loaders read versions 1 and 2.
    ///
    /// A column is written straight from its type when the type's reader
    /// (probed at registration) and what its values write allow it, and as
    /// self-describing trees otherwise (untagged or internally tagged enums,
    /// `#[serde(flatten)]`, skipped fields). Saving never calls
    /// `Deserialize`.
    fn save_binary(&self) -> Result<Saved<Vec<u8>>, SaveError>;

    /// A fresh world holding the JSON save `text`, every entity under its
    /// saved handle and the allocator as saved (later spawns hand out the
    /// same handles as in the saved world), with a copy of `registry`.
    ///
    /// Within each table the entities keep their saved order; tables may
    /// be visited in another order than in the saved world.
    ///
    /// Values may nest [`MAX_DEPTH`](crate::MAX_DEPTH) levels
    /// ([`MAX_RON_DEPTH`](crate::MAX_RON_DEPTH) in RON); loads need at most
    /// 256 KiB of thread stack (see the crate docs).
    fn load_json(registry: &SerdeRegistry, text: &str) -> Result<World, LoadError>
    where
        Self: Sized;

    /// A fresh world holding the RON save `text`; see
    /// [`SerdeWorldExt::load_json`]. Reads layout versions 1 and 2.
    fn load_ron(registry: &SerdeRegistry, text: &str) -> Result<World, LoadError>
    where
        Self: Sized;

    /// A fresh world holding the binary save `bytes`; see
    /// [`SerdeWorldExt::load_json`].
    ///
    /// Reads binary saves of layout versions 1 and 2.
    fn load_binary(registry: &SerdeRegistry, bytes: &[u8]) -> Result<World, LoadError>
    where
        Self: Sized;

    /// Adds the entities of the JSON save `text` to this world, with new
    /// handles; handles stored in their components are remapped to the new
    /// ones. The save's resources replace the world's. On error the world
    /// is unchanged.
    fn load_into_json(&mut self, text: &str) -> Result<EntityMap, LoadError>;

    /// Adds the entities of the RON save `text`; see
    /// [`SerdeWorldExt::load_into_json`].
    fn load_into_ron(&mut self, text: &str) -> Result<EntityMap, LoadError>;

    /// Adds the entities of the binary save `bytes`; see
    /// [`SerdeWorldExt::load_into_json`].
    fn load_into_binary(&mut self, bytes: &[u8]) -> Result<EntityMap, LoadError>;
}

impl SerdeWorldExt for World {
    fn register_serde<T>(&mut self, name: &str) -> &mut Self
    where
        T: Component + Serialize + DeserializeOwned + Default,
    {
        registry_mut(self).register::<T>(name);
        self.register_component::<T>();
        self
    }

    fn register_serde_without_default<T>(&mut self, name: &str) -> &mut Self
    where
        T: Component + Serialize + DeserializeOwned,
    {
        registry_mut(self).register_without_default::<T>(name);
        self.register_component::<T>();
        self
    }

    fn register_serde_resource<R>(&mut self, name: &str) -> &mut Self
    where
        R: Resource + Serialize + DeserializeOwned,
    {
        registry_mut(self).register_resource::<R>(name);
        self
    }

    fn register_serde_state<S>(&mut self, name: &str) -> &mut Self
    where
        S: States + Serialize + DeserializeOwned,
    {
        registry_mut(self).register_state::<S>(name);
        self
    }

    fn serde_registry(&self) -> SerdeRegistry {
        registry_of(self)
    }

    fn spawn_prefab(&mut self, prefabs: &Prefabs, name: &str) -> Result<Entity, PrefabError> {
        prefab::spawn(self, prefabs, name, None)
    }

    fn spawn_prefab_with(
        &mut self,
        prefabs: &Prefabs,
        name: &str,
        overrides: &Overrides,
    ) -> Result<Entity, PrefabError> {
        prefab::spawn(self, prefabs, name, Some(overrides))
    }

    fn save_json(&self) -> Result<Saved<String>, SaveError> {
        text::save(self, Text::Json)
    }

    fn save_json_pretty(&self) -> Result<Saved<String>, SaveError> {
        text::save_json_pretty(self)
    }

    fn save_ron(&self) -> Result<Saved<String>, SaveError> {
        text::save(self, Text::Ron)
    }

    fn save_ron_pretty(&self) -> Result<Saved<String>, SaveError> {
        text::save_ron_pretty(self)
    }

    fn save_binary(&self) -> Result<Saved<Vec<u8>>, SaveError> {
        binary::save(self)
    }

    fn load_json(registry: &SerdeRegistry, text: &str) -> Result<World, LoadError> {
        text::load_fresh(registry, Format::Json, text)
    }

    fn load_ron(registry: &SerdeRegistry, text: &str) -> Result<World, LoadError> {
        text::load_fresh(registry, Format::Ron, text)
    }

    fn load_binary(registry: &SerdeRegistry, bytes: &[u8]) -> Result<World, LoadError> {
        binary::load_fresh(registry, bytes)
    }

    fn load_into_json(&mut self, text: &str) -> Result<EntityMap, LoadError> {
        text::load_merge(self, Format::Json, text)
    }

    fn load_into_ron(&mut self, text: &str) -> Result<EntityMap, LoadError> {
        text::load_merge(self, Format::Ron, text)
    }

    fn load_into_binary(&mut self, bytes: &[u8]) -> Result<EntityMap, LoadError> {
        binary::load_merge(self, bytes)
    }
}

/// Sent as an event when a prefab spawned through [`Commands`] fails as the
/// commands apply; the reserved entity is despawned. Read it with
/// `EventReader<PrefabSpawnFailed>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrefabSpawnFailed {
    /// The handle the commands had reserved.
    pub entity: Entity,
    /// The prefab asked for.
    pub prefab: String,
    /// Why it failed.
    pub error: PrefabError,
}

/// Spawning prefabs through [`Commands`]; in `archetable::prelude`.
///
/// The entity's handle is valid at once; its components arrive when the
/// commands apply. A prefab that fails then (unknown name, bad value) spawns
/// nothing: the reserved entity is despawned and a [`PrefabSpawnFailed`]
/// event is sent.
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
/// let prefabs = Prefabs::from_json_str(r#"{ "Orc": { "Hp": 30 } }"#)?;
/// let mut queue = CommandQueue::default();
/// let orc = Commands::new(&mut queue, &world).spawn_prefab(&prefabs, "Orc").id();
/// queue.apply(&mut world);
/// assert_eq!(world.get::<Hp>(orc).map(|hp| hp.0), Some(30));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait PrefabCommandsExt: sealed::Sealed {
    /// Spawns prefab `name` when the commands apply.
    fn spawn_prefab(&mut self, prefabs: &Prefabs, name: &str) -> EntityCommands<'_>;

    /// Spawns prefab `name` with `overrides` when the commands apply.
    fn spawn_prefab_with(&mut self, prefabs: &Prefabs, name: &str, overrides: Overrides) -> EntityCommands<'_>;
}

impl PrefabCommandsExt for Commands<'_, '_> {
    fn spawn_prefab(&mut self, prefabs: &Prefabs, name: &str) -> EntityCommands<'_> {
        spawn_deferred(self, prefabs, name, None)
    }

    fn spawn_prefab_with(&mut self, prefabs: &Prefabs, name: &str, overrides: Overrides) -> EntityCommands<'_> {
        spawn_deferred(self, prefabs, name, Some(overrides))
    }
}

fn spawn_deferred<'a>(
    commands: &'a mut Commands<'_, '_>,
    prefabs: &Prefabs,
    name: &str,
    overrides: Option<Overrides>,
) -> EntityCommands<'a> {
    let entity = commands.spawn_empty().id();
    let prefabs = prefabs.clone();
    let prefab = name.to_owned();
    commands.add_fallible(move |world| {
        world.flush();
        if !world.contains(entity) {
            return Ok(());
        }
        prefab::fill(world, entity, &prefabs, &prefab, overrides.as_ref()).map_err(|error| {
            let _ = world.despawn(entity);
            let reason = error.to_string();
            world.send_event(PrefabSpawnFailed { entity, prefab, error });
            CommandError { command: "spawn_prefab", entity, reason }
        })
    });
    commands.entity(entity)
}
