//! The save and load workloads: a world of [`ENTITIES`] entities with four
//! components (position, velocity, health and an 8-character name, a
//! `String`), written to and read back from JSON, RON and postcard, on
//! `archetable` (`archetable-serde`) and on `hecs` (its `serialize` module).
//!
//! `bevy_ecs` has no world serialization of its own: saving a world needs
//! `bevy_scene` and `bevy_reflect`, which are not part of this comparison.
//! There is no raw floor either.
//!
//! hecs offers two layouts, and archetable is compared with its best one
//! in every format: column by column ([`hecs::serialize::column`]: per
//! archetype, the component ids, the entity count, the entities, then one
//! tuple of values per component type), the layout its documentation
//! points data programs at. The row layout ([`hecs::serialize::row`]: a
//! map from entity to its components) is measured too, as an extra row, in
//! the text formats (postcard cannot write its maps of unknown length).

use serde::{Deserialize, Serialize};

/// Entities of the save and load workloads.
pub const ENTITIES: usize = 100_000;

/// Where an entity is.
#[derive(archetable::Component, Serialize, Deserialize, Default, Clone, Copy, PartialEq, Debug)]
#[component(clone)]
pub struct Position {
    /// Coordinates.
    pub x: f32,
    /// See [`Position::x`].
    pub y: f32,
    /// See [`Position::x`].
    pub z: f32,
}

/// How it moves.
#[derive(archetable::Component, Serialize, Deserialize, Default, Clone, Copy, PartialEq, Debug)]
#[component(clone)]
pub struct Velocity {
    /// Displacement per step.
    pub x: f32,
    /// See [`Velocity::x`].
    pub y: f32,
    /// See [`Velocity::x`].
    pub z: f32,
}

/// Hit points left.
#[derive(archetable::Component, Serialize, Deserialize, Default, Clone, Copy, PartialEq, Debug)]
#[component(clone)]
pub struct Health(pub u32);

/// What it is called: a value that owns heap memory.
#[derive(archetable::Component, Serialize, Deserialize, Default, Clone, PartialEq, Debug)]
#[component(clone)]
pub struct Name(pub String);

/// The components of one saved entity.
pub type Saved = (Position, Velocity, Health, Name);

/// The components of `n` entities: varied values (from a fixed xorshift
/// sequence), so the text formats write realistic numbers, and names of 8
/// lowercase letters.
pub fn entities(n: usize) -> Vec<Saved> {
    let mut seed = 0x9E37_79B9_u32;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        seed
    };
    (0..n)
        .map(|i| {
            let mut unit = || (next() % 20_000) as f32 / 100.0 - 100.0;
            let position = Position { x: unit(), y: unit(), z: unit() };
            let velocity = Velocity { x: unit(), y: unit(), z: unit() };
            let name = (0..8).map(|_| char::from(b'a' + (next() % 26) as u8)).collect();
            (position, velocity, Health((i % 100) as u32), Name(name))
        })
        .collect()
}

/// Sum of every number of one entity's components, and of its name's
/// bytes: summed over a world, it tells whether a load restored the values.
pub fn field_sum(position: &Position, velocity: &Velocity, health: &Health, name: &Name) -> f64 {
    let floats = [position.x, position.y, position.z, velocity.x, velocity.y, velocity.z];
    floats.iter().map(|&f| f as f64).sum::<f64>() + health.0 as f64 + name.0.bytes().map(f64::from).sum::<f64>()
}

/// A save format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// JSON, through `serde_json`.
    Json,
    /// RON, through `ron`.
    Ron,
    /// The compact binary form, through `postcard`.
    Binary,
}

impl Format {
    /// Every format, in report order.
    pub const ALL: [Format; 3] = [Format::Json, Format::Ron, Format::Binary];

    /// Its name in the report.
    pub fn name(self) -> &'static str {
        match self {
            Format::Json => "JSON",
            Format::Ron => "RON",
            Format::Binary => "binary (postcard)",
        }
    }

    /// Whether hecs can write its row layout in this format (postcard
    /// cannot write the row layout's maps of unknown length).
    pub fn has_hecs_rows(self) -> bool {
        self != Format::Binary
    }
}

/// One of hecs's two save layouts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HecsLayout {
    /// `hecs::serialize::column`: per archetype, one array per component.
    Column,
    /// `hecs::serialize::row`: a map from each entity to its components.
    Row,
}

/// Whether a workload saves or loads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// World to bytes.
    Save,
    /// Bytes to a fresh world.
    Load,
}

