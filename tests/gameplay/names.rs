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

    // An entity that an earlier command despawned is still named.
    let mut schedule = Schedule::single_threaded();
    schedule.add_system(despawn_twice);
    schedule.run(&mut world);
    let warnings = logs::warnings();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(
        warnings[1].contains(&format!("despawn on orc ({orc}) from system `despawn_twice`: entity gone")),
        "{warnings:?}"
    );
    assert_eq!(schedule.command_report().examples()[0].name, Some(Name::new("orc")));
}

/// Records `command` on `target` through `EntityCommands`.
fn on(world: &World, target: Entity, command: fn(&mut EntityCommands)) -> CommandQueue {
    let mut queue = CommandQueue::default();
    command(&mut Commands::new(&mut queue, world).entity(target));
    queue
}

#[test]
fn entity_gone_skips_name_what_commands_despawned_and_nothing_else() {
    let mut world = World::new();
    let goblin = world.spawn((Name::new("goblin"), Hp(1)));
    let bat = world.spawn((Name::new("bat"), ChildOf(goblin)));
    let rock = world.spawn(Hp(2));
    let imp = world.spawn(Name::new("imp"));
    let mut buffer = CommandBuffer::new();
    buffer.despawn(rock);
    buffer.despawn(imp);
    buffer.insert(rock, Hp(3));
    buffer.insert(imp, Hp(3));
    let report = buffer.run_on(&mut world);
    let skipped: Vec<String> = report.examples().iter().map(ToString::to_string).collect();
    assert_eq!(skipped, [format!("insert on {rock}: entity gone"), format!("insert on imp ({imp}): entity gone")]);

    // Through `EntityCommands`, a recursive despawn names its root; the
    // child it took had no command of its own, so only its handle is seen.
    on(&world, goblin, |e| e.despawn_recursive()).apply(&mut world);
    let mut buffer = CommandBuffer::new();
    buffer.despawn(goblin);
    buffer.despawn(bat);
    let skipped: Vec<String> = buffer.run_on(&mut world).examples().iter().map(ToString::to_string).collect();
    assert_eq!(
        skipped,
        [format!("despawn on goblin ({goblin}): entity gone"), format!("despawn on {bat}: entity gone")]
    );
    assert_eq!(world.entity_label(goblin).to_string(), format!("goblin ({goblin})"));

    // A despawn by hand is not remembered; `clear` forgets every name.
    let orc = world.spawn(Name::new("orc"));
    world.despawn(orc).unwrap();
    assert_eq!(world.entity_label(orc).to_string(), orc.to_string());
    world.clear();
    assert_eq!(world.entity_label(goblin).to_string(), goblin.to_string());
}

#[test]
fn only_the_last_64_names_that_commands_despawned_are_kept() {
    let mut world = World::new();
    let named: Vec<Entity> = (0..65).map(|i| world.spawn(Name::new(format!("n{i}")))).collect();
    let mut buffer = CommandBuffer::new();
    for &entity in &named {
        buffer.despawn(entity);
    }
    assert_eq!(buffer.run_on(&mut world).skipped(), 0);
    assert_eq!(world.entity_label(named[0]).to_string(), named[0].to_string(), "the oldest is forgotten");
    assert_eq!(world.entity_label(named[1]).to_string(), format!("n1 ({})", named[1]));
    assert_eq!(world.entity_label(named[64]).to_string(), format!("n64 ({})", named[64]));
    // A new entity in a freed slot is named by its own name, or none.
    let again = world.spawn(());
    assert_eq!(named.iter().filter(|e| e.index() == again.index()).count(), 1);
    assert_eq!(world.entity_label(again).to_string(), again.to_string());
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
