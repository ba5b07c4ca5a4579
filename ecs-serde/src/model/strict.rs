//! Reading JSON or RON into a type as its tree would be read (model layer).
//!
//! Reads a component straight from JSON or RON text into its type, taking
//! only what reading its [`Value`](crate::model::value::Value) tree would take,
//! to the same value: [`Strict`] wraps the format's deserializer and sees
//! a type's requests the way `from_value.rs` answers them from a tree
//! (newtype structs see through to their content, tuples are lists, unit
//! variants strings, other variants maps of one entry, a number too large
//! for an `f32` is an error, handles are checked as handles).
//!
//! Whatever it is not sure reads the same, it refuses, and the caller
//! reads that value through its tree instead, which gives the value or
//! the error a load must report: anything that needs a self-describing
//! read (`deserialize_any`: untagged enums, `#[serde(flatten)]`), fields
//! the type ignores, 128-bit integers, bytes, non-string map keys in JSON,
//! and values nested near the limit loads allow.

use std::fmt;
use std::marker::PhantomData;

use archetable_core::{Entity, ENTITY_SERDE_NAME};
use serde::de::{
    self, DeserializeOwned, DeserializeSeed, Deserializer, EnumAccess, IgnoredAny, IntoDeserializer, MapAccess,
    SeqAccess, VariantAccess, Visitor,
};
use serde::Deserialize;

/// Which format is read, and how deep a value may nest.
#[derive(Clone, Copy)]
pub(crate) struct Reading {
    /// RON: enums are read the way trees are written (strings and maps
    /// of one entry), map keys are values like any other.
    pub ron: bool,
    /// The deepest level loads read.
    pub limit: usize,
}

/// A `T` read through [`Strict`].
pub(crate) struct Strictly<T, const RON: bool, const LIMIT: usize>(pub T);

impl<'de, T: DeserializeOwned, const RON: bool, const LIMIT: usize> Deserialize<'de> for Strictly<T, RON, LIMIT> {
    #[inline]
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let reading = Reading { ron: RON, limit: LIMIT };
        T::deserialize(Strict { inner: deserializer, reading, level: 0, key: false }).map(Strictly)
    }
}

/// The format's deserializer, answering as a tree would.
struct Strict<D> {
    inner: D,
    reading: Reading,
    /// The level of the value being read.
    level: usize,
    /// Whether it is a JSON map key (a string, as trees hold them).
    key: bool,
}

fn refused<E: de::Error>() -> E {
    E::custom("read through its tree")
}

/// Checks that a container at `level` may hold items, one level down.
#[inline]
fn items_level<E: de::Error>(reading: Reading, level: usize) -> Result<usize, E> {
    // Stay clear of the limit: near it, the tree decides.
    if level + 1 >= reading.limit {
        return Err(refused());
    }
    Ok(level + 1)
}

impl<D> Strict<D> {
    #[inline]
    fn visitor<V>(&self, inner: V) -> StrictVisitor<V> {
        StrictVisitor { inner, reading: self.reading, level: self.level }
    }
}

macro_rules! forward_scalars {
    ($($method:ident)*) => {
        $(
            #[inline]
            fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
                if self.key {
                    return Err(refused());
                }
                self.inner.$method(visitor)
            }
        )*
    };
}

