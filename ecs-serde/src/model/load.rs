//! The save document as read, and loading it through trees (model layer).
//!
//! Reading a save back: into a fresh world with every handle exactly as
//! saved, or into a populated world with new handles.
//!
//! Everything that can fail happens before the world is touched: the file
//! is parsed, every component and resource is built, and (for an exact
//! load) the allocator state is checked; only then are entities made.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::num::NonZeroU32;

use archetable_core::{AllocatorState, Entity, EntityBuilder, World};
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;

use crate::model::column::Boxed;
use crate::model::error::{strip_position, Format, LoadError};
use crate::model::from_value::{Context, EntityMapping, FromValueError};
use crate::model::registry::{ComponentEntry, ResourceEntry, SerdeRegistry};
use crate::model::save::{newest_version, reads_version, COLUMNS_VERSION, FORMAT_TAG};
use crate::model::value::{Limited, Value, ValueSeed};

/// The most slots a save may hold beyond its live and free entities. Such
/// slots are retired (their generation ran out after 2³² reuses), so a real
/// world has very few; the cap keeps a hostile file from claiming billions.
pub const MAX_RETIRED_SLOTS: u64 = 1 << 16;

/// Preallocate at most this many entries for a length read from a file.
const CAUTIOUS_CAPACITY: usize = 4096;

/// Where the entities of a save went when it was merged into a world.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EntityMap {
    map: HashMap<Entity, Entity>,
}

impl EntityMap {
    /// A handle that is never alive in any world (its index is one the
    /// allocator never hands out). Handles stored in components that named
    /// no entity of the save (already stale when it was written) become this
    /// when the save is merged into a world.
    pub const DANGLING: Entity = match Entity::from_bits((1 << 32) | u32::MAX as u64) {
        Some(entity) => entity,
        None => panic!("generation 1 is valid"),
    };

    pub(crate) fn from_pairs(pairs: impl Iterator<Item = (Entity, Entity)>) -> EntityMap {
        EntityMap { map: pairs.collect() }
    }

    /// The new handle of the entity that had `saved` in the save.
    pub fn get(&self, saved: Entity) -> Option<Entity> {
        self.map.get(&saved).copied()
    }

    /// Number of entities loaded.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether no entity was loaded.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Pairs of (handle in the save, handle in the world), in no order.
    pub fn iter(&self) -> impl Iterator<Item = (Entity, Entity)> + '_ {
        self.map.iter().map(|(&a, &b)| (a, b))
    }
}

// ---------------------------------------------------------------------------
// The document as read

/// The `format` and `version` of a save. Read again when a save fails to
/// parse, to tell a foreign or newer file from a broken one.
struct Header {
    format: String,
    version: u32,
}

/// Reads a [`Header`] from a document whose values may nest `L` levels:
/// the other fields are read as trees of the same limit and dropped (not
/// skipped by the format, whose own limit may need more stack).
struct HeaderOf<const L: usize>(Header);

impl<'de, const L: usize> Deserialize<'de> for HeaderOf<L> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V<const L: usize>;
        impl<'de, const L: usize> Visitor<'de> for V<L> {
            type Value = HeaderOf<L>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a save")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<HeaderOf<L>, A::Error> {
                let (mut format, mut version) = (None, None);
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "format" => format = Some(map.next_value()?),
                        "version" => version = Some(map.next_value()?),
                        // `entities` holds maps of maps of values;
                        // `tables` lists maps of maps of lists of values.
                        _ => drop(map.next_value_seed(ValueSeed::new(L).with_outer_levels(4))?),
                    }
                }
                let format = format.ok_or_else(|| de::Error::missing_field("format"))?;
                let version = version.ok_or_else(|| de::Error::missing_field("version"))?;
                Ok(HeaderOf(Header { format, version }))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<HeaderOf<L>, A::Error> {
                let format = seq.next_element()?.ok_or_else(|| de::Error::invalid_length(0, &self))?;
                let version = seq.next_element()?.ok_or_else(|| de::Error::invalid_length(1, &self))?;
                Ok(HeaderOf(Header { format, version }))
            }
        }
        deserializer.deserialize_struct("Save", &["format", "version"], V::<L>)
    }
}

