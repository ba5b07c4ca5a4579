//! [`Fireworks`]: the showcase's game loop with a player. A click launches
//! a rocket from the floor below it that bursts at the height clicked;
//! keys pause, switch slow motion and end the level. Input waits in the
//! world until the next frame, so the same inputs before the same frames
//! give the same world, whoever sends them (the page, a script, a test).

use std::time::Duration;

use archetable::prelude::*;

use crate::canvas::{Canvas, Look};
use crate::sim::{
    self, FrameStats, Frozen, Level, Position, Rocket, RocketBundle, Screen, Shield, Spark, Velocity, ARENA, GRAVITY,
};

/// Clicks since the last frame, in arena units.
#[derive(Default)]
struct Clicks(Vec<(f32, f32)>);

/// What a key does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Key {
    /// Pauses the game, or resumes it.
    Pause,
    /// Game time at a quarter of real time, or back to real time.
    SlowMotion,
    /// Ends the level now: the game-over screen, then the next level.
    NextLevel,
}

impl Key {
    /// The key for the number the page sends (1, 2, 3), if any.
    pub fn from_code(code: u32) -> Option<Key> {
        match code {
            1 => Some(Key::Pause),
            2 => Some(Key::SlowMotion),
            3 => Some(Key::NextLevel),
            _ => None,
        }
    }

    /// The number the page sends for this key.
    pub fn code(self) -> u32 {
        match self {
            Key::Pause => 1,
            Key::SlowMotion => 2,
            Key::NextLevel => 3,
        }
    }
}

/// The slow-motion scale of game time.
const SLOW: f64 = 0.25;

/// The lowest and highest burst a click asks for, in arena units.
const BURST_HEIGHT: (f32, f32) = (10.0, 0.95 * ARENA);

/// The showcase's game with a player and a picture.
pub struct Fireworks {
    game: GameLoop,
    canvas: Canvas,
}

impl Fireworks {
    /// A new game in its menu; `parallel` lets systems run on threads
    /// where there are any (the world is the same either way).
    pub fn new(parallel: bool) -> Fireworks {
        let mut game = sim::new_game(parallel);
        game.init_resource::<Clicks>();
        game.add_systems(Stage::Update, player_rockets);
        Fireworks { game, canvas: Canvas::new(ARENA) }
    }

    /// A click at pixel `(px, py)` of the picture: a rocket goes up at the
    /// next frame, if a level is being played (clicks elsewhere are
    /// dropped then).
    pub fn click(&mut self, px: f32, py: f32) {
        let (x, y) = self.canvas.to_arena(px, py);
        if x.is_finite() && y.is_finite() {
            self.game.world_mut().resource_mut::<Clicks>().0.push((x.clamp(0.0, ARENA), y));
        }
    }

    /// A key press.
    pub fn key(&mut self, key: Key) {
        let playing = self.game.state::<Screen>() == Some(&Screen::Playing);
        let world = self.game.world_mut();
        match key {
            Key::Pause => {
                let time = world.resource_mut::<Time>();
                let paused = time.is_paused();
                time.set_paused(!paused);
            }
            Key::SlowMotion => {
                let time = world.resource_mut::<Time>();
                let scale = if time.scale() == 1.0 { SLOW } else { 1.0 };
                time.set_scale(scale);
            }
            Key::NextLevel if playing => world.resource_mut::<NextState<Screen>>().set(Screen::GameOver),
            Key::NextLevel => {}
        }
    }

    /// One frame that took `real_dt` of real time.
    pub fn advance(&mut self, real_dt: Duration) {
        self.game.advance(real_dt);
    }

    /// One frame of the showcase's made-up length (1/30 s), as scripted
    /// runs take it.
    pub fn advance_fixed(&mut self) {
        self.game.advance(sim::FRAME);
    }

