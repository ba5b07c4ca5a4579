//! Several systems at once: chains, shared conditions and ordering, named
//! sets, reusable run conditions and their combinators, the errors that
//! name a set, and parallel runs equal to single-threaded ones.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use archetable::prelude::*;

#[derive(Default)]
struct Trace(Vec<&'static str>);

/// A system that appends `name` to the `Trace`. (All of them write the
/// trace, so they never overlap: the trace shows the order.)
fn note(name: &'static str) -> impl FnMut(ResMut<Trace>) + Send + 'static {
    move |mut trace: ResMut<Trace>| trace.0.push(name)
}

fn world() -> World {
    let mut world = World::new();
    world.init_resource::<Trace>();
    world
}

fn take(world: &mut World) -> Vec<&'static str> {
    std::mem::take(&mut world.resource_mut::<Trace>().0)
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct On(bool);

fn flag(world: &World) -> bool {
    world.get_resource::<On>().is_some_and(|on| on.0)
}

#[test]
fn a_chain_runs_in_the_order_written_whatever_the_priorities() {
    let mut world = world();
    let mut schedule = Schedule::single_threaded();
    // Without the chain, priority would put `c` first and `a` last.
    schedule.add_system(note("free")).priority(5);
    let ids = schedule.add_systems((note("a"), note("b"), note("c")).chain());
    assert_eq!(ids.len(), 3);
    schedule.add_system(note("early")).priority(-1);
    schedule.run(&mut world);
    assert_eq!(take(&mut world), ["early", "a", "b", "c", "free"]);
}

#[test]
fn chains_nest_and_an_unchained_tuple_stays_free() {
    let mut world = world();
    let mut schedule = Schedule::single_threaded();
    // ((a, b) free, c) chained: c after both a and b; then d after c.
    let ids = schedule.add_systems(((note("b"), note("a")), note("c"), (note("d"),)).chain());
    schedule.add_system(note("first")).before(ids[0]).before(ids[1]);
    schedule.run(&mut world);
    assert_eq!(take(&mut world), ["first", "b", "a", "c", "d"]);
    // The inner tuple is free: a system before `a` only pulls `a` ahead,
    // never past `c`'s place after both.
    let mut schedule = Schedule::single_threaded();
    let ids = schedule.add_systems(((note("b"), note("a")), note("c")).chain());
    schedule.add_system(note("z")).priority(-1).after(ids[1]);
    schedule.run(&mut world);
    assert_eq!(take(&mut world), ["b", "a", "z", "c"]);
}

#[test]
fn a_chain_is_ordered_against_as_a_whole() {
    let mut world = world();
    let mut schedule = Schedule::single_threaded();
    schedule.add_systems((note("x"), note("y")).chain().after("input").before("draw"));
    schedule.add_system(note("draw")).label("draw").priority(-10);
    schedule.add_system(note("input")).label("input").priority(10);
    schedule.run(&mut world);
    assert_eq!(take(&mut world), ["input", "x", "y", "draw"]);
}

#[test]
fn a_tuples_condition_gates_every_member_and_is_checked_once_per_group() {
    let checks = Arc::new(AtomicU32::new(0));
    let counted = {
        let checks = checks.clone();
        move |world: &World| {
            checks.fetch_add(1, Ordering::Relaxed);
            flag(world)
        }
    };
    let mut world = world();
    world.insert_resource(On(false));
    let mut schedule = Schedule::new();
    schedule.add_systems((note("a"), note("b"), note("c")).chain().run_if(counted));
    schedule.add_system(note("ungated"));
    schedule.run(&mut world);
    assert_eq!(take(&mut world), ["ungated"]);
    // One group: three systems, one check.
    assert_eq!(checks.load(Ordering::Relaxed), 1);
    world.insert_resource(On(true));
    schedule.run(&mut world);
    assert_eq!(take(&mut world), ["a", "b", "c", "ungated"]);
    assert_eq!(checks.load(Ordering::Relaxed), 2);
}

#[test]
fn a_shared_condition_is_checked_again_after_an_exclusive_system() {
    // `flip` (exclusive) turns the flag on between two groups: the systems
    // after it see the new value.
    let mut world = world();
    world.insert_resource(On(false));
    let on = Condition::new(flag);
    let mut schedule = Schedule::single_threaded();
    let before = schedule.add_systems(note("before").run_if(&on))[0];
    let flip = schedule
        .add_system(|world: &mut World| {
            world.insert_resource(On(true));
        })
        .after(before)
        .id();
    schedule.add_systems(note("after").run_if(&on).after(flip));
    schedule.run(&mut world);
    assert_eq!(take(&mut world), ["after"]);
}

#[cfg(feature = "game-loop")]
#[test]
fn in_state_and_user_conditions_are_reused_by_many_systems() {
    #[derive(States, Clone, Copy, PartialEq, Eq, Hash, Debug)]
    enum Phase {
        Playing,
        Paused,
    }
    let mut game = GameLoop::single_threaded();
    game.add_state(Phase::Playing).init_resource::<Trace>();
    // One condition value, used by six systems (by reference, by clone and
    // by value), as the game wanted.
    let playing = in_state(Phase::Playing);
    let loud = Condition::new(flag);
    let one = game.add_system(Stage::Update, note("1")).run_if(&playing).id();
    let two = game.add_system(Stage::Update, note("2")).run_if(playing.clone()).after(one).id();
    let ids = game.add_systems(Stage::Update, (note("3"), note("4")).chain().run_if(&playing).after(two));
    let five = game.add_systems(Stage::Update, note("5").run_if(playing.clone().and(&loud)).after(ids[1]))[0];
    game.add_systems(Stage::Update, note("6").run_if(playing).run_if(loud.not()).after(five));
    game.advance(Duration::from_millis(16));
    let trace = std::mem::take(&mut game.world_mut().resource_mut::<Trace>().0);
    assert_eq!(trace, ["1", "2", "3", "4", "6"]);

    game.insert_resource(On(true));
    game.advance(Duration::from_millis(16));
    let trace = std::mem::take(&mut game.world_mut().resource_mut::<Trace>().0);
    assert_eq!(trace, ["1", "2", "3", "4", "5"]);

    game.world_mut().resource_mut::<NextState<Phase>>().set(Phase::Paused);
    game.advance(Duration::from_millis(16)); // `update` still ran in Playing
    game.world_mut().resource_mut::<Trace>().0.clear();
    game.advance(Duration::from_millis(16));
    assert_eq!(game.world().resource::<Trace>().0, Vec::<&str>::new());
}

#[test]
fn combinators_follow_their_truth_tables() {
    struct A(bool);
    struct B(bool);
    let a = Condition::new(|world| world.resource::<A>().0);
    let b = |world: &World| world.resource::<B>().0;
    let and = a.clone().and(b);
    let or = a.clone().or(b);
    let not_a = a.clone().not();
    let nand = b.and(&a).not();
    let mut world = World::new();
    let mut table = Vec::new();
    for (x, y) in [(false, false), (false, true), (true, false), (true, true)] {
        world.insert_resource(A(x));
        world.insert_resource(B(y));
        table.push([and.check(&world), or.check(&world), not_a.check(&world), nand.check(&world)]);
    }
    assert_eq!(
        table,
        [[false, false, true, true], [false, true, true, true], [false, true, false, true], [true, true, false, false]]
    );
}

#[cfg(feature = "game-loop")]
#[test]
fn conditions_have_names() {
    #[derive(States, Clone, Copy, PartialEq, Eq, Hash, Debug)]
    enum Screen {
        Menu,
    }
    let menu = in_state(Screen::Menu);
    assert_eq!(format!("{menu:?}"), "Condition(\"in_state(Menu)\")");
    assert_eq!(menu.clone().not().name(), "not in_state(Menu)");
    assert_eq!(
        menu.clone().and(&menu).or(Condition::new(flag).named("flag")).name(),
        "((in_state(Menu) and in_state(Menu)) or flag)"
    );
}

#[test]
fn run_if_twice_needs_both() {
    struct A(bool);
    let mut world = world();
    world.insert_resource(On(true));
    world.insert_resource(A(false));
    let mut schedule = Schedule::single_threaded();
    schedule.add_system(note("gated")).run_if(flag).run_if(|world: &World| world.resource::<A>().0);
    schedule.run(&mut world);
    assert_eq!(take(&mut world), Vec::<&str>::new());
    world.insert_resource(A(true));
    schedule.run(&mut world);
    assert_eq!(take(&mut world), ["gated"]);
}

#[test]
fn a_set_gives_its_members_conditions_ordering_and_debug_even_those_added_later() {
    let mut world = world();
    world.insert_resource(On(false));
    let mut schedule = Schedule::single_threaded();
    schedule.configure_set("physics").run_if(flag).after("input").before("draw");
    schedule.add_systems((note("move"), note("collide")).chain().in_set("physics"));
    schedule.add_system(note("draw")).label("draw").priority(-5);
    schedule.add_system(note("input")).label("input").priority(5);
    schedule.run(&mut world);
    assert_eq!(take(&mut world), ["input", "draw"]);

    world.insert_resource(On(true));
    schedule.add_system(note("gravity")).in_set("physics").priority(-1);
    schedule.add_system(note("after physics")).after("physics");
    schedule.run(&mut world);
    assert_eq!(take(&mut world), ["input", "gravity", "move", "collide", "draw", "after physics"]);

    // While paused only debug systems run: the set's `debug` counts.
    schedule.configure_set("physics").debug();
    world.resource_mut::<Time>().pause();
    schedule.run(&mut world);
    assert_eq!(take(&mut world), ["gravity", "move", "collide"]);
}

#[test]
fn a_system_can_be_in_several_sets() {
    let mut world = world();
    world.insert_resource(On(true));
    let mut schedule = Schedule::single_threaded();
    schedule.configure_set("a").run_if(flag);
    schedule.configure_set("b").run_if(|world: &World| world.contains_resource::<Trace>());
    schedule.add_systems(note("both").in_set("a").in_set("b"));
    schedule.add_system(note("only b")).in_set("b");
    schedule.add_system(note("last")).after("a").after("b");
    schedule.run(&mut world);
    assert_eq!(take(&mut world), ["both", "only b", "last"]);
    world.insert_resource(On(false));
    schedule.run(&mut world);
    assert_eq!(take(&mut world), ["only b", "last"]);
}

#[test]
fn ordering_against_an_empty_set_is_an_error_naming_it() {
    let mut world = world();
    let mut schedule = Schedule::single_threaded();
    schedule.configure_set("physics");
    schedule.add_systems(note("draw").after("physics"));
    let error = schedule.build(&mut world).unwrap_err();
    assert!(matches!(error, ScheduleError::UnknownSystem { .. }), "{error:?}");
    assert!(error.to_string().ends_with("is ordered against label or set `physics`, which is not in the schedule"));
}

#[derive(Component, Clone, Copy, Debug, PartialEq)]
struct Hp(f32);

fn aliasing(_: Query<&mut Hp>, _: Query<&Hp>) {}

#[test]
fn a_conflict_in_a_set_names_the_set_and_adds_nothing() {
    let mut schedule = Schedule::new();
    let error = schedule.try_add_systems((note("fine"), aliasing).chain().in_set("physics")).unwrap_err();
    let ScheduleError::ConflictInSet { sets, conflict } = &error else { panic!("{error:?}") };
    assert_eq!(sets, &["physics"]);
    assert!(conflict.system.ends_with("aliasing"), "{}", conflict.system);
    let message = error.to_string();
    assert!(message.starts_with("error[E0002]: system `"), "{message}");
    assert!(message.contains("aliasing` (in set `physics`) cannot run: parameter #0"), "{message}");
    assert_eq!(schedule.len(), 0, "nothing is added");

    // Nested sets are all named; without a set, the plain conflict.
    let error = schedule.try_add_systems((aliasing.in_set("inner"),).in_set("outer")).unwrap_err();
    assert!(error.to_string().contains("(in sets `inner`, `outer`)"), "{error}");
    let error = schedule.try_add_systems((note("x"), aliasing)).unwrap_err();
    assert!(matches!(error, ScheduleError::Conflict(_)), "{error:?}");
}

#[cfg(feature = "game-loop")]
#[test]
#[should_panic(expected = "(in set `physics`) cannot run")]
fn add_systems_panics_with_the_set_in_the_message() {
    let mut game = GameLoop::new();
    game.add_systems(Stage::FixedUpdate, aliasing.in_set("physics"));
}

#[derive(Component, Clone, Copy, Debug, PartialEq)]
struct Pos(f32, f32);
#[derive(Component, Clone, Copy, Debug, PartialEq)]
struct Vel(f32, f32);
#[derive(Component, Clone, Copy, Debug, PartialEq)]
struct Spark(u32);
#[derive(Default, Debug, PartialEq)]
struct Energy(f64);

/// A schedule with chains, a set with a condition, and free systems that
/// overlap in a parallel run, several of them spawning through commands.
fn busy_schedule(mut schedule: Schedule) -> Schedule {
    fn gravity(mut q: Query<&mut Vel>) {
        for mut v in q.iter_mut() {
            v.1 -= 0.37;
        }
    }
    fn drag(mut q: Query<&mut Vel, Without<Spark>>) {
        for mut v in q.iter_mut() {
            v.0 *= 0.993;
        }
    }
    fn integrate(mut q: Query<(&mut Pos, &Vel)>) {
        for (mut p, v) in q.iter_mut() {
            p.0 += v.0 * 0.1;
            p.1 += v.1 * 0.1;
        }
    }
    fn bounce(mut q: Query<(&mut Pos, &mut Vel)>) {
        for (mut p, mut v) in q.iter_mut() {
            if p.1 < 0.0 {
                p.1 = -p.1;
                v.1 = -v.1 * 0.8;
            }
        }
    }
    fn emit(q: Query<(Entity, &Pos), Without<Spark>>, mut commands: Commands) {
        let mut firing: Vec<(Entity, Pos)> = q.iter().filter(|(_, p)| p.1 < 1.0).map(|(e, p)| (e, *p)).collect();
        firing.sort_by_key(|(e, _)| *e);
        for (e, p) in firing {
            commands.spawn((p, Vel(e.index() as f32 * 0.1, 2.0), Spark(30)));
        }
    }
    fn fade(mut q: Query<(Entity, &mut Spark)>, mut commands: Commands) {
        for (e, mut s) in q.iter_mut() {
            s.0 -= 1;
            if s.0 == 0 {
                commands.despawn(e);
            }
        }
    }
    fn seed(q: Query<&Spark>, mut commands: Commands) {
        if q.iter().count() % 7 == 3 {
            commands.spawn((Pos(5.0, 8.0), Vel(-1.0, 0.0)));
        }
    }
    fn energy(q: Query<&Vel>, mut e: ResMut<Energy>) {
        let mut v: Vec<f64> = q.iter().map(|v| (v.0 * v.0 + v.1 * v.1) as f64).collect();
        v.sort_by(f64::total_cmp);
        e.0 = v.iter().sum();
    }
    schedule.set_parallel_threshold(Duration::ZERO);
    schedule.configure_set("motion").run_if(|world: &World| world.query::<&Spark>().count() < 400);
    schedule.add_systems(((gravity, drag), integrate, bounce).chain().in_set("motion"));
    schedule.add_systems((emit, fade, seed).after("motion"));
    schedule.add_systems(energy.after("motion").run_if(Condition::new(|w| w.contains_resource::<Energy>())));
    schedule
}

fn snapshot(world: &World) -> Vec<String> {
    let mut rows: Vec<String> = world
        .query::<(Entity, &Pos, Option<&Vel>, Option<&Spark>)>()
        .map(|(e, p, v, s)| {
            let v = v.map(|v| (v.0.to_bits(), v.1.to_bits()));
            format!("{e} {:08x} {:08x} {v:?} {s:?}", p.0.to_bits(), p.1.to_bits())
        })
        .collect();
    rows.sort();
    rows.push(format!("{:016x}", world.resource::<Energy>().0.to_bits()));
    rows.push(format!("{:?}", world.allocator_state()));
    rows
}

#[test]
fn chains_and_sets_run_in_parallel_as_on_one_thread_bit_for_bit() {
    let make_world = || {
        let mut world = World::new();
        world.init_resource::<Energy>();
        for i in 0..50 {
            world.spawn((Pos(i as f32, 3.0 + i as f32 * 0.5), Vel(1.0, 0.0)));
        }
        world
    };
    let (mut one, mut many) = (make_world(), make_world());
    let mut single = busy_schedule(Schedule::single_threaded());
    let mut parallel = busy_schedule(Schedule::new());
    for frame in 0..120 {
        single.run(&mut one);
        parallel.run(&mut many);
        assert_eq!(snapshot(&one), snapshot(&many), "frame {frame}");
    }
    assert!(one.query::<&Spark>().count() > 10, "the sparks did not fly: {}", one.len());
    assert_eq!(single.order(&mut one), parallel.order(&mut many));
}
