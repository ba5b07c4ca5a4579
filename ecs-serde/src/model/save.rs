//! The save plan, and the save document as written (model layer).
//!
//! Writing a world: every entity with its registered components, the
//! registered resources, and the entity allocator's state.
//!
//! The save is written straight from the world, one component value at a
//! time, without building the whole document in memory first.
//!
//! Layout of compact saves, version 3 (JSON shown; RON holds the same
//! fields in this order; binary saves are written column by column too,
//! see `format/binary.rs`):
//!
//! ```text
//! { "format": "ecs-save", "version": 3,
//!   "allocator": { "generations": [[count, generation], ..], "free": [index, ..] },
//!   "components": ["Position", "Stunned", ..],
//!   "tables": [
//!     { "entities": [0, 1, "2v3", ..],
//!       "columns": { "Position": [{ "x": 0.0, "y": 1.0 }, ..], "Stunned": [4], .. },
//!       "rows": { "Stunned": [1] } },
//!     .. ],
//!   "resources": { "Score": 10 },
//!   "skipped": [ { "component": "game::Particle", "entities": 12 } ] }
//! ```
//!
//! A table's entities are written as their index when their generation is
//! 1, else as their handle (`"2v3"`). Each column holds one value per
//! entity, in the order of `entities`; a component in sparse storage, which
//! only some of the table's entities have, holds one value per row listed
//! in `rows` (a table without such a column has no `rows`).
//!
//! Pretty saves keep layout version 1, entity by entity, for people to
//! read: `"entities": { "0v1": { "Position": { "x": 0.0, "y": 1.0 }, .. }, .. }`
//! in place of `tables`.
//!
//! `generations` is run-length encoded over the slots (a fresh world's
//! slots all have generation 1). `components` lists the component names
//! the save uses; binary saves of version 1, and compact RON saves of
//! layout version 2 (`{"0v1": {0: (x: 0.0, y: 1.0)}}`), name each entity's
//! components by their index in that list instead of repeating the names.
//! Compact JSON and RON saves are written by `format/text/save.rs`, pretty
//! ones (and checks) through this document.

use std::cell::RefCell;
use std::fmt;
use std::num::NonZeroU32;

use archetable_core::storage::Archetype;
use archetable_core::{ComponentId, Entity, World};
use serde::ser::{self, SerializeMap, SerializeSeq, SerializeStruct};
use serde::{Serialize, Serializer};

use crate::model::error::{Format, SaveError};
use crate::model::registry::{ComponentEntry, SerdeRegistry};
use crate::model::value::Value;
use crate::model::writable::unwritable;

/// The `format` tag of every save.
pub(crate) const FORMAT_TAG: &str = "ecs-save";
/// The layout version of pretty JSON and RON saves (and of binary saves
/// read as trees): a map from each entity to its components, named by
/// their names.
pub(crate) const VERSION: u32 = 1;
// Layout version 2, compact RON saves before version 3: each entity
// names its components by their index in `components`
// (`{"0v1": {0: (x: 1.0)}}`), as RON tells numbers from strings. RON loads
// still read it; nothing writes it.
/// The layout version of compact JSON and RON saves: columnar. `tables`
/// lists each table of the world: its entities, then one array of values
/// per component (`{"entities": [0, 1, "2v3"], "columns": {"Position":
/// [{"x": 1.0}, ..]}}`), and, for components only some of its entities
/// have (sparse storage), the rows they cover (`"rows": {"Stunned": [1]}`).
pub(crate) const COLUMNS_VERSION: u32 = 3;

/// The newest layout version loads of `format` read (binary saves of
/// version 2 and up are read by `format/binary.rs`, not as trees).
pub(crate) fn newest_version(format: Format) -> u32 {
    match format {
        Format::Json | Format::Ron => COLUMNS_VERSION,
        Format::Binary => VERSION,
    }
}

/// Whether the tree loader reads layout `version` of `format`.
pub(crate) fn reads_version(format: Format, version: u32) -> bool {
    match format {
        Format::Json => version == VERSION || version == COLUMNS_VERSION,
        Format::Ron => (VERSION..=COLUMNS_VERSION).contains(&version),
        Format::Binary => version == VERSION,
    }
}

