//! `Schedule::ambiguities`: the pairs of systems that conflict with no
//! order between them, checked against known sets of pairs: through
//! constraints, chains, sets and the transitive closure, for components,
//! resources, events, `&World` and `&mut World`, with filters that keep
//! queries apart, priorities (not an order), `ambiguous_with` and its
//! misuse, and a game loop's stages.

#![cfg(feature = "game-loop")]

use archetable::prelude::*;
use archetable::Clash;

#[derive(Component)]
struct Position(f32);
#[derive(Component)]
struct Velocity(f32);
#[derive(Component)]
struct Player;
#[derive(Default)]
struct Score(u32);
#[derive(Default)]
struct Settings(u32);
struct Hit;

fn move_player(mut q: Query<&mut Position, With<Player>>) {
    q.iter_mut().for_each(|mut p| p.0 += 1.0);
}
fn move_enemies(mut q: Query<&mut Position, Without<Player>>) {
    q.iter_mut().for_each(|mut p| p.0 -= 1.0);
}
fn clamp(mut q: Query<&mut Position>) {
    q.iter_mut().for_each(|mut p| p.0 = p.0.clamp(-10.0, 10.0));
}
fn steer(mut q: Query<&mut Velocity>, settings: Res<Settings>) {
    q.iter_mut().for_each(|mut v| v.0 = settings.0 as f32);
}
fn draw(q: Query<(&Position, &Velocity)>) {
    q.iter().for_each(drop);
}
fn score(mut score: ResMut<Score>) {
    score.0 += 1;
}
fn hud(score: Res<Score>, settings: Res<Settings>) {
    let _ = (score.0, settings.0);
}
fn spawner(mut commands: Commands) {
    commands.spawn(Position(0.0));
}
fn despawner(q: Query<Entity, With<Position>>, mut commands: Commands) {
    q.iter().for_each(|e| commands.despawn(e));
}
fn send_hit(mut hits: EventWriter<Hit>) {
    hits.send(Hit);
}
fn read_hits(mut hits: EventReader<Hit>) {
    hits.read().for_each(drop);
}
fn overlay(world: &World) {
    let _ = world.len();
}
fn reset(world: &mut World) {
    world.resource_mut::<Score>().0 = 0;
}

fn world() -> World {
    let mut world = World::new();
    world.init_resource::<Score>();
    world.init_resource::<Settings>();
    world.add_event::<Hit>();
    world
}

fn pairs(schedule: &mut Schedule, world: &mut World) -> Vec<(String, String)> {
    let report = schedule.ambiguities(world).unwrap();
    report.names().into_iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
}

fn owned(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs.iter().map(|&(a, b)| (a.to_string(), b.to_string())).collect()
}

#[test]
fn unordered_conflicts_are_reported_and_nothing_else() {
    let mut world = world();
    let mut schedule = Schedule::new();
    schedule.add_system(move_player);
    schedule.add_system(move_enemies); // disjoint from move_player: `With`/`Without`
    schedule.add_system(clamp);
    schedule.add_system(steer);
    schedule.add_system(draw);
    schedule.add_system(score);
    schedule.add_system(hud);
    schedule.add_system(spawner);
    schedule.add_system(despawner); // commands alone are no conflict
    schedule.add_system(send_hit);
    schedule.add_system(read_hits);
    assert_eq!(
        pairs(&mut schedule, &mut world),
        owned(&[
            ("move_player", "clamp"),
            ("move_player", "draw"),
            ("move_enemies", "clamp"),
            ("move_enemies", "draw"),
            ("clamp", "draw"),
            ("steer", "draw"),
            ("score", "hud"),
            ("send_hit", "read_hits"),
        ])
    );
    let report = schedule.ambiguities(&mut world).unwrap();
    assert_eq!(
        report.to_string(),
        "8 pairs of systems conflict with no order between them (order them with `before`/`after`, or accept a \
         pair with `ambiguous_with`):\n  `move_player` and `clamp` both write `Position`\n  `move_player` and \
         `draw`: `move_player` writes `Position`, `draw` reads it\n  `move_enemies` and `clamp` both write \
         `Position`\n  `move_enemies` and `draw`: `move_enemies` writes `Position`, `draw` reads it\n  `clamp` and \
         `draw`: `clamp` writes `Position`, `draw` reads it\n  `steer` and `draw`: `steer` writes `Velocity`, \
         `draw` reads it\n  `score` and `hud`: `score` writes `Score`, `hud` reads it\n  `send_hit` and \
         `read_hits`: `send_hit` writes `Events<Hit>`, `read_hits` reads it\n"
    );
    assert_eq!(
        report.pairs()[0].clashes,
        [Clash::Data { item: "Position".into(), first_writes: true, second_writes: true }]
    );
}