macro_rules! refuse {
    ($($method:ident)*) => {
        $(
            fn $method<V: Visitor<'de>>(self, _: V) -> Result<V::Value, D::Error> {
                Err(refused())
            }
        )*
    };
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Strict<D> {
    type Error = D::Error;

    forward_scalars! {
        deserialize_bool deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64
        deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 deserialize_f64 deserialize_unit
    }

    refuse! {
        deserialize_any deserialize_ignored_any deserialize_i128 deserialize_u128 deserialize_bytes
        deserialize_byte_buf
    }

    #[inline]
    fn deserialize_f32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        if self.key {
            return Err(refused());
        }
        // Text holds numbers as f64, as trees do.
        self.inner.deserialize_f64(NarrowF32(visitor))
    }

    #[inline]
    fn deserialize_char<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.inner.deserialize_char(visitor)
    }

    #[inline]
    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.inner.deserialize_str(visitor)
    }

    #[inline]
    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.inner.deserialize_string(visitor)
    }

    #[inline]
    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.inner.deserialize_identifier(visitor)
    }

    #[inline]
    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        if self.key {
            return Err(refused());
        }
        let visitor = self.visitor(visitor);
        self.inner.deserialize_option(visitor)
    }

    #[inline]
    fn deserialize_unit_struct<V: Visitor<'de>>(self, _: &'static str, visitor: V) -> Result<V::Value, D::Error> {
        if self.key {
            return Err(refused());
        }
        self.inner.deserialize_unit(visitor)
    }

    #[inline]
    fn deserialize_newtype_struct<V: Visitor<'de>>(self, name: &'static str, visitor: V) -> Result<V::Value, D::Error> {
        if name == ENTITY_SERDE_NAME {
            let entity = self.inner.deserialize_any(EntityText)?;
            return visitor.visit_newtype_struct(entity.to_bits().into_deserializer());
        }
        visitor.visit_newtype_struct(self)
    }

    #[inline]
    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        if self.key {
            return Err(refused());
        }
        let visitor = self.visitor(visitor);
        self.inner.deserialize_seq(visitor)
    }

    #[inline]
    fn deserialize_tuple<V: Visitor<'de>>(self, _: usize, visitor: V) -> Result<V::Value, D::Error> {
        self.deserialize_seq(visitor)
    }

    #[inline]
    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: usize,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.deserialize_seq(visitor)
    }

    #[inline]
    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        if self.key {
            return Err(refused());
        }
        let visitor = self.visitor(visitor);
        self.inner.deserialize_map(visitor)
    }

    #[inline]
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        if self.key {
            return Err(refused());
        }
        let visitor = self.visitor(visitor);
        self.inner.deserialize_struct(name, fields, visitor)
    }

    #[inline]
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        if self.reading.ron {
            // As a tree writes it: a string, or a map of one entry.
            let visitor = RonEnum { inner: visitor, reading: self.reading, level: self.level };
            return self.inner.deserialize_any(visitor);
        }
        let visitor = self.visitor(visitor);
        self.inner.deserialize_enum(name, variants, visitor)
    }

    fn is_human_readable(&self) -> bool {
        self.inner.is_human_readable()
    }
}

/// Hands a visitor of `f32`s the `f64` the text held, refusing one too
/// large for an `f32` (infinities and NaN given as such are kept).
struct NarrowF32<V>(V);