/// A text (or version 1 binary) save as read; its values may nest `L`
/// levels.
///
/// Unknown fields are refused rather than skipped: the formats skip them
/// with their own nesting limits, whose stack needs are far above ours.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Document<const L: usize> {
    format: String,
    version: u32,
    allocator: Allocator,
    /// The component names the save uses; binary saves refer to them by
    /// index.
    #[serde(default)]
    components: Vec<String>,
    entities: EntityList<L>,
    #[serde(default)]
    resources: NamedValues<L>,
    #[serde(default)]
    #[allow(dead_code)]
    skipped: Vec<SkippedEntry>,
    /// The format it was read from.
    #[serde(skip)]
    read_from: Option<Format>,
}

/// A JSON or RON save as read: entity by entity (layout versions 1 and 2)
/// or table by table (version 3). Binary saves of version 1 are read as
/// [`Document`] directly: postcard's structs are positional.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename = "Document")]
struct TextDocument<const L: usize> {
    format: String,
    version: u32,
    allocator: Allocator,
    #[serde(default)]
    components: Vec<String>,
    #[serde(default)]
    entities: Given<EntityList<L>>,
    #[serde(default)]
    tables: Given<Vec<Table<L>>>,
    #[serde(default)]
    resources: NamedValues<L>,
    #[serde(default)]
    skipped: Vec<SkippedEntry>,
}

/// A field that may be left out, without RON's `Some(..)` around it.
struct Given<T>(Option<T>);

impl<T> Default for Given<T> {
    fn default() -> Self {
        Given(None)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Given<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        T::deserialize(deserializer).map(|value| Given(Some(value)))
    }
}

/// One table of a columnar save (layout version 3): its entities, one
/// column of values per component, and the rows of the columns that cover
/// only some entities. Checked as read: every column as long as the rows it
/// covers, rows in order and in the table.
struct Table<const L: usize> {
    entities: Vec<Entity>,
    columns: Vec<(String, Vec<Value>)>,
    rows: Vec<(String, Vec<u32>)>,
}

/// An entity of a table: its index (generation 1) or its handle's text.
struct TableEntity(Entity);

impl<'de> Deserialize<'de> for TableEntity {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = TableEntity;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an entity index, or a handle such as \"3v2\"")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<TableEntity, E> {
                Entity::parse(v).map(TableEntity).ok_or_else(|| E::invalid_value(de::Unexpected::Str(v), &self))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<TableEntity, E> {
                u32::try_from(v)
                    .ok()
                    .and_then(|index| Entity::from_bits((1 << 32) | u64::from(index)))
                    .map(TableEntity)
                    .ok_or_else(|| E::invalid_value(de::Unexpected::Unsigned(v), &self))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<TableEntity, E> {
                match u64::try_from(v) {
                    Ok(v) => self.visit_u64(v),
                    Err(_) => Err(E::invalid_value(de::Unexpected::Signed(v), &self)),
                }
            }
        }
        deserializer.deserialize_any(V)
    }
}

/// A table's entities.
struct TableEntities(Vec<Entity>);

impl<'de> Deserialize<'de> for TableEntities {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = TableEntities;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a list of entities")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<TableEntities, A::Error> {
                let mut list = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(CAUTIOUS_CAPACITY));
                while let Some(TableEntity(entity)) = seq.next_element()? {
                    list.push(entity);
                }
                Ok(TableEntities(list))
            }
        }
        deserializer.deserialize_seq(V)
    }
}

/// A table's columns: names, each with its values (that may nest `L`
/// levels).
struct Columns<const L: usize>(Vec<(String, Vec<Value>)>);

impl<'de, const L: usize> Deserialize<'de> for Columns<L> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Values<const L: usize>(Vec<Value>);
        impl<'de, const L: usize> Deserialize<'de> for Values<L> {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                struct V<const L: usize>;
                impl<'de, const L: usize> Visitor<'de> for V<L> {
                    type Value = Values<L>;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str("a list of component values")
                    }
                    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Values<L>, A::Error> {
                        let mut list = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(CAUTIOUS_CAPACITY));
                        while let Some(Limited(value)) = seq.next_element::<Limited<L>>()? {
                            list.push(value);
                        }
                        Ok(Values(list))
                    }
                }
                deserializer.deserialize_seq(V::<L>)
            }
        }
        struct V<const L: usize>;
        impl<'de, const L: usize> Visitor<'de> for V<L> {
            type Value = Columns<L>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map from component names to lists of values")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Columns<L>, A::Error> {
                let mut list = Vec::with_capacity(map.size_hint().unwrap_or(0).min(CAUTIOUS_CAPACITY));
                while let Some(name) = map.next_key::<String>()? {
                    list.push((name, map.next_value::<Values<L>>()?.0));
                }
                Ok(Columns(list))
            }
        }
        deserializer.deserialize_map(V::<L>)
    }
}

