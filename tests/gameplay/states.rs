//! States on a `GameLoop`: the initial state entered at startup, requests
//! applied right after `update`, exit then enter once each, requests for
//! the current state ignored, `in_state` gating, and a level rebuilt
//! across a transition.

#![cfg(feature = "game-loop")]

use std::time::Duration;

use archetable::prelude::*;

#[derive(States, Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Screen {
    Menu,
    Playing,
    GameOver,
}

#[derive(States, Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Music {
    Quiet,
    Loud,
}

#[derive(Default)]
struct Log(Vec<String>);

const FRAME: Duration = Duration::from_millis(16);

fn log(name: &'static str) -> impl FnMut(ResMut<Log>) + Send + 'static {
    move |mut log: ResMut<Log>| log.0.push(name.to_string())
}

/// Logs `name` with the current screen, as the system sees it.
fn log_screen(name: impl Into<String>) -> impl FnMut(ResMut<Log>, Res<State<Screen>>) + Send + 'static {
    let name = name.into();
    move |mut log: ResMut<Log>, screen: Res<State<Screen>>| log.0.push(format!("{name} in {:?}", screen.get()))
}

fn take_log(game: &mut GameLoop) -> Vec<String> {
    std::mem::take(&mut game.world_mut().resource_mut::<Log>().0)
}

fn request(game: &mut GameLoop, screen: Screen) {
    game.world_mut().resource_mut::<NextState<Screen>>().set(screen);
}

/// A loop with a `Screen` state whose every enter and exit is logged.
fn screens() -> GameLoop {
    let mut game = GameLoop::single_threaded();
    game.world_mut().init_resource::<Log>();
    game.add_state(Screen::Menu);
    for screen in [Screen::Menu, Screen::Playing, Screen::GameOver] {
        let name = |side: &str| format!("{side} {screen:?}");
        game.on_enter(screen, log_screen(name("enter")));
        game.on_exit(screen, log_screen(name("exit")));
    }
    game
}

#[test]
fn startup_enters_the_initial_state_once_after_the_startup_stage() {
    let mut game = screens();
    game.add_system(Stage::Startup, log("startup"));
    game.add_system(Stage::Update, log("update"));
    game.advance(FRAME);
    game.advance(FRAME);
    assert_eq!(take_log(&mut game), ["startup", "enter Menu in Menu", "update", "update"]);
    assert_eq!(game.state::<Screen>(), Some(&Screen::Menu));
}

#[test]
fn a_transition_runs_exit_then_enter_once_right_after_update() {
    let mut game = screens();
    game.add_system(Stage::FixedUpdate, log_screen("fixed_update"));
    game.add_system(Stage::Update, log_screen("update"));
    game.add_stage_after(Stage::Update, "ui");
    game.add_system("ui", log_screen("ui"));
    game.add_system(Stage::LateUpdate, log_screen("late_update"));
    game.set_fixed_step(FRAME);
    game.startup();
    take_log(&mut game);

    request(&mut game, Screen::Playing);
    game.advance(FRAME);
    assert_eq!(
        take_log(&mut game),
        [
            "fixed_update in Menu",
            "update in Menu",
            "exit Menu in Menu",
            "enter Playing in Playing",
            "ui in Playing",
            "late_update in Playing",
        ]
    );
    game.advance(FRAME);
    assert_eq!(
        take_log(&mut game),
        ["fixed_update in Playing", "update in Playing", "ui in Playing", "late_update in Playing"]
    );
    assert_eq!(game.world().resource::<NextState<Screen>>().pending(), None);
}

#[test]
fn a_request_for_the_current_state_does_nothing() {
    let mut game = screens();
    game.startup();
    take_log(&mut game);
    request(&mut game, Screen::Menu);
    game.advance(FRAME);
    assert!(take_log(&mut game).is_empty());
    assert_eq!(game.world().resource::<NextState<Screen>>().pending(), None, "the request is used up");
    assert_eq!(game.state::<Screen>(), Some(&Screen::Menu));
}

#[test]
fn the_last_request_of_a_frame_wins_and_a_late_one_waits_a_frame() {
    let mut game = screens();
    game.add_system(Stage::Update, |mut next: ResMut<NextState<Screen>>, time: Res<Time>| {
        if time.frame() == 1 {
            next.set(Screen::GameOver);
            next.set(Screen::Playing);
        }
    });
    game.add_system(Stage::LateUpdate, |mut next: ResMut<NextState<Screen>>, time: Res<Time>| {
        if time.frame() == 2 {
            next.set(Screen::GameOver);
        }
    });
    game.advance(FRAME);
    assert_eq!(take_log(&mut game), ["enter Menu in Menu", "exit Menu in Menu", "enter Playing in Playing"]);
    game.advance(FRAME);
    assert!(take_log(&mut game).is_empty(), "asked in late_update: applies in the next frame");
    assert_eq!(game.state::<Screen>(), Some(&Screen::Playing));
    game.advance(FRAME);
    assert_eq!(take_log(&mut game), ["exit Playing in Playing", "enter GameOver in GameOver"]);
}

