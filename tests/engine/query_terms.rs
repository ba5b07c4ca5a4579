//! Query terms `Has<T>` and `AnyOf<(..)>`, and `iter_many` over a list of
//! handles on `QueryState` and the system `Query`.

use std::panic::{catch_unwind, AssertUnwindSafe};

use archetable::prelude::*;
use archetable::{AnyOf, Has};

#[derive(Component, Debug, PartialEq)]
struct Hp(u32);

#[derive(Component, Debug, PartialEq)]
struct Sword(u32);

#[derive(Component, Debug, PartialEq)]
struct Bow(u32);

#[derive(Component)]
struct Shield;

#[derive(Component)]
struct Never;

fn sorted<T: Ord>(mut v: Vec<T>) -> Vec<T> {
    v.sort();
    v
}

#[test]
fn has_is_a_flag_per_entity() {
    let mut world = World::new();
    let a = world.spawn((Hp(1), Shield));
    let b = world.spawn(Hp(2));
    let c = world.spawn(Shield);
    let flags = sorted(world.query::<(Entity, Has<Shield>)>().collect());
    assert_eq!(flags, sorted(vec![(a, true), (b, false), (c, true)]));
    // A type the world never saw: false everywhere, and still every entity.
    assert_eq!(world.query::<Has<Never>>().filter(|&has| !has).count(), 3);
    let mut state = QueryState::<(Entity, Has<Never>)>::new(&mut world);
    let d = world.spawn(Never);
    assert_eq!(sorted(state.iter(&world).filter(|&(_, has)| has).map(|(e, _)| e).collect()), [d]);
}

#[test]
fn has_borrows_nothing() {
    let mut world = World::new();
    world.spawn((Hp(10), Shield));
    world.spawn(Hp(10));
    // `&mut Hp` beside `Has<Hp>` is no alias.
    for (mut hp, has_hp, shielded) in world.query_mut::<(&mut Hp, Has<Hp>, Has<Shield>)>() {
        assert!(has_hp);
        hp.0 -= if shielded { 1 } else { 5 };
    }
    assert_eq!(sorted(world.query::<&Hp>().map(|hp| hp.0).collect()), [5, 9]);
    // Nor does a system conflict over it.
    fn both(mut hp: Query<&mut Hp>, flags: Query<Has<Hp>>) {
        assert_eq!(flags.iter().filter(|&f| f).count(), 2);
        hp.for_each_mut(|mut hp| hp.0 += 1);
    }
    let mut schedule = Schedule::new();
    schedule.add_system(both);
    schedule.run(&mut world);
    assert_eq!(sorted(world.query::<&Hp>().map(|hp| hp.0).collect()), [6, 10]);
}

#[test]
fn any_of_visits_entities_with_at_least_one_and_yields_options() {
    let mut world = World::new();
    let sword = world.spawn((Sword(3), Hp(1)));
    let both = world.spawn((Sword(2), Bow(5)));
    let bow = world.spawn(Bow(7));
    world.spawn(Hp(9));
    world.spawn(Shield);
    let mut seen: Vec<(Entity, Option<u32>, Option<u32>)> = world
        .query::<(Entity, AnyOf<(&Sword, &Bow)>)>()
        .map(|(e, (s, b))| (e, s.map(|s| s.0), b.map(|b| b.0)))
        .collect();
    seen.sort();
    assert_eq!(seen, sorted(vec![(sword, Some(3), None), (both, Some(2), Some(5)), (bow, None, Some(7))]));
    for (s, mut b) in world.query_mut::<AnyOf<(&Sword, &mut Bow)>>().map(|(s, b)| (s.map(|s| s.0), b)) {
        if let Some(b) = b.as_mut() {
            b.0 += s.unwrap_or(0);
        }
    }
    assert_eq!(world.get::<Bow>(both), Some(&Bow(7)));
    assert_eq!(world.get::<Bow>(bow), Some(&Bow(7)));
    // A type the world never saw counts as absent.
    assert_eq!(world.query::<AnyOf<(&Never, &Bow)>>().count(), 2);
    assert_eq!(world.query::<AnyOf<(&Never,)>>().count(), 0);
}

