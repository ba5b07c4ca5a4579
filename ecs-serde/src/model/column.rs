//! Binary column functions for each registered type (model layer).
//!
//! The per-type functions behind binary saves: a column is the values of one
//! component type in one table, written back to back.
//!
//! A column is written *typed* (each value straight through postcard, no
//! field names, no tree in between) when its values read back that way,
//! as decided from the type's reader once, at registration, and from what
//! each value writes (`typed.rs`); saving never calls `Deserialize`.
//! Otherwise (a type that needs a self-describing format, such as
//! `#[serde(flatten)]`, untagged enums or skipped fields, or whose
//! `Serialize` postcard refuses) the column is written as [`Value`] trees,
//! as binary saves of version 1 held every value.
//!
//! Both are read with the nesting limit of `depth.rs`. Typed values follow
//! their type, so only a component type that contains itself (`Box<Self>`,
//! `Vec<Self>`) nests as deep as the file says; their reads go through a
//! [`Guard`] that counts the levels.

use std::any::Any;

use archetable_core::storage::Archetype;
use archetable_core::{ColumnBatch, Component, Entity, World};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde::Serialize;

use crate::model::depth::{too_deep, DepthCount, Guard, MAX_DEPTH, MAX_RON_DEPTH};
use crate::model::entity_probe::holds_entity;
use crate::model::error::Format;
use crate::model::from_value::{from_value, Context, EntityMapping, FromValueError};
use crate::model::strict::Strictly;
use crate::model::to_value::{to_binary_tree, to_value};
use crate::model::typed::{Fit, Sink, TypedPlan};
use crate::model::value::Value;
use crate::model::writable::unwritable;

/// A component or resource value of a type known only to its entry.
pub(crate) type Boxed = Box<dyn Any + Send>;

/// Reserve at most this many bytes of values before writing or reading
/// them.
pub(crate) const PREALLOCATE_BYTES: usize = 64 << 20;

/// A column being read: the values, and the rows whose values hold entity
/// handles (with their trees, to be read again once the handles are known).
pub(crate) struct ReadColumn {
    /// A `Vec<T>`.
    pub values: Boxed,
    pub rebuild: Vec<(usize, Value)>,
}

/// Why a value could not be written: its entity, the path of the field,
/// and the message.
pub(crate) type WriteError = (Entity, String, String);

