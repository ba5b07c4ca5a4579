//! The arena under ggrs's `SyncTestSession`: every frame rolled back and
//! resimulated `check_distance` frames and the checksums compared.

use archetable_core::{Query, ResMut};
use archetable_rollback::ggrs::SessionBuilder;
use archetable_rollback::{Difference, RollbackConfig, RollbackDriver, RollbackError, RollbackEvent};

use crate::arena::{self, Input, Pos, Score, Ship, Spent};

type Driver = RollbackDriver<Input>;

fn driver(check_distance: usize, rocks: usize) -> Driver {
    driver_with(check_distance, rocks, |_| {})
}

fn driver_with(check_distance: usize, rocks: usize, change: impl FnOnce(&mut Driver)) -> Driver {
    let mut driver = Driver::new(arena::world(rocks), arena::schedule(), 60);
    arena::register(&mut driver);
    change(&mut driver);
    let session = SessionBuilder::<RollbackConfig<Input>>::new()
        .with_num_players(2)
        .unwrap()
        .with_max_prediction_window(10)
        .with_check_distance(check_distance)
        .start_synctest_session()
        .unwrap();
    driver.start(session).unwrap();
    driver
}

/// The arena played `frames` frames without a rollback: its checksum,
/// score and count of bullets gone.
fn reference(frames: i32, rocks: usize) -> (u128, Score, Spent) {
    let mut driver = driver(0, rocks);
    for frame in 0..frames {
        driver.update(|handle, _| arena::script(handle, frame)).unwrap();
    }
    assert_eq!(driver.stats().rollbacks, 0);
    let world = driver.world();
    (driver.checksum(), *world.resource::<Score>(), *world.resource::<Spent>())
}

#[test]
fn arena_stays_in_sync_at_every_check_distance() {
    // The score is kept by a reader of `Hit` events, ships are knocked
    // back by another, and a reader of bullets' removals counts them: the
    // events, the removals and their readers roll back exactly, or the
    // checksums and these counts differ.
    let (checksum, score, spent) = reference(1000, 20);
    assert!(spent.0 > 100, "{spent:?}");
    for check_distance in 2..=8 {
        let mut driver = driver(check_distance, 20);
        for frame in 0..1000 {
            driver.update(|handle, _| arena::script(handle, frame)).unwrap_or_else(|error| {
                panic!(
                    "check distance {check_distance}, frame {frame}: {error}; {:?}",
                    driver.drain_events().collect::<Vec<_>>()
                )
            });
        }
        let stats = driver.stats();
        assert_eq!(driver.frame(), 1000);
        assert!(stats.rollbacks >= 990, "{stats:?}");
        assert_eq!(stats.deepest_rollback as usize, check_distance);
        assert_eq!(driver.drain_events().count(), 0);
        // The game did what it is there to do.
        let world = driver.world();
        assert!(world.query::<&arena::Bullet>().count() > 0);
        assert!(world.resource::<Score>().0.iter().sum::<u32>() > 0, "no hits in 1000 frames");
        // And did it as a game without rollbacks does.
        assert_eq!(*world.resource::<Score>(), score, "check distance {check_distance}");
        assert_eq!(*world.resource::<Spent>(), spent, "check distance {check_distance}");
        assert_eq!(driver.checksum(), checksum, "check distance {check_distance}");
    }
}

#[test]
fn skipped_events_the_simulation_reads_are_reported() {
    let mut driver = driver_with(4, 0, |driver| {
        driver.skip_event::<arena::Hit>();
    });
    // `register` rolled `Hit` back already; a driver that skips it instead:
    let mut skipping = Driver::new(arena::world(0), arena::schedule(), 60);
    skipping.skip_event::<arena::Hit>();
    arena::register(&mut skipping);
    skipping.set_debug(true);
    let session = SessionBuilder::<RollbackConfig<Input>>::new()
        .with_num_players(2)
        .unwrap()
        .with_max_prediction_window(10)
        .with_check_distance(4)
        .start_synctest_session()
        .unwrap();
    skipping.start(session).unwrap();
    let RollbackEvent::Desync { first_difference, .. } = run_until_mismatch(&mut skipping, 1000) else {
        panic!("not a desync")
    };
    let difference = first_difference.expect("debug mode names the difference");
    // The knock-back of a hit read twice (or never) moves a ship; a score
    // counted twice changes the score.
    assert!(["::Pos", "::Vel", "::Score"].iter().any(|t| difference.type_name.ends_with(t)), "{difference:?}");
    // The first registration counts: the driver that rolled `Hit` back
    // first stays in sync.
    for frame in 0..300 {
        driver.update(|handle, _| arena::script(handle, frame)).unwrap();
    }
}

