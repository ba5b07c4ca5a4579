//! A game saved mid-play goes on from its save: a small asteroids game
//! (a fleet of `ChildOf` ships, fixed-step physics in a chained set, a
//! `Hit` observer, a sparse `Invulnerable`, a playing / over state machine
//! whose requests can be pending across frames) plays N frames, is saved,
//! loaded into a fresh world and resumed in a new `GameLoop`; both loops
//! then run in lockstep to frame 2N and must hold the same entities,
//! components and resources, bit for bit, after every frame, in JSON, RON
//! and binary, on one thread or many.

#![cfg(feature = "serde")]

use std::collections::BTreeMap;
use std::time::Duration;

use archetable::data::SerdeRegistry;
use archetable::prelude::*;
use archetable::LoopStarted;
use serde::{Deserialize, Serialize};

use crate::logs;

#[derive(States, Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
enum Phase {
    Playing,
    Over,
}

#[derive(Component, Clone, Copy, Debug, Default, Serialize, Deserialize)]
struct Position {
    x: f32,
    y: f32,
}

#[derive(Component, Clone, Copy, Debug, Default, Serialize, Deserialize)]
struct Velocity {
    x: f32,
    y: f32,
}

#[derive(Component, Clone, Copy, Debug, Default, Serialize, Deserialize)]
struct Rock {
    size: u8,
}

#[derive(Component, Clone, Copy, Debug, Default, Serialize, Deserialize)]
struct Ship {
    /// Fixed steps until the next shot.
    gun: u32,
}

#[derive(Component, Clone, Copy, Debug, Serialize, Deserialize)]
struct Bullet {
    life: u32,
    owner: Entity,
}

#[derive(Component, Clone, Copy, Debug, Default, Serialize, Deserialize)]
#[component(storage = "sparse")]
struct Invulnerable {
    steps: u32,
}

#[derive(Component, Clone, Copy, Debug, Default, Serialize, Deserialize)]
struct Fleet;

/// Spawned by the startup stage only: a resumed loop must not add another.
#[derive(Component, Clone, Copy, Debug, Default, Serialize, Deserialize)]
struct Banner;

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Score {
    points: u32,
    crashes: u32,
    /// Kills credited to each ship, by the ship's handle.
    by_ship: BTreeMap<Entity, u32>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
struct Rng(u64);

impl Default for Rng {
    fn default() -> Self {
        Rng(0x9e37_79b9_7f4a_7c15)
    }
}

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// In [-1, 1).
    fn unit(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    }
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Level(u32);

/// Frames left in the game-over screen.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Countdown(u32);

/// Counted each frame by a system that runs beside the referee.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Census {
    rocks: u32,
    bullets: u32,
}

/// A rock was hit by bullet `by`; the target is the rock.
struct Hit {
    by: Entity,
}

const ARENA: f32 = 120.0;
const STEP: Duration = Duration::from_millis(10);

fn step_secs(fixed: &FixedTime) -> f32 {
    fixed.step_secs()
}

fn sorted<T: Ord>(mut v: Vec<T>) -> Vec<T> {
    v.sort();
    v
}

fn steer(mut ships: Query<(&Position, &mut Velocity), With<Ship>>) {
    for (pos, mut vel) in ships.iter_mut() {
        // Turn a little, more near the walls: depends on the ship alone.
        let turn = 0.05 + 0.001 * (pos.x - ARENA / 2.0).abs();
        let (s, c) = turn.sin_cos();
        *vel = Velocity { x: vel.x * c - vel.y * s, y: vel.x * s + vel.y * c };
    }
}

fn fire(mut ships: Query<(Entity, &Position, &Velocity, &mut Ship)>, mut commands: Commands) {
    let order = sorted(ships.iter_mut().map(|(e, ..)| e).collect());
    for ship in order {
        let (_, pos, vel, mut gun) = ships.get_mut(ship).unwrap();
        if gun.gun > 0 {
            gun.gun -= 1;
            continue;
        }
        gun.gun = 9;
        let speed = (vel.x * vel.x + vel.y * vel.y).sqrt().max(1e-3);
        let (pos, dir) = (*pos, Velocity { x: vel.x / speed * 70.0, y: vel.y / speed * 70.0 });
        commands.spawn((pos, dir, Bullet { life: 45, owner: ship }));
    }
}