/// Appends the values of one table's column to the output, typed where
/// the plan allows and as trees otherwise: every row's, or those of the
/// listed rows (a component in sparse storage, which only some of the
/// table's entities have). Returns whether it wrote trees. Fails with the
/// entity, field and message.
type WriteFn = fn(&World, &Archetype, Option<&[u32]>, &TypedPlan, &mut Vec<u8>) -> Result<bool, WriteError>;
/// Reads a column; fails with the row and message.
type ReadTypedFn = fn(&[u8], usize) -> Result<ReadColumn, (usize, String)>;
/// Reads a column of trees; fails with the row and error.
type ReadTreesFn = fn(Vec<Value>, &Context<'_>) -> Result<ReadColumn, (usize, FromValueError)>;
/// A pass over a column read; fails with the row and error.
type PassFn = fn(&mut ReadColumn, &Context<'_>) -> Result<(), (usize, FromValueError)>;

/// How to write, read and insert columns of one component type.
#[derive(Clone, Copy)]
pub(crate) struct ColumnFns {
    /// Appends one table's column; see [`WriteFn`].
    pub write: WriteFn,
    /// Reads `count` typed values from the bytes; fails with the row.
    pub read_typed: ReadTypedFn,
    /// Reads values from trees, mapping handles through the context, and
    /// keeps the trees of the values that met a handle.
    pub read_trees: ReadTreesFn,
    /// Finds the values of a typed column that hold handles, and checks
    /// that their trees read back through the context.
    pub find_handles: PassFn,
    /// Reads the rows to rebuild again through the context.
    pub rebuild: PassFn,
    /// Adds the values (a `Vec<T>` with one value per row) to a batch as
    /// its column of `T`.
    pub into_batch: fn(Boxed, &mut ColumnBatch),
    /// An empty `Vec<T>`, for a text load to push to.
    pub new_values: fn() -> Boxed,
    /// Reads one value from the JSON text at the start of the `&str`
    /// through [`Strictly`], pushes it and returns the bytes it took; `None`
    /// (nothing pushed) if it must be read through its tree.
    pub read_json: fn(&str, &mut Boxed) -> Option<usize>,
    /// The same, from RON text.
    pub read_ron: fn(&str, &mut Boxed) -> Option<usize>,
    /// Reads a whole list of values from the JSON text at the start of the
    /// `&str` (`[v, v, ..]`) through [`Strictly`], pushes them and returns
    /// the bytes it took and how many values; `None` (nothing pushed) if
    /// one of them must be read through its tree.
    pub read_json_list: fn(&str, &mut Boxed) -> Option<(usize, usize)>,
    /// The same, from RON text.
    pub read_ron_list: fn(&str, &mut Boxed) -> Option<(usize, usize)>,
    /// Builds a value from its tree (handles kept) and pushes it.
    pub push_tree: fn(&Value, &mut Boxed) -> Result<(), FromValueError>,
    /// Deals the values out to tables: `tables[i]` is the table of value
    /// `i`; returns each table's values, for tables `0..count`.
    pub deal: fn(Boxed, &[u32], usize) -> Vec<Boxed>,
    /// Whether `T` uses sparse storage: its values are inserted entity by
    /// entity (`insert_each`) rather than placed with a table.
    pub sparse: bool,
    /// Inserts value `i` of the `Vec<T>` into entity `i` of the list.
    pub insert_each: fn(Boxed, &[Entity], &mut World),
}

impl ColumnFns {
    pub(crate) fn of<T: Component + Serialize + DeserializeOwned>() -> ColumnFns {
        ColumnFns {
            write: write::<T>,
            read_typed: read_typed::<T>,
            read_trees: read_trees::<T>,
            find_handles: find_handles::<T>,
            rebuild: rebuild::<T>,
            into_batch: |values, batch| {
                batch.add(downcast::<Vec<T>>(values));
            },
            new_values: || Box::new(Vec::<T>::new()),
            read_json: read_json::<T>,
            read_ron: read_ron::<T>,
            read_json_list: read_json_list::<T>,
            read_ron_list: read_ron_list::<T>,
            push_tree: |tree, values| {
                let value = from_value::<T>(tree, &Context::new(EntityMapping::Keep))?;
                values_of::<T>(values).push(value);
                Ok(())
            },
            deal: deal::<T>,
            sparse: T::STORAGE == archetable_core::StorageType::Sparse,
            insert_each: |values, entities, world| {
                for (value, &entity) in downcast::<Vec<T>>(values).into_iter().zip(entities) {
                    world.insert(entity, value).expect("loaded entities are alive");
                }
            },
        }
    }
}

fn values_of<T: Any>(values: &mut Boxed) -> &mut Vec<T> {
    values.downcast_mut::<Vec<T>>().unwrap_or_else(|| unreachable!("a column of another type"))
}

fn read_json<T: Component + DeserializeOwned>(text: &str, values: &mut Boxed) -> Option<usize> {
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<Strictly<T, false, MAX_DEPTH>>();
    let Some(Ok(Strictly(value))) = stream.next() else { return None };
    values_of::<T>(values).push(value);
    Some(stream.byte_offset())
}

fn read_ron<T: Component + DeserializeOwned>(text: &str, values: &mut Boxed) -> Option<usize> {
    let mut deserializer = ron::Deserializer::from_str(text).ok()?;
    let Strictly(value) = Strictly::<T, true, MAX_RON_DEPTH>::deserialize(&mut deserializer).ok()?;
    values_of::<T>(values).push(value);
    Some(text.len() - deserializer.remainder().len())
}

/// A list of `T`, each read through [`Strictly`].
struct StrictList<T, const RON: bool, const LIMIT: usize>(Vec<T>);

impl<'de, T: DeserializeOwned, const RON: bool, const LIMIT: usize> Deserialize<'de> for StrictList<T, RON, LIMIT> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V<T, const RON: bool, const LIMIT: usize>(std::marker::PhantomData<T>);
        impl<'de, T: DeserializeOwned, const RON: bool, const LIMIT: usize> serde::de::Visitor<'de> for V<T, RON, LIMIT> {
            type Value = StrictList<T, RON, LIMIT>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a list of values")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                // Text: the list holds at most one value per two bytes,
                // so a hint is never far off; still, keep it modest.
                let mut values = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
                while let Some(Strictly(value)) = seq.next_element::<Strictly<T, RON, LIMIT>>()? {
                    values.push(value);
                }
                Ok(StrictList(values))
            }
        }
        deserializer.deserialize_seq(V::<T, RON, LIMIT>(std::marker::PhantomData))
    }
}