/// Runs `driver` until the sync test fails; the desync event.
fn run_until_mismatch(driver: &mut Driver, frames: i32) -> RollbackEvent<std::net::SocketAddr> {
    for frame in 0..frames {
        match driver.update(|handle, _| arena::script(handle, frame)) {
            Ok(_) => {}
            Err(RollbackError::Mismatch { frames }) => {
                assert!(!frames.is_empty());
                let events: Vec<_> = driver.drain_events().collect();
                assert_eq!(events.len(), 1, "{events:?}");
                return events.into_iter().next().unwrap();
            }
            Err(error) => panic!("frame {frame}: {error}"),
        }
    }
    panic!("no mismatch in {frames} frames");
}

#[test]
fn a_system_that_reads_the_wall_clock_is_reported() {
    let mut driver = driver_with(4, 0, |driver| {
        driver.schedule_mut().add_system(arena::wall_clock);
        driver.set_debug(true);
    });
    let RollbackEvent::Desync { first_difference, remote, .. } = run_until_mismatch(&mut driver, 200) else {
        panic!("not a desync")
    };
    assert_eq!(remote, None);
    let difference = first_difference.expect("debug mode names the difference");
    assert!(difference.type_name.ends_with("Score"), "{difference:?}");
    assert_eq!(difference.entity, None);
}

/// Writes the wall clock into ship 0's position.
fn jitter_ship(mut ships: Query<(&Ship, &mut Pos)>) {
    let nanos = std::time::Instant::now().elapsed().as_nanos() as i32
        ^ std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().subsec_nanos() as i32;
    for (ship, mut pos) in ships.iter_mut() {
        if ship.player == 0 {
            pos.x ^= nanos & 1;
        }
    }
}

#[test]
fn debug_mode_names_the_component_and_the_entity() {
    let mut driver = driver_with(3, 5, |driver| {
        driver.schedule_mut().add_system(jitter_ship);
        driver.set_debug(true);
    });
    let ship0 = driver.world().query::<(archetable_core::Entity, &Ship)>().find(|(_, s)| s.player == 0).unwrap().0;
    let RollbackEvent::Desync { first_difference, .. } = run_until_mismatch(&mut driver, 200) else {
        panic!("not a desync")
    };
    let Difference { type_name, entity } = first_difference.expect("debug mode names the difference");
    assert!(type_name.ends_with("::Pos"), "{type_name}");
    assert_eq!(entity, Some(ship0));
}

/// State the simulation keeps but rollback skips.
struct Hits(u32);

fn count_into_score(mut hits: ResMut<Hits>, mut score: ResMut<Score>) {
    hits.0 += 1;
    score.0[1] = hits.0;
}

#[test]
fn a_skipped_resource_the_simulation_reads_is_reported() {
    let mut driver = driver_with(2, 0, |driver| {
        driver.world_mut().insert_resource(Hits(0));
        driver.skip_resource::<Hits>();
        driver.schedule_mut().add_system(count_into_score);
    });
    let RollbackEvent::Desync { frame, local, .. } = run_until_mismatch(&mut driver, 50) else {
        panic!("not a desync")
    };
    assert!(frame >= 0);
    assert!(local.is_some());
}

#[test]
fn without_debug_mode_a_desync_names_nothing() {
    let mut driver = driver_with(2, 0, |driver| {
        driver.schedule_mut().add_system(arena::wall_clock);
    });
    let RollbackEvent::Desync { first_difference, .. } = run_until_mismatch(&mut driver, 200) else {
        panic!("not a desync")
    };
    assert_eq!(first_difference, None);
}

/// Simulation state in a skipped component.
#[derive(archetable_macros::Component, Clone, Debug)]
#[component(clone)]
struct Fuel(u32);

fn burn(mut ships: Query<(&mut Fuel, &mut Pos)>) {
    for (mut fuel, mut pos) in ships.iter_mut() {
        fuel.0 += 1;
        pos.y = pos.y.wrapping_add(fuel.0 as i32);
    }
}

#[test]
fn a_skipped_component_the_simulation_reads_is_reported() {
    let mut driver = driver_with(2, 0, |driver| {
        let ships: Vec<_> =
            driver.world().query_filtered::<archetable_core::Entity, archetable_core::With<Ship>>().collect();
        for ship in ships {
            driver.world_mut().insert(ship, Fuel(0)).unwrap();
        }
        driver.skip_component::<Fuel>();
        driver.schedule_mut().add_system(burn);
        driver.set_debug(true);
    });
    let RollbackEvent::Desync { first_difference, .. } = run_until_mismatch(&mut driver, 50) else {
        panic!("not a desync")
    };
    let difference = first_difference.expect("named");
    assert!(difference.type_name.ends_with("::Pos"), "{difference:?}");
}