fn integrate(mut bodies: Query<(&mut Position, &Velocity)>, fixed: Res<FixedTime>) {
    let dt = step_secs(&fixed);
    for (mut pos, vel) in bodies.iter_mut() {
        pos.x += vel.x * dt;
        pos.y += vel.y * dt;
    }
}

fn wrap(mut bodies: Query<&mut Position>) {
    for mut pos in bodies.iter_mut() {
        pos.x = pos.x.rem_euclid(ARENA);
        pos.y = pos.y.rem_euclid(ARENA);
    }
}

fn age(
    mut bullets: Query<(Entity, &mut Bullet)>,
    mut shields: Query<(Entity, &mut Invulnerable)>,
    mut commands: Commands,
) {
    for (entity, mut bullet) in bullets.iter_mut() {
        bullet.life -= 1;
        if bullet.life == 0 {
            commands.despawn(entity);
        }
    }
    for (entity, mut shield) in shields.iter_mut() {
        shield.steps -= 1;
        if shield.steps == 0 {
            commands.entity(entity).remove::<Invulnerable>();
        }
    }
}

fn near(a: &Position, b: &Position, r: f32) -> bool {
    let (dx, dy) = (a.x - b.x, a.y - b.y);
    dx * dx + dy * dy < r * r
}

/// Ships that a rock can hurt.
type Exposed = (With<Ship>, Without<Invulnerable>);

fn crash(
    ships: Query<(Entity, &Position), Exposed>,
    rocks: Query<(&Position, &Rock)>,
    mut score: ResMut<Score>,
    mut commands: Commands,
) {
    for ship in sorted(ships.iter().map(|(e, _)| e).collect()) {
        let (_, pos) = ships.get(ship).unwrap();
        if rocks.iter().any(|(rock, r)| near(pos, rock, 3.0 * r.size as f32 + 2.0)) {
            score.crashes += 1;
            commands.entity(ship).insert(Invulnerable { steps: 40 });
        }
    }
}

fn collide(
    bullets: Query<(Entity, &Position, &Bullet)>,
    rocks: Query<(Entity, &Position, &Rock)>,
    mut commands: Commands,
) {
    let rock_order = sorted(rocks.iter().map(|(e, ..)| e).collect::<Vec<_>>());
    let mut hit = Vec::new();
    // A bullet `age` ran out this step is despawned by its commands, which
    // apply before this system's: it hits nothing.
    for bullet in sorted(bullets.iter().filter(|(.., b)| b.life > 0).map(|(e, ..)| e).collect()) {
        let (_, at, _) = bullets.get(bullet).unwrap();
        let target = rock_order.iter().copied().find(|&rock| {
            let (_, pos, r) = rocks.get(rock).unwrap();
            !hit.contains(&rock) && near(at, pos, 3.0 * r.size as f32)
        });
        if let Some(rock) = target {
            hit.push(rock);
            // The trigger first: the observer reads the bullet's owner.
            commands.trigger_targets(Hit { by: bullet }, rock);
            commands.despawn(bullet);
        }
    }
}

fn spawn_rocks(fixed: Res<FixedTime>, mut rng: ResMut<Rng>, mut commands: Commands) {
    if fixed.index().is_multiple_of(40) {
        let (x, y) = (rng.unit() * ARENA / 2.0 + ARENA / 2.0, 0.0);
        let (vx, vy) = (rng.unit() * 15.0, rng.unit() * 15.0);
        commands.spawn((Position { x, y }, Velocity { x: vx, y: vy }, Rock { size: 3 }));
    }
}

fn on_hit(
    hit: Trigger<Hit>,
    rocks: Query<(&Position, &Velocity, &Rock)>,
    bullets: Query<&Bullet>,
    mut score: ResMut<Score>,
    mut rng: ResMut<Rng>,
    mut commands: Commands,
) {
    let rock = hit.target().unwrap();
    let Ok((pos, vel, r)) = rocks.get(rock) else { return };
    let bullet = bullets.get(hit.by).expect("the trigger came before the bullet's despawn");
    *score.by_ship.entry(bullet.owner).or_default() += 1;
    score.points += 10 * r.size as u32;
    if r.size > 1 {
        for _ in 0..2 {
            let kick = Velocity { x: vel.x + rng.unit() * 10.0, y: vel.y + rng.unit() * 10.0 };
            commands.spawn((*pos, kick, Rock { size: r.size - 1 }));
        }
    }
    commands.despawn(rock);
}

