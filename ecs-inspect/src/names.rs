//! The names components go by in the protocol: the name registered with
//! serde when there is one, else the Rust type name; either is accepted,
//! and so is the last segment of the type name when no other type shares
//! it.

use std::collections::HashMap;

use archetable_core::{ComponentId, Entity, World};
use archetable_serde::SerdeRegistry;
use serde_json::json;

use crate::rpc::{codes, RpcError};

/// One component type of the world.
pub(crate) struct Known {
    pub id: ComponentId,
    /// What the protocol calls it.
    pub name: String,
    pub type_name: &'static str,
    /// Registered with serde: readable and writable as JSON.
    pub serde: bool,
    pub size: usize,
    pub align: usize,
    pub sparse: bool,
}

/// Every component type of a world, by each name it answers to.
pub(crate) struct Names {
    pub known: Vec<Known>,
    by_name: HashMap<String, usize>,
    by_id: Vec<Option<usize>>,
    by_type_name: HashMap<&'static str, usize>,
    /// Short type names (`Position` for `game::Position`) shared by two
    /// types map to `None`.
    by_short: HashMap<&'static str, Option<usize>>,
}

fn short(type_name: &'static str) -> &'static str {
    let base = type_name.split('<').next().unwrap_or(type_name);
    base.rsplit("::").next().unwrap_or(base)
}

impl Names {
    pub fn of(world: &World, registry: &SerdeRegistry) -> Names {
        let mut names = Names {
            known: Vec::new(),
            by_name: HashMap::new(),
            by_id: Vec::new(),
            by_type_name: HashMap::new(),
            by_short: HashMap::new(),
        };
        for info in world.components().iter() {
            let registered = registry.component_name_of_type(info.type_id());
            let i = names.known.len();
            names.known.push(Known {
                id: info.id(),
                name: registered.unwrap_or(info.name()).to_owned(),
                type_name: info.name(),
                serde: registered.is_some(),
                size: info.layout().size(),
                align: info.layout().align(),
                sparse: info.is_sparse(),
            });
            names.by_type_name.insert(info.name(), i);
            let slot = info.id().index();
            if names.by_id.len() <= slot {
                names.by_id.resize(slot + 1, None);
            }
            names.by_id[slot] = Some(i);
            names.by_short.entry(short(info.name())).and_modify(|v| *v = None).or_insert(Some(i));
        }
        for (i, known) in names.known.iter().enumerate() {
            names.by_name.insert(known.name.clone(), i);
        }
        names
    }

    /// The type a protocol name stands for.
    pub fn find(&self, name: &str) -> Result<&Known, RpcError> {
        let found = self
            .by_name
            .get(name)
            .or_else(|| self.by_type_name.get(name))
            .copied()
            .or_else(|| self.by_short.get(name).copied().flatten());
        match found {
            Some(i) => Ok(&self.known[i]),
            None => {
                let suggestion = nearest(name, self.known.iter().map(|k| k.name.as_str()));
                let mut message = format!("no component type is called `{name}`");
                if let Some(s) = suggestion {
                    message.push_str(&format!(" (did you mean `{s}`?)"));
                }
                Err(RpcError::new(codes::UNKNOWN_COMPONENT, message)
                    .with_data(json!({ "name": name, "suggestion": suggestion })))
            }
        }
    }

    /// The type of a component id.
    pub fn by_id(&self, id: ComponentId) -> Option<&Known> {
        self.by_id.get(id.index()).copied().flatten().map(|i| &self.known[i])
    }

    /// The components of a live entity, in the order its view lists them.
    pub fn of_entity(&self, world: &World, entity: Entity) -> Option<Vec<&Known>> {
        let view = world.entity(entity)?;
        Some(view.component_names().filter_map(|n| self.by_type_name.get(n).map(|&i| &self.known[i])).collect())
    }
}

/// The candidate closest to `name` by edit distance, ignoring case, if at
/// most a third of its letters differ.
pub(crate) fn nearest<'a>(name: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    const MAX: usize = 64;
    let name: Vec<char> = name.to_lowercase().chars().collect();
    if name.len() > MAX {
        return None;
    }
    let mut best: Option<(usize, &str)> = None;
    for candidate in candidates {
        let lower: Vec<char> = candidate.to_lowercase().chars().collect();
        if lower.len() > MAX {
            continue;
        }
        let longest = name.len().max(lower.len()).max(1);
        let distance = edit_distance(&name, &lower);
        if distance * 3 <= longest && distance < longest && best.is_none_or(|(d, _)| distance < d) {
            best = Some((distance, candidate));
        }
    }
    best.map(|(_, c)| c)
}

fn edit_distance(a: &[char], b: &[char]) -> usize {
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitute = diagonal + usize::from(ca != cb);
            diagonal = row[j + 1];
            row[j + 1] = substitute.min(row[j] + 1).min(diagonal + 1);
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_names_a_likely_typo_only() {
        let names = ["Position", "Velocity", "Spark"];
        assert_eq!(nearest("Positon", names.iter().copied()), Some("Position"));
        assert_eq!(nearest("velocity", names.iter().copied()), Some("Velocity"));
        assert_eq!(nearest("Health", names.iter().copied()), None);
    }

    #[test]
    fn short_names_drop_paths_and_generics() {
        assert_eq!(short("game::Position"), "Position");
        assert_eq!(short("a::b::Wrapper<c::D>"), "Wrapper");
        assert_eq!(short("Plain"), "Plain");
    }
}
