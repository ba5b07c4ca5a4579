//! Every table column carries a write stamp (`Archetype::column_written`):
//! the change tick of the last query or `get_mut` that could have written
//! it in place, tracked or not. Rows added, removed or moved leave it: the
//! table's entity list and its removal count (`Archetype::removal_count`)
//! tell those.

use archetable::prelude::*;
use archetable::Tick;

#[derive(Component, Clone, Debug, PartialEq)]
#[component(clone)]
struct Plain(u32);

#[derive(Component, Clone, Debug, PartialEq)]
#[component(clone)]
struct Other(u32);

#[derive(Component, Clone, Debug, PartialEq)]
#[component(clone)]
struct Extra;

/// The stamp of `T`'s column in the table of exactly `Plain` and `Other`.
fn stamp<T: Component>(world: &World) -> Tick {
    let (plain, other) = (world.components().id::<Plain>().unwrap(), world.components().id::<Other>().unwrap());
    let id = world.components().id::<T>().unwrap();
    let table = world
        .archetypes()
        .as_slice()
        .iter()
        .find(|t| t.contains(plain) && t.contains(other) && !t.is_empty() && t.components().len() == 2)
        .unwrap();
    table.column_written(id).unwrap()
}

fn bump(mut plain: Query<&mut Plain>) {
    for mut p in plain.iter_mut() {
        p.0 += 1;
    }
}

#[test]
fn queries_and_get_mut_stamp_only_the_columns_they_may_write() {
    let mut world = World::new();
    let a = world.spawn((Plain(1), Other(1)));
    let b = world.spawn((Plain(2), Other(2)));
    let spawned = stamp::<Plain>(&world);
    assert_eq!(stamp::<Other>(&world), spawned);

    let t1 = world.next_change_tick();
    world.get_mut::<Plain>(a).unwrap().0 = 5;
    assert_eq!(stamp::<Plain>(&world), t1);
    assert_eq!(stamp::<Other>(&world), spawned, "a column nobody asked for is not stamped");

    let t2 = world.next_change_tick();
    world.entity_mut(b).unwrap().get_mut::<Other>().unwrap().0 = 9;
    assert_eq!(stamp::<Other>(&world), t2);
    assert_eq!(stamp::<Plain>(&world), t1);

    world.next_change_tick();
    let mut schedule = Schedule::new();
    schedule.add_systems(bump);
    schedule.run(&mut world);
    let by_system = stamp::<Plain>(&world);
    assert!(by_system.get() > t2.get(), "a system's Query<&mut Plain> stamps the column");
    assert_eq!(stamp::<Other>(&world), t2);

    // Read-only queries stamp nothing.
    world.next_change_tick();
    assert_eq!(world.query::<(&Plain, &Other)>().count(), 2);
    assert_eq!(stamp::<Plain>(&world), by_system);

    // A despawn is not a write (the entity list tells it).
    world.next_change_tick();
    world.despawn(a).unwrap();
    assert_eq!(stamp::<Plain>(&world), by_system);

    // A value that left the table, was written elsewhere and came back:
    // the move out counts as a removal, and the stamps stay.
    let before = removal_count(&world);
    world.next_change_tick();
    world.insert(b, Extra).unwrap();
    world.get_mut::<Other>(b).unwrap().0 = 11;
    world.remove::<Extra>(b).unwrap();
    assert_eq!(removal_count(&world), before.wrapping_add(1));
    assert_eq!(stamp::<Other>(&world), t2);
    assert_eq!(world.get::<Other>(b), Some(&Other(11)));
}

/// The removal count of the table of exactly `Plain` and `Other`.
fn removal_count(world: &World) -> u32 {
    let (plain, other) = (world.components().id::<Plain>().unwrap(), world.components().id::<Other>().unwrap());
    let table = world
        .archetypes()
        .as_slice()
        .iter()
        .find(|t| t.contains(plain) && t.contains(other) && t.components().len() == 2)
        .unwrap();
    table.removal_count()
}

#[test]
fn spawns_add_rows_without_stamps_and_removals_are_counted() {
    let mut world = World::new();
    let a = world.spawn((Plain(1), Other(1)));
    let t = world.next_change_tick();
    let written = stamp::<Plain>(&world);
    assert!(written.get() < t.get());
    let count = removal_count(&world);
    // A spawn adds a row: no stamp, no removal.
    world.spawn((Plain(2), Other(2)));
    assert_eq!((stamp::<Plain>(&world), removal_count(&world)), (written, count));
    // A despawn is a removal; the spawn after it is not.
    world.despawn(a).unwrap();
    world.spawn((Plain(3), Other(3)));
    assert_eq!(removal_count(&world), count.wrapping_add(1));
    // A component added moves the row out: a removal too.
    let b = world.spawn((Plain(4), Other(4)));
    world.insert(b, Extra).unwrap();
    assert_eq!(removal_count(&world), count.wrapping_add(2));
}
