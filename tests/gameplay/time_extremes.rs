//! The clocks at their limits: `Time::advance`, `FixedTime::accumulate` and
//! `GameLoop::advance` never panic, for any frame time and any scale
//! `set_scale` accepts; times and counters saturate, and the cap on fixed
//! steps holds. Debug builds check integer overflow, so an overflow here
//! would panic.

use std::time::Duration;

use archetable::prelude::*;

#[test]
fn time_saturates_at_the_longest_duration_frame_after_frame() {
    let mut time = Time::default();
    time.advance(Duration::MAX);
    assert_eq!((time.delta(), time.elapsed()), (Duration::MAX, Duration::MAX));
    assert_eq!((time.real_delta(), time.real_elapsed(), time.frame()), (Duration::MAX, Duration::MAX, 1));
    time.advance(Duration::MAX);
    assert_eq!((time.delta(), time.elapsed()), (Duration::MAX, Duration::MAX));
    assert_eq!((time.real_delta(), time.real_elapsed(), time.frame()), (Duration::MAX, Duration::MAX, 2));
    // An ordinary frame after: its own delta, the totals stay at the top.
    time.advance(Duration::from_millis(16));
    assert_eq!((time.delta(), time.elapsed()), (Duration::from_millis(16), Duration::MAX));
    assert_eq!((time.real_delta(), time.real_elapsed(), time.frame()), (Duration::from_millis(16), Duration::MAX, 3));
}

#[test]
fn time_saturates_a_scaled_delta_past_the_longest_duration() {
    for scale in [1e18, 1e20, f64::MAX] {
        let mut time = Time::default();
        time.set_scale(scale);
        time.advance(Duration::from_secs(60));
        assert_eq!((time.delta(), time.elapsed()), (Duration::MAX, Duration::MAX), "scale {scale}");
        assert_eq!((time.real_delta(), time.real_elapsed()), (Duration::from_secs(60), Duration::from_secs(60)));
        time.advance(Duration::MAX);
        assert_eq!((time.delta(), time.elapsed(), time.real_elapsed()), (Duration::MAX, Duration::MAX, Duration::MAX));
    }
    // Under the limit, scaling is as before.
    let mut time = Time::default();
    time.set_scale(1e9);
    time.advance(Duration::from_nanos(3));
    assert_eq!(time.delta(), Duration::from_secs(3));
    // Scale 0 and a pause give zero, even for the longest frame.
    time.set_scale(0.0);
    time.advance(Duration::MAX);
    assert_eq!((time.delta(), time.elapsed()), (Duration::ZERO, Duration::from_secs(3)));
    time.set_scale(1e20);
    time.pause();
    time.advance(Duration::MAX);
    assert_eq!((time.delta(), time.elapsed()), (Duration::ZERO, Duration::from_secs(3)));
}

#[cfg(feature = "game-loop")]
#[test]
fn fixed_time_counts_dropped_steps_saturating() {
    let mut fixed = FixedTime::new(Duration::from_nanos(1));
    assert_eq!(fixed.accumulate(Duration::MAX), 8);
    // About 1.8e28 steps are due: far more than a u64 counts.
    assert!(Duration::MAX.as_nanos() - 8 > u128::from(u64::MAX));
    assert_eq!((fixed.steps_this_frame(), fixed.dropped_this_frame()), (8, u64::MAX));
    assert_eq!((fixed.dropped_total(), fixed.overstep()), (u64::MAX, Duration::ZERO));
    assert_eq!(fixed.accumulate(Duration::MAX), 8);
    assert_eq!((fixed.dropped_this_frame(), fixed.dropped_total()), (u64::MAX, u64::MAX));

    // A count that fits is exact, and the total adds up until it saturates.
    let mut fixed = FixedTime::new(Duration::from_secs(1));
    fixed.set_max_steps_per_frame(u32::MAX);
    assert_eq!(fixed.accumulate(Duration::MAX), u32::MAX);
    let due = u64::MAX; // whole seconds in Duration::MAX
    assert_eq!(fixed.dropped_this_frame(), due - u64::from(u32::MAX));
    assert_eq!(fixed.overstep(), Duration::from_nanos(999_999_999));
    assert_eq!(fixed.accumulate(Duration::from_secs(2)), 2);
    assert_eq!((fixed.dropped_this_frame(), fixed.dropped_total()), (0, due - u64::from(u32::MAX)));
    fixed.accumulate(Duration::MAX);
    assert_eq!(fixed.dropped_total(), u64::MAX);
}

