//! `iter_combinations` (read-only and lending) and exact query lengths.

use archetable::prelude::*;

#[derive(Component, Debug, PartialEq, Clone, Copy)]
struct Pos(i32);

#[derive(Component)]
struct Heavy;

#[derive(Component, Debug, PartialEq)]
#[component(track_changes)]
struct Hp(u32);

fn spawn_mixed(world: &mut World) -> Vec<Entity> {
    // Two tables: plain and heavy, so combinations cross archetypes.
    vec![world.spawn(Pos(1)), world.spawn((Pos(2), Heavy)), world.spawn(Pos(3)), world.spawn((Pos(4), Heavy))]
}

#[test]
fn pairs_and_triples_visit_every_set_once_in_query_order() {
    let mut world = World::new();
    spawn_mixed(&mut world);
    let mut state = QueryState::<&Pos>::new(&mut world);
    let order: Vec<i32> = state.iter(&world).map(|p| p.0).collect();
    assert_eq!(order, [1, 3, 2, 4]);
    let pairs: Vec<[i32; 2]> = state.iter_combinations::<2>(&world).map(|[a, b]| [a.0, b.0]).collect();
    assert_eq!(pairs, [[1, 3], [1, 2], [1, 4], [3, 2], [3, 4], [2, 4]]);
    let triples: Vec<[i32; 3]> = state.iter_combinations::<3>(&world).map(|t| t.map(|p| p.0)).collect();
    assert_eq!(triples, [[1, 3, 2], [1, 3, 4], [1, 2, 4], [3, 2, 4]]);
    assert_eq!(state.iter_combinations::<4>(&world).count(), 1);
    assert_eq!(state.iter_combinations::<5>(&world).count(), 0);
    assert_eq!(state.iter_combinations::<0>(&world).count(), 0);
    assert_eq!(state.iter_combinations::<1>(&world).count(), 4);
}

#[test]
fn combinations_respect_filters() {
    let mut world = World::new();
    spawn_mixed(&mut world);
    let mut heavy = QueryState::<&Pos, With<Heavy>>::new(&mut world);
    let pairs: Vec<[i32; 2]> = heavy.iter_combinations::<2>(&world).map(|[a, b]| [a.0, b.0]).collect();
    assert_eq!(pairs, [[2, 4]]);

    let e: Vec<Entity> = (0..3).map(|i| world.spawn(Hp(i))).collect();
    let mut changed = QueryState::<&Hp, Changed<Hp>>::new(&mut world);
    assert_eq!(changed.iter_combinations::<2>(&world).count(), 3, "all new on the first pass");
    assert_eq!(changed.iter_combinations::<2>(&world).count(), 0);
    world.get_mut::<Hp>(e[0]).unwrap().0 = 10;
    world.get_mut::<Hp>(e[2]).unwrap().0 = 12;
    let pairs: Vec<[u32; 2]> = changed.iter_combinations::<2>(&world).map(|[a, b]| [a.0, b.0]).collect();
    assert_eq!(pairs, [[10, 12]]);
}

#[test]
fn the_lending_form_writes_every_pair() {
    let mut world = World::new();
    let all = spawn_mixed(&mut world);
    let mut state = QueryState::<&mut Pos>::new(&mut world);
    let mut pairs = state.iter_combinations_mut::<2>(&mut world);
    let mut n = 0;
    while let Some([mut a, mut b]) = pairs.fetch_next() {
        a.0 += 100;
        b.0 += 1000;
        n += 1;
    }
    assert_eq!(n, 6);
    // In visiting order 1, 3, 2, 4: the k-th entity is first in (3 - k)
    // pairs and second in k.
    let got: Vec<i32> = all.iter().map(|&e| world.get::<Pos>(e).unwrap().0).collect();
    assert_eq!(got, [1 + 300, 2 + 100 + 2000, 3 + 200 + 1000, 4 + 3000]);
}

#[test]
fn the_lending_form_marks_writes_changed() {
    let mut world = World::new();
    let e: Vec<Entity> = (0..3).map(|i| world.spawn(Hp(i))).collect();
    let mut seen = QueryState::<Entity, Changed<Hp>>::new(&mut world);
    assert_eq!(seen.iter(&world).count(), 3);
    let mut state = QueryState::<(Entity, &mut Hp)>::new(&mut world);
    let mut pairs = state.iter_combinations_mut::<2>(&mut world);
    while let Some([(a, mut hp), _]) = pairs.fetch_next() {
        if a == e[1] {
            hp.0 += 1;
        }
    }
    assert_eq!(seen.iter(&world).collect::<Vec<_>>(), [e[1]]);
}

#[derive(Default)]
struct Out(Vec<[i32; 2]>);

fn collect_pairs(bodies: Query<&Pos, Without<Heavy>>, mut out: ResMut<Out>) {
    out.0 = bodies.iter_combinations::<2>().map(|[a, b]| [a.0, b.0]).collect();
}

fn push_apart(mut bodies: Query<&mut Pos>) {
    let mut pairs = bodies.iter_combinations_mut::<2>();
    while let Some([a, mut b]) = pairs.fetch_next() {
        if b.0 < a.0 {
            b.0 = a.0 + 1;
        }
    }
}

#[test]
fn system_queries_have_both_forms() {
    let mut world = World::new();
    spawn_mixed(&mut world);
    world.spawn(Pos(0));
    world.init_resource::<Out>();
    world.run_system_once(collect_pairs);
    assert_eq!(world.resource::<Out>().0, [[1, 3], [1, 0], [3, 0]]);
    world.run_system_once(push_apart);
    let order: Vec<i32> = world.query::<&Pos>().map(|p| p.0).collect();
    // Visiting order: [1, 3, 0] then [2, 4]. Pairs in order: (1, 0) moves
    // 0 to 2, (3, 2) moves it to 4, (3, 2) moves the heavy 2 to 4; the rest
    // are in order already.
    assert_eq!(order, [1, 3, 4, 4, 4]);
}

#[test]
fn len_is_exact_with_archetypal_filters() {
    let mut world = World::new();
    spawn_mixed(&mut world);
    world.spawn(Heavy);
    assert_eq!(world.query::<&Pos>().len(), 4);
    assert_eq!(world.query_filtered::<&Pos, With<Heavy>>().len(), 2);
    assert_eq!(world.query_filtered::<Entity, Or<(With<Pos>, With<Heavy>)>>().len(), 5);
    assert_eq!(world.query_filtered::<Entity, (With<Heavy>, Without<Pos>)>().len(), 1);
    let mut iter = world.query_mut::<&mut Pos>();
    assert_eq!(iter.len(), 4);
    iter.next();
    iter.next();
    iter.next();
    assert_eq!(iter.len(), 1);
    iter.next();
    assert_eq!(iter.len(), 0);
    let mut state = QueryState::<&Pos, Without<Heavy>>::new(&mut world);
    assert_eq!(state.iter(&world).len(), 2);
    assert_eq!(state.iter_mut(&mut world).len(), 2);
}

#[test]
fn len_in_a_system() {
    #[derive(Default)]
    struct Count(usize);
    fn count(pos: Query<&Pos, With<Heavy>>, mut n: ResMut<Count>) {
        n.0 = pos.iter().len();
    }
    let mut world = World::new();
    spawn_mixed(&mut world);
    world.init_resource::<Count>();
    world.run_system_once(count);
    assert_eq!(world.resource::<Count>().0, 2);
}
