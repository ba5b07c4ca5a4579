//! A save keeps the hash of each column of a change-tracked component that
//! nothing wrote since the last save or load. These tests change the world
//! through every path that could leave a column looking unchanged (a load,
//! a despawn that moves rows, a component removed and added back, a
//! parent's list of children, a resource, a sparse set, a world replaced)
//! and check each save's checksum against one that hashes every value
//! anew.

use archetable_core::{ChildOf, Children, Commands, Entity, Query, Res, Schedule, With, Without, World};
use archetable_macros::Component;
use archetable_rollback::ggrs::SessionBuilder;
use archetable_rollback::{PlayerInputs, RollbackConfig, RollbackDriver, RollbackRng, SimTime};

#[derive(Component, Clone, Debug, PartialEq, Eq, Hash)]
#[component(clone, track_changes)]
struct Hp(u32);

#[derive(Component, Clone, Debug, PartialEq, Eq, Hash)]
#[component(clone, track_changes)]
struct Label(String);

#[derive(Component, Clone, Debug, PartialEq, Eq, Hash)]
#[component(clone)]
struct Plain(u32);

#[derive(Component, Clone, Debug, PartialEq, Eq, Hash)]
#[component(clone, track_changes, storage = "sparse")]
struct Marked(u8);

fn driver(world: World) -> RollbackDriver<u8> {
    let mut driver = RollbackDriver::new(world, Schedule::new(), 60);
    driver.component::<Hp>().component::<Label>().component::<Plain>().component::<Marked>().resource::<RollbackRng>();
    driver
}

/// Four entities of `Hp`, `Label` and `Plain` (the last one of them
/// `Marked`), a parent of the first two, and the seeded random numbers.
fn setup() -> (RollbackDriver<u8>, Vec<Entity>, Entity) {
    let mut world = World::new();
    let units: Vec<Entity> = (0..4).map(|i| world.spawn((Hp(i), Label(format!("unit {i}")), Plain(10 * i)))).collect();
    world.insert(units[3], Marked(1)).unwrap();
    let parent = world.spawn(Hp(100));
    world.insert(units[0], ChildOf(parent)).unwrap();
    world.insert(units[1], ChildOf(parent)).unwrap();
    world.insert_resource(RollbackRng::new(9));
    (driver(world), units, parent)
}

/// Saves, and checks the checksum against one that hashes every value.
fn save(driver: &mut RollbackDriver<u8>) -> u128 {
    let saved = driver.save_now().unwrap();
    assert_eq!(saved, driver.checksum(), "a save's checksum is the checksum of every value");
    saved
}

/// Saves before and after `change`: the two checksums differ, and each is
/// the checksum of every value.
fn changes(driver: &mut RollbackDriver<u8>, change: impl FnOnce(&mut World)) {
    let before = save(driver);
    // A save of an unchanged world keeps every hash.
    assert_eq!(save(driver), before);
    change(driver.world_mut());
    let after = save(driver);
    assert_ne!(after, before, "the change shows in the checksum");
}

#[test]
fn a_value_written_after_a_save_is_hashed_again() {
    let (mut driver, units, _) = setup();
    changes(&mut driver, |world| world.get_mut::<Hp>(units[1]).unwrap().0 = 7);
    changes(&mut driver, |world| world.get_mut::<Label>(units[2]).unwrap().0.push('!'));
    changes(&mut driver, |world| {
        for mut hp in world.query_mut::<&mut Hp>() {
            hp.0 += 1;
        }
    });
    // Untracked: no ticks to go by, hashed anew every time.
    changes(&mut driver, |world| world.get_mut::<Plain>(units[0]).unwrap().0 = 99);
    changes(&mut driver, |world| world.get_mut::<Marked>(units[3]).unwrap().0 = 2);
}

#[test]
fn a_despawn_that_moves_the_last_row_is_hashed_again() {
    let (mut driver, units, _) = setup();
    // The last row moves into the hole with its old ticks: no value in
    // the column is newer than the save, but the rows are not the same.
    changes(&mut driver, |world| world.despawn(units[2]).unwrap());
    // The last row moves again, and the row left over is filled with a
    // copy of the values that were there: same values, other handle.
    changes(&mut driver, |world| {
        let rows: Vec<Entity> = world.query::<(Entity, &Plain)>().map(|(e, _)| e).collect();
        let first = rows[0];
        let (hp, label, plain) =
            (world.get::<Hp>(first).cloned(), world.get::<Label>(first).cloned(), world.get::<Plain>(first).cloned());
        world.despawn(first).unwrap();
        world.spawn((hp.unwrap(), label.unwrap(), plain.unwrap()));
    });
}

