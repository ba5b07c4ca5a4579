//! The schedule: order, enable/disable and their hooks, pause and slow
//! motion, conditions, clearing the world, ordering errors, timings, and
//! parallel runs that equal single-threaded ones.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use archetable::prelude::*;
use archetable::ScheduleError;

#[derive(Component, Debug, PartialEq, Clone, Copy)]
struct Position(f32);
#[derive(Component, Debug, PartialEq, Clone, Copy)]
struct Velocity(f32);

type Log = Arc<Mutex<Vec<String>>>;

fn log() -> Log {
    Arc::new(Mutex::new(Vec::new()))
}

/// A system that appends `name` to `log` when it runs.
fn note(log: &Log, name: &'static str) -> impl FnMut(Commands) + Send + 'static {
    let log = log.clone();
    move |_: Commands| log.lock().unwrap().push(name.to_string())
}

fn take(log: &Log) -> Vec<String> {
    std::mem::take(&mut *log.lock().unwrap())
}

#[test]
fn priority_then_insertion_order() {
    // Systems that touch nothing of the world's in common may overlap in a
    // parallel schedule; a single-threaded one shows the order itself.
    let log = log();
    let mut world = World::new();
    let mut schedule = Schedule::single_threaded();
    schedule.add_system(note(&log, "render")).priority(100);
    schedule.add_system(note(&log, "input")).priority(-10);
    schedule.add_system(note(&log, "physics"));
    schedule.add_system(note(&log, "ai"));
    schedule.add_system(note(&log, "audio")).priority(100);
    schedule.run(&mut world);
    assert_eq!(take(&log), ["input", "physics", "ai", "render", "audio"]);
}

#[test]
fn before_and_after_by_id_label_and_function() {
    fn gravity(log: Res<Names>) {
        log.0.lock().unwrap().push("gravity".into());
    }
    fn collide(log: Res<Names>) {
        log.0.lock().unwrap().push("collide".into());
    }
    struct Names(Log);
    let log = log();
    let mut world = World::new();
    world.insert_resource(Names(log.clone()));
    let mut schedule = Schedule::single_threaded();
    let draw = schedule.add_system(note(&log, "draw")).id();
    schedule.add_system(collide).after(gravity).label("physics");
    schedule.add_system(gravity).label("physics");
    schedule.add_system(note(&log, "hud")).before(draw);
    schedule.add_system(note(&log, "input")).before("physics");
    schedule.run(&mut world);
    assert_eq!(take(&log), ["hud", "draw", "input", "gravity", "collide"]);
}

#[test]
fn explicit_order_wins_over_insertion_order() {
    let log = log();
    let mut world = World::new();
    let mut schedule = Schedule::single_threaded();
    let draw = schedule.add_system(note(&log, "draw")).id();
    let hud = schedule.add_system(note(&log, "hud")).before(draw).id();
    schedule.add_system(note(&log, "input")).before(hud).label("input");
    schedule.add_system(note(&log, "late")).after("input").after(draw);
    schedule.run(&mut world);
    assert_eq!(take(&log), ["input", "hud", "draw", "late"]);
}

#[test]
fn a_cycle_is_an_error_naming_every_system_in_it() {
    fn a() {}
    fn b() {}
    fn c() {}
    fn bystander() {}
    let mut world = World::new();
    let mut schedule = Schedule::new();
    schedule.add_system(bystander);
    schedule.add_system(a).after(c);
    schedule.add_system(b).after(a);
    schedule.add_system(c).after(b);
    let Err(ScheduleError::Cycle { mut systems }) = schedule.build(&mut world) else { panic!("expected a cycle") };
    let start = systems.iter().position(|s| s == "a").unwrap();
    systems.rotate_left(start);
    assert_eq!(systems, ["a", "b", "c"]);
    let message = schedule.build(&mut world).unwrap_err().to_string();
    let Err(ScheduleError::Cycle { systems }) = schedule.build(&mut world) else { unreachable!() };
    let chain: Vec<String> = systems.iter().map(|s| format!("`{s}`")).collect();
    assert_eq!(
        message,
        format!(
            "the ordering constraints form a cycle: {} runs before `{}` again",
            chain.join(" runs before "),
            systems[0]
        )
    );
}

#[test]
#[should_panic(expected = "the ordering constraints form a cycle")]
fn running_a_cyclic_schedule_panics_instead_of_hanging() {
    fn a() {}
    fn b() {}
    let mut schedule = Schedule::new();
    schedule.add_system(a).after(b);
    schedule.add_system(b).after(a);
    schedule.run(&mut World::new());
}

#[test]
fn priority_breaks_ties_and_never_contradicts_a_constraint() {
    fn early() {}
    fn late() {}
    fn middle() {}
    let mut schedule = Schedule::new();
    schedule.add_system(early).priority(1);
    schedule.add_system(middle).priority(3);
    schedule.add_system(late).priority(5).before(early);
    let mut world = World::new();
    assert_eq!(schedule.build(&mut world), Ok(()));
    let order: Vec<String> =
        schedule.order(&mut world).into_iter().map(|n| n.rsplit("::").next().unwrap().to_string()).collect();
    // `late` must precede `early`; `middle` is free and its priority (3)
    // puts it before `late` (5), which `early` then follows.
    assert_eq!(order, ["middle", "late", "early"]);
    schedule.run(&mut world);
}

#[test]
fn a_constraint_naming_nothing_is_an_error() {
    fn lonely() {}
    let mut schedule = Schedule::new();
    schedule.add_system(lonely).after("physics");
    assert_eq!(
        schedule.build(&mut World::new()),
        Err(ScheduleError::UnknownSystem { system: "lonely".into(), target: "label or set `physics`".into() })
    );
}

#[derive(Default, Debug, PartialEq)]
struct Counts {
    runs: u32,
    enabled: u32,
    disabled: u32,
    cleared: u32,
}

#[test]
fn enable_disable_toggle_remove_run_each_hook_once_per_transition() {
    fn tick(mut counts: ResMut<Counts>) {
        counts.runs += 1;
    }
    let mut world = World::new();
    world.init_resource::<Counts>();
    let mut schedule = Schedule::new();
    let id = schedule
        .add_system(tick)
        .on_enabled(|w| w.resource_mut::<Counts>().enabled += 1)
        .on_disabled(|w| w.resource_mut::<Counts>().disabled += 1)
        .id();
    schedule.run(&mut world);
    assert!(schedule.is_enabled(id));
    assert!(!schedule.enable(id), "already enabled: no transition");
    assert!(schedule.disable(id));
    assert!(!schedule.disable(id));
    schedule.run(&mut world);
    assert_eq!(*world.resource::<Counts>(), Counts { runs: 1, enabled: 0, disabled: 1, cleared: 0 });
    assert!(schedule.toggle(id));
    schedule.run(&mut world);
    assert_eq!(*world.resource::<Counts>(), Counts { runs: 2, enabled: 1, disabled: 1, cleared: 0 });
    assert!(schedule.remove(id));
    assert!(!schedule.remove(id));
    assert!(!schedule.is_enabled(id));
    schedule.run(&mut world);
    assert_eq!(*world.resource::<Counts>(), Counts { runs: 2, enabled: 1, disabled: 2, cleared: 0 });
}

#[test]
fn a_system_added_disabled_runs_only_once_enabled() {
    fn tick(mut counts: ResMut<Counts>) {
        counts.runs += 1;
    }
    let mut world = World::new();
    world.init_resource::<Counts>();
    let mut schedule = Schedule::new();
    let id = schedule.add_system(tick).disabled().on_enabled(|w| w.resource_mut::<Counts>().enabled += 1).id();
    schedule.run(&mut world);
    assert_eq!(world.resource::<Counts>().runs, 0);
    schedule.enable(id);
    schedule.run(&mut world);
    assert_eq!(*world.resource::<Counts>(), Counts { runs: 1, enabled: 1, disabled: 0, cleared: 0 });
}

struct Spawner {
    hooks: Log,
}

impl System for Spawner {
    fn run(&mut self, world: &mut World) {
        world.spawn(Position(0.0));
    }
    fn on_enabled(&mut self, _: &mut World) {
        self.hooks.lock().unwrap().push("enabled".into());
    }
    fn on_disabled(&mut self, _: &mut World) {
        self.hooks.lock().unwrap().push("disabled".into());
    }
    fn on_clear(&mut self, world: &mut World) {
        self.hooks.lock().unwrap().push(format!("clear with {} entities", world.len()));
    }
}

#[test]
fn struct_systems_get_their_hooks() {
    let hooks = log();
    let mut world = World::new();
    let mut schedule = Schedule::new();
    let id = schedule.add_system(Spawner { hooks: hooks.clone() }).id();
    schedule.run(&mut world);
    schedule.disable(id);
    schedule.run(&mut world);
    schedule.enable(id);
    schedule.run(&mut world);
    schedule.clear_world(&mut world);
    assert_eq!(take(&hooks), ["disabled", "enabled", "clear with 0 entities"]);
    assert_eq!(schedule.timings().get("Spawner").map(|t| t.runs()), Some(2));
}

#[test]
fn struct_systems_and_world_functions_select_what_they_made() {
    fn census(world: &mut World) {
        let n = world.len() as f32;
        world.spawn(Velocity(n));
    }
    fn seen(q: Query<&Velocity>, mut counts: ResMut<Counts>) {
        counts.runs = q.iter().map(|v| v.0 as u32).sum();
    }
    let mut world = World::new();
    world.init_resource::<Counts>();
    let mut schedule = Schedule::single_threaded();
    // Added in the reverse of the order the constraints give.
    schedule.add_system(seen).after(census);
    schedule.add_system(census).after(Spawner { hooks: log() });
    schedule.add_system(Spawner { hooks: log() });
    schedule.run(&mut world);
    // The spawner ran first (1 entity), the census counted it, and `seen`
    // saw the census's velocity.
    assert_eq!(world.resource::<Counts>().runs, 1);
}

fn movement(mut q: Query<(&mut Position, &Velocity)>, time: Res<Time>) {
    for (mut pos, vel) in q.iter_mut() {
        pos.0 += vel.0 * time.delta_secs();
    }
}

#[test]
fn pause_runs_only_debug_systems_and_slow_motion_scales_delta() {
    #[derive(Default)]
    struct DebugFrames(u32);
    let mut world = World::new();
    world.init_resource::<DebugFrames>();
    let e = world.spawn((Position(0.0), Velocity(10.0)));
    let mut schedule = Schedule::new();
    schedule.add_system(movement);
    schedule.add_system(|mut frames: ResMut<DebugFrames>| frames.0 += 1).debug();
    let frame = |world: &mut World, schedule: &mut Schedule| {
        world.resource_mut::<Time>().advance(Duration::from_millis(100));
        schedule.run(world);
    };
    frame(&mut world, &mut schedule);
    assert_eq!(world.get::<Position>(e), Some(&Position(1.0)));
    world.resource_mut::<Time>().pause();
    frame(&mut world, &mut schedule);
    frame(&mut world, &mut schedule);
    assert_eq!(world.get::<Position>(e), Some(&Position(1.0)), "paused: movement does not run");
    assert_eq!(world.resource::<DebugFrames>().0, 3, "debug systems run while paused");
    world.resource_mut::<Time>().resume();
    world.resource_mut::<Time>().set_scale(0.25);
    frame(&mut world, &mut schedule);
    assert_eq!(world.get::<Position>(e), Some(&Position(1.25)), "slow motion: a quarter of the distance");
    assert_eq!(world.resource::<Time>().elapsed(), Duration::from_millis(125));
}

#[test]
fn run_if_skips_the_system_when_false() {
    #[derive(Default)]
    struct Ticks(u32);
    struct Enabled(bool);
    let mut world = World::new();
    world.init_resource::<Ticks>();
    world.insert_resource(Enabled(false));
    let mut schedule = Schedule::new();
    schedule.add_system(|mut t: ResMut<Ticks>| t.0 += 1).run_if(|w: &World| w.resource::<Enabled>().0);
    schedule.run(&mut world);
    world.resource_mut::<Enabled>().0 = true;
    schedule.run(&mut world);
    schedule.run(&mut world);
    assert_eq!(world.resource::<Ticks>().0, 2);
}

#[test]
fn apply_deferred_makes_earlier_commands_visible_later_in_the_frame() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let out = seen.clone();
    let mut world = World::new();
    let mut schedule = Schedule::new();
    let spawn = schedule
        .add_system(|mut c: Commands| {
            c.spawn(Position(1.0));
        })
        .id();
    let sync = schedule.add_apply_deferred().after(spawn).id();
    schedule.add_system(move |q: Query<&Position>| out.lock().unwrap().push(q.iter().count())).after(sync);
    schedule.run(&mut world);
    schedule.run(&mut world);
    assert_eq!(*seen.lock().unwrap(), [1, 2]);
}

