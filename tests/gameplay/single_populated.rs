//! `Single` and `Populated`: systems skipped, not panicked, when the query
//! has not exactly one (or not any) entity; skips counted, listed and
//! warned about once; in observers too; the same world on one thread or
//! many.

use std::time::Duration;

use archetable::prelude::*;

use crate::logs;

#[derive(Component, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Player;

#[derive(Component, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Enemy;

#[derive(Component, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Pos(i64);

#[derive(Component, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[component(track_changes)]
struct Hp(i64);

#[derive(Default, Debug, PartialEq)]
struct Log(Vec<String>);

fn follow(player: Single<&Pos, With<Player>>, mut log: ResMut<Log>) {
    log.0.push(format!("follow {}", player.0));
}

type Skips = Vec<(String, String, QuerySingleError)>;

fn skips(schedule: &Schedule) -> Skips {
    schedule.skipped_systems().iter().map(|s| (s.system.clone(), s.param.clone(), s.reason)).collect()
}

fn quiet(schedule: &mut Schedule) -> &mut Schedule {
    schedule.set_warn_on_skipped_systems(false);
    schedule
}

#[test]
fn single_runs_with_the_one_match_and_is_skipped_on_none_or_several() {
    let mut world = World::new();
    world.init_resource::<Log>();
    let mut schedule = Schedule::new();
    quiet(&mut schedule).add_system(follow);

    schedule.run(&mut world);
    let param = "Single<&Pos, With<Player>>".to_string();
    assert_eq!(skips(&schedule), [("follow".to_string(), param.clone(), QuerySingleError::NoEntities)]);
    assert!(world.resource::<Log>().0.is_empty());

    let first = world.spawn((Player, Pos(3)));
    world.spawn(Pos(99)); // not a player: does not count
    schedule.run(&mut world);
    assert!(schedule.skipped_systems().is_empty());
    assert_eq!(world.resource::<Log>().0, ["follow 3"]);

    world.spawn((Player, Pos(4)));
    schedule.run(&mut world);
    assert_eq!(skips(&schedule), [("follow".to_string(), param, QuerySingleError::MultipleEntities)]);
    assert_eq!(world.resource::<Log>().0, ["follow 3"]);

    world.despawn(first).unwrap();
    schedule.run(&mut world);
    assert_eq!(world.resource::<Log>().0, ["follow 3", "follow 4"]);
    let timing = schedule.timings();
    let timing = timing.get("follow").unwrap();
    assert_eq!((timing.runs(), timing.skipped()), (4, 2));
}

#[test]
fn single_writes_through_its_item() {
    fn heal(mut hp: Single<&mut Hp, With<Player>>) {
        hp.0 += 5;
    }
    let mut world = World::new();
    let player = world.spawn((Player, Hp(1)));
    let enemy = world.spawn((Enemy, Hp(1)));
    world.run_system_once(heal);
    assert_eq!((world.get::<Hp>(player), world.get::<Hp>(enemy)), (Some(&Hp(6)), Some(&Hp(1))));
}

#[test]
fn option_single_is_none_for_no_match_and_skipped_for_several() {
    fn look(player: Option<Single<&Pos, With<Player>>>, mut log: ResMut<Log>) {
        log.0.push(format!("{:?}", player.map(|p| p.0)));
    }
    let mut world = World::new();
    world.init_resource::<Log>();
    let mut schedule = Schedule::new();
    quiet(&mut schedule).add_system(look);
    schedule.run(&mut world);
    assert!(schedule.skipped_systems().is_empty());
    world.spawn((Player, Pos(1)));
    schedule.run(&mut world);
    world.spawn((Player, Pos(2)));
    schedule.run(&mut world);
    assert_eq!(
        skips(&schedule),
        [("look".to_string(), "Option<Single<&Pos, With<Player>>>".to_string(), QuerySingleError::MultipleEntities)]
    );
    assert_eq!(world.resource::<Log>().0, ["None", "Some(1)"]);
}

#[test]
fn populated_is_skipped_while_it_matches_nothing() {
    fn count(enemies: Populated<Entity, With<Enemy>>, mut log: ResMut<Log>) {
        log.0.push(format!("enemies {}", enemies.iter().count()));
    }
    let mut world = World::new();
    world.init_resource::<Log>();
    let mut schedule = Schedule::new();
    quiet(&mut schedule).add_system(count);
    schedule.run(&mut world);
    assert_eq!(
        skips(&schedule),
        [("count".to_string(), "Populated<Entity, With<Enemy>>".to_string(), QuerySingleError::NoEntities)]
    );
    let a = world.spawn(Enemy);
    world.spawn(Enemy);
    schedule.run(&mut world);
    world.despawn(a).unwrap();
    schedule.run(&mut world);
    assert_eq!(world.resource::<Log>().0, ["enemies 2", "enemies 1"]);
    world.clear();
    schedule.run(&mut world);
    assert_eq!(world.resource::<Log>().0.len(), 2);
    assert_eq!(schedule.timings().get("count").unwrap().skipped(), 2);
}