/// The rows each partial column covers.
struct Rows(Vec<(String, Vec<u32>)>);

impl<'de> Deserialize<'de> for Rows {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Rows;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map from component names to lists of rows")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Rows, A::Error> {
                let mut list = Vec::with_capacity(map.size_hint().unwrap_or(0).min(CAUTIOUS_CAPACITY));
                while let Some(name) = map.next_key::<String>()? {
                    list.push((name, map.next_value()?));
                }
                Ok(Rows(list))
            }
        }
        deserializer.deserialize_map(V)
    }
}

impl<'de, const L: usize> Deserialize<'de> for Table<L> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        const FIELDS: &[&str] = &["entities", "columns", "rows"];
        struct V<const L: usize>;
        impl<'de, const L: usize> Visitor<'de> for V<L> {
            type Value = Table<L>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a table: its entities, columns and rows")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Table<L>, A::Error> {
                let (mut entities, mut columns, mut rows) = (None, None, None);
                while let Some(key) = map.next_key::<String>()? {
                    let fresh = match key.as_str() {
                        "entities" => entities.replace(map.next_value::<TableEntities>()?.0).is_none(),
                        "columns" => columns.replace(map.next_value::<Columns<L>>()?.0).is_none(),
                        "rows" => rows.replace(map.next_value::<Rows>()?.0).is_none(),
                        other => return Err(de::Error::unknown_field(other, FIELDS)),
                    };
                    if !fresh {
                        return Err(de::Error::custom(format_args!("duplicate field `{key}`")));
                    }
                }
                let entities: Vec<Entity> = entities.ok_or_else(|| de::Error::missing_field("entities"))?;
                let (columns, rows) = (columns.unwrap_or_default(), rows.unwrap_or_default());
                table_problem(&entities, &columns, &rows)
                    .map_or(Ok(Table { entities, columns, rows }), |problem| Err(de::Error::custom(problem)))
            }
        }
        deserializer.deserialize_struct("Table", FIELDS, V::<L>)
    }
}

/// What is wrong with the shape of a table, if anything: a column longer
/// or shorter than the rows it covers, rows out of order or past the
/// table, rows of a component without a column.
pub(crate) fn table_problem(
    entities: &[Entity],
    columns: &[(String, Vec<Value>)],
    rows: &[(String, Vec<u32>)],
) -> Option<String> {
    for (name, rows) in rows {
        if !columns.iter().any(|(n, _)| n == name) {
            return Some(format!("rows are listed for `{name}`, which has no column"));
        }
        if rows.windows(2).any(|pair| pair[0] >= pair[1]) {
            return Some(format!("the rows of `{name}` are not in increasing order"));
        }
        if let Some(&last) = rows.last().filter(|&&last| last as usize >= entities.len()) {
            return Some(format!("the rows of `{name}` reach row {last} of a table of {}", entities.len()));
        }
    }
    for (name, values) in columns {
        // The first list of rows of that name (a second is refused with
        // the column listed twice, entity by entity).
        let covered = rows.iter().find(|(n, _)| n == name).map_or(entities.len(), |(_, rows)| rows.len());
        if values.len() != covered {
            return Some(format!("the column of `{name}` holds {} values for {covered} rows", values.len()));
        }
    }
    None
}

impl<const L: usize> TextDocument<L> {
    /// The document entity by entity: a columnar save's tables turned
    /// into each entity's list of components, in table order.
    fn into_document(self, format: Format) -> Result<Document<L>, LoadError> {
        let entities = match (self.version, self.entities.0, self.tables.0) {
            (COLUMNS_VERSION, None, Some(tables)) => EntityList(entities_of_tables(tables)),
            (COLUMNS_VERSION, _, _) => {
                return Err(misplaced(format, "a version 3 save lists `tables`, not `entities`"))
            }
            (_, Some(entities), None) => entities,
            (version, _, _) => {
                return Err(misplaced(format, &format!("a version {version} save lists `entities`, not `tables`")))
            }
        };
        Ok(Document {
            format: self.format,
            version: self.version,
            allocator: self.allocator,
            components: self.components,
            entities,
            resources: self.resources,
            skipped: self.skipped,
            read_from: Some(format),
        })
    }
}

