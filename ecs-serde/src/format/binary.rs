//! Binary saves and loads (format layer).
//!
//! The binary save (postcard), version 2: column by column, so each
//! component name is written once per table and each value straight from
//! its type, without a tree in between.
//!
//! ```text
//! "ecs-save", 2,
//! allocator: (generations: [(count, generation), ..], free: [index, ..]),
//! components: ["Position", ..],
//! tables: count, then per table:
//!     entities: count, then per entity (index - previous index, generation)
//!     columns: count, then per column
//!         (component: index in `components`, flags: u8, bytes: length),
//!         then, if flag 2 is set, a bitmap of the rows that have a value
//!         (one bit per row, low bit first), then the values back to back:
//!         typed, or `Value` trees if flag 1 is set
//! resources: { name: Value tree, .. },
//! skipped: [(type name, entities), ..]
//! ```
//!
//! Components in sparse storage are written with the bitmap: in a table,
//! only the entities that have one have a value. Loading reads and checks
//! everything, and builds every value, before the world is touched.
//! Version 1 saves (one tree per value, keyed by entity) are still read, by
//! the loader the text formats use.

use std::cell::Cell;
use std::num::NonZeroU32;

use archetable_core::{Entity, World};
use serde::de::DeserializeSeed;

use crate::model::column::{append, ReadColumn, PREALLOCATE_BYTES};
use crate::model::depth::{too_deep, MAX_DEPTH};
use crate::model::error::{Format, LoadError, SaveError};
use crate::model::from_value::{Context, EntityMapping, FromValueError};
use crate::model::load::{self, EntityMap, Mode, NamedValues};
use crate::model::place::{self, Arrival, LoadedTable};
use crate::model::registry::{ComponentEntry, SerdeRegistry};
use crate::model::save::{self, Saved, FORMAT_TAG};
use crate::model::value::ValueSeed;

/// The binary layout version this build writes.
pub(crate) const BINARY_VERSION: u32 = 2;

/// Column flag: the values are `Value` trees.
const TREES: u8 = 1;
/// Column flag: a bitmap of the rows with a value comes first.
const PARTIAL: u8 = 2;

// ---------------------------------------------------------------------------
// Writing