#[test]
fn constraints_chains_and_sets_order_pairs_through_the_transitive_closure() {
    let mut world = world();
    let mut schedule = Schedule::new();
    // A chain orders its members; `clamp` follows the chain through the set.
    schedule.add_systems((move_player, move_enemies).chain().in_set("motion"));
    schedule.add_system(clamp).after("motion");
    // `draw` is after `steer`, which is after `clamp`: after all of them.
    schedule.add_system(steer).after(clamp);
    schedule.add_system(draw).after(steer);
    // A set ordered as a whole: both its members after `score`.
    schedule.configure_set("ui").after(score);
    schedule.add_system(score);
    schedule.add_system(hud).in_set("ui");
    assert_eq!(pairs(&mut schedule, &mut world), owned(&[]));
    assert_eq!(
        schedule.ambiguities(&mut world).unwrap().to_string(),
        "no two systems conflict without an order between them\n"
    );

    // Take one link out of the closure: `draw` is no longer after the chain.
    let mut schedule = Schedule::new();
    schedule.add_systems((move_player, move_enemies).chain().in_set("motion"));
    schedule.add_system(clamp).after("motion");
    schedule.add_system(steer);
    schedule.add_system(draw).after(steer);
    assert_eq!(
        pairs(&mut schedule, &mut world),
        owned(&[("move_player", "draw"), ("move_enemies", "draw"), ("clamp", "draw")])
    );
}

#[test]
fn priorities_and_insertion_order_are_not_an_order() {
    let mut world = world();
    let mut schedule = Schedule::new();
    schedule.add_system(score).priority(-10);
    schedule.add_system(hud).priority(10);
    assert_eq!(schedule.order(&mut world), ["score", "hud"]);
    assert_eq!(pairs(&mut schedule, &mut world), owned(&[("score", "hud")]));
}

#[test]
fn the_whole_world_conflicts_as_it_should() {
    let mut world = world();
    let mut schedule = Schedule::new();
    schedule.add_system(overlay); // `&World`: reads everything
    schedule.add_system(hud); // reads only: no conflict with `overlay`
    schedule.add_system(score);
    schedule.add_system(reset); // `&mut World`: conflicts with everything
    schedule.add_system(spawner).after(reset);
    assert_eq!(
        pairs(&mut schedule, &mut world),
        owned(&[("overlay", "score"), ("overlay", "reset"), ("hud", "score"), ("hud", "reset"), ("score", "reset")])
    );
    let report = schedule.ambiguities(&mut world).unwrap();
    let text = report.to_string();
    let lines: Vec<&str> = text.lines().skip(1).map(str::trim).collect();
    assert_eq!(
        lines,
        [
            "`overlay` and `score`: `score` writes `Score`, `overlay` reads it",
            "`overlay` and `reset`: `reset` takes the whole world (`&mut World`)",
            "`hud` and `score`: `score` writes `Score`, `hud` reads it",
            "`hud` and `reset`: `reset` takes the whole world (`&mut World`)",
            "`score` and `reset`: `reset` takes the whole world (`&mut World`)",
        ]
    );
}

#[test]
fn ambiguous_with_accepts_pairs_by_system_label_or_id() {
    let mut world = world();
    let mut schedule = Schedule::new();
    let player = schedule.add_system(move_player).id();
    schedule.add_system(move_enemies).label("enemies");
    schedule.add_system(clamp).ambiguous_with(player).ambiguous_with("enemies");
    schedule.add_system(draw).ambiguous_with(clamp);
    schedule.add_system(score);
    schedule.add_system(hud).ambiguous_with_all();
    assert_eq!(pairs(&mut schedule, &mut world), owned(&[("move_player", "draw"), ("move_enemies", "draw")]));
}

#[test]
fn ambiguous_with_a_system_not_in_the_schedule_is_an_error() {
    let mut world = world();
    let mut schedule = Schedule::new();
    schedule.add_system(score).ambiguous_with("nowhere");
    schedule.add_system(hud);
    assert_eq!(
        schedule.ambiguities(&mut world),
        Err(ScheduleError::UnknownSystem { system: "score".into(), target: "label or set `nowhere`".into() })
    );
    // The schedule itself still runs: the option is only about the report.
    schedule.run(&mut world);
    assert_eq!(world.resource::<Score>().0, 1);
}

