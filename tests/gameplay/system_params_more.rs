//! Resource change detection, `resource_scope`, `run_system_once`, `&World`
//! as a system parameter and `ParamSet`.

// System signatures spell their parameter sets out, as users write them.
#![allow(clippy::type_complexity)]

use archetable::prelude::*;
use archetable::ParamSet;

#[derive(Component, Debug, PartialEq, Clone, Copy)]
struct Hp(u32);

#[derive(Component)]
struct Boss;

#[derive(Default, Debug, PartialEq)]
struct Score(u32);

#[derive(Default, Debug, PartialEq)]
struct Log(Vec<String>);

fn refusal<M>(system: impl IntoSystem<M>) -> String {
    Schedule::new().try_add_system(system).map(|_| ()).unwrap_err().to_string()
}

// ---- Res / ResMut change detection ----

#[derive(Default)]
struct Seen(Vec<(bool, bool)>);

fn watch(score: Res<Score>, mut seen: ResMut<Seen>) {
    seen.0.push((score.is_added(), score.is_changed()));
}

#[test]
fn res_sees_inserts_and_writes_made_since_its_last_run() {
    let mut world = World::new();
    world.init_resource::<Score>();
    world.init_resource::<Seen>();
    let mut schedule = Schedule::new();
    schedule.add_system(watch);
    schedule.run(&mut world);
    schedule.run(&mut world);
    world.resource_mut::<Score>().0 = 3;
    schedule.run(&mut world);
    schedule.run(&mut world);
    world.insert_resource(Score(0));
    schedule.run(&mut world);
    let _ = world.resource::<Score>(); // a read is not a write
    schedule.run(&mut world);
    assert_eq!(
        world.resource::<Seen>().0,
        [(true, true), (false, false), (false, true), (false, false), (true, true), (false, false)]
    );
}

#[derive(Default)]
struct Flags(Vec<bool>);

fn writer(mut score: ResMut<Score>, frame: Local<u32>) {
    let _ = frame;
    score.0 += 1;
}

fn reader(score: Res<Score>, mut flags: ResMut<Flags>) {
    flags.0.push(score.is_changed());
}

#[test]
fn a_write_through_res_mut_is_seen_by_a_later_system_once() {
    let mut world = World::new();
    world.init_resource::<Score>();
    world.init_resource::<Flags>();
    let mut schedule = Schedule::new();
    schedule.add_system(reader);
    let writer_id = schedule.add_system(writer).before(reader).id();
    schedule.run(&mut world);
    schedule.run(&mut world);
    // Disabled, the writer writes no more; the reader sees no write after.
    assert!(schedule.disable(writer_id));
    schedule.run(&mut world);
    assert_eq!(world.resource::<Flags>().0, [true, true, false]);
    assert_eq!(world.resource::<Score>().0, 2);
}

fn bypass(mut score: ResMut<Score>) {
    score.bypass_change_detection().0 = 10;
}

fn deref_only(score: ResMut<Score>) {
    assert_eq!(score.0, 10);
}

#[test]
fn res_mut_marks_changed_only_on_a_mutable_deref_or_set_changed() {
    let mut world = World::new();
    world.init_resource::<Score>();
    let before = world.resource_ticks::<Score>().unwrap();
    world.run_system_once(bypass);
    world.run_system_once(deref_only);
    assert_eq!(world.resource_ticks::<Score>().unwrap(), before);
    world.run_system_once(|mut score: ResMut<Score>| score.set_changed());
    let after = world.resource_ticks::<Score>().unwrap();
    assert_eq!(after.added, before.added);
    assert_ne!(after.changed, before.changed);
}

#[test]
fn option_res_carries_ticks_too() {
    let mut world = World::new();
    world.run_system_once(|score: Option<Res<Score>>| assert!(score.is_none()));
    world.init_resource::<Score>();
    world.run_system_once(|score: Option<Res<Score>>| assert!(score.unwrap().is_added()));
    world.run_system_once(|score: Option<ResMut<Score>>| assert!(score.unwrap().is_changed()));
}

// ---- resource_scope ----