/// Writes `world` as a version 2 binary save, table by table, each
/// column's values straight into the output.
pub(crate) fn save(world: &World) -> Result<Saved<Vec<u8>>, SaveError> {
    let registry = crate::model::registry::registry_of(world);
    let plan = save::plan(world, &registry);
    let archetypes = world.archetypes().as_slice();
    // Room for about what the save takes: typed values tend to take no
    // more bytes than they do in memory, and entities two or three.
    let guess: usize = plan
        .archetypes
        .iter()
        .map(|(a, _)| {
            let table = &archetypes[*a];
            let row: usize = table.components().iter().map(|&id| world.components().info(id).layout().size()).sum();
            table.len().saturating_mul(row + 3)
        })
        .sum();
    let mut out = Vec::with_capacity(guess.min(PREALLOCATE_BYTES) + 64);
    let encode = |e: postcard::Error| SaveError::Encode { format: Format::Binary, message: e.to_string() };
    append(&(FORMAT_TAG, BINARY_VERSION), &mut out).map_err(encode)?;
    append(&save::Allocator::of(world), &mut out).map_err(encode)?;
    append(&plan.names, &mut out).map_err(encode)?;
    push_varint(&mut out, plan.archetypes.len() as u64);
    for (a, entries) in &plan.archetypes {
        let table = &archetypes[*a];
        push_varint(&mut out, table.len() as u64);
        let mut previous = 0i64;
        out.reserve(2 * table.len());
        for entity in world.table_entities(table) {
            let index = i64::from(entity.index());
            let delta = index - previous;
            let (step, generation) = (((delta << 1) ^ (delta >> 63)) as u64, entity.generation());
            if step < 0x80 && generation < 0x80 {
                // The usual step: two one-byte varints.
                out.extend_from_slice(&[step as u8, generation as u8]);
            } else {
                push_varint(&mut out, step);
                push_varint(&mut out, u64::from(generation));
            }
            previous = index;
        }
        // A sparse component's column lists the rows that have one; one
        // that no entity here has is left out.
        let columns: Vec<_> = entries
            .iter()
            .filter_map(|&(entry, name)| match plan.sparse_rows(world, table, entry) {
                None => Some((entry, name, None)),
                Some(rows) if rows.is_empty() => None,
                Some(rows) => Some((entry, name, Some(rows))),
            })
            .collect();
        push_varint(&mut out, columns.len() as u64);
        for (entry, name, rows) in &columns {
            push_varint(&mut out, u64::from(*name));
            // The flags and the length of the values follow; the values
            // are written first, into the room left for them.
            let flag = out.len();
            let room = varint_len((table.len() as u64).saturating_mul(8));
            out.resize(flag + 1 + room, 0);
            if let Some(rows) = rows {
                let bitmap = out.len();
                out.resize(bitmap + table.len().div_ceil(8), 0);
                for &row in rows {
                    out[bitmap + row as usize / 8] |= 1 << (row % 8);
                }
            }
            let trees = (entry.column.write)(world, table, rows.as_deref(), &entry.typed, &mut out).map_err(
                |(entity, field, message)| SaveError::Component {
                    entity,
                    component: entry.name.clone(),
                    field,
                    message,
                },
            )?;
            let values = out.len() - (flag + 1 + room);
            out[flag] = u8::from(trees) | if rows.is_some() { PARTIAL } else { 0 };
            let mut len = Vec::with_capacity(10);
            push_varint(&mut len, values as u64);
            if len.len() == room {
                out[flag + 1..flag + 1 + room].copy_from_slice(&len);
            } else {
                // A column far from its guessed size: move its values.
                out.splice(flag + 1..flag + 1 + room, len);
            }
        }
    }
    let resources = save::resource_trees(world, &registry, Format::Binary)?;
    append(&save::ResourceMap(&resources), &mut out).map_err(encode)?;
    let skipped: Vec<(&str, u64)> = plan.skipped.iter().map(|s| (s.type_name.as_str(), s.entities as u64)).collect();
    append(&skipped, &mut out).map_err(encode)?;
    Ok(Saved { data: out, skipped: plan.skipped, skipped_resources: plan.skipped_resources })
}

