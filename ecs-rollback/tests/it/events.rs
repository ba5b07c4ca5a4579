//! Events under rollback: the queue and its readers' positions come back
//! with a load, so readers before and after the writer see each event of
//! the simulation once, as a game without rollbacks does; so do the logs
//! `RemovedComponents` reads. What does not roll back: the private state
//! of registered one-shot systems.

use archetable_core::{
    Commands, Entity, EventReader, EventWriter, IntoSystems, Local, RemovedComponents, Res, ResMut, Schedule, World,
};
use archetable_macros::Component;
use archetable_rollback::ggrs::SessionBuilder;
use archetable_rollback::{RollbackConfig, RollbackDriver, RollbackError, SimTime};

type Driver = RollbackDriver<u8>;

fn sync_test(check_distance: usize) -> archetable_rollback::ggrs::SyncTestSession<RollbackConfig<u8>> {
    SessionBuilder::<RollbackConfig<u8>>::new()
        .with_num_players(1)
        .unwrap()
        .with_max_prediction_window(10)
        .with_check_distance(check_distance)
        .start_synctest_session()
        .unwrap()
}

/// An event: the frame that sent it and its place among that frame's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Ping {
    frame: i32,
    index: i32,
}

/// What each reader saw, in order: `(frame read in, event)`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
struct Seen {
    early: Vec<(i32, Ping)>,
    late: Vec<(i32, Ping)>,
}

/// Frame `f` sends `f % 3` pings.
fn send(mut pings: EventWriter<Ping>, time: Res<SimTime>) {
    let frame = time.frame;
    for index in 0..frame % 3 {
        pings.send(Ping { frame, index });
    }
}

fn read_early(mut pings: EventReader<Ping>, time: Res<SimTime>, mut seen: ResMut<Seen>) {
    let frame = time.frame;
    seen.early.extend(pings.read().map(|p| (frame, *p)));
}

fn read_late(mut pings: EventReader<Ping>, time: Res<SimTime>, mut seen: ResMut<Seen>) {
    let frame = time.frame;
    seen.late.extend(pings.read().map(|p| (frame, *p)));
}

fn ping_driver(check_distance: usize) -> Driver {
    let mut world = World::new();
    world.insert_resource(Seen::default());
    let mut schedule = Schedule::new();
    schedule.add_systems((read_early, send, read_late).chain());
    let mut driver = Driver::new(world, schedule, 60);
    driver.resource::<Seen>().event::<Ping>();
    driver.start(sync_test(check_distance)).unwrap();
    driver
}

#[test]
fn readers_before_and_after_the_writer_see_each_event_once_across_rollbacks() {
    let frames = 200;
    // Each ping once: the late reader in the frame that sent it, the early
    // one in the next frame.
    let sent: Vec<Ping> =
        (0..frames).flat_map(|frame| (0..frame % 3).map(move |index| Ping { frame, index })).collect();
    let late: Vec<(i32, Ping)> = sent.iter().map(|p| (p.frame, *p)).collect();
    let early: Vec<(i32, Ping)> = sent.iter().filter(|p| p.frame + 1 < frames).map(|p| (p.frame + 1, *p)).collect();
    for check_distance in 2..=8 {
        let mut driver = ping_driver(check_distance);
        for frame in 0..frames {
            driver.update(|_, _| 0).unwrap_or_else(|error| panic!("distance {check_distance}, frame {frame}: {error}"));
        }
        assert!(driver.stats().rollbacks >= (frames as u64) - 10);
        assert_eq!(driver.stats().deepest_rollback as usize, check_distance);
        let seen = driver.world().resource::<Seen>();
        assert_eq!(seen.late, late, "distance {check_distance}");
        assert_eq!(seen.early, early, "distance {check_distance}");
        assert_eq!(driver.drain_events().count(), 0);
    }
}

#[test]
fn a_load_restores_the_queue_and_the_readers() {
    let mut driver = ping_driver(2);
    for _ in 0..20 {
        driver.update(|_, _| 0).unwrap();
    }
    let frame = driver.frame();
    let checksum = driver.save_now().unwrap();
    let queued: Vec<Ping> = driver.world().resource::<archetable_core::Events<Ping>>().iter().copied().collect();
    assert_eq!(queued, [Ping { frame: 19, index: 0 }]);
    for _ in 0..5 {
        driver.update(|_, _| 0).unwrap();
    }
    assert_ne!(driver.checksum(), checksum);
    driver.load_frame(frame).unwrap();
    assert_eq!(driver.checksum(), checksum);
    let queued_again: Vec<Ping> = driver.world().resource::<archetable_core::Events<Ping>>().iter().copied().collect();
    assert_eq!(queued_again, queued);
}

