//! A world that already holds a state, wrapped in a loop that starts the
//! game over (`GameLoop::with_world`), is how a loaded save gets rebuilt on
//! top of itself: `add_state` warns and points to `GameLoop::resume`,
//! which keeps the state without a warning. (The warnings are captured
//! per thread: see `logs`.)

#![cfg(feature = "game-loop")]

use archetable::prelude::*;

use crate::logs;

#[derive(States, Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Phase {
    Playing,
    Over,
}

fn a_world_in(phase: Phase) -> World {
    let mut game = GameLoop::new();
    game.add_state(phase);
    game.advance(std::time::Duration::from_millis(16));
    game.into_world()
}

#[test]
fn add_state_over_a_held_state_warns_unless_resuming() {
    logs::capture();

    let mut resumed = GameLoop::resume(a_world_in(Phase::Over));
    resumed.add_state(Phase::Playing);
    assert_eq!(resumed.state::<Phase>(), Some(&Phase::Over));
    assert_eq!(logs::warnings().len(), 0);

    let mut restarted = GameLoop::with_world(a_world_in(Phase::Over));
    restarted.add_state(Phase::Playing);
    assert_eq!(restarted.state::<Phase>(), Some(&Phase::Playing));
    let warnings = logs::take();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("replaces the world's `State<gameplay::resume_warning::Phase>` (Over)"),
        "{}",
        warnings[0]
    );
    assert!(warnings[0].contains("build the loop with GameLoop::resume"), "{}", warnings[0]);

    // After startup, adding a state again is a plain reset: no warning.
    restarted.startup();
    restarted.add_state(Phase::Over);
    assert_eq!(logs::warnings().len(), 0);
}