#[test]
fn resource_scope_lends_the_resource_beside_the_world() {
    let mut world = World::new();
    world.insert_resource(Log::default());
    let before = world.resource_ticks::<Log>().unwrap();
    world.advance_change_tick(1);
    let n = world.resource_scope(|world, mut log: Mut<Log>| {
        assert!(!world.contains_resource::<Log>());
        let e = world.spawn(Hp(4));
        log.0.push(format!("{}", world.get::<Hp>(e).unwrap().0));
        log.0.len()
    });
    assert_eq!(n, 1);
    assert_eq!(world.resource::<Log>().0, ["4"]);
    let after = world.resource_ticks::<Log>().unwrap();
    assert_eq!(after.added, before.added);
    assert_ne!(after.changed, before.changed, "the write marked it changed");
}

#[test]
fn resource_scope_without_a_write_keeps_the_ticks() {
    let mut world = World::new();
    world.insert_resource(Score(1));
    let before = world.resource_ticks::<Score>().unwrap();
    world.advance_change_tick(5);
    let value = world.resource_scope(|_, score: Mut<Score>| score.0);
    assert_eq!(value, 1);
    assert_eq!(world.resource_ticks::<Score>().unwrap(), before);
}

#[test]
fn resource_scope_puts_the_scoped_value_back_over_one_inserted_inside() {
    let mut world = World::new();
    world.insert_resource(Score(1));
    world.resource_scope(|world, mut score: Mut<Score>| {
        score.0 = 2;
        world.insert_resource(Score(99));
    });
    assert_eq!(world.resource::<Score>(), &Score(2));
}

#[test]
fn resource_scope_restores_the_resource_when_the_closure_panics() {
    let mut world = World::new();
    world.insert_resource(Score(1));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        world.resource_scope(|_, mut score: Mut<Score>| {
            score.0 = 5;
            panic!("boom");
        })
    }));
    assert!(result.is_err());
    assert_eq!(world.resource::<Score>(), &Score(5));
}

#[test]
#[should_panic(expected = "is not in the world")]
fn resource_scope_of_a_missing_resource_panics() {
    World::new().resource_scope(|_, _: Mut<Score>| ());
}

#[test]
fn try_resource_scope_of_a_missing_resource_is_none() {
    let mut world = World::new();
    let mut called = false;
    assert_eq!(
        world.try_resource_scope(|_, _: Mut<Score>| {
            called = true;
        }),
        None
    );
    assert!(!called);
}

// ---- run_system_once ----

fn spawn_and_count(mut commands: Commands, hp: Query<&Hp>, mut score: ResMut<Score>, mut runs: Local<u32>) {
    *runs += 1;
    score.0 = hp.iter().count() as u32 * 10 + *runs;
    commands.spawn(Hp(1));
}

#[test]
fn run_system_once_runs_and_applies_commands_with_fresh_state() {
    let mut world = World::new();
    world.init_resource::<Score>();
    let report = world.run_system_once(spawn_and_count);
    assert_eq!((report.applied(), report.skipped()), (1, 0));
    assert_eq!(world.resource::<Score>().0, 1);
    world.run_system_once(spawn_and_count);
    assert_eq!(world.resource::<Score>().0, 11, "Local starts from its default on every call");
    assert_eq!(world.len(), 2);
}

#[test]
fn run_system_once_runs_exclusive_systems_and_closures() {
    let mut world = World::new();
    let report = world.run_system_once(|world: &mut World| {
        world.spawn(Hp(2));
    });
    assert_eq!(report.applied(), 0);
    assert_eq!(world.len(), 1);
    world.run_system_once(|mut hp: Query<&mut Hp>| {
        for mut hp in hp.iter_mut() {
            hp.0 += 1;
        }
    });
    assert_eq!(world.query::<&Hp>().next(), Some(&Hp(3)));
}

#[test]
#[should_panic(expected = "error[E0002]")]
fn run_system_once_refuses_aliasing_parameters() {
    World::new().run_system_once(|_: Query<&mut Hp>, _: Query<&Hp>| {});
}

// ---- &World ----

fn census(world: &World, mut log: ResMut<Log>) {
    let _ = (world, &mut log);
}