#[test]
fn an_unregistered_event_queue_is_refused_by_name() {
    let mut world = World::new();
    world.add_event::<Ping>();
    let mut driver = Driver::new(world, Schedule::new(), 60);
    let error = driver.start(sync_test(2)).unwrap_err();
    assert!(
        matches!(error, RollbackError::UnregisteredEvent { name } if name.ends_with("Events<it::events::Ping>")),
        "{error:?}"
    );
    // Skipped, it is let through.
    driver.skip_event::<Ping>();
    driver.start(sync_test(2)).unwrap();
}

#[test]
fn an_event_queue_a_reader_makes_after_the_start_is_refused_at_the_next_save() {
    let mut schedule = Schedule::new();
    schedule.add_system(read_early);
    let mut world = World::new();
    world.insert_resource(Seen::default());
    let mut driver = Driver::new(world, schedule, 60);
    driver.resource::<Seen>();
    driver.start(sync_test(2)).unwrap();
    // The first frame's save comes before the reader's first run makes the
    // queue; the next save finds it.
    assert!(driver.update(|_, _| 0).is_ok());
    let error = driver.update(|_, _| 0).unwrap_err();
    assert!(matches!(error, RollbackError::UnregisteredEvent { name } if name.ends_with("Ping>")), "{error:?}");
}

#[derive(Component, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[component(clone)]
struct Token(u32);

/// The entities that lost a `Token` as a reader of
/// `RemovedComponents<Token>` saw them: `(frame read in, entity)`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
struct Tally(Vec<(i32, Entity)>);

fn tally(mut removed: RemovedComponents<Token>, time: Res<SimTime>, mut tally: ResMut<Tally>) {
    let frame = time.frame;
    tally.0.extend(removed.read().map(|entity| (frame, entity)));
}

/// Each frame: the oldest token goes (through commands, applied at the end
/// of the frame) and a new one comes.
fn churn(tokens: archetable_core::Query<(Entity, &Token)>, time: Res<SimTime>, mut commands: Commands) {
    if let Some((oldest, _)) = tokens.iter().min_by_key(|(_, token)| token.0) {
        commands.despawn(oldest);
    }
    commands.spawn(Token(time.frame as u32 + 100));
}

/// A driver whose frames despawn a token each (through commands, at the
/// end of the frame) and tally the removals with a reader placed first:
/// it reads the removals of the frame before.
fn token_driver(check_distance: usize, frames: i32) -> Tally {
    let mut world = World::new();
    for i in 0..4 {
        world.spawn(Token(i));
    }
    world.insert_resource(Tally::default());
    let mut schedule = Schedule::new();
    schedule.add_systems((tally, churn).chain());
    let mut driver = Driver::new(world, schedule, 60);
    driver.component::<Token>().resource::<Tally>();
    driver.start(sync_test(check_distance)).unwrap();
    for frame in 0..frames {
        driver.update(|_, _| 0).unwrap_or_else(|error| panic!("distance {check_distance}, frame {frame}: {error}"));
    }
    assert_eq!(driver.drain_events().count(), 0);
    driver.world().resource::<Tally>().clone()
}

#[test]
fn a_removed_components_reader_sees_the_same_removals_after_a_rollback() {
    // Without rollbacks (check distance 0): tokens 0, 1, 2, ... go one a
    // frame, in handle order, and the reader sees each the frame after.
    let reference = token_driver(0, 100);
    let frames: Vec<i32> = reference.0.iter().map(|&(frame, _)| frame).collect();
    assert_eq!(frames, (1..100).collect::<Vec<_>>(), "one removal a frame, seen the frame after");
    // The first four to go are the tokens spawned first.
    let first: Vec<u32> = reference.0[..4].iter().map(|(_, e)| e.index()).collect();
    assert_eq!(first, [0, 1, 2, 3]);
    for check_distance in 2..=8 {
        assert_eq!(token_driver(check_distance, 100), reference, "check distance {check_distance}");
    }
}

/// Counts its own runs in a `Local`.
fn count_runs(mut runs: Local<u32>) -> u32 {
    *runs += 1;
    *runs
}

#[test]
fn a_registered_system_keeps_its_private_state_across_a_load() {
    // Registered one-shot systems live in the world, but their state
    // (`Local`s, cursors) is not in snapshots: a load keeps the present
    // state, as it keeps a skipped resource.
    let mut world = World::new();
    let id = world.register_system(count_runs);
    let mut driver = Driver::new(world, Schedule::new(), 60);
    driver.start(sync_test(2)).unwrap();
    assert_eq!(driver.world_mut().run_system(id), Ok(1));
    let frame = driver.frame();
    driver.save_now().unwrap();
    assert_eq!(driver.world_mut().run_system(id), Ok(2));
    assert_eq!(driver.world_mut().run_system(id), Ok(3));
    driver.load_frame(frame).unwrap();
    assert_eq!(driver.world_mut().run_system(id), Ok(4), "the count goes on from the present");
}
