//! Value trees into typed values (model layer).
//!
//! Builds any `Deserialize` type from a [`Value`] tree, keeping track of the
//! field being read so an error can name it, refusing unknown struct
//! fields, and remapping entity handles on the way.

use std::cell::Cell;
use std::fmt;

use archetable_core::{Entity, ENTITY_SERDE_NAME};
use serde::de::{
    self, DeserializeOwned, DeserializeSeed, Deserializer, EnumAccess, IntoDeserializer, MapAccess, SeqAccess,
    Unexpected, VariantAccess, Visitor,
};

use crate::model::suggest::nearest;
use crate::model::value::Value;

/// One step of the way from a component to the field an error is about.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Step {
    Field(String),
    Index(usize),
}

/// A value that does not fit its type: the message, and where it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct FromValueError {
    pub message: String,
    /// Innermost step first (steps are added while the error travels out).
    steps: Vec<Step>,
}

impl FromValueError {
    fn at(mut self, step: Step) -> Self {
        self.steps.push(step);
        self
    }

    /// The path of the field, such as `stats.hp` or `path[2].x`; empty for
    /// the component itself.
    pub fn path(&self) -> String {
        let mut out = String::new();
        for step in self.steps.iter().rev() {
            match step {
                Step::Field(name) => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(name);
                }
                Step::Index(i) => out.push_str(&format!("[{i}]")),
            }
        }
        out
    }
}

impl fmt::Display for FromValueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for FromValueError {}

impl de::Error for FromValueError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        FromValueError { message: msg.to_string(), steps: Vec::new() }
    }
}

/// What to do with the entity handles met while reading.
pub(crate) enum EntityMapping<'m> {
    /// Keep every handle as written.
    Keep,
    /// Replace every handle by what the function returns.
    Map(&'m dyn Fn(Entity) -> Entity),
}

/// The state shared by one read: the mapping, and whether a handle was met.
pub(crate) struct Context<'m> {
    mapping: EntityMapping<'m>,
    met_entity: Cell<bool>,
}

impl<'m> Context<'m> {
    pub fn new(mapping: EntityMapping<'m>) -> Self {
        Context { mapping, met_entity: Cell::new(false) }
    }

    /// Whether any entity handle was read since the last call; resets.
    pub fn take_met_entity(&self) -> bool {
        self.met_entity.replace(false)
    }
}

/// Reads a `T` from `value`.
pub(crate) fn from_value<T: DeserializeOwned>(value: &Value, cx: &Context<'_>) -> Result<T, FromValueError> {
    T::deserialize(ValueDeserializer { value, cx })
}

#[derive(Clone, Copy)]
struct ValueDeserializer<'de, 'c> {
    value: &'de Value,
    cx: &'c Context<'c>,
}

fn unexpected(value: &Value) -> Unexpected<'_> {
    match value {
        Value::Unit => Unexpected::Unit,
        Value::Bool(b) => Unexpected::Bool(*b),
        Value::I64(n) => Unexpected::Signed(*n),
        Value::U64(n) => Unexpected::Unsigned(*n),
        Value::F32(x) => Unexpected::Float(f64::from(*x)),
        Value::F64(x) => Unexpected::Float(*x),
        Value::Char(c) => Unexpected::Char(*c),
        Value::String(s) => Unexpected::Str(s),
        Value::Bytes(b) => Unexpected::Bytes(b),
        Value::Option(_) => Unexpected::Option,
        Value::Seq(_) => Unexpected::Seq,
        Value::Map(_) | Value::Struct { .. } | Value::Variant(_) => Unexpected::Map,
    }
}

impl<'de, 'c> ValueDeserializer<'de, 'c> {
    fn of(&self, value: &'de Value) -> Self {
        ValueDeserializer { value, cx: self.cx }
    }

    fn invalid<V: Visitor<'de>>(&self, visitor: &V) -> FromValueError {
        de::Error::invalid_type(unexpected(self.value), visitor)
    }

    fn entity(self) -> Result<Entity, FromValueError> {
        let entity = match self.value {
            Value::String(s) => Entity::parse(s),
            Value::U64(bits) => Entity::from_bits(*bits),
            Value::I64(bits) => u64::try_from(*bits).ok().and_then(Entity::from_bits),
            _ => None,
        };
        let entity = entity.ok_or_else(|| {
            <FromValueError as de::Error>::invalid_value(unexpected(self.value), &"an entity handle such as \"3v1\"")
        })?;
        self.cx.met_entity.set(true);
        Ok(match &self.cx.mapping {
            EntityMapping::Keep => entity,
            EntityMapping::Map(map) => map(entity),
        })
    }
}