#[test]
fn a_game_loop_reports_each_stage() {
    let mut game = GameLoop::new();
    game.init_resource::<Score>().init_resource::<Settings>();
    game.add_system(Stage::Startup, reset);
    game.add_system(Stage::Startup, score);
    game.add_systems(Stage::FixedUpdate, (score, hud).chain());
    game.add_system(Stage::Update, score);
    game.add_system(Stage::Update, hud);
    game.add_system(Stage::LateUpdate, hud); // other stages never overlap
    let reports = game.ambiguities().unwrap();
    let found: Vec<(String, Vec<(&str, &str)>)> =
        reports.iter().map(|(stage, report)| (stage.to_string(), report.names())).collect();
    assert_eq!(
        found,
        [
            ("startup".to_string(), vec![("reset", "score")]),
            ("fixed_update".to_string(), vec![]),
            ("update".to_string(), vec![("score", "hud")]),
            ("late_update".to_string(), vec![]),
        ]
    );
}

#[test]
fn a_pair_that_clashes_on_several_things_names_each_sorted_by_name() {
    fn fast(mut q: Query<(&mut Velocity, &Position)>, score: Res<Score>, mut settings: ResMut<Settings>) {
        q.iter_mut().for_each(|(mut v, _)| v.0 = score.0 as f32);
        settings.0 += 1;
    }
    fn slow(mut q: Query<(&Velocity, &mut Position)>, mut score: ResMut<Score>, settings: Res<Settings>) {
        q.iter_mut().for_each(|(_, mut p)| p.0 += settings.0 as f32);
        score.0 += 1;
    }
    let mut world = world();
    let mut schedule = Schedule::new();
    schedule.add_system(fast);
    schedule.add_system(slow);
    let report = schedule.ambiguities(&mut world).unwrap();
    assert_eq!(report.len(), 1);
    assert_eq!(
        report.pairs()[0].to_string(),
        "`fast` and `slow`: `slow` writes `Position`, `fast` reads it; `slow` writes `Score`, `fast` reads it; \
         `fast` writes `Settings`, `slow` reads it; `fast` writes `Velocity`, `slow` reads it"
    );
}