/// Appends `value` as a postcard varint (7 bits a byte, low bits first).
#[inline]
fn push_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push(value as u8 | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// The bytes of `value` as a varint.
fn varint_len(value: u64) -> usize {
    (64 - (value | 1).leading_zeros() as usize).div_ceil(7)
}

// ---------------------------------------------------------------------------
// Reading

/// A fresh world holding the binary save `bytes` (version 1 or 2).
pub(crate) fn load_fresh(registry: &SerdeRegistry, bytes: &[u8]) -> Result<World, LoadError> {
    let mut world = World::new();
    registry.register_components(&mut world);
    world.insert_resource(registry.clone());
    if version(bytes)? == 1 {
        let document = load::parse::<MAX_DEPTH>(Format::Binary, bytes)?;
        load::load(&mut world, &document, Mode::Exact)?;
    } else {
        let save = parse(registry, bytes)?;
        build_into(&mut world, &save, Mode::Exact)?;
    }
    Ok(world)
}

/// Adds the entities of the binary save `bytes` (version 1 or 2) to `world`.
pub(crate) fn load_merge(world: &mut World, bytes: &[u8]) -> Result<EntityMap, LoadError> {
    if version(bytes)? == 1 {
        let document = load::parse::<MAX_DEPTH>(Format::Binary, bytes)?;
        let handles = load::load(world, &document, Mode::Merge)?;
        return Ok(load::entity_map(&document, handles));
    }
    let registry = crate::model::registry::registry_of(world);
    let save = parse(&registry, bytes)?;
    Ok(build_into(world, &save, Mode::Merge)?.expect("a merge maps the saved entities"))
}

fn binary_error(message: impl ToString) -> LoadError {
    LoadError::Binary { message: message.to_string() }
}

/// The layout version of a binary save; 1 or [`BINARY_VERSION`].
fn version(bytes: &[u8]) -> Result<u32, LoadError> {
    let ((tag, version), _) = postcard::take_from_bytes::<(String, u32)>(bytes).map_err(binary_error)?;
    if tag != FORMAT_TAG {
        return Err(LoadError::NotASave { found: tag });
    }
    match version {
        1 | BINARY_VERSION => Ok(version),
        found => Err(LoadError::UnsupportedVersion { found, supported: BINARY_VERSION }),
    }
}

/// The bytes still to read.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take<T: serde::Deserialize<'a>>(&mut self) -> Result<T, LoadError> {
        let (value, rest) = postcard::take_from_bytes::<T>(self.0).map_err(binary_error)?;
        self.0 = rest;
        Ok(value)
    }

    /// A count of things that each take at least one byte.
    fn count(&mut self, what: &str) -> Result<usize, LoadError> {
        let count: u64 = self.take()?;
        if count > self.0.len() as u64 {
            return Err(binary_error(format!("{count} {what} claimed with {} bytes left", self.0.len())));
        }
        Ok(count as usize)
    }

    /// One entity of a table, `(index - previous index, generation)`, read
    /// without postcard's per-call setup; `None` (nothing read) on anything
    /// but two well-formed varints.
    #[inline]
    fn entity_step(&mut self) -> Option<(i64, u32)> {
        let mut rest = self.0;
        let zigzag = varint(&mut rest, 10, 1)?;
        let generation = u32::try_from(varint(&mut rest, 5, 0x0f)?).ok()?;
        self.0 = rest;
        Some(((zigzag >> 1) as i64 ^ -((zigzag & 1) as i64), generation))
    }

    fn bytes(&mut self, len: u64) -> Result<&'a [u8], LoadError> {
        if len > self.0.len() as u64 {
            return Err(binary_error(format!("a column of {len} bytes with {} bytes left", self.0.len())));
        }
        let (bytes, rest) = self.0.split_at(len as usize);
        self.0 = rest;
        Ok(bytes)
    }
}

/// The entity of a table step of two one-byte varints (a small index
/// step, a low generation) after `index`, with its index; `None` for any
/// other step.
#[inline(always)]
fn short_step(bytes: &[u8], index: i64) -> Option<(Entity, i64)> {
    let &[step, generation, ..] = bytes else { return None };
    if step >= 0x80 || generation >= 0x80 {
        return None;
    }
    let next = index.checked_add(i64::from(step >> 1) ^ -i64::from(step & 1))?;
    let at = u32::try_from(next).ok()?;
    Some((Entity::from_bits((u64::from(generation) << 32) | u64::from(at))?, next))
}

/// A postcard varint of at most `max` bytes whose last byte, if it is the
/// `max`-th, is at most `last`: postcard's rules for `u64` (10, 1) and
/// `u32` (5, 0x0f).
#[inline]
fn varint(bytes: &mut &[u8], max: usize, last: u8) -> Option<u64> {
    let mut out = 0u64;
    for i in 0..max {
        let &byte = bytes.get(i)?;
        out |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            if i == max - 1 && byte > last {
                return None;
            }
            *bytes = &bytes[i + 1..];
            return Some(out);
        }
    }
    None
}

/// A save as read, before any value is built.
struct Parsed<'a, 'r> {
    allocator: load::Allocator,
    tables: Vec<Table<'a, 'r>>,
    resources: NamedValues<MAX_DEPTH>,
}

struct Table<'a, 'r> {
    entities: Vec<Entity>,
    columns: Vec<Column<'a, 'r>>,
}

/// One column of a table, as read.
struct Column<'a, 'r> {
    entry: &'r ComponentEntry,
    trees: bool,
    /// The rows that have a value, for a component in sparse storage.
    rows: Option<Vec<u32>>,
    /// The values.
    bytes: &'a [u8],
}

