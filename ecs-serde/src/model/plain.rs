//! Writing a value as its tree would be written, without the tree (model
//! layer).
//!
//! Writes a value to a text format exactly as its
//! [`Value`](crate::model::value::Value) tree would be written, without
//! building the tree: [`Plain`] wraps the format's serializer and turns
//! each call a type makes into the calls the tree makes (`to_value.rs`
//! builds the tree, `value.rs` writes it). Unit variants become strings,
//! newtype structs their content, tuples lists, structs go by the name
//! `Struct`, integers are written 64 bits wide.
//!
//! What it does not do itself it refuses, for the caller to write that
//! value through its tree, which gives the same text or the error a save
//! must report: variants with several fields (a tree writes them as a map
//! of one entry, built from the fields), empty structs, 128-bit integers,
//! numbers JSON cannot hold, and values nested near the limit loads allow.

use std::fmt;

use serde::ser::{
    self, Impossible, Serialize, SerializeMap, SerializeSeq, SerializeStruct, SerializeTuple, SerializeTupleStruct,
    Serializer,
};

use crate::model::depth::{MAX_DEPTH, MAX_RON_DEPTH};

/// How deep and what a value may be written as: known when the code is
/// compiled, so the checks cost a comparison with a constant.
pub(crate) trait Rules: Copy {
    /// JSON: no NaN or infinity.
    const JSON: bool;
    /// The deepest level loads read.
    const LIMIT: usize;
}

/// The rules of JSON saves.
#[derive(Clone, Copy)]
pub(crate) struct JsonRules;

impl Rules for JsonRules {
    const JSON: bool = true;
    const LIMIT: usize = MAX_DEPTH;
}

/// The rules of RON saves.
#[derive(Clone, Copy)]
pub(crate) struct RonRules;

impl Rules for RonRules {
    const JSON: bool = false;
    const LIMIT: usize = MAX_RON_DEPTH;
}

/// A format's serializer, fed the calls a value's tree would make.
pub(crate) struct Plain<S, R> {
    inner: S,
    rules: R,
    /// The level of the value being written (counted so as never to be
    /// lower than the tree's: a `Some` adds one even in JSON).
    level: usize,
}

impl<S, R> Plain<S, R> {
    /// Wraps `inner` for a value at level 0.
    pub(crate) fn new(inner: S, rules: R) -> Self {
        Plain { inner, rules, level: 0 }
    }
}

/// A value to hand to the format, written through [`Plain`] at `level`.
pub(crate) struct At<'v, T: ?Sized, R> {
    value: &'v T,
    rules: R,
    level: usize,
}

impl<'v, T: ?Sized, R> At<'v, T, R> {
    /// `value` at level 0: an item of a column, handed to the format's
    /// own list (whose brackets and commas are the tree's too).
    #[inline]
    pub(crate) fn top(value: &'v T, rules: R) -> Self {
        At { value, rules, level: 0 }
    }
}

impl<T: Serialize + ?Sized, R: Rules> Serialize for At<'_, T, R> {
    #[inline]
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.value.serialize(Plain { inner: serializer, rules: self.rules, level: self.level })
    }
}

/// A list, map or struct of the format's, whose items are written through
/// [`Plain`] one level down.
pub(crate) struct Items<C, R> {
    inner: C,
    rules: R,
    level: usize,
}

fn refused<E: ser::Error>() -> E {
    E::custom("written through its tree")
}

impl<S: Serializer, R: Rules> Plain<S, R> {
    /// The level of the items of a container written here.
    #[inline]
    fn child<E: ser::Error>(&self) -> Result<usize, E> {
        // Loads count a level past the limit as too deep; stay clear of it
        // and let the tree decide.
        if self.level + 1 >= R::LIMIT {
            return Err(refused());
        }
        Ok(self.level + 1)
    }

    #[inline]
    fn at<'v, T: ?Sized>(&self, value: &'v T, level: usize) -> At<'v, T, R> {
        At { value, rules: self.rules, level }
    }
}

