//! The `Value` tree between types and files (model layer).
//!
//! `Value`: the format-neutral tree every component passes through on its
//! way to and from a file. Prefabs merge these trees field by field; save
//! files hold one per component.
//!
//! In human-readable formats (JSON, RON) a `Value` is written as the plain
//! data it holds. In binary formats, which do not describe themselves, each
//! node is written behind a one-byte tag, and a struct whose fields were all
//! written keeps only their values, in declaration order.

use std::cell::Cell;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess, VariantAccess, Visitor};
use serde::ser::{SerializeMap, SerializeSeq, SerializeStruct, SerializeTuple, Serializer};
use serde::{Deserialize, Serialize};

use crate::model::depth::too_deep;

/// Preallocate at most this many elements for a length read from a file.
const CAUTIOUS_CAPACITY: usize = 4096;

/// One node of a component's data.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Value {
    Unit,
    Bool(bool),
    I64(i64),
    U64(u64),
    F32(f32),
    F64(f64),
    Char(char),
    String(String),
    Bytes(Vec<u8>),
    Option(Option<Box<Value>>),
    Seq(Vec<Value>),
    Map(Vec<(Value, Value)>),
    /// A struct with named fields, as its `Serialize` impl wrote it.
    /// `complete` is false when the impl skipped some fields.
    Struct {
        fields: Vec<(&'static str, Value)>,
        complete: bool,
    },
    /// An enum variant that holds data, as its `Serialize` impl wrote it.
    /// (Unit variants are `String`s; files hold variants as one-entry maps.)
    Variant(Box<(&'static str, Value)>),
}

impl Value {
    /// The text of a string node.
    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// A short description of the node's kind, for error messages.
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Value::Unit => "unit",
            Value::Bool(_) => "a boolean",
            Value::I64(_) | Value::U64(_) => "an integer",
            Value::F32(_) | Value::F64(_) => "a number",
            Value::Char(_) => "a character",
            Value::String(_) => "a string",
            Value::Bytes(_) => "bytes",
            Value::Option(None) => "none",
            Value::Option(Some(_)) => "an option",
            Value::Seq(_) => "a list",
            Value::Map(_) | Value::Struct { .. } | Value::Variant(_) => "a map",
        }
    }
}

// ---------------------------------------------------------------------------
// Writing

/// The binary tags, in tag order.
const TAGS: &[&str] =
    &["Unit", "Bool", "I64", "U64", "F32", "F64", "Char", "String", "Bytes", "None", "Some", "Seq", "Map"];

#[derive(Clone, Copy)]
#[repr(u32)]
enum Tag {
    Unit,
    Bool,
    I64,
    U64,
    F32,
    F64,
    Char,
    String,
    Bytes,
    None,
    Some,
    Seq,
    Map,
}

impl Tag {
    fn name(self) -> &'static str {
        TAGS[self as usize]
    }

    fn from_index(index: u64) -> Option<Tag> {
        const ALL: [Tag; 13] = [
            Tag::Unit,
            Tag::Bool,
            Tag::I64,
            Tag::U64,
            Tag::F32,
            Tag::F64,
            Tag::Char,
            Tag::String,
            Tag::Bytes,
            Tag::None,
            Tag::Some,
            Tag::Seq,
            Tag::Map,
        ];
        ALL.get(usize::try_from(index).ok()?).copied()
    }
}

impl Serialize for Value {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if serializer.is_human_readable() {
            serialize_plain(self, serializer)
        } else {
            serialize_tagged(self, serializer)
        }
    }
}