fn referee(score: Res<Score>, level: Res<Level>, mut next: ResMut<NextState<Phase>>) {
    if score.points >= 150 * level.0 {
        next.set(Phase::Over);
    }
}

fn census(rocks: Query<&Rock>, bullets: Query<&Bullet>, mut census: ResMut<Census>) {
    *census = Census { rocks: rocks.iter().count() as u32, bullets: bullets.iter().count() as u32 };
}

/// In `late_update`: a request made here waits for the next frame's
/// transition point, so saves can hold it.
fn over_timer(mut countdown: ResMut<Countdown>, mut next: ResMut<NextState<Phase>>) {
    countdown.0 = countdown.0.saturating_sub(1);
    if countdown.0 == 0 {
        next.set(Phase::Playing);
    }
}

fn build_level(mut level: ResMut<Level>, mut rng: ResMut<Rng>, mut commands: Commands) {
    level.0 += 1;
    let fleet = commands.spawn((Fleet, Position { x: ARENA / 2.0, y: ARENA / 2.0 })).id();
    for k in 0..3 {
        let angle = k as f32 * 2.1;
        commands.spawn((
            Position { x: ARENA / 2.0 + 10.0 * angle.cos(), y: ARENA / 2.0 + 10.0 * angle.sin() },
            Velocity { x: 25.0 * angle.cos(), y: 25.0 * angle.sin() },
            Ship { gun: 3 * k },
            Invulnerable { steps: 60 },
            ChildOf(fleet),
        ));
    }
    for _ in 0..3 + level.0 {
        let (x, y) = ((rng.unit() + 1.0) * ARENA / 2.0, (rng.unit() + 1.0) * ARENA / 2.0);
        let (vx, vy) = (rng.unit() * 20.0, rng.unit() * 20.0);
        commands.spawn((Position { x, y }, Velocity { x: vx, y: vy }, Rock { size: 3 }));
    }
}

fn game_over(mut countdown: ResMut<Countdown>, mut commands: Commands) {
    countdown.0 = 25;
    commands.clear_world();
}

fn register(world: &mut World) {
    world
        .register_serde::<Position>("Position")
        .register_serde::<Velocity>("Velocity")
        .register_serde::<Rock>("Rock")
        .register_serde::<Ship>("Ship")
        .register_serde_without_default::<Bullet>("Bullet")
        .register_serde::<Invulnerable>("Invulnerable")
        .register_serde::<Fleet>("Fleet")
        .register_serde::<Banner>("Banner")
        .register_serde_resource::<Score>("Score")
        .register_serde_resource::<Rng>("Rng")
        .register_serde_resource::<Level>("Level")
        .register_serde_resource::<Countdown>("Countdown")
        .register_serde_resource::<Census>("Census")
        .register_serde_state::<Phase>("Phase");
}

/// The game's loop: the same for a new game and a resumed one.
fn build(mut game: GameLoop) -> GameLoop {
    register(game.world_mut());
    game.set_fixed_step(STEP).set_max_fixed_steps(4);
    game.init_resource::<Score>()
        .init_resource::<Rng>()
        .init_resource::<Level>()
        .init_resource::<Countdown>()
        .init_resource::<Census>();
    game.add_state(Phase::Playing);
    let playing = in_state(Phase::Playing);
    game.add_system(Stage::Startup, |mut commands: Commands| {
        commands.spawn(Banner);
    });
    game.on_enter(Phase::Playing, build_level);
    game.on_enter(Phase::Over, game_over);
    game.observe(on_hit);
    game.configure_set(Stage::FixedUpdate, "physics").run_if(&playing);
    game.add_systems(Stage::FixedUpdate, (steer, fire, integrate, wrap, age, crash, collide).chain().in_set("physics"));
    game.add_systems(Stage::FixedUpdate, spawn_rocks.after("physics").run_if(&playing));
    game.add_systems(Stage::Update, (referee.run_if(&playing), census));
    game.add_systems(Stage::LateUpdate, over_timer.run_if(playing.not()));
    game
}

/// Frame durations: steady, with a hitch now and then.
fn frame(f: usize) -> Duration {
    Duration::from_millis([16, 17, 15, 33, 16, 70, 16][f % 7])
}

