//! A `for` loop over a query steps a pointer from row to row for values
//! whose size cannot be a scaled index (3, 12 or 16 bytes): every row is
//! fetched once, in table order, with the right value, whatever mix of
//! `next`, `for_each` and adapters the caller uses, and over several tables.

use archetable::prelude::*;

/// 12 bytes, tracking changes.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
#[component(track_changes)]
struct Pos([f32; 3]);

/// 16 bytes.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
struct Vel([u32; 4]);

/// 3 bytes.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
struct Odd([u8; 3]);

/// 2 bytes: addressed from the row.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
struct Narrow(u16);

#[derive(Component)]
struct TagA;

#[derive(Component)]
struct TagB;

#[derive(Query)]
struct Mover<'w> {
    pos: &'w mut Pos,
    vel: &'w Vel,
    odd: Option<&'w Odd>,
}

fn pos(i: u32) -> Pos {
    Pos([i as f32, 2.0 * i as f32, 3.0 * i as f32])
}

fn vel(i: u32) -> Vel {
    Vel([i, i + 1, i + 2, i + 3])
}

fn odd(i: u32) -> Odd {
    Odd([i as u8, i as u8 + 1, i as u8 + 2])
}

/// Three tables of 7, 13 and 13 movers, the middle one with `Odd`, and an
/// entity with only a position. Entity `i` of the list has the values of
/// `i`.
fn world() -> (World, Vec<Entity>) {
    let mut world = World::new();
    let mut movers = Vec::new();
    for i in 0..33u32 {
        let e = match i {
            0..7 => world.spawn((pos(i), vel(i))),
            7..20 => world.spawn((pos(i), vel(i), odd(i), TagA)),
            _ => world.spawn((pos(i), vel(i), TagB, Narrow(i as u16))),
        };
        movers.push(e);
    }
    world.spawn(pos(100));
    (world, movers)
}

fn index_of(movers: &[Entity], e: Entity) -> u32 {
    movers.iter().position(|&m| m == e).expect("a mover") as u32
}

#[test]
fn a_for_loop_reads_every_row_of_every_table_once() {
    let (world, movers) = world();
    let mut seen = Vec::new();
    for (e, p, v, o, n) in world.query::<(Entity, &Pos, &Vel, Option<&Odd>, Option<&Narrow>)>() {
        let Some(i) = movers.iter().position(|&m| m == e) else { continue };
        let i = i as u32;
        assert_eq!((*p, *v), (pos(i), vel(i)), "entity {i}");
        assert_eq!(o.copied(), (7..20).contains(&i).then_some(odd(i)), "entity {i}");
        assert_eq!(n.copied(), (20..).contains(&i).then_some(Narrow(i as u16)), "entity {i}");
        seen.push(i);
    }
    seen.sort_unstable();
    assert_eq!(seen, (0..33).collect::<Vec<_>>());
    assert_eq!(world.query::<&Pos>().count(), 34);
}

#[test]
fn a_mutable_for_loop_writes_each_row_and_marks_it_changed() {
    let (mut world, movers) = world();
    let mut state = QueryState::<Entity, Changed<Pos>>::new(&mut world);
    state.iter(&world).for_each(drop);
    for (mut p, v) in world.query_mut::<(&mut Pos, &Vel)>() {
        p.0[0] += v.0[3] as f32;
    }
    for (i, &e) in movers.iter().enumerate() {
        let i = i as u32;
        let mut expected = pos(i);
        expected.0[0] += (i + 3) as f32;
        assert_eq!(world.get::<Pos>(e), Some(&expected), "entity {i}");
    }
    let mut changed: Vec<Entity> = state.iter(&world).collect();
    changed.sort();
    let mut expected = movers.clone();
    expected.sort();
    assert_eq!(changed, expected);
}

#[test]
fn next_then_for_each_on_the_rest_fetches_each_row_once() {
    let (mut world, movers) = world();
    let mut iter = world.query_mut::<(Entity, &mut Pos, &Vel)>();
    // Ten rows by `next`: across the switch from the first table to the
    // second; the rest by `for_each`.
    let mut firsts = Vec::new();
    for _ in 0..10 {
        let (e, mut p, v) = iter.next().expect("a row");
        p.0[1] += v.0[0] as f32 + 1000.0;
        firsts.push(e);
    }
    iter.for_each(|(_, mut p, v)| p.0[1] += v.0[0] as f32 + 1000.0);
    for (i, &e) in movers.iter().enumerate() {
        let i = i as u32;
        let mut expected = pos(i);
        expected.0[1] += i as f32 + 1000.0;
        assert_eq!(world.get::<Pos>(e), Some(&expected), "entity {i}");
    }
    assert_eq!(firsts.len(), 10);
}

#[test]
fn adapters_over_next_see_the_rows_in_iteration_order() {
    let (world, movers) = world();
    let all: Vec<Vel> = world.query::<&Vel>().copied().collect();
    let entities: Vec<Entity> = world.query::<(Entity, &Vel)>().map(|(e, _)| e).collect();
    let expected: Vec<Vel> = entities.iter().map(|&e| vel(index_of(&movers, e))).collect();
    assert_eq!(all, expected);
    let every_third: Vec<Vel> = world.query::<&Vel>().step_by(3).copied().collect();
    assert_eq!(every_third, all.iter().step_by(3).copied().collect::<Vec<_>>());
    let skipped: Vec<Vel> = world.query::<&Vel>().skip(8).take(9).copied().collect();
    assert_eq!(skipped, all[8..17]);
    let mut peek = world.query::<(Entity, &Vel)>().peekable();
    let (e, v) = *peek.peek().expect("a row");
    assert_eq!(*v, vel(index_of(&movers, e)));
    assert_eq!(peek.count(), 33);
}

#[test]
fn a_derived_query_in_a_for_loop_steps_its_fields_together() {
    let (mut world, movers) = world();
    let mut state = QueryState::<Mover>::new(&mut world);
    for mover in state.iter_mut(&mut world) {
        let extra = mover.odd.map_or(0.5, |o| o.0[2] as f32);
        mover.pos.0[2] = mover.vel.0[1] as f32 + extra;
    }
    for (i, &e) in movers.iter().enumerate() {
        let i = i as u32;
        let mut expected = pos(i);
        expected.0[2] = (i + 1) as f32 + if (7..20).contains(&i) { (i + 2) as f32 } else { 0.5 };
        assert_eq!(world.get::<Pos>(e), Some(&expected), "entity {i}");
    }
}