#[test]
fn clear_world_empties_keeps_handles_stale_and_runs_on_clear_hooks_in_order() {
    #[derive(Component)]
    struct Level(#[allow(dead_code)] u32);
    let hooks = log();
    let (h1, h2) = (hooks.clone(), hooks.clone());
    let mut world = World::new();
    let old: Vec<Entity> = (0..5).map(|i| world.spawn(Level(i))).collect();
    let mut schedule = Schedule::new();
    schedule.add_system(|mut c: Commands, q: Query<Entity, With<Level>>| {
        for e in q.iter() {
            c.despawn(e);
        }
    });
    schedule.add_system(|_: Commands| {}).priority(2).on_clear(move |w| {
        h2.lock().unwrap().push(format!("second sees {}", w.len()));
    });
    schedule.add_system(|_: Commands| {}).priority(1).on_clear(move |w| {
        h1.lock().unwrap().push(format!("first sees {}", w.len()));
        w.spawn(Level(99));
    });
    world.send_event(7u32);
    schedule.clear_world(&mut world);
    assert_eq!(take(&hooks), ["first sees 0", "second sees 1"]);
    assert!(old.iter().all(|&e| !world.contains(e)), "old handles are stale");
    let fresh: Vec<Entity> = (0..5).map(|_| world.spawn(Level(0))).collect();
    assert!(fresh.iter().all(|e| !old.contains(e)), "no handle is handed out again");
    assert!(world.resource::<Events<u32>>().is_empty());
    assert_eq!(world.query::<&Level>().count(), 6);
    world.check_invariants().unwrap();
}

#[test]
fn clear_world_drops_pending_commands() {
    let mut world = World::new();
    let mut schedule = Schedule::new();
    let mut queue = CommandQueue::default();
    let e = Commands::new(&mut queue, &world).spawn(Position(0.0)).id();
    schedule.clear_world(&mut world);
    drop(queue);
    assert!(!world.contains(e));
    world.check_invariants().unwrap();
}

#[test]
fn timings_count_runs_and_print_as_a_table() {
    fn physics() {}
    fn render() {}
    let mut world = World::new();
    let mut schedule = Schedule::new();
    schedule.add_system(render).priority(1);
    schedule.add_system(physics);
    for _ in 0..4 {
        schedule.run(&mut world);
    }
    let timings = schedule.timings();
    let names: Vec<(&str, u64)> = timings.iter().map(|t| (t.name(), t.runs())).collect();
    assert_eq!(names, [("physics", 4), ("render", 4)]);
    let table = timings.to_string();
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 3);
    assert!(lines[0].starts_with("system") && lines[0].contains("runs") && lines[0].contains("mean"));
    assert!(lines[1].starts_with("physics") && lines[2].starts_with("render"));
    assert_eq!(schedule.frames(), 4);
}