fn read_world(world: &World, hp: Query<&Hp>, score: Res<Score>, mut commands: Commands) {
    let total: u32 = world.query::<&Hp>().map(|h| h.0).sum();
    assert_eq!(total, hp.iter().map(|h| h.0).sum::<u32>());
    assert_eq!(world.resource::<Score>().0, score.0);
    commands.spawn(Hp(total));
}

#[test]
fn world_param_reads_everything() {
    let mut world = World::new();
    world.insert_resource(Score(7));
    world.spawn(Hp(1));
    world.spawn(Hp(2));
    world.run_system_once(read_world);
    let mut all: Vec<u32> = world.query::<&Hp>().map(|h| h.0).collect();
    all.sort();
    assert_eq!(all, [1, 2, 3]);
}

#[test]
fn world_param_beside_res_mut_is_refused() {
    assert_eq!(
        refusal(census),
        "error[E0002]: system `census` cannot run: parameter #1 `ResMut<Log>` writes resource `Log` while parameter \
         #0 `&World` also borrows it; `&World` reads every component and resource: name what the system reads \
         instead (`Query<&A>`, `Res<T>`), or make it an exclusive system taking only `&mut World`"
    );
}

#[test]
fn world_param_after_a_writer_is_refused_naming_both() {
    fn late(_: Query<&mut Hp>, _: &World) {}
    assert_eq!(
        refusal(late),
        "error[E0002]: system `late` cannot run: parameter #0 `Query<&mut Hp>` writes component `Hp` while parameter \
         #1 `&World` also borrows it; `&World` reads every component and resource: name what the system reads \
         instead (`Query<&A>`, `Res<T>`), or make it an exclusive system taking only `&mut World`"
    );
    fn late_res(_: ResMut<Score>, _: &World) {}
    assert!(refusal(late_res).starts_with("error[E0002]: system `late_res` cannot run: parameter #0 `ResMut<Score>`"));
    fn writer_event(_: &World, _: EventWriter<u32>) {}
    assert!(refusal(writer_event).contains("parameter #1 `EventWriter<u32>` writes resource `Events<u32>`"));
    fn early(_: &World, _: Query<(&Hp, &mut Score2)>) {}
    assert!(refusal(early).contains("writes component `Score2` while parameter #0 `&World`"));
}

#[derive(Component)]
struct Score2;

#[test]
fn world_param_beside_readers_locals_and_commands_is_accepted() {
    fn fine(_: &World, _: Query<&Hp>, _: Res<Score>, _: Local<u8>, _: Commands, _: EventReader<u32>, _: &World) {}
    assert!(Schedule::new().try_add_system(fine).is_ok());
}

fn spawner_a(mut commands: Commands) {
    commands.spawn(Hp(1));
}

fn spawner_b(mut commands: Commands) {
    commands.spawn(Hp(2));
}

fn reserving_reader(world: &World, mut commands: Commands) {
    // Reserves through the world's own counter and through its commands.
    let e = world.reserve_entity();
    commands.entity(e).insert(Hp(100));
    commands.spawn(Hp(200));
}

fn hp_writer(mut hp: Query<&mut Hp>) {
    for mut hp in hp.iter_mut() {
        hp.0 += 1000;
    }
}

#[test]
fn a_world_reader_runs_apart_from_spawners_and_writers_with_the_same_handles_every_time() {
    let run = |single_threaded: bool| {
        let mut world = World::new();
        let mut schedule = if single_threaded { Schedule::single_threaded() } else { Schedule::new() };
        schedule.set_parallel_threshold(std::time::Duration::ZERO);
        schedule.add_system(spawner_a);
        schedule.add_system(reserving_reader);
        schedule.add_system(spawner_b);
        schedule.add_system(hp_writer);
        for _ in 0..3 {
            schedule.run(&mut world);
        }
        world.check_invariants().unwrap();
        let mut all: Vec<(Entity, u32)> = world.query::<(Entity, &Hp)>().map(|(e, h)| (e, h.0)).collect();
        all.sort_by_key(|&(e, _)| e.index());
        all
    };
    let one = run(true);
    assert_eq!(one.len(), 12);
    for _ in 0..5 {
        assert_eq!(run(false), one);
    }
}

