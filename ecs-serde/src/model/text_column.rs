//! Text column functions for each registered type (model layer).
//!
//! The per-type functions behind compact JSON and RON saves: a text
//! column is the values of one component type in one table, each written
//! through [`Plain`] (what its tree would write) or as its tree.

use std::fmt;

use archetable_core::storage::Archetype;
use archetable_core::{Component, World};
use serde::Serialize;

use crate::model::error::Format;
use crate::model::plain::{At, JsonRules, Plain, RonRules};
use crate::model::to_value::{to_value, ToValueError};
use crate::model::value::Value;

/// The values of one component type in one table, for a text save.
pub(crate) trait TextColumn {
    /// Appends row `row`'s value, compact, through [`Plain`]; false if it
    /// must be written through its tree instead (what was appended is for
    /// the caller to cut).
    #[cfg(test)]
    fn write(&self, row: usize, text: Text, out: &mut Vec<u8>) -> bool;

    /// Appends the table's whole column as one list (`[v,v,..]`), written
    /// by the format's own list with each value through [`Plain`]: the
    /// usual case, a column stored as a slice whose values [`Plain`]
    /// writes. False if it is not that case (what was appended is for the
    /// caller to cut, and [`TextColumn::write_list`] to write).
    fn write_all(&self, text: Text, out: &mut Vec<u8>) -> bool;

    /// Appends the values of items `from..` of `rows` (every row of the
    /// table if `None`), each after a comma but the first item's, through
    /// [`Plain`]. Stops at a value that must be written through its tree:
    /// returns its item and where its text starts (what was appended from
    /// there is for the caller to cut).
    fn write_list(
        &self,
        rows: Option<&[u32]>,
        from: usize,
        text: Text,
        out: &mut Vec<u8>,
    ) -> Result<(), (usize, usize)>;

    /// Row `row`'s value as a tree.
    fn tree(&self, row: usize) -> Result<Value, ToValueError>;
}

/// Appends `value` through [`Plain`]; false if it must be written through
/// its tree.
#[inline]
fn write_plain<T: Serialize>(value: &T, text: Text, out: &mut Vec<u8>) -> bool {
    match text {
        Text::Json => {
            let mut serializer = serde_json::Serializer::new(out);
            value.serialize(Plain::new(&mut serializer, JsonRules)).is_ok()
        }
        Text::Ron => match ron::Serializer::new(Utf8(out), None) {
            Ok(mut serializer) => value.serialize(Plain::new(&mut serializer, RonRules)).is_ok(),
            Err(_) => false,
        },
    }
}

/// The column of `T` in `table`, for a text save.
pub(crate) fn column_of<'w, T: Component + Serialize>(
    world: &'w World,
    table: &'w Archetype,
) -> Box<dyn TextColumn + 'w> {
    let values = world.components().id::<T>().and_then(|id| table.column_slice::<T>(id));
    Box::new(Rows { values, world, table })
}

/// A table's values of `T`: its column, or should the type be stored
/// elsewhere, each entity's value.
struct Rows<'w, T> {
    values: Option<&'w [T]>,
    world: &'w World,
    table: &'w Archetype,
}

impl<T: Component> Rows<'_, T> {
    #[inline]
    fn value(&self, row: usize) -> &T {
        match self.values {
            Some(values) => &values[row],
            None => self
                .world
                .get::<T>(self.world.table_entity(self.table, row))
                .expect("written only for entities that have it"),
        }
    }
}

impl<T: Component + Serialize> TextColumn for Rows<'_, T> {
    #[cfg(test)]
    fn write(&self, row: usize, text: Text, out: &mut Vec<u8>) -> bool {
        write_plain(self.value(row), text, out)
    }

    fn write_all(&self, text: Text, out: &mut Vec<u8>) -> bool {
        use serde::Serializer;
        let Some(values) = self.values else { return false };
        match text {
            Text::Json => {
                let items = values.iter().map(|value| At::top(value, JsonRules));
                serde_json::Serializer::new(out).collect_seq(items).is_ok()
            }
            Text::Ron => match ron::Serializer::new(Utf8(out), None) {
                Ok(mut serializer) => {
                    (&mut serializer).collect_seq(values.iter().map(|value| At::top(value, RonRules))).is_ok()
                }
                Err(_) => false,
            },
        }
    }

    fn write_list(
        &self,
        rows: Option<&[u32]>,
        from: usize,
        text: Text,
        out: &mut Vec<u8>,
    ) -> Result<(), (usize, usize)> {
        // Each item: `Ok`, or `Err` with where a value to write through its
        // tree starts.
        let mut item = |i: usize, value: &T| -> Result<(), (usize, usize)> {
            if i > 0 {
                out.push(b',');
            }
            let start = out.len();
            if !write_plain(value, text, out) {
                return Err((i, start));
            }
            Ok(())
        };
        match (self.values, rows) {
            (Some(values), None) => values.iter().enumerate().skip(from).try_for_each(|(i, value)| item(i, value)),
            (_, None) => (from..self.table.len()).try_for_each(|i| item(i, self.value(i))),
            (_, Some(rows)) => {
                rows.iter().enumerate().skip(from).try_for_each(|(i, &row)| item(i, self.value(row as usize)))
            }
        }
    }

    fn tree(&self, row: usize) -> Result<Value, ToValueError> {
        to_value(self.value(row))
    }
}

/// A text format.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Text {
    Json,
    Ron,
}

impl Text {
    pub(crate) fn format(self) -> Format {
        match self {
            Text::Json => Format::Json,
            Text::Ron => Format::Ron,
        }
    }
}

/// Writes into a byte vector what a RON serializer writes as text.
pub(crate) struct Utf8<'a>(pub &'a mut Vec<u8>);

impl fmt::Write for Utf8<'_> {
    #[inline]
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.0.extend_from_slice(s.as_bytes());
        Ok(())
    }
}