fn misplaced(format: Format, message: &str) -> LoadError {
    LoadError::Syntax { format, line: 1, column: 1, message: message.to_owned() }
}

/// Each entity of `tables` with its components, table by table.
fn entities_of_tables<const L: usize>(tables: Vec<Table<L>>) -> Vec<(Entity, Components<L>)> {
    let mut list = Vec::with_capacity(tables.iter().map(|t| t.entities.len()).sum());
    for Table { entities, columns, rows } in tables {
        let start = list.len();
        list.extend(entities.into_iter().map(|e| (e, Components(Vec::with_capacity(columns.len())))));
        let table = &mut list[start..];
        for (name, values) in columns {
            match rows.iter().find(|(n, _)| *n == name) {
                Some((_, rows)) => {
                    for (&row, value) in rows.iter().zip(values) {
                        table[row as usize].1 .0.push((ComponentKey::Name(name.clone()), value));
                    }
                }
                None => {
                    for ((_, components), value) in table.iter_mut().zip(values) {
                        components.0.push((ComponentKey::Name(name.clone()), value));
                    }
                }
            }
        }
    }
    list
}

/// An entry of a save's `skipped` list (read, to be checked, and dropped).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub(crate) struct SkippedEntry {
    component: String,
    entities: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Allocator {
    generations: Vec<(u32, NonZeroU32)>,
    free: Vec<u32>,
}

/// Entities and their components, in file order.
struct EntityList<const L: usize>(Vec<(Entity, Components<L>)>);

/// A component's name, or its index in the document's list of component
/// names (binary saves of version 1, compact RON saves of version 2).
enum ComponentKey {
    Name(String),
    Index(u32),
}

/// One entity's components, in file order.
struct Components<const L: usize>(Vec<(ComponentKey, Value)>);

impl<'de> Deserialize<'de> for ComponentKey {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = ComponentKey;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a component name, or its index in `components`")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<ComponentKey, E> {
                Ok(ComponentKey::Name(v.to_owned()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<ComponentKey, E> {
                Ok(ComponentKey::Name(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<ComponentKey, E> {
                u32::try_from(v)
                    .map(ComponentKey::Index)
                    .map_err(|_| E::invalid_value(de::Unexpected::Unsigned(v), &self))
            }
        }
        if deserializer.is_human_readable() {
            // A string, or (in RON) a number.
            deserializer.deserialize_any(V)
        } else {
            u32::deserialize(deserializer).map(ComponentKey::Index)
        }
    }
}

impl<'de, const L: usize> Deserialize<'de> for Components<L> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V<const L: usize>;
        impl<'de, const L: usize> Visitor<'de> for V<L> {
            type Value = Components<L>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map from component names to values")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Components<L>, A::Error> {
                let mut list = Vec::with_capacity(map.size_hint().unwrap_or(0).min(CAUTIOUS_CAPACITY));
                while let Some(key) = map.next_key::<ComponentKey>()? {
                    list.push((key, map.next_value::<Limited<L>>()?.0));
                }
                Ok(Components(list))
            }
        }
        deserializer.deserialize_map(V::<L>)
    }
}

/// Names and values (that may nest `L` levels), in file order.
pub(crate) struct NamedValues<const L: usize>(Vec<(String, Value)>);

impl<const L: usize> Default for NamedValues<L> {
    fn default() -> Self {
        NamedValues(Vec::new())
    }
}

/// Reads an entity handle written by `save::EntityKey`.
struct EntityKey(Entity);

impl<'de> Deserialize<'de> for EntityKey {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = EntityKey;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an entity handle such as \"3v1\"")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<EntityKey, E> {
                Entity::parse(v).map(EntityKey).ok_or_else(|| E::invalid_value(de::Unexpected::Str(v), &self))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<EntityKey, E> {
                Entity::from_bits(v).map(EntityKey).ok_or_else(|| E::invalid_value(de::Unexpected::Unsigned(v), &self))
            }
        }
        if deserializer.is_human_readable() {
            deserializer.deserialize_str(V)
        } else {
            deserializer.deserialize_u64(V)
        }
    }
}

