//! The nesting limit on values read from files (model layer).
//!
//! The nesting limit on everything read from a file, and the counter that
//! enforces it on typed reads.
//!
//! A value's *level* is the number of containers around it: the value of a
//! component or resource is at level 0, and the elements of a list, the
//! keys and values of a map, the fields of a struct or tuple, the value of
//! a `Some` and the data of an enum variant are one level below the
//! container holding them. (Newtype structs and `Box` add no level; a tuple
//! or struct variant adds two: the variant, then its fields.) Nothing read
//! may be at a level past [`MAX_DEPTH`] ([`MAX_RON_DEPTH`] for RON).
//!
//! [`Value`](crate::model::value::Value) trees count levels as they are read
//! (`value.rs`). Typed values (binary saves only) are read straight into
//! their types, so the count is kept by [`Guard`], a deserializer that wraps the format's own
//! and counts each nested read. The count does not depend on where the
//! values live in memory, so it holds under sanitizers and on any stack.

use std::cell::Cell;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess, VariantAccess, Visitor};

/// The deepest level a value read from a JSON or binary file may reach
/// (see the module docs for how levels are counted). Deeper input is
/// refused with a "data nested deeper than .. levels" error instead of
/// exhausting the stack.
///
/// With [`MAX_RON_DEPTH`], chosen so that loading values nested this deep,
/// in every format and through prefabs, fits in a 256 KiB thread stack in
/// a debug build.
pub const MAX_DEPTH: usize = 64;

/// The deepest level a value read from a RON file may reach. Lower than
/// [`MAX_DEPTH`]: the RON parser takes about five times the stack per level
/// that the JSON and binary readers do (some 10 KiB in a debug build).
pub const MAX_RON_DEPTH: usize = 12;

/// The message of the error for input nested past `limit`.
pub(crate) fn too_deep(limit: usize) -> String {
    format!("data nested deeper than {limit} levels")
}

/// The level of the value being read, and whether a read went too deep.
#[derive(Default)]
pub(crate) struct DepthCount {
    level: Cell<usize>,
    exceeded: Cell<bool>,
}

impl DepthCount {
    /// Whether a read was refused for going past [`MAX_DEPTH`]. (Formats
    /// such as postcard drop the messages of custom errors.)
    pub(crate) fn exceeded(&self) -> bool {
        self.exceeded.get()
    }

    /// Runs `read` one level deeper, or fails if that is past the limit.
    #[inline]
    fn nested<T, E: de::Error>(&self, read: impl FnOnce() -> Result<T, E>) -> Result<T, E> {
        let level = self.level.get() + 1;
        if level > MAX_DEPTH {
            self.exceeded.set(true);
            return Err(E::custom(too_deep(MAX_DEPTH)));
        }
        self.level.set(level);
        let result = read();
        self.level.set(level - 1);
        result
    }
}

/// A deserializer that counts how deep the reads it hands out go.
pub(crate) struct Guard<'c, D> {
    inner: D,
    count: &'c DepthCount,
}

impl<'c, D> Guard<'c, D> {
    /// Wraps `inner`; the value it reads is at `count`'s current level.
    pub(crate) fn new(inner: D, count: &'c DepthCount) -> Self {
        Guard { inner, count }
    }
}

/// A visitor whose nested reads are counted.
struct GuardVisitor<'c, V> {
    inner: V,
    count: &'c DepthCount,
}

/// A seed read one level deeper.
struct Deeper<'c, S> {
    inner: S,
    count: &'c DepthCount,
}

/// A seed read at the same level (the payload of a newtype struct).
struct Same<'c, S> {
    inner: S,
    count: &'c DepthCount,
}

struct GuardAccess<'c, A> {
    inner: A,
    count: &'c DepthCount,
}

impl<'c, V> GuardVisitor<'c, V> {
    fn new(inner: V, count: &'c DepthCount) -> Self {
        GuardVisitor { inner, count }
    }
}

