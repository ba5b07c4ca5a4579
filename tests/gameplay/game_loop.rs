//! `GameLoop`: the order of stages, the fixed steps a sequence of frame
//! times gives, pause and slow motion, level resets asked for by systems,
//! and a world that comes out the same bit for bit on one thread or many.

#![cfg(feature = "game-loop")]

use std::time::Duration;

use archetable::prelude::*;

#[derive(Default)]
struct Log(Vec<String>);

fn log(name: &'static str) -> impl FnMut(ResMut<Log>) + Send + 'static {
    move |mut log: ResMut<Log>| log.0.push(name.to_string())
}

fn take_log(game: &mut GameLoop) -> Vec<String> {
    std::mem::take(&mut game.world_mut().resource_mut::<Log>().0)
}

const MS: Duration = Duration::from_millis(1);

#[test]
fn stages_run_in_order_and_startup_once() {
    let mut game = GameLoop::new();
    game.world_mut().init_resource::<Log>();
    game.set_fixed_step(10 * MS);
    game.add_stage_before(Stage::FixedUpdate, "input");
    game.add_stage_after(Stage::Update, "ui");
    game.add_stage_before(Stage::LateUpdate, "audio");
    game.add_system(Stage::LateUpdate, log("late_update"));
    game.add_system("audio", log("audio"));
    game.add_system("ui", log("ui"));
    game.add_system(Stage::Update, log("update"));
    game.add_system(Stage::FixedUpdate, log("fixed_update"));
    game.add_system("input", log("input"));
    game.add_system(Stage::Startup, log("startup"));
    let order: Vec<String> = game.stages().map(|s| s.to_string()).collect();
    assert_eq!(order, ["input", "fixed_update", "update", "ui", "audio", "late_update"]);

    game.advance(20 * MS);
    assert_eq!(
        take_log(&mut game),
        ["startup", "input", "fixed_update", "fixed_update", "update", "ui", "audio", "late_update"]
    );
    game.advance(5 * MS);
    assert_eq!(take_log(&mut game), ["input", "update", "ui", "audio", "late_update"]);
    game.advance(5 * MS);
    assert_eq!(take_log(&mut game), ["input", "fixed_update", "update", "ui", "audio", "late_update"]);
    assert_eq!(game.stage(Stage::Startup).frames(), 1);
    assert_eq!(game.stage(Stage::Update).frames(), 3);
    assert_eq!(game.stage(Stage::FixedUpdate).frames(), 3);
}

#[test]
fn startup_runs_once_even_when_called_by_hand() {
    let mut game = GameLoop::new();
    game.world_mut().init_resource::<Log>();
    game.add_system(Stage::Startup, log("startup"));
    assert!(!game.has_started());
    game.startup();
    game.startup();
    assert!(game.has_started());
    game.advance(MS);
    assert_eq!(take_log(&mut game), ["startup"]);
}

#[derive(Component, Clone, Copy, Debug, PartialEq)]
struct Marker(u32);

#[test]
fn commands_apply_between_stages_and_between_fixed_steps() {
    #[derive(Default)]
    struct Seen(Vec<(&'static str, usize)>);

    let mut game = GameLoop::new();
    game.world_mut().init_resource::<Seen>();
    game.set_fixed_step(10 * MS);
    game.add_system(Stage::FixedUpdate, |q: Query<&Marker>, mut seen: ResMut<Seen>, mut commands: Commands| {
        seen.0.push(("fixed", q.iter().count()));
        commands.spawn(Marker(0));
    });
    game.add_system(Stage::Update, |q: Query<&Marker>, mut seen: ResMut<Seen>, mut commands: Commands| {
        seen.0.push(("update", q.iter().count()));
        commands.spawn(Marker(1));
    });
    game.add_system(Stage::LateUpdate, |q: Query<&Marker>, mut seen: ResMut<Seen>| {
        seen.0.push(("late_update", q.iter().count()));
    });
    game.advance(30 * MS);
    assert_eq!(
        game.world().resource::<Seen>().0,
        [("fixed", 0), ("fixed", 1), ("fixed", 2), ("update", 3), ("late_update", 4)]
    );
}

/// Step 1/60 s, at most 5 steps per frame; frame times 10 ms, 20 ms, 500 ms
/// (a hitch), 4 ms, 16 ms, all in integer nanoseconds.
#[test]
fn fixed_steps_per_frame_are_exact() {
    #[derive(Default)]
    struct Indices(Vec<u64>);

    let mut game = GameLoop::new();
    game.world_mut().init_resource::<Indices>();
    game.set_fixed_step(Duration::from_nanos(16_666_667)).set_max_fixed_steps(5);
    assert_eq!(game.fixed_time().step(), FixedTime::from_hz(60.0).step());
    let mut expected = FixedTime::default();
    expected.set_max_steps_per_frame(5);
    assert_eq!(*game.fixed_time(), expected);
    game.add_system(Stage::FixedUpdate, |fixed: Res<FixedTime>, mut seen: ResMut<Indices>| {
        seen.0.push(fixed.index());
    });

    const STEP: u64 = 16_666_667;
    // (frame time ns, steps run, dropped, overstep ns)
    let frames: [(u64, u32, u64, u64); 5] = [
        (10_000_000, 0, 0, 10_000_000),
        (20_000_000, 1, 0, 30_000_000 - STEP),
        // 513,333,333 ns accumulated: 30 steps due, 5 run, 25 dropped.
        (500_000_000, 5, 25, 513_333_333 - 30 * STEP),
        (4_000_000, 1, 0, 513_333_333 - 30 * STEP + 4_000_000 - STEP),
        (16_000_000, 0, 0, 513_333_333 - 30 * STEP + 20_000_000 - STEP),
    ];
    let mut total_steps = 0;
    let mut total_dropped = 0;
    for (i, &(dt, steps, dropped, overstep)) in frames.iter().enumerate() {
        let before = game.world().resource::<Indices>().0.len();
        game.advance(Duration::from_nanos(dt));
        total_steps += u64::from(steps);
        total_dropped += dropped;
        let fixed = game.fixed_time();
        assert_eq!(fixed.steps_this_frame(), steps, "frame {i}");
        assert_eq!(fixed.dropped_this_frame(), dropped, "frame {i}");
        assert_eq!(fixed.dropped_total(), total_dropped, "frame {i}");
        assert_eq!(fixed.overstep(), Duration::from_nanos(overstep), "frame {i}");
        assert_eq!(fixed.alpha(), overstep as f64 / STEP as f64, "frame {i}");
        assert_eq!(game.alpha(), fixed.alpha());
        assert_eq!(fixed.index(), total_steps, "frame {i}");
        assert_eq!(game.world().resource::<Indices>().0.len() - before, steps as usize, "frame {i}");
    }
    assert_eq!(game.world().resource::<Indices>().0, (0..7).collect::<Vec<u64>>());
    assert_eq!(game.fixed_time().overstep(), Duration::from_nanos(16_666_656));
    assert_eq!(game.fixed_time().elapsed(), Duration::from_nanos(7 * STEP));
    assert_eq!(game.world().resource::<Time>().real_elapsed(), Duration::from_millis(550));
}

#[test]
fn pause_stops_fixed_steps_and_only_debug_systems_run() {
    #[derive(Default)]
    struct Counts {
        fixed: u32,
        update: u32,
        debug: u32,
    }

    let mut game = GameLoop::new();
    game.world_mut().init_resource::<Counts>();
    game.set_fixed_step(10 * MS);
    game.add_system(Stage::FixedUpdate, |mut c: ResMut<Counts>| c.fixed += 1);
    game.add_system(Stage::FixedUpdate, |_: Res<Time>| {}).debug();
    game.add_system(Stage::Update, |mut c: ResMut<Counts>| c.update += 1);
    game.add_system(Stage::LateUpdate, |mut c: ResMut<Counts>| c.debug += 1).debug();

    game.advance(25 * MS);
    let counts = |game: &GameLoop| {
        let c = game.world().resource::<Counts>();
        (c.fixed, c.update, c.debug)
    };
    assert_eq!(counts(&game), (2, 1, 1));
    assert_eq!(game.fixed_time().overstep(), 5 * MS);

    game.world_mut().resource_mut::<Time>().pause();
    for _ in 0..3 {
        game.advance(25 * MS);
    }
    assert_eq!(counts(&game), (2, 1, 4));
    assert_eq!(game.fixed_time().overstep(), 5 * MS);
    assert_eq!(game.fixed_time().steps_this_frame(), 0);
    assert_eq!(game.world().resource::<Time>().elapsed(), 25 * MS);

    // Slow motion: half of 30 ms plus the 5 ms left is two steps.
    game.world_mut().resource_mut::<Time>().resume();
    game.world_mut().resource_mut::<Time>().set_scale(0.5);
    game.advance(30 * MS);
    assert_eq!(counts(&game), (4, 2, 5));
    assert_eq!(game.fixed_time().overstep(), Duration::ZERO);
    assert_eq!(game.alpha(), 0.0);
}

#[test]
fn events_age_once_per_frame_so_every_stage_reads_them() {
    struct Ping(u32);
    #[derive(Default)]
    struct Read(Vec<(&'static str, u32)>);

    let mut game = GameLoop::new();
    game.world_mut().init_resource::<Read>();
    game.set_fixed_step(10 * MS);
    game.add_system(Stage::Update, |mut w: EventWriter<Ping>, time: Res<Time>| {
        if time.frame() == 1 {
            w.send(Ping(7));
        }
    });
    game.add_system(Stage::LateUpdate, |mut r: EventReader<Ping>, mut read: ResMut<Read>| {
        read.0.extend(r.read().map(|p| ("late_update", p.0)));
    });
    game.add_system(Stage::FixedUpdate, |mut r: EventReader<Ping>, mut read: ResMut<Read>| {
        read.0.extend(r.read().map(|p| ("fixed_update", p.0)));
    });
    for _ in 0..3 {
        game.advance(10 * MS);
    }
    assert_eq!(game.world().resource::<Read>().0, [("late_update", 7), ("fixed_update", 7)]);
}

#[derive(Component, Debug, PartialEq)]
struct Enemy(u32);

#[derive(Default)]
struct Level(u32);

#[test]
fn clear_world_from_a_system_clears_after_the_stage_and_keeps_resources() {
    #[derive(Default)]
    struct Hooks(Vec<&'static str>);
    #[derive(Default)]
    struct LateSaw(Vec<Vec<u32>>);

    let mut game = GameLoop::new();
    game.world_mut().init_resource::<Level>();
    game.world_mut().init_resource::<Hooks>();
    game.world_mut().init_resource::<LateSaw>();
    game.set_fixed_step(10 * MS);
    game.add_system(Stage::Startup, |mut commands: Commands| {
        for i in 0..3 {
            commands.spawn(Enemy(i));
        }
    });
    game.add_system(Stage::FixedUpdate, |_: Query<&Enemy>| {}).on_clear(|world: &mut World| {
        world.resource_mut::<Hooks>().0.push("fixed_update");
    });
    // Asks for the reset in frame 2, and spawns next to it: that spawn is
    // cleared too, as the request acts once the stage's commands applied.
    game.add_system(Stage::Update, |time: Res<Time>, mut commands: Commands| {
        if time.frame() == 2 {
            commands.clear_world();
            commands.spawn(Enemy(99));
            commands.clear_world(); // twice in one stage: one clear
        }
    })
    .on_clear(|world: &mut World| {
        world.resource_mut::<Hooks>().0.push("update");
        world.resource_mut::<Level>().0 += 1;
        let level = world.resource::<Level>().0;
        world.spawn(Enemy(100 * level));
    });
    game.add_system(Stage::LateUpdate, |q: Query<&Enemy>, mut saw: ResMut<LateSaw>| {
        let mut ids: Vec<u32> = q.iter().map(|e| e.0).collect();
        ids.sort();
        saw.0.push(ids);
    });
    game.startup();
    let old: Vec<Entity> = game.world_mut().query::<Entity>().collect();
    assert_eq!(old.len(), 3);

    game.advance(10 * MS);
    game.advance(10 * MS);
    assert_eq!(game.world().resource::<LateSaw>().0, [vec![0, 1, 2], vec![100]]);
    assert_eq!(game.world().resource::<Hooks>().0, ["fixed_update", "update"]);
    assert_eq!(game.world().resource::<Level>().0, 1, "resources stay");
    assert!(game.world().contains_resource::<FixedTime>());
    for &e in &old {
        assert!(!game.world().contains(e));
        assert!(game.world().get::<Enemy>(e).is_none());
    }

    // Respawning reuses the freed indices with new generations: no old
    // handle comes back to life.
    let fresh: Vec<Entity> = (0..10).map(|i| game.world_mut().spawn(Enemy(1000 + i))).collect();
    for &e in &old {
        assert!(!game.world().contains(e), "{e:?} aliases a new entity");
        assert!(game.world_mut().despawn(e).is_err());
        assert!(fresh.iter().all(|f| f.index() != e.index() || f.generation() > e.generation()));
    }
    assert!(fresh.iter().any(|f| old.iter().any(|o| o.index() == f.index())), "indices are reused");
    game.advance(10 * MS);
    assert_eq!(game.world().len(), 11);
}

#[test]
fn clear_world_on_a_plain_schedule_runs_its_hooks() {
    let mut world = World::new();
    world.init_resource::<Level>();
    let old = world.spawn(Enemy(1));
    let mut schedule = Schedule::new();
    schedule.add_system(|mut commands: Commands| commands.clear_world()).on_clear(|world: &mut World| {
        world.resource_mut::<Level>().0 += 1;
    });
    schedule.run(&mut world);
    assert!(!world.contains(old));
    assert_eq!(world.resource::<Level>().0, 1);
    assert!(world.is_empty());
}

#[test]
#[should_panic(expected = "none can be placed around `startup`")]
fn no_stage_around_startup() {
    GameLoop::new().add_stage_after(Stage::Startup, "setup");
}

#[test]
#[should_panic(expected = "already has a stage `ui`")]
fn stage_names_are_unique() {
    let mut game = GameLoop::new();
    game.add_stage_after(Stage::Update, "ui");
    game.add_stage_before(Stage::LateUpdate, "ui");
}

#[test]
#[should_panic(expected = "already has a stage `late_update`")]
fn custom_stages_cannot_take_a_built_in_name() {
    GameLoop::new().add_stage_after(Stage::Update, "late_update");
}

#[test]
fn a_game_loop_can_move_to_another_thread() {
    fn send<T: Send>(_: &T) {}
    send(&GameLoop::new());
}

#[test]
#[should_panic(expected = "no stage `physics` (its stages: startup, fixed_update, update, late_update)")]
fn unknown_stage_is_named() {
    GameLoop::new().add_system("physics", || {});
}

// Determinism: a small simulation with spawns from two fixed systems that
// run side by side, despawns, and float physics, over uneven frame times.

#[derive(Component, Clone, Copy)]
struct Pos([f32; 2]);

#[derive(Component, Clone, Copy)]
struct Vel([f32; 2]);

#[derive(Component, Clone, Copy)]
struct Spark(u32);

#[derive(Default)]
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u32 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) as u32
    }
}

#[derive(Default)]
struct SparkRng(u64);

fn spawn_bodies(mut commands: Commands, mut rng: ResMut<Rng>, fixed: Res<FixedTime>) {
    for _ in 0..(rng.next() % 4) {
        let v = [(rng.next() % 200) as f32 / 10.0 - 10.0, (rng.next() % 200) as f32 / 10.0];
        commands.spawn((Pos([0.0, 0.0]), Vel(v), Spark(fixed.index() as u32)));
    }
}

fn spawn_sparks(mut commands: Commands, mut rng: ResMut<SparkRng>) {
    rng.0 += 1;
    for i in 0..(rng.0 % 3) {
        commands.spawn(Spark(i as u32));
    }
}

fn gravity(mut q: Query<&mut Vel>, fixed: Res<FixedTime>) {
    for mut v in q.iter_mut() {
        v.0[1] -= 9.81 * fixed.step_secs();
    }
}

fn integrate(mut q: Query<(&mut Pos, &Vel)>, fixed: Res<FixedTime>) {
    let dt = fixed.step_secs();
    for (mut p, v) in q.iter_mut() {
        p.0[0] += v.0[0] * dt;
        p.0[1] += v.0[1] * dt;
    }
}

fn cull(q: Query<(Entity, &Pos)>, sparks: Query<(Entity, &Spark), Without<Pos>>, mut commands: Commands) {
    for (e, p) in q.iter() {
        if p.0[1] < -5.0 {
            commands.despawn(e);
        }
    }
    for (e, s) in sparks.iter() {
        if s.0 == 1 {
            commands.despawn(e);
        }
    }
}

fn checksum(world: &World) -> (usize, u64) {
    let mut rows: Vec<(u64, u32, u32, u32, u32, u32)> = world
        .query::<(Entity, Option<&Pos>, Option<&Vel>, Option<&Spark>)>()
        .map(|(e, p, v, s)| {
            let p = p.map_or([0.0; 2], |p| p.0);
            let v = v.map_or([0.0; 2], |v| v.0);
            (e.to_bits(), p[0].to_bits(), p[1].to_bits(), v[0].to_bits(), v[1].to_bits(), s.map_or(u32::MAX, |s| s.0))
        })
        .collect();
    rows.sort_unstable();
    // FNV-1a over every field.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for (e, a, b, c, d, s) in &rows {
        for word in [*e, u64::from(*a), u64::from(*b), u64::from(*c), u64::from(*d), u64::from(*s)] {
            for byte in word.to_le_bytes() {
                hash ^= u64::from(byte);
                hash = hash.wrapping_mul(0x0100_0000_01b3);
            }
        }
    }
    (rows.len(), hash)
}

fn simulate(mut game: GameLoop) -> (usize, u64) {
    game.world_mut().insert_resource(Rng(42));
    game.world_mut().init_resource::<SparkRng>();
    game.set_fixed_step(Duration::from_nanos(16_666_667)).set_max_fixed_steps(4);
    game.add_system(Stage::FixedUpdate, spawn_bodies);
    game.add_system(Stage::FixedUpdate, spawn_sparks);
    game.add_system(Stage::FixedUpdate, gravity);
    game.add_system(Stage::FixedUpdate, integrate).after(gravity);
    game.add_system(Stage::Update, cull);
    game.add_system(Stage::Update, spawn_sparks);
    let mut frame_rng = Rng(7);
    for frame in 0..300 {
        if frame == 100 {
            game.world_mut().resource_mut::<Time>().set_scale(0.75);
        }
        let dt = Duration::from_micros(4_000 + u64::from(frame_rng.next() % 30_000));
        game.advance(if frame == 150 { Duration::from_millis(250) } else { dt });
    }
    assert!(game.fixed_time().dropped_total() > 0, "the hitch dropped steps");
    game.world().check_invariants().unwrap();
    checksum(game.world())
}

#[test]
fn same_inputs_give_the_same_world_single_threaded_or_parallel() {
    let single = simulate(GameLoop::single_threaded());
    let mut parallel = GameLoop::new();
    parallel.set_parallel_threshold(Duration::ZERO);
    let parallel = simulate(parallel);
    let again = simulate(GameLoop::single_threaded());
    assert!(single.0 > 50, "a world worth checking: {} entities", single.0);
    assert_eq!(single, again);
    assert_eq!(single, parallel);
}