#[test]
fn a_skip_warns_once_per_system_and_reason() {
    logs::capture();
    let mut world = World::new();
    world.init_resource::<Log>();
    let mut schedule = Schedule::new();
    schedule.add_system(follow);
    for _ in 0..3 {
        schedule.run(&mut world);
    }
    let warnings = logs::warnings();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].starts_with(
            "archetable: system `follow` skipped: its parameter `Single<&Pos, With<Player>>` found no matching entity"
        ),
        "{warnings:?}"
    );
    // Another reason is another warning, once.
    world.spawn((Player, Pos(1)));
    world.spawn((Player, Pos(2)));
    schedule.run(&mut world);
    schedule.run(&mut world);
    let warnings = logs::warnings();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(warnings[1].contains("found more than one matching entity"), "{warnings:?}");

    logs::capture();
    let mut world = World::new();
    world.init_resource::<Log>();
    let mut silent = Schedule::new();
    quiet(&mut silent).add_system(follow);
    silent.run(&mut world);
    assert_eq!(silent.skipped_systems().len(), 1);
    assert!(logs::warnings().is_empty());
}

#[test]
fn a_skipped_run_is_no_run_for_change_detection() {
    fn watch(_: Populated<&Enemy>, changed: Query<&Hp, Changed<Hp>>, mut log: ResMut<Log>) {
        log.0.push(format!("{:?}", changed.iter().map(|h| h.0).collect::<Vec<_>>()));
    }
    let mut world = World::new();
    world.init_resource::<Log>();
    let hp = world.spawn(Hp(1));
    let enemy = world.spawn(Enemy);
    let mut schedule = Schedule::new();
    quiet(&mut schedule).add_system(watch);
    schedule.run(&mut world);
    world.despawn(enemy).unwrap();
    world.get_mut::<Hp>(hp).unwrap().0 = 2;
    schedule.run(&mut world); // skipped: the change stays unseen
    schedule.run(&mut world);
    world.spawn(Enemy);
    schedule.run(&mut world);
    schedule.run(&mut world);
    assert_eq!(world.resource::<Log>().0, ["[1]", "[2]", "[]"]);
}

#[test]
fn a_skipped_system_keeps_its_locals_and_records_no_commands() {
    fn tally(_: Single<&Player>, mut runs: Local<u32>, mut commands: Commands, mut log: ResMut<Log>) {
        *runs += 1;
        log.0.push(format!("run {}", *runs));
        commands.spawn(Pos(i64::from(*runs)));
    }
    let mut world = World::new();
    world.init_resource::<Log>();
    let mut schedule = Schedule::new();
    quiet(&mut schedule).add_system(tally);
    let player = world.spawn(Player);
    schedule.run(&mut world);
    world.despawn(player).unwrap();
    schedule.run(&mut world);
    assert_eq!(schedule.command_report().applied(), 0);
    world.spawn(Player);
    schedule.run(&mut world);
    assert_eq!(world.resource::<Log>().0, ["run 1", "run 2"]);
    let mut spawned: Vec<i64> = world.query::<&Pos>().map(|p| p.0).collect();
    spawned.sort();
    assert_eq!(spawned, [1, 2]);
}

#[test]
fn a_despawn_earlier_in_the_frame_skips_a_later_single() {
    fn kill(player: Single<Entity, With<Player>>, mut commands: Commands) {
        commands.despawn(*player);
    }
    let mut world = World::new();
    world.init_resource::<Log>();
    world.spawn((Player, Pos(5)));
    let mut schedule = Schedule::single_threaded();
    quiet(&mut schedule);
    let killed = schedule.add_system(kill).id();
    schedule.add_apply_deferred().after(killed);
    schedule.add_system(follow).after(kill).priority(1);
    schedule.run(&mut world);
    assert_eq!(skips(&schedule).len(), 1);
    assert_eq!(schedule.skipped_systems()[0].system, "follow");
    assert!(world.resource::<Log>().0.is_empty());
    assert!(world.is_empty());
}

#[test]
fn a_schedule_moved_to_a_second_world_checks_that_world() {
    let mut one = World::new();
    one.init_resource::<Log>();
    one.spawn((Player, Pos(1)));
    let mut two = World::new();
    two.init_resource::<Log>();
    let mut schedule = Schedule::new();
    quiet(&mut schedule).add_system(follow);
    schedule.run(&mut one);
    schedule.run(&mut two);
    assert_eq!(skips(&schedule).len(), 1);
    schedule.run(&mut one);
    assert!(schedule.skipped_systems().is_empty());
    assert_eq!(one.resource::<Log>().0, ["follow 1", "follow 1"]);
    assert!(two.resource::<Log>().0.is_empty());
}