impl<'de, const L: usize> Deserialize<'de> for EntityList<L> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V<const L: usize>;
        impl<'de, const L: usize> Visitor<'de> for V<L> {
            type Value = EntityList<L>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map from entity handles to components")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<EntityList<L>, A::Error> {
                let mut list = Vec::with_capacity(map.size_hint().unwrap_or(0).min(CAUTIOUS_CAPACITY));
                while let Some(EntityKey(entity)) = map.next_key()? {
                    list.push((entity, map.next_value()?));
                }
                Ok(EntityList(list))
            }
        }
        deserializer.deserialize_map(V::<L>)
    }
}

impl<'de, const L: usize> Deserialize<'de> for NamedValues<L> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V<const L: usize>;
        impl<'de, const L: usize> Visitor<'de> for V<L> {
            type Value = NamedValues<L>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map from names to values")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<NamedValues<L>, A::Error> {
                let mut list = Vec::with_capacity(map.size_hint().unwrap_or(0).min(CAUTIOUS_CAPACITY));
                while let Some(name) = map.next_key::<String>()? {
                    list.push((name, map.next_value::<Limited<L>>()?.0));
                }
                Ok(NamedValues(list))
            }
        }
        deserializer.deserialize_map(V::<L>)
    }
}

/// Parses a save whose values may nest `L` levels, failing on syntax and
/// on a foreign or newer file.
pub(crate) fn parse<const L: usize>(format: Format, data: &[u8]) -> Result<Document<L>, LoadError> {
    let checked = |document: TextDocument<L>| {
        let header = Header { format: document.format.clone(), version: document.version };
        match header_error(format, Some(header)) {
            Some(error) => Err(error),
            None => document.into_document(format),
        }
    };
    let document = match format {
        Format::Json => {
            let text = std::str::from_utf8(data).map_err(|e| utf8_error(format, data, e))?;
            serde_json::from_str::<TextDocument<L>>(text)
                .map_err(|e| {
                    header_error(format, serde_json::from_str::<HeaderOf<L>>(text).ok().map(|h| h.0)).unwrap_or_else(
                        || LoadError::Syntax {
                            format,
                            line: e.line(),
                            column: e.column(),
                            message: strip_position(&e.to_string()),
                        },
                    )
                })
                .and_then(checked)?
        }
        Format::Ron => {
            let text = std::str::from_utf8(data).map_err(|e| utf8_error(format, data, e))?;
            ron::from_str::<TextDocument<L>>(text)
                .map_err(|e| {
                    header_error(format, ron::from_str::<HeaderOf<L>>(text).ok().map(|h| h.0)).unwrap_or_else(|| {
                        LoadError::Syntax {
                            format,
                            line: e.span.start.line,
                            column: e.span.start.col,
                            message: e.code.to_string(),
                        }
                    })
                })
                .and_then(checked)?
        }
        Format::Binary => postcard::from_bytes::<Document<L>>(data).map_err(|e| {
            let header = postcard::take_from_bytes::<HeaderOf<L>>(data).ok().map(|(h, _)| h.0);
            header_error(format, header).unwrap_or_else(|| LoadError::Binary { message: e.to_string() })
        })?,
    };
    let mut document = document;
    if let Some(error) =
        header_error(format, Some(Header { format: document.format.clone(), version: document.version }))
    {
        return Err(error);
    }
    document.read_from = Some(format);
    Ok(document)
}

fn header_error(format: Format, header: Option<Header>) -> Option<LoadError> {
    let header = header?;
    if header.format != FORMAT_TAG {
        Some(LoadError::NotASave { found: header.format })
    } else if !reads_version(format, header.version) {
        Some(LoadError::UnsupportedVersion { found: header.version, supported: newest_version(format) })
    } else {
        None
    }
}

fn utf8_error(format: Format, data: &[u8], e: std::str::Utf8Error) -> LoadError {
    let before = &data[..e.valid_up_to()];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let line_start = before.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let column = String::from_utf8_lossy(&before[line_start..]).chars().count() + 1;
    LoadError::Syntax { format, line, column, message: "invalid UTF-8".into() }
}

// ---------------------------------------------------------------------------
// Building the world

/// How the entities of a save enter the world.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Into an empty world, every handle as saved, allocator included.
    Exact,
    /// Beside the world's own entities, with new handles.
    Merge,
}

/// One component, built and waiting to be inserted.
struct Pending<'r> {
    entry: &'r ComponentEntry,
    value: Boxed,
    /// Whether its value names entities (and so must be rebuilt once the
    /// new handles are known, when merging).
    has_entities: bool,
    source: &'r Value,
}

