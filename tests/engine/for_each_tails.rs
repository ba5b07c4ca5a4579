//! `QueryState::for_each` over many small tables whose lengths are not
//! multiples of the vector width, nor of the engine's blocks of four rows
//! (every remainder from zero to three): every row of every table is
//! visited once, in table order, and an emptied table is skipped.

use archetable::prelude::*;

#[derive(Component, Clone, Copy, Debug, PartialEq)]
struct Value(f32);

macro_rules! tags {
    ($($tag:ident)*) => {
        $(
            #[derive(Component)]
            struct $tag;
        )*
    };
}

tags!(T0 T1 T2 T3 T4 T5 T6 T7 T8 T9);

/// One table per tag, with these many rows; the table of `T1` is emptied
/// after it is filled.
const LENGTHS: [usize; 10] = [1, 5, 7, 8, 9, 20, 33, 2, 6, 3];

fn world() -> (World, Vec<Vec<Entity>>) {
    let mut world = World::new();
    let mut next = 0.0;
    let mut value = || {
        next += 1.0;
        Value(next)
    };
    let tables = vec![
        (0..LENGTHS[0]).map(|_| world.spawn((T0, value()))).collect::<Vec<_>>(),
        (0..LENGTHS[1]).map(|_| world.spawn((T1, value()))).collect(),
        (0..LENGTHS[2]).map(|_| world.spawn((T2, value()))).collect(),
        (0..LENGTHS[3]).map(|_| world.spawn((T3, value()))).collect(),
        (0..LENGTHS[4]).map(|_| world.spawn((T4, value()))).collect(),
        (0..LENGTHS[5]).map(|_| world.spawn((T5, value()))).collect(),
        (0..LENGTHS[6]).map(|_| world.spawn((T6, value()))).collect(),
        (0..LENGTHS[7]).map(|_| world.spawn((T7, value()))).collect(),
        (0..LENGTHS[8]).map(|_| world.spawn((T8, value()))).collect(),
        (0..LENGTHS[9]).map(|_| world.spawn((T9, value()))).collect(),
    ];
    for &entity in &tables[1] {
        world.despawn(entity).unwrap();
    }
    (world, tables)
}

#[test]
fn for_each_mut_writes_every_row_of_every_table_once() {
    let (mut world, tables) = world();
    let mut state = QueryState::<&mut Value>::new(&mut world);
    let mut visits = 0;
    state.for_each_mut(&mut world, |mut value| {
        value.0 *= 2.0;
        visits += 1;
    });
    let live: usize = LENGTHS.iter().sum::<usize>() - LENGTHS[1];
    assert_eq!(visits, live);
    // Values were numbered from 1 in spawn order, across all tables.
    let mut number = 0.0;
    for (t, table) in tables.iter().enumerate() {
        for &entity in table {
            number += 1.0;
            if t == 1 {
                assert_eq!(world.get::<Value>(entity), None);
            } else {
                assert_eq!(world.get::<Value>(entity), Some(&Value(2.0 * number)));
            }
        }
    }
}

#[test]
fn for_each_visits_rows_in_table_order() {
    let (mut world, tables) = world();
    let mut state = QueryState::<(Entity, &Value)>::new(&mut world);
    let mut seen = Vec::new();
    state.for_each(&world, |(entity, value)| seen.push((entity, value.0)));
    let mut expected = Vec::new();
    let mut number = 0.0;
    for (t, table) in tables.iter().enumerate() {
        for &entity in table {
            number += 1.0;
            if t != 1 {
                expected.push((entity, number));
            }
        }
    }
    assert_eq!(seen, expected);
}
