//! JSON and RON loads straight into the tables (format layer, text).
//!
//! JSON and RON loads without a [`Value`](crate::model::value::Value)
//! tree per component: the document's outline (its fields, the entity
//! map, each entity's map of components) is walked here, and each
//! component value is read by the format's own deserializer straight into
//! its type, through [`Strictly`](crate::model::strict::Strictly), which
//! reads only what its tree would read, to the same value. The values of
//! one type go to one `Vec`; the entities of one component set form a
//! table, placed in the world as one
//! [`ColumnBatch`](archetable_core::ColumnBatch).
//!
//! The walk takes the layout saves are written in, compact or pretty, and
//! gives up on anything else (comments, escapes in names, fields out of
//! place, a value it cannot read): the loader then reads the file as
//! before, as a tree (`model/load.rs`), which also gives the errors a load
//! reports. A value the strict read refuses is read through its tree on
//! the spot; only a value that fails that way too sends the whole file to
//! the tree loader. So a file loads to the same world either way, fails
//! with the same error, and is never half-read into the world: nothing
//! touches it before every value is built.
//!
//! (One difference: a `Deserialize` that panics is reached here before
//! the rest of the file is checked, so it may panic on a file the tree
//! loader would have refused first for a later syntax error.)

use std::collections::HashMap;

use archetable_core::{Entity, World};
use serde::de::DeserializeOwned;

use crate::model::column::{Boxed, ReadColumn};
use crate::model::error::Format;
use crate::model::error::LoadError;
use crate::model::from_value::{Context, EntityMapping, FromValueError};
use crate::model::load::{self, EntityMap, Mode, NamedValues};
use crate::model::place::{self, Arrival, LoadedTable};
use crate::model::registry::{ComponentEntry, SerdeRegistry};
use crate::model::save::{reads_version, COLUMNS_VERSION, FORMAT_TAG};
use crate::model::text_column::Text;
use crate::model::value::Limited;

/// A fresh world holding the `text` save `data`, or `None` if the file is
/// not in a layout this loader walks (the caller reads it as a tree).
pub(crate) fn load_fresh<const L: usize>(
    registry: &SerdeRegistry,
    text: Text,
    data: &str,
) -> Option<Result<World, LoadError>> {
    let scan = Scan::<L>::of(registry, text, data)?;
    let mut world = World::new();
    registry.register_components(&mut world);
    world.insert_resource(registry.clone());
    Some(build(&mut world, registry, scan, Mode::Exact).map(|_| world))
}

/// Adds the entities of the `text` save `data` to `world`, or `None` as
/// [`load_fresh`] (then the world is untouched).
pub(crate) fn load_merge<const L: usize>(
    world: &mut World,
    text: Text,
    data: &str,
) -> Option<Result<EntityMap, LoadError>> {
    let registry = crate::model::registry::registry_of(world);
    let scan = Scan::<L>::of(&registry, text, data)?;
    Some(build(world, &registry, scan, Mode::Merge).map(|map| map.expect("a merge maps the saved entities")))
}

// ---------------------------------------------------------------------------
// The walk

/// A place in the text.
struct Cursor<'a> {
    text: &'a str,
    pos: usize,
    ron: bool,
}

impl<'a> Cursor<'a> {
    fn bytes(&self) -> &'a [u8] {
        self.text.as_bytes()
    }

    /// Skips spaces and line breaks.
    #[inline]
    fn skip_space(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.bytes().get(self.pos) {
            self.pos += 1;
        }
    }

    /// The next byte that is not a space.
    #[inline]
    fn peek(&mut self) -> Option<u8> {
        self.skip_space();
        self.bytes().get(self.pos).copied()
    }

    /// Takes `byte`, after spaces.
    #[inline]
    fn eat(&mut self, byte: u8) -> Option<()> {
        (self.peek()? == byte).then(|| self.pos += 1)
    }

    /// A component's key: its name (a string without escapes), or in RON
    /// its index in `names`.
    #[inline]
    fn component_key<'k>(&mut self, names: Option<&'k [String]>) -> Option<&'k str>
    where
        'a: 'k,
    {
        if !self.ron || !self.peek()?.is_ascii_digit() {
            return self.string();
        }
        let start = self.pos;
        while self.bytes().get(self.pos).is_some_and(u8::is_ascii_digit) {
            self.pos += 1;
        }
        let index: usize = self.text[start..self.pos].parse().ok()?;
        names?.get(index).map(String::as_str)
    }

    /// A string without escapes.
    #[inline]
    fn string(&mut self) -> Option<&'a str> {
        self.eat(b'"')?;
        let start = self.pos;
        let len = self.bytes()[start..].iter().position(|&b| b == b'"' || b == b'\\' || b < 0x20)?;
        if self.bytes()[start + len] != b'"' {
            return None;
        }
        self.pos = start + len + 1;
        Some(&self.text[start..start + len])
    }

    /// An entity of a columnar save's table: its index (generation 1), or
    /// its handle as a string.
    #[inline]
    fn table_entity(&mut self) -> Option<Entity> {
        if self.peek()? == b'"' {
            return Entity::parse(self.string()?);
        }
        let start = self.pos;
        let mut index: u64 = 0;
        while let Some(&b) = self.bytes().get(self.pos).filter(|b| b.is_ascii_digit()) {
            index = index * 10 + u64::from(b - b'0');
            if index > u64::from(u32::MAX) {
                return None;
            }
            self.pos += 1;
        }
        // Digits only, as the format writes them (no sign, no leading zero).
        let digits = &self.bytes()[start..self.pos];
        if digits.is_empty() || (digits.len() > 1 && digits[0] == b'0') {
            return None;
        }
        Entity::from_bits((1 << 32) | index)
    }

    /// A column's values, read into `values`; returns how many. The whole
    /// list is read by one deserializer; should one value need its tree,
    /// the list is read again value by value.
    #[inline]
    fn column<const L: usize>(&mut self, entry: &ComponentEntry, values: &mut Boxed) -> Option<usize> {
        self.skip_space();
        let rest = &self.text[self.pos..];
        let read = if self.ron { entry.column.read_ron_list } else { entry.column.read_json_list };
        if let Some((used, count)) = read(rest, values) {
            self.pos += used;
            return Some(count);
        }
        self.eat(b'[')?;
        if self.closes(b']')? {
            return Some(0);
        }
        let mut count = 0;
        loop {
            self.component::<L>(entry, values)?;
            count += 1;
            if !self.more(b']')? {
                return Some(count);
            }
        }
    }

    /// A field name of the document: a string in JSON, an identifier in
    /// RON.
    fn field(&mut self) -> Option<&'a str> {
        if !self.ron {
            return self.string();
        }
        self.skip_space();
        let start = self.pos;
        let bytes = self.bytes();
        while bytes.get(self.pos).is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_') {
            self.pos += 1;
        }
        (self.pos > start && !bytes[start].is_ascii_digit()).then(|| &self.text[start..self.pos])
    }

    /// After an item of a map, list or struct closed by `close`: whether
    /// another follows. RON allows a comma before the close.
    #[inline]
    fn more(&mut self, close: u8) -> Option<bool> {
        match self.peek()? {
            b',' => {
                self.pos += 1;
                if self.ron && self.peek()? == close {
                    self.pos += 1;
                    return Some(false);
                }
                Some(true)
            }
            b if b == close => {
                self.pos += 1;
                Some(false)
            }
            _ => None,
        }
    }

    /// Whether the map or list just opened is empty (and closed by `close`).
    #[inline]
    fn closes(&mut self, close: u8) -> Option<bool> {
        if self.peek()? == close {
            self.pos += 1;
            return Some(true);
        }
        Some(false)
    }

    /// A value read by the format's deserializer, as the tree loader reads
    /// the document's fields.
    fn value<T: DeserializeOwned>(&mut self) -> Option<T> {
        self.skip_space();
        let rest = &self.text[self.pos..];
        let (value, used) = if self.ron {
            let mut deserializer = ron::Deserializer::from_str(rest).ok()?;
            let value = T::deserialize(&mut deserializer).ok()?;
            (value, rest.len() - deserializer.remainder().len())
        } else {
            let mut stream = serde_json::Deserializer::from_str(rest).into_iter::<T>();
            let value = stream.next()?.ok()?;
            (value, stream.byte_offset())
        };
        self.pos += used;
        Some(value)
    }

    /// A component value, read straight into `values`; or through its tree
    /// should the strict read refuse it.
    #[inline]
    fn component<const L: usize>(&mut self, entry: &ComponentEntry, values: &mut Boxed) -> Option<()> {
        self.skip_space();
        let rest = &self.text[self.pos..];
        let read = if self.ron { entry.column.read_ron } else { entry.column.read_json };
        if let Some(used) = read(rest, values) {
            self.pos += used;
            return Some(());
        }
        let Limited(tree) = self.value::<Limited<L>>()?;
        (entry.column.push_tree)(&tree, values).ok()
    }
}