/// Appends `read` to the `Vec<T>` in `values`; returns how many.
fn push_all<T: Any>(values: &mut Boxed, read: Vec<T>) -> usize {
    let count = read.len();
    let values = values_of::<T>(values);
    if values.is_empty() {
        *values = read;
    } else {
        values.extend(read);
    }
    count
}

fn read_json_list<T: Component + DeserializeOwned>(text: &str, values: &mut Boxed) -> Option<(usize, usize)> {
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<StrictList<T, false, MAX_DEPTH>>();
    let Some(Ok(StrictList(read))) = stream.next() else { return None };
    Some((stream.byte_offset(), push_all(values, read)))
}

fn read_ron_list<T: Component + DeserializeOwned>(text: &str, values: &mut Boxed) -> Option<(usize, usize)> {
    let mut deserializer = ron::Deserializer::from_str(text).ok()?;
    let StrictList(read) = StrictList::<T, true, MAX_RON_DEPTH>::deserialize(&mut deserializer).ok()?;
    Some((text.len() - deserializer.remainder().len(), push_all(values, read)))
}

fn deal<T: Component>(values: Boxed, tables: &[u32], count: usize) -> Vec<Boxed> {
    let values = downcast::<Vec<T>>(values);
    debug_assert_eq!(values.len(), tables.len());
    let mut dealt: Vec<Vec<T>> = (0..count).map(|_| Vec::new()).collect();
    for (value, &table) in values.into_iter().zip(tables) {
        dealt[table as usize].push(value);
    }
    dealt.into_iter().map(|values| Box::new(values) as Boxed).collect()
}

fn downcast<T: Any>(value: Boxed) -> T {
    *value.downcast::<T>().unwrap_or_else(|_| unreachable!("a column of another type"))
}

fn values_mut<T: Any>(column: &mut ReadColumn) -> &mut Vec<T> {
    column.values.downcast_mut::<Vec<T>>().unwrap_or_else(|| unreachable!("a column of another type"))
}

fn write<T: Component + Serialize>(
    world: &World,
    table: &Archetype,
    rows: Option<&[u32]>,
    plan: &TypedPlan,
    out: &mut Vec<u8>,
) -> Result<bool, WriteError> {
    // The table's column as a slice; an entity's value one by one should
    // the type be stored elsewhere.
    let column = match rows {
        None => world.components().id::<T>().and_then(|id| table.column_slice::<T>(id)),
        Some(_) => None,
    };
    let count = rows.map_or(table.len(), <[u32]>::len);
    let row_of = |i: usize| rows.map_or(i, |rows| rows[i] as usize);
    let value_at = |row: usize| -> &T {
        match column {
            Some(values) => &values[row],
            None => world.get::<T>(world.table_entity(table, row)).expect("the table's entities have the component"),
        }
    };
    let start = out.len();
    let writer = plan.writer();
    let mut written = 0;
    if let Some(values) = column {
        for value in values {
            if writer.write(value, out) != Fit::Typed {
                break;
            }
            if written == 0 {
                // Values of one type tend to take alike room; but the
                // first may be a large one.
                let guess = (out.len() - start).saturating_mul(values.len()) + values.len() / 4;
                out.reserve(guess.min(PREALLOCATE_BYTES));
            }
            written += 1;
        }
    } else {
        while written < count && writer.write(value_at(row_of(written)), out) == Fit::Typed {
            written += 1;
        }
    }
    if written == count {
        return Ok(false);
    }
    // The tree's error names the problem better than postcard's does, if
    // the value cannot be written at all; so does its path, if the value
    // nests too deep.
    let entity = world.table_entity(table, row_of(written));
    let tree = to_value(value_at(row_of(written))).map_err(|e| (entity, String::new(), e.0))?;
    if let Some((field, message)) = unwritable(&tree, Format::Binary) {
        return Err((entity, field, message));
    }
    out.truncate(start);
    for row in (0..count).map(row_of) {
        let entity = world.table_entity(table, row);
        let tree = to_binary_tree(value_at(row), plan).map_err(|e| (entity, String::new(), e.0))?;
        if let Some((field, message)) = unwritable(&tree, Format::Binary) {
            return Err((entity, field, message));
        }
        append(&tree, out).map_err(|e| (entity, String::new(), e.to_string()))?;
    }
    Ok(true)
}