/// The rows whose bits are set in `bitmap`, of a table of `count` rows.
fn rows_of(bitmap: &[u8], count: usize) -> Result<Vec<u32>, LoadError> {
    let set = (0..count).filter(|&row| bitmap[row / 8] & (1 << (row % 8)) != 0);
    let rows: Vec<u32> = set.map(|row| row as u32).collect();
    let padding = bitmap.last().map_or(0, |&last| if count.is_multiple_of(8) { 0 } else { last >> (count % 8) });
    if padding != 0 {
        return Err(binary_error("a column bitmap marks rows past the table's end"));
    }
    if rows.is_empty() {
        // Never written: a column that no row has is left out.
        return Err(binary_error("a column bitmap marks no row"));
    }
    Ok(rows)
}

fn parse<'a, 'r>(registry: &'r SerdeRegistry, bytes: &'a [u8]) -> Result<Parsed<'a, 'r>, LoadError> {
    let mut reader = Reader(bytes);
    let _header: (&str, u32) = reader.take()?;
    let allocator: load::Allocator = reader.take()?;
    let names: Vec<&str> = reader.take()?;
    let entries: Vec<Option<&ComponentEntry>> = names.iter().map(|n| registry.component(n)).collect();
    let table_count = reader.count("tables")?;
    let mut tables = Vec::with_capacity(table_count);
    for _ in 0..table_count {
        let count = reader.count("entities")?;
        if count == 0 {
            return Err(binary_error("a table without entities"));
        }
        let mut entities = Vec::with_capacity(count);
        let mut index = 0i64;
        for _ in 0..count {
            // Most steps are two one-byte varints: the next index, a low
            // generation.
            if let Some((entity, next)) = short_step(reader.0, index) {
                reader.0 = &reader.0[2..];
                index = next;
                entities.push(entity);
                continue;
            }
            let (delta, generation): (i64, u32) = match reader.entity_step() {
                Some(step) => step,
                // Postcard names what is wrong.
                None => reader.take()?,
            };
            index = index.wrapping_add(delta);
            let entity = u32::try_from(index)
                .ok()
                .zip(NonZeroU32::new(generation))
                .and_then(|(index, generation)| {
                    Entity::from_bits((u64::from(generation.get()) << 32) | u64::from(index))
                })
                .ok_or_else(|| binary_error(format!("entity index {index}, generation {generation}")))?;
            entities.push(entity);
        }
        let first = entities[0];
        let column_count = reader.count("columns")?;
        let mut columns: Vec<Column<'_, '_>> = Vec::with_capacity(column_count);
        for _ in 0..column_count {
            let (name, flags, len): (u32, u8, u64) = reader.take()?;
            if flags & !(TREES | PARTIAL) != 0 {
                return Err(binary_error(format!("column flags {flags:#x}")));
            }
            let entry = match (names.get(name as usize), entries.get(name as usize)) {
                (Some(_), Some(Some(entry))) => *entry,
                (Some(name), _) => {
                    return Err(LoadError::UnknownComponent {
                        entity: first,
                        component: (*name).to_owned(),
                        suggestion: registry.suggest_component(name),
                    })
                }
                _ => return Err(binary_error(format!("entity {first} names component {name} of {}", names.len()))),
            };
            if columns.iter().any(|c| std::ptr::eq(c.entry, entry)) {
                return Err(LoadError::DuplicateComponent { entity: first, component: entry.name.clone() });
            }
            let mut bytes = reader.bytes(len)?;
            let rows = if flags & PARTIAL != 0 {
                if !entry.column.sparse {
                    return Err(binary_error(format!(
                        "column `{}` lists rows, but the component is stored in tables",
                        entry.name
                    )));
                }
                let Some((bitmap, values)) = bytes.split_at_checked(count.div_ceil(8)) else {
                    return Err(binary_error(format!("column `{}` is shorter than its bitmap", entry.name)));
                };
                bytes = values;
                Some(rows_of(bitmap, count)?)
            } else {
                None
            };
            columns.push(Column { entry, trees: flags & TREES != 0, rows, bytes });
        }
        tables.push(Table { entities, columns });
    }
    let resources: NamedValues<MAX_DEPTH> = reader.take()?;
    let _skipped: Vec<(&str, u64)> = reader.take()?;
    if !reader.0.is_empty() {
        return Err(binary_error(format!("{} bytes follow the save", reader.0.len())));
    }
    Ok(Parsed { allocator, tables, resources })
}

