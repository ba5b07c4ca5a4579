//! Whether a value holds an entity handle (model layer).
//!
//! Finds out whether a value holds an entity handle, by serializing it into
//! nothing and stopping at the first `Entity` (recognized by the name it
//! serializes under, [`ENTITY_SERDE_NAME`]). Merge loads use it to pick the
//! few values whose handles must follow their entities.

use std::fmt;

use archetable_core::ENTITY_SERDE_NAME;
use serde::ser::{self, Serialize};

/// Whether `value` holds an entity handle. `None` when its `Serialize` impl
/// failed before one was found, so the answer is unknown.
pub(crate) fn holds_entity<T: Serialize + ?Sized>(value: &T) -> Option<bool> {
    match value.serialize(Probe) {
        Ok(()) => Some(false),
        Err(Stop::Found) => Some(true),
        Err(Stop::Failed) => None,
    }
}

/// Why the walk stopped early.
#[derive(Debug)]
enum Stop {
    Found,
    Failed,
}

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Stop::Found => "found an entity handle",
            Stop::Failed => "the value could not be serialized",
        })
    }
}

impl std::error::Error for Stop {}

impl ser::Error for Stop {
    fn custom<T: fmt::Display>(_: T) -> Self {
        Stop::Failed
    }
}

struct Probe;

type R = Result<(), Stop>;

macro_rules! ignore {
    ($($name:ident: $ty:ty),* $(,)?) => {
        $(fn $name(self, _: $ty) -> R { Ok(()) })*
    };
}

impl ser::Serializer for Probe {
    type Ok = ();
    type Error = Stop;
    type SerializeSeq = Probe;
    type SerializeTuple = Probe;
    type SerializeTupleStruct = Probe;
    type SerializeTupleVariant = Probe;
    type SerializeMap = Probe;
    type SerializeStruct = Probe;
    type SerializeStructVariant = Probe;

    ignore! {
        serialize_bool: bool, serialize_i8: i8, serialize_i16: i16, serialize_i32: i32, serialize_i64: i64,
        serialize_i128: i128, serialize_u8: u8, serialize_u16: u16, serialize_u32: u32, serialize_u64: u64,
        serialize_u128: u128, serialize_f32: f32, serialize_f64: f64, serialize_char: char,
        serialize_str: &str, serialize_bytes: &[u8], serialize_unit_struct: &'static str,
    }

    fn serialize_none(self) -> R {
        Ok(())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> R {
        value.serialize(self)
    }
    fn serialize_unit(self) -> R {
        Ok(())
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, _: &'static str) -> R {
        Ok(())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, name: &'static str, value: &T) -> R {
        if name == ENTITY_SERDE_NAME {
            return Err(Stop::Found);
        }
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        value: &T,
    ) -> R {
        value.serialize(self)
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Probe, Stop> {
        Ok(Probe)
    }
    fn serialize_tuple(self, _: usize) -> Result<Probe, Stop> {
        Ok(Probe)
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Probe, Stop> {
        Ok(Probe)
    }
    fn serialize_tuple_variant(self, _: &'static str, _: u32, _: &'static str, _: usize) -> Result<Probe, Stop> {
        Ok(Probe)
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Probe, Stop> {
        Ok(Probe)
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Probe, Stop> {
        Ok(Probe)
    }
    fn serialize_struct_variant(self, _: &'static str, _: u32, _: &'static str, _: usize) -> Result<Probe, Stop> {
        Ok(Probe)
    }
    fn collect_str<T: fmt::Display + ?Sized>(self, _: &T) -> R {
        Ok(())
    }
}

impl ser::SerializeSeq for Probe {
    type Ok = ();
    type Error = Stop;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> R {
        value.serialize(Probe)
    }
    fn end(self) -> R {
        Ok(())
    }
}

impl ser::SerializeTuple for Probe {
    type Ok = ();
    type Error = Stop;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> R {
        value.serialize(Probe)
    }
    fn end(self) -> R {
        Ok(())
    }
}

impl ser::SerializeTupleStruct for Probe {
    type Ok = ();
    type Error = Stop;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> R {
        value.serialize(Probe)
    }
    fn end(self) -> R {
        Ok(())
    }
}

impl ser::SerializeTupleVariant for Probe {
    type Ok = ();
    type Error = Stop;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> R {
        value.serialize(Probe)
    }
    fn end(self) -> R {
        Ok(())
    }
}

impl ser::SerializeMap for Probe {
    type Ok = ();
    type Error = Stop;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> R {
        key.serialize(Probe)
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> R {
        value.serialize(Probe)
    }
    fn end(self) -> R {
        Ok(())
    }
}

impl ser::SerializeStruct for Probe {
    type Ok = ();
    type Error = Stop;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, _: &'static str, value: &T) -> R {
        value.serialize(Probe)
    }
    fn end(self) -> R {
        Ok(())
    }
}

impl ser::SerializeStructVariant for Probe {
    type Ok = ();
    type Error = Stop;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, _: &'static str, value: &T) -> R {
        value.serialize(Probe)
    }
    fn end(self) -> R {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use archetable_core::Entity;

    use super::holds_entity;

    #[test]
    fn finds_handles_wherever_they_are() {
        let e = Entity::from_bits(1 << 32).unwrap();
        assert_eq!(holds_entity(&(1u8, "x", [1.0f32; 3])), Some(false));
        assert_eq!(holds_entity(&Option::<Entity>::None), Some(false));
        assert_eq!(holds_entity(&Some(e)), Some(true));
        assert_eq!(holds_entity(&vec![(0u8, vec![e])]), Some(true));
        assert_eq!(holds_entity(&BTreeMap::from([(e, 1u8)])), Some(true));
    }
}