// ---- ParamSet ----

fn balance(mut set: ParamSet<(Query<&'static mut Hp>, Query<&'static mut Hp, With<Boss>>)>) {
    for mut hp in set.p0().iter_mut() {
        hp.0 += 1;
    }
    for mut hp in set.p1().iter_mut() {
        hp.0 *= 10;
    }
}

#[test]
fn param_set_members_that_alias_are_used_one_at_a_time() {
    let mut world = World::new();
    let minion = world.spawn(Hp(1));
    let boss = world.spawn((Hp(1), Boss));
    let mut schedule = Schedule::new();
    schedule.add_system(balance);
    schedule.run(&mut world);
    assert_eq!((world.get::<Hp>(minion), world.get::<Hp>(boss)), (Some(&Hp(2)), Some(&Hp(20))));
}

#[test]
fn param_set_union_is_checked_against_other_parameters() {
    fn clash(_: ParamSet<(Query<&'static Hp>, Query<&'static mut Hp, With<Boss>>)>, _: Query<&'static Hp>) {}
    assert_eq!(
        refusal(clash),
        "error[E0002]: system `clash` cannot run: parameter #0 `ParamSet<(Query<&Hp>, Query<&mut Hp, With<Boss>>)>` \
         (its `Query<&mut Hp, With<Boss>>`) writes component `Hp` while parameter #1 `Query<&Hp>` also borrows it; \
         make the two queries disjoint with `With`/`Without` filters, merge them into one parameter, or split the \
         system"
    );
    fn res_clash(_: ResMut<Score>, _: ParamSet<(Res<Score>, Query<&'static Hp>)>) {}
    assert!(refusal(res_clash).contains("writes resource `Score`"));
    fn world_clash(_: ParamSet<(&World, Query<&'static Hp>)>, _: ResMut<Score>) {}
    assert!(refusal(world_clash).contains("`&World` reads every component and resource"));
    fn disjoint(
        _: ParamSet<(Query<&'static mut Hp, With<Boss>>, Query<&'static Hp, With<Boss>>)>,
        _: Query<&'static mut Hp, Without<Boss>>,
    ) {
    }
    assert!(Schedule::new().try_add_system(disjoint).is_ok());
}

#[test]
fn param_set_members_of_every_kind() {
    fn mixed(mut set: ParamSet<(&World, Query<&'static mut Hp>, ResMut<Score>, Res<Score>, Commands)>) {
        let n = set.p0().query::<&Hp>().count() as u32;
        for mut hp in set.p1().iter_mut() {
            hp.0 += n;
        }
        set.p2().0 += n;
        let doubled = set.p3().0 * 2;
        set.p4().spawn(Hp(doubled));
    }
    let mut world = World::new();
    world.init_resource::<Score>();
    world.spawn(Hp(1));
    world.spawn(Hp(2));
    let report = world.run_system_once(mixed);
    assert_eq!(report.applied(), 1, "commands in a set are applied");
    let mut all: Vec<u32> = world.query::<&Hp>().map(|h| h.0).collect();
    all.sort();
    assert_eq!(all, [3, 4, 4]);
    assert_eq!(world.resource::<Score>().0, 2);
}

#[test]
fn nested_param_sets_exempt_only_their_own_members() {
    type Inner<'w, 's> = ParamSet<'w, 's, (Query<'w, 's, &'static mut Hp>, Query<'w, 's, &'static Hp>)>;
    fn nested(mut set: ParamSet<(Inner, Query<&'static mut Hp>)>) {
        set.p0().p0().iter_mut().for_each(|mut hp| hp.0 += 1);
        let sum: u32 = set.p0().p1().iter().map(|h| h.0).sum();
        set.p1().iter_mut().for_each(|mut hp| hp.0 += sum);
    }
    let mut world = World::new();
    world.spawn(Hp(1));
    world.run_system_once(nested);
    assert_eq!(world.query::<&Hp>().next(), Some(&Hp(4)));
    fn inner_clash(_: ParamSet<(Inner, Query<&'static Hp>)>, _: Query<&'static Hp>) {}
    assert!(refusal(inner_clash).contains("writes component `Hp`"));
}
