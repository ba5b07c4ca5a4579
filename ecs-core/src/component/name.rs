//! [`Name`]: a component that gives an entity a readable name, for
//! lookups, messages and tools.

use std::borrow::Borrow;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use crate::component::{Component, MutableComponent};

/// An entity's name, for people: shown in the engine's warnings
/// (`orc (3v1)`), by `Debug` of [`EntityRef`](crate::EntityRef), in saves
/// (as `"Name"`, registered by default) and in the inspector, and found
/// with [`World::entities_named`](crate::World::entities_named).
///
/// The text is shared: cloning a `Name` copies a pointer, never the
/// text. Names compare, hash and order by their text, and `Debug` prints
/// the text quoted, as for a `str`. Names need not be unique.
///
/// ```
/// use archetable::prelude::*;
///
/// let mut world = World::new();
/// let orc = world.spawn(Name::new("orc"));
/// let name = world.get::<Name>(orc).unwrap().clone(); // no copy of the text
/// assert_eq!(name, "orc");
/// assert_eq!(format!("{name} / {name:?}"), r#"orc / "orc""#);
/// assert_eq!(world.entities_named("orc").collect::<Vec<_>>(), [orc]);
/// ```
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Name(Arc<str>);

impl Name {
    /// A name with this text.
    pub fn new(name: impl Into<Arc<str>>) -> Self {
        Name(name.into())
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Replaces the text.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// let mut world = World::new();
    /// let e = world.spawn(Name::new("orc"));
    /// world.get_mut::<Name>(e).unwrap().set("troll");
    /// assert_eq!(world.get::<Name>(e).unwrap().as_str(), "troll");
    /// ```
    pub fn set(&mut self, name: impl Into<Arc<str>>) {
        self.0 = name.into();
    }
}

// Not offered in the compiler's "other types implement" notes.
#[diagnostic::do_not_recommend]
impl Component for Name {
    const CLONE: Option<fn(&Self) -> Self> = Some(Name::clone);
}

#[diagnostic::do_not_recommend]
impl MutableComponent for Name {}

impl Default for Name {
    /// The empty name.
    fn default() -> Self {
        Name::new("")
    }
}

impl Deref for Name {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for Name {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for Name {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for Name {
    fn from(name: &str) -> Self {
        Name::new(name)
    }
}

impl From<String> for Name {
    fn from(name: String) -> Self {
        Name::new(name)
    }
}

impl PartialEq<str> for Name {
    fn eq(&self, other: &str) -> bool {
        &*self.0 == other
    }
}

impl PartialEq<&str> for Name {
    fn eq(&self, other: &&str) -> bool {
        &*self.0 == *other
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for Name {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for Name {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(Name::from)
    }
}
