//! Systems with inputs and outputs chained into one: `pipe`, `map`, the
//! error adapters; one system to the schedule, the same world on one
//! thread or many.

use std::time::Duration;

use archetable::prelude::*;

use crate::logs;

#[derive(Component, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Hp(i64);

#[derive(Component, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Tag(u32);

#[derive(Component, Clone, Copy, Debug, PartialEq, Eq)]
struct Player;

#[derive(Default, Debug, PartialEq)]
struct Log(Vec<String>);

fn damage(mut hp: Query<&mut Hp>) -> i64 {
    let mut total = 0;
    for mut hp in hp.iter_mut() {
        hp.0 -= 1;
        total += hp.0;
    }
    total
}

fn report(In(total): In<i64>, hp: Query<&Hp>, mut log: ResMut<Log>) {
    // The second part sees the first part's writes.
    let now: i64 = hp.iter().map(|hp| hp.0).sum();
    log.0.push(format!("{total}/{now}"));
}

#[test]
fn a_pipe_hands_the_output_on_and_is_one_system() {
    let mut world = World::new();
    world.init_resource::<Log>();
    world.spawn(Hp(10));
    world.spawn(Hp(5));
    let mut schedule = Schedule::new();
    // Each part alone would be fine; together they read and write `Hp`
    // one after the other, which a pipe allows.
    let id = schedule.add_system(damage.pipe(report)).id();
    schedule.add_system(|log: Res<Log>| assert!(!log.0.is_empty())).after(id);
    schedule.run(&mut world);
    schedule.run(&mut world);
    assert_eq!(world.resource::<Log>().0, ["13/13", "11/11"]);
    let names: Vec<String> = schedule.timings().iter().map(|t| t.name().to_string()).collect();
    assert_eq!(names[0], "damage | report");
    assert_eq!(schedule.len(), 2);
}

#[test]
fn a_pipe_of_aliasing_parts_is_refused_for_the_aliasing_part() {
    fn aliasing(_: Query<&mut Hp>, _: Query<&Hp>) -> i64 {
        0
    }
    let mut schedule = Schedule::new();
    let error = schedule.try_add_systems(aliasing.pipe(report)).unwrap_err();
    let ScheduleError::Conflict(conflict) = &error else { panic!("{error:?}") };
    assert_eq!(conflict.system, "aliasing");
}

#[test]
fn map_transforms_the_output() {
    fn count(hp: Query<&Hp>) -> usize {
        hp.iter().count()
    }
    let mut world = World::new();
    world.spawn(Hp(1));
    world.spawn(Hp(2));
    let id = world.register_system(count.map(|n| n * 100).map(|n| format!("{n} hp")));
    assert_eq!(world.run_system(id), Ok("200 hp".to_string()));
    let piped = world.register_system(count.pipe(|In(n): In<usize>| n + 1));
    assert_eq!(world.run_system(piped), Ok(3));
}

#[test]
fn a_pipe_with_an_input_takes_it_at_the_front() {
    fn add(In(x): In<i64>, mut hp: Query<&mut Hp>) -> i64 {
        hp.iter_mut()
            .map(|mut hp| {
                hp.0 += x;
                hp.0
            })
            .sum()
    }
    fn double(In(x): In<i64>) -> i64 {
        x * 2
    }
    let mut world = World::new();
    world.spawn(Hp(1));
    let id = world.register_system(add.pipe(double).pipe(double));
    assert_eq!(world.run_system_with(id, 4), Ok(20));
    assert_eq!(world.query::<&Hp>().next(), Some(&Hp(5)));
}

fn fails(hp: Query<&Hp>) -> Result<(), String> {
    match hp.iter().find(|hp| hp.0 < 0) {
        Some(hp) => Err(format!("negative hp {}", hp.0)),
        None => Ok(()),
    }
}

#[test]
fn error_adapters_log_or_warn_and_go_on() {
    logs::capture();
    let mut world = World::new();
    world.spawn(Hp(3));
    let mut schedule = Schedule::new();
    schedule.add_system(fails.warn_errors());
    schedule.add_system(fails.log_errors());
    schedule.run(&mut world);
    assert!(logs::warnings().is_empty());
    world.spawn(Hp(-2));
    schedule.run(&mut world);
    schedule.run(&mut world);
    let mut got = logs::warnings();
    got.sort();
    assert_eq!(
        got,
        [
            "archetable: system `fails` failed: negative hp -2",
            "archetable: system `fails` failed: negative hp -2",
            "error: archetable: system `fails` failed: negative hp -2",
            "error: archetable: system `fails` failed: negative hp -2",
        ]
    );
    assert_eq!(schedule.frames(), 3);
}