fn serialize_plain<S: Serializer>(value: &Value, serializer: S) -> Result<S::Ok, S::Error> {
    match value {
        Value::Unit => serializer.serialize_unit(),
        Value::Bool(b) => serializer.serialize_bool(*b),
        Value::I64(n) => serializer.serialize_i64(*n),
        Value::U64(n) => serializer.serialize_u64(*n),
        Value::F32(x) => serializer.serialize_f32(*x),
        Value::F64(x) => serializer.serialize_f64(*x),
        Value::Char(c) => serializer.serialize_char(*c),
        Value::String(s) => serializer.serialize_str(s),
        Value::Bytes(b) => serializer.serialize_bytes(b),
        Value::Option(None) => serializer.serialize_none(),
        Value::Option(Some(v)) => serializer.serialize_some(v.as_ref()),
        Value::Seq(items) => {
            let mut seq = serializer.serialize_seq(Some(items.len()))?;
            for item in items {
                seq.serialize_element(item)?;
            }
            seq.end()
        }
        Value::Map(entries) => {
            let mut map = serializer.serialize_map(Some(entries.len()))?;
            for (k, v) in entries {
                map.serialize_entry(k, v)?;
            }
            map.end()
        }
        Value::Struct { fields, .. } => {
            // Formats that write struct names do not write this one (RON only
            // checks that it is an identifier).
            let mut st = serializer.serialize_struct("Struct", fields.len())?;
            for (name, v) in fields {
                st.serialize_field(name, v)?;
            }
            st.end()
        }
        Value::Variant(variant) => {
            let mut map = serializer.serialize_map(Some(1))?;
            map.serialize_entry(variant.0, &variant.1)?;
            map.end()
        }
    }
}

/// A list of values written as one tagged sequence.
struct TaggedSeq<'a, I>(&'a I);

fn serialize_tagged<S: Serializer>(value: &Value, serializer: S) -> Result<S::Ok, S::Error> {
    let tag = |t: Tag| ("Value", t as u32, t.name());
    match value {
        Value::Unit => serializer.serialize_unit_variant("Value", Tag::Unit as u32, Tag::Unit.name()),
        Value::Option(None) => serializer.serialize_unit_variant("Value", Tag::None as u32, Tag::None.name()),
        Value::Bool(b) => {
            let (n, i, v) = tag(Tag::Bool);
            serializer.serialize_newtype_variant(n, i, v, b)
        }
        Value::I64(x) => {
            let (n, i, v) = tag(Tag::I64);
            serializer.serialize_newtype_variant(n, i, v, x)
        }
        Value::U64(x) => {
            let (n, i, v) = tag(Tag::U64);
            serializer.serialize_newtype_variant(n, i, v, x)
        }
        Value::F32(x) => {
            let (n, i, v) = tag(Tag::F32);
            serializer.serialize_newtype_variant(n, i, v, x)
        }
        Value::F64(x) => {
            let (n, i, v) = tag(Tag::F64);
            serializer.serialize_newtype_variant(n, i, v, x)
        }
        Value::Char(c) => {
            let (n, i, v) = tag(Tag::Char);
            serializer.serialize_newtype_variant(n, i, v, c)
        }
        Value::String(s) => {
            let (n, i, v) = tag(Tag::String);
            serializer.serialize_newtype_variant(n, i, v, s)
        }
        Value::Bytes(b) => {
            let (n, i, v) = tag(Tag::Bytes);
            serializer.serialize_newtype_variant(n, i, v, &Bytes(b))
        }
        Value::Option(Some(inner)) => {
            let (n, i, v) = tag(Tag::Some);
            serializer.serialize_newtype_variant(n, i, v, inner.as_ref())
        }
        Value::Seq(items) => {
            let (n, i, v) = tag(Tag::Seq);
            serializer.serialize_newtype_variant(n, i, v, &TaggedSeq(items))
        }
        Value::Struct { fields, complete: true } => {
            let (n, i, v) = tag(Tag::Seq);
            serializer.serialize_newtype_variant(n, i, v, &TaggedSeq(fields))
        }
        Value::Map(entries) => {
            let (n, i, v) = tag(Tag::Map);
            serializer.serialize_newtype_variant(n, i, v, &TaggedSeq(entries))
        }
        Value::Struct { fields, complete: false } => {
            let (n, i, v) = tag(Tag::Map);
            serializer.serialize_newtype_variant(n, i, v, &TaggedSeq(&NamedFields(fields)))
        }
        Value::Variant(variant) => {
            let (n, i, v) = tag(Tag::Map);
            serializer.serialize_newtype_variant(n, i, v, &TaggedSeq(&OneVariant(variant)))
        }
    }
}

struct Bytes<'a>(&'a [u8]);

impl Serialize for Bytes<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bytes(self.0)
    }
}