fn component_error(entity: Entity, entry: &ComponentEntry, e: FromValueError) -> LoadError {
    LoadError::Component { entity, component: entry.name.clone(), field: e.path(), message: e.message }
}

/// Builds the values of one column.
fn build_column(
    entry: &ComponentEntry,
    trees: bool,
    bytes: &[u8],
    entities: &[Entity],
    mode: Mode,
    cx: &Context<'_>,
) -> Result<ReadColumn, LoadError> {
    let fns = &entry.column;
    if trees {
        let mut deserializer = postcard::Deserializer::from_bytes(bytes);
        let mut values = Vec::with_capacity(entities.len().min(bytes.len()));
        let exceeded = Cell::new(false);
        for &entity in entities {
            match ValueSeed::new(MAX_DEPTH).flagging(&exceeded).deserialize(&mut deserializer) {
                Ok(value) => values.push(value),
                Err(_) if exceeded.get() => {
                    let message = too_deep(MAX_DEPTH);
                    return Err(LoadError::Component {
                        entity,
                        component: entry.name.clone(),
                        field: String::new(),
                        message,
                    });
                }
                Err(e) => return Err(binary_error(e)),
            }
        }
        let rest = deserializer.finalize().map_err(binary_error)?;
        if !rest.is_empty() {
            return Err(binary_error(format!("{} bytes follow column `{}`", rest.len(), entry.name)));
        }
        return (fns.read_trees)(values, cx).map_err(|(row, e)| component_error(entities[row], entry, e));
    }
    let mut column = (fns.read_typed)(bytes, entities.len()).map_err(|(row, message)| match entities.get(row) {
        Some(&entity) => LoadError::Component { entity, component: entry.name.clone(), field: String::new(), message },
        None => binary_error(format!("column `{}` of entity {}: {message}", entry.name, entities[0])),
    })?;
    if mode == Mode::Merge {
        (fns.find_handles)(&mut column, cx).map_err(|(row, e)| component_error(entities[row], entry, e))?;
    }
    Ok(column)
}

/// Builds every value of `save`, then (if all went well) puts the entities
/// into `world`, each table as one batch. On error the world is unchanged.
/// Returns where the saved entities went, when merging.
fn build_into(world: &mut World, save: &Parsed<'_, '_>, mode: Mode) -> Result<Option<EntityMap>, LoadError> {
    let lists: Vec<&[Entity]> = save.tables.iter().map(|t| &t.entities[..]).collect();
    if mode == Mode::Merge {
        return build_checked(world, save, mode, &lists);
    }
    // An exact load's restore refuses an entity listed twice; should
    // anything fail, the duplicate is named first, as the checks before a
    // merge name it. (So a file with a duplicate is refused once its values
    // are read, and a `Deserialize` that panics on it panics first.)
    let result = build_checked(world, save, mode, &lists);
    if result.is_err() {
        place::check_unique(&lists)?;
    }
    result
}

