//! A `GameLoop`: balls bouncing under a fixed-step physics stage, drawn
//! between physics states, inside a menu -> playing -> game over state
//! machine.
//!
//! The frame times are made up (no sleeping), so the run is instant and
//! the same every time: about 60 frames a second, with one long hitch
//! that the fixed stage's cap on steps per frame absorbs.
//!
//! ```sh
//! cargo run --example game_loop
//! ```

use std::time::Duration;

use archetable::prelude::*;

#[derive(States, Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Screen {
    Menu,
    Playing,
    GameOver,
}

/// Height above the floor, in metres; `previous` is the height before the
/// last fixed step, for drawing in between.
#[derive(Component)]
struct Height {
    now: f32,
    previous: f32,
}

#[derive(Component)]
struct Fall(f32);

#[derive(Component)]
struct Title(&'static str);

/// Balls that came to rest.
#[derive(Default)]
struct Score(u32);

/// What the example prints, kept to check at the end.
#[derive(Default)]
struct Log(Vec<String>);

const GRAVITY: f32 = -9.81;

// --- Menu -------------------------------------------------------------------

fn show_menu(mut commands: Commands) {
    commands.spawn(Title("press start"));
}

/// Stands in for the player: "presses start" on the menu's tenth frame.
fn menu_input(time: Res<Time>, mut next: ResMut<NextState<Screen>>) {
    if time.frame() == 10 {
        next.set(Screen::Playing);
    }
}

/// Leaving the menu resets the world; the `on_enter` systems of the next
/// screen build it again.
fn leave_menu(mut commands: Commands) {
    commands.clear_world();
}

// --- Playing ----------------------------------------------------------------

fn spawn_balls(mut commands: Commands, mut log: ResMut<Log>) {
    for h in [2.0, 4.0, 6.0] {
        commands.spawn((Height { now: h, previous: h }, Fall(0.0)));
    }
    log.0.push("three balls dropped".into());
}

/// Fixed step: gravity, motion, and a lossy bounce. Reads the step from
/// `FixedTime`, never the frame's `Time::delta`.
fn physics(mut balls: Query<(&mut Height, &mut Fall)>, fixed: Res<FixedTime>) {
    let dt = fixed.step_secs();
    for (mut height, mut fall) in balls.iter_mut() {
        height.previous = height.now;
        fall.0 += GRAVITY * dt;
        height.now += fall.0 * dt;
        if height.now < 0.0 {
            height.now = -height.now;
            fall.0 = -fall.0 * 0.6;
        }
    }
}

/// Fixed step too: a ball that bounces back slower than 1 m/s is at rest.
fn settle(balls: Query<(Entity, &Height, &Fall)>, mut commands: Commands, mut score: ResMut<Score>) {
    for (entity, height, fall) in balls.iter() {
        if height.now < 0.05 && fall.0.abs() < 1.0 {
            commands.despawn(entity);
            score.0 += 1;
        }
    }
}

fn check_game_over(balls: Query<&Fall>, mut next: ResMut<NextState<Screen>>) {
    if balls.iter().next().is_none() {
        next.set(Screen::GameOver);
    }
}

// --- Game over --------------------------------------------------------------

fn show_game_over(mut commands: Commands, score: Res<Score>, time: Res<Time>, mut log: ResMut<Log>) {
    commands.spawn(Title("game over"));
    log.0.push(format!("game over after {:.2} s: {} balls at rest", time.elapsed().as_secs_f32(), score.0));
}

// --- Every frame ------------------------------------------------------------

/// Draws each ball where it is between its last two fixed states: at
/// `alpha` of the way from `previous` to `now`.
fn draw(balls: Query<&Height>, fixed: Res<FixedTime>, time: Res<Time>, mut log: ResMut<Log>) {
    if !time.frame().is_multiple_of(30) || balls.iter().next().is_none() {
        return;
    }
    let alpha = fixed.alpha() as f32;
    let drawn: Vec<String> =
        balls.iter().map(|h| format!("{:.2}", h.previous + (h.now - h.previous) * alpha)).collect();
    log.0.push(format!("frame {:>3}: heights {} (alpha {alpha:.2})", time.frame(), drawn.join(" ")));
}

fn main() {
    let mut game = GameLoop::new();
    game.world_mut().init_resource::<Score>();
    game.world_mut().init_resource::<Log>();
    game.set_fixed_step(Duration::from_millis(10)).set_max_fixed_steps(5);

    game.add_state(Screen::Menu);
    game.on_enter(Screen::Menu, show_menu);
    game.on_exit(Screen::Menu, leave_menu);
    game.on_enter(Screen::Playing, spawn_balls);
    game.on_enter(Screen::GameOver, show_game_over);

    game.add_system(Stage::Update, menu_input).run_if(in_state(Screen::Menu));
    let moved = game.add_system(Stage::FixedUpdate, physics).run_if(in_state(Screen::Playing)).id();
    game.add_system(Stage::FixedUpdate, settle).after(moved).run_if(in_state(Screen::Playing));
    game.add_system(Stage::Update, check_game_over).run_if(in_state(Screen::Playing));
    game.add_system(Stage::LateUpdate, draw);

    // Frame times of 15 to 18 ms, and one hitch of 400 ms on frame 100.
    let mut frames = 0;
    while game.state::<Screen>() != Some(&Screen::GameOver) && frames < 5_000 {
        frames += 1;
        let dt = if frames == 100 { 400 } else { 15 + frames % 4 };
        game.advance(Duration::from_millis(dt));
    }

    for line in &game.world().resource::<Log>().0 {
        println!("{line}");
    }
    let fixed = game.fixed_time();
    println!(
        "{frames} frames, {} fixed steps, {} dropped by the cap in the hitch",
        fixed.index(),
        fixed.dropped_total()
    );

    assert_eq!(game.state::<Screen>(), Some(&Screen::GameOver));
    assert_eq!(game.world().resource::<Score>().0, 3);
    assert_eq!(fixed.dropped_total(), 35, "400 ms is 40 steps of 10 ms; 5 run");
    let titles: Vec<&str> = game.world_mut().query::<&Title>().map(|t| t.0).collect();
    assert_eq!(titles, ["game over"], "the menu's title went with the clear");
}