struct NamedFields<'a>(&'a [(&'static str, Value)]);
struct OneVariant<'a>(&'a (&'static str, Value));

/// Something a `TaggedSeq` can list: its length and its items, each written
/// by `write`.
trait TaggedItems {
    fn count(&self) -> usize;
    fn write_items<S: SerializeSeq>(&self, seq: &mut S) -> Result<(), S::Error>;
}

impl TaggedItems for Vec<Value> {
    fn count(&self) -> usize {
        self.len()
    }
    fn write_items<S: SerializeSeq>(&self, seq: &mut S) -> Result<(), S::Error> {
        self.iter().try_for_each(|v| seq.serialize_element(v))
    }
}

impl TaggedItems for Vec<(&'static str, Value)> {
    fn count(&self) -> usize {
        self.len()
    }
    fn write_items<S: SerializeSeq>(&self, seq: &mut S) -> Result<(), S::Error> {
        self.iter().try_for_each(|(_, v)| seq.serialize_element(v))
    }
}

/// A key and a value written as a pair.
struct Pair<'a, K: ?Sized>(&'a K, &'a Value);

impl<K: Serialize + ?Sized> Serialize for Pair<'_, K> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut t = serializer.serialize_tuple(2)?;
        t.serialize_element(self.0)?;
        t.serialize_element(self.1)?;
        t.end()
    }
}

impl TaggedItems for Vec<(Value, Value)> {
    fn count(&self) -> usize {
        self.len()
    }
    fn write_items<S: SerializeSeq>(&self, seq: &mut S) -> Result<(), S::Error> {
        self.iter().try_for_each(|(k, v)| seq.serialize_element(&Pair(k, v)))
    }
}

/// A struct's field name, written as a tagged string.
struct Key<'a>(&'a str);

impl Serialize for Key<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_newtype_variant("Value", Tag::String as u32, Tag::String.name(), self.0)
    }
}

impl TaggedItems for NamedFields<'_> {
    fn count(&self) -> usize {
        self.0.len()
    }
    fn write_items<S: SerializeSeq>(&self, seq: &mut S) -> Result<(), S::Error> {
        self.0.iter().try_for_each(|(k, v)| seq.serialize_element(&Pair(&Key(k), v)))
    }
}

impl TaggedItems for OneVariant<'_> {
    fn count(&self) -> usize {
        1
    }
    fn write_items<S: SerializeSeq>(&self, seq: &mut S) -> Result<(), S::Error> {
        seq.serialize_element(&Pair(&Key(self.0 .0), &self.0 .1))
    }
}

impl<I: TaggedItems> Serialize for TaggedSeq<'_, I> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.0.count()))?;
        self.0.write_items(&mut seq)?;
        seq.end()
    }
}

// ---------------------------------------------------------------------------
// Reading

/// A [`Value`] read with the nesting limit `LIMIT`.
#[derive(Debug)]
pub(crate) struct Limited<const LIMIT: usize>(pub Value);

impl<'de, const LIMIT: usize> Deserialize<'de> for Limited<LIMIT> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        ValueSeed::new(LIMIT).deserialize(deserializer).map(Limited)
    }
}

/// Reads one `Value`, refusing input nested past a limit (levels counted
/// as `depth.rs` says).
#[derive(Clone, Copy)]
pub(crate) struct ValueSeed<'c> {
    /// The level of the value to read.
    level: usize,
    /// The deepest level allowed.
    limit: usize,
    /// The limit the error message names.
    named_limit: usize,
    /// Set when a read is refused for its depth.
    exceeded: Option<&'c Cell<bool>>,
}

impl<'c> ValueSeed<'c> {
    /// A seed for a value that may nest `limit` levels.
    pub(crate) fn new(limit: usize) -> Self {
        ValueSeed { level: 0, limit, named_limit: limit, exceeded: None }
    }

    /// The same for a value holding `outer` levels (a prefab file's map of
    /// prefabs, each a map of components) around the values that may nest
    /// `limit` levels.
    pub(crate) fn with_outer_levels(self, outer: usize) -> Self {
        ValueSeed { limit: self.limit + outer, ..self }
    }