/// The size of one format's save, per engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sizes {
    /// The format.
    pub format: Format,
    /// Bytes of the `archetable` save.
    pub ours: usize,
    /// Bytes of the `hecs` save in its column layout.
    pub hecs: usize,
    /// Bytes of the `hecs` save in its row layout, where it has one.
    pub hecs_rows: Option<usize>,
}

/// The size of each format's save of [`ENTITIES`] entities, on both
/// engines.
pub fn sizes() -> Vec<Sizes> {
    let world = ours::world(ENTITIES);
    let hecs_world = with_hecs::world(ENTITIES);
    Format::ALL
        .into_iter()
        .map(|format| Sizes {
            format,
            ours: ours::save(&world, format).len(),
            hecs: with_hecs::save(&hecs_world, format, HecsLayout::Column).len(),
            hecs_rows: format.has_hecs_rows().then(|| with_hecs::save(&hecs_world, format, HecsLayout::Row).len()),
        })
        .collect()
}

/// A save: text or bytes, depending on the format.
pub type Bytes = Vec<u8>;

/// On `archetable`, through `archetable-serde` as its documentation teaches: register the
/// types once, `world.save_json()` and `World::load_json(&registry, ..)`
/// (and the same for RON and binary).
pub mod ours {
    use std::hint::black_box;

    use archetable::prelude::*;

    use super::{entities, field_sum, Bytes, Direction, Format, Health, Name, Position, Velocity};
    use crate::routine::{Build, Steady};
    use crate::Routine;

    /// A world of `n` saved entities, its four types registered.
    pub fn world(n: usize) -> World {
        let mut world = World::new();
        world
            .register_serde::<Position>("Position")
            .register_serde::<Velocity>("Velocity")
            .register_serde::<Health>("Health")
            .register_serde::<Name>("Name");
        world.spawn_batch(entities(n)).for_each(drop);
        world
    }

    /// Saves `world` in `format`.
    ///
    /// # Panics
    /// If the save fails or leaves a component out.
    pub fn save(world: &World, format: Format) -> Bytes {
        let saved = match format {
            Format::Json => world.save_json().map(|s| (s.data.into_bytes(), s.skipped)),
            Format::Ron => world.save_ron().map(|s| (s.data.into_bytes(), s.skipped)),
            Format::Binary => world.save_binary().map(|s| (s.data, s.skipped)),
        };
        let (data, skipped) = saved.expect("the world saves");
        assert!(skipped.is_empty(), "every component is registered: {skipped:?}");
        data
    }

    /// A fresh world holding the save `data`.
    ///
    /// # Panics
    /// If the save does not load.
    pub fn load(registry: &SerdeRegistry, format: Format, data: &[u8]) -> World {
        let text = || std::str::from_utf8(data).expect("a text save is UTF-8");
        match format {
            Format::Json => World::load_json(registry, text()),
            Format::Ron => World::load_ron(registry, text()),
            Format::Binary => World::load_binary(registry, data),
        }
        .expect("the save loads")
    }

    /// Number of entities with all four components, and the sum of their
    /// fields.
    pub fn checksum(world: &World) -> (usize, f64) {
        let mut count = 0;
        let mut sum = 0.0;
        world.query::<(&Position, &Velocity, &Health, &Name)>().for_each(|(p, v, h, n)| {
            count += 1;
            sum += field_sum(p, v, h, n);
        });
        (count, sum)
    }

    /// Whether `loaded` holds the entities of `original`, at the same
    /// handles, every field equal, and nothing else.
    pub fn same(original: &World, loaded: &World) -> bool {
        let mut seen = 0;
        let all_equal = original.query::<(Entity, &Position, &Velocity, &Health, &Name)>().all(|(e, p, v, h, n)| {
            seen += 1;
            loaded.get::<Position>(e) == Some(p)
                && loaded.get::<Velocity>(e) == Some(v)
                && loaded.get::<Health>(e) == Some(h)
                && loaded.get::<Name>(e) == Some(n)
        });
        all_equal && seen == loaded.len()
    }

    /// Saves or loads [`ENTITIES`](super::ENTITIES) entities in `format`.
    pub fn routine(format: Format, direction: Direction) -> Box<dyn Routine> {
        let world = world(super::ENTITIES);
        match direction {
            Direction::Save => Box::new(Steady::new(world, move |world: &mut World| {
                black_box(save(world, format));
            })),
            Direction::Load => {
                let registry = world.serde_registry();
                let data = save(&world, format);
                assert!(same(&world, &load(&registry, format, &data)), "the load restores every field");
                drop(world);
                Box::new(Build::new(move || load(&registry, format, &data)))
            }
        }
    }
}