#[test]
fn a_component_removed_and_added_back_is_hashed_again() {
    let (mut driver, units, _) = setup();
    // The last row of the table without children leaves the table and
    // comes back to the same row with another value: the table's entities
    // are as they were.
    let rows: Vec<Entity> = driver.world().query_filtered::<Entity, (With<Plain>, Without<ChildOf>)>().collect();
    let last = *rows.last().unwrap();
    changes(&mut driver, |world| {
        world.remove::<Hp>(last).unwrap();
        world.insert(last, Hp(1234)).unwrap();
        let again: Vec<Entity> = world.query_filtered::<Entity, (With<Plain>, Without<ChildOf>)>().collect();
        assert_eq!(again, rows, "the same rows");
    });
    changes(&mut driver, |world| {
        world.remove::<Marked>(units[3]).unwrap();
    });
    changes(&mut driver, |world| {
        world.insert(units[0], Marked(5)).unwrap();
    });
}

#[test]
fn a_parents_children_and_a_resource_are_hashed_again() {
    let (mut driver, units, parent) = setup();
    changes(&mut driver, |world| {
        world.insert(units[2], ChildOf(parent)).unwrap();
    });
    changes(&mut driver, |world| {
        world.remove_parent(units[0]).unwrap();
    });
    assert_eq!(
        driver.world().get::<Children>(parent).unwrap().iter().copied().collect::<Vec<_>>(),
        [units[1], units[2]]
    );
    changes(&mut driver, |world| {
        world.resource_mut::<RollbackRng>().next_u32();
    });
}

#[test]
fn a_world_replaced_between_saves_is_hashed_anew() {
    let (mut driver, _, _) = setup();
    let before = save(&mut driver);
    // Another world, built the same way but for one value: its ticks say
    // nothing about what the kept hashes were taken from.
    let (other, units, _) = setup();
    let mut world = World::new();
    world.clone_from(other.world()).unwrap();
    world.insert_resource(RollbackRng::new(9));
    world.insert_resource(SimTime { frame: 0, step: driver.step() });
    world.insert_resource(PlayerInputs::<u8>::default());
    world.get_mut::<Hp>(units[0]).unwrap().0 = 77;
    *driver.world_mut() = world;
    let after = save(&mut driver);
    assert_ne!(after, before);
}

#[test]
fn after_a_load_the_last_save_is_in_the_present_world() {
    let (mut driver, units, _) = setup();
    let zero = save(&mut driver);
    driver.world_mut().get_mut::<Hp>(units[0]).unwrap().0 = 50;
    driver.world_mut().despawn(units[2]).unwrap();
    assert_ne!(driver.checksum(), zero);
    driver.load_frame(0).unwrap();
    assert_eq!(driver.checksum(), zero);
    // Nothing written since the load: every kept hash is the loaded one's.
    assert_eq!(save(&mut driver), zero);
    driver.world_mut().get_mut::<Label>(units[1]).unwrap().0 = "renamed".into();
    let renamed = save(&mut driver);
    assert_ne!(renamed, zero);
    driver.load_frame(0).unwrap();
    assert_eq!(save(&mut driver), renamed);
}

/// Writes some columns on some frames and none on others, spawns and
/// despawns: after a load of an older frame, a column that the step does
/// not write is as the loaded frame had it, not as the last save had it.
fn churn(time: Res<SimTime>, mut hp: Query<&mut Hp>, mut labels: Query<(Entity, &mut Label)>, mut commands: Commands) {
    let frame = time.frame;
    match frame % 4 {
        0 => {
            for mut hp in &mut hp {
                hp.0 = hp.0.wrapping_mul(31).wrapping_add(frame as u32);
            }
        }
        1 => {
            if let Some((_, mut label)) = labels.iter_mut().nth(frame as usize % 3) {
                label.0.push(char::from(b'a' + (frame % 26) as u8));
            }
        }
        2 => {
            if let Some((oldest, _)) = labels.iter_mut().next() {
                commands.entity(oldest).despawn();
            }
        }
        _ => {
            commands.spawn((Hp(frame as u32), Label(format!("born {frame}")), Plain(1)));
        }
    }
}

#[test]
fn a_sync_test_that_writes_some_columns_on_some_frames_stays_in_sync() {
    for distance in 2..=7 {
        let (mut driver, _, _) = setup();
        driver.schedule_mut().add_systems(churn);
        let session = SessionBuilder::<RollbackConfig<u8>>::new()
            .with_num_players(1)
            .unwrap()
            .with_max_prediction_window(8)
            .with_check_distance(distance)
            .start_synctest_session()
            .unwrap();
        driver.start(session).unwrap();
        for _ in 0..120 {
            driver.update(|_, _| 0).unwrap_or_else(|error| panic!("check distance {distance}: {error}"));
        }
        assert_eq!(driver.frame(), 120);
        // The frame the world is at, saved by the next update, is the world.
        let present = driver.checksum();
        driver.update(|_, _| 0).unwrap();
        assert_eq!(driver.checksum_of(120), Some(present), "check distance {distance}");
    }
}
