//! Game states in saves, and what a save report says to do about what it
//! skipped (beside the crate's face: it uses the registry and the save
//! report, nothing of the formats).
//!
//! A state type `S` (`#[derive(States)]`, also `Serialize` and
//! `Deserialize`) is two resources: [`State<S>`], the current value, and
//! [`NextState<S>`], a request not applied yet.
//! [`SerdeRegistry::register_state`] (or `world.register_serde_state`)
//! registers both, as `State<name>` and `NextState<name>`; a world loaded
//! from the save goes on in `GameLoop::resume`.

use std::any::type_name;

use archetable_core::{NextState, State, States};
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::model::registry::SerdeRegistry;
use crate::model::save::Saved;

impl SerdeRegistry {
    /// Registers state type `S` for saves: its current value
    /// ([`State<S>`], saved as `State<name>`) and its pending request
    /// ([`NextState<S>`], as `NextState<name>`).
    ///
    /// ```
    /// use archetable::prelude::*;
    /// use archetable::data::SerdeRegistry;
    /// use serde::{Deserialize, Serialize};
    ///
    /// #[derive(States, Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
    /// enum Phase { Playing, Over }
    ///
    /// let mut registry = SerdeRegistry::new();
    /// registry.register_state::<Phase>("Phase");
    /// let names: Vec<&str> = registry.resource_names().collect();
    /// assert_eq!(names, ["Time", "FixedTime", "LoopStarted", "State<Phase>", "NextState<Phase>"]);
    /// ```
    ///
    /// # Panics
    /// As [`SerdeRegistry::register_resource`], for either name.
    #[track_caller]
    pub fn register_state<S>(&mut self, name: &str) -> &mut Self
    where
        S: States + Serialize + DeserializeOwned,
    {
        self.register_resource::<State<S>>(&format!("State<{name}>"));
        self.register_resource::<NextState<S>>(&format!("NextState<{name}>"))
    }
}

impl<T> Saved<T> {
    /// What the save left out and how to save it, one line each: the
    /// registration call for each skipped component type and resource
    /// (for a game state, the one call that registers both its
    /// resources); empty when everything was saved.
    ///
    /// ```
    /// use archetable::prelude::*;
    /// use serde::{Deserialize, Serialize};
    ///
    /// #[derive(States, Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
    /// enum Phase { Playing, Over }
    /// #[derive(Component)] struct Spark;
    ///
    /// let mut game = GameLoop::new();
    /// game.add_state(Phase::Playing);
    /// game.world_mut().spawn(Spark);
    /// let report = game.world().save_json()?.report();
    /// assert_eq!(report.len(), 2);
    /// assert!(report[0].contains("1 entity had it"));
    /// assert!(report[0].contains(r#"world.register_serde::<Spark>("Spark")"#));
    /// assert!(report[1].contains(r#"world.register_serde_state::<Phase>("Phase")"#));
    ///
    /// game.world_mut().register_serde_state::<Phase>("Phase");
    /// assert_eq!(game.world().save_json()?.report().len(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn report(&self) -> Vec<String> {
        let mut lines = Vec::new();
        for skipped in &self.skipped {
            let short = short_name(&skipped.type_name);
            let entities = match skipped.entities {
                1 => "1 entity had it".to_string(),
                n => format!("{n} entities had it"),
            };
            lines.push(format!(
                "component `{}` was not saved ({entities}): register it with \
                 `world.register_serde::<{short}>(\"{short}\")` (`register_serde_without_default` for a type \
                 without `Default`); it must be `Serialize` and `Deserialize`",
                skipped.type_name
            ));
        }
        let mut states: Vec<String> = Vec::new();
        for resource in &self.skipped_resources {
            let short = short_name(resource);
            let state = short
                .strip_prefix("State<")
                .or_else(|| short.strip_prefix("NextState<"))
                .and_then(|rest| rest.strip_suffix('>'))
                .filter(|_| is_engine_state(resource));
            match state {
                Some(state) => {
                    if states.iter().any(|s| s == state) {
                        continue;
                    }
                    states.push(state.to_string());
                    lines.push(format!(
                        "game state `{state}` was not saved (resources `State<{state}>` and `NextState<{state}>`): \
                         register it with `world.register_serde_state::<{state}>(\"{state}\")`, with `{state}` \
                         `Serialize` and `Deserialize`, and go on with a loaded save in `GameLoop::resume`"
                    ));
                }
                None => lines.push(format!(
                    "resource `{resource}` was not saved: register it with \
                     `world.register_serde_resource::<{short}>(\"{short}\")`; it must be `Serialize` and \
                     `Deserialize`"
                )),
            }
        }
        lines
    }
}

/// Whether `type_name` is the engine's `State<..>` or `NextState<..>`,
/// not a user's type of the same name.
fn is_engine_state(type_name_of: &str) -> bool {
    // The engine's own path, as the compiler writes it.
    let state = type_name::<State<Probe>>();
    let next = type_name::<NextState<Probe>>();
    let prefix = |full: &'static str| full.split('<').next().unwrap_or(full);
    type_name_of.starts_with(&format!("{}<", prefix(state))) || type_name_of.starts_with(&format!("{}<", prefix(next)))
}

#[derive(Clone, PartialEq, Eq, Hash, Debug)]
struct Probe;
impl States for Probe {}

/// `type_name` with every path shortened to its last segment:
/// `a::b::State<c::Phase>` is `State<Phase>`.
fn short_name(type_name: &str) -> String {
    let mut out = String::with_capacity(type_name.len());
    let mut segment = String::new();
    let mut chars = type_name.chars().peekable();
    while let Some(c) = chars.next() {
        if c == ':' && chars.peek() == Some(&':') {
            chars.next();
            segment.clear(); // a path: keep only what follows
        } else if c.is_alphanumeric() || c == '_' {
            segment.push(c);
        } else {
            out.push_str(&segment);
            segment.clear();
            out.push(c);
        }
    }
    out.push_str(&segment);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_names_drop_every_path() {
        assert_eq!(short_name("game::Particle"), "Particle");
        assert_eq!(short_name("archetable_core::game_loop::state::State<game::Phase>"), "State<Phase>");
        assert_eq!(short_name("a::Pair<b::X, c::d::Y>"), "Pair<X, Y>");
        assert_eq!(short_name("u32"), "u32");
    }

    #[test]
    fn only_the_engines_states_are_states() {
        assert!(is_engine_state(type_name::<State<Probe>>()));
        assert!(is_engine_state(type_name::<NextState<Probe>>()));
        assert!(!is_engine_state("game::State<game::Phase>"));
    }
}