    /// The same, setting `exceeded` if the input is too deep (for formats
    /// that drop the messages of errors).
    pub(crate) fn flagging(self, exceeded: &'c Cell<bool>) -> Self {
        ValueSeed { exceeded: Some(exceeded), ..self }
    }

    /// The seed of the values one level down.
    fn child(self) -> Self {
        ValueSeed { level: self.level + 1, ..self }
    }

    fn check<E: de::Error>(self) -> Result<(), E> {
        if self.level > self.limit {
            if let Some(exceeded) = self.exceeded {
                exceeded.set(true);
            }
            return Err(E::custom(too_deep(self.named_limit)));
        }
        Ok(())
    }
}

impl<'de> DeserializeSeed<'de> for ValueSeed<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        self.check()?;
        if deserializer.is_human_readable() {
            deserializer.deserialize_any(PlainVisitor(self))
        } else {
            deserializer.deserialize_enum("Value", TAGS, TaggedVisitor(self))
        }
    }
}

struct PlainVisitor<'c>(ValueSeed<'c>);

impl<'de> Visitor<'de> for PlainVisitor<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Unit)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        Ok(Value::I64(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        Ok(Value::U64(v))
    }
    fn visit_i128<E: de::Error>(self, v: i128) -> Result<Value, E> {
        i64::try_from(v).map(Value::I64).map_err(|_| E::custom("integer out of the 64-bit range"))
    }
    fn visit_u128<E: de::Error>(self, v: u128) -> Result<Value, E> {
        u64::try_from(v).map(Value::U64).map_err(|_| E::custom("integer out of the 64-bit range"))
    }
    fn visit_f32<E: de::Error>(self, v: f32) -> Result<Value, E> {
        Ok(Value::F32(v))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        Ok(Value::F64(v))
    }
    fn visit_char<E: de::Error>(self, v: char) -> Result<Value, E> {
        Ok(Value::Char(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Value, E> {
        Ok(Value::Bytes(v.to_vec()))
    }
    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Option(None))
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        Ok(Value::Option(Some(Box::new(self.0.child().deserialize(d)?))))
    }
    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        // Saves never hold these (trees see through newtypes), but a
        // hand-written RON file may: counted, so they cannot nest unchecked.
        self.0.child().deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let seed = self.0.child();
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(CAUTIOUS_CAPACITY));
        while let Some(item) = seq.next_element_seed(seed)? {
            items.push(item);
        }
        Ok(Value::Seq(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let seed = self.0.child();
        let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(0).min(CAUTIOUS_CAPACITY));
        while let Some(key) = map.next_key_seed(seed)? {
            entries.push((key, map.next_value_seed(seed)?));
        }
        Ok(Value::Map(entries))
    }
    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<Value, A::Error> {
        // RON hands bare identifiers and `Name(..)` forms over as enums.
        let seed = self.0.child();
        let (name, variant): (String, _) = data.variant()?;
        match variant.newtype_variant_seed(seed) {
            Ok(Value::Unit) => Ok(Value::String(name)),
            Ok(inner) => Ok(Value::Map(vec![(Value::String(name), inner)])),
            Err(e) => Err(e),
        }
    }
}

struct TaggedVisitor<'c>(ValueSeed<'c>);

impl<'de> Visitor<'de> for TaggedVisitor<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a tagged value")
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<Value, A::Error> {
        let (tag, variant) = data.variant_seed(TagSeed)?;
        let seed = self.0.child();
        Ok(match tag {
            Tag::Unit => {
                variant.unit_variant()?;
                Value::Unit
            }
            Tag::None => {
                variant.unit_variant()?;
                Value::Option(None)
            }
            Tag::Bool => Value::Bool(variant.newtype_variant()?),
            Tag::I64 => Value::I64(variant.newtype_variant()?),
            Tag::U64 => Value::U64(variant.newtype_variant()?),
            Tag::F32 => Value::F32(variant.newtype_variant()?),
            Tag::F64 => Value::F64(variant.newtype_variant()?),
            Tag::Char => Value::Char(variant.newtype_variant()?),
            Tag::String => Value::String(variant.newtype_variant()?),
            Tag::Bytes => Value::Bytes(variant.newtype_variant_seed(BytesSeed)?),
            Tag::Some => Value::Option(Some(Box::new(variant.newtype_variant_seed(seed)?))),
            Tag::Seq => Value::Seq(variant.newtype_variant_seed(ListSeed(seed))?),
            Tag::Map => Value::Map(variant.newtype_variant_seed(PairListSeed(seed))?),
        })
    }
}