#[cfg(feature = "game-loop")]
#[derive(Default)]
struct Steps(u64);

#[cfg(feature = "game-loop")]
fn game(step: Duration) -> GameLoop {
    let mut game = GameLoop::new();
    game.set_fixed_step(step);
    game.world_mut().init_resource::<Steps>();
    game.add_system(Stage::FixedUpdate, |mut steps: ResMut<Steps>| steps.0 += 1);
    game
}

#[cfg(feature = "game-loop")]
#[test]
fn a_game_loop_survives_the_longest_frames() {
    for step in [Duration::from_nanos(1), Duration::from_nanos(16_666_667), Duration::MAX] {
        let mut game = game(step);
        game.advance(Duration::MAX);
        game.advance(Duration::MAX);
        let expected_steps = if step == Duration::MAX { 2 } else { 16 };
        assert_eq!(game.world().resource::<Steps>().0, expected_steps, "step {step:?}");
        let time = game.world().resource::<Time>();
        assert_eq!((time.elapsed(), time.real_elapsed(), time.frame()), (Duration::MAX, Duration::MAX, 2));
        let fixed = game.fixed_time();
        assert_eq!(fixed.index(), expected_steps);
        let dropped = if step == Duration::MAX { 0 } else { u64::MAX };
        assert_eq!((fixed.dropped_this_frame(), fixed.dropped_total()), (dropped, dropped));
        // The game goes on with ordinary frames.
        game.advance(Duration::from_millis(16));
        assert_eq!(game.world().resource::<Time>().delta(), Duration::from_millis(16));
    }
}

#[cfg(feature = "game-loop")]
#[test]
fn a_game_loop_survives_a_huge_time_scale() {
    let mut game = game(Duration::from_nanos(16_666_667));
    game.world_mut().resource_mut::<Time>().set_scale(1e18);
    game.advance(Duration::from_secs(60));
    game.advance(Duration::from_secs(60));
    assert_eq!(game.world().resource::<Steps>().0, 16);
    let time = game.world().resource::<Time>();
    assert_eq!(
        (time.delta(), time.elapsed(), time.real_elapsed()),
        (Duration::MAX, Duration::MAX, Duration::from_secs(120))
    );
    assert_eq!(game.fixed_time().dropped_total(), u64::MAX);
}

/// A save is a file anyone may edit: a clock that `advance` could not run
/// (a zero step, no step allowed per frame, a negative scale) is refused at
/// load, as the setters refuse it.
#[cfg(feature = "serde")]
#[test]
fn a_save_cannot_load_a_clock_that_would_panic() {
    use archetable::data::SerdeWorldExt;
    let mut world = World::new();
    let mut fixed = FixedTime::new(Duration::from_millis(10));
    fixed.accumulate(Duration::from_millis(25));
    world.insert_resource(fixed.clone());
    world.resource_mut::<Time>().set_scale(0.5);
    world.resource_mut::<Time>().advance(Duration::from_millis(30));
    let time = world.resource::<Time>().clone();
    let registry = world.serde_registry();
    // A good clock loads back as it was, in every format.
    for loaded in [
        World::load_json(&registry, &world.save_json().unwrap().data).unwrap(),
        World::load_ron(&registry, &world.save_ron().unwrap().data).unwrap(),
        World::load_binary(&registry, &world.save_binary().unwrap().data).unwrap(),
    ] {
        assert_eq!((loaded.resource::<Time>(), loaded.resource::<FixedTime>()), (&time, &fixed));
    }
    world.insert_resource(FixedTime::default());
    world.insert_resource(Time::default());
    let json = world.save_json().unwrap().data;
    for (from, to, says) in [
        (r#""step":{"secs":0,"nanos":16666667}"#, r#""step":{"secs":0,"nanos":0}"#, "the fixed step must not be zero"),
        (
            r#""max_steps_per_frame":8"#,
            r#""max_steps_per_frame":0"#,
            "at least one fixed step per frame must be allowed",
        ),
        (r#""scale":1.0"#, r#""scale":-2.0"#, "time scale must be finite and not negative, got -2"),
    ] {
        let hostile = json.replace(from, to);
        assert_ne!(hostile, json);
        let error = World::load_json(&registry, &hostile).expect_err("refused").to_string();
        assert!(error.contains(says), "{error}");
    }
}