#[test]
fn in_state_gates_systems() {
    #[derive(Default)]
    struct Counts {
        menu: u32,
        playing: u32,
    }

    let mut game = screens();
    game.world_mut().init_resource::<Counts>();
    game.add_system(Stage::Update, |mut c: ResMut<Counts>| c.menu += 1).run_if(in_state(Screen::Menu));
    game.add_system(Stage::LateUpdate, |mut c: ResMut<Counts>| c.playing += 1).run_if(in_state(Screen::Playing));
    game.add_system(Stage::Update, |mut c: ResMut<Counts>| c.playing += 100).run_if(in_state(Screen::Playing));
    for _ in 0..3 {
        game.advance(FRAME);
    }
    request(&mut game, Screen::Playing);
    for _ in 0..2 {
        game.advance(FRAME);
    }
    let counts = game.world().resource::<Counts>();
    // The switch frame: `update` ran in Menu, `late_update` in Playing.
    assert_eq!((counts.menu, counts.playing), (4, 2 + 100));
}

#[test]
fn in_state_is_false_without_the_state() {
    let world = World::new();
    let condition = in_state(Screen::Menu);
    assert!(!condition.check(&world));
}

#[test]
fn state_types_apply_in_the_order_they_were_added() {
    let mut game = screens();
    game.add_state(Music::Quiet);
    game.on_enter(Music::Loud, log("enter Loud"));
    game.on_exit(Music::Quiet, log("exit Quiet"));
    game.on_enter(Music::Quiet, log("enter Quiet"));
    game.advance(FRAME);
    assert_eq!(take_log(&mut game), ["enter Menu in Menu", "enter Quiet"]);
    game.world_mut().resource_mut::<NextState<Music>>().set(Music::Loud);
    request(&mut game, Screen::Playing);
    game.advance(FRAME);
    assert_eq!(take_log(&mut game), ["exit Menu in Menu", "enter Playing in Playing", "exit Quiet", "enter Loud"]);
    assert_eq!(game.state::<Music>(), Some(&Music::Loud));
}

#[test]
fn a_state_added_after_startup_is_entered_at_the_next_transition_point() {
    let mut game = screens();
    game.add_system(Stage::Update, log("update"));
    game.advance(FRAME);
    take_log(&mut game);
    game.add_state(Music::Loud);
    game.on_enter(Music::Loud, log("enter Loud"));
    game.advance(FRAME);
    assert_eq!(take_log(&mut game), ["update", "enter Loud"]);
}

#[test]
#[should_panic(expected = "no `State<")]
fn on_enter_without_add_state_is_named() {
    let mut game = GameLoop::new();
    game.on_enter(Screen::Playing, || {});
    game.startup();
}

#[derive(Component)]
struct Button;

#[derive(Component)]
struct Enemy;

#[derive(Default)]
struct Cleared(u32);

/// A menu, a level built on entering `Playing`, and a reset when leaving
/// it: the exit clears the world, the enter of the next state builds anew.
#[test]
fn a_level_is_cleared_on_exit_and_rebuilt_on_enter() {
    let mut game = GameLoop::new();
    game.world_mut().init_resource::<Cleared>();
    game.add_state(Screen::Menu);
    game.on_enter(Screen::Menu, |mut commands: Commands| {
        commands.spawn(Button);
    });
    game.on_exit(Screen::Menu, |mut commands: Commands| commands.clear_world()).on_clear(|world: &mut World| {
        world.resource_mut::<Cleared>().0 += 1;
    });
    game.on_enter(Screen::Playing, |mut commands: Commands| {
        for _ in 0..3 {
            commands.spawn(Enemy);
        }
    });
    game.on_exit(Screen::Playing, |mut commands: Commands| commands.clear_world());
    game.on_enter(Screen::GameOver, |mut commands: Commands| {
        commands.spawn(Button);
    });

    game.advance(FRAME);
    let menu: Vec<Entity> = game.world_mut().query::<Entity>().collect();
    assert_eq!(menu.len(), 1);

    request(&mut game, Screen::Playing);
    game.advance(FRAME);
    let count =
        |game: &mut GameLoop| (game.world_mut().query::<&Button>().count(), game.world_mut().query::<&Enemy>().count());
    assert_eq!(count(&mut game), (0, 3));
    assert!(!game.world().contains(menu[0]));
    assert_eq!(game.world().resource::<Cleared>().0, 1);
    let level: Vec<Entity> = game.world_mut().query::<Entity>().collect();

    request(&mut game, Screen::GameOver);
    game.advance(FRAME);
    assert_eq!(count(&mut game), (1, 0));
    assert!(level.iter().chain(&menu).all(|&e| !game.world().contains(e)));
    assert_eq!(game.world().resource::<Cleared>().0, 2, "every schedule's on_clear hooks run on each clear");
    assert_eq!(game.state::<Screen>(), Some(&Screen::GameOver));
}