#[test]
fn access_is_checked_as_for_query() {
    fn aliasing(_: Single<&mut Pos>, _: Query<&Pos>) {}
    fn aliasing_populated(_: Populated<&mut Pos>, _: Single<&Pos, With<Player>>) {}
    fn disjoint(_: Single<&mut Pos, With<Player>>, _: Query<&Pos, Without<Player>>) {}
    let mut schedule = Schedule::new();
    let error = schedule.try_add_systems(aliasing).unwrap_err();
    let ScheduleError::Conflict(conflict) = &error else { panic!("{error:?}") };
    assert_eq!((conflict.writer.1.as_str(), conflict.item.as_str()), ("`Single<&mut Pos>`", "component `Pos`"));
    let error = schedule.try_add_systems(aliasing_populated).unwrap_err();
    assert!(matches!(error, ScheduleError::Conflict(_)), "{error:?}");
    assert!(schedule.try_add_systems(disjoint).is_ok());
}

#[test]
fn derived_params_and_param_sets_forward_the_check() {
    #[derive(SystemParam)]
    struct Target<'w, 's> {
        player: Single<'w, &'static Pos, With<Player>>,
        _local: Local<'s, u32>,
    }
    fn aim(target: Target, mut log: ResMut<Log>) {
        log.0.push(format!("aim {}", target.player.0));
    }
    fn either(mut set: ParamSet<(Populated<'static, 'static, &'static mut Hp>, Query<&'static Hp>)>) {
        set.p0().iter_mut().for_each(|mut hp| hp.0 += 1);
    }
    let mut world = World::new();
    world.init_resource::<Log>();
    let mut schedule = Schedule::single_threaded();
    quiet(&mut schedule).add_systems((aim, either));
    schedule.run(&mut world);
    let mut names: Vec<String> = skips(&schedule).into_iter().map(|s| s.0).collect();
    names.sort();
    assert_eq!(names, ["aim", "either"]);
    world.spawn((Player, Pos(8), Hp(0)));
    schedule.run(&mut world);
    assert!(schedule.skipped_systems().is_empty());
    assert_eq!(world.resource::<Log>().0, ["aim 8"]);
    assert_eq!(world.query::<&Hp>().next(), Some(&Hp(1)));
}

#[test]
fn run_system_once_warns_and_does_not_run_a_skipped_system() {
    logs::capture();
    let mut world = World::new();
    world.init_resource::<Log>();
    world.run_system_once(follow);
    assert!(world.resource::<Log>().0.is_empty());
    let warnings = logs::warnings();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("system `follow` skipped"), "{warnings:?}");
}

#[cfg(feature = "observers")]
mod observers {
    use super::*;

    struct Ping;

    #[test]
    fn observers_are_skipped_the_same_way_and_warn_once() {
        fn on_ping(_: Trigger<Ping>, player: Single<&Pos, With<Player>>, mut log: ResMut<Log>) {
            log.0.push(format!("ping {}", player.0));
        }
        fn on_ping_maybe(_: Trigger<Ping>, player: Option<Single<&Pos, With<Player>>>, mut log: ResMut<Log>) {
            log.0.push(format!("maybe {:?}", player.map(|p| p.0)));
        }
        fn on_ping_populated(_: Trigger<Ping>, enemies: Populated<&Enemy>, mut log: ResMut<Log>) {
            log.0.push(format!("enemies {}", enemies.iter().count()));
        }
        logs::capture();
        let mut world = World::new();
        world.init_resource::<Log>();
        world.observe(on_ping);
        world.observe(on_ping_maybe);
        world.observe(on_ping_populated);
        world.trigger(Ping);
        world.trigger(Ping);
        assert_eq!(world.resource::<Log>().0, ["maybe None", "maybe None"]);
        let warnings = logs::warnings();
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(warnings[0].contains("system `on_ping` skipped"), "{warnings:?}");
        assert!(warnings[1].contains("system `on_ping_populated` skipped"), "{warnings:?}");

        world.spawn((Player, Pos(2)));
        world.spawn(Enemy);
        world.resource_mut::<Log>().0.clear();
        world.trigger(Ping);
        assert_eq!(world.resource::<Log>().0, ["ping 2", "maybe Some(2)", "enemies 1"]);

        world.spawn((Player, Pos(3)));
        world.resource_mut::<Log>().0.clear();
        world.trigger(Ping);
        assert_eq!(world.resource::<Log>().0, ["enemies 1"]);
        assert_eq!(logs::warnings().len(), 4);
    }

