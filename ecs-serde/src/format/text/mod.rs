//! JSON and RON (format layer): the two text formats share one writer and
//! one reader, told apart by [`Text`]. Compact saves are written straight
//! from the tables (`save.rs`), pretty ones through the whole document
//! (`pretty.rs`); loads read straight into the tables where the file
//! allows (`load.rs`), else through trees (`model/load.rs`).

mod load;
mod pretty;
mod save;

use archetable_core::World;

use crate::model::depth::{MAX_DEPTH, MAX_RON_DEPTH};
use crate::model::error::{Format, LoadError};
use crate::model::load::{EntityMap, Mode};
use crate::model::registry::SerdeRegistry;
use crate::model::text_column::Text;

pub(crate) use pretty::{save_json as save_json_pretty, save_ron as save_ron_pretty};
pub(crate) use save::save;

/// A fresh world holding the JSON or RON save `text`.
pub(crate) fn load_fresh(registry: &SerdeRegistry, format: Format, text: &str) -> Result<World, LoadError> {
    match format {
        Format::Ron => load_fresh_nesting::<MAX_RON_DEPTH>(registry, format, text),
        _ => load_fresh_nesting::<MAX_DEPTH>(registry, format, text),
    }
}

/// The text format of `format`.
fn text_of(format: Format) -> Text {
    if format == Format::Ron {
        Text::Ron
    } else {
        Text::Json
    }
}

/// [`load_fresh`] of a save whose values may nest `L` levels: straight
/// into the tables where the file allows (`load.rs`), else through trees
/// (`model/load.rs`).
fn load_fresh_nesting<const L: usize>(
    registry: &SerdeRegistry,
    format: Format,
    text: &str,
) -> Result<World, LoadError> {
    if let Some(loaded) = load::load_fresh::<L>(registry, text_of(format), text) {
        return loaded;
    }
    let document = crate::model::load::parse::<L>(format, text.as_bytes())?;
    let mut world = World::new();
    registry.register_components(&mut world);
    world.insert_resource(registry.clone());
    crate::model::load::load(&mut world, &document, Mode::Exact)?;
    Ok(world)
}

/// Adds the entities of the JSON or RON save `text` to `world`.
pub(crate) fn load_merge(world: &mut World, format: Format, text: &str) -> Result<EntityMap, LoadError> {
    match format {
        Format::Ron => load_merge_nesting::<MAX_RON_DEPTH>(world, format, text),
        _ => load_merge_nesting::<MAX_DEPTH>(world, format, text),
    }
}

/// [`load_merge`] of a save whose values may nest `L` levels.
fn load_merge_nesting<const L: usize>(world: &mut World, format: Format, text: &str) -> Result<EntityMap, LoadError> {
    if let Some(loaded) = load::load_merge::<L>(world, text_of(format), text) {
        return loaded;
    }
    let document = crate::model::load::parse::<L>(format, text.as_bytes())?;
    let handles = crate::model::load::load(world, &document, Mode::Merge)?;
    Ok(crate::model::load::entity_map(&document, handles))
}
