//! `Serialize` and `Deserialize` for [`Entity`] (the `serde` feature), so
//! components that hold handles can derive them.
//!
//! A handle is written as a newtype struct named [`ENTITY_SERDE_NAME`]
//! around its text form (`"3v1"`: index, `v`, generation) in human-readable
//! formats, or around its 64 bits ([`Entity::to_bits`]) in binary ones. Most
//! formats do not write the newtype's name; a deserializer that knows it can
//! recognize handles and remap them when loading into another world.

use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};

use crate::entity::Entity;

/// The newtype-struct name under which [`Entity`] serializes.
pub const ENTITY_SERDE_NAME: &str = "$archetable::Entity";

impl Serialize for Entity {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if serializer.is_human_readable() {
            serializer.serialize_newtype_struct(ENTITY_SERDE_NAME, &format_args!("{self}"))
        } else {
            serializer.serialize_newtype_struct(ENTITY_SERDE_NAME, &self.to_bits())
        }
    }
}

impl<'de> Deserialize<'de> for Entity {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_newtype_struct(ENTITY_SERDE_NAME, EntityVisitor)
    }
}

impl Entity {
    /// Parses the text form written by `Display` (`"3v1"`). With the `serde`
    /// feature.
    pub fn parse(text: &str) -> Option<Entity> {
        let (index, generation) = text.split_once('v')?;
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        if !digits(index) || !digits(generation) {
            return None;
        }
        let index: u32 = index.parse().ok()?;
        let generation: u32 = generation.parse().ok()?;
        Entity::from_bits((u64::from(generation) << 32) | u64::from(index))
    }
}

struct EntityVisitor;

impl<'de> Visitor<'de> for EntityVisitor {
    type Value = Entity;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an entity handle: \"INDEXvGENERATION\" or its 64 bits")
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, deserializer: D) -> Result<Entity, D::Error> {
        if deserializer.is_human_readable() {
            deserializer.deserialize_any(self)
        } else {
            deserializer.deserialize_u64(self)
        }
    }

    fn visit_u64<E: de::Error>(self, bits: u64) -> Result<Entity, E> {
        Entity::from_bits(bits).ok_or_else(|| E::invalid_value(de::Unexpected::Unsigned(bits), &self))
    }

    fn visit_i64<E: de::Error>(self, bits: i64) -> Result<Entity, E> {
        u64::try_from(bits)
            .ok()
            .and_then(Entity::from_bits)
            .ok_or_else(|| E::invalid_value(de::Unexpected::Signed(bits), &self))
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<Entity, E> {
        Entity::parse(text).ok_or_else(|| E::invalid_value(de::Unexpected::Str(text), &self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_form_parses_back() {
        let e = Entity::from_bits((7 << 32) | 12).unwrap();
        assert_eq!(e.to_string(), "12v7");
        assert_eq!(Entity::parse("12v7"), Some(e));
        for bad in ["", "v", "12v", "v7", "12v0", "12x7", "+1v1", "1v+1", "99999999999v1", "1v1v1"] {
            assert_eq!(Entity::parse(bad), None, "{bad:?}");
        }
    }
}