#[derive(Default)]
struct Trace(Vec<&'static str>);

fn measure(q: Query<&Position>) -> u32 {
    q.iter().count() as u32
}
fn record(In(n): In<u32>, mut score: ResMut<Score>, mut trace: ResMut<Trace>) {
    score.0 += n;
    trace.0.push("pipe");
}
fn first(mut score: ResMut<Score>, mut trace: ResMut<Trace>) {
    score.0 = 100;
    trace.0.push("first");
}
fn last(mut score: ResMut<Score>, mut trace: ResMut<Trace>) {
    score.0 *= 2;
    trace.0.push("last");
}

/// The trace and score of one frame of `schedule` over two positions.
fn trace_of(mut schedule: Schedule) -> (Vec<&'static str>, u32) {
    let mut world = world();
    world.init_resource::<Trace>();
    world.spawn(Position(0.0));
    world.spawn(Position(1.0));
    assert_eq!(schedule.ambiguities(&mut world).unwrap().len(), 0);
    schedule.run(&mut world);
    (world.resource::<Trace>().0.clone(), world.resource::<Score>().0)
}

#[test]
fn a_pipe_is_ordered_and_selected_by_either_of_its_functions() {
    for parallel in [false, true] {
        let new = || if parallel { Schedule::new() } else { Schedule::single_threaded() };
        // Added after the pipe, yet ordered before it by its first function,
        // and `last` after it by its second.
        let mut schedule = new();
        schedule.add_system(last).after(record);
        schedule.add_system(measure.pipe(record));
        schedule.add_system(first).before(measure);
        assert_eq!(trace_of(schedule), (vec!["first", "pipe", "last"], 204));
        // Through `add_systems`, and a map selected by its function.
        let mut schedule = new();
        schedule.add_systems((last.after(measure), measure.pipe(record), first.before(record)));
        assert_eq!(trace_of(schedule), (vec!["first", "pipe", "last"], 204));
    }
    let mut world = world();
    world.init_resource::<Trace>();
    let mut schedule = Schedule::new();
    schedule.add_system(measure.pipe(record));
    schedule.add_system(first);
    schedule.add_system(measure.map(drop));
    assert_eq!(pairs(&mut schedule, &mut world), owned(&[("measure | record", "first")]));
    let mut schedule = Schedule::new();
    schedule.add_system(measure.pipe(record));
    schedule.add_system(first).ambiguous_with(record);
    assert_eq!(pairs(&mut schedule, &mut world), owned(&[]));
    // A pipe has no one function: as a selector it selects nothing.
    let mut schedule = Schedule::new();
    schedule.add_system(measure.pipe(record));
    schedule.add_system(first).before(measure.pipe(record));
    assert!(
        matches!(schedule.build(&mut world), Err(ScheduleError::UnknownSystem { ref system, .. }) if system == "first"),
        "{:?}",
        schedule.build(&mut world)
    );
}

fn coins(mut score: ResMut<Score>) {
    score.0 += 1;
}
fn gems(mut score: ResMut<Score>) {
    score.0 += 5;
}
fn stars(mut score: ResMut<Score>) {
    score.0 += 9;
}

#[test]
fn ambiguous_with_on_a_tuple_applies_to_each_member() {
    let mut world = world();
    let mut schedule = Schedule::new();
    schedule.add_systems((coins, gems).ambiguous_with(stars));
    schedule.add_system(stars);
    schedule.add_system(hud);
    assert_eq!(
        pairs(&mut schedule, &mut world),
        owned(&[("coins", "gems"), ("coins", "hud"), ("gems", "hud"), ("stars", "hud")])
    );
    let mut schedule = Schedule::new();
    schedule.add_systems(((coins, gems).ambiguous_with_all(), stars, hud.ambiguous_with(stars)));
    assert_eq!(pairs(&mut schedule, &mut world), owned(&[]));
    let mut schedule = Schedule::new();
    schedule.add_systems((coins, gems).ambiguous_with("nowhere"));
    assert_eq!(
        schedule.ambiguities(&mut world).unwrap_err(),
        ScheduleError::UnknownSystem { system: "coins".into(), target: "label or set `nowhere`".into() }
    );
}

#[test]
fn ambiguous_with_on_a_set_applies_to_members_added_before_and_after() {
    let mut world = world();
    let mut schedule = Schedule::new();
    schedule.add_system(coins).in_set("loot");
    schedule.configure_set("loot").ambiguous_with("loot");
    schedule.add_systems(gems.in_set("loot"));
    schedule.add_system(stars);
    assert_eq!(pairs(&mut schedule, &mut world), owned(&[("coins", "stars"), ("gems", "stars")]));
    schedule.configure_set("loot").ambiguous_with(stars);
    assert_eq!(pairs(&mut schedule, &mut world), owned(&[]));

    let mut schedule = Schedule::new();
    schedule.add_systems((coins, gems).in_set("loot"));
    schedule.add_system(stars);
    schedule.configure_set("loot").ambiguous_with_all();
    assert_eq!(pairs(&mut schedule, &mut world), owned(&[]));
    schedule.configure_set("loot").ambiguous_with("nowhere");
    assert_eq!(
        schedule.ambiguities(&mut world).unwrap_err(),
        ScheduleError::UnknownSystem { system: "coins".into(), target: "label or set `nowhere`".into() }
    );
}

#[derive(States, Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Screen {
    Menu,
    Playing,
}

#[test]
fn a_game_loop_reports_each_on_enter_and_on_exit() {
    let mut game = GameLoop::new();
    game.init_resource::<Score>().init_resource::<Settings>();
    game.add_state(Screen::Menu);
    game.on_enter(Screen::Menu, coins);
    game.on_enter(Screen::Menu, gems);
    game.on_exit(Screen::Menu, coins);
    game.on_exit(Screen::Menu, hud);
    game.on_enter(Screen::Playing, coins);
    game.on_enter(Screen::Playing, stars).after(coins);
    game.on_exit(Screen::Playing, stars);
    game.add_system(Stage::Update, coins);
    let reports = game.ambiguities().unwrap();
    let found: Vec<(String, Vec<(&str, &str)>)> =
        reports.iter().map(|(stage, report)| (stage.to_string(), report.names())).collect();
    assert_eq!(
        found,
        [
            ("startup".to_string(), vec![]),
            ("fixed_update".to_string(), vec![]),
            ("update".to_string(), vec![]),
            ("late_update".to_string(), vec![]),
            ("on_enter(Menu)".to_string(), vec![("coins", "gems")]),
            ("on_enter(Playing)".to_string(), vec![]),
            ("on_exit(Menu)".to_string(), vec![("coins", "hud")]),
            ("on_exit(Playing)".to_string(), vec![]),
        ]
    );
}