/// Every entity with its components, and every resource the game has, as
/// text that tells apart every bit pattern of the floats.
fn snapshot(world: &World) -> BTreeMap<String, String> {
    fn bits(x: f32) -> String {
        format!("{:08x}", x.to_bits())
    }
    let mut out = BTreeMap::new();
    for entity in world.query::<Entity>() {
        let e = world.entity(entity).unwrap();
        let mut parts = Vec::new();
        if let Some(p) = e.get::<Position>() {
            parts.push(format!("pos {} {}", bits(p.x), bits(p.y)));
        }
        if let Some(v) = e.get::<Velocity>() {
            parts.push(format!("vel {} {}", bits(v.x), bits(v.y)));
        }
        parts.push(format!("{:?}", e.get::<Rock>()));
        parts.push(format!("{:?}", e.get::<Ship>()));
        parts.push(format!("{:?}", e.get::<Bullet>()));
        parts.push(format!("{:?}", e.get::<Invulnerable>()));
        parts.push(format!("{:?} {:?}", e.get::<Fleet>(), e.get::<Banner>()));
        parts.push(format!("{:?} {:?}", e.get::<ChildOf>(), e.get::<Children>()));
        out.insert(format!("entity {entity}"), parts.join("; "));
    }
    out.insert("allocator".into(), format!("{:?}", world.allocator_state()));
    out.insert("score".into(), format!("{:?}", world.resource::<Score>()));
    out.insert("rng".into(), format!("{:?}", world.resource::<Rng>()));
    out.insert("level".into(), format!("{:?}", world.resource::<Level>()));
    out.insert("countdown".into(), format!("{:?}", world.resource::<Countdown>()));
    out.insert("census".into(), format!("{:?}", world.resource::<Census>()));
    out.insert("state".into(), format!("{:?}", world.resource::<State<Phase>>()));
    out.insert("next".into(), format!("{:?}", world.resource::<NextState<Phase>>()));
    out.insert("time".into(), format!("{:?}", world.resource::<Time>()));
    out.insert("fixed".into(), format!("{:?}", world.resource::<FixedTime>()));
    out.insert("started".into(), format!("{:?}", world.get_resource::<LoopStarted>()));
    out
}

#[derive(Clone, Copy, Debug)]
enum Format {
    Json,
    Ron,
    Binary,
}

fn save_and_load(world: &World, format: Format) -> World {
    let registry: SerdeRegistry = world.serde_registry();
    let (report, loaded) = match format {
        Format::Json => {
            let save = world.save_json().unwrap();
            (save.report(), World::load_json(&registry, &save.data).unwrap())
        }
        Format::Ron => {
            let save = world.save_ron().unwrap();
            (save.report(), World::load_ron(&registry, &save.data).unwrap())
        }
        Format::Binary => {
            let save = world.save_binary().unwrap();
            (save.report(), World::load_binary(&registry, &save.data).unwrap())
        }
    };
    assert!(report.is_empty(), "the save left out: {report:#?}");
    loaded
}

/// What happened over the frames after the save, to show the lockstep
/// covered the game's moving parts.
#[derive(Debug, Default)]
struct Seen {
    transitions: u32,
    kills: u32,
}

/// Plays `n` frames, saves in `format`, resumes, and runs both loops to
/// frame `2n`, comparing them after every frame.
fn lockstep(n: usize, format: Format, original: GameLoop, resumed: fn(World) -> GameLoop) -> Seen {
    let mut original = build(original);
    for f in 0..n {
        original.advance(frame(f));
    }
    let loaded = save_and_load(original.world(), format);
    let mut resumed = build(resumed(loaded));
    assert_eq!(snapshot(original.world()), snapshot(resumed.world()), "{format:?}: just loaded");
    let mut seen = Seen::default();
    let mut state = *original.state::<Phase>().unwrap();
    let kills = original.world().resource::<Score>().by_ship.values().sum::<u32>();
    for f in n..2 * n {
        original.advance(frame(f));
        resumed.advance(frame(f));
        assert_eq!(snapshot(original.world()), snapshot(resumed.world()), "{format:?}: frame {f}");
        let now = *original.state::<Phase>().unwrap();
        seen.transitions += u32::from(now != state);
        state = now;
    }
    seen.kills = original.world().resource::<Score>().by_ship.values().sum::<u32>() - kills;
    seen
}