/// The component types met, in the order met, with their values.
struct Types<'r> {
    entries: Vec<&'r ComponentEntry>,
    /// Each type's values (a `Vec<T>`), in file order.
    values: Vec<Boxed>,
    /// The names met, with their index; few, so a scan beats hashing.
    names: Vec<(String, u16)>,
}

impl<'r> Types<'r> {
    /// The index of the type named `name`, or `None` if it is not
    /// registered (the tree loader reports it).
    #[inline]
    fn index(&mut self, registry: &'r SerdeRegistry, name: &str, hint: Option<u16>) -> Option<u16> {
        if let Some((_, i)) = hint.and_then(|h| self.names.get(h as usize)).filter(|(n, _)| n == name) {
            return Some(*i);
        }
        if let Some((_, i)) = self.names.iter().find(|(n, _)| n == name) {
            return Some(*i);
        }
        let entry = registry.component(name)?;
        // One type under two names is not possible: the names are the
        // registry's.
        let i = u16::try_from(self.entries.len()).ok()?;
        self.entries.push(entry);
        self.values.push((entry.column.new_values)());
        self.names.push((name.to_owned(), i));
        Some(i)
    }
}

/// A save as walked, every component value built (handles as written).
struct Scan<'r, const L: usize> {
    allocator: load::Allocator,
    resources: NamedValues<L>,
    /// The saved entities, in file order, and each one's table.
    saved: Vec<Entity>,
    table_of: Vec<u32>,
    /// Each table's component types (indices into `types`), in the order
    /// of its first entity.
    tables: Vec<Vec<u16>>,
    types: Types<'r>,
}

