//! Skipped and failed deferred commands are visible by default: a warning
//! through the `log` facade (standard error without a logger), once per
//! system and command, that can be turned off.

use archetable::prelude::*;

use crate::logs;
use archetable::system::CommandError;

#[derive(Component)]
struct Hp;

fn despawn_twice(query: Query<(Entity, &Hp)>, mut commands: Commands) {
    for (entity, _) in query.iter() {
        commands.despawn(entity);
        commands.despawn(entity);
    }
}

fn refuse(query: Query<Entity>, mut commands: Commands) {
    if let Some(entity) = query.iter().next() {
        commands.add_fallible(move |_| {
            Err(CommandError { command: "spawn_prefab", entity, reason: "unknown prefab `Orcc`".into() })
        });
    }
}

#[test]
fn skipped_commands_warn_once_per_system_and_command() {
    logs::capture();
    let mut world = World::new();
    let mut schedule = Schedule::new();
    schedule.add_system(despawn_twice);
    schedule.add_system(refuse);
    world.spawn(Hp);
    schedule.run(&mut world);
    assert_eq!(schedule.command_report().skipped(), 2);
    let warnings = logs::warnings();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(warnings[0].contains("despawn on 0v1 from system `despawn_twice`: entity gone"));
    assert!(warnings[1].contains("spawn_prefab on 0v1 from system `refuse`: unknown prefab `Orcc`"));

    // The same pairs again: counted, not warned.
    world.spawn(Hp);
    schedule.run(&mut world);
    assert_eq!(schedule.command_report().skipped(), 2);
    assert_eq!(logs::warnings().len(), 2);

    // Turned off: a new pair is not warned either.
    let mut quiet = Schedule::new();
    quiet.set_warn_on_skipped_commands(false);
    quiet.add_system(despawn_twice);
    world.spawn(Hp);
    quiet.run(&mut world);
    assert_eq!(quiet.command_report().skipped(), 1);
    assert_eq!(logs::warnings().len(), 2);
}
