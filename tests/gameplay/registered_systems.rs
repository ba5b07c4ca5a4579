//! One-shot systems by id: `World::register_system`, `run_system`,
//! `run_system_with`, `Commands::run_system`, `unregister_system`; the
//! state they keep, and the errors for ids that cannot run.

use archetable::prelude::*;

use crate::logs;

#[derive(Component, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[component(track_changes)]
struct Hp(u32);

#[derive(Component, Clone, Copy, Debug, PartialEq, Eq)]
struct Player;

#[derive(Default, Debug, PartialEq)]
struct Log(Vec<String>);

fn changed_hp(hp: Query<&Hp, Changed<Hp>>, mut runs: Local<u32>) -> (u32, Vec<u32>) {
    *runs += 1;
    let mut seen: Vec<u32> = hp.iter().map(|hp| hp.0).collect();
    seen.sort();
    (*runs, seen)
}

#[test]
fn a_registered_system_keeps_its_locals_and_change_ticks() {
    let mut world = World::new();
    let a = world.spawn(Hp(1));
    world.spawn(Hp(2));
    let id = world.register_system(changed_hp);
    assert_eq!(world.run_system(id), Ok((1, vec![1, 2])));
    assert_eq!(world.run_system(id), Ok((2, vec![])));
    world.get_mut::<Hp>(a).unwrap().0 = 10;
    assert_eq!(world.run_system(id), Ok((3, vec![10])));
    // `run_system_once` starts afresh every time.
    world.init_resource::<Log>();
    for _ in 0..2 {
        world.run_system_once(|hp: Query<&Hp, Changed<Hp>>, mut runs: Local<u32>, mut log: ResMut<Log>| {
            *runs += 1;
            log.0.push(format!("{} {}", *runs, hp.iter().count()));
        });
    }
    assert_eq!(world.resource::<Log>().0, ["1 2", "1 2"]);
}

#[test]
fn inputs_by_value_by_reference_and_by_mutable_reference() {
    fn scale(In(factor): In<u32>, mut hp: Query<&mut Hp>) -> u32 {
        hp.iter_mut()
            .map(|mut hp| {
                hp.0 *= factor;
                hp.0
            })
            .sum()
    }
    fn longest(InRef(names): InRef<[&'static str]>) -> Option<&'static str> {
        names.iter().copied().max_by_key(|n| n.len())
    }
    fn record(InMut(log): InMut<Log>, hp: Query<&Hp>) {
        log.0.push(format!("{}", hp.iter().count()));
    }
    let mut world = World::new();
    world.spawn(Hp(2));
    world.spawn(Hp(3));
    let scale = world.register_system(scale);
    let longest = world.register_system(longest);
    let record = world.register_system(record);
    assert_eq!(world.run_system_with(scale, 10), Ok(50));
    let names = ["ada", "grace", "tim"];
    assert_eq!(world.run_system_with(longest, &names[..]), Ok(Some("grace")));
    let mut log = Log::default();
    world.run_system_with(record, &mut log).unwrap();
    world.run_system_with(record, &mut log).unwrap();
    assert_eq!(log.0, ["2", "2"]);
}

#[test]
fn commands_of_a_registered_system_apply_after_its_run() {
    fn spawn_two(mut commands: Commands, all: Query<Entity>) -> usize {
        commands.spawn(Hp(7));
        commands.spawn(Hp(8));
        all.iter().count()
    }
    let mut world = World::new();
    let id = world.register_system(spawn_two);
    assert_eq!(world.run_system(id), Ok(0));
    assert_eq!(world.len(), 2);
    assert_eq!(world.run_system(id), Ok(2));
    assert_eq!(world.len(), 4);
}

#[test]
fn an_unregistered_id_and_its_copies_are_errors_and_the_slot_is_reused() {
    fn one() -> u32 {
        1
    }
    fn two() -> u32 {
        2
    }
    let mut world = World::new();
    let id = world.register_system(one);
    let copy = id;
    let system = world.unregister_system(id).unwrap();
    assert_eq!(system.name(), "one");
    assert_eq!(world.run_system(copy), Err(RunSystemError::Unregistered));
    assert_eq!(world.unregister_system(copy).map(|s| s.name().to_string()), Err(RunSystemError::Unregistered));
    let next = world.register_system(two);
    assert_ne!(next, id);
    assert_eq!(world.run_system(id), Err(RunSystemError::Unregistered));
    assert_eq!(world.run_system(next), Ok(2));
    // The system handed back can be registered again, keeping its state.
    let mut counter = World::new();
    let counting = counter.register_system(|mut n: Local<u32>| {
        *n += 1;
        *n
    });
    assert_eq!(counter.run_system(counting), Ok(1));
    let system = counter.unregister_system(counting).unwrap();
    let again = counter.register_system(system);
    assert_eq!(counter.run_system(again), Ok(2));
}

#[test]
fn an_id_from_another_world_is_an_error() {
    fn zero() -> u32 {
        0
    }
    let mut one = World::new();
    let mut two = World::new();
    let id = one.register_system(zero);
    assert_eq!(two.run_system(id), Err(RunSystemError::OtherWorld));
    assert_eq!(two.unregister_system(id).err(), Some(RunSystemError::OtherWorld));
    two.register_system(zero); // the same index in the other world
    assert_eq!(two.run_system(id), Err(RunSystemError::OtherWorld));
    assert_eq!(one.run_system(id), Ok(0));
}

struct Me(RegisteredSystemId<(), String>);

#[test]
fn a_system_that_runs_or_unregisters_itself_gets_running() {
    fn recurse(world: &mut World) -> String {
        let me = world.resource::<Me>().0;
        let run = world.run_system(me);
        let unregister = world.unregister_system(me).err();
        format!("{run:?} {unregister:?}")
    }
    let mut world = World::new();
    let id = world.register_system(recurse);
    world.insert_resource(Me(id));
    assert_eq!(world.run_system(id), Ok("Err(Running) Some(Running)".to_string()));
    // Still registered, and runs again.
    assert_eq!(world.run_system(id), Ok("Err(Running) Some(Running)".to_string()));
}

#[test]
fn a_skipped_registered_system_is_an_error_naming_the_parameter() {
    fn heal(mut hp: Single<&mut Hp, With<Player>>) -> u32 {
        hp.0 += 1;
        hp.0
    }
    let mut world = World::new();
    let id = world.register_system(heal);
    let Err(RunSystemError::Skipped(skip)) = world.run_system(id) else { panic!("not skipped") };
    assert_eq!(
        (skip.system.as_str(), skip.param.as_str(), skip.reason),
        ("heal", "Single<&mut Hp, With<Player>>", QuerySingleError::NoEntities)
    );
    world.spawn((Player, Hp(4)));
    assert_eq!(world.run_system(id), Ok(5));
}

#[test]
fn a_panicking_registered_system_stays_registered() {
    fn fragile(In(fail): In<bool>, mut commands: Commands) -> u32 {
        commands.spawn(Hp(1));
        assert!(!fail, "asked to fail");
        1
    }
    let mut world = World::new();
    let id = world.register_system(fragile);
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| world.run_system_with(id, true)));
    assert!(panicked.is_err());
    assert_eq!(world.query::<&Hp>().count(), 0, "the panicking run's commands are dropped");
    assert_eq!(world.run_system_with(id, false), Ok(1));
    assert_eq!(world.query::<&Hp>().count(), 1);
}