fn fresh_parallel() -> GameLoop {
    let mut game = GameLoop::new();
    game.set_parallel_threshold(Duration::ZERO);
    game
}

fn resume_single_threaded(world: World) -> GameLoop {
    let mut game = GameLoop::resume(world);
    game.set_single_threaded(true);
    game
}

fn resume_parallel(world: World) -> GameLoop {
    let mut game = GameLoop::resume(world);
    game.set_parallel_threshold(Duration::ZERO);
    game
}

const N: usize = 150;

#[test]
fn a_json_save_resumes_in_lockstep() {
    let seen = lockstep(N, Format::Json, GameLoop::new(), GameLoop::resume);
    assert!(seen.transitions >= 2 && seen.kills > 0, "the frames after the save did too little: {seen:?}");
}

#[test]
fn a_ron_save_resumes_in_lockstep() {
    let seen = lockstep(N, Format::Ron, GameLoop::single_threaded(), resume_parallel);
    assert!(seen.transitions >= 2 && seen.kills > 0, "{seen:?}");
}

#[test]
fn a_binary_save_resumes_in_lockstep() {
    let seen = lockstep(N, Format::Binary, fresh_parallel(), resume_single_threaded);
    assert!(seen.transitions >= 2 && seen.kills > 0, "{seen:?}");
}

#[test]
fn saves_at_every_moment_of_a_cycle_resume_in_lockstep() {
    // Counting frames from 1: the game plays until frame 67, is over from
    // 68 (the world cleared), asks to play again at the end of frame 92
    // (the request waits in `NextState` until frame 93's transition
    // point), builds level 2 in frame 93 and is over again from 126. A
    // save after each of those frames, and around them.
    let moments = [1, 20, 67, 68, 69, 91, 92, 93, 94, 125, 126];
    for n in moments {
        let mut probe = build(GameLoop::new());
        for f in 0..n {
            probe.advance(frame(f));
        }
        let pending = probe.world().resource::<NextState<Phase>>().pending().copied();
        assert_eq!(pending, (n == 92).then_some(Phase::Playing), "after {n} frames");
        let phase = *probe.state::<Phase>().unwrap();
        assert_eq!(phase == Phase::Over, (68..=92).contains(&n) || n == 126, "after {n} frames");
        lockstep(n, Format::Binary, GameLoop::new(), GameLoop::resume);
    }
}

#[test]
fn a_pending_request_in_a_save_applies_at_the_next_transition_point() {
    let mut original = build(GameLoop::new());
    for f in 0..5 {
        original.advance(frame(f));
    }
    original.world_mut().resource_mut::<NextState<Phase>>().set(Phase::Over);
    let loaded = save_and_load(original.world(), Format::Json);
    assert_eq!(loaded.resource::<NextState<Phase>>().pending(), Some(&Phase::Over));
    let mut resumed = build(GameLoop::resume(loaded));
    assert_eq!(resumed.state::<Phase>(), Some(&Phase::Playing));
    resumed.startup();
    // Not at startup: at the first frame's transition point.
    assert_eq!(resumed.state::<Phase>(), Some(&Phase::Playing));
    assert_eq!(resumed.world().resource::<NextState<Phase>>().pending(), Some(&Phase::Over));
    original.advance(frame(5));
    resumed.advance(frame(5));
    assert_eq!(resumed.state::<Phase>(), Some(&Phase::Over));
    assert_eq!(snapshot(original.world()), snapshot(resumed.world()));
}

#[test]
fn a_resumed_loop_does_not_enter_the_loaded_state_again_nor_run_startup() {
    let mut original = build(GameLoop::new());
    for f in 0..30 {
        original.advance(frame(f));
    }
    assert_eq!(original.state::<Phase>(), Some(&Phase::Playing));
    let entities = original.world().len();
    let level = original.world().resource::<Level>().0;
    let loaded = save_and_load(original.world(), Format::Json);
    let mut resumed = build(GameLoop::resume(loaded));
    assert!(resumed.is_resumed());
    resumed.startup();
    assert!(resumed.has_started());
    assert_eq!(resumed.world().len(), entities);
    assert_eq!(resumed.world().resource::<Level>().0, level);
    assert_eq!(resumed.world_mut().query::<&Banner>().count(), 1);

    // What the issue saw: the loaded world in a fresh start rebuilds the
    // level on top of itself (with a warning).
    let loaded = save_and_load(original.world(), Format::Json);
    let mut restarted = build(GameLoop::with_world(loaded));
    restarted.startup();
    assert_eq!(restarted.world().resource::<Level>().0, level + 1);
    assert_eq!(restarted.world_mut().query::<&Banner>().count(), 2);
}