impl<'de, V: Visitor<'de>> Visitor<'de> for NarrowF32<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.expecting(f)
    }

    #[inline]
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<V::Value, E> {
        if v.is_finite() && (v as f32).is_infinite() {
            return Err(refused());
        }
        self.0.visit_f64(v)
    }

    fn visit_f32<E: de::Error>(self, v: f32) -> Result<V::Value, E> {
        self.0.visit_f32(v)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<V::Value, E> {
        self.0.visit_u64(v)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<V::Value, E> {
        self.0.visit_i64(v)
    }
}

/// Reads an entity handle as a tree holds one: its text, or its bits.
struct EntityText;

impl<'de> Visitor<'de> for EntityText {
    type Value = Entity;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an entity handle")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Entity, E> {
        Entity::parse(v).ok_or_else(refused)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Entity, E> {
        Entity::from_bits(v).ok_or_else(refused)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Entity, E> {
        u64::try_from(v).ok().and_then(Entity::from_bits).ok_or_else(refused)
    }
}

/// A visitor whose nested reads go through [`Strict`].
struct StrictVisitor<V> {
    inner: V,
    reading: Reading,
    /// The level of the value visited.
    level: usize,
}

/// A seed read through [`Strict`] at `level`.
struct StrictSeed<S> {
    inner: S,
    reading: Reading,
    level: usize,
    key: bool,
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for StrictSeed<S> {
    type Value = S::Value;

    #[inline]
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<S::Value, D::Error> {
        self.inner.deserialize(Strict { inner: deserializer, reading: self.reading, level: self.level, key: self.key })
    }
}

/// The items of a list or map, read one level down.
struct StrictAccess<A> {
    inner: A,
    reading: Reading,
    /// The level of the items.
    level: usize,
}

impl<A> StrictAccess<A> {
    #[inline]
    fn seed<S>(&self, inner: S, key: bool) -> StrictSeed<S> {
        StrictSeed { inner, reading: self.reading, level: self.level, key }
    }
}

macro_rules! forward_visits {
    ($($method:ident: $ty:ty;)*) => {
        $(
            #[inline]
            fn $method<E: de::Error>(self, v: $ty) -> Result<V::Value, E> {
                self.inner.$method(v)
            }
        )*
    };
}

impl<'de, V: Visitor<'de>> Visitor<'de> for StrictVisitor<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.expecting(f)
    }

    forward_visits! {
        visit_bool: bool;
        visit_i64: i64;
        visit_u64: u64;
        visit_f64: f64;
        visit_char: char;
        visit_str: &str;
        visit_borrowed_str: &'de str;
        visit_string: String;
    }

    #[inline]
    fn visit_none<E: de::Error>(self) -> Result<V::Value, E> {
        self.inner.visit_none()
    }

    #[inline]
    fn visit_unit<E: de::Error>(self) -> Result<V::Value, E> {
        self.inner.visit_unit()
    }

    #[inline]
    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<V::Value, D::Error> {
        let level = items_level(self.reading, self.level)?;
        self.inner.visit_some(Strict { inner: deserializer, reading: self.reading, level, key: false })
    }

    #[inline]
    fn visit_newtype_struct<D: Deserializer<'de>>(self, deserializer: D) -> Result<V::Value, D::Error> {
        let level = items_level(self.reading, self.level)?;
        self.inner.visit_newtype_struct(Strict { inner: deserializer, reading: self.reading, level, key: false })
    }

    #[inline]
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<V::Value, A::Error> {
        let level = items_level(self.reading, self.level)?;
        self.inner.visit_seq(StrictAccess { inner: seq, reading: self.reading, level })
    }

    #[inline]
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        let level = items_level(self.reading, self.level)?;
        self.inner.visit_map(StrictAccess { inner: map, reading: self.reading, level })
    }

    #[inline]
    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<V::Value, A::Error> {
        self.inner.visit_enum(StrictAccess { inner: data, reading: self.reading, level: self.level })
    }
}

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for StrictAccess<A> {
    type Error = A::Error;

    #[inline]
    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, A::Error> {
        let seed = self.seed(seed, false);
        self.inner.next_element_seed(seed)
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for StrictAccess<A> {
    type Error = A::Error;

    #[inline]
    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, A::Error> {
        // JSON keys are strings, in trees too; RON keys are values.
        let seed = self.seed(seed, !self.reading.ron);
        self.inner.next_key_seed(seed)
    }

    #[inline]
    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, A::Error> {
        let seed = self.seed(seed, false);
        self.inner.next_value_seed(seed)
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

impl<'de, A: EnumAccess<'de>> EnumAccess<'de> for StrictAccess<A> {
    type Error = A::Error;
    type Variant = StrictAccess<A::Variant>;

    #[inline]
    fn variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<(T::Value, Self::Variant), A::Error> {
        let (reading, level) = (self.reading, self.level);
        let (tag, variant) = self.inner.variant_seed(StrictSeed { inner: seed, reading, level, key: false })?;
        Ok((tag, StrictAccess { inner: variant, reading, level }))
    }
}

impl<'de, A: VariantAccess<'de>> VariantAccess<'de> for StrictAccess<A> {
    type Error = A::Error;

    #[inline]
    fn unit_variant(self) -> Result<(), A::Error> {
        self.inner.unit_variant()
    }

    #[inline]
    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, A::Error> {
        let level = items_level(self.reading, self.level)?;
        self.inner.newtype_variant_seed(StrictSeed { inner: seed, reading: self.reading, level, key: false })
    }

    #[inline]
    fn tuple_variant<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, A::Error> {
        // The variant is a level, its fields the next.
        let level = items_level(self.reading, self.level)?;
        self.inner.tuple_variant(len, StrictVisitor { inner: visitor, reading: self.reading, level })
    }

    #[inline]
    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, A::Error> {
        let level = items_level(self.reading, self.level)?;
        self.inner.struct_variant(fields, StrictVisitor { inner: visitor, reading: self.reading, level })
    }
}

// ---------------------------------------------------------------------------
// RON enums, as trees write them

/// Reads a RON enum written as a tree writes one: a unit variant as a
/// string, another as a map of one entry from its name to its content.
struct RonEnum<V> {
    inner: V,
    reading: Reading,
    level: usize,
}

impl<'de, V: Visitor<'de>> Visitor<'de> for RonEnum<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.expecting(f)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<V::Value, E> {
        self.inner.visit_enum(UnitVariant(v.to_owned(), PhantomData))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<V::Value, E> {
        self.inner.visit_enum(UnitVariant(v, PhantomData))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<V::Value, A::Error> {
        let name: String = map.next_key()?.ok_or_else(refused)?;
        let level = items_level(self.reading, self.level)?;
        let value = self.inner.visit_enum(OneEntry { map: &mut map, name, reading: self.reading, level })?;
        // One entry only.
        match map.next_key::<IgnoredAny>()? {
            Some(_) => Err(refused()),
            None => Ok(value),
        }
    }
}

/// A unit variant given as its name.
struct UnitVariant<E>(String, PhantomData<E>);

impl<'de, E: de::Error> EnumAccess<'de> for UnitVariant<E> {
    type Error = E;
    type Variant = Self;

    fn variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<(T::Value, Self), E> {
        let tag = seed.deserialize(self.0.as_str().into_deserializer())?;
        Ok((tag, self))
    }
}

impl<'de, E: de::Error> VariantAccess<'de> for UnitVariant<E> {
    type Error = E;

    fn unit_variant(self) -> Result<(), E> {
        Ok(())
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, _: T) -> Result<T::Value, E> {
        Err(refused())
    }

    fn tuple_variant<V: Visitor<'de>>(self, _: usize, _: V) -> Result<V::Value, E> {
        Err(refused())
    }

    fn struct_variant<V: Visitor<'de>>(self, _: &'static [&'static str], _: V) -> Result<V::Value, E> {
        Err(refused())
    }
}

/// A variant given as a map's one entry, the map's key read already; its
/// content is at `level`.
struct OneEntry<'m, A> {
    map: &'m mut A,
    name: String,
    reading: Reading,
    level: usize,
}

