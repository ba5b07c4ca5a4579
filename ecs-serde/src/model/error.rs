//! The error types and `Format` (model layer).
//!
//! The error types: each variant says what went wrong and where (which
//! prefab or entity, which component, which field), so a designer can fix
//! the file without reading code.

use std::error::Error;
use std::fmt;
use std::path::PathBuf;

use archetable_core::{AllocatorStateError, Entity};

/// A file format this crate reads and writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// JSON, through `serde_json`.
    Json,
    /// RON (Rusty Object Notation), through `ron`.
    Ron,
    /// The compact binary form, through `postcard`.
    Binary,
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Format::Json => "JSON",
            Format::Ron => "RON",
            Format::Binary => "binary",
        })
    }
}

/// serde_json appends " at line L column C" to its messages; the error
/// carries them as fields already.
pub(crate) fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_owned(),
        None => message.to_owned(),
    }
}

/// Appends ` (did you mean `X`?)` when there is a suggestion.
fn did_you_mean(f: &mut fmt::Formatter<'_>, suggestion: &Option<String>) -> fmt::Result {
    match suggestion {
        Some(s) => write!(f, " (did you mean `{s}`?)"),
        None => Ok(()),
    }
}

/// Writes ` field `path`` unless the path is empty (the whole component).
fn at_field(f: &mut fmt::Formatter<'_>, field: &str) -> fmt::Result {
    if field.is_empty() {
        Ok(())
    } else {
        write!(f, ", field `{field}`")
    }
}

/// Loading or spawning a prefab failed. Nothing was spawned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PrefabError {
    /// The text is not valid JSON or RON.
    Syntax {
        /// The format being read.
        format: Format,
        /// 1-based line of the error.
        line: usize,
        /// 1-based column of the error.
        column: usize,
        /// What the parser said.
        message: String,
    },
    /// A prefab file could not be read.
    Io {
        /// The file.
        path: PathBuf,
        /// What the system said.
        message: String,
    },
    /// A prefab file whose extension is neither `.json` nor `.ron`.
    UnsupportedFile {
        /// The file.
        path: PathBuf,
    },
    /// Valid syntax, but not the shape of a prefab file: the top level or a
    /// prefab is not a map, or `extends` is not a name.
    Malformed {
        /// The prefab, if the problem is inside one.
        prefab: Option<String>,
        /// What is wrong.
        message: String,
    },
    /// Two prefabs have the same name.
    DuplicatePrefab {
        /// The name.
        prefab: String,
    },
    /// A prefab lists the same component twice.
    DuplicateComponent {
        /// The prefab.
        prefab: String,
        /// The component name.
        component: String,
    },
    /// No prefab has this name.
    UnknownPrefab {
        /// The name asked for.
        prefab: String,
        /// The closest existing name, if one is close.
        suggestion: Option<String>,
    },
    /// A prefab extends one that does not exist.
    UnknownParent {
        /// The prefab that says `extends`.
        prefab: String,
        /// The name it extends.
        parent: String,
        /// The closest existing name, if one is close.
        suggestion: Option<String>,
    },
    /// Prefabs extend each other in a circle.
    ExtendsCycle {
        /// The prefabs on the circle, each extending the next, the last
        /// extending the first.
        cycle: Vec<String>,
    },
    /// A component name that is not registered.
    UnknownComponent {
        /// The prefab that names it.
        prefab: String,
        /// The name.
        component: String,
        /// The closest registered name, if one is close.
        suggestion: Option<String>,
    },
    /// A component's value does not fit its type: a field of the wrong type,
    /// an unknown or missing field, a bad enum variant.
    Field {
        /// The prefab being spawned.
        prefab: String,
        /// The component name.
        component: String,
        /// The path of the field inside the component (`stats.hp`,
        /// `path[2]`), empty for the component as a whole.
        field: String,
        /// What is wrong with it.
        message: String,
    },
}

impl fmt::Display for PrefabError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PrefabError::Syntax { format, line, column, message } => {
                write!(f, "{format} syntax error at line {line}, column {column}: {message}")
            }
            PrefabError::Io { path, message } => write!(f, "cannot read prefab file {}: {message}", path.display()),
            PrefabError::UnsupportedFile { path } => {
                write!(f, "prefab file {} is neither .json nor .ron", path.display())
            }
            PrefabError::Malformed { prefab: Some(prefab), message } => write!(f, "prefab `{prefab}`: {message}"),
            PrefabError::Malformed { prefab: None, message } => write!(f, "prefab file: {message}"),
            PrefabError::DuplicatePrefab { prefab } => write!(f, "prefab `{prefab}` is defined twice"),
            PrefabError::DuplicateComponent { prefab, component } => {
                write!(f, "prefab `{prefab}` lists component `{component}` twice")
            }
            PrefabError::UnknownPrefab { prefab, suggestion } => {
                write!(f, "no prefab named `{prefab}`")?;
                did_you_mean(f, suggestion)
            }
            PrefabError::UnknownParent { prefab, parent, suggestion } => {
                write!(f, "prefab `{prefab}` extends `{parent}`, which does not exist")?;
                did_you_mean(f, suggestion)
            }
            PrefabError::ExtendsCycle { cycle } => {
                write!(f, "prefabs extend each other in a circle: {}", cycle.join(" -> "))?;
                if let Some(first) = cycle.first() {
                    write!(f, " -> {first}")?;
                }
                Ok(())
            }
            PrefabError::UnknownComponent { prefab, component, suggestion } => {
                write!(f, "prefab `{prefab}`: no component registered as `{component}`")?;
                did_you_mean(f, suggestion)
            }
            PrefabError::Field { prefab, component, field, message } => {
                write!(f, "prefab `{prefab}`, component `{component}`")?;
                at_field(f, field)?;
                write!(f, ": {message}")
            }
        }
    }
}