#[test]
fn a_panicking_system_propagates_and_the_schedule_runs_again() {
    #[derive(Default)]
    struct Boom(bool);
    let mut world = World::new();
    world.insert_resource(Boom(true));
    world.spawn(Position(0.0));
    let mut schedule = Schedule::new();
    schedule.add_system(|b: Res<Boom>| assert!(!b.0, "boom"));
    schedule.add_system(|mut q: Query<&mut Position>| q.for_each_mut(|mut p| p.0 += 1.0));
    schedule.add_system(|q: Query<&Velocity>| q.for_each(drop));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| schedule.run(&mut world)));
    assert!(result.is_err());
    world.resource_mut::<Boom>().0 = false;
    schedule.run(&mut world);
    world.check_invariants().unwrap();
}

// Parallel runs equal single-threaded ones: dozens of systems over eight
// components and two resources, with non-commutative updates, so any
// reordering of two conflicting systems changes the result.

macro_rules! components {
    ($($name:ident),*) => { $(#[derive(Component, Debug, Clone, Copy, PartialEq)] struct $name(u64);)* };
}
components!(C0, C1, C2, C3, C4, C5, C6, C7);

#[derive(Default, Debug, PartialEq)]
struct Ledger(u64);
#[derive(Default, Debug, PartialEq)]
struct Tally(u64);

/// A non-commutative update, repeated so that each system takes long
/// enough for the pool's threads to overlap.
fn mix(x: u64, k: u64) -> u64 {
    (0..16).fold(x, |x, _| x.wrapping_mul(6364136223846793005).wrapping_add(k).rotate_left(13))
}

fn build(schedule: &mut Schedule) {
    macro_rules! write_read {
        ($k:expr, $w:ident, $r:ident) => {
            schedule.add_system(|mut q: Query<(&mut $w, &$r)>| q.for_each_mut(|(mut w, r)| w.0 = mix(w.0 ^ r.0, $k)));
        };
    }
    macro_rules! write_filtered {
        ($k:expr, $w:ident, $f:ident) => {
            schedule.add_system(|mut q: Query<&mut $w, Without<$f>>| q.for_each_mut(|mut w| w.0 = mix(w.0, $k)));
            schedule.add_system(|mut q: Query<&mut $w, With<$f>>| q.for_each_mut(|mut w| w.0 = mix(w.0, $k + 1)));
        };
    }
    macro_rules! ledger {
        ($k:expr, $r:ident) => {
            schedule.add_system(|q: Query<&$r>, mut l: ResMut<Ledger>| {
                l.0 = q.iter().fold(mix(l.0, $k), |a, r| mix(a, r.0))
            });
        };
    }
    write_read!(1, C0, C1);
    write_read!(2, C1, C2);
    write_read!(3, C2, C3);
    write_read!(4, C3, C0);
    write_filtered!(5, C4, C0);
    write_read!(6, C5, C6);
    ledger!(7, C0);
    write_read!(8, C6, C7);
    write_read!(9, C7, C5);
    write_filtered!(10, C1, C7);
    ledger!(11, C4);
    write_read!(12, C0, C4);
    write_read!(13, C4, C5);
    schedule.add_system(|l: Res<Ledger>, mut t: ResMut<Tally>| t.0 = mix(t.0, l.0));
    write_read!(14, C2, C6);
    write_filtered!(15, C3, C2);
    write_read!(16, C5, C1);
    ledger!(17, C5);
    write_read!(18, C6, C0);
    write_read!(19, C7, C3);
    schedule.add_system(|mut t: ResMut<Tally>, q: Query<&C7>| t.0 = q.iter().fold(t.0, |a, c| mix(a, c.0)));
    write_read!(20, C1, C3);
    write_filtered!(21, C0, C5);
    write_read!(22, C2, C7);
    write_read!(23, C4, C6);
    write_read!(24, C3, C1);
    write_read!(25, C5, C2);
    write_read!(26, C6, C4);
    write_read!(27, C7, C0);
    ledger!(28, C3);
    schedule.add_system(|mut c: Commands, q: Query<(Entity, &C0)>| {
        for (e, c0) in q.iter() {
            if c0.0 % 7 == 0 {
                c.entity(e).insert(C7(c0.0));
            }
        }
    });
    schedule.add_system(|q: Query<(&C0, &C1, &C2)>, mut l: ResMut<Ledger>| {
        l.0 = q.iter().fold(l.0, |a, (x, y, z)| mix(a, x.0 ^ y.0 ^ z.0));
    });
}

fn populate(world: &mut World) {
    world.init_resource::<Ledger>();
    world.init_resource::<Tally>();
    for i in 0..1000u64 {
        let e = world.spawn((C0(i), C1(i * 3)));
        if i % 2 == 0 {
            world.insert(e, (C2(i), C3(i + 1))).unwrap();
        }
        if i % 3 == 0 {
            world.insert(e, (C4(i), C5(i ^ 5))).unwrap();
        }
        if i % 5 == 0 {
            world.insert(e, (C6(i), C7(i * 7))).unwrap();
        }
    }
}

fn snapshot(world: &World) -> Vec<String> {
    let mut rows: Vec<String> = world
        .query::<(Entity, &C0, &C1, Option<&C2>, Option<&C3>, Option<&C4>, Option<&C5>, Option<&C6>, Option<&C7>)>()
        .map(|row| format!("{row:?}"))
        .collect();
    rows.sort();
    rows.push(format!("{:?} {:?}", world.resource::<Ledger>(), world.resource::<Tally>()));
    rows
}

#[test]
fn parallel_runs_equal_single_threaded_runs() {
    // Run from inside pools of two and four threads: the schedule's own
    // thread is then a pool worker, which must not starve the systems it
    // spawns.
    for threads in [2, 4] {
        let mut parallel_world = World::new();
        let mut serial_world = World::new();
        populate(&mut parallel_world);
        populate(&mut serial_world);
        let mut parallel = Schedule::new();
        parallel.set_parallel_threshold(Duration::ZERO);
        let mut serial = Schedule::single_threaded();
        build(&mut parallel);
        build(&mut serial);
        assert!(parallel.len() >= 36, "dozens of systems: {}", parallel.len());
        assert_eq!(parallel.order(&mut parallel_world), serial.order(&mut serial_world));
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        for frame in 0..20 {
            pool.install(|| parallel.run(&mut parallel_world));
            serial.run(&mut serial_world);
            assert_eq!(snapshot(&parallel_world), snapshot(&serial_world), "{threads} threads, frame {frame}");
        }
        parallel_world.check_invariants().unwrap();
    }
}

#[test]
#[cfg(feature = "parallel")]
fn systems_that_do_not_conflict_overlap() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Instant;

    // Each system raises its flag, then waits (up to a generous limit) for
    // the other's: both see the other's flag only if they ran at the same
    // time.
    static A_UP: AtomicBool = AtomicBool::new(false);
    static B_UP: AtomicBool = AtomicBool::new(false);
    fn meet(mine: &AtomicBool, theirs: &AtomicBool) -> bool {
        mine.store(true, Ordering::SeqCst);
        let start = Instant::now();
        while !theirs.load(Ordering::SeqCst) {
            if start.elapsed() > Duration::from_secs(20) {
                return false;
            }
            std::thread::yield_now();
        }
        true
    }
    #[derive(Default)]
    struct Met(bool);
    #[derive(Default)]
    struct AlsoMet(bool);
    let mut world = World::new();
    world.init_resource::<Met>();
    world.init_resource::<AlsoMet>();
    let mut schedule = Schedule::new();
    schedule.set_parallel_threshold(Duration::ZERO);
    schedule.add_system(|mut met: ResMut<Met>| met.0 = meet(&A_UP, &B_UP));
    schedule.add_system(|mut met: ResMut<AlsoMet>| met.0 = meet(&B_UP, &A_UP));
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    pool.install(|| schedule.run(&mut world));
    assert!(world.resource::<Met>().0 && world.resource::<AlsoMet>().0);
}

#[test]
fn groups_below_the_parallel_threshold_run_on_the_calling_thread() {
    #[derive(Default)]
    struct First(Option<std::thread::ThreadId>);
    #[derive(Default)]
    struct Second(Option<std::thread::ThreadId>);
    let mut world = World::new();
    world.init_resource::<First>();
    world.init_resource::<Second>();
    let mut schedule = Schedule::new();
    schedule.set_parallel_threshold(Duration::from_secs(3600));
    schedule.add_system(|mut t: ResMut<First>| t.0 = Some(std::thread::current().id()));
    schedule.add_system(|mut t: ResMut<Second>| t.0 = Some(std::thread::current().id()));
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    pool.install(|| schedule.run(&mut world));
    for _ in 0..3 {
        let caller = pool.install(|| {
            schedule.run(&mut world);
            std::thread::current().id()
        });
        assert_eq!(world.resource::<First>().0, Some(caller));
        assert_eq!(world.resource::<Second>().0, Some(caller));
    }
}