impl<S: Serializer, R: Rules> Serializer for Plain<S, R> {
    type Ok = S::Ok;
    type Error = S::Error;
    type SerializeSeq = Items<S::SerializeSeq, R>;
    type SerializeTuple = Items<S::SerializeSeq, R>;
    type SerializeTupleStruct = Items<S::SerializeSeq, R>;
    type SerializeTupleVariant = Impossible<S::Ok, S::Error>;
    type SerializeMap = Items<S::SerializeMap, R>;
    type SerializeStruct = Items<S::SerializeStruct, R>;
    type SerializeStructVariant = Impossible<S::Ok, S::Error>;

    #[inline]
    fn serialize_bool(self, v: bool) -> Result<S::Ok, S::Error> {
        self.inner.serialize_bool(v)
    }
    #[inline]
    fn serialize_i8(self, v: i8) -> Result<S::Ok, S::Error> {
        self.inner.serialize_i64(v.into())
    }
    #[inline]
    fn serialize_i16(self, v: i16) -> Result<S::Ok, S::Error> {
        self.inner.serialize_i64(v.into())
    }
    #[inline]
    fn serialize_i32(self, v: i32) -> Result<S::Ok, S::Error> {
        self.inner.serialize_i64(v.into())
    }
    #[inline]
    fn serialize_i64(self, v: i64) -> Result<S::Ok, S::Error> {
        self.inner.serialize_i64(v)
    }
    fn serialize_i128(self, _: i128) -> Result<S::Ok, S::Error> {
        Err(refused())
    }
    #[inline]
    fn serialize_u8(self, v: u8) -> Result<S::Ok, S::Error> {
        self.inner.serialize_u64(v.into())
    }
    #[inline]
    fn serialize_u16(self, v: u16) -> Result<S::Ok, S::Error> {
        self.inner.serialize_u64(v.into())
    }
    #[inline]
    fn serialize_u32(self, v: u32) -> Result<S::Ok, S::Error> {
        self.inner.serialize_u64(v.into())
    }
    #[inline]
    fn serialize_u64(self, v: u64) -> Result<S::Ok, S::Error> {
        self.inner.serialize_u64(v)
    }
    fn serialize_u128(self, _: u128) -> Result<S::Ok, S::Error> {
        Err(refused())
    }
    #[inline]
    fn serialize_f32(self, v: f32) -> Result<S::Ok, S::Error> {
        if R::JSON && !v.is_finite() {
            return Err(refused());
        }
        self.inner.serialize_f32(v)
    }
    #[inline]
    fn serialize_f64(self, v: f64) -> Result<S::Ok, S::Error> {
        if R::JSON && !v.is_finite() {
            return Err(refused());
        }
        self.inner.serialize_f64(v)
    }
    #[inline]
    fn serialize_char(self, v: char) -> Result<S::Ok, S::Error> {
        self.inner.serialize_char(v)
    }
    #[inline]
    fn serialize_str(self, v: &str) -> Result<S::Ok, S::Error> {
        self.inner.serialize_str(v)
    }
    #[inline]
    fn serialize_bytes(self, v: &[u8]) -> Result<S::Ok, S::Error> {
        self.inner.serialize_bytes(v)
    }
    #[inline]
    fn serialize_none(self) -> Result<S::Ok, S::Error> {
        self.inner.serialize_none()
    }
    #[inline]
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<S::Ok, S::Error> {
        let level = self.child()?;
        let value = self.at(value, level);
        self.inner.serialize_some(&value)
    }
    #[inline]
    fn serialize_unit(self) -> Result<S::Ok, S::Error> {
        self.inner.serialize_unit()
    }
    #[inline]
    fn serialize_unit_struct(self, _: &'static str) -> Result<S::Ok, S::Error> {
        self.inner.serialize_unit()
    }
    #[inline]
    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> Result<S::Ok, S::Error> {
        self.inner.serialize_str(variant)
    }
    #[inline]
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, value: &T) -> Result<S::Ok, S::Error> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<S::Ok, S::Error> {
        // A map of one entry: the variant's name, then its content.
        let level = self.child()?;
        let value = self.at(value, level);
        let mut map = self.inner.serialize_map(Some(1))?;
        map.serialize_entry(variant, &value)?;
        map.end()
    }
    #[inline]
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, S::Error> {
        // The tree's length is exact; a type's hint may not be. Text
        // formats write the same either way (the length only shapes pretty
        // output, which is not written here).
        let level = self.child()?;
        let (rules, inner) = (self.rules, self.inner.serialize_seq(None)?);
        Ok(Items { inner, rules, level })
    }
    #[inline]
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, S::Error> {
        self.serialize_seq(None)
    }
    #[inline]
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeTupleStruct, S::Error> {
        self.serialize_seq(None)
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, S::Error> {
        Err(refused())
    }
    #[inline]
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, S::Error> {
        let level = self.child()?;
        let (rules, inner) = (self.rules, self.inner.serialize_map(None)?);
        Ok(Items { inner, rules, level })
    }
    #[inline]
    fn serialize_struct(self, _: &'static str, len: usize) -> Result<Self::SerializeStruct, S::Error> {
        if len == 0 {
            // The tree announces what was written, which a type's count
            // need not be when it is zero.
            return Err(refused());
        }
        let level = self.child()?;
        let rules = self.rules;
        let inner = self.inner.serialize_struct("Struct", len)?;
        Ok(Items { inner, rules, level })
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, S::Error> {
        Err(refused())
    }
    fn collect_str<T: fmt::Display + ?Sized>(self, value: &T) -> Result<S::Ok, S::Error> {
        self.serialize_str(&value.to_string())
    }
    fn is_human_readable(&self) -> bool {
        true
    }
}

impl<C, R: Rules> Items<C, R> {
    #[inline]
    fn at<'v, T: ?Sized>(&self, value: &'v T) -> At<'v, T, R> {
        At { value, rules: self.rules, level: self.level }
    }
}