impl<'de, 'm, A: MapAccess<'de>> EnumAccess<'de> for OneEntry<'m, A> {
    type Error = A::Error;
    type Variant = Self;

    fn variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<(T::Value, Self), A::Error> {
        let tag = seed.deserialize(self.name.as_str().into_deserializer())?;
        Ok((tag, self))
    }
}

impl<'de, A: MapAccess<'de>> OneEntry<'_, A> {
    fn content<S: DeserializeSeed<'de>>(self, seed: S) -> Result<S::Value, A::Error> {
        self.map.next_value_seed(StrictSeed { inner: seed, reading: self.reading, level: self.level, key: false })
    }
}

impl<'de, A: MapAccess<'de>> VariantAccess<'de> for OneEntry<'_, A> {
    type Error = A::Error;

    fn unit_variant(self) -> Result<(), A::Error> {
        self.content(PhantomData::<()>)
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, A::Error> {
        self.content(seed)
    }

    fn tuple_variant<V: Visitor<'de>>(self, _: usize, visitor: V) -> Result<V::Value, A::Error> {
        self.content(Content { visitor, fields: None })
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, A::Error> {
        self.content(Content { visitor, fields: Some(fields) })
    }
}

/// A variant's content, read as a list (tuple variants) or a struct.
struct Content<V> {
    visitor: V,
    fields: Option<&'static [&'static str]>,
}

impl<'de, V: Visitor<'de>> DeserializeSeed<'de> for Content<V> {
    type Value = V::Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<V::Value, D::Error> {
        match self.fields {
            Some(fields) => deserializer.deserialize_struct("", fields, self.visitor),
            None => deserializer.deserialize_seq(self.visitor),
        }
    }
}
