//! What a driver refuses when its session starts, and when a new type
//! shows up mid-game: every type is rolled back or skipped, never left out
//! silently. And what it takes: a game loop's fixed-step stage.

use archetable_core::{Commands, Res, Schedule, World};
use archetable_macros::Component;
use archetable_rollback::ggrs::SessionBuilder;
use archetable_rollback::{RollbackConfig, RollbackDriver, RollbackError, SimTime};

use crate::arena::{self, Input};

type Driver = RollbackDriver<Input>;

fn sync_test() -> archetable_rollback::ggrs::SyncTestSession<RollbackConfig<Input>> {
    SessionBuilder::<RollbackConfig<Input>>::new()
        .with_num_players(2)
        .unwrap()
        .with_check_distance(2)
        .start_synctest_session()
        .unwrap()
}

#[derive(Component, Clone, Debug, PartialEq, Eq, Hash)]
#[component(clone)]
struct Forgotten(u32);

#[derive(Component, Debug, PartialEq, Eq, Hash)]
struct Handle(u32);

#[derive(Clone)]
struct Weather(#[allow(dead_code)] u8);

#[test]
fn an_unregistered_component_is_refused_by_name() {
    let mut world = arena::world(0);
    world.spawn(Forgotten(1));
    let mut driver = Driver::new(world, arena::schedule(), 60);
    arena::register(&mut driver);
    let error = driver.start(sync_test()).unwrap_err();
    assert!(matches!(error, RollbackError::UnregisteredComponent { name } if name.ends_with("Forgotten")));
    assert!(error.to_string().contains("skip_component"), "{error}");
    driver.component::<Forgotten>();
    driver.start(sync_test()).unwrap();
}

#[test]
fn the_engines_disabled_marker_and_names_roll_back_without_registration() {
    let mut world = arena::world(0);
    let named = world.spawn(archetable_core::Name::new("scout"));
    world.disable(named).unwrap();
    let mut driver = Driver::new(world, arena::schedule(), 60);
    arena::register(&mut driver);
    driver.start(sync_test()).unwrap();
}

#[test]
fn a_component_that_cannot_be_copied_is_refused_even_when_skipped() {
    let mut world = World::new();
    world.spawn(Handle(1));
    let mut driver = Driver::new(world, Schedule::new(), 60);
    driver.component::<Handle>();
    let error = driver.start(sync_test()).unwrap_err();
    assert!(matches!(error, RollbackError::NotCloneable { name } if name.ends_with("Handle")), "{error}");
    assert!(error.to_string().contains("#[component(clone)]"));

    let mut world = World::new();
    world.spawn(Handle(1));
    let mut driver = Driver::new(world, Schedule::new(), 60);
    driver.skip_component::<Handle>();
    assert!(matches!(driver.start(sync_test()), Err(RollbackError::NotCloneable { .. })));
}

#[test]
fn an_unregistered_resource_is_refused_by_name() {
    let mut world = World::new();
    world.insert_resource(Weather(3));
    let mut driver = Driver::new(world, Schedule::new(), 60);
    let error = driver.start(sync_test()).unwrap_err();
    assert!(matches!(error, RollbackError::UnregisteredResource { name } if name.ends_with("Weather")), "{error}");
    driver.skip_resource::<Weather>();
    driver.start(sync_test()).unwrap();
}

fn spawn_forgotten(time: Res<SimTime>, mut commands: Commands) {
    if time.frame == 5 {
        commands.spawn(Forgotten(5));
    }
}

#[test]
fn a_type_that_shows_up_mid_game_is_refused_at_the_next_save() {
    let mut schedule = Schedule::new();
    schedule.add_system(spawn_forgotten);
    let mut driver = Driver::new(World::new(), schedule, 60);
    driver.start(sync_test()).unwrap();
    let error = (0..20).find_map(|_| driver.update(|_, _| Input(0)).err()).expect("refused");
    assert!(matches!(error, RollbackError::UnregisteredComponent { name } if name.ends_with("Forgotten")), "{error}");
}

fn count(mut ticks: archetable_core::ResMut<Ticks>) {
    ticks.0 += 1;
}

#[derive(Clone, Hash)]
struct Ticks(u64);

/// A game written for a `GameLoop` hands its fixed-step stage and its
/// world to a driver.
#[test]
fn a_game_loops_fixed_stage_runs_on_a_driver() {
    use archetable_core::{GameLoop, Stage};

    let mut game = GameLoop::new();
    game.insert_resource(Ticks(0));
    game.add_system(Stage::FixedUpdate, count);
    let schedule = std::mem::take(game.stage_mut(Stage::FixedUpdate));
    let world = game.into_world();
    let names: Vec<&str> = world.resource_types().map(|(_, name)| name).collect();
    let mut driver = Driver::new(world, schedule, 60);
    driver.resource::<Ticks>();
    // The loop's own clock for fixed steps is not the simulation's: the
    // driver's step and `SimTime` are.
    driver.skip_resource::<archetable_core::FixedTime>();
    driver.start(sync_test()).unwrap_or_else(|error| panic!("{error}; resources: {names:?}"));
    for _ in 0..30 {
        driver.update(|_, _| Input(0)).unwrap();
    }
    assert_eq!(driver.world().resource::<Ticks>().0, 30);
}
