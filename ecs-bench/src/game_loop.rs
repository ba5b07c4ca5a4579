//! The game loop's own cost: one frame of `GameLoop::advance` over empty
//! stages, beside the same three empty schedules run by hand, which is
//! what the stages themselves cost. archetable only: the peers' fixed-step
//! loops live outside their ECS crates (bevy's in `bevy_app` and
//! `bevy_time`), so there is nothing equal to set beside it.

use std::time::Duration;

use archetable::{GameLoop, Schedule, Time, World};

use crate::routine::Steady;
use crate::Routine;

/// A 60 Hz frame, equal to the default fixed step: one fixed step a frame.
const FRAME: Duration = Duration::from_nanos(16_666_667);

/// `GameLoop::advance` over empty stages: the clock, the accumulator, one
/// fixed step, `update`, the transition point, `late_update`, and the end
/// of the frame.
pub fn advance_empty() -> Box<dyn Routine> {
    let mut game = GameLoop::new();
    game.startup();
    Box::new(Steady::new(game, |game: &mut GameLoop| game.advance(FRAME)))
}

/// The baseline: `Time` advanced and three empty schedules (fixed update,
/// update, late update) run by hand.
pub fn schedules_by_hand() -> Box<dyn Routine> {
    let state = (World::new(), [Schedule::new(), Schedule::new(), Schedule::new()]);
    Box::new(Steady::new(state, |(world, schedules): &mut (World, [Schedule; 3])| {
        world.resource_mut::<Time>().advance(FRAME);
        for schedule in schedules {
            schedule.run(world);
        }
    }))
}