/// On `hecs`, through `hecs::serialize` as its documentation teaches: a
/// context that names each component type with an enum, and `try_serialize`
/// / `deserialize_column` per type; in either of its layouts.
pub mod with_hecs {
    use std::any::TypeId;
    use std::hint::black_box;

    use hecs::serialize::{column, row};
    use hecs::{Archetype, ColumnBatchBuilder, ColumnBatchType, EntityBuilder, EntityRef, World};
    use serde::de::{MapAccess, SeqAccess};
    use serde::ser::{SerializeMap, SerializeTuple};
    use serde::{Deserialize, Serialize, Serializer};

    use super::{entities, field_sum, Bytes, Direction, Format, Health, HecsLayout, Name, Position, Velocity};
    use crate::routine::{Build, Steady};
    use crate::Routine;

    /// The name each component type is saved under.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
    enum ComponentId {
        Position,
        Velocity,
        Health,
        Name,
    }

    /// Serializes the four component types, and reads them back; for the
    /// column layout, remembers the ids of the archetype being read.
    #[derive(Default)]
    struct Context {
        components: Vec<ComponentId>,
    }

    impl row::SerializeContext for Context {
        fn serialize_entity<S: SerializeMap>(&mut self, entity: EntityRef<'_>, mut map: S) -> Result<S::Ok, S::Error> {
            row::try_serialize::<Position, _, _>(&entity, &ComponentId::Position, &mut map)?;
            row::try_serialize::<Velocity, _, _>(&entity, &ComponentId::Velocity, &mut map)?;
            row::try_serialize::<Health, _, _>(&entity, &ComponentId::Health, &mut map)?;
            row::try_serialize::<Name, _, _>(&entity, &ComponentId::Name, &mut map)?;
            map.end()
        }
    }

    impl row::DeserializeContext for Context {
        fn deserialize_entity<'de, M: MapAccess<'de>>(
            &mut self,
            mut map: M,
            entity: &mut EntityBuilder,
        ) -> Result<(), M::Error> {
            while let Some(key) = map.next_key()? {
                match key {
                    ComponentId::Position => entity.add::<Position>(map.next_value()?),
                    ComponentId::Velocity => entity.add::<Velocity>(map.next_value()?),
                    ComponentId::Health => entity.add::<Health>(map.next_value()?),
                    ComponentId::Name => entity.add::<Name>(map.next_value()?),
                };
            }
            Ok(())
        }
    }

    impl column::SerializeContext for Context {
        fn component_count(&self, archetype: &Archetype) -> usize {
            let saved =
                [TypeId::of::<Position>(), TypeId::of::<Velocity>(), TypeId::of::<Health>(), TypeId::of::<Name>()];
            archetype.component_types().filter(|t| saved.contains(t)).count()
        }

        fn serialize_component_ids<S: SerializeTuple>(
            &mut self,
            archetype: &Archetype,
            mut out: S,
        ) -> Result<S::Ok, S::Error> {
            column::try_serialize_id::<Position, _, _>(archetype, &ComponentId::Position, &mut out)?;
            column::try_serialize_id::<Velocity, _, _>(archetype, &ComponentId::Velocity, &mut out)?;
            column::try_serialize_id::<Health, _, _>(archetype, &ComponentId::Health, &mut out)?;
            column::try_serialize_id::<Name, _, _>(archetype, &ComponentId::Name, &mut out)?;
            out.end()
        }

        fn serialize_components<S: SerializeTuple>(
            &mut self,
            archetype: &Archetype,
            mut out: S,
        ) -> Result<S::Ok, S::Error> {
            column::try_serialize::<Position, _>(archetype, &mut out)?;
            column::try_serialize::<Velocity, _>(archetype, &mut out)?;
            column::try_serialize::<Health, _>(archetype, &mut out)?;
            column::try_serialize::<Name, _>(archetype, &mut out)?;
            out.end()
        }
    }

    impl column::DeserializeContext for Context {
        fn deserialize_component_ids<'de, A: SeqAccess<'de>>(
            &mut self,
            mut seq: A,
        ) -> Result<ColumnBatchType, A::Error> {
            self.components.clear();
            let mut batch = ColumnBatchType::new();
            while let Some(id) = seq.next_element()? {
                match id {
                    ComponentId::Position => batch.add::<Position>(),
                    ComponentId::Velocity => batch.add::<Velocity>(),
                    ComponentId::Health => batch.add::<Health>(),
                    ComponentId::Name => batch.add::<Name>(),
                };
                self.components.push(id);
            }
            Ok(batch)
        }

