//! Turns any `Serialize` value into a [`Value`] tree (model layer).

use std::fmt;

use serde::ser::{self, Serialize};

use crate::model::typed::TypedPlan;
use crate::model::value::Value;

/// Why a value could not become a tree: its `Serialize` impl failed, or it
/// used something a tree cannot hold (a 128-bit integer past 64 bits).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ToValueError(pub String);

impl fmt::Display for ToValueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ToValueError {}

impl ser::Error for ToValueError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        ToValueError(msg.to_string())
    }
}

/// The tree of `value`.
pub(crate) fn to_value<T: Serialize + ?Sized>(value: &T) -> Result<Value, ToValueError> {
    value.serialize(ValueSerializer { plan: None })
}

/// The tree of `value` for a binary save, whose structs keep only their
/// values when all their fields were written: a struct written with
/// another number of fields than `plan` saw its reader read (a field left
/// out without a word to the serializer) keeps its field names instead.
pub(crate) fn to_binary_tree<T: Serialize + ?Sized>(value: &T, plan: &TypedPlan) -> Result<Value, ToValueError> {
    value.serialize(ValueSerializer { plan: Some(plan) })
}

#[derive(Clone, Copy)]
struct ValueSerializer<'p> {
    plan: Option<&'p TypedPlan>,
}

impl<'p> ValueSerializer<'p> {
    fn tree<T: Serialize + ?Sized>(self, value: &T) -> R {
        value.serialize(self)
    }

    fn structure(self, key: (&'static str, Option<u32>), len: usize) -> StructBuilder<'p> {
        StructBuilder { ser: self, key, fields: Vec::with_capacity(len), complete: true }
    }
}

type R = Result<Value, ToValueError>;

impl<'p> ser::Serializer for ValueSerializer<'p> {
    type Ok = Value;
    type Error = ToValueError;
    type SerializeSeq = SeqBuilder<'p>;
    type SerializeTuple = SeqBuilder<'p>;
    type SerializeTupleStruct = SeqBuilder<'p>;
    type SerializeTupleVariant = VariantSeqBuilder<'p>;
    type SerializeMap = MapBuilder<'p>;
    type SerializeStruct = StructBuilder<'p>;
    type SerializeStructVariant = VariantStructBuilder<'p>;

    fn serialize_bool(self, v: bool) -> R {
        Ok(Value::Bool(v))
    }
    fn serialize_i8(self, v: i8) -> R {
        Ok(Value::I64(v.into()))
    }
    fn serialize_i16(self, v: i16) -> R {
        Ok(Value::I64(v.into()))
    }
    fn serialize_i32(self, v: i32) -> R {
        Ok(Value::I64(v.into()))
    }
    fn serialize_i64(self, v: i64) -> R {
        Ok(Value::I64(v))
    }
    fn serialize_i128(self, v: i128) -> R {
        i64::try_from(v).map(Value::I64).map_err(|_| ToValueError(format!("integer {v} is out of the 64-bit range")))
    }
    fn serialize_u8(self, v: u8) -> R {
        Ok(Value::U64(v.into()))
    }
    fn serialize_u16(self, v: u16) -> R {
        Ok(Value::U64(v.into()))
    }
    fn serialize_u32(self, v: u32) -> R {
        Ok(Value::U64(v.into()))
    }
    fn serialize_u64(self, v: u64) -> R {
        Ok(Value::U64(v))
    }
    fn serialize_u128(self, v: u128) -> R {
        u64::try_from(v).map(Value::U64).map_err(|_| ToValueError(format!("integer {v} is out of the 64-bit range")))
    }
    fn serialize_f32(self, v: f32) -> R {
        Ok(Value::F32(v))
    }
    fn serialize_f64(self, v: f64) -> R {
        Ok(Value::F64(v))
    }
    fn serialize_char(self, v: char) -> R {
        Ok(Value::Char(v))
    }
    fn serialize_str(self, v: &str) -> R {
        Ok(Value::String(v.to_owned()))
    }
    fn serialize_bytes(self, v: &[u8]) -> R {
        Ok(Value::Bytes(v.to_vec()))
    }
    fn serialize_none(self) -> R {
        Ok(Value::Option(None))
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> R {
        Ok(Value::Option(Some(Box::new(self.tree(value)?))))
    }
    fn serialize_unit(self) -> R {
        Ok(Value::Unit)
    }
    fn serialize_unit_struct(self, _name: &'static str) -> R {
        Ok(Value::Unit)
    }
    fn serialize_unit_variant(self, _name: &'static str, _index: u32, variant: &'static str) -> R {
        Ok(Value::String(variant.to_owned()))
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _name: &'static str, value: &T) -> R {
        self.tree(value)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> R {
        Ok(Value::Variant(Box::new((variant, self.tree(value)?))))
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<SeqBuilder<'p>, ToValueError> {
        Ok(SeqBuilder(self, Vec::with_capacity(len.unwrap_or(0))))
    }
    fn serialize_tuple(self, len: usize) -> Result<SeqBuilder<'p>, ToValueError> {
        Ok(SeqBuilder(self, Vec::with_capacity(len)))
    }
    fn serialize_tuple_struct(self, _name: &'static str, len: usize) -> Result<SeqBuilder<'p>, ToValueError> {
        Ok(SeqBuilder(self, Vec::with_capacity(len)))
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<VariantSeqBuilder<'p>, ToValueError> {
        Ok(VariantSeqBuilder(self, variant, Vec::with_capacity(len)))
    }
    fn serialize_map(self, len: Option<usize>) -> Result<MapBuilder<'p>, ToValueError> {
        Ok(MapBuilder { ser: self, entries: Vec::with_capacity(len.unwrap_or(0)), key: None })
    }
    fn serialize_struct(self, name: &'static str, len: usize) -> Result<StructBuilder<'p>, ToValueError> {
        Ok(self.structure((name, None), len))
    }
    fn serialize_struct_variant(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<VariantStructBuilder<'p>, ToValueError> {
        Ok(VariantStructBuilder(variant, self.structure((name, Some(index)), len)))
    }
}

pub(crate) struct SeqBuilder<'p>(ValueSerializer<'p>, Vec<Value>);

impl ser::SerializeSeq for SeqBuilder<'_> {
    type Ok = Value;
    type Error = ToValueError;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), ToValueError> {
        self.1.push(self.0.tree(value)?);
        Ok(())
    }
    fn end(self) -> R {
        Ok(Value::Seq(self.1))
    }
}

impl ser::SerializeTuple for SeqBuilder<'_> {
    type Ok = Value;
    type Error = ToValueError;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), ToValueError> {
        ser::SerializeSeq::serialize_element(self, value)
    }
    fn end(self) -> R {
        ser::SerializeSeq::end(self)
    }
}