impl<'de, 'c> Deserializer<'de> for ValueDeserializer<'de, 'c> {
    type Error = FromValueError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, FromValueError> {
        match self.value {
            Value::Unit => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(*b),
            Value::I64(n) => visitor.visit_i64(*n),
            Value::U64(n) => visitor.visit_u64(*n),
            Value::F32(x) => visitor.visit_f32(*x),
            Value::F64(x) => visitor.visit_f64(*x),
            Value::Char(c) => visitor.visit_char(*c),
            Value::String(s) => visitor.visit_borrowed_str(s),
            Value::Bytes(b) => visitor.visit_borrowed_bytes(b),
            Value::Option(None) => visitor.visit_none(),
            Value::Option(Some(v)) => visitor.visit_some(self.of(v)),
            Value::Seq(items) => visit_all(visitor, Items::new(self, items, None)),
            Value::Map(_) | Value::Struct { .. } | Value::Variant(_) => visitor.visit_map(Entries::new(self)),
        }
    }

    fn deserialize_f32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, FromValueError> {
        // Text holds numbers as f64: one too large for an f32 would become
        // infinity, which a JSON save then refuses to write. Infinities and
        // NaN given as such (RON writes them) are kept.
        if let Value::F64(x) = self.value
            && x.is_finite()
            && (*x as f32).is_infinite()
        {
            return Err(de::Error::custom(format_args!("the number {x:e} is out of range for f32")));
        }
        self.deserialize_any(visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, FromValueError> {
        match self.value {
            Value::Option(None) | Value::Unit => visitor.visit_none(),
            Value::Option(Some(v)) => visitor.visit_some(self.of(v)),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, FromValueError> {
        match self.value {
            Value::Unit | Value::Option(None) => visitor.visit_unit(),
            _ => Err(self.invalid(&visitor)),
        }
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, FromValueError> {
        // A marker component may be written `null`, `()`, `{}` or `[]`.
        match self.value {
            Value::Unit | Value::Option(None) => visitor.visit_unit(),
            Value::Map(m) if m.is_empty() => visitor.visit_unit(),
            Value::Seq(s) if s.is_empty() => visitor.visit_unit(),
            Value::Struct { fields, .. } if fields.is_empty() => visitor.visit_unit(),
            _ => Err(self.invalid(&visitor)),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, FromValueError> {
        if name == ENTITY_SERDE_NAME {
            let entity = self.entity()?;
            return visitor.visit_newtype_struct(entity.to_bits().into_deserializer());
        }
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, FromValueError> {
        match self.value {
            Value::Seq(items) => visit_all(visitor, Items::new(self, items, None)),
            Value::Bytes(b) => visitor.visit_borrowed_bytes(b),
            _ => Err(self.invalid(&visitor)),
        }
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value, FromValueError> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, FromValueError> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, FromValueError> {
        match self.value {
            Value::Map(_) | Value::Struct { .. } | Value::Variant(_) => visitor.visit_map(Entries::new(self)),
            _ => Err(self.invalid(&visitor)),
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, FromValueError> {
        match self.value {
            Value::Map(entries) => {
                for (key, _) in entries {
                    if let Some(key) = key.as_str()
                        && !fields.contains(&key)
                    {
                        return Err(unknown_field(key, fields).at(Step::Field(key.to_owned())));
                    }
                }
                visitor.visit_map(Entries::new(self))
            }
            Value::Struct { .. } => visitor.visit_map(Entries::new(self)),
            Value::Seq(items) => visit_all(visitor, Items::new(self, items, Some(fields))),
            _ => Err(self.invalid(&visitor)),
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, FromValueError> {
        let (name, content) = match self.value {
            Value::String(s) => (s.as_str(), None),
            Value::Variant(v) => (v.0, Some(&v.1)),
            Value::Map(entries) if entries.len() == 1 => match &entries[0] {
                (Value::String(s), content) => (s.as_str(), Some(content)),
                _ => return Err(self.invalid(&visitor)),
            },
            Value::Map(entries) => {
                return Err(de::Error::custom(format_args!(
                    "expected one variant of the enum, given as a map with one entry, found a map with {} entries",
                    entries.len()
                )))
            }
            _ => return Err(self.invalid(&visitor)),
        };
        if !variants.contains(&name) {
            return Err(unknown_variant(name, variants));
        }
        visitor.visit_enum(Variant { de: self, name, content }).map_err(|e| {
            if content.is_some() {
                e.at(Step::Field(name.to_owned()))
            } else {
                e
            }
        })
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, FromValueError> {
        match self.value {
            Value::String(s) => visitor.visit_borrowed_str(s),
            Value::U64(n) => visitor.visit_u64(*n),
            _ => Err(self.invalid(&visitor)),
        }
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, FromValueError> {
        visitor.visit_unit()
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f64 char str string bytes byte_buf
    }
}

fn unknown_field(key: &str, fields: &'static [&'static str]) -> FromValueError {
    let mut message = format!("unknown field `{key}`");
    match nearest(key, fields.iter().copied()) {
        Some(best) => message.push_str(&format!(", did you mean `{best}`?")),
        None if fields.is_empty() => message.push_str(", there are no fields"),
        None => message.push_str(&format!(", expected one of {}", quoted(fields))),
    }
    FromValueError { message, steps: Vec::new() }
}

fn unknown_variant(name: &str, variants: &'static [&'static str]) -> FromValueError {
    let mut message = format!("unknown variant `{name}`");
    match nearest(name, variants.iter().copied()) {
        Some(best) => message.push_str(&format!(", did you mean `{best}`?")),
        None => message.push_str(&format!(", expected one of {}", quoted(variants))),
    }
    FromValueError { message, steps: Vec::new() }
}

fn quoted(names: &[&str]) -> String {
    names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
}

/// Visits a list, failing if the visitor leaves elements unread (a list
/// longer than the tuple or struct it is read as).
fn visit_all<'de, V: Visitor<'de>>(visitor: V, mut items: Items<'de, '_>) -> Result<V::Value, FromValueError> {
    let value = visitor.visit_seq(&mut items)?;
    match items.items.len() {
        0 => Ok(value),
        left => Err(de::Error::invalid_length(items.index + left, &format!("{} elements", items.index).as_str())),
    }
}

/// The elements of a list; with `fields`, the list is a struct's fields in
/// declaration order and errors name them.
struct Items<'de, 'c> {
    de: ValueDeserializer<'de, 'c>,
    items: std::slice::Iter<'de, Value>,
    index: usize,
    fields: Option<&'static [&'static str]>,
}

impl<'de, 'c> Items<'de, 'c> {
    fn new(de: ValueDeserializer<'de, 'c>, items: &'de [Value], fields: Option<&'static [&'static str]>) -> Self {
        Items { de, items: items.iter(), index: 0, fields }
    }
}

impl<'de> SeqAccess<'de> for Items<'de, '_> {
    type Error = FromValueError;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, FromValueError> {
        let Some(item) = self.items.next() else { return Ok(None) };
        let index = self.index;
        self.index += 1;
        seed.deserialize(self.de.of(item)).map(Some).map_err(|e| {
            let step = match self.fields.and_then(|f| f.get(index)) {
                Some(name) => Step::Field((*name).to_owned()),
                None => Step::Index(index),
            };
            e.at(step)
        })
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len())
    }
}

/// The entries of a map, a struct, or a variant seen as a one-entry map.
struct Entries<'de, 'c> {
    de: ValueDeserializer<'de, 'c>,
    next: usize,
    /// The step naming the entry whose value comes next.
    step: Option<Step>,
}

impl<'de, 'c> Entries<'de, 'c> {
    fn new(de: ValueDeserializer<'de, 'c>) -> Self {
        Entries { de, next: 0, step: None }
    }

    fn len(&self) -> usize {
        match self.de.value {
            Value::Map(m) => m.len(),
            Value::Struct { fields, .. } => fields.len(),
            Value::Variant(_) => 1,
            _ => 0,
        }
    }
}

fn key_step(key: &Value) -> Step {
    match key {
        Value::String(s) => Step::Field(s.clone()),
        Value::U64(n) => Step::Field(n.to_string()),
        Value::I64(n) => Step::Field(n.to_string()),
        other => Step::Field(format!("<{}>", other.kind())),
    }
}

impl<'de> MapAccess<'de> for Entries<'de, '_> {
    type Error = FromValueError;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, FromValueError> {
        let i = self.next;
        if i >= self.len() {
            return Ok(None);
        }
        match self.de.value {
            Value::Map(m) => {
                let key = &m[i].0;
                self.step = Some(key_step(key));
                seed.deserialize(self.de.of(key)).map(Some).map_err(|e| e.at(key_step(key)))
            }
            Value::Struct { fields, .. } => {
                let name = fields[i].0;
                self.step = Some(Step::Field(name.to_owned()));
                seed.deserialize(de::value::BorrowedStrDeserializer::new(name)).map(Some)
            }
            Value::Variant(v) => {
                self.step = Some(Step::Field(v.0.to_owned()));
                seed.deserialize(de::value::BorrowedStrDeserializer::new(v.0)).map(Some)
            }
            _ => Ok(None),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, FromValueError> {
        let i = self.next;
        self.next += 1;
        let value = match self.de.value {
            Value::Map(m) => &m[i].1,
            Value::Struct { fields, .. } => &fields[i].1,
            Value::Variant(v) => &v.1,
            _ => return Err(de::Error::custom("value without a key")),
        };
        let step = self.step.take();
        seed.deserialize(self.de.of(value)).map_err(|e| match step {
            Some(step) => e.at(step),
            None => e,
        })
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.len() - self.next)
    }
}

/// One enum variant: its name and, unless it is a unit variant, its data.
struct Variant<'de, 'c> {
    de: ValueDeserializer<'de, 'c>,
    name: &'de str,
    content: Option<&'de Value>,
}

impl<'de, 'c> EnumAccess<'de> for Variant<'de, 'c> {
    type Error = FromValueError;
    type Variant = Self;

    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, Self), FromValueError> {
        let tag = seed.deserialize(de::value::BorrowedStrDeserializer::new(self.name))?;
        Ok((tag, self))
    }
}

impl<'de> VariantAccess<'de> for Variant<'de, '_> {
    type Error = FromValueError;

    fn unit_variant(self) -> Result<(), FromValueError> {
        match self.content {
            None | Some(Value::Unit) => Ok(()),
            Some(other) => Err(de::Error::invalid_type(unexpected(other), &"a unit variant")),
        }
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, FromValueError> {
        match self.content {
            Some(content) => seed.deserialize(self.de.of(content)),
            None => Err(de::Error::invalid_type(Unexpected::UnitVariant, &"a newtype variant")),
        }
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value, FromValueError> {
        match self.content {
            Some(content) => self.de.of(content).deserialize_seq(visitor),
            None => Err(de::Error::invalid_type(Unexpected::UnitVariant, &"a tuple variant")),
        }
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, FromValueError> {
        match self.content {
            Some(content) => self.de.of(content).deserialize_struct("", fields, visitor),
            None => Err(de::Error::invalid_type(Unexpected::UnitVariant, &"a struct variant")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read<T: DeserializeOwned>(value: &Value) -> Result<T, FromValueError> {
        from_value(value, &Context::new(EntityMapping::Keep))
    }

    #[test]
    fn a_list_longer_than_its_tuple_is_refused() {
        let list = Value::Seq(vec![Value::U64(1), Value::U64(2), Value::U64(3)]);
        assert_eq!(read::<Vec<u8>>(&list).unwrap(), [1, 2, 3]);
        assert_eq!(read::<(u8, u8)>(&list).unwrap_err().message, "invalid length 3, expected 2 elements");
    }

    #[test]
    fn numbers_too_large_for_an_f32_are_refused() {
        assert_eq!(read::<f32>(&Value::F64(1e39)).unwrap_err().message, "the number 1e39 is out of range for f32");
        assert_eq!(
            read::<f32>(&Value::F64(-3.5e38)).unwrap_err().message,
            "the number -3.5e38 is out of range for f32"
        );
        // Values that round to a finite f32 load as ever, and so do
        // infinities given as such.
        assert_eq!(read::<f32>(&Value::F64(f64::from(f32::MAX))).unwrap(), f32::MAX);
        // Above f32::MAX, below the midpoint to the next power of two.
        assert_eq!(read::<f32>(&Value::F64(3.402_823_5e38)).unwrap(), f32::MAX);
        assert!(read::<f32>(&Value::F64(3.402_823_6e38)).is_err());
        assert_eq!(read::<f32>(&Value::F64(1e-50)).unwrap(), 0.0);
        assert_eq!(read::<f32>(&Value::F64(f64::NEG_INFINITY)).unwrap(), f32::NEG_INFINITY);
        assert!(read::<f32>(&Value::F64(f64::NAN)).unwrap().is_nan());
        assert_eq!(read::<f32>(&Value::U64(u64::MAX)).unwrap(), u64::MAX as f32);
        assert_eq!(read::<f64>(&Value::F64(1e39)).unwrap(), 1e39);
        assert_eq!(
            read::<Option<f32>>(&Value::F64(1e39)).unwrap_err().message,
            "the number 1e39 is out of range for f32"
        );
    }

    #[test]
    fn errors_carry_the_path_outside_in() {
        let value =
            Value::Map(vec![(Value::String("a".into()), Value::Seq(vec![Value::U64(1), Value::String("x".into())]))]);
        let error = read::<std::collections::BTreeMap<String, Vec<u8>>>(&value).unwrap_err();
        assert_eq!(error.path(), "a[1]");
    }
}