macro_rules! forward_deserialize {
    ($($method:ident($($arg:ident: $ty:ty),*);)*) => {
        $(
            #[inline]
            fn $method<V: Visitor<'de>>(self, $($arg: $ty,)* visitor: V) -> Result<V::Value, D::Error> {
                self.inner.$method($($arg,)* GuardVisitor::new(visitor, self.count))
            }
        )*
    };
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Guard<'_, D> {
    type Error = D::Error;

    forward_deserialize! {
        deserialize_any();
        deserialize_bool();
        deserialize_i8();
        deserialize_i16();
        deserialize_i32();
        deserialize_i64();
        deserialize_i128();
        deserialize_u8();
        deserialize_u16();
        deserialize_u32();
        deserialize_u64();
        deserialize_u128();
        deserialize_f32();
        deserialize_f64();
        deserialize_char();
        deserialize_str();
        deserialize_string();
        deserialize_bytes();
        deserialize_byte_buf();
        deserialize_option();
        deserialize_unit();
        deserialize_unit_struct(name: &'static str);
        deserialize_newtype_struct(name: &'static str);
        deserialize_seq();
        deserialize_tuple(len: usize);
        deserialize_tuple_struct(name: &'static str, len: usize);
        deserialize_map();
        deserialize_struct(name: &'static str, fields: &'static [&'static str]);
        deserialize_enum(name: &'static str, variants: &'static [&'static str]);
        deserialize_identifier();
        deserialize_ignored_any();
    }

    fn is_human_readable(&self) -> bool {
        self.inner.is_human_readable()
    }
}

macro_rules! forward_visit {
    ($($method:ident: $ty:ty;)*) => {
        $(
            #[inline]
            fn $method<E: de::Error>(self, v: $ty) -> Result<V::Value, E> {
                self.inner.$method(v)
            }
        )*
    };
}

impl<'de, V: Visitor<'de>> Visitor<'de> for GuardVisitor<'_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.expecting(f)
    }

    forward_visit! {
        visit_bool: bool;
        visit_i8: i8;
        visit_i16: i16;
        visit_i32: i32;
        visit_i64: i64;
        visit_i128: i128;
        visit_u8: u8;
        visit_u16: u16;
        visit_u32: u32;
        visit_u64: u64;
        visit_u128: u128;
        visit_f32: f32;
        visit_f64: f64;
        visit_char: char;
        visit_str: &str;
        visit_borrowed_str: &'de str;
        visit_string: String;
        visit_bytes: &[u8];
        visit_borrowed_bytes: &'de [u8];
        visit_byte_buf: Vec<u8>;
    }

    #[inline]
    fn visit_none<E: de::Error>(self) -> Result<V::Value, E> {
        self.inner.visit_none()
    }

    #[inline]
    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<V::Value, D::Error> {
        let count = self.count;
        count.nested(|| self.inner.visit_some(Guard::new(deserializer, count)))
    }

    #[inline]
    fn visit_unit<E: de::Error>(self) -> Result<V::Value, E> {
        self.inner.visit_unit()
    }

    #[inline]
    fn visit_newtype_struct<D: Deserializer<'de>>(self, deserializer: D) -> Result<V::Value, D::Error> {
        self.inner.visit_newtype_struct(Guard::new(deserializer, self.count))
    }

    #[inline]
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<V::Value, A::Error> {
        self.inner.visit_seq(GuardAccess { inner: seq, count: self.count })
    }

    #[inline]
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.inner.visit_map(GuardAccess { inner: map, count: self.count })
    }

    #[inline]
    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<V::Value, A::Error> {
        self.inner.visit_enum(GuardAccess { inner: data, count: self.count })
    }
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for Deeper<'_, S> {
    type Value = S::Value;

    #[inline]
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<S::Value, D::Error> {
        let count = self.count;
        count.nested(|| self.inner.deserialize(Guard::new(deserializer, count)))
    }
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for Same<'_, S> {
    type Value = S::Value;

    #[inline]
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<S::Value, D::Error> {
        self.inner.deserialize(Guard::new(deserializer, self.count))
    }
}

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for GuardAccess<'_, A> {
    type Error = A::Error;

    #[inline]
    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, A::Error> {
        self.inner.next_element_seed(Deeper { inner: seed, count: self.count })
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for GuardAccess<'_, A> {
    type Error = A::Error;

    #[inline]
    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, A::Error> {
        self.inner.next_key_seed(Deeper { inner: seed, count: self.count })
    }

    #[inline]
    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, A::Error> {
        self.inner.next_value_seed(Deeper { inner: seed, count: self.count })
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

impl<'c, 'de, A: EnumAccess<'de>> EnumAccess<'de> for GuardAccess<'c, A> {
    type Error = A::Error;
    type Variant = GuardAccess<'c, A::Variant>;

    fn variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<(T::Value, Self::Variant), A::Error> {
        // The variant's name or index is part of the enum's own level.
        let (tag, variant) = self.inner.variant_seed(Same { inner: seed, count: self.count })?;
        Ok((tag, GuardAccess { inner: variant, count: self.count }))
    }
}

impl<'de, A: VariantAccess<'de>> VariantAccess<'de> for GuardAccess<'_, A> {
    type Error = A::Error;

    fn unit_variant(self) -> Result<(), A::Error> {
        self.inner.unit_variant()
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, A::Error> {
        self.inner.newtype_variant_seed(Deeper { inner: seed, count: self.count })
    }

    fn tuple_variant<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, A::Error> {
        let count = self.count;
        count.nested(|| self.inner.tuple_variant(len, GuardVisitor::new(visitor, count)))
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, A::Error> {
        let count = self.count;
        count.nested(|| self.inner.struct_variant(fields, GuardVisitor::new(visitor, count)))
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::*;

    /// Reads `T` from postcard bytes through a guard.
    fn read<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<T, bool> {
        let count = DepthCount::default();
        let mut de = postcard::Deserializer::from_bytes(bytes);
        T::deserialize(Guard::new(&mut de, &count)).map_err(|_| count.exceeded())
    }

    #[derive(Deserialize, Debug, PartialEq)]
    struct Tree(Vec<Tree>);

    /// `levels` nested lists: each list holds the next, the last is empty.
    fn nested_lists(levels: usize) -> Vec<u8> {
        let mut bytes = vec![1u8; levels - 1];
        bytes.push(0);
        bytes
    }

    #[test]
    fn lists_nest_up_to_the_limit() {
        // The outer list is at level 0: MAX_DEPTH + 1 lists reach level MAX_DEPTH.
        let tree: Tree = read(&nested_lists(MAX_DEPTH + 1)).unwrap();
        let mut levels = 0;
        let mut at = &tree;
        while let Some(inner) = at.0.first() {
            levels += 1;
            at = inner;
        }
        assert_eq!(levels, MAX_DEPTH);
        assert_eq!(read::<Tree>(&nested_lists(MAX_DEPTH + 2)), Err(true));
    }

    #[derive(Deserialize, Debug, PartialEq)]
    enum Chain {
        End,
        Link(Box<Chain>),
        Pair(u8, Box<Chain>),
        Named { next: Box<Chain> },
    }

    #[test]
    fn variants_add_a_level_and_their_fields_another() {
        // `Link` holds its chain one level down.
        let mut links = vec![1u8; MAX_DEPTH];
        links.push(0);
        assert!(read::<Chain>(&links).is_ok());
        links.insert(0, 1);
        assert_eq!(read::<Chain>(&links), Err(true));
        // `Named` (and `Pair`) hold theirs two levels down.
        let mut named = vec![3u8; MAX_DEPTH / 2];
        named.push(0);
        assert!(read::<Chain>(&named).is_ok());
        named.insert(0, 3);
        assert_eq!(read::<Chain>(&named), Err(true));
        let mut pairs: Vec<u8> = [2u8, 7].repeat(MAX_DEPTH / 2);
        pairs.push(0);
        assert!(read::<Chain>(&pairs).is_ok());
        pairs.splice(0..0, [2, 7]);
        assert_eq!(read::<Chain>(&pairs), Err(true));
    }

    #[test]
    fn options_and_maps_add_a_level() {
        #[derive(Deserialize, Debug, PartialEq)]
        struct Next(Option<Box<Next>>);
        let mut somes = vec![1u8; MAX_DEPTH];
        somes.push(0);
        assert!(read::<Next>(&somes).is_ok());
        somes.insert(0, 1);
        assert_eq!(read::<Next>(&somes), Err(true));

        #[derive(Deserialize, Debug, PartialEq)]
        struct Keyed(std::collections::BTreeMap<u8, Keyed>);
        // A map of one entry, key 0, whose value is the next map.
        let mut maps = [1u8, 0].repeat(MAX_DEPTH);
        maps.push(0);
        assert!(read::<Keyed>(&maps).is_ok());
        maps.splice(0..0, [1, 0]);
        assert_eq!(read::<Keyed>(&maps), Err(true));
    }

    #[test]
    fn newtypes_add_no_level() {
        #[derive(Deserialize, Debug, PartialEq)]
        struct Wrapped(Inner);
        #[derive(Deserialize, Debug, PartialEq)]
        struct Inner(Vec<Wrapped>);
        assert!(read::<Wrapped>(&nested_lists(MAX_DEPTH + 1)).is_ok());
        assert_eq!(read::<Wrapped>(&nested_lists(MAX_DEPTH + 2)), Err(true));
    }

    #[test]
    fn the_count_comes_back_after_each_value() {
        // Many shallow values side by side never add up to a deep one.
        let mut bytes = vec![200u8, 1]; // 200 elements...
        bytes.extend([1u8, 0].repeat(200)); // ...each a list holding an empty list
        let tree: Tree = read(&bytes).unwrap();
        assert_eq!(tree.0.len(), 200);
    }
}