    /// Draws the arena, with everything moved on by the fraction of a
    /// physics step the frame is past the last one, and returns the RGBA
    /// pixels, [`WIDTH`](crate::WIDTH) by [`HEIGHT`](crate::HEIGHT).
    pub fn draw(&mut self) -> &[u8] {
        let world = self.game.world();
        let ahead = (self.game.alpha() as f32) * self.game.fixed_time().step_secs();
        self.canvas.clear();
        for (p, v, spark, frozen, shield) in
            world.query::<(&Position, &Velocity, Option<&Spark>, Option<&Frozen>, Option<&Shield>)>()
        {
            let look = match (spark, frozen, shield) {
                (None, ..) => Look::Rocket,
                (Some(_), Some(_), _) => Look::Frozen,
                (Some(_), None, Some(_)) => Look::Shielded,
                (Some(s), None, None) if s.life > 1.5 => Look::Hot,
                (Some(s), None, None) if s.life > 0.7 => Look::Warm,
                (Some(_), None, None) => Look::Cool,
            };
            if frozen.is_some() {
                self.canvas.streak((p.x, p.y), (0.0, 0.0), look);
            } else {
                let tail = if spark.is_some() { 0.06 } else { 0.15 };
                self.canvas.streak((p.x + v.x * ahead, p.y + v.y * ahead), (v.x * tail, v.y * tail), look);
            }
        }
        self.canvas.rgba()
    }

    /// The showcase's checksum of the world: every handle and position, bit
    /// for bit.
    pub fn checksum(&self) -> u64 {
        sim::checksum(self.game.world())
    }

    /// Entities alive.
    pub fn entities(&self) -> usize {
        self.game.world().len()
    }

    /// Sparks alive, and of those, frozen to a wall.
    pub fn sparks(&self) -> (usize, usize) {
        let world = self.game.world();
        let sparks = world.query_filtered::<Entity, With<Spark>>().count();
        let frozen = world.query_filtered::<Entity, (With<Spark>, With<Frozen>)>().count();
        (sparks, frozen)
    }

    /// The level being played or last played (0 before the first).
    pub fn level(&self) -> u32 {
        self.game.world().resource::<Level>().number
    }

    /// The screen: 0 the menu, 1 playing, 2 game over.
    pub fn screen(&self) -> u32 {
        match self.game.state::<Screen>() {
            Some(Screen::Menu) | None => 0,
            Some(Screen::Playing) => 1,
            Some(Screen::GameOver) => 2,
        }
    }

    /// Whether game time stands still.
    pub fn paused(&self) -> bool {
        self.game.world().resource::<Time>().is_paused()
    }

    /// Game seconds per real second.
    pub fn scale(&self) -> f64 {
        self.game.world().resource::<Time>().scale()
    }

    /// Clicks waiting for the next frame that runs the game's systems.
    pub fn pending_clicks(&self) -> usize {
        self.game.world().resource::<Clicks>().0.len()
    }

    /// Physics steps run so far.
    pub fn steps(&self) -> u64 {
        self.game.fixed_time().index()
    }

    /// The game loop.
    pub fn game(&self) -> &GameLoop {
        &self.game
    }

    /// The game loop, to register types for saves and the like.
    pub fn game_mut(&mut self) -> &mut GameLoop {
        &mut self.game
    }
}

/// Launches the player's rockets: straight up from the floor below the
/// click, fast enough to reach its height, with a fuse that bursts it at
/// the top. Clicks outside a level are dropped.
fn player_rockets(
    mut clicks: ResMut<Clicks>,
    screen: Res<State<Screen>>,
    mut commands: Commands,
    mut stats: ResMut<FrameStats>,
) {
    let playing = *screen.get() == Screen::Playing;
    for (x, y) in clicks.0.drain(..) {
        if !playing {
            continue;
        }
        let height = y.clamp(BURST_HEIGHT.0, BURST_HEIGHT.1);
        let speed = (2.0 * -GRAVITY * height).sqrt();
        commands.spawn(RocketBundle {
            position: Position { x, y: 0.0 },
            velocity: Velocity { x: 0.0, y: speed },
            rocket: Rocket { fuse: speed / -GRAVITY },
        });
        stats.spawned += 1;
    }
}