#[derive(Default)]
struct Opened(Vec<u32>);

struct Door(RegisteredSystemId<In<u32>, ()>, RegisteredSystemId);

#[test]
fn commands_run_a_registered_system_when_they_apply() {
    fn open(In(n): In<u32>, mut opened: ResMut<Opened>) {
        opened.0.push(n);
    }
    fn open_plain(mut opened: ResMut<Opened>) {
        opened.0.push(0);
    }
    fn press(door: Res<Door>, mut commands: Commands, opened: Res<Opened>) {
        assert!(opened.0.is_empty(), "not before the commands apply");
        commands.run_system_with(door.0, 5);
        commands.run_system(door.1);
    }
    let mut world = World::new();
    world.init_resource::<Opened>();
    let with_input = world.register_system(open);
    let plain = world.register_system(open_plain);
    world.insert_resource(Door(with_input, plain));
    let mut schedule = Schedule::new();
    schedule.add_system(press);
    schedule.run(&mut world);
    assert_eq!(world.resource::<Opened>().0, [5, 0]);

    // By the time the commands apply, the id may be gone: a warning.
    logs::capture();
    world.resource_mut::<Opened>().0.clear();
    world.unregister_system(plain).unwrap();
    schedule.run(&mut world);
    assert_eq!(world.resource::<Opened>().0, [5]);
    let warnings = logs::warnings();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("the system was unregistered"), "{warnings:?}");
}

struct Again(RegisteredSystemId);

#[test]
fn a_system_may_queue_its_own_next_run() {
    fn countdown(mut commands: Commands, again: Res<Again>, mut log: ResMut<Log>, mut left: Local<Option<u32>>) {
        let left = left.get_or_insert(3);
        log.0.push(left.to_string());
        if *left > 0 {
            *left -= 1;
            commands.run_system(again.0);
        }
    }
    let mut world = World::new();
    world.init_resource::<Log>();
    let id = world.register_system(countdown);
    world.insert_resource(Again(id));
    world.run_system(id).unwrap();
    assert_eq!(world.resource::<Log>().0, ["3", "2", "1", "0"]);
}

#[test]
fn a_registered_system_whose_commands_are_skipped_warns() {
    fn despawn_all(all: Query<Entity, With<Hp>>, mut commands: Commands) {
        for entity in all.iter() {
            commands.despawn(entity);
            commands.despawn(entity);
        }
    }
    logs::capture();
    let mut world = World::new();
    world.spawn(Hp(1));
    let id = world.register_system(despawn_all);
    world.run_system(id).unwrap();
    assert!(world.is_empty());
    let warnings = logs::warnings();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("1 deferred command(s) of registered system `despawn_all` skipped"), "{warnings:?}");
}

#[test]
#[should_panic(expected = "error[E0002]")]
fn registering_a_system_whose_parameters_alias_panics() {
    fn aliasing(_: Query<&mut Hp>, _: Query<&Hp>) {}
    World::new().register_system(aliasing);
}

#[cfg(feature = "serde")]
#[test]
fn saves_skip_registered_systems_without_reporting_them() {
    use archetable::data::SerdeWorldExt;

    fn count(hp: Query<&Hp>) -> usize {
        hp.iter().count()
    }
    let mut world = World::new();
    world.spawn(Hp(1));
    let id = world.register_system(count);
    let saved = world.save_json().unwrap();
    assert!(saved.skipped_resources.is_empty(), "{:?}", saved.skipped_resources);
    assert!(!saved.data.contains("Registry"), "{}", saved.data);
    let mut loaded = World::load_json(&world.serde_registry(), &saved.data).unwrap();
    assert_eq!(loaded.run_system(id), Err(RunSystemError::OtherWorld));
    let again = loaded.register_system(count);
    assert_eq!(loaded.run_system(again), Ok(0), "`Hp` is not registered for saving");
    assert_eq!(world.run_system(id), Ok(1));
}