impl<'r, const L: usize> Scan<'r, L> {
    /// Walks `data`; `None` if it is not in the layout saves are written
    /// in, or a value fails (the tree loader then reports why).
    fn of(registry: &'r SerdeRegistry, text: Text, data: &str) -> Option<Scan<'r, L>> {
        let ron = text == Text::Ron;
        let mut at = Cursor { text: data, pos: 0, ron };
        let close = if ron { b')' } else { b'}' };
        at.eat(if ron { b'(' } else { b'{' })?;
        let (mut format, mut version, mut allocator, mut components, mut resources, mut skipped) =
            (None, None, None, None, None, None);
        let (mut entities, mut tables) = (None, None);
        if at.closes(close)? {
            return None;
        }
        loop {
            let name = at.field()?;
            at.eat(b':')?;
            let fresh = match name {
                "format" => format.replace(at.value::<String>()?).is_none(),
                "version" => version.replace(at.value::<u32>()?).is_none(),
                "allocator" => allocator.replace(at.value::<load::Allocator>()?).is_none(),
                "components" => components.replace(at.value::<Vec<String>>()?).is_none(),
                "resources" => resources.replace(at.value::<NamedValues<L>>()?).is_none(),
                "skipped" => skipped.replace(at.value::<Vec<load::SkippedEntry>>()?).is_none(),
                "entities" => entities.replace(Self::entities(&mut at, registry, components.as_deref())?).is_none(),
                "tables" => tables.replace(Self::tables(&mut at, registry)?).is_none(),
                _ => false,
            };
            if !fresh || !at.more(close)? {
                break;
            }
        }
        at.skip_space();
        // The whole text, and a save of this version.
        let read = if ron { Format::Ron } else { Format::Json };
        if at.pos != data.len() || format? != FORMAT_TAG || !reads_version(read, version?) {
            return None;
        }
        // Tables in a columnar save, the entity map in the others.
        let (saved, table_of, tables, types) = match (version?, entities, tables) {
            (COLUMNS_VERSION, None, Some(tables)) => tables,
            (COLUMNS_VERSION, _, _) | (_, _, Some(_)) => return None,
            (_, entities, None) => entities?,
        };
        Some(Scan { allocator: allocator?, resources: resources.unwrap_or_default(), saved, table_of, tables, types })
    }

    /// The entity map: each entity's components read into `types`, and the
    /// entity given its table.
    #[allow(clippy::type_complexity)]
    fn entities(
        at: &mut Cursor<'_>,
        registry: &'r SerdeRegistry,
        names: Option<&[String]>,
    ) -> Option<(Vec<Entity>, Vec<u32>, Vec<Vec<u16>>, Types<'r>)> {
        let mut types = Types { entries: Vec::new(), values: Vec::new(), names: Vec::new() };
        let (mut saved, mut table_of) = (Vec::new(), Vec::new());
        let mut tables: Vec<Vec<u16>> = Vec::new();
        let mut by_set: HashMap<Vec<u16>, u32> = HashMap::new();
        let mut previous: Option<u32> = None;
        let mut components: Vec<u16> = Vec::new();
        at.eat(b'{')?;
        if at.closes(b'}')? {
            return Some((saved, table_of, tables, types));
        }
        loop {
            let entity = Entity::parse(at.string()?)?;
            at.eat(b':')?;
            at.eat(b'{')?;
            components.clear();
            if !at.closes(b'}')? {
                loop {
                    let name = at.component_key(names)?;
                    // Entities of one table usually list their components
                    // in one order.
                    let hint = previous.and_then(|t| tables[t as usize].get(components.len()).copied());
                    let i = types.index(registry, name, hint)?;
                    if components.contains(&i) {
                        return None;
                    }
                    at.eat(b':')?;
                    at.component::<L>(types.entries[i as usize], &mut types.values[i as usize])?;
                    components.push(i);
                    if !at.more(b'}')? {
                        break;
                    }
                }
            }
            let table = match previous {
                Some(t) if tables[t as usize] == components => t,
                _ => {
                    let mut set = components.clone();
                    set.sort_unstable();
                    *by_set.entry(set).or_insert_with(|| {
                        tables.push(components.clone());
                        (tables.len() - 1) as u32
                    })
                }
            };
            previous = Some(table);
            saved.push(entity);
            table_of.push(table);
            if !at.more(b'}')? {
                return Some((saved, table_of, tables, types));
            }
        }
    }
}

impl<'r, const L: usize> Scan<'r, L> {
    /// The tables of a columnar save: each column's values read into
    /// `types`, and each entity given the table of its component set.
    #[allow(clippy::type_complexity)]
    fn tables(
        at: &mut Cursor<'_>,
        registry: &'r SerdeRegistry,
    ) -> Option<(Vec<Entity>, Vec<u32>, Vec<Vec<u16>>, Types<'r>)> {
        let mut types = Types { entries: Vec::new(), values: Vec::new(), names: Vec::new() };
        let (mut saved, mut table_of) = (Vec::new(), Vec::new());
        let mut tables: Vec<Vec<u16>> = Vec::new();
        let mut by_set: HashMap<Vec<u16>, u32> = HashMap::new();
        let (open, close) = if at.ron { (b'(', b')') } else { (b'{', b'}') };
        at.eat(b'[')?;
        if at.closes(b']')? {
            return Some((saved, table_of, tables, types));
        }
        // This table's columns: the type, and how many values it read.
        let mut columns: Vec<(u16, usize)> = Vec::new();
        loop {
            at.eat(open)?;
            // The fields in the order saves write them.
            (at.field()? == "entities").then_some(())?;
            at.eat(b':')?;
            let first = saved.len();
            at.eat(b'[')?;
            if !at.closes(b']')? {
                loop {
                    saved.push(at.table_entity()?);
                    if !at.more(b']')? {
                        break;
                    }
                }
            }
            let count = saved.len() - first;
            at.more(close)?.then_some(())?;
            (at.field()? == "columns").then_some(())?;
            at.eat(b':')?;
            at.eat(b'{')?;
            columns.clear();
            if !at.closes(b'}')? {
                loop {
                    let name = at.string()?;
                    let hint = tables.last().and_then(|t| t.get(columns.len()).copied());
                    let i = types.index(registry, name, hint)?;
                    if columns.iter().any(|&(c, _)| c == i) {
                        return None;
                    }
                    at.eat(b':')?;
                    let (entry, values) = (types.entries[i as usize], &mut types.values[i as usize]);
                    let read = at.column::<L>(entry, values)?;
                    columns.push((i, read));
                    if !at.more(b'}')? {
                        break;
                    }
                }
            }
            let mut rows: Vec<(u16, Vec<u32>)> = Vec::new();
            if at.more(close)? {
                (at.field()? == "rows").then_some(())?;
                at.eat(b':')?;
                at.eat(b'{')?;
                if !at.closes(b'}')? {
                    loop {
                        let name = at.string()?;
                        let &(i, _) = columns.iter().find(|&&(c, _)| types.names[c as usize].0 == name)?;
                        if rows.iter().any(|&(r, _)| r == i) {
                            return None;
                        }
                        at.eat(b':')?;
                        rows.push((i, at.value::<Vec<u32>>()?));
                        if !at.more(b'}')? {
                            break;
                        }
                    }
                }
                at.eat(close)?;
            }
            // The shape the tree loader checks: every column as long as the
            // rows it covers, rows in order and in the table.
            for &(i, read) in &columns {
                let covered = match rows.iter().find(|&&(r, _)| r == i) {
                    Some((_, rows)) => {
                        let ordered = rows.windows(2).all(|pair| pair[0] < pair[1]);
                        (ordered && rows.last().is_none_or(|&last| (last as usize) < count)).then_some(rows.len())?
                    }
                    None => count,
                };
                (read == covered).then_some(())?;
            }
            // Each entity's table: that of its component set.
            let mut table_for = |set: Vec<u16>| -> u32 {
                let mut key = set.clone();
                key.sort_unstable();
                *by_set.entry(key).or_insert_with(|| {
                    tables.push(set);
                    (tables.len() - 1) as u32
                })
            };
            if rows.is_empty() {
                let t = table_for(columns.iter().map(|&(i, _)| i).collect());
                table_of.extend(std::iter::repeat_n(t, count));
            } else {
                for row in 0..count as u32 {
                    let set = columns
                        .iter()
                        .filter(|&&(i, _)| match rows.iter().find(|&&(r, _)| r == i) {
                            Some((_, rows)) => rows.binary_search(&row).is_ok(),
                            None => true,
                        })
                        .map(|&(i, _)| i)
                        .collect();
                    table_of.push(table_for(set));
                }
            }
            if !at.more(b']')? {
                return Some((saved, table_of, tables, types));
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Into the world

fn component_error(entity: Entity, entry: &ComponentEntry, e: FromValueError) -> LoadError {
    LoadError::Component { entity, component: entry.name.clone(), field: e.path(), message: e.message }
}

/// Checks and completes what `scan` read as the tree loader does, then
/// places every table in one step. Returns where the saved entities went,
/// when merging. On error the world is unchanged.
fn build<const L: usize>(
    world: &mut World,
    registry: &SerdeRegistry,
    scan: Scan<'_, L>,
    mode: Mode,
) -> Result<Option<EntityMap>, LoadError> {
    let Scan { allocator, resources, saved, table_of, tables, types } = scan;
    let sorted = match mode {
        Mode::Exact => {
            place::check_unique(&[&saved])?;
            Vec::new()
        }
        Mode::Merge => load::sorted_unique(&saved)?,
    };
    let keep_saved = |e: Entity| if sorted.binary_search(&e).is_ok() { e } else { EntityMap::DANGLING };
    let cx = match mode {
        Mode::Exact => Context::new(EntityMapping::Keep),
        Mode::Merge => Context::new(EntityMapping::Map(&keep_saved)),
    };
    let mut resources = load::build_resources(registry, &resources, &cx)?;

    // Each table's rows (indices into `saved`), and each type's values
    // dealt to the tables that have it.
    let mut rows: Vec<Vec<usize>> = vec![Vec::new(); tables.len()];
    for (i, &t) in table_of.iter().enumerate() {
        rows[t as usize].push(i);
    }
    let mut columns: Vec<Vec<Option<ReadColumn>>> = tables.iter().map(|t| t.iter().map(|_| None).collect()).collect();
    let Types { entries, values, .. } = types;
    for (u, values) in values.into_iter().enumerate() {
        let holders: Vec<usize> = (0..tables.len()).filter(|&t| tables[t].contains(&(u as u16))).collect();
        let dealt = match holders.as_slice() {
            [only] => {
                let mut dealt: Vec<Option<Boxed>> = (0..tables.len()).map(|_| None).collect();
                dealt[*only] = Some(values);
                dealt
            }
            _ => {
                let of_value: Vec<u32> =
                    table_of.iter().copied().filter(|&t| tables[t as usize].contains(&(u as u16))).collect();
                (entries[u].column.deal)(values, &of_value, tables.len()).into_iter().map(Some).collect()
            }
        };
        for (t, values) in dealt.into_iter().enumerate() {
            if let Some(values) = values.filter(|_| holders.contains(&t)) {
                let c = tables[t].iter().position(|&x| x as usize == u).expect("the table holds the type");
                columns[t][c] = Some(ReadColumn { values, rebuild: Vec::new() });
            }
        }
    }
    let mut columns: Vec<Vec<ReadColumn>> =
        columns.into_iter().map(|c| c.into_iter().map(|c| c.expect("every column is read")).collect()).collect();
    if mode == Mode::Merge {
        // The values that hold handles, checked as the tree loader checks
        // them, to be read again with the new handles.
        for ((table, columns), rows) in tables.iter().zip(&mut columns).zip(&rows) {
            for (&u, column) in table.iter().zip(columns.iter_mut()) {
                let entry = entries[u as usize];
                (entry.column.find_handles)(column, &cx).map_err(|(r, e)| component_error(saved[rows[r]], entry, e))?;
            }
        }
    }

    let mut entity_map = None;
    let (state, peeked) = match mode {
        Mode::Exact => (Some(load::allocator_state(&allocator, saved.len())?), Vec::new()),
        Mode::Merge => {
            let peeked = world.peek_entities(saved.len());
            let map = EntityMap::from_pairs(saved.iter().copied().zip(peeked.iter().copied()));
            let remap = |e: Entity| map.get(e).unwrap_or(EntityMap::DANGLING);
            let cx = Context::new(EntityMapping::Map(&remap));
            for ((table, columns), rows) in tables.iter().zip(&mut columns).zip(&rows) {
                for (&u, column) in table.iter().zip(columns.iter_mut()).filter(|(_, c)| !c.rebuild.is_empty()) {
                    let entry = entries[u as usize];
                    (entry.column.rebuild)(column, &cx).map_err(|(r, e)| component_error(saved[rows[r]], entry, e))?;
                }
            }
            load::rebuild_resources(&mut resources, &cx)?;
            entity_map = Some(map);
            (None, peeked)
        }
    };
    let handles = if mode == Mode::Merge { &peeked } else { &saved };

    // Each table's handles, in its rows' order, and the entities without
    // components.
    let mut bare = Vec::new();
    let mut batches = Vec::with_capacity(tables.len());
    let table_handles: Vec<Vec<Entity>> = rows.iter().map(|rows| rows.iter().map(|&i| handles[i]).collect()).collect();
    for ((table, columns), table_handles) in tables.iter().zip(columns).zip(&table_handles) {
        if table.is_empty() {
            bare.extend_from_slice(table_handles);
            continue;
        }
        let columns = table.iter().zip(columns).map(|(&u, column)| (&entries[u as usize].column, column.values, None));
        batches.push(LoadedTable::build(table_handles, columns, &mut bare));
    }
    let arrival = match &state {
        Some(state) => Arrival::Exact { state, bare: &bare },
        None => Arrival::Merge { peeked: &peeked },
    };
    place::place_tables(world, batches, arrival)?;
    for pending in resources {
        (pending.entry.insert)(world, pending.value);
    }
    Ok(entity_map)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use archetable::Component;
    use archetable_core::{Entity, World};
    use serde::{Deserialize, Serialize};

    use super::Scan;
    use crate::model::depth::{MAX_DEPTH, MAX_RON_DEPTH};
    use crate::model::error::{Format, LoadError};
    use crate::model::load::{self, Mode};
    use crate::model::text_column::Text;
    use crate::{SerdeRegistry, SerdeWorldExt};

    #[derive(Component, Serialize, Deserialize, Default, Clone, PartialEq, Debug)]
    struct Position {
        x: f32,
        y: f64,
    }

    #[derive(Component, Serialize, Deserialize, Default, Clone, PartialEq, Debug)]
    struct Pair(i8, u64);

    #[derive(Component, Serialize, Deserialize, Default, Clone, PartialEq, Debug)]
    struct Hp(u16);

    #[derive(Component, Serialize, Deserialize, Default, Clone, PartialEq, Debug)]
    struct Marker;

    #[derive(Component, Serialize, Deserialize, Default, Clone, PartialEq, Debug)]
    enum Mood {
        #[default]
        Calm,
        Angry(u8),
        Torn(i32, String),
        Scared {
            of: String,
            level: i16,
        },
    }

    #[derive(Component, Serialize, Deserialize, Default, Clone, PartialEq, Debug)]
    struct Links {
        leader: Option<Entity>,
        all: Vec<Entity>,
        weights: BTreeMap<Entity, u8>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        note: Option<String>,
        letter: char,
    }

    #[derive(Component, Serialize, Deserialize, Default, Clone, PartialEq, Debug)]
    struct Keyed(BTreeMap<u8, Hp>);

    #[derive(Component, Serialize, Deserialize, Default, Clone, PartialEq, Debug)]
    #[component(storage = "sparse")]
    struct Stunned(u8);

    #[derive(Component, Serialize, Deserialize, Default, Clone, PartialEq, Debug)]
    #[serde(untagged)]
    enum Loose {
        #[default]
        Nothing,
        Number(u32),
    }

    fn registered() -> World {
        let mut world = World::new();
        world
            .register_serde::<Position>("Position")
            .register_serde::<Pair>("Pair")
            .register_serde::<Hp>("Hp")
            .register_serde::<Marker>("Marker")
            .register_serde::<Mood>("Mood")
            .register_serde::<Links>("Links")
            .register_serde::<Keyed>("Keyed")
            .register_serde::<Loose>("Loose")
            .register_serde::<Stunned>("Stunned");
        world
    }

    /// A world of every kind of component; with what JSON cannot hold if
    /// `nan`.
    fn scene(nan: bool) -> World {
        let mut world = registered();
        let a = world.spawn((Position { x: 1.5, y: -2e-9 }, Pair(-3, u64::MAX), Hp(7), Marker));
        let b = world.spawn((Mood::Calm, Hp(0)));
        world.spawn((Hp(2), Mood::Angry(3)));
        world.spawn(Mood::Torn(-1, "t\"orn\n".into()));
        world.spawn((Mood::Scared { of: "ü".into(), level: -2 }, Marker));
        let gone = world.spawn(Hp(9));
        world.despawn(gone).unwrap();
        world.spawn(Links {
            leader: Some(a),
            all: vec![a, b, gone],
            weights: [(a, 1), (b, 2)].into_iter().collect(),
            note: Some("n".into()),
            letter: 'é',
        });
        world.spawn(Links::default());
        world.spawn((Loose::Number(4), Hp(4)));
        world.spawn(());
        // Some entities of two tables in sparse storage too.
        world.insert(a, Stunned(1)).unwrap();
        world.insert(b, Stunned(2)).unwrap();
        if nan {
            // Numbers as map keys: JSON writes them as strings, which trees
            // do not read back as numbers.
            world.spawn(Keyed([(1, Hp(1))].into_iter().collect()));
            world.spawn((Position { x: f32::NAN, y: f64::INFINITY }, Hp(5)));
        }
        world
    }

    /// Loads `data` through trees only.
    fn through_trees(registry: &SerdeRegistry, text: Text, data: &str) -> Result<World, LoadError> {
        let (format, nesting) = match text {
            Text::Json => (Format::Json, MAX_DEPTH),
            Text::Ron => (Format::Ron, MAX_RON_DEPTH),
        };
        let mut world = World::new();
        registry.register_components(&mut world);
        world.insert_resource(registry.clone());
        if nesting == MAX_DEPTH {
            load::load(&mut world, &load::parse::<MAX_DEPTH>(format, data.as_bytes())?, Mode::Exact)?;
        } else {
            load::load(&mut world, &load::parse::<MAX_RON_DEPTH>(format, data.as_bytes())?, Mode::Exact)?;
        }
        Ok(world)
    }

    fn load(registry: &SerdeRegistry, text: Text, data: &str) -> Result<World, LoadError> {
        match text {
            Text::Json => World::load_json(registry, data),
            Text::Ron => World::load_ron(registry, data),
        }
    }

    /// Whether the walk takes `data` (rather than leaving it to trees).
    fn walked(registry: &SerdeRegistry, text: Text, data: &str) -> bool {
        match text {
            Text::Json => Scan::<MAX_DEPTH>::of(registry, text, data).is_some(),
            Text::Ron => Scan::<MAX_RON_DEPTH>::of(registry, text, data).is_some(),
        }
    }

    /// The same world: entities, values (as a save writes them), allocator.
    fn assert_same_world(a: &World, b: &World) {
        assert_eq!(a.allocator_state(), b.allocator_state());
        assert_eq!(a.save_ron().unwrap().data, b.save_ron().unwrap().data);
        a.check_invariants().unwrap();
        b.check_invariants().unwrap();
    }

    #[test]
    fn saves_are_walked_and_load_as_through_trees() {
        let (world, with_nan) = (scene(false), scene(true));
        let registry = world.serde_registry();
        let saves = [
            (Text::Json, world.save_json().unwrap().data),
            (Text::Json, world.save_json_pretty().unwrap().data),
            (Text::Ron, with_nan.save_ron().unwrap().data),
            (Text::Ron, with_nan.save_ron_pretty().unwrap().data),
        ];
        for (text, data) in saves {
            assert!(walked(&registry, text, &data), "{data}");
            let fast = load(&registry, text, &data).unwrap();
            assert_same_world(&fast, &through_trees(&registry, text, &data).unwrap());
        }
    }

    #[test]
    fn merges_are_walked_and_land_as_through_trees() {
        let (world, with_nan) = (scene(false), scene(true));
        let saves = [(Text::Json, world.save_json().unwrap().data), (Text::Ron, with_nan.save_ron().unwrap().data)];
        for (text, data) in saves {
            let target = || {
                let mut target = registered();
                let kept = target.spawn(Hp(100));
                let gone = target.spawn(Hp(101));
                target.despawn(gone).unwrap();
                (target, kept)
            };
            let (mut fast, kept) = target();
            let fast_map = match text {
                Text::Json => fast.load_into_json(&data),
                Text::Ron => fast.load_into_ron(&data),
            }
            .unwrap();
            let (mut slow, _) = target();
            let format = if text == Text::Json { Format::Json } else { Format::Ron };
            let slow_handles = if text == Text::Json {
                let document = load::parse::<MAX_DEPTH>(format, data.as_bytes()).unwrap();
                load::entity_map(&document, load::load(&mut slow, &document, Mode::Merge).unwrap())
            } else {
                let document = load::parse::<MAX_RON_DEPTH>(format, data.as_bytes()).unwrap();
                load::entity_map(&document, load::load(&mut slow, &document, Mode::Merge).unwrap())
            };
            assert_eq!(fast_map, slow_handles);
            assert_same_world(&fast, &slow);
            assert_eq!(fast.get::<Hp>(kept), Some(&Hp(100)));
        }
    }

    #[test]
    fn ordinary_values_are_read_without_trees() {
        let world = scene(false);
        for text in [Text::Json, Text::Ron] {
            let registry = world.serde_registry();
            for name in ["Position", "Pair", "Hp", "Marker", "Mood", "Links", "Keyed"] {
                let entry = registry.component(name).unwrap();
                let sample = match name {
                    "Position" => world.query::<&Position>().map(|v| to_text(text, v)).next(),
                    "Pair" => world.query::<&Pair>().map(|v| to_text(text, v)).next(),
                    "Hp" => world.query::<&Hp>().map(|v| to_text(text, v)).next(),
                    "Marker" => world.query::<&Marker>().map(|v| to_text(text, v)).next(),
                    "Mood" => world.query::<&Mood>().map(|v| to_text(text, v)).last(),
                    "Links" => world.query::<&Links>().map(|v| to_text(text, v)).next(),
                    _ => None,
                };
                let Some(sample) = sample else { continue };
                let read = if text == Text::Ron { entry.column.read_ron } else { entry.column.read_json };
                let mut values = (entry.column.new_values)();
                assert_eq!(read(&sample, &mut values), Some(sample.len()), "{name}: {sample}");
            }
        }
    }

    /// A component value as a save writes it.
    fn to_text<T: Serialize>(text: Text, value: &T) -> String {
        let tree = crate::model::to_value::to_value(value).unwrap();
        match text {
            Text::Json => serde_json::to_string(&tree).unwrap(),
            Text::Ron => ron::to_string(&tree).unwrap(),
        }
    }

    #[test]
    fn damaged_saves_load_or_fail_as_through_trees() {
        let (world, with_nan) = (scene(false), scene(true));
        let registry = world.serde_registry();
        let saves = [
            (Text::Json, world.save_json().unwrap().data),
            (Text::Json, world.save_json_pretty().unwrap().data),
            (Text::Ron, with_nan.save_ron().unwrap().data),
            (Text::Ron, with_nan.save_ron_pretty().unwrap().data),
        ];
        // xorshift: the same damage every run.
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n.max(1) as u64) as usize
        };
        let mut compared = 0;
        for (text, data) in &saves {
            for _ in 0..400 {
                let mut bytes = data.clone().into_bytes();
                for _ in 0..1 + next(3) {
                    let i = next(bytes.len());
                    match next(4) {
                        0 => {
                            let tokens = b"{}[]():,\"0123456789 .-eE\\ntruefalsenull";
                            bytes[i] = tokens[next(tokens.len())];
                        }
                        1 => bytes.truncate(i),
                        2 => drop(bytes.drain(i..(i + next(8)).min(bytes.len()))),
                        _ => {
                            let j = next(bytes.len());
                            let run = bytes[j..(j + next(16)).min(bytes.len())].to_vec();
                            bytes.splice(i..i, run);
                        }
                    }
                    if bytes.is_empty() {
                        break;
                    }
                }
                let Ok(damaged) = String::from_utf8(bytes) else { continue };
                let fast = load(&registry, *text, &damaged);
                let slow = through_trees(&registry, *text, &damaged);
                match (&fast, &slow) {
                    (Ok(fast), Ok(slow)) => assert_same_world(fast, slow),
                    _ => assert_eq!(fast.as_ref().err(), slow.as_ref().err(), "{damaged}"),
                }
                compared += 1;
            }
        }
        assert!(compared > 1000);
    }

    #[test]
    fn ron_saves_name_components_by_index_and_load_either_way() {
        let registry = registered().serde_registry();
        let doc = |version: u32, components: &str, entities: &str, order_swapped: bool| {
            let (components, entities) = (format!("components: [{components}]"), format!("entities: {{{entities}}}"));
            let (first, second) = if order_swapped { (entities, components) } else { (components, entities) };
            format!(
                "(format: \"ecs-save\", version: {version}, allocator: (generations: [(2, 1)], free: []), \
                 {first}, {second}, resources: {{}}, skipped: [])"
            )
        };
        let cases = [
            (2, r#""Hp", "Marker""#, r#""0v1": {0: 3, 1: ()}, "1v1": {"Hp": 4}"#, false),
            (1, r#""Hp""#, r#""0v1": {0: 3}, "1v1": {}"#, false),
            (2, r#""Hp""#, r#""0v1": {0: 3}, "1v1": {}"#, true),
            (2, r#""Hp""#, r#""0v1": {1: 3}, "1v1": {}"#, false),
            (2, r#""Helth""#, r#""0v1": {0: 3}, "1v1": {}"#, false),
            (2, r#""Hp", "Hp""#, r#""0v1": {0: 3, 1: 4}, "1v1": {}"#, false),
            (4, r#""Hp""#, r#""0v1": {0: 3}, "1v1": {}"#, false),
            (3, r#""Hp""#, r#""0v1": {0: 3}, "1v1": {}"#, false),
        ];
        for (version, components, entities, swapped) in cases {
            let data = doc(version, components, entities, swapped);
            let fast = load(&registry, Text::Ron, &data);
            let slow = through_trees(&registry, Text::Ron, &data);
            match (&fast, &slow) {
                (Ok(fast), Ok(slow)) => assert_same_world(fast, slow),
                _ => assert_eq!(fast.as_ref().err(), slow.as_ref().err(), "{data}"),
            }
        }
        let two = Entity::from_bits(1 << 32).unwrap();
        assert_eq!(
            load(&registry, Text::Ron, &doc(2, r#""Hp""#, r#""0v1": {1: 3}, "1v1": {}"#, false)).err(),
            Some(LoadError::UnknownComponent { entity: two, component: "1".into(), suggestion: None })
        );
        assert_eq!(
            load(&registry, Text::Ron, &doc(4, r#""Hp""#, "", false)).err(),
            Some(LoadError::UnsupportedVersion { found: 4, supported: 3 })
        );
        assert_eq!(
            load(&registry, Text::Ron, &doc(3, r#""Hp""#, "", false)).err(),
            Some(LoadError::Syntax {
                format: Format::Ron,
                line: 1,
                column: 1,
                message: "a version 3 save lists `tables`, not `entities`".into()
            })
        );
        let json = json(0, "").replace("\"version\": 1", "\"version\": 2");
        assert_eq!(
            load(&registry, Text::Json, &json).err(),
            Some(LoadError::UnsupportedVersion { found: 2, supported: 3 })
        );
        let world = scene(true);
        let compact = world.save_ron().unwrap().data;
        assert!(compact.starts_with(r#"(format:"ecs-save",version:3,"#), "{compact}");
        let pretty = world.save_ron_pretty().unwrap().data;
        assert!(pretty.contains("version: 1,") && pretty.contains(r#""Position": "#), "{pretty}");
    }

    /// A columnar JSON save holding `tables` (the list's inside).
    fn json_tables(slots: u32, tables: &str) -> String {
        format!(
            r#"{{"format": "ecs-save", "version": 3, "allocator": {{"generations": [[{slots}, 1], [1, 2]], "free": []}},
                "tables": [{tables}], "resources": {{}}, "skipped": []}}"#
        )
    }

    /// A columnar RON save holding `tables`.
    fn ron_tables(slots: u32, tables: &str) -> String {
        format!(
            r#"(format: "ecs-save", version: 3, allocator: (generations: [({slots}, 1), (1, 2)], free: []),
                tables: [{tables}], resources: {{}}, skipped: [])"#
        )
    }

    #[test]
    fn odd_columnar_files_load_or_fail_as_through_trees() {
        let registry = registered().serde_registry();
        let json_cases = [
            r#"{"entities": [0, 1], "columns": {"Hp": [1, 2]}}"#,
            r#"{"entities": [0, "3v2"], "columns": {"Hp": [1, 2], "Marker": [null, null]}}"#,
            r#"{"entities": [0, 1], "columns": {"Hp": [1]}}"#,
            r#"{"entities": [0, 1], "columns": {"Hp": [1, 2, 3]}}"#,
            r#"{"entities": [0, 1], "columns": {"Hp": [1, "2"]}}"#,
            r#"{"entities": [0, 1], "columns": {"Hp": [1, 2], "Hp": [3, 4]}}"#,
            r#"{"entities": [0, 1], "columns": {"Helth": [1, 2]}}"#,
            r#"{"entities": [0, 1], "columns": {"Position": [{"x": 1, "y": 2}, {"x": 1e39, "y": 0}]}}"#,
            r#"{"entities": [0, 1], "columns": {"Hp": [1, 2], "Stunned": [5]}, "rows": {"Stunned": [1]}}"#,
            r#"{"entities": [0, 1, 2], "columns": {"Hp": [1, 2, 3], "Stunned": [5, 6]}, "rows": {"Stunned": [2, 0]}}"#,
            r#"{"entities": [0, 1], "columns": {"Hp": [1, 2], "Stunned": [5]}, "rows": {"Stunned": [2]}}"#,
            r#"{"entities": [0, 1], "columns": {"Hp": [1, 2], "Stunned": [5]}, "rows": {"Marker": [1]}}"#,
            r#"{"entities": [0, 1], "columns": {"Hp": [1, 2], "Stunned": [5, 6]}, "rows": {"Stunned": [1]}}"#,
            r#"{"entities": [0, 1], "columns": {"Hp": [1, 2]}, "rows": {}}"#,
            r#"{"entities": [0, 1], "columns": {}}"#,
            r#"{"entities": [], "columns": {"Hp": []}}"#,
            r#"{"entities": [0], "columns": {"Hp": [1]}}, {"entities": [1], "columns": {"Hp": [2], "Marker": [null]}}"#,
            r#"{"entities": [0], "columns": {"Hp": [1]}}, {"entities": [0], "columns": {"Marker": [null]}}"#,
            r#"{"entities": [0, 1], "columns": {"Hp": [1, 2], "Mood": ["Calm", {"Angry": 3}]}}"#,
            r#"{"columns": {"Hp": [1]}, "entities": [0]}"#,
            r#"{"entities": [0]}"#,
            r#"{"columns": {"Hp": [1]}}"#,
            r#"{"entities": [0], "columns": {"Hp": [1]}, "extra": 1}"#,
            r#"{"entities": [1.0], "columns": {"Hp": [1]}}"#,
            r#"{"entities": [-1], "columns": {"Hp": [1]}}"#,
            r#"{"entities": [01], "columns": {"Hp": [1]}}"#,
            r#"{"entities": [4294967296], "columns": {"Hp": [1]}}"#,
            r#"{"entities": ["zero"], "columns": {"Hp": [1]}}"#,
            r#"{"entities": [0, 1], "columns": {"Links": [{"leader": "1v1", "all": ["0v1"], "weights": {}, "letter": "a"}, {"leader": null, "all": [], "weights": {}, "letter": "b"}]}}"#,
        ];
        for tables in json_cases {
            let data = json_tables(3, tables);
            let fast = load(&registry, Text::Json, &data);
            let slow = through_trees(&registry, Text::Json, &data);
            match (&fast, &slow) {
                (Ok(fast), Ok(slow)) => assert_same_world(fast, slow),
                _ => assert_eq!(fast.as_ref().err(), slow.as_ref().err(), "{tables}"),
            }
        }
        let ron_cases = [
            r#"(entities: [0, 1], columns: {"Hp": [1, 2]})"#,
            r#"(entities: [0, "3v2"], columns: {"Hp": [1, 2], "Marker": [(), ()]},)"#,
            r#"(entities: [0, 1], columns: {"Hp": [1]})"#,
            r#"(entities: [0, 1], columns: {"Position": [(x: NaN, y: inf), (x: 1e39, y: 0)]})"#,
            r#"(entities: [0, 1], columns: {"Hp": [1, 2], "Stunned": [5]}, rows: {"Stunned": [1]})"#,
            r#"(entities: [0, 1], columns: {"Hp": [1, 2], "Stunned": [5]}, rows: {"Stunned": [3]})"#,
            r#"(entities: [0, 1], columns: {"Hp": [1, 2], "Mood": [Calm, {"Angry": 3}]})"#,
            r#"(entities: [0], columns: {"Hp": [1]}), (entities: [1], columns: {"Hp": [2]}),"#,
            r#"(entities: [0], columns: {"Hp": [1,]},)"#,
        ];
        for tables in ron_cases {
            let data = ron_tables(3, tables);
            let fast = load(&registry, Text::Ron, &data);
            let slow = through_trees(&registry, Text::Ron, &data);
            match (&fast, &slow) {
                (Ok(fast), Ok(slow)) => assert_same_world(fast, slow),
                _ => assert_eq!(fast.as_ref().err(), slow.as_ref().err(), "{tables}"),
            }
        }
    }

    #[test]
    fn columnar_errors_name_the_entity_component_and_field() {
        let registry = registered().serde_registry();
        let e = |bits: u64| Entity::from_bits(bits).unwrap();
        let data = json_tables(
            3,
            r#"{"entities": [0, "3v2"], "columns": {"Position": [{"x": 1, "y": 2}, {"x": 1e39, "y": 0}]}}"#,
        );
        match load(&registry, Text::Json, &data).err() {
            Some(LoadError::Component { entity, component, field, .. }) => {
                assert_eq!((entity, component.as_str(), field.as_str()), (e((2 << 32) | 3), "Position", "x"))
            }
            other => panic!("{other:?}"),
        }
        let data = json_tables(3, r#"{"entities": [0, 2], "columns": {"Hp": [1, 2], "Helth": [3, 4]}}"#);
        assert_eq!(
            load(&registry, Text::Json, &data).err(),
            Some(LoadError::UnknownComponent { entity: e(1 << 32), component: "Helth".into(), suggestion: None })
        );
        let data = json_tables(
            3,
            r#"{"entities": [0], "columns": {"Hp": [1]}}, {"entities": [0], "columns": {"Marker": [null]}}"#,
        );
        assert_eq!(load(&registry, Text::Json, &data).err(), Some(LoadError::DuplicateEntity { entity: e(1 << 32) }));
        let data = json_tables(3, r#"{"entities": [0, 1], "columns": {"Hp": [1]}}"#);
        match load(&registry, Text::Json, &data).err() {
            Some(LoadError::Syntax { format: Format::Json, message, .. }) => {
                assert_eq!(message, "the column of `Hp` holds 1 values for 2 rows")
            }
            other => panic!("{other:?}"),
        }
    }

    /// A JSON save holding `entities` (the entity map's inside).
    fn json(slots: u32, entities: &str) -> String {
        format!(
            r#"{{"format": "ecs-save", "version": 1, "allocator": {{"generations": [[{slots}, 1]], "free": []}},
                "entities": {{{entities}}}, "resources": {{}}, "skipped": []}}"#
        )
    }

    /// A RON save holding `entities`.
    fn ron(slots: u32, entities: &str) -> String {
        format!(
            r#"(format: "ecs-save", version: 1, allocator: (generations: [({slots}, 1)], free: []),
                entities: {{{entities}}}, resources: {{}}, skipped: [],)"#
        )
    }

    #[test]
    fn odd_files_load_or_fail_as_through_trees() {
        let registry = registered().serde_registry();
        let json_cases = [
            r#""0v1": {"Position": {"x": 1e39, "y": 0}}"#,
            r#""0v1": {"Position": {"x": 3.4028235e38, "y": 1e300}}"#,
            r#""0v1": {"Position": {"x": 1, "y": -0}}"#,
            r#""0v1": {"Position": {"x": 1.0, "y": 2.0, "z": 3.0}}"#,
            r#""0v1": {"Position": {"x": 1.0}}"#,
            r#""0v1": {"Position": [1.0, 2.0]}"#,
            r#""0v1": {"Position": [1.0, 2.0, 3.0]}"#,
            r#""0v1": {"Position": {"x": 1.0, "x": 2.0, "y": 0}}"#,
            r#""0v1": {"Pair": [1, 2]}"#,
            r#""0v1": {"Pair": [1, 2, 3]}"#,
            r#""0v1": {"Pair": [1000, 2]}"#,
            r#""0v1": {"Hp": 3.0}"#,
            r#""0v1": {"Hp": "3"}"#,
            r#""0v1": {"Marker": null}"#,
            r#""0v1": {"Marker": {}}"#,
            r#""0v1": {"Marker": []}"#,
            r#""0v1": {"Mood": "Calm"}"#,
            r#""0v1": {"Mood": {"Calm": null}}"#,
            r#""0v1": {"Mood": {"Angry": 3}}"#,
            r#""0v1": {"Mood": "Angry"}"#,
            r#""0v1": {"Mood": {"Torn": [1, "x"]}}"#,
            r#""0v1": {"Mood": {"Scared": {"of": "x", "level": 1}}}"#,
            r#""0v1": {"Mood": {"Scared": {"of": "x", "levl": 1}}}"#,
            r#""0v1": {"Mood": {"Angry": 3, "Calm": null}}"#,
            r#""0v1": {"Mood": "Bored"}"#,
            r#""0v1": {"Links": {"leader": "0v1", "all": ["0v1", "1v1"], "weights": {"0v1": 3}, "letter": "a"}}"#,
            r#""0v1": {"Links": {"leader": null, "all": ["banana"], "weights": {}, "letter": "a"}}"#,
            r#""0v1": {"Links": {"leader": 4294967296, "all": [], "weights": {}, "letter": "ab"}}"#,
            r#""0v1": {"Keyed": {"1": 2}}"#,
            r#""0v1": {"Loose": 4}"#,
            r#""0v1": {"Hp": 1, "Hp": 2}"#,
            r#""0v1": {"Helth": 1}"#,
            r#""0v1": {}, "0v1": {}"#,
            r#""0v1": {"Hp": 1}, "1v1": {"Position": {"x": 0, "y": 0}}, "2v1": {"Hp": 2}"#,
            r#""0v1": {"Hp": 1, "Marker": null}, "1v1": {"Marker": null, "Hp": 2}"#,
            r#""zero": {}"#,
            r#""0v1": {"Hp": 1},"#,
        ];
        for entities in json_cases {
            let data = json(3, entities);
            let fast = load(&registry, Text::Json, &data);
            let slow = through_trees(&registry, Text::Json, &data);
            match (&fast, &slow) {
                (Ok(fast), Ok(slow)) => assert_same_world(fast, slow),
                _ => assert_eq!(fast.as_ref().err(), slow.as_ref().err(), "{entities}"),
            }
        }
        let ron_cases = [
            r#""0v1": {"Position": (x: 1e39, y: 0)}"#,
            r#""0v1": {"Position": (x: 1, y: inf)}"#,
            r#""0v1": {"Position": (x: NaN, y: 1.5f32)}"#,
            r#""0v1": {"Position": Position(x: 1.0, y: 2.0)}"#,
            r#""0v1": {"Position": Other(x: 1.0, y: 2.0)}"#,
            r#""0v1": {"Pair": [1, 2]}"#,
            r#""0v1": {"Pair": (1, 2)}"#,
            r#""0v1": {"Hp": 3}"#,
            r#""0v1": {"Hp": (3)}"#,
            r#""0v1": {"Marker": ()}"#,
            r#""0v1": {"Marker": Marker}"#,
            r#""0v1": {"Mood": "Calm"}"#,
            r#""0v1": {"Mood": Calm}"#,
            r#""0v1": {"Mood": {"Angry": 3}}"#,
            r#""0v1": {"Mood": Angry(3)}"#,
            r#""0v1": {"Mood": {"Torn": [1, "x"]}}"#,
            r#""0v1": {"Mood": {"Scared": (of: "x", level: 1)}}"#,
            r#""0v1": {"Mood": {"Scared": (of: "x", level: 1), "Calm": ()}}"#,
            r#""0v1": {"Links": (leader: Some("0v1"), all: ["0v1"], weights: {"0v1": 3}, letter: 'a')}"#,
            r#""0v1": {"Links": (leader: "0v1", all: [], weights: {}, letter: 'a')}"#,
            r#""0v1": {"Keyed": {1: 2}}"#,
            r#""0v1": {"Loose": 4}"#,
            r#""0v1": {"Hp": 1,}, "1v1": {},"#,
            r#""0v1": {"Hp": 1} /* note */"#,
        ];
        for entities in ron_cases {
            let data = ron(3, entities);
            let fast = load(&registry, Text::Ron, &data);
            let slow = through_trees(&registry, Text::Ron, &data);
            match (&fast, &slow) {
                (Ok(fast), Ok(slow)) => assert_same_world(fast, slow),
                _ => assert_eq!(fast.as_ref().err(), slow.as_ref().err(), "{entities}"),
            }
        }
    }
}