impl ser::SerializeTupleStruct for SeqBuilder<'_> {
    type Ok = Value;
    type Error = ToValueError;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), ToValueError> {
        ser::SerializeSeq::serialize_element(self, value)
    }
    fn end(self) -> R {
        ser::SerializeSeq::end(self)
    }
}

pub(crate) struct VariantSeqBuilder<'p>(ValueSerializer<'p>, &'static str, Vec<Value>);

impl ser::SerializeTupleVariant for VariantSeqBuilder<'_> {
    type Ok = Value;
    type Error = ToValueError;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), ToValueError> {
        self.2.push(self.0.tree(value)?);
        Ok(())
    }
    fn end(self) -> R {
        Ok(Value::Variant(Box::new((self.1, Value::Seq(self.2)))))
    }
}

pub(crate) struct MapBuilder<'p> {
    ser: ValueSerializer<'p>,
    entries: Vec<(Value, Value)>,
    key: Option<Value>,
}

impl ser::SerializeMap for MapBuilder<'_> {
    type Ok = Value;
    type Error = ToValueError;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), ToValueError> {
        self.key = Some(self.ser.tree(key)?);
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), ToValueError> {
        let key = self.key.take().ok_or_else(|| ToValueError("map value written before its key".into()))?;
        self.entries.push((key, self.ser.tree(value)?));
        Ok(())
    }
    fn end(self) -> R {
        Ok(Value::Map(self.entries))
    }
}

pub(crate) struct StructBuilder<'p> {
    ser: ValueSerializer<'p>,
    /// The struct's name and, for a struct variant, its index.
    key: (&'static str, Option<u32>),
    fields: Vec<(&'static str, Value)>,
    complete: bool,
}

impl ser::SerializeStruct for StructBuilder<'_> {
    type Ok = Value;
    type Error = ToValueError;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result<(), ToValueError> {
        self.fields.push((key, self.ser.tree(value)?));
        Ok(())
    }
    fn skip_field(&mut self, _key: &'static str) -> Result<(), ToValueError> {
        self.complete = false;
        Ok(())
    }
    fn end(self) -> R {
        let (name, variant) = self.key;
        let other_count = self.ser.plan.is_some_and(|plan| plan.reads_other_count(name, variant, self.fields.len()));
        Ok(Value::Struct { fields: self.fields, complete: self.complete && !other_count })
    }
}

pub(crate) struct VariantStructBuilder<'p>(&'static str, StructBuilder<'p>);

impl ser::SerializeStructVariant for VariantStructBuilder<'_> {
    type Ok = Value;
    type Error = ToValueError;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result<(), ToValueError> {
        ser::SerializeStruct::serialize_field(&mut self.1, key, value)
    }
    fn skip_field(&mut self, key: &'static str) -> Result<(), ToValueError> {
        ser::SerializeStruct::skip_field(&mut self.1, key)
    }
    fn end(self) -> R {
        let inner = ser::SerializeStruct::end(self.1)?;
        Ok(Value::Variant(Box::new((self.0, inner))))
    }
}