struct TagSeed;

impl<'de> DeserializeSeed<'de> for TagSeed {
    type Value = Tag;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Tag, D::Error> {
        deserializer.deserialize_identifier(self)
    }
}

impl<'de> Visitor<'de> for TagSeed {
    type Value = Tag;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a value tag")
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Tag, E> {
        Tag::from_index(v).ok_or_else(|| E::invalid_value(de::Unexpected::Unsigned(v), &self))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Tag, E> {
        TAGS.iter()
            .position(|&t| t == v)
            .and_then(|i| Tag::from_index(i as u64))
            .ok_or_else(|| E::unknown_variant(v, TAGS))
    }
}

struct BytesSeed;

impl<'de> DeserializeSeed<'de> for BytesSeed {
    type Value = Vec<u8>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Vec<u8>, D::Error> {
        deserializer.deserialize_byte_buf(self)
    }
}

impl<'de> Visitor<'de> for BytesSeed {
    type Value = Vec<u8>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("bytes")
    }

    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Vec<u8>, E> {
        Ok(v.to_vec())
    }

    fn visit_byte_buf<E: de::Error>(self, v: Vec<u8>) -> Result<Vec<u8>, E> {
        Ok(v)
    }
}

struct ListSeed<'c>(ValueSeed<'c>);

impl<'de> DeserializeSeed<'de> for ListSeed<'_> {
    type Value = Vec<Value>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Vec<Value>, D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for ListSeed<'_> {
    type Value = Vec<Value>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of values")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<Value>, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(CAUTIOUS_CAPACITY));
        while let Some(item) = seq.next_element_seed(self.0)? {
            items.push(item);
        }
        Ok(items)
    }
}

struct PairListSeed<'c>(ValueSeed<'c>);

impl<'de> DeserializeSeed<'de> for PairListSeed<'_> {
    type Value = Vec<(Value, Value)>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for PairListSeed<'_> {
    type Value = Vec<(Value, Value)>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of key-value pairs")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut entries = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(CAUTIOUS_CAPACITY));
        while let Some(pair) = seq.next_element_seed(PairSeed(self.0))? {
            entries.push(pair);
        }
        Ok(entries)
    }
}

struct PairSeed<'c>(ValueSeed<'c>);

impl<'de> DeserializeSeed<'de> for PairSeed<'_> {
    type Value = (Value, Value);

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_tuple(2, self)
    }
}