/// The saved handles, sorted; an error if one is listed twice.
pub(crate) fn sorted_unique(saved: &[Entity]) -> Result<Vec<Entity>, LoadError> {
    let mut sorted = saved.to_vec();
    sorted.sort_unstable();
    match sorted.windows(2).find(|pair| pair[0] == pair[1]) {
        Some(pair) => Err(LoadError::DuplicateEntity { entity: pair[0] }),
        None => Ok(sorted),
    }
}

/// Loads `document` into `world`; returns the handle each saved entity got,
/// in file order. On error the world is unchanged.
pub(crate) fn load<const L: usize>(
    world: &mut World,
    document: &Document<L>,
    mode: Mode,
) -> Result<Vec<Entity>, LoadError> {
    let registry = crate::model::registry::registry_of(world);
    let saved: Vec<Entity> = document.entities.0.iter().map(|(e, _)| *e).collect();
    let sorted = sorted_unique(&saved)?;
    // Building never sees the final handles when merging: keep saved handles
    // (those of the save) and send the others to `DANGLING`, then rebuild
    // the few values that hold handles once the new ones exist.
    let keep_saved = |e: Entity| if sorted.binary_search(&e).is_ok() { e } else { EntityMap::DANGLING };
    let cx = match mode {
        Mode::Exact => Context::new(EntityMapping::Keep),
        Mode::Merge => Context::new(EntityMapping::Map(&keep_saved)),
    };
    let mut resources = build_resources(&registry, &document.resources, &cx)?;
    // The entry of each name in the document's table, if registered.
    let table: Vec<Option<&ComponentEntry>> = document.components.iter().map(|n| registry.component(n)).collect();
    let mut pending: Vec<Vec<Pending<'_>>> = Vec::with_capacity(saved.len());
    for (entity, components) in &document.entities.0 {
        let mut built: Vec<Pending<'_>> = Vec::with_capacity(components.0.len());
        for (key, value) in &components.0 {
            let entry = match key {
                ComponentKey::Name(name) => registry.component(name).ok_or_else(|| unknown(&registry, *entity, name)),
                ComponentKey::Index(i) => match document.components.get(*i as usize) {
                    Some(name) => table[*i as usize].ok_or_else(|| unknown(&registry, *entity, name)),
                    None if document.read_from == Some(Format::Binary) => Err(LoadError::Binary {
                        message: format!("entity {entity} names component {i} of {}", document.components.len()),
                    }),
                    None => Err(unknown(&registry, *entity, &i.to_string())),
                },
            }?;
            // Few components per entity: a scan beats hashing.
            if built.iter().any(|p| std::ptr::eq(p.entry, entry)) {
                return Err(LoadError::DuplicateComponent { entity: *entity, component: entry.name.clone() });
            }
            let value_box = (entry.load)(value, &cx).map_err(|e| component_error(*entity, &entry.name, e))?;
            built.push(Pending { entry, value: value_box, has_entities: cx.take_met_entity(), source: value });
        }
        pending.push(built);
    }

    // Nothing has touched the world yet. A merge learns the handles the
    // entities will get, rebuilds the values that name entities with them
    // (an error or a panicking `Deserialize` there leaves the world as it
    // was), and only then places everything, in one step.
    let handles: Vec<Entity> = match mode {
        Mode::Exact => saved.clone(),
        Mode::Merge => {
            let handles = world.peek_entities(saved.len());
            let map: HashMap<Entity, Entity> = saved.iter().copied().zip(handles.iter().copied()).collect();
            let remap = |e: Entity| map.get(&e).copied().unwrap_or(EntityMap::DANGLING);
            let cx = Context::new(EntityMapping::Map(&remap));
            rebuild(&mut pending, &mut resources, &saved, &cx)?;
            handles
        }
    };
    let mut builders: Vec<EntityBuilder> = pending
        .into_iter()
        .map(|components| {
            let mut builder = EntityBuilder::new();
            for Pending { entry, value, .. } in components {
                (entry.add)(&mut builder, value);
            }
            builder
        })
        .collect();
    let state = match mode {
        Mode::Exact => Some(allocator_state(&document.allocator, saved.len())?),
        Mode::Merge => None,
    };
    place(world, &handles, &mut builders, state.as_ref().map(|state| (state, &saved[..])))?;
    for PendingResource { entry, value, .. } in resources {
        (entry.insert)(world, value);
    }
    Ok(handles)
}

