//! The model layer (bottom), shared by every format: value trees, the
//! per-type functions the registry keeps for every format, the registry
//! itself, and the save and load plans the formats build on. Nothing here
//! imports a format or the `World` extension traits. Within the layer,
//! each module imports only modules listed before it.

// Basics.
pub(crate) mod depth;
pub(crate) mod entity_probe;
pub(crate) mod error;
pub(crate) mod suggest;

// Value trees, and what a format can hold.
pub(crate) mod value;
pub(crate) mod writable;

// Which values a binary save writes straight from their types.
pub(crate) mod typed;

// Between typed values and trees.
pub(crate) mod from_value;
pub(crate) mod to_value;

// Adapters around a format's own serializer and deserializer.
pub(crate) mod plain;
pub(crate) mod strict;

// The per-type column functions, binary and text.
pub(crate) mod column;
pub(crate) mod text_column;

// The registry.
pub(crate) mod registry;

// The save plan and the save document as written.
pub(crate) mod save;

// The save document as read, and placing whole tables.
pub(crate) mod load;
pub(crate) mod place;