    #[test]
    fn an_observer_that_aliases_is_refused() {
        fn aliasing(_: Trigger<Ping>, _: Single<&mut Pos>, _: Query<&Pos>) {}
        let mut world = World::new();
        let conflict = world.try_observe(aliasing).unwrap_err();
        assert_eq!(conflict.item, "component `Pos`");
    }
}

// One thread or many: the same skips, the same world, the same handles.

fn spawn_wave(enemies: Option<Single<&Enemy>>, mut commands: Commands, mut frame: Local<i64>) {
    *frame += 1;
    if enemies.is_none() {
        for i in 0..3 {
            commands.spawn((Enemy, Hp(*frame * 10 + i), Pos(i)));
        }
    }
}

fn hurt(mut enemies: Populated<(Entity, &mut Hp), With<Enemy>>, mut commands: Commands) {
    for (entity, mut hp) in enemies.iter_mut() {
        hp.0 -= 7;
        if hp.0 < 20 {
            commands.despawn(entity);
        }
    }
}

fn chase(player: Single<&mut Pos, With<Player>>, enemies: Populated<&Pos, (With<Enemy>, Without<Player>)>) {
    let mut player = player.into_inner();
    player.0 += enemies.iter().map(|p| p.0).sum::<i64>();
}

fn reward(player: Single<(Entity, &Hp), With<Player>>, mut commands: Commands) {
    let (entity, hp) = *player;
    commands.spawn((Pos(hp.0), Hp(entity.index() as i64)));
}

type Snapshot = Vec<(Entity, Option<Pos>, Option<Hp>, bool, bool)>;

fn run(mut schedule: Schedule) -> (Snapshot, Vec<Skips>) {
    let mut world = World::new();
    world.spawn((Player, Pos(0), Hp(100)));
    quiet(&mut schedule);
    schedule.add_systems((spawn_wave, hurt, chase, reward));
    let mut all_skips = Vec::new();
    for frame in 0..12 {
        if frame == 6 {
            world.spawn((Player, Pos(1), Hp(50))); // two players: `chase` and `reward` wait
        }
        if frame == 9 {
            let second = world.query_filtered::<Entity, With<Player>>().max().unwrap();
            world.despawn(second).unwrap();
        }
        schedule.run(&mut world);
        all_skips.push(skips(&schedule));
    }
    world.check_invariants().unwrap();
    let mut all: Snapshot = world
        .query::<(Entity, Option<&Pos>, Option<&Hp>, Has<Player>, Has<Enemy>)>()
        .map(|(e, p, h, player, enemy)| (e, p.copied(), h.copied(), player, enemy))
        .collect();
    all.sort();
    (all, all_skips)
}

#[test]
fn single_and_populated_give_the_same_world_on_one_thread_or_many() {
    let (expected, expected_skips) = run(Schedule::single_threaded());
    let skipped: usize = expected_skips.iter().map(Vec::len).sum();
    assert!(skipped >= 6, "the workload skips some systems: {expected_skips:?}");
    assert_eq!(expected.iter().filter(|row| row.3).count(), 1, "one player at the end");
    assert_eq!(expected.len(), 10, "{expected:?}");
    for _ in 0..4 {
        let mut parallel = Schedule::new();
        parallel.set_parallel_threshold(Duration::ZERO);
        let (got, got_skips) = run(parallel);
        assert_eq!(got, expected);
        assert_eq!(got_skips, expected_skips);
    }
}

#[derive(Default)]
struct Explode(bool);

fn explode(explode: Res<Explode>) {
    assert!(!explode.0, "boom");
}

#[test]
fn a_frame_cut_short_by_a_panic_lists_its_skips_and_hands_none_to_the_next() {
    for single_threaded in [true, false] {
        let mut world = World::new();
        world.init_resource::<Log>();
        world.insert_resource(Explode(true));
        let mut schedule = Schedule::new();
        quiet(&mut schedule).set_single_threaded(single_threaded);
        schedule.add_systems((follow, explode).chain());

        let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| schedule.run(&mut world)));
        assert!(panicked.is_err());
        let param = "Single<&Pos, With<Player>>".to_string();
        assert_eq!(skips(&schedule), [("follow".to_string(), param, QuerySingleError::NoEntities)]);

        // The next frame runs `follow`: no skip of the frame before is
        // listed again.
        world.spawn((Player, Pos(5)));
        world.insert_resource(Explode(false));
        schedule.run(&mut world);
        assert_eq!(skips(&schedule), Skips::new());
        assert_eq!(world.resource::<Log>().0, ["follow 5"]);
    }
}