/// How a text save lays out its entities and names their components.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Keys {
    /// Entity by entity, components by name: layout version 1.
    Names,
    /// Table by table, one array per component: layout version 3.
    #[cfg_attr(not(test), allow(dead_code))]
    Columns,
}

/// A save and what it had to leave out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Saved<T> {
    /// The save: text for JSON and RON, bytes for the binary form.
    pub data: T,
    /// Component types found on entities but not registered, so not saved.
    /// Empty when everything was saved. The save lists them too.
    pub skipped: Vec<SkippedComponent>,
    /// The Rust type names of the world's resources that are not
    /// registered for saving, so are not in the save (a world loaded from
    /// it will not have them). Event queues are not counted.
    ///
    /// ```
    /// use archetable::prelude::*;
    ///
    /// struct Unsaved;
    /// let mut world = World::new();
    /// world.insert_resource(Unsaved);
    /// let saved = world.save_json().unwrap();
    /// assert_eq!(saved.skipped_resources.len(), 1);
    /// assert!(saved.skipped_resources[0].ends_with("Unsaved"));
    /// ```
    pub skipped_resources: Vec<String>,
}

/// A component type that was not saved because it is not registered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkippedComponent {
    /// The Rust type name.
    pub type_name: String,
    /// How many entities had it.
    pub entities: usize,
}

impl fmt::Display for SkippedComponent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "component `{}` is not registered for saving; {} entities were saved without it",
            self.type_name, self.entities
        )
    }
}

/// What to write for each archetype: its index and its registered
/// components, each with its index in `names`.
pub(crate) struct Plan<'r> {
    pub archetypes: Vec<(usize, Vec<(&'r ComponentEntry, u32)>)>,
    /// The registered components in sparse storage that some entity has,
    /// with their ids: they are listed with every archetype's components,
    /// and an entity without one writes nothing for it.
    pub sparse: Vec<(ComponentId, &'r ComponentEntry)>,
    pub names: Vec<&'r str>,
    pub skipped: Vec<SkippedComponent>,
    pub skipped_resources: Vec<String>,
}

pub(crate) fn plan<'r>(world: &World, registry: &'r SerdeRegistry) -> Plan<'r> {
    let mut archetypes = Vec::new();
    let mut names: Vec<&'r str> = Vec::new();
    let mut skipped: Vec<SkippedComponent> = Vec::new();
    let mut sparse = Vec::new();
    for set in world.sparse_sets().iter().filter(|set| !set.is_empty()) {
        let info = world.components().info(set.id());
        match registry.component_by_type(info.type_id()) {
            Some(entry) => sparse.push((set.id(), entry)),
            None => skipped.push(SkippedComponent { type_name: info.name().to_owned(), entities: set.len() }),
        }
    }
    for (index, archetype) in world.archetypes().as_slice().iter().enumerate() {
        if archetype.is_empty() {
            continue;
        }
        let mut entries = Vec::with_capacity(archetype.components().len() + sparse.len());
        for &id in archetype.components().iter().chain(sparse.iter().map(|(id, _)| id)) {
            let info = world.components().info(id);
            match registry.component_by_type(info.type_id()) {
                Some(entry) => {
                    let index = match names.iter().position(|&n| n == entry.name) {
                        Some(i) => i,
                        None => {
                            names.push(&entry.name);
                            names.len() - 1
                        }
                    };
                    entries.push((entry, index as u32));
                }
                None => match skipped.iter_mut().find(|s| s.type_name == info.name()) {
                    Some(s) => s.entities += archetype.len(),
                    None => {
                        skipped.push(SkippedComponent { type_name: info.name().to_owned(), entities: archetype.len() })
                    }
                },
            }
        }
        archetypes.push((index, entries));
    }
    let skipped_resources = world
        .resource_types()
        // The registry itself is kept as a resource: it is the save's own
        // tool, not game state.
        .filter(|&(type_id, _)| type_id != std::any::TypeId::of::<SerdeRegistry>())
        // Registered systems are not saved, as schedules are not: code, not
        // game state.
        .filter(|&(type_id, _)| type_id != archetable_core::__private::registry_type_id())
        .filter(|&(type_id, _)| !registry.resources().iter().any(|entry| entry.type_id == type_id))
        .map(|(_, name)| name.to_owned())
        .collect();
    Plan { archetypes, sparse, names, skipped, skipped_resources }
}