/// Appends the postcard encoding of `value` to `out`.
pub(crate) fn append<T: Serialize + ?Sized>(value: &T, out: &mut Vec<u8>) -> postcard::Result<()> {
    value.serialize(&mut postcard::Serializer { output: Sink(out) })
}

fn read_typed<T: Component + DeserializeOwned>(bytes: &[u8], count: usize) -> Result<ReadColumn, (usize, String)> {
    let mut deserializer = postcard::Deserializer::from_bytes(bytes);
    let depth = DepthCount::default();
    // Every typed value but those of zero-sized encodings takes a byte; and
    // a hostile count of large values must not reserve much up front.
    let cautious = (PREALLOCATE_BYTES / std::mem::size_of::<T>().max(1)).max(1);
    let mut values: Vec<T> = Vec::with_capacity(count.min(bytes.len()).min(cautious));
    for row in 0..count {
        match T::deserialize(Guard::new(&mut deserializer, &depth)) {
            Ok(value) => values.push(value),
            // Postcard drops the message of the guard's error.
            Err(_) if depth.exceeded() => return Err((row, too_deep(MAX_DEPTH))),
            Err(e) => return Err((row, e.to_string())),
        }
    }
    let rest = deserializer.finalize().map_err(|e| (count, e.to_string()))?;
    if !rest.is_empty() {
        return Err((count, format!("{} bytes follow the last value of the column", rest.len())));
    }
    Ok(ReadColumn { values: Box::new(values), rebuild: Vec::new() })
}

fn read_trees<T: Component + DeserializeOwned>(
    trees: Vec<Value>,
    cx: &Context<'_>,
) -> Result<ReadColumn, (usize, FromValueError)> {
    let mut values: Vec<T> = Vec::with_capacity(trees.len());
    let mut rebuild = Vec::new();
    cx.take_met_entity();
    for (row, tree) in trees.into_iter().enumerate() {
        values.push(from_value(&tree, cx).map_err(|e| (row, e))?);
        if cx.take_met_entity() {
            rebuild.push((row, tree));
        }
    }
    Ok(ReadColumn { values: Box::new(values), rebuild })
}

fn find_handles<T: Component + Serialize + DeserializeOwned>(
    column: &mut ReadColumn,
    cx: &Context<'_>,
) -> Result<(), (usize, FromValueError)> {
    let mut found = Vec::new();
    for (row, value) in values_mut::<T>(column).iter().enumerate() {
        if holds_entity(value) == Some(false) {
            continue;
        }
        let tree = to_value(value).map_err(|e| (row, <FromValueError as serde::de::Error>::custom(e)))?;
        from_value::<T>(&tree, cx).map_err(|e| (row, e))?;
        found.push((row, tree));
    }
    column.rebuild = found;
    Ok(())
}

fn rebuild<T: Component + DeserializeOwned>(
    column: &mut ReadColumn,
    cx: &Context<'_>,
) -> Result<(), (usize, FromValueError)> {
    let rows = std::mem::take(&mut column.rebuild);
    let values = values_mut::<T>(column);
    for (row, tree) in &rows {
        values[*row] = from_value(tree, cx).map_err(|e| (*row, e))?;
    }
    Ok(())
}