/// Puts loaded entities into `world` as one step: `builders[i]` at
/// `handles[i]`. An exact load (into an empty world) first restores the
/// allocator `state`, making the entities of `order` (the same handles, in
/// the order they should leave the empty table) live; a merge spawns them,
/// `handles` being what the world's next spawns get. Every entity is
/// complete before any hook runs, and hooks see the whole load; if one
/// panics, the entities go again, the allocator included, and the panic
/// goes on.
pub(crate) fn place(
    world: &mut World,
    handles: &[Entity],
    builders: &mut [EntityBuilder],
    exact: Option<(&AllocatorState, &[Entity])>,
) -> Result<(), LoadError> {
    world.all_or_nothing(|world| match exact {
        Some((state, order)) => {
            world.restore_allocator_state(state, order).map_err(LoadError::Allocator)?;
            // Every handle was just made live, and no hook has run yet.
            world.insert_built_batch(handles, builders).expect("restored entities are live");
            Ok(())
        }
        None => {
            let spawned = world.spawn_built_batch(builders);
            debug_assert_eq!(spawned, handles, "a merge spawns at the handles it peeked");
            Ok(())
        }
    })
}

fn unknown(registry: &SerdeRegistry, entity: Entity, name: &str) -> LoadError {
    LoadError::UnknownComponent { entity, component: name.to_owned(), suggestion: registry.suggest_component(name) }
}

/// The [`EntityMap`] of a merge: saved handles in file order, new ones.
pub(crate) fn entity_map<const L: usize>(document: &Document<L>, handles: Vec<Entity>) -> EntityMap {
    EntityMap { map: document.entities.0.iter().map(|(e, _)| *e).zip(handles).collect() }
}

/// Rebuilds the values that hold entity handles with the final mapping.
fn rebuild(
    pending: &mut [Vec<Pending<'_>>],
    resources: &mut [PendingResource<'_>],
    saved: &[Entity],
    cx: &Context<'_>,
) -> Result<(), LoadError> {
    for (components, &entity) in pending.iter_mut().zip(saved) {
        for p in components.iter_mut().filter(|p| p.has_entities) {
            p.value = (p.entry.load)(p.source, cx).map_err(|e| component_error(entity, &p.entry.name, e))?;
        }
    }
    rebuild_resources(resources, cx)
}

/// Rebuilds the resources that hold entity handles with the final mapping.
pub(crate) fn rebuild_resources(resources: &mut [PendingResource<'_>], cx: &Context<'_>) -> Result<(), LoadError> {
    for r in resources.iter_mut().filter(|r| r.has_entities) {
        r.value = (r.entry.load)(r.source, cx).map_err(|e| resource_error(&r.entry.name, e))?;
    }
    Ok(())
}

/// One resource, built and waiting to be inserted.
pub(crate) struct PendingResource<'r> {
    pub entry: &'r ResourceEntry,
    pub value: Boxed,
    has_entities: bool,
    source: &'r Value,
}

pub(crate) fn build_resources<'r, const L: usize>(
    registry: &'r SerdeRegistry,
    resources: &'r NamedValues<L>,
    cx: &Context<'_>,
) -> Result<Vec<PendingResource<'r>>, LoadError> {
    let mut built = Vec::with_capacity(resources.0.len());
    let mut names = HashSet::new();
    for (name, value) in &resources.0 {
        let entry = registry.resource(name).ok_or_else(|| LoadError::UnknownResource {
            resource: name.clone(),
            suggestion: registry.suggest_resource(name),
        })?;
        if !names.insert(name.as_str()) {
            return Err(LoadError::DuplicateResource { resource: name.clone() });
        }
        let built_value = (entry.load)(value, cx).map_err(|e| resource_error(name, e))?;
        built.push(PendingResource { entry, value: built_value, has_entities: cx.take_met_entity(), source: value });
    }
    Ok(built)
}

fn resource_error(resource: &str, e: FromValueError) -> LoadError {
    LoadError::Resource { resource: resource.to_owned(), field: e.path(), message: e.message }
}

fn component_error(entity: Entity, component: &str, e: FromValueError) -> LoadError {
    LoadError::Component { entity, component: component.to_owned(), field: e.path(), message: e.message }
}