        fn deserialize_components<'de, A: SeqAccess<'de>>(
            &mut self,
            entity_count: u32,
            mut seq: A,
            batch: &mut ColumnBatchBuilder,
        ) -> Result<(), A::Error> {
            for &id in &self.components {
                match id {
                    ComponentId::Position => column::deserialize_column::<Position, _>(entity_count, &mut seq, batch)?,
                    ComponentId::Velocity => column::deserialize_column::<Velocity, _>(entity_count, &mut seq, batch)?,
                    ComponentId::Health => column::deserialize_column::<Health, _>(entity_count, &mut seq, batch)?,
                    ComponentId::Name => column::deserialize_column::<Name, _>(entity_count, &mut seq, batch)?,
                }
            }
            Ok(())
        }
    }

    /// A world to serialize in one of hecs' layouts.
    struct Layout<'w> {
        world: &'w World,
        columns: bool,
    }

    impl Serialize for Layout<'_> {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            if self.columns {
                column::serialize(self.world, &mut Context::default(), serializer)
            } else {
                row::serialize(self.world, &mut Context::default(), serializer)
            }
        }
    }

    /// A world of `n` saved entities, spawned by one `spawn_batch`.
    pub fn world(n: usize) -> World {
        let mut world = World::new();
        world.spawn_batch(entities(n)).for_each(drop);
        world
    }

    /// Saves `world` in `format`, in `layout`.
    ///
    /// # Panics
    /// If serialization fails (the row layout in postcard, for one).
    pub fn save(world: &World, format: Format, layout: HecsLayout) -> Bytes {
        let layout = Layout { world, columns: layout == HecsLayout::Column };
        match format {
            Format::Json => serde_json::to_vec(&layout).expect("the world saves"),
            Format::Ron => ron::to_string(&layout).expect("the world saves").into_bytes(),
            Format::Binary => postcard::to_allocvec(&layout).expect("the world saves"),
        }
    }

    /// Reads a world in `layout` from `de`.
    fn read<'de, D: serde::Deserializer<'de>>(layout: HecsLayout, de: D) -> Result<World, D::Error> {
        let mut context = Context::default();
        match layout {
            HecsLayout::Column => column::deserialize(&mut context, de),
            HecsLayout::Row => row::deserialize(&mut context, de),
        }
    }

    /// A fresh world holding the save `data`, written in `layout`.
    ///
    /// # Panics
    /// If the save does not load.
    pub fn load(format: Format, layout: HecsLayout, data: &[u8]) -> World {
        match format {
            Format::Json => {
                let mut de = serde_json::Deserializer::from_slice(data);
                let world = read(layout, &mut de).expect("the save loads");
                de.end().expect("nothing follows the save");
                world
            }
            Format::Ron => {
                let mut de = ron::Deserializer::from_bytes(data).expect("the save starts well");
                let world = read(layout, &mut de).expect("the save loads");
                de.end().expect("nothing follows the save");
                world
            }
            Format::Binary => {
                let mut de = postcard::Deserializer::from_bytes(data);
                read(layout, &mut de).expect("the save loads")
            }
        }
    }

    /// Whether `loaded` holds the entities of `original`, at the same
    /// handles, every field equal, and nothing else.
    pub fn same(original: &World, loaded: &World) -> bool {
        fn equal<T: hecs::Component + PartialEq>(world: &World, entity: hecs::Entity, value: &T) -> bool {
            world.get::<&T>(entity).is_ok_and(|v| *v == *value)
        }
        let mut query = original.query::<(hecs::Entity, &Position, &Velocity, &Health, &Name)>();
        let all_equal = query.iter().all(|(e, p, v, h, n)| {
            equal(loaded, e, p) && equal(loaded, e, v) && equal(loaded, e, h) && equal(loaded, e, n)
        });
        all_equal && original.len() == loaded.len()
    }

    /// Number of entities with all four components, and the sum of their
    /// fields.
    pub fn checksum(world: &World) -> (usize, f64) {
        let mut count = 0;
        let mut sum = 0.0;
        for (p, v, h, t) in world.query::<(&Position, &Velocity, &Health, &Name)>().iter() {
            count += 1;
            sum += field_sum(p, v, h, t);
        }
        (count, sum)
    }

    /// Saves or loads [`ENTITIES`](super::ENTITIES) entities in `format`,
    /// in `layout`.
    pub fn routine(format: Format, direction: Direction, layout: HecsLayout) -> Box<dyn Routine> {
        let world = world(super::ENTITIES);
        match direction {
            Direction::Save => Box::new(Steady::new(world, move |world: &mut World| {
                black_box(save(world, format, layout));
            })),
            Direction::Load => {
                let data = save(&world, format, layout);
                assert!(same(&world, &load(format, layout, &data)), "the load restores every field");
                drop(world);
                Box::new(Build::new(move || load(format, layout, &data)))
            }
        }
    }
}