impl<'de> Visitor<'de> for PairSeed<'_> {
    type Value = (Value, Value);

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a key-value pair")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let key = seq.next_element_seed(self.0)?.ok_or_else(|| de::Error::invalid_length(0, &self))?;
        let value = seq.next_element_seed(self.0)?.ok_or_else(|| de::Error::invalid_length(1, &self))?;
        Ok((key, value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::depth::MAX_DEPTH;

    type Tree = Limited<MAX_DEPTH>;

    fn sample() -> Value {
        Value::Map(vec![
            (Value::String("a".into()), Value::Seq(vec![Value::U64(1), Value::I64(-2), Value::F32(0.5)])),
            (Value::String("b".into()), Value::Option(Some(Box::new(Value::Bytes(vec![1, 2]))))),
            (Value::String("c".into()), Value::Option(None)),
            (Value::String("d".into()), Value::Unit),
            (Value::Char('x'), Value::Bool(true)),
        ])
    }

    #[test]
    fn binary_round_trip_keeps_every_kind() {
        let bytes = postcard::to_allocvec(&sample()).unwrap();
        let back: Tree = postcard::from_bytes(&bytes).unwrap();
        assert_eq!(back.0, sample());
    }

    #[test]
    fn complete_structs_lose_their_names_in_binary() {
        let st = Value::Struct { fields: vec![("x", Value::U64(1)), ("y", Value::U64(2))], complete: true };
        let back: Tree = postcard::from_bytes(&postcard::to_allocvec(&st).unwrap()).unwrap();
        assert_eq!(back.0, Value::Seq(vec![Value::U64(1), Value::U64(2)]));
        let partial = Value::Struct { fields: vec![("x", Value::U64(1))], complete: false };
        let back: Tree = postcard::from_bytes(&postcard::to_allocvec(&partial).unwrap()).unwrap();
        assert_eq!(back.0, Value::Map(vec![(Value::String("x".into()), Value::U64(1))]));
    }

    /// Reads a binary tree, and whether it was refused for its depth.
    fn read_binary(bytes: &[u8]) -> Result<Value, bool> {
        let exceeded = Cell::new(false);
        let mut de = postcard::Deserializer::from_bytes(bytes);
        ValueSeed::new(MAX_DEPTH).flagging(&exceeded).deserialize(&mut de).map_err(|_| exceeded.get())
    }

    /// `levels` nested lists, the innermost holding `0`.
    fn nested(levels: usize) -> Value {
        (0..levels).fold(Value::U64(0), |inner, _| Value::Seq(vec![inner]))
    }

    #[test]
    fn deep_binary_input_is_refused() {
        // A value at level MAX_DEPTH reads; one level more does not.
        let bytes = postcard::to_allocvec(&nested(MAX_DEPTH)).unwrap();
        assert_eq!(read_binary(&bytes), Ok(nested(MAX_DEPTH)));
        let bytes = postcard::to_allocvec(&nested(MAX_DEPTH + 1)).unwrap();
        assert_eq!(read_binary(&bytes), Err(true));
        // Tag `Some` (10) repeated: each level nests one deeper.
        let mut bytes = vec![10u8; 100_000];
        bytes.push(0);
        assert_eq!(read_binary(&bytes), Err(true));
        assert_eq!(
            read_binary(&[10, 10, 0]),
            Ok(Value::Option(Some(Box::new(Value::Option(Some(Box::new(Value::Unit)))))))
        );
    }

    #[test]
    fn deep_json_input_is_refused() {
        let text = format!("{}0{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert_eq!(serde_json::from_str::<Tree>(&text).unwrap().0, nested(MAX_DEPTH));
        let text = format!("{}0{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
        let error = serde_json::from_str::<Tree>(&text).unwrap_err();
        // Refused before the element is read: the last `[` read is the
        // list at the deepest level allowed.
        assert_eq!(error.to_string(), format!("{} at line 1 column {}", too_deep(MAX_DEPTH), MAX_DEPTH + 1));
        let text = "[".repeat(100_000);
        let error = serde_json::from_str::<Tree>(&text).unwrap_err();
        assert_eq!(error.to_string(), format!("{} at line 1 column {}", too_deep(MAX_DEPTH), MAX_DEPTH + 1));
    }

    #[test]
    fn deep_ron_input_is_refused() {
        use crate::model::depth::MAX_RON_DEPTH;
        let text = format!("{}0{}", "[".repeat(MAX_RON_DEPTH), "]".repeat(MAX_RON_DEPTH));
        assert_eq!(ron::from_str::<Limited<MAX_RON_DEPTH>>(&text).unwrap().0, nested(MAX_RON_DEPTH));
        let text = format!("{}0{}", "Some(".repeat(MAX_RON_DEPTH + 1), ")".repeat(MAX_RON_DEPTH + 1));
        let error = ron::from_str::<Limited<MAX_RON_DEPTH>>(&text).unwrap_err();
        assert_eq!(error.code.to_string(), too_deep(MAX_RON_DEPTH));
    }

    #[test]
    fn prefab_files_allow_their_outer_levels() {
        let inner = format!("{}0{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        let file = format!(r#"{{"P": {{"C": {inner}}}}}"#);
        let mut de = serde_json::Deserializer::from_str(&file);
        assert!(ValueSeed::new(MAX_DEPTH).with_outer_levels(2).deserialize(&mut de).is_ok());
        let mut de = serde_json::Deserializer::from_str(&file);
        assert!(ValueSeed::new(MAX_DEPTH).with_outer_levels(1).deserialize(&mut de).is_err());
    }
}
