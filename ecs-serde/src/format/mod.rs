//! The format layer (middle): JSON and RON saves (`text`), binary saves
//! and prefabs, one module each. They build on the model below and never
//! on one another; the `World` extension traits above call them.

pub(crate) mod binary;
pub(crate) mod prefab;
pub(crate) mod text;