/// [`build_into`] for a save whose entities `lists` are checked for
/// duplicates when merging, and by the restore when exact.
fn build_checked(
    world: &mut World,
    save: &Parsed<'_, '_>,
    mode: Mode,
    lists: &[&[Entity]],
) -> Result<Option<EntityMap>, LoadError> {
    let registry = crate::model::registry::registry_of(world);
    let count: usize = lists.iter().map(|list| list.len()).sum();
    // As the text loader does: while building a merge, keep the save's own
    // handles and send the others to `DANGLING`; values holding handles
    // are read again once the new handles exist. (An exact load keeps the
    // handles as they are, and needs no list of them all.)
    let saved: Vec<Entity> = match mode {
        Mode::Exact => Vec::new(),
        Mode::Merge => lists.iter().flat_map(|list| list.iter().copied()).collect(),
    };
    let sorted = match mode {
        Mode::Exact => Vec::new(),
        Mode::Merge => load::sorted_unique(&saved)?,
    };
    let keep_saved = |e: Entity| if sorted.binary_search(&e).is_ok() { e } else { EntityMap::DANGLING };
    let cx = match mode {
        Mode::Exact => Context::new(EntityMapping::Keep),
        Mode::Merge => Context::new(EntityMapping::Map(&keep_saved)),
    };
    let mut resources = load::build_resources(&registry, &save.resources, &cx)?;
    let mut built: Vec<Vec<(&ComponentEntry, ReadColumn)>> = Vec::with_capacity(save.tables.len());
    for table in &save.tables {
        let mut columns = Vec::with_capacity(table.columns.len());
        for column in &table.columns {
            let entities: std::borrow::Cow<'_, [Entity]> = match &column.rows {
                None => table.entities[..].into(),
                Some(rows) => rows.iter().map(|&row| table.entities[row as usize]).collect(),
            };
            let entry = column.entry;
            columns.push((entry, build_column(entry, column.trees, column.bytes, &entities, mode, &cx)?));
        }
        built.push(columns);
    }

    // Nothing has touched the world yet; as in the text loader, a merge
    // rebuilds the values naming entities with the handles the world's next
    // spawns get, then everything is placed in one step.
    let mut entity_map = None;
    let (state, peeked) = match mode {
        Mode::Exact => (Some(load::allocator_state(&save.allocator, count)?), Vec::new()),
        Mode::Merge => {
            let peeked = world.peek_entities(count);
            let map = EntityMap::from_pairs(saved.iter().copied().zip(peeked.iter().copied()));
            let remap = |e: Entity| map.get(e).unwrap_or(EntityMap::DANGLING);
            let cx = Context::new(EntityMapping::Map(&remap));
            rebuild(&save.tables, &mut built, &mut resources, &cx)?;
            entity_map = Some(map);
            (None, peeked)
        }
    };
    // Each table's handles: as saved, or the new ones, in the same order.
    let mut tables = Vec::with_capacity(built.len());
    let mut bare = Vec::new();
    let mut first = 0;
    for (table, columns) in save.tables.iter().zip(built) {
        let rows = table.entities.len();
        let handles = match mode {
            Mode::Exact => &table.entities[..],
            Mode::Merge => &peeked[first..first + rows],
        };
        first += rows;
        if columns.is_empty() {
            bare.extend_from_slice(handles);
            continue;
        }
        let columns = columns
            .into_iter()
            .zip(&table.columns)
            .map(|((entry, column), read)| (&entry.column, column.values, read.rows.as_deref()));
        tables.push(LoadedTable::build(handles, columns, &mut bare));
    }
    let arrival = match &state {
        Some(state) => Arrival::Exact { state, bare: &bare },
        None => Arrival::Merge { peeked: &peeked },
    };
    place::place_tables(world, tables, arrival)?;
    for pending in resources {
        (pending.entry.insert)(world, pending.value);
    }
    Ok(entity_map)
}

