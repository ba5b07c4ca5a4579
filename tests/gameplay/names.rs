//! `Name` above one operation: warnings that name an entity show its name,
//! saves and prefabs keep names, and a game's own `"Name"` type still
//! registers.
#![cfg(feature = "serde")]

use archetable::prelude::*;
use archetable::system::CommandError;
use serde::{Deserialize, Serialize};

use crate::logs;

#[derive(Component, Debug, PartialEq, Clone, Copy, Default, Serialize, Deserialize)]
struct Hp(u32);

fn refuse(query: Query<Entity, With<Hp>>, mut commands: Commands) {
    for entity in query.iter() {
        commands.add_fallible(move |_| {
            Err(CommandError { command: "spawn_prefab", entity, reason: "unknown prefab `Orcc`".into() })
        });
    }
}

fn despawn_twice(query: Query<Entity, With<Hp>>, mut commands: Commands) {
    for entity in query.iter() {
        commands.despawn(entity);
        commands.despawn(entity);
    }
}

#[test]
fn skipped_command_warnings_name_a_named_entity() {
    logs::capture();
    let mut world = World::new();
    let orc = world.spawn((Name::new("orc"), Hp(1)));
    let mut schedule = Schedule::single_threaded();
    schedule.add_system(refuse);
    schedule.run(&mut world);
    let warnings = logs::warnings();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains(&format!("spawn_prefab on orc ({orc}) from system `refuse`: unknown prefab `Orcc`")),
        "{warnings:?}"
    );
    let example = &schedule.command_report().examples()[0];
    assert_eq!((example.entity, example.name.clone()), (orc, Some(Name::new("orc"))));

    // An entity already gone has no name left to show: the handle alone.
    let mut schedule = Schedule::single_threaded();
    schedule.add_system(despawn_twice);
    schedule.run(&mut world);
    let warnings = logs::warnings();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(
        warnings[1].contains(&format!("despawn on {orc} from system `despawn_twice`: entity gone")),
        "{warnings:?}"
    );
    assert_eq!(schedule.command_report().examples()[0].name, None);
}

#[test]
fn refused_relationship_warnings_name_both_entities() {
    logs::capture();
    let mut world = World::new();
    let orc = world.spawn(Name::new("orc"));
    world.insert(orc, ChildOf(orc)).unwrap();
    let cave = world.spawn(());
    world.despawn(cave).unwrap();
    let bat = world.spawn((Name::new("bat"), ChildOf(cave)));
    let warnings = logs::warnings();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(
        warnings[0].contains(&format!(
            "orc ({orc}) cannot point at orc ({orc}) through `ChildOf`: an entity cannot be its own target"
        )),
        "{warnings:?}"
    );
    assert!(
        warnings[1].contains(&format!("bat ({bat}) cannot point at {cave} through `ChildOf`: the target is not alive")),
        "{warnings:?}"
    );
    assert!(!world.has::<ChildOf>(orc) && !world.has::<ChildOf>(bat));
}

#[test]
fn saves_and_prefabs_keep_names() {
    let mut world = World::new();
    world.register_serde::<Hp>("Hp");
    let orc = world.spawn((Name::new("orc"), Hp(3)));
    let quoted = world.spawn(Name::new("say \"hi\" ü"));
    let registry = world.serde_registry();
    assert_eq!(registry.component_name::<Name>(), Some("Name"));
    let json = world.save_json().unwrap();
    assert!(json.skipped.is_empty(), "{:?}", json.skipped);
    let ron = world.save_ron().unwrap();
    let binary = world.save_binary().unwrap();
    for loaded in [
        World::load_json(&registry, &json.data).unwrap(),
        World::load_ron(&registry, &ron.data).unwrap(),
        World::load_binary(&registry, &binary.data).unwrap(),
    ] {
        assert_eq!(loaded.get::<Name>(orc), Some(&Name::new("orc")));
        assert_eq!(loaded.get::<Name>(quoted).map(Name::as_str), Some("say \"hi\" ü"));
        assert_eq!(loaded.entities_named("orc").collect::<Vec<_>>(), [orc]);
    }
    // Prefabs write a name as a plain string.
    let prefabs = Prefabs::from_json_str(r#"{ "Orc": { "Name": "Gorg", "Hp": 5 } }"#).unwrap();
    let gorg = world.spawn_prefab(&prefabs, "Orc").unwrap();
    assert_eq!(world.get::<Name>(gorg), Some(&Name::new("Gorg")));
    // Not a string: refused with the component named.
    let bad = Prefabs::from_json_str(r#"{ "Orc": { "Name": 7 } }"#).unwrap();
    let error = world.spawn_prefab(&bad, "Orc").unwrap_err().to_string();
    assert!(error.contains("Name"), "{error}");
}

/// A game's own name type, from before the engine had one.
#[derive(Component, Debug, PartialEq, Clone, Default, Serialize, Deserialize)]
struct OwnName(String);

#[test]
fn a_games_own_name_type_takes_the_name_over() {
    let mut world = World::new();
    world.register_serde::<OwnName>("Name");
    let registry = world.serde_registry();
    assert_eq!(registry.component_name::<OwnName>(), Some("Name"));
    assert_eq!(registry.component_name::<Name>(), Some("archetable::Name"));
    let a = world.spawn(OwnName("old".into()));
    let b = world.spawn(Name::new("new"));
    let save = world.save_json().unwrap();
    assert!(save.skipped.is_empty(), "{:?}", save.skipped);
    let loaded = World::load_json(&registry, &save.data).unwrap();
    assert_eq!(loaded.get::<OwnName>(a), Some(&OwnName("old".into())));
    assert_eq!(loaded.get::<Name>(b), Some(&Name::new("new")));
    // Registering the engine's own again under its name is refused loudly,
    // as for any type registered under two names.
    let again = std::panic::catch_unwind(move || {
        let mut registry = registry;
        registry.register::<Name>("Name");
    });
    assert!(again.is_err());
}
