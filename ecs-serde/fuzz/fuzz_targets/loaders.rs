//! Feeds arbitrary bytes to every loader: saves in JSON, RON and binary,
//! both into a fresh world and merged into a populated one, and prefab and
//! override files in JSON and RON. Any panic is a bug; errors are fine.
//! A load that succeeds must leave a consistent world, which the compact
//! text saves write (column by column, values through their trees where
//! they must) as text that loads back and is written again the same.

#![no_main]

use archetable::data::{LoadError, SaveError, Saved, SerdeRegistry};
use archetable::prelude::*;
use libfuzzer_sys::fuzz_target;

#[path = "../src/fixture.rs"]
mod fixture;

/// Saves `world` as compact JSON and RON: each save that succeeds loads
/// back into a world that saves as the same text.
fn resaves(world: &World, registry: &SerdeRegistry) {
    type Save = fn(&World) -> Result<Saved<String>, SaveError>;
    type Load = fn(&SerdeRegistry, &str) -> Result<World, LoadError>;
    let formats: [(Save, Load); 2] = [(World::save_json, World::load_json), (World::save_ron, World::load_ron)];
    for (save, load) in formats {
        if let Ok(saved) = save(world) {
            let again = load(registry, &saved.data).expect("a save loads");
            again.check_invariants().unwrap();
            assert_eq!(save(&again).expect("a loaded save saves").data, saved.data);
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let registry = fixture::registered_world().serde_registry();
    if let Ok(world) = World::load_binary(&registry, data) {
        world.check_invariants().unwrap();
        resaves(&world, &registry);
    }
    let mut target = fixture::populated_world();
    let before = target.len();
    match target.load_into_binary(data) {
        Ok(map) => assert_eq!(target.len(), before + map.len()),
        Err(_) => assert_eq!(target.len(), before),
    }
    target.check_invariants().unwrap();

    let Ok(text) = std::str::from_utf8(data) else { return };
    for load in [World::load_json, World::load_ron] {
        if let Ok(world) = load(&registry, text) {
            world.check_invariants().unwrap();
            resaves(&world, &registry);
        }
    }
    for load in [World::load_into_json, World::load_into_ron] {
        let mut target = fixture::populated_world();
        match load(&mut target, text) {
            Ok(map) => assert_eq!(target.len(), before + map.len()),
            Err(_) => assert_eq!(target.len(), before),
        }
        target.check_invariants().unwrap();
    }
    for parse in [Prefabs::from_json_str, Prefabs::from_ron_str] {
        if let Ok(prefabs) = parse(text) {
            let mut world = fixture::registered_world();
            let _ = prefabs.check(&registry);
            for name in prefabs.names().map(str::to_owned).collect::<Vec<_>>() {
                let _ = world.spawn_prefab(&prefabs, &name);
            }
            world.check_invariants().unwrap();
        }
    }
    for parse in [Overrides::from_json_str, Overrides::from_ron_str] {
        if let Ok(overrides) = parse(text) {
            let prefabs = Prefabs::from_json_str(r#"{"P": {"Position": {"x": 1.0}}}"#).unwrap();
            let mut world = fixture::registered_world();
            let _ = world.spawn_prefab_with(&prefabs, "P", &overrides);
            world.check_invariants().unwrap();
        }
    }
});