impl<C: SerializeSeq, R: Rules> SerializeSeq for Items<C, R> {
    type Ok = C::Ok;
    type Error = C::Error;
    #[inline]
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), C::Error> {
        let value = self.at(value);
        self.inner.serialize_element(&value)
    }
    #[inline]
    fn end(self) -> Result<C::Ok, C::Error> {
        self.inner.end()
    }
}

impl<C: SerializeSeq, R: Rules> SerializeTuple for Items<C, R> {
    type Ok = C::Ok;
    type Error = C::Error;
    #[inline]
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), C::Error> {
        SerializeSeq::serialize_element(self, value)
    }
    #[inline]
    fn end(self) -> Result<C::Ok, C::Error> {
        self.inner.end()
    }
}

impl<C: SerializeSeq, R: Rules> SerializeTupleStruct for Items<C, R> {
    type Ok = C::Ok;
    type Error = C::Error;
    #[inline]
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), C::Error> {
        SerializeSeq::serialize_element(self, value)
    }
    #[inline]
    fn end(self) -> Result<C::Ok, C::Error> {
        self.inner.end()
    }
}

impl<C: SerializeMap, R: Rules> SerializeMap for Items<C, R> {
    type Ok = C::Ok;
    type Error = C::Error;
    #[inline]
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), C::Error> {
        let key = self.at(key);
        self.inner.serialize_key(&key)
    }
    #[inline]
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), C::Error> {
        let value = self.at(value);
        self.inner.serialize_value(&value)
    }
    #[inline]
    fn end(self) -> Result<C::Ok, C::Error> {
        self.inner.end()
    }
}

impl<C: SerializeStruct, R: Rules> SerializeStruct for Items<C, R> {
    type Ok = C::Ok;
    type Error = C::Error;
    #[inline]
    fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result<(), C::Error> {
        let value = self.at(value);
        self.inner.serialize_field(key, &value)
    }
    #[inline]
    fn skip_field(&mut self, _: &'static str) -> Result<(), C::Error> {
        // The tree leaves the field out, and so does the text.
        Ok(())
    }
    #[inline]
    fn end(self) -> Result<C::Ok, C::Error> {
        self.inner.end()
    }
}