/// Expands the saved allocator, refusing more slots than the save's
/// entities and free list can account for.
pub(crate) fn allocator_state(allocator: &Allocator, live: usize) -> Result<AllocatorState, LoadError> {
    let slots: u64 = allocator.generations.iter().map(|&(count, _)| u64::from(count)).sum();
    let limit = live as u64 + allocator.free.len() as u64 + MAX_RETIRED_SLOTS;
    if slots > limit {
        return Err(LoadError::TooManySlots { slots, limit });
    }
    let mut generations = Vec::with_capacity(slots as usize);
    for &(count, generation) in &allocator.generations {
        generations.extend(std::iter::repeat_n(generation, count as usize));
    }
    Ok(AllocatorState { generations, free: allocator.free.clone() })
}

#[cfg(test)]
mod tests {
    use archetable::Component;
    use serde::Serialize;

    use crate::{LoadError, SerdeWorldExt};

    #[derive(Component, serde::Serialize, serde::Deserialize, Default)]
    struct Health(u32);

    /// The binary layout, written by hand to make saves the writer never
    /// would.
    #[derive(Serialize)]
    struct RawSave {
        format: &'static str,
        version: u32,
        allocator: (Vec<(u32, u32)>, Vec<u32>),
        components: Vec<&'static str>,
        entities: Vec<(u64, Vec<(u32, Tagged)>)>,
        resources: Vec<(String, Tagged)>,
        skipped: Vec<()>,
    }

    /// The first tags of a binary value.
    #[derive(Serialize)]
    #[allow(dead_code)]
    enum Tagged {
        Unit,
        Bool(bool),
        I64(i64),
        U64(u64),
    }

    fn raw(entities: Vec<(u64, Vec<(u32, Tagged)>)>) -> Vec<u8> {
        let raw = RawSave {
            format: "ecs-save",
            version: 1,
            allocator: (vec![(1, 1)], vec![]),
            components: vec!["Health"],
            entities,
            resources: vec![],
            skipped: vec![],
        };
        // Maps and sequences share postcard's layout: a length, then items.
        postcard::to_allocvec(&raw).unwrap()
    }

    #[test]
    fn hand_written_binary_loads() {
        let mut world = archetable_core::World::new();
        world.register_serde::<Health>("Health");
        let bytes = raw(vec![(1 << 32, vec![(0, Tagged::U64(7))])]);
        let copy = archetable_core::World::load_binary(&world.serde_registry(), &bytes).unwrap();
        let e = archetable_core::Entity::from_bits(1 << 32).unwrap();
        assert_eq!(copy.get::<Health>(e).map(|h| h.0), Some(7));
    }

    #[test]
    fn a_component_index_past_the_list_is_refused() {
        let mut world = archetable_core::World::new();
        world.register_serde::<Health>("Health");
        let bytes = raw(vec![(1 << 32, vec![(3, Tagged::U64(7))])]);
        assert_eq!(
            world.load_into_binary(&bytes).unwrap_err(),
            LoadError::Binary { message: "entity 0v1 names component 3 of 1".into() }
        );
        assert!(world.is_empty());
    }

    #[test]
    fn hostile_inputs_fail_cleanly() {
        let mut world = archetable_core::World::new();
        world.register_serde::<Health>("Health");
        let registry = world.serde_registry();
        // Claimed lengths far past the input.
        let mut huge = raw(vec![]);
        let at = huge.len() - 3; // the entity count, before resources and skipped
        huge[at] = 0xff;
        huge.truncate(at + 1);
        huge.extend_from_slice(&[0xff, 0xff, 0xff, 0x0f]);
        assert!(matches!(archetable_core::World::load_binary(&registry, &huge), Err(LoadError::Binary { .. })));
        // Nesting far past the limit, in every format.
        let deep_json = format!("{{\"format\": \"ecs-save\", \"x\": {}", "[".repeat(50_000));
        assert!(archetable_core::World::load_json(&registry, &deep_json).is_err());
        let deep_ron = format!("(format: \"ecs-save\", x: {}", "[".repeat(50_000));
        assert!(archetable_core::World::load_ron(&registry, &deep_ron).is_err());
        let mut deep_binary = raw(vec![(1 << 32, vec![])]);
        deep_binary.truncate(deep_binary.len() - 3);
        deep_binary.extend_from_slice(&[1, 0]);
        deep_binary.extend(std::iter::repeat_n(10u8, 100_000)); // `Some(Some(..`
        assert!(archetable_core::World::load_binary(&registry, &deep_binary).is_err());
        assert!(world.load_into_binary(&deep_binary).is_err());
        assert!(world.is_empty());
    }
}