#[test]
fn a_state_missing_from_the_save_starts_fresh_in_a_resumed_loop() {
    #[derive(States, Clone, Copy, PartialEq, Eq, Hash, Debug)]
    enum Music {
        Quiet,
        Loud,
    }
    #[derive(Default)]
    struct Entered(Vec<Music>);
    let mut original = build(GameLoop::new());
    original.advance(frame(0));
    let loaded = save_and_load(original.world(), Format::Json);
    let mut resumed = build(GameLoop::resume(loaded));
    resumed.init_resource::<Entered>();
    resumed.add_state(Music::Loud);
    resumed.on_enter(Music::Loud, |mut e: ResMut<Entered>| e.0.push(Music::Loud));
    resumed.on_enter(Music::Quiet, |mut e: ResMut<Entered>| e.0.push(Music::Quiet));
    resumed.advance(frame(1));
    assert_eq!(resumed.world().resource::<Entered>().0, [Music::Loud]);
}

/// Runs `original` and `resumed` side by side for `frames` frames from
/// frame 0, comparing them after every frame.
fn side_by_side(original: &mut GameLoop, resumed: &mut GameLoop, frames: usize, label: &str) {
    for f in 0..frames {
        original.advance(frame(f));
        resumed.advance(frame(f));
        assert_eq!(snapshot(original.world()), snapshot(resumed.world()), "{label}: frame {f}");
    }
}

#[test]
fn a_save_made_before_the_first_frame_resumes_like_that_frame() {
    for format in [Format::Json, Format::Ron, Format::Binary] {
        // An autosave at level start: the loop is built, nothing ran yet.
        let mut original = build(GameLoop::new());
        assert_eq!(original.world().get_resource::<LoopStarted>(), Some(&LoopStarted::default()));
        let loaded = save_and_load(original.world(), format);
        assert!(!loaded.resource::<LoopStarted>().get(), "{format:?}: the save says the loop had not started");
        let mut resumed = build(GameLoop::resume(loaded));
        assert!(resumed.is_resumed());
        original.advance(frame(0));
        resumed.advance(frame(0));
        // Startup and the state's on_enter ran: the banner and the level.
        assert_eq!(resumed.world_mut().query::<&Banner>().count(), 1, "{format:?}");
        assert_eq!(resumed.world().resource::<Level>().0, 1, "{format:?}");
        assert_eq!(resumed.world().len(), original.world().len(), "{format:?}");
        assert!(resumed.world().len() > 1, "{format:?}: the level was built");
        assert_eq!(snapshot(original.world()), snapshot(resumed.world()), "{format:?}: frame 0");
        side_by_side(&mut original, &mut resumed, 60, &format!("{format:?}"));
    }
}

#[test]
fn a_save_made_after_startup_but_before_the_first_frame_does_not_start_again() {
    let mut original = build(GameLoop::new());
    original.startup();
    let loaded = save_and_load(original.world(), Format::Binary);
    assert!(loaded.resource::<LoopStarted>().get());
    let mut resumed = build(GameLoop::resume(loaded));
    resumed.startup();
    assert_eq!(resumed.world_mut().query::<&Banner>().count(), 1);
    assert_eq!(resumed.world().resource::<Level>().0, 1);
    assert_eq!(snapshot(original.world()), snapshot(resumed.world()));
    side_by_side(&mut original, &mut resumed, 40, "after startup");
}

#[test]
fn a_save_without_loop_started_counts_as_started() {
    // Saves made before the loop kept `LoopStarted` have none.
    let mut original = build(GameLoop::new());
    for f in 0..10 {
        original.advance(frame(f));
    }
    original.world_mut().remove_resource::<LoopStarted>();
    let loaded = save_and_load(original.world(), Format::Json);
    let mut resumed = build(GameLoop::resume(loaded));
    resumed.startup();
    assert_eq!(resumed.world_mut().query::<&Banner>().count(), 1);
    assert_eq!(resumed.world().resource::<Level>().0, original.world().resource::<Level>().0);
    assert!(resumed.world().resource::<LoopStarted>().get());
}

