//! The scripted input of the checksum test: clicks and keys at fixed
//! frames of 1/30 s. The page (`?script=FRAMES`), the Node run and the
//! native run each replay it through their own path to the game (the
//! page and Node through the same exports the mouse and keyboard use) and
//! must end with the same checksum.

use crate::play::{Fireworks, Key};

/// One input, before a frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Input {
    /// A click at a pixel of the picture.
    Click(f32, f32),
    /// A key press.
    Key(Key),
}

/// An input and the frame (counted from 0) before which it arrives.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Event {
    /// Frames run before the input arrives.
    pub frame: u32,
    /// What arrives.
    pub input: Input,
}

const fn click(frame: u32, px: f32, py: f32) -> Event {
    Event { frame, input: Input::Click(px, py) }
}

const fn key(frame: u32, key: Key) -> Event {
    Event { frame, input: Input::Key(key) }
}

/// The script: the menu gives way to level 1 after half a second (frame
/// 15); clicks before then are dropped. A pause with clicks waiting in it,
/// slow motion, a level ended by key, clicks in the next level's menu and
/// during it, and clicks outside the arena.
pub const SCRIPT: &[Event] = &[
    click(5, 256.0, 200.0),
    click(20, 100.0, 150.0),
    click(20, 400.0, 300.0),
    click(32, 256.0, 60.0),
    key(40, Key::Pause),
    click(44, 300.0, 250.0),
    key(48, Key::Pause),
    key(60, Key::SlowMotion),
    click(62, 150.0, 220.0),
    click(70, 360.0, 180.0),
    key(90, Key::SlowMotion),
    click(95, -40.0, 100.0),
    click(96, 600.0, -30.0),
    key(130, Key::NextLevel),
    click(140, 200.0, 200.0),
    click(190, 220.0, 140.0),
    click(191, 280.0, 140.0),
    click(230, 256.0, 256.0),
    key(240, Key::Pause),
    key(241, Key::Pause),
];

/// Frames the checksum test runs by default.
pub const FRAMES: u32 = 300;

/// Replays `frames` frames of the script on a new game, natively, and
/// returns the game.
pub fn run(frames: u32, parallel: bool) -> Fireworks {
    let mut game = Fireworks::new(parallel);
    for frame in 0..frames {
        for event in SCRIPT.iter().filter(|e| e.frame == frame) {
            match event.input {
                Input::Click(px, py) => game.click(px, py),
                Input::Key(key) => game.key(key),
            }
        }
        game.advance_fixed();
    }
    game
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_script_gives_the_same_world_on_one_thread_and_many() {
        let one = run(FRAMES, false);
        let many = run(FRAMES, true);
        assert_eq!(one.checksum(), many.checksum());
        assert_eq!(one.entities(), many.entities());
        // The level key ended level 1 and the next one is being played.
        assert_eq!((one.level(), one.screen()), (2, 1));
        assert!(one.entities() > 100, "{} entities", one.entities());
    }

    #[test]
    fn clicks_launch_rockets_only_while_playing() {
        let mut game = Fireworks::new(false);
        game.click(256.0, 200.0);
        game.advance_fixed();
        assert_eq!(game.entities(), 0, "the menu drops clicks");
        for _ in 0..20 {
            game.advance_fixed();
        }
        assert_eq!(game.screen(), 1);
        let before = game.entities();
        game.click(256.0, 200.0);
        game.advance_fixed();
        assert!(game.entities() > before);
    }

    #[test]
    fn the_picture_is_not_all_background() {
        let mut game = run(60, false);
        let background = crate::canvas::BACKGROUND;
        let lit = game.draw().chunks_exact(4).filter(|p| p[..3] != background).count();
        assert!(lit > 1000, "{lit} pixels lit");
    }
}