/// Reads the values that hold handles again, with the final mapping.
fn rebuild(
    tables: &[Table<'_, '_>],
    built: &mut [Vec<(&ComponentEntry, ReadColumn)>],
    resources: &mut [load::PendingResource<'_>],
    cx: &Context<'_>,
) -> Result<(), LoadError> {
    for (table, columns) in tables.iter().zip(built) {
        for (read, (entry, column)) in table.columns.iter().zip(columns.iter_mut()) {
            if column.rebuild.is_empty() {
                continue;
            }
            // A sparse column's rows are those its bitmap lists.
            let entity = |i: usize| table.entities[read.rows.as_ref().map_or(i, |rows| rows[i] as usize)];
            (entry.column.rebuild)(column, cx).map_err(|(i, e)| component_error(entity(i), entry, e))?;
        }
    }
    load::rebuild_resources(resources, cx)
}

#[cfg(test)]
mod tests {
    use archetable::Component;
    use archetable_core::World;
    use serde::{Deserialize, Serialize};

    use crate::{LoadError, SerdeWorldExt};

    #[derive(Component, Serialize, Deserialize, Default, Debug, PartialEq)]
    struct Health(u32);

    #[derive(Component, Serialize, Deserialize, Default, Debug, PartialEq)]
    struct Name(String);

    /// Registered as `Health` by a reader that disagrees with the writer.
    #[derive(Component, Serialize, Deserialize, Default, Debug, PartialEq)]
    struct Flag(bool);

    fn saved() -> (World, Vec<u8>) {
        let mut world = World::new();
        world.register_serde::<Health>("Health").register_serde::<Name>("Label");
        world.spawn((Health(1), Name("a".into())));
        world.spawn(Health(300));
        let bytes = world.save_binary().unwrap().data;
        (world, bytes)
    }

    /// A world to merge into, with one entity of its own.
    fn target(register: impl FnOnce(&mut World)) -> World {
        let mut world = World::new();
        register(&mut world);
        world.spawn(());
        world
    }

    #[test]
    fn an_unknown_component_fails_and_changes_nothing() {
        let (world, bytes) = saved();
        let mut other = target(|w| {
            w.register_serde::<Health>("Health").register_serde::<Name>("Labl");
        });
        let before = other.allocator_state();
        let table = world.archetypes().as_slice().iter().find(|a| a.components().len() == 2).unwrap();
        let first = world.table_entity(table, 0);
        assert_eq!(
            other.load_into_binary(&bytes).unwrap_err(),
            LoadError::UnknownComponent { entity: first, component: "Label".into(), suggestion: Some("Labl".into()) }
        );
        assert_eq!((other.len(), other.allocator_state()), (1, before));
    }

    #[test]
    fn a_value_that_does_not_fit_names_its_entity() {
        let (world, bytes) = saved();
        let mut other = target(|w| {
            w.register_serde::<Flag>("Health").register_serde::<Name>("Label");
        });
        let before = other.allocator_state();
        let error = other.load_into_binary(&bytes).unwrap_err();
        let LoadError::Component { entity, component, .. } = &error else { panic!("{error:?}") };
        assert_eq!((world.get::<Health>(*entity), component.as_str()), (Some(&Health(300)), "Health"));
        assert_eq!((other.len(), other.allocator_state()), (1, before));
        let registry = other.serde_registry();
        assert!(matches!(World::load_binary(&registry, &bytes), Err(LoadError::Component { .. })));
    }

    /// A component type that contains itself.
    #[derive(Component, Serialize, Deserialize, Default, Debug, PartialEq)]
    enum Chain {
        #[default]
        End,
        Link(Box<Chain>),
    }

    #[test]
    fn deep_nesting_in_a_typed_column_fails_cleanly() {
        let mut world = World::new();
        world.register_serde::<Chain>("Chain");
        world.spawn(Chain::Link(Box::new(Chain::Link(Box::new(Chain::End)))));
        let registry = world.serde_registry();
        assert_eq!(
            World::load_binary(&registry, &world.save_binary().unwrap().data).unwrap().len(),
            1,
            "shallow chains load"
        );
        // One entity whose typed `Chain` is a million links deep.
        let mut chain = vec![1u8; 1_000_000];
        chain.push(0);
        let mut bytes = Vec::new();
        super::append(&("ecs-save", 2u32), &mut bytes).unwrap();
        super::append(&(vec![(1u32, 1u32)], Vec::<u32>::new()), &mut bytes).unwrap();
        super::append(&vec!["Chain"], &mut bytes).unwrap();
        super::append(&(1u64, 1u64, (0i64, 1u32), 1u64), &mut bytes).unwrap();
        super::append(&(0u32, false, chain.len() as u64), &mut bytes).unwrap();
        bytes.extend_from_slice(&chain);
        super::append(&(0u64, 0u64), &mut bytes).unwrap();
        let expected = LoadError::Component {
            entity: archetable_core::Entity::from_bits(1 << 32).unwrap(),
            component: "Chain".into(),
            field: String::new(),
            message: "data nested deeper than 64 levels".into(),
        };
        assert_eq!(World::load_binary(&registry, &bytes).unwrap_err(), expected);
        assert_eq!(world.load_into_binary(&bytes).unwrap_err(), expected);
        assert_eq!(world.len(), 1);
    }

    #[test]
    fn an_entity_listed_twice_is_named_in_both_modes() {
        let mut world = World::new();
        world.register_serde::<Health>("Health");
        let e = world.spawn(Health(1));
        world.spawn(Health(2));
        let mut bytes = world.save_binary().unwrap().data;
        // The table's steps: (0, 1) then (1, 1); make the second (0, 1).
        let steps = bytes.windows(4).position(|w| w == [0, 1, 2, 1]).unwrap();
        bytes[steps + 2] = 0;
        let expected = LoadError::DuplicateEntity { entity: e };
        assert_eq!(World::load_binary(&world.serde_registry(), &bytes).unwrap_err(), expected);
        let before = world.allocator_state();
        assert_eq!(world.load_into_binary(&bytes).unwrap_err(), expected);
        assert_eq!((world.len(), world.allocator_state()), (2, before));
        // With a value that does not read besides (`Health(2)` as a
        // `bool`), the duplicate is still what is named.
        let mut flags = World::new();
        flags.register_serde::<Flag>("Health");
        assert_eq!(World::load_binary(&flags.serde_registry(), &bytes).unwrap_err(), expected);
    }

    #[test]
    fn short_steps_read_as_long_ones() {
        for index in [0i64, 5, 200, i64::from(u32::MAX) - 1, i64::from(u32::MAX)] {
            for bytes in [[0u8, 1], [2, 1], [1, 1], [0x7e, 0x7f], [0x7f, 3], [0, 0], [0x80, 1], [2, 0x80]] {
                let long = super::Reader(&bytes).entity_step().and_then(|(delta, generation)| {
                    let next = index.checked_add(delta)?;
                    let entity = u32::try_from(next).ok().and_then(|at| {
                        archetable_core::Entity::from_bits((u64::from(generation) << 32) | u64::from(at))
                    })?;
                    Some((entity, next))
                });
                assert_eq!(super::short_step(&bytes, index), long, "{bytes:?} after {index}");
            }
        }
    }

    #[test]
    fn varints_are_written_as_postcard_writes_them() {
        for value in [0u64, 1, 127, 128, 300, 16_383, 16_384, u64::from(u32::MAX), u64::MAX - 1, u64::MAX] {
            let mut ours = Vec::new();
            super::push_varint(&mut ours, value);
            assert_eq!(ours, postcard::to_allocvec(&value).unwrap(), "{value}");
            assert_eq!(super::varint_len(value), ours.len(), "{value}");
        }
    }

    #[test]
    fn entity_steps_read_as_postcard_reads_them() {
        let mut cases: Vec<Vec<u8>> = Vec::new();
        for delta in [0i64, 1, -1, 63, -64, 64, 1 << 40, i64::MIN, i64::MAX] {
            for generation in [0u32, 1, 127, 128, u32::MAX] {
                cases.push(postcard::to_allocvec(&(delta, generation)).unwrap());
            }
        }
        // Too long, a last byte past the type, cut short, empty.
        cases.push(vec![0x80; 11]);
        cases.push(vec![0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0x01]);
        cases.push(vec![0x02, 0xff, 0xff, 0xff, 0xff, 0x1f]);
        cases.push(vec![0x02, 0xff, 0xff, 0xff, 0xff, 0x0f]);
        cases.push(vec![0x02, 0x80]);
        cases.push(vec![0x02]);
        cases.push(vec![]);
        for bytes in cases {
            let mut reader = super::Reader(&bytes);
            let ours = reader.entity_step().map(|step| (step, reader.0.len()));
            let theirs = postcard::take_from_bytes::<(i64, u32)>(&bytes).ok().map(|(step, rest)| (step, rest.len()));
            assert_eq!(ours, theirs, "{bytes:?}");
        }
    }

    #[test]
    fn trailing_bytes_are_refused() {
        let (world, mut bytes) = saved();
        bytes.push(0);
        let registry = world.serde_registry();
        assert_eq!(
            World::load_binary(&registry, &bytes).unwrap_err(),
            LoadError::Binary { message: "1 bytes follow the save".into() }
        );
    }
}