impl Plan<'_> {
    /// The rows of `table` whose entities have the sparse component
    /// `entry`, or `None` if `entry` is a table component.
    pub(crate) fn sparse_rows(&self, world: &World, table: &Archetype, entry: &ComponentEntry) -> Option<Vec<u32>> {
        if !entry.column.sparse {
            return None;
        }
        let &(id, _) = self.sparse.iter().find(|(_, e)| std::ptr::eq(*e, entry))?;
        let set = world.sparse_sets().get(id)?;
        let rows = world.table_entities(table).enumerate().filter(|&(_, entity)| set.contains(entity));
        Some(rows.map(|(row, _)| row as u32).collect())
    }
}

/// Writes `world` in `format`, its components named as `keys` says.
pub(crate) fn save<T>(
    world: &World,
    format: Format,
    keys: Keys,
    write: impl FnOnce(&SaveDocument<'_>) -> Result<T, String>,
) -> Result<Saved<T>, SaveError> {
    let registry = crate::model::registry::registry_of(world);
    let plan = plan(world, &registry);
    let document = SaveDocument { world, registry: &registry, plan: &plan, format, keys, error: RefCell::new(None) };
    let result = write(&document);
    if let Some(error) = document.error.into_inner() {
        return Err(error);
    }
    let data = result.map_err(|message| SaveError::Encode { format, message })?;
    Ok(Saved { data, skipped: plan.skipped, skipped_resources: plan.skipped_resources })
}

/// The whole save, written field by field from the world.
pub(crate) struct SaveDocument<'a> {
    world: &'a World,
    registry: &'a SerdeRegistry,
    plan: &'a Plan<'a>,
    format: Format,
    keys: Keys,
    /// The first component or resource that could not be written; the
    /// writer only gets a message.
    error: RefCell<Option<SaveError>>,
}

impl SaveDocument<'_> {
    fn fail<E: ser::Error>(&self, error: SaveError) -> E {
        let message = error.to_string();
        self.error.borrow_mut().get_or_insert(error);
        E::custom(message)
    }

    /// Checks that the format can hold `value` and load it back: JSON has
    /// no NaN or infinity, and loads limit how deep values nest.
    fn check(&self, value: &Value) -> Result<(), (String, String)> {
        match unwritable(value, self.format) {
            Some(problem) => Err(problem),
            None => Ok(()),
        }
    }
}

impl Serialize for SaveDocument<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut doc = serializer.serialize_struct("Save", 7)?;
        doc.serialize_field("format", FORMAT_TAG)?;
        let version = match self.keys {
            Keys::Names => VERSION,
            Keys::Columns => COLUMNS_VERSION,
        };
        doc.serialize_field("version", &version)?;
        doc.serialize_field("allocator", &Allocator::of(self.world))?;
        doc.serialize_field("components", &self.plan.names)?;
        if self.keys == Keys::Columns {
            doc.serialize_field("tables", &Tables(self))?;
        } else {
            doc.serialize_field("entities", &Entities(self))?;
        }
        doc.serialize_field("resources", &Resources(self))?;
        doc.serialize_field("skipped", &Skipped(&self.plan.skipped))?;
        doc.end()
    }
}

#[derive(Serialize)]
pub(crate) struct Allocator {
    generations: Vec<(u32, NonZeroU32)>,
    free: Vec<u32>,
}

impl Allocator {
    pub(crate) fn of(world: &World) -> Allocator {
        let (mut slots, free) = world.allocator_view();
        let mut generations: Vec<(u32, NonZeroU32)> = Vec::new();
        if let Some(mut current) = slots.next() {
            let mut count = 1;
            for generation in slots {
                if generation == current {
                    count += 1;
                } else {
                    generations.push((count, current));
                    (current, count) = (generation, 1);
                }
            }
            generations.push((count, current));
        }
        Allocator { generations, free: free.to_vec() }
    }
}