#[test]
fn a_skipped_part_skips_the_pipe() {
    fn player_hp(hp: Single<&Hp, With<Player>>) -> i64 {
        hp.0
    }
    fn log_hp(In(hp): In<i64>, mut log: ResMut<Log>) {
        log.0.push(hp.to_string());
    }
    let mut world = World::new();
    world.init_resource::<Log>();
    let mut schedule = Schedule::new();
    schedule.set_warn_on_skipped_systems(false);
    schedule.add_system(player_hp.pipe(log_hp));
    schedule.run(&mut world);
    assert_eq!(schedule.skipped_systems().len(), 1);
    assert_eq!(schedule.skipped_systems()[0].system, "player_hp");
    world.spawn((Player, Hp(9)));
    schedule.run(&mut world);
    assert!(schedule.skipped_systems().is_empty());
    assert_eq!(world.resource::<Log>().0, ["9"]);
    assert_eq!(schedule.timings().iter().next().unwrap().skipped(), 1);
}

#[test]
fn an_exclusive_part_makes_the_pipe_exclusive() {
    fn count(world: &mut World) -> usize {
        world.spawn(Hp(0));
        world.len()
    }
    fn log_count(In(n): In<usize>, mut log: ResMut<Log>) {
        log.0.push(n.to_string());
    }
    let mut world = World::new();
    world.init_resource::<Log>();
    let mut schedule = Schedule::new();
    schedule.add_system(count.pipe(log_count));
    schedule.run(&mut world);
    schedule.run(&mut world);
    assert_eq!(world.resource::<Log>().0, ["1", "2"]);
    let id = world.register_system((|In(x): In<u32>, world: &mut World| x + world.len() as u32).map(|n| n * 2));
    assert_eq!(world.run_system_with(id, 1), Ok(6));
}

// One thread or many: pipes whose parts spawn through commands, beside
// other spawners, give the same handles.

fn spawn_some(mut commands: Commands, mut frame: Local<u32>) -> u32 {
    *frame += 1;
    for i in 0..50 {
        commands.spawn(Tag(*frame * 1000 + i));
    }
    *frame
}

fn spawn_more(In(frame): In<u32>, mut commands: Commands) {
    for i in 0..30 {
        commands.spawn((Tag(frame * 1000 + 500 + i), Hp(i64::from(i))));
    }
}

fn spawn_other(mut commands: Commands, mut frame: Local<u32>) {
    *frame += 1;
    for i in 0..(20 + *frame) {
        commands.spawn(Tag(900_000 + *frame * 100 + i));
    }
}

fn cull(tags: Query<(Entity, &Tag)>, mut commands: Commands) -> usize {
    let mut n = 0;
    for (entity, tag) in tags.iter() {
        if tag.0 % 3 == 0 {
            commands.despawn(entity);
            n += 1;
        }
    }
    n
}

type Snapshot = Vec<(Entity, Option<Tag>, Option<Hp>)>;

fn run(mut schedule: Schedule) -> (Snapshot, Vec<String>) {
    let mut world = World::new();
    world.init_resource::<Log>();
    schedule.add_systems((
        spawn_some.pipe(spawn_more),
        spawn_other,
        cull.pipe(|In(n): In<usize>, mut log: ResMut<Log>| log.0.push(n.to_string())),
        damage.map(drop),
    ));
    for _ in 0..5 {
        schedule.run(&mut world);
    }
    world.check_invariants().unwrap();
    let mut all: Snapshot =
        world.query::<(Entity, Option<&Tag>, Option<&Hp>)>().map(|(e, t, h)| (e, t.copied(), h.copied())).collect();
    all.sort();
    let log = std::mem::take(&mut world.resource_mut::<Log>().0);
    (all, log)
}

#[test]
fn pipes_give_the_same_world_on_one_thread_or_many() {
    let (expected, log) = run(Schedule::single_threaded());
    assert_eq!(expected.len(), 379);
    assert_eq!(log.len(), 5);
    let mut handles: Vec<Entity> = expected.iter().map(|row| row.0).collect();
    handles.dedup();
    assert_eq!(handles.len(), expected.len(), "no handle twice");
    for _ in 0..4 {
        let mut parallel = Schedule::new();
        parallel.set_parallel_threshold(Duration::ZERO);
        assert_eq!(run(parallel), (expected.clone(), log.clone()));
    }
}