#[test]
fn any_of_in_a_state_sees_later_tables_and_refuses_aliasing() {
    let mut world = World::new();
    let mut state = QueryState::<(Entity, AnyOf<(&mut Sword, &Bow)>)>::new(&mut world);
    assert_eq!(state.iter_mut(&mut world).count(), 0);
    let a = world.spawn(Bow(1));
    let b = world.spawn((Sword(1), Hp(0)));
    world.spawn(Hp(0));
    assert_eq!(sorted(state.iter_mut(&mut world).map(|(e, _)| e).collect()), sorted(vec![a, b]));
    assert_eq!(state.matched_archetypes(), 2);
    let panic =
        catch_unwind(AssertUnwindSafe(|| QueryState::<AnyOf<(&mut Sword, &Sword)>>::new(&mut world))).unwrap_err();
    let message = panic.downcast_ref::<String>().unwrap();
    assert!(message.starts_with("error[E0001]"), "{message}");
}

#[test]
fn iter_many_skips_handles_that_do_not_match() {
    let mut world = World::new();
    let a = world.spawn((Hp(1), Shield));
    let b = world.spawn(Sword(0));
    let c = world.spawn(Hp(3));
    let gone = world.spawn(Hp(4));
    world.despawn(gone).unwrap();
    let mut state = QueryState::<(Entity, &Hp)>::new(&mut world);
    let listed: Vec<(Entity, u32)> = state.iter_many(&world, [c, gone, b, a, c]).map(|(e, hp)| (e, hp.0)).collect();
    assert_eq!(listed, [(c, 3), (a, 1), (c, 3)]);
    let mut shielded = QueryState::<&Hp, With<Shield>>::new(&mut world);
    assert_eq!(shielded.iter_many(&world, vec![a, b, c]).collect::<Vec<_>>(), [&Hp(1)]);
    assert_eq!(shielded.iter_many(&world, []).count(), 0);
}

#[derive(Default)]
struct Watch(Vec<Entity>, Vec<u32>);

fn watched(hp: Query<&Hp, Without<Shield>>, mut watch: ResMut<Watch>) {
    let list = watch.0.clone();
    watch.1 = hp.iter_many(list).map(|hp| hp.0).collect();
}

#[test]
fn system_query_iter_many() {
    let mut world = World::new();
    let a = world.spawn((Hp(1), Shield));
    let b = world.spawn(Hp(2));
    let c = world.spawn(Hp(3));
    world.insert_resource(Watch(vec![c, a, b, b], Vec::new()));
    let mut schedule = Schedule::new();
    schedule.add_system(watched);
    schedule.run(&mut world);
    assert_eq!(world.resource::<Watch>().1, [3, 2, 2]);
}

#[test]
fn iter_many_mut_visits_each_listed_match_one_at_a_time() {
    let mut world = World::new();
    let a = world.spawn(Hp(1));
    let b = world.spawn(Sword(0));
    let c = world.spawn((Hp(10), Shield));
    let gone = world.spawn(Hp(4));
    world.despawn(gone).unwrap();
    let mut state = QueryState::<(Entity, &mut Hp), Without<Shield>>::new(&mut world);
    let mut visited = Vec::new();
    let mut iter = state.iter_many_mut(&mut world, [a, b, c, gone, a]);
    while let Some((e, mut hp)) = iter.fetch_next() {
        hp.0 += 1;
        visited.push((e, hp.0));
    }
    assert_eq!(visited, [(a, 2), (a, 3)]);
    assert_eq!(world.get::<Hp>(c), Some(&Hp(10)));
}

#[derive(Default)]
struct Hits(Vec<Entity>);

fn hit(mut hp: Query<&mut Hp>, hits: Res<Hits>) {
    let mut iter = hp.iter_many_mut(hits.0.iter().copied());
    while let Some(mut hp) = iter.fetch_next() {
        hp.0 -= 1;
    }
}

#[test]
fn system_query_iter_many_mut() {
    let mut world = World::new();
    let a = world.spawn(Hp(5));
    let b = world.spawn(Hp(5));
    let bare = world.spawn(Shield);
    world.insert_resource(Hits(vec![a, bare, a, b, a]));
    let mut schedule = Schedule::new();
    schedule.add_system(hit);
    schedule.run(&mut world);
    assert_eq!((world.get::<Hp>(a), world.get::<Hp>(b)), (Some(&Hp(2)), Some(&Hp(4))));
}