/// An entity handle as a map key: its text form in human-readable formats,
/// its bits in binary ones.
pub(crate) struct EntityKey(pub Entity);

impl Serialize for EntityKey {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if serializer.is_human_readable() {
            serializer.collect_str(&self.0)
        } else {
            serializer.serialize_u64(self.0.to_bits())
        }
    }
}

struct Entities<'a>(&'a SaveDocument<'a>);

impl Serialize for Entities<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let doc = self.0;
        let archetypes = doc.world.archetypes().as_slice();
        let count = doc.plan.archetypes.iter().map(|&(a, _)| archetypes[a].len()).sum();
        let mut map = serializer.serialize_map(Some(count))?;
        for (a, entries) in &doc.plan.archetypes {
            for entity in doc.world.table_entities(&archetypes[*a]) {
                map.serialize_entry(&EntityKey(entity), &Components { doc, entity, entries })?;
            }
        }
        map.end()
    }
}

struct Components<'a> {
    doc: &'a SaveDocument<'a>,
    entity: Entity,
    entries: &'a [(&'a ComponentEntry, u32)],
}

impl Serialize for Components<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // Text formats only: binary saves are written by `format/binary.rs`. With
        // sparse components the count is known only once written.
        let len = self.doc.plan.sparse.is_empty().then_some(self.entries.len());
        let mut map = serializer.serialize_map(len)?;
        for &(entry, _) in self.entries {
            let error = |field: String, message: String| SaveError::Component {
                entity: self.entity,
                component: entry.name.clone(),
                field,
                message,
            };
            match (entry.save)(self.doc.world, self.entity) {
                Some(Ok(value)) => {
                    if let Err((field, message)) = self.doc.check(&value) {
                        return Err(self.doc.fail(error(field, message)));
                    }
                    map.serialize_entry(&entry.name, &value)?;
                }
                Some(Err(e)) => return Err(self.doc.fail(error(String::new(), e.0))),
                None => {}
            }
        }
        map.end()
    }
}

/// An entity in a table of a columnar save: its index if its generation
/// is 1, else its text form (`"2v3"`).
pub(crate) struct TableEntity(pub Entity);

impl Serialize for TableEntity {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if self.0.generation() == 1 {
            serializer.serialize_u32(self.0.index())
        } else {
            serializer.collect_str(&self.0)
        }
    }
}

/// The tables of a columnar save.
struct Tables<'a>(&'a SaveDocument<'a>);

impl Serialize for Tables<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let doc = self.0;
        let archetypes = doc.world.archetypes().as_slice();
        serializer.collect_seq(doc.plan.archetypes.iter().map(|(a, entries)| Table {
            doc,
            table: &archetypes[*a],
            entries,
        }))
    }
}

/// One table of a columnar save.
struct Table<'a> {
    doc: &'a SaveDocument<'a>,
    table: &'a Archetype,
    entries: &'a [(&'a ComponentEntry, u32)],
}

impl Serialize for Table<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let (doc, table) = (self.doc, self.table);
        let entities: Vec<Entity> = doc.world.table_entities(table).collect();
        // Each column with the rows it covers (`None`: all); a sparse
        // component no entity here has is left out.
        let columns: Vec<(&ComponentEntry, Option<Vec<u32>>)> = self
            .entries
            .iter()
            .filter_map(|&(entry, _)| match doc.plan.sparse_rows(doc.world, table, entry) {
                None => Some((entry, None)),
                Some(rows) if rows.is_empty() => None,
                Some(rows) => Some((entry, Some(rows))),
            })
            .collect();
        let partial = columns.iter().any(|(_, rows)| rows.is_some());
        let mut out = serializer.serialize_struct("Table", 2 + usize::from(partial))?;
        out.serialize_field("entities", &Seq(entities.iter().map(|&e| TableEntity(e))))?;
        let values = columns.iter().map(|(entry, rows)| {
            let rows: Vec<u32> = rows.clone().unwrap_or_else(|| (0..entities.len() as u32).collect());
            (&entry.name, Column { doc, entry, entities: &entities, rows })
        });
        out.serialize_field("columns", &Map(values))?;
        if partial {
            let rows = columns.iter().filter_map(|(entry, rows)| Some((&entry.name, rows.as_ref()?)));
            out.serialize_field("rows", &Map(rows))?;
        }
        out.end()
    }
}