impl Error for PrefabError {}

/// Loading a save failed. The target world was not changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LoadError {
    /// The text is not valid JSON or RON, or not shaped like a save.
    Syntax {
        /// The format being read.
        format: Format,
        /// 1-based line of the error.
        line: usize,
        /// 1-based column of the error.
        column: usize,
        /// What the parser said.
        message: String,
    },
    /// The bytes are not a valid binary save.
    Binary {
        /// What the decoder said.
        message: String,
    },
    /// The data is well formed but is not a save of this crate.
    NotASave {
        /// The `format` tag found.
        found: String,
    },
    /// A save written by a newer (or unknown) version of this crate.
    UnsupportedVersion {
        /// The version found.
        found: u32,
        /// The newest version this build reads.
        supported: u32,
    },
    /// The save lists one entity twice.
    DuplicateEntity {
        /// The entity's handle in the save.
        entity: Entity,
    },
    /// A component name that is not registered in the target world.
    UnknownComponent {
        /// The entity's handle in the save.
        entity: Entity,
        /// The name.
        component: String,
        /// The closest registered name, if one is close.
        suggestion: Option<String>,
    },
    /// An entity lists the same component twice.
    DuplicateComponent {
        /// The entity's handle in the save.
        entity: Entity,
        /// The component name.
        component: String,
    },
    /// A component's value does not fit its type.
    Component {
        /// The entity's handle in the save.
        entity: Entity,
        /// The component name.
        component: String,
        /// The path of the field inside the component, empty for the
        /// component as a whole.
        field: String,
        /// What is wrong with it.
        message: String,
    },
    /// A resource name that is not registered in the target world.
    UnknownResource {
        /// The name.
        resource: String,
        /// The closest registered name, if one is close.
        suggestion: Option<String>,
    },
    /// The save lists one resource twice.
    DuplicateResource {
        /// The name.
        resource: String,
    },
    /// A resource's value does not fit its type.
    Resource {
        /// The resource name.
        resource: String,
        /// The path of the field inside the resource.
        field: String,
        /// What is wrong with it.
        message: String,
    },
    /// The saved allocator has more slots than its live and free entities
    /// account for (a save may hold at most [`MAX_RETIRED_SLOTS`] slots
    /// that are neither).
    ///
    /// [`MAX_RETIRED_SLOTS`]: crate::MAX_RETIRED_SLOTS
    TooManySlots {
        /// The slot count the save claims.
        slots: u64,
        /// The most this save could hold.
        limit: u64,
    },
    /// The saved allocator state contradicts itself or the saved entities.
    Allocator(AllocatorStateError),
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Syntax { format, line, column, message } => {
                write!(f, "{format} syntax error at line {line}, column {column}: {message}")
            }
            LoadError::Binary { message } => write!(f, "invalid binary save: {message}"),
            LoadError::NotASave { found } => write!(f, "not a save file (format tag `{found}`)"),
            LoadError::UnsupportedVersion { found, supported } => {
                write!(f, "save version {found} is not supported (this build reads up to {supported})")
            }
            LoadError::DuplicateEntity { entity } => write!(f, "entity {entity} is listed twice"),
            LoadError::UnknownComponent { entity, component, suggestion } => {
                write!(f, "entity {entity}: no component registered as `{component}`")?;
                did_you_mean(f, suggestion)
            }
            LoadError::DuplicateComponent { entity, component } => {
                write!(f, "entity {entity} lists component `{component}` twice")
            }
            LoadError::Component { entity, component, field, message } => {
                write!(f, "entity {entity}, component `{component}`")?;
                at_field(f, field)?;
                write!(f, ": {message}")
            }
            LoadError::UnknownResource { resource, suggestion } => {
                write!(f, "no resource registered as `{resource}`")?;
                did_you_mean(f, suggestion)
            }
            LoadError::DuplicateResource { resource } => write!(f, "resource `{resource}` is listed twice"),
            LoadError::Resource { resource, field, message } => {
                write!(f, "resource `{resource}`")?;
                at_field(f, field)?;
                write!(f, ": {message}")
            }
            LoadError::TooManySlots { slots, limit } => {
                write!(f, "the save claims {slots} entity slots, more than the {limit} its entities account for")
            }
            LoadError::Allocator(e) => write!(f, "inconsistent entity allocator in the save: {e}"),
        }
    }
}

impl Error for LoadError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        match self {
            LoadError::Allocator(e) => Some(e),
            _ => None,
        }
    }
}

/// Saving failed; nothing was written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SaveError {
    /// A component's value cannot be written: its `Serialize` impl failed,
    /// or the format cannot hold it (JSON has no NaN or infinity).
    Component {
        /// The entity.
        entity: Entity,
        /// The component's registered name.
        component: String,
        /// The path of the field, empty for the component as a whole.
        field: String,
        /// What is wrong.
        message: String,
    },
    /// A resource's value cannot be written.
    Resource {
        /// The resource's registered name.
        resource: String,
        /// The path of the field, empty for the resource as a whole.
        field: String,
        /// What is wrong.
        message: String,
    },
    /// The format's writer failed.
    Encode {
        /// The format.
        format: Format,
        /// What it said.
        message: String,
    },
}

impl fmt::Display for SaveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SaveError::Component { entity, component, field, message } => {
                write!(f, "cannot save entity {entity}, component `{component}`")?;
                at_field(f, field)?;
                write!(f, ": {message}")
            }
            SaveError::Resource { resource, field, message } => {
                write!(f, "cannot save resource `{resource}`")?;
                at_field(f, field)?;
                write!(f, ": {message}")
            }
            SaveError::Encode { format, message } => write!(f, "cannot write {format}: {message}"),
        }
    }
}

impl Error for SaveError {}
