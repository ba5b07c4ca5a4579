//! The module's interface to the page: plain `extern "C"` functions of
//! numbers, no imports. The game lives in a thread-local (the page has one
//! thread); the picture stays in a buffer the game owns, and
//! [`fireworks_draw`] returns where it starts in the module's memory, for
//! the page to copy it into an `ImageData`.
//!
//! The pass over every layer (`layers_*`) is exported only with the
//! `checks` feature: its save formats and prefabs would quadruple the
//! page's module.
//!
//! `#[unsafe(no_mangle)]` keeps each function's name as the export's
//! name; it is the only reason this module allows `unsafe_code`, and
//! there is no `unsafe` block here.

use std::cell::RefCell;
use std::time::Duration;

use crate::figures::Workloads;
use crate::play::{Fireworks, Key};
use crate::script::{self, Input};

thread_local! {
    static GAME: RefCell<Option<Fireworks>> = const { RefCell::new(None) };
    static WORKLOADS: RefCell<Option<Workloads>> = const { RefCell::new(None) };
}

fn with_game<R>(f: impl FnOnce(&mut Fireworks) -> R) -> R {
    GAME.with_borrow_mut(|game| f(game.get_or_insert_with(|| Fireworks::new(true))))
}

/// The most real time one frame may claim, in milliseconds: a tab that
/// slept hands over a long gap, which the game loop would cap anyway.
const MAX_FRAME_MS: f64 = 250.0;

/// Starts a new game, in its menu.
#[unsafe(no_mangle)]
pub extern "C" fn fireworks_reset() {
    GAME.with_borrow_mut(|game| *game = Some(Fireworks::new(true)));
}

/// A click at pixel `(px, py)` of the picture.
#[unsafe(no_mangle)]
pub extern "C" fn fireworks_click(px: f32, py: f32) {
    with_game(|game| game.click(px, py));
}

/// A key (1 pause, 2 slow motion, 3 next level); returns 1 if it is one.
#[unsafe(no_mangle)]
pub extern "C" fn fireworks_key(code: u32) -> u32 {
    match Key::from_code(code) {
        Some(key) => {
            with_game(|game| game.key(key));
            1
        }
        None => 0,
    }
}

/// One frame that took `dt_ms` milliseconds of real time (negative, NaN
/// and overlong values are clamped).
#[unsafe(no_mangle)]
pub extern "C" fn fireworks_frame(dt_ms: f64) {
    let dt = if dt_ms.is_finite() { dt_ms.clamp(0.0, MAX_FRAME_MS) } else { 0.0 };
    with_game(|game| game.advance(Duration::from_secs_f64(dt / 1000.0)));
}

/// One frame of the showcase's made-up 1/30 s, as the scripted run takes.
#[unsafe(no_mangle)]
pub extern "C" fn fireworks_frame_fixed() {
    with_game(Fireworks::advance_fixed);
}

/// Draws the frame; returns the address of its RGBA pixels.
#[unsafe(no_mangle)]
pub extern "C" fn fireworks_draw() -> usize {
    with_game(|game| game.draw().as_ptr() as usize)
}

/// Pixels per row of the picture.
#[unsafe(no_mangle)]
pub extern "C" fn fireworks_width() -> u32 {
    crate::WIDTH as u32
}

/// Rows of the picture.
#[unsafe(no_mangle)]
pub extern "C" fn fireworks_height() -> u32 {
    crate::HEIGHT as u32
}

/// The checksum of the world (a BigInt in JavaScript).
#[unsafe(no_mangle)]
pub extern "C" fn fireworks_checksum() -> u64 {
    with_game(|game| game.checksum())
}

/// Entities alive.
#[unsafe(no_mangle)]
pub extern "C" fn fireworks_entities() -> u32 {
    with_game(|game| game.entities() as u32)
}

/// Sparks alive.
#[unsafe(no_mangle)]
pub extern "C" fn fireworks_sparks() -> u32 {
    with_game(|game| game.sparks().0 as u32)
}

/// Sparks frozen to a wall.
#[unsafe(no_mangle)]
pub extern "C" fn fireworks_frozen() -> u32 {
    with_game(|game| game.sparks().1 as u32)
}

/// The level being played or last played.
#[unsafe(no_mangle)]
pub extern "C" fn fireworks_level() -> u32 {
    with_game(|game| game.level())
}

/// The screen: 0 the menu, 1 playing, 2 game over.
#[unsafe(no_mangle)]
pub extern "C" fn fireworks_screen() -> u32 {
    with_game(|game| game.screen())
}

/// 1 while paused.
#[unsafe(no_mangle)]
pub extern "C" fn fireworks_paused() -> u32 {
    with_game(|game| u32::from(game.paused()))
}

/// Clicks waiting for the next frame that runs the game's systems.
#[unsafe(no_mangle)]
pub extern "C" fn fireworks_pending_clicks() -> u32 {
    with_game(|game| game.pending_clicks() as u32)
}

/// Game seconds per real second.
#[unsafe(no_mangle)]
pub extern "C" fn fireworks_scale() -> f64 {
    with_game(|game| game.scale())
}

/// Inputs in the checksum test's script.
#[unsafe(no_mangle)]
pub extern "C" fn fireworks_script_len() -> u32 {
    script::SCRIPT.len() as u32
}

/// Frames the checksum test runs by default.
#[unsafe(no_mangle)]
pub extern "C" fn fireworks_script_frames() -> u32 {
    script::FRAMES
}

/// Field `field` of input `i` of the script: 0 the frame it arrives
/// before, 1 the key's code (0 for a click), 2 and 3 the click's pixel.
/// NaN past the end.
#[unsafe(no_mangle)]
pub extern "C" fn fireworks_script_field(i: u32, field: u32) -> f64 {
    let Some(event) = script::SCRIPT.get(i as usize) else { return f64::NAN };
    match (field, event.input) {
        (0, _) => f64::from(event.frame),
        (1, Input::Key(key)) => f64::from(key.code()),
        (1, Input::Click(..)) => 0.0,
        (2, Input::Click(px, _)) => f64::from(px),
        (3, Input::Click(_, py)) => f64::from(py),
        _ => f64::NAN,
    }
}

/// The digest of the pass over every layer ([`crate::layers`]).
#[cfg(feature = "checks")]
#[unsafe(no_mangle)]
pub extern "C" fn layers_digest() -> u64 {
    crate::layers::digest()
}

/// Check `i` of the pass over every layer, by itself (0 past the end).
#[cfg(feature = "checks")]
#[unsafe(no_mangle)]
pub extern "C" fn layers_check(i: u32) -> u64 {
    crate::layers::CHECKS.get(i as usize).map_or(0, |(_, check)| check())
}

/// Checks in the pass over every layer.
#[cfg(feature = "checks")]
#[unsafe(no_mangle)]
pub extern "C" fn layers_len() -> u32 {
    crate::layers::CHECKS.len() as u32
}

/// Builds the figures' world.
#[unsafe(no_mangle)]
pub extern "C" fn figures_setup() {
    WORKLOADS.with_borrow_mut(|w| *w = Some(Workloads::new()));
}

/// One pass of the figures' query.
#[unsafe(no_mangle)]
pub extern "C" fn figures_query() -> f32 {
    WORKLOADS.with_borrow_mut(|w| w.get_or_insert_with(Workloads::new).query())
}

/// One run of the figures' schedule.
#[unsafe(no_mangle)]
pub extern "C" fn figures_schedule() -> f32 {
    WORKLOADS.with_borrow_mut(|w| w.get_or_insert_with(Workloads::new).schedule())
}