/// The values of one column of a columnar save, row by row.
struct Column<'a> {
    doc: &'a SaveDocument<'a>,
    entry: &'a ComponentEntry,
    entities: &'a [Entity],
    rows: Vec<u32>,
}

impl Serialize for Column<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.rows.len()))?;
        for &row in &self.rows {
            let entity = self.entities[row as usize];
            let error = |field: String, message: String| SaveError::Component {
                entity,
                component: self.entry.name.clone(),
                field,
                message,
            };
            match (self.entry.save)(self.doc.world, entity) {
                Some(Ok(value)) => {
                    if let Err((field, message)) = self.doc.check(&value) {
                        return Err(self.doc.fail(error(field, message)));
                    }
                    seq.serialize_element(&value)?;
                }
                Some(Err(e)) => return Err(self.doc.fail(error(String::new(), e.0))),
                None => unreachable!("the rows of a column have the component"),
            }
        }
        seq.end()
    }
}

/// Serializes the items of an iterator, once, as a sequence.
struct Seq<I>(I);

impl<I: Iterator<Item = T> + Clone, T: Serialize> Serialize for Seq<I> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.clone())
    }
}

/// Serializes the pairs of an iterator, once, as a map.
struct Map<I>(I);

impl<I: Iterator<Item = (K, V)> + Clone, K: Serialize, V: Serialize> Serialize for Map<I> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.0.clone())
    }
}

struct Resources<'a>(&'a SaveDocument<'a>);

impl Serialize for Resources<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let doc = self.0;
        let mut values = Vec::new();
        for entry in doc.registry.resources() {
            let error =
                |field: String, message: String| SaveError::Resource { resource: entry.name.clone(), field, message };
            match (entry.save)(doc.world) {
                Some(Ok(value)) => {
                    if let Err((field, message)) = doc.check(&value) {
                        return Err(doc.fail(error(field, message)));
                    }
                    values.push((&entry.name, value));
                }
                Some(Err(e)) => return Err(doc.fail(error(String::new(), e.0))),
                None => {}
            }
        }
        let mut map = serializer.serialize_map(Some(values.len()))?;
        for (name, value) in &values {
            map.serialize_entry(name, value)?;
        }
        map.end()
    }
}

/// The trees of the registered resources the world has, each checked for
/// `format`.
pub(crate) fn resource_trees<'r>(
    world: &World,
    registry: &'r SerdeRegistry,
    format: Format,
) -> Result<Vec<(&'r str, Value)>, SaveError> {
    let mut trees = Vec::new();
    for entry in registry.resources() {
        match (entry.save)(world) {
            Some(Ok(value)) => {
                if let Some((field, message)) = unwritable(&value, format) {
                    return Err(SaveError::Resource { resource: entry.name.clone(), field, message });
                }
                trees.push((entry.name.as_str(), value))
            }
            Some(Err(e)) => {
                return Err(SaveError::Resource { resource: entry.name.clone(), field: String::new(), message: e.0 })
            }
            None => {}
        }
    }
    Ok(trees)
}

/// Resources by name, as a save's `resources` field.
pub(crate) struct ResourceMap<'a>(pub &'a [(&'a str, Value)]);

impl Serialize for ResourceMap<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.0.iter().map(|(name, value)| (name, value)))
    }
}

/// The component types a save left out, as its `skipped` field.
pub(crate) struct Skipped<'a>(pub &'a [SkippedComponent]);

impl Serialize for Skipped<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Entry<'a> {
            component: &'a str,
            entities: u64,
        }
        serializer.collect_seq(self.0.iter().map(|s| Entry { component: &s.type_name, entities: s.entities as u64 }))
    }
}