#[test]
fn resuming_a_save_without_its_state_warns_and_names_the_registration() {
    logs::capture();
    let mut original = GameLoop::new();
    original.add_state(Phase::Playing);
    original.on_enter(Phase::Playing, |mut commands: Commands| {
        commands.spawn(Rock { size: 3 });
    });
    original.world_mut().register_serde::<Rock>("Rock");
    original.advance(frame(0));
    let save = original.world().save_json().unwrap();
    assert_eq!(save.report().len(), 1, "the state is not registered: {:#?}", save.report());
    let loaded = World::load_json(&original.world().serde_registry(), &save.data).unwrap();
    assert!(loaded.get_resource::<State<Phase>>().is_none());

    let mut resumed = GameLoop::resume(loaded);
    assert!(logs::take().is_empty());
    resumed.add_state(Phase::Playing);
    resumed.on_enter(Phase::Playing, |mut commands: Commands| {
        commands.spawn(Rock { size: 3 });
    });
    let warnings = logs::take();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("GameLoop::resume over a world that holds no `State<"), "{}", warnings[0]);
    assert!(warnings[0].contains("game_resume::Phase>`"), "{}", warnings[0]);
    assert!(warnings[0].contains("`world.register_serde_state::<Phase>(name)`"), "{}", warnings[0]);
    // What it warns about: the level is built again over the loaded one.
    resumed.advance(frame(1));
    assert_eq!(resumed.world_mut().query::<&Rock>().count(), 2);

    // A registered state resumes without a word, and so does a save made
    // before the loop started (its states are entered as in a fresh game).
    let mut registered = GameLoop::new();
    registered.world_mut().register_serde_state::<Phase>("Phase");
    registered.add_state(Phase::Playing);
    registered.advance(frame(0));
    let loaded = save_and_load(registered.world(), Format::Json);
    GameLoop::resume(loaded).add_state(Phase::Playing);
    let unstarted = GameLoop::new();
    let loaded = save_and_load(unstarted.world(), Format::Json);
    GameLoop::resume(loaded).add_state(Phase::Playing);
    assert!(logs::take().is_empty());
}

#[test]
fn the_save_report_says_how_to_save_a_state() {
    let mut game = GameLoop::new();
    game.add_state(Phase::Playing);
    game.world_mut().spawn(Rock { size: 1 });
    game.insert_resource(Level(2));
    let save = game.world().save_json().unwrap();
    assert_eq!(
        save.skipped_resources.len(),
        3,
        "State<Phase>, NextState<Phase> and Level: {:?}",
        save.skipped_resources
    );
    let report = save.report();
    assert_eq!(report.len(), 3, "{report:#?}");
    assert!(
        report[0].starts_with("component `gameplay::game_resume::Rock` was not saved (1 entity had it)"),
        "{}",
        report[0]
    );
    assert!(report[0].contains(r#"`world.register_serde::<Rock>("Rock")`"#), "{}", report[0]);
    let state = report.iter().find(|line| line.starts_with("game state")).expect("a line for the state");
    assert!(state.contains(r#"`world.register_serde_state::<Phase>("Phase")`"#), "{state}");
    assert!(state.contains("GameLoop::resume"), "{state}");
    let level = report.iter().find(|line| line.contains("Level")).unwrap();
    assert!(level.contains(r#"`world.register_serde_resource::<Level>("Level")`"#), "{level}");

    game.world_mut().register_serde_state::<Phase>("Phase").register_serde::<Rock>("Rock");
    let report = game.world().save_json().unwrap().report();
    assert_eq!(report.len(), 1, "{report:#?}");
    assert!(report[0].contains("Level"));
}

#[test]
fn states_are_saved_by_name_as_their_values() {
    let mut game = GameLoop::new();
    game.add_state(Phase::Over);
    game.world_mut().register_serde_state::<Phase>("Phase");
    game.world_mut().resource_mut::<NextState<Phase>>().set(Phase::Playing);
    let save = game.world().save_json().unwrap().data;
    assert!(save.contains(r#""State<Phase>":"Over""#), "{save}");
    assert!(save.contains(r#""NextState<Phase>":"Playing""#), "{save}");
}
