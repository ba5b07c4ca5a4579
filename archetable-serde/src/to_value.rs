//! Turns any `Serialize` value into a [`Value`] tree.

use std::fmt;

use serde::ser::{self, Serialize};

use crate::value::Value;

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
    value.serialize(ValueSerializer)
}

struct ValueSerializer;

type R = Result<Value, ToValueError>;

impl ser::Serializer for ValueSerializer {
    type Ok = Value;
    type Error = ToValueError;
    type SerializeSeq = SeqBuilder;
    type SerializeTuple = SeqBuilder;
    type SerializeTupleStruct = SeqBuilder;
    type SerializeTupleVariant = VariantSeqBuilder;
    type SerializeMap = MapBuilder;
    type SerializeStruct = StructBuilder;
    type SerializeStructVariant = VariantStructBuilder;

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
        Ok(Value::Option(Some(Box::new(to_value(value)?))))
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
        to_value(value)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> R {
        Ok(Value::Variant(Box::new((variant, to_value(value)?))))
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<SeqBuilder, ToValueError> {
        Ok(SeqBuilder(Vec::with_capacity(len.unwrap_or(0))))
    }
    fn serialize_tuple(self, len: usize) -> Result<SeqBuilder, ToValueError> {
        Ok(SeqBuilder(Vec::with_capacity(len)))
    }
    fn serialize_tuple_struct(self, _name: &'static str, len: usize) -> Result<SeqBuilder, ToValueError> {
        Ok(SeqBuilder(Vec::with_capacity(len)))
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<VariantSeqBuilder, ToValueError> {
        Ok(VariantSeqBuilder(variant, Vec::with_capacity(len)))
    }
    fn serialize_map(self, len: Option<usize>) -> Result<MapBuilder, ToValueError> {
        Ok(MapBuilder { entries: Vec::with_capacity(len.unwrap_or(0)), key: None })
    }
    fn serialize_struct(self, _name: &'static str, len: usize) -> Result<StructBuilder, ToValueError> {
        Ok(StructBuilder { fields: Vec::with_capacity(len), complete: true })
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<VariantStructBuilder, ToValueError> {
        Ok(VariantStructBuilder(variant, StructBuilder { fields: Vec::with_capacity(len), complete: true }))
    }
}

pub(crate) struct SeqBuilder(Vec<Value>);

impl ser::SerializeSeq for SeqBuilder {
    type Ok = Value;
    type Error = ToValueError;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), ToValueError> {
        self.0.push(to_value(value)?);
        Ok(())
    }
    fn end(self) -> R {
        Ok(Value::Seq(self.0))
    }
}

impl ser::SerializeTuple for SeqBuilder {
    type Ok = Value;
    type Error = ToValueError;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), ToValueError> {
        ser::SerializeSeq::serialize_element(self, value)
    }
    fn end(self) -> R {
        ser::SerializeSeq::end(self)
    }
}

impl ser::SerializeTupleStruct for SeqBuilder {
    type Ok = Value;
    type Error = ToValueError;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), ToValueError> {
        ser::SerializeSeq::serialize_element(self, value)
    }
    fn end(self) -> R {
        ser::SerializeSeq::end(self)
    }
}

pub(crate) struct VariantSeqBuilder(&'static str, Vec<Value>);

impl ser::SerializeTupleVariant for VariantSeqBuilder {
    type Ok = Value;
    type Error = ToValueError;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), ToValueError> {
        self.1.push(to_value(value)?);
        Ok(())
    }
    fn end(self) -> R {
        Ok(Value::Variant(Box::new((self.0, Value::Seq(self.1)))))
    }
}

pub(crate) struct MapBuilder {
    entries: Vec<(Value, Value)>,
    key: Option<Value>,
}

impl ser::SerializeMap for MapBuilder {
    type Ok = Value;
    type Error = ToValueError;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), ToValueError> {
        self.key = Some(to_value(key)?);
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), ToValueError> {
        let key = self.key.take().ok_or_else(|| ToValueError("map value written before its key".into()))?;
        self.entries.push((key, to_value(value)?));
        Ok(())
    }
    fn end(self) -> R {
        Ok(Value::Map(self.entries))
    }
}

pub(crate) struct StructBuilder {
    fields: Vec<(&'static str, Value)>,
    complete: bool,
}

impl ser::SerializeStruct for StructBuilder {
    type Ok = Value;
    type Error = ToValueError;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result<(), ToValueError> {
        self.fields.push((key, to_value(value)?));
        Ok(())
    }
    fn skip_field(&mut self, _key: &'static str) -> Result<(), ToValueError> {
        self.complete = false;
        Ok(())
    }
    fn end(self) -> R {
        Ok(Value::Struct { fields: self.fields, complete: self.complete })
    }
}

pub(crate) struct VariantStructBuilder(&'static str, StructBuilder);

impl ser::SerializeStructVariant for VariantStructBuilder {
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
