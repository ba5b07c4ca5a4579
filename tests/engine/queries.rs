//! Query correctness: fetched values, filters, optional fetches, counting,
//! internal versus external iteration, `QueryState`, aliasing checks, unusual
//! layouts (zero-sized, over-aligned, large components).

use std::any::type_name;
use std::collections::{BTreeMap, BTreeSet};
use std::panic::{catch_unwind, AssertUnwindSafe};

use archetable::prelude::*;

#[derive(Component, Debug, Clone, Copy, PartialEq)]
struct Pos(i64, i64);

#[derive(Component, Debug, Clone, Copy, PartialEq)]
struct Vel(i64, i64);

#[derive(Component, Debug, Clone, PartialEq)]
struct Label(String);

#[derive(Component, Debug, PartialEq)]
struct MarkA;

#[derive(Component, Debug, PartialEq)]
struct MarkB;

#[derive(Component, Debug, PartialEq)]
struct MarkC;

#[derive(Component, Debug, Clone, Copy, PartialEq)]
struct AliasedComp(u32);

#[derive(Component, Debug, Clone, Copy, PartialEq)]
#[repr(align(64))]
struct Aligned64 {
    v: u64,
    w: u8,
}

#[derive(Component, Debug, Clone, Copy, PartialEq)]
struct Big([u64; 32]);

fn big(i: u64) -> Big {
    let mut a = [0u64; 32];
    for (k, x) in a.iter_mut().enumerate() {
        *x = i * 1000 + k as u64;
    }
    Big(a)
}

fn set<I: IntoIterator<Item = Entity>>(it: I) -> BTreeSet<Entity> {
    it.into_iter().collect()
}

fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else {
        String::new()
    }
}

// ---------------------------------------------------------------- basic fetches

#[test]
fn query_fetches_exact_values() {
    let mut world = World::new();
    let mut expected = BTreeMap::new();
    for i in 0..100i64 {
        let e = if i % 3 == 0 {
            world.spawn((Pos(i, -i), Vel(i * 2, 1)))
        } else if i % 3 == 1 {
            world.spawn((Pos(i, -i), Vel(i * 2, 1), MarkA))
        } else {
            world.spawn((Pos(i, -i),))
        };
        expected.insert(e, i);
    }
    let got: BTreeMap<Entity, (Pos, Vel)> =
        world.query::<(Entity, &Pos, &Vel)>().map(|(e, p, v)| (e, (*p, *v))).collect();
    let want: BTreeMap<Entity, (Pos, Vel)> =
        expected.iter().filter(|&(_, &i)| i % 3 != 2).map(|(&e, &i)| (e, (Pos(i, -i), Vel(i * 2, 1)))).collect();
    assert_eq!(got, want);

    let all: BTreeMap<Entity, Pos> = world.query::<(Entity, &Pos)>().map(|(e, p)| (e, *p)).collect();
    assert_eq!(all.len(), 100);
    for (e, i) in &expected {
        assert_eq!(all[e], Pos(*i, -*i));
    }
}

#[test]
fn query_mut_writes_are_visible() {
    let mut world = World::new();
    let es: Vec<Entity> =
        (0..50i64)
            .map(|i| {
                if i % 2 == 0 {
                    world.spawn((Pos(i, 0), Vel(1, 2)))
                } else {
                    world.spawn((Pos(i, 0), Vel(1, 2), MarkA))
                }
            })
            .collect();
    for (mut p, v) in world.query_mut::<(&mut Pos, &Vel)>() {
        p.0 += v.0;
        p.1 += v.1;
    }
    world.query_mut::<&mut Vel>().for_each(|mut v| v.0 = 10);
    for (i, &e) in es.iter().enumerate() {
        assert_eq!(world.get::<Pos>(e), Some(&Pos(i as i64 + 1, 2)));
        assert_eq!(world.get::<Vel>(e), Some(&Vel(10, 2)));
    }
}

#[test]
fn query_single_entity_fetch() {
    let mut world = World::new();
    let a = world.spawn((MarkA,));
    let b = world.spawn(());
    assert_eq!(set(world.query::<Entity>()), set([a, b]));
    assert_eq!(world.query_mut::<Entity>().count(), 2);
}

#[test]
fn two_read_queries_at_once() {
    let mut world = World::new();
    for i in 0..10 {
        world.spawn((Pos(i, i), Vel(i, -i)));
    }
    let world = &world;
    let pairs: Vec<(i64, i64)> = world.query::<&Pos>().zip(world.query::<&Vel>()).map(|(p, v)| (p.0, v.0)).collect();
    assert_eq!(pairs.len(), 10);
    // Same table, same order.
    assert!(pairs.iter().all(|(a, b)| a == b));
}

#[test]
fn empty_world_and_unknown_types() {
    let mut world = World::new();
    assert_eq!(world.query::<&Pos>().count(), 0);
    assert_eq!(world.query::<(&Pos, &Vel)>().next(), None);
    assert_eq!(world.query_mut::<&mut Pos>().count(), 0);
    assert_eq!(world.query_filtered::<Entity, (With<MarkA>, Without<MarkB>)>().count(), 0);
    world.spawn((Pos(1, 1),));
    assert_eq!(world.query::<&Label>().count(), 0);
    assert_eq!(world.query_filtered::<&Pos, With<Label>>().count(), 0);
    assert_eq!(world.query_filtered::<&Pos, Without<Label>>().count(), 1);
}

// ---------------------------------------------------------------- swap-remove

#[test]
fn despawn_from_middle_keeps_all_other_rows() {
    let mut world = World::new();
    let es: Vec<Entity> = (0..200i64).map(|i| world.spawn((Pos(i, i * i), Label(format!("#{i}")), MarkA))).collect();
    let doomed: BTreeSet<usize> = (0..200).filter(|i| i % 7 == 3 || *i == 0 || *i == 199).collect();
    for &i in &doomed {
        world.despawn(es[i]).unwrap();
    }
    let want: BTreeMap<Entity, (Pos, Label)> = es
        .iter()
        .enumerate()
        .filter(|(i, _)| !doomed.contains(i))
        .map(|(i, &e)| {
            let i = i as i64;
            (e, (Pos(i, i * i), Label(format!("#{i}"))))
        })
        .collect();
    let got: BTreeMap<Entity, (Pos, Label)> =
        world.query::<(Entity, &Pos, &Label, &MarkA)>().map(|(e, p, l, _)| (e, (*p, l.clone()))).collect();
    assert_eq!(got, want);
    assert_eq!(world.len(), 200 - doomed.len());
    for (e, (p, l)) in &want {
        assert_eq!(world.get::<Pos>(*e), Some(p));
        assert_eq!(world.get::<Label>(*e), Some(l));
    }
}

#[test]
fn remove_component_from_middle_keeps_rows() {
    let mut world = World::new();
    let es: Vec<Entity> = (0..64i64).map(|i| world.spawn((Pos(i, 0), Vel(0, i)))).collect();
    for (i, &e) in es.iter().enumerate() {
        if i % 2 == 1 {
            assert_eq!(world.remove::<Vel>(e), Ok(Vel(0, i as i64)));
        }
    }
    let got: BTreeMap<Entity, (Pos, Option<Vel>)> =
        world.query::<(Entity, &Pos, Option<&Vel>)>().map(|(e, p, v)| (e, (*p, v.copied()))).collect();
    let want: BTreeMap<Entity, (Pos, Option<Vel>)> = es
        .iter()
        .enumerate()
        .map(|(i, &e)| {
            let v = (i % 2 == 0).then_some(Vel(0, i as i64));
            (e, (Pos(i as i64, 0), v))
        })
        .collect();
    assert_eq!(got, want);
}

// ---------------------------------------------------------------- filters

struct Model {
    a: BTreeSet<Entity>,
    b: BTreeSet<Entity>,
    c: BTreeSet<Entity>,
    all: BTreeSet<Entity>,
}

/// Spawns 64 entities: entity `i` has MarkA if bit 0, MarkB if bit 1, MarkC if bit 2,
/// Vel if bit 3, and always a Pos(i, 0).
fn filter_world() -> (World, Model) {
    let mut world = World::new();
    let mut m = Model { a: BTreeSet::new(), b: BTreeSet::new(), c: BTreeSet::new(), all: BTreeSet::new() };
    for i in 0..64i64 {
        let e = world.spawn((Pos(i, 0),));
        if i & 1 != 0 {
            world.insert(e, (MarkA,)).unwrap();
            m.a.insert(e);
        }
        if i & 2 != 0 {
            world.insert(e, (MarkB,)).unwrap();
            m.b.insert(e);
        }
        if i & 4 != 0 {
            world.insert(e, (MarkC,)).unwrap();
            m.c.insert(e);
        }
        if i & 8 != 0 {
            world.insert(e, (Vel(i, i),)).unwrap();
        }
        m.all.insert(e);
    }
    (world, m)
}

#[test]
fn filter_with_and_without() {
    let (world, m) = filter_world();
    assert_eq!(set(world.query_filtered::<Entity, With<MarkA>>()), m.a);
    assert_eq!(set(world.query_filtered::<Entity, Without<MarkA>>()), &m.all - &m.a);
    assert_eq!(set(world.query_filtered::<Entity, ()>()), m.all);
    assert_eq!(set(world.query_filtered::<Entity, (With<MarkA>, With<MarkB>)>()), &m.a & &m.b);
    assert_eq!(set(world.query_filtered::<Entity, (With<MarkA>, Without<MarkB>)>()), &m.a - &m.b);
    assert_eq!(
        set(world.query_filtered::<Entity, (Without<MarkA>, Without<MarkB>, Without<MarkC>)>()),
        &(&(&m.all - &m.a) - &m.b) - &m.c
    );
    assert_eq!(set(world.query_filtered::<Entity, (With<MarkA>, Without<MarkA>)>()), BTreeSet::new());
}

#[test]
fn filter_or() {
    let (world, m) = filter_world();
    assert_eq!(set(world.query_filtered::<Entity, Or<(With<MarkA>, With<MarkB>)>>()), &m.a | &m.b);
    assert_eq!(
        set(world.query_filtered::<Entity, Or<(With<MarkA>, With<MarkB>, With<MarkC>)>>()),
        &(&m.a | &m.b) | &m.c
    );
    assert_eq!(set(world.query_filtered::<Entity, Or<(With<MarkA>, Without<MarkB>)>>()), &m.a | &(&m.all - &m.b));
    assert_eq!(
        set(world.query_filtered::<Entity, (Or<(With<MarkA>, With<MarkB>)>, Without<MarkC>)>()),
        &(&m.a | &m.b) - &m.c
    );
    assert_eq!(
        set(world.query_filtered::<Entity, Or<((With<MarkA>, With<MarkB>), With<MarkC>)>>()),
        &(&m.a & &m.b) | &m.c
    );
}

#[test]
fn filters_combine_with_fetches() {
    let (mut world, m) = filter_world();
    let got: BTreeMap<Entity, i64> = world
        .query_filtered::<(Entity, &Pos, &Vel), Or<(With<MarkB>, With<MarkC>)>>()
        .map(|(e, p, v)| {
            assert_eq!(p.0, v.0);
            (e, p.0)
        })
        .collect();
    let want: BTreeSet<Entity> = (&m.b | &m.c).into_iter().filter(|e| world.has::<Vel>(*e)).collect();
    assert_eq!(got.keys().copied().collect::<BTreeSet<_>>(), want);
    assert_eq!(want.len(), 24);

    // Mutable filtered query only touches matching entities.
    for mut p in world.query_filtered_mut::<&mut Pos, (With<MarkA>, Without<MarkC>)>() {
        p.1 = 1;
    }
    let touched: BTreeSet<Entity> = world.query::<(Entity, &Pos)>().filter(|(_, p)| p.1 == 1).map(|(e, _)| e).collect();
    assert_eq!(touched, &m.a - &m.c);
}

#[test]
fn option_fetch() {
    let (mut world, m) = filter_world();
    let mut somes = BTreeSet::new();
    let mut nones = BTreeSet::new();
    for (e, p, v, a) in world.query::<(Entity, &Pos, Option<&Vel>, Option<&MarkA>)>() {
        match v {
            Some(v) => {
                assert_eq!(v.0, p.0);
                assert!(p.0 & 8 != 0);
                somes.insert(e);
            }
            None => {
                assert!(p.0 & 8 == 0);
                nones.insert(e);
            }
        }
        assert_eq!(a.is_some(), m.a.contains(&e));
    }
    assert_eq!(somes.len(), 32);
    assert_eq!(nones.len(), 32);

    for (p, v) in world.query_mut::<(&Pos, Option<&mut Vel>)>() {
        if let Some(mut v) = v {
            v.1 = -p.0;
        }
    }
    for e in &somes {
        let p = world.get::<Pos>(*e).unwrap().0;
        assert_eq!(world.get::<Vel>(*e), Some(&Vel(p, -p)));
    }
    // An Option of a never-registered type is always None.
    assert_eq!(world.query::<Option<&Label>>().filter(Option::is_none).count(), 64);
}

// ---------------------------------------------------------------- iteration

#[test]
fn count_for_each_fold_and_for_loop_agree() {
    let (world, _) = filter_world();
    // Many archetypes (16 combinations), with uneven sizes.
    let mut n_for = 0usize;
    let mut sum_for = 0i64;
    for p in world.query::<&Pos>() {
        n_for += 1;
        sum_for += p.0;
    }
    let mut n_each = 0usize;
    let mut sum_each = 0i64;
    world.query::<&Pos>().for_each(|p| {
        n_each += 1;
        sum_each += p.0;
    });
    let (n_fold, sum_fold) = world.query::<&Pos>().fold((0usize, 0i64), |(n, s), p| (n + 1, s + p.0));
    let sum_sum: i64 = world.query::<&Pos>().map(|p| p.0).sum();
    let n_count = world.query::<&Pos>().count();

    assert_eq!(n_for, 64);
    assert_eq!(sum_for, (0..64).sum::<i64>());
    assert_eq!((n_each, sum_each), (n_for, sum_for));
    assert_eq!((n_fold, sum_fold), (n_for, sum_for));
    assert_eq!(sum_sum, sum_for);
    assert_eq!(n_count, n_for);

    // Filtered versions agree too.
    let f_count = world.query_filtered::<&Pos, (With<MarkA>, Without<MarkB>)>().count();
    let f_loop = world.query_filtered::<&Pos, (With<MarkA>, Without<MarkB>)>().map(|_| 1).sum::<usize>();
    assert_eq!(f_count, 16);
    assert_eq!(f_loop, 16);
}

#[test]
fn partially_consumed_iterator_then_fold() {
    let (world, _) = filter_world();
    let mut it = world.query::<&Pos>();
    let first: Vec<i64> = it.by_ref().take(10).map(|p| p.0).collect();
    let rest: Vec<i64> = it.fold(Vec::new(), |mut v, p| {
        v.push(p.0);
        v
    });
    assert_eq!(first.len(), 10);
    assert_eq!(rest.len(), 54);
    let mut all: Vec<i64> = first.into_iter().chain(rest).collect();
    all.sort_unstable();
    assert_eq!(all, (0..64).collect::<Vec<_>>());

    let mut it = world.query::<&Pos>();
    for _ in 0..63 {
        assert!(it.next().is_some());
    }
    assert_eq!(it.count(), 1);
}

#[test]
fn size_hint_is_consistent() {
    let (world, _) = filter_world();
    let mut it = world.query_filtered::<&Pos, With<MarkB>>();
    let mut remaining = 32usize;
    loop {
        let (lo, hi) = it.size_hint();
        assert!(lo <= remaining, "lower bound {lo} > {remaining}");
        if let Some(hi) = hi {
            assert!(hi >= remaining, "upper bound {hi} < {remaining}");
        }
        if it.next().is_none() {
            break;
        }
        remaining -= 1;
    }
    assert_eq!(remaining, 0);
    let v: Vec<&Pos> = world.query::<&Pos>().collect();
    assert_eq!(v.len(), 64);
}

#[test]
fn large_dense_query() {
    let mut world = World::new();
    let _: Vec<Entity> = world.spawn_batch((0..10_000i64).map(|i| (Pos(i, 0), Vel(1, 1)))).collect();
    for (mut p, v) in world.query_mut::<(&mut Pos, &Vel)>() {
        p.1 += v.1 * p.0;
    }
    let total: i64 = world.query::<&Pos>().map(|p| p.1).sum();
    assert_eq!(total, (0..10_000i64).sum::<i64>());
    assert_eq!(world.query::<(&Pos, &Vel)>().count(), 10_000);
}

// ---------------------------------------------------------------- QueryState

#[test]
fn query_state_sees_new_archetypes() {
    let mut world = World::new();
    let a = world.spawn((Pos(1, 0),));
    let mut state = QueryState::<(Entity, &Pos)>::new(&mut world);
    assert_eq!(set(state.iter(&world).map(|(e, _)| e)), set([a]));

    let b = world.spawn((Pos(2, 0), MarkA));
    let c = world.spawn((Pos(3, 0), MarkB, Vel(0, 0)));
    let _d = world.spawn((MarkA,));
    assert_eq!(set(state.iter(&world).map(|(e, _)| e)), set([a, b, c]));

    world.insert(a, (MarkC,)).unwrap();
    let sum: i64 = state.iter(&world).map(|(_, p)| p.0).sum();
    assert_eq!(sum, 6);
    assert_eq!(state.iter(&world).count(), 3);

    world.despawn(b).unwrap();
    assert_eq!(set(state.iter(&world).map(|(e, _)| e)), set([a, c]));
}

#[test]
fn query_state_built_before_any_component_exists() {
    let mut world = World::new();
    let mut state = QueryState::<&mut Pos, Without<MarkA>>::new(&mut world);
    assert_eq!(state.iter_mut(&mut world).count(), 0);
    let e = world.spawn((Pos(5, 5),));
    let f = world.spawn((Pos(6, 6), MarkA));
    for mut p in state.iter_mut(&mut world) {
        p.0 += 100;
    }
    assert_eq!(world.get::<Pos>(e), Some(&Pos(105, 5)));
    assert_eq!(world.get::<Pos>(f), Some(&Pos(6, 6)));
}

#[test]
fn query_state_get_and_errors() {
    let mut world = World::new();
    let a = world.spawn((Pos(1, 1), Vel(2, 2)));
    let b = world.spawn((Pos(3, 3),));
    let c = world.spawn((Pos(4, 4), Vel(5, 5), MarkA));
    let mut state = QueryState::<(&Pos, &Vel), Without<MarkA>>::new(&mut world);

    assert_eq!(state.get(&world, a).ok(), Some((&Pos(1, 1), &Vel(2, 2))));
    match state.get(&world, b) {
        Err(QueryEntityError::QueryDoesNotMatch { entity, query }) => {
            assert_eq!(entity, b);
            assert!(!query.is_empty());
        }
        other => panic!("expected QueryDoesNotMatch, got {:?}", other.map(|_| ())),
    }
    assert!(matches!(
        state.get(&world, c),
        Err(QueryEntityError::QueryDoesNotMatch { entity, .. }) if entity == c
    ));

    let err = state.get(&world, b).map(|_| ()).unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains(&b.to_string()), "`{msg}` names {b}");

    world.despawn(a).unwrap();
    assert!(matches!(
        state.get(&world, a),
        Err(QueryEntityError::NoSuchEntity(e)) if e == a
    ));
    let err = state.get(&world, a).map(|_| ()).unwrap_err();
    assert!(err.to_string().contains(&a.to_string()));
}

#[test]
fn query_state_get_mut() {
    let mut world = World::new();
    let a = world.spawn((Pos(1, 1), Vel(2, 2)));
    let b = world.spawn((Pos(3, 3),));
    let mut state = QueryState::<(&mut Pos, &Vel)>::new(&mut world);
    {
        let (mut p, v) = state.get_mut(&mut world, a).unwrap();
        p.0 += v.0;
    }
    assert_eq!(world.get::<Pos>(a), Some(&Pos(3, 1)));
    assert!(matches!(
        state.get_mut(&mut world, b),
        Err(QueryEntityError::QueryDoesNotMatch { entity, .. }) if entity == b
    ));
    // A component added after the state was built makes it match.
    world.insert(b, (Vel(10, 10),)).unwrap();
    {
        let (mut p, _) = state.get_mut(&mut world, b).unwrap();
        p.1 = 99;
    }
    assert_eq!(world.get::<Pos>(b), Some(&Pos(3, 99)));
}

#[test]
fn query_state_iter_mut_and_iter() {
    let mut world = World::new();
    for i in 0..20 {
        if i % 2 == 0 {
            world.spawn((Pos(i, 0), Vel(1, 0)));
        } else {
            world.spawn((Pos(i, 0), Vel(1, 0), MarkB));
        }
    }
    let mut state = QueryState::<(&mut Pos, &Vel)>::new(&mut world);
    for _ in 0..3 {
        for (mut p, v) in state.iter_mut(&mut world) {
            p.0 += v.0;
        }
    }
    state.iter_mut(&mut world).for_each(|(mut p, _)| p.1 = p.0 * 2);
    let mut read = QueryState::<&Pos, With<MarkB>>::new(&mut world);
    let got: BTreeSet<(i64, i64)> = read.iter(&world).map(|p| (p.0, p.1)).collect();
    let want: BTreeSet<(i64, i64)> = (0..20).filter(|i| i % 2 == 1).map(|i| (i + 3, (i + 3) * 2)).collect();
    assert_eq!(got, want);
    assert_eq!(read.iter(&world).count(), 10);
}

#[test]
#[should_panic]
fn query_state_from_other_world_panics() {
    let mut w1 = World::new();
    let mut w2 = World::new();
    w1.spawn((Pos(1, 1),));
    w2.spawn((Pos(2, 2),));
    let mut state = QueryState::<&Pos>::new(&mut w1);
    let _ = state.iter(&w2).count();
}

#[test]
#[should_panic]
fn query_state_get_from_other_world_panics() {
    let mut w1 = World::new();
    let mut w2 = World::new();
    let _a = w1.spawn((Pos(1, 1),));
    let b = w2.spawn((Pos(2, 2),));
    let mut state = QueryState::<&mut Pos>::new(&mut w1);
    let _ = state.get_mut(&mut w2, b).is_ok();
}

#[test]
fn query_state_from_other_world_panics_even_when_identical() {
    // Two worlds with the same history must still be told apart.
    let mut w1 = World::new();
    let mut w2 = World::new();
    w1.spawn((Pos(1, 1),));
    w2.spawn((Pos(1, 1),));
    let mut state = QueryState::<&mut Pos>::new(&mut w1);
    let r = catch_unwind(AssertUnwindSafe(|| {
        state.iter_mut(&mut w2).count();
    }));
    assert!(r.is_err(), "a state used with another world must panic");
}

// ---------------------------------------------------------------- aliasing

#[test]
#[should_panic(expected = "AliasedComp")]
fn aliasing_mut_and_ref_panics_in_query_state() {
    let mut world = World::new();
    world.spawn((AliasedComp(1),));
    let _state = QueryState::<(&mut AliasedComp, &AliasedComp)>::new(&mut world);
}

#[test]
#[should_panic(expected = "AliasedComp")]
fn aliasing_mut_and_mut_panics_in_query_state() {
    let mut world = World::new();
    let _state = QueryState::<(&mut AliasedComp, &mut AliasedComp)>::new(&mut world);
}

#[test]
#[should_panic(expected = "AliasedComp")]
fn aliasing_mut_and_ref_panics_in_query_mut() {
    let mut world = World::new();
    world.spawn((AliasedComp(1),));
    let _ = world.query_mut::<(&AliasedComp, &mut AliasedComp)>().count();
}

#[test]
#[should_panic(expected = "AliasedComp")]
fn aliasing_mut_and_mut_panics_in_query_mut() {
    let mut world = World::new();
    world.spawn((AliasedComp(1),));
    let _ = world.query_mut::<(&mut AliasedComp, &mut AliasedComp)>().count();
}

type Check = (&'static str, Box<dyn Fn()>);

#[test]
fn aliasing_panics_even_on_empty_world_and_names_type() {
    let checks: Vec<Check> = vec![
        (
            "query_mut (&mut, &) empty world",
            Box::new(|| {
                let mut w = World::new();
                let _ = w.query_mut::<(&mut AliasedComp, &AliasedComp)>().count();
            }),
        ),
        (
            "nested tuple",
            Box::new(|| {
                let mut w = World::new();
                w.spawn((AliasedComp(1), Pos(0, 0)));
                let _ = QueryState::<(&mut AliasedComp, (&Pos, &AliasedComp))>::new(&mut w);
            }),
        ),
        (
            "Option<&A> beside &mut A",
            Box::new(|| {
                let mut w = World::new();
                w.spawn((AliasedComp(1),));
                let _ = QueryState::<(Option<&AliasedComp>, &mut AliasedComp)>::new(&mut w);
            }),
        ),
        (
            "Option<&mut A> beside &A",
            Box::new(|| {
                let mut w = World::new();
                w.spawn((AliasedComp(1),));
                let _ = w.query_filtered_mut::<(&AliasedComp, Option<&mut AliasedComp>), ()>().count();
            }),
        ),
    ];
    for (what, f) in checks {
        let r = catch_unwind(AssertUnwindSafe(f));
        let msg = panic_message(r.expect_err(what));
        assert!(
            msg.contains("AliasedComp"),
            "{what}: panic message `{msg}` should name {}",
            type_name::<AliasedComp>()
        );
    }
}

#[test]
fn non_aliasing_queries_are_accepted() {
    let mut world = World::new();
    let e = world.spawn((AliasedComp(1), Pos(2, 2)));
    // Two shared borrows of one type are fine.
    assert_eq!(world.query::<(&AliasedComp, &AliasedComp)>().count(), 1);
    assert_eq!(world.query_mut::<(&AliasedComp, Option<&AliasedComp>)>().count(), 1);
    // Filters on the mutably fetched type do not alias.
    assert_eq!(world.query_filtered_mut::<&mut AliasedComp, With<AliasedComp>>().count(), 1);
    let mut s = QueryState::<(&mut AliasedComp, &mut Pos, Entity, Entity)>::new(&mut world);
    let (mut a, mut p, e1, e2) = s.get_mut(&mut world, e).unwrap();
    a.0 = 7;
    p.0 = 8;
    assert_eq!((e1, e2), (e, e));
    assert_eq!(world.get::<AliasedComp>(e), Some(&AliasedComp(7)));
    assert_eq!(world.get::<Pos>(e), Some(&Pos(8, 2)));
}

// ---------------------------------------------------------------- layouts

#[test]
fn zero_sized_markers() {
    let mut world = World::new();
    let mut marked = BTreeSet::new();
    for i in 0..100 {
        let e = if i % 3 == 0 {
            world.spawn((MarkA,))
        } else if i % 3 == 1 {
            world.spawn((MarkA, MarkB, Pos(i, 0)))
        } else {
            world.spawn((Pos(i, 0),))
        };
        if i % 3 != 2 {
            marked.insert(e);
        }
    }
    assert_eq!(set(world.query::<(Entity, &MarkA)>().map(|(e, _)| e)), marked);
    assert_eq!(world.query::<&MarkA>().count(), marked.len());
    assert_eq!(world.query::<(&MarkA, &MarkB)>().count(), 33);
    assert_eq!(world.query_mut::<&mut MarkB>().count(), 33);
    assert_eq!(world.query_filtered::<&Pos, With<MarkB>>().count(), 33);
    let sum: i64 = world.query_filtered::<&Pos, With<MarkB>>().map(|p| p.0).sum();
    assert_eq!(sum, (0..100).filter(|i| i % 3 == 1).sum::<i64>());
    // Marker-only entities with markers removed and re-added.
    for &e in &marked {
        assert_eq!(world.remove::<MarkA>(e), Ok(MarkA));
    }
    assert_eq!(world.query::<&MarkA>().count(), 0);
    for &e in &marked {
        world.insert(e, MarkA).unwrap();
    }
    assert_eq!(world.query::<&MarkA>().count(), 67);
}

#[test]
fn over_aligned_component_keeps_alignment_and_values() {
    assert_eq!(std::mem::align_of::<Aligned64>(), 64);
    let mut world = World::new();
    let mut es = Vec::new();
    for i in 0..300u64 {
        let a = Aligned64 { v: i * 3, w: (i % 251) as u8 };
        let e = match i % 3 {
            0 => world.spawn((a,)),
            1 => world.spawn((MarkA, a, Pos(i as i64, 0))),
            _ => world.spawn((Label(format!("{i}")), a)),
        };
        es.push(e);
    }
    // Moves between tables.
    for (i, &e) in es.iter().enumerate() {
        if i % 4 == 0 {
            world.insert(e, (MarkB, Vel(1, 1))).unwrap();
        }
        if i % 10 == 0 {
            world.despawn(e).unwrap();
        }
    }
    let check = |a: &Aligned64, i: u64| {
        assert_eq!((a as *const Aligned64 as usize) % 64, 0, "misaligned");
        assert_eq!(a.v, i * 3);
        assert_eq!(a.w, (i % 251) as u8);
    };
    for (i, &e) in es.iter().enumerate() {
        if i % 10 == 0 {
            continue;
        }
        check(world.get::<Aligned64>(e).unwrap(), i as u64);
    }
    let mut seen = 0;
    for (a, _) in world.query::<(&Aligned64, Entity)>() {
        check(a, a.v / 3);
        seen += 1;
    }
    assert_eq!(seen, 270);
    for mut a in world.query_mut::<&mut Aligned64>() {
        let addr = &mut *a as *mut Aligned64 as usize;
        assert_eq!(addr % 64, 0);
        a.v += 3;
    }
    for (i, &e) in es.iter().enumerate() {
        if i % 10 != 0 {
            assert_eq!(world.get::<Aligned64>(e).unwrap().v, i as u64 * 3 + 3);
        }
    }
    let removed = world.remove::<Aligned64>(es[1]).unwrap();
    assert_eq!(removed.v, 6);
}

#[test]
fn big_component_keeps_values() {
    assert_eq!(std::mem::size_of::<Big>(), 256);
    let mut world = World::new();
    let es: Vec<Entity> = (0..200u64)
        .map(|i| {
            if i % 2 == 0 {
                world.spawn((big(i), Pos(i as i64, 0)))
            } else {
                world.spawn((Pos(i as i64, 0), MarkA, big(i)))
            }
        })
        .collect();
    for (i, &e) in es.iter().enumerate() {
        if i % 3 == 0 {
            world.despawn(e).unwrap();
        } else if i % 3 == 1 {
            world.insert(e, (MarkC,)).unwrap();
        }
    }
    for (i, &e) in es.iter().enumerate() {
        if i % 3 != 0 {
            assert_eq!(world.get::<Big>(e), Some(&big(i as u64)));
        }
    }
    let mut n = 0;
    for (b, p) in world.query::<(&Big, &Pos)>() {
        assert_eq!(*b, big(p.0 as u64));
        assert_eq!((b as *const Big as usize) % std::mem::align_of::<Big>(), 0);
        n += 1;
    }
    assert_eq!(n, 200 - 67);
    for mut b in world.query_mut::<&mut Big>() {
        b.0[31] = 7;
    }
    assert!(world.query::<&Big>().all(|b| b.0[31] == 7));
}

#[derive(Component, Debug, PartialEq)]
struct NeverSpawned;

#[derive(Component, Debug, PartialEq)]
#[repr(align(16))]
struct AlignedMarker;

#[test]
fn filters_naming_unregistered_types_through_shared_world() {
    let (world, m) = filter_world();
    // `NeverSpawned` was never registered: `&World` queries cannot register it.
    assert_eq!(set(world.query_filtered::<Entity, Or<(With<NeverSpawned>, With<MarkA>)>>()), m.a);
    assert_eq!(set(world.query_filtered::<Entity, Or<(Without<NeverSpawned>, With<MarkA>)>>()), m.all);
    assert_eq!(set(world.query_filtered::<Entity, (Without<NeverSpawned>, With<MarkB>)>()), m.b);
    assert_eq!(set(world.query_filtered::<Entity, (With<NeverSpawned>, With<MarkB>)>()), BTreeSet::new());
    assert_eq!(world.query::<(Entity, Option<&NeverSpawned>)>().filter(|(_, n)| n.is_none()).count(), 64);
    assert_eq!(world.query::<(Entity, &NeverSpawned)>().count(), 0);
}

#[test]
fn aligned_zero_sized_marker() {
    assert_eq!(std::mem::size_of::<AlignedMarker>(), 0);
    let mut world = World::new();
    let es: Vec<Entity> = (0..10)
        .map(|i| if i % 2 == 0 { world.spawn((AlignedMarker, Pos(i, 0))) } else { world.spawn((AlignedMarker,)) })
        .collect();
    for &e in &es {
        let m = world.get::<AlignedMarker>(e).unwrap();
        assert_eq!((m as *const AlignedMarker as usize) % 16, 0);
    }
    let mut n = 0;
    for (e, mut m) in world.query_mut::<(Entity, &mut AlignedMarker)>() {
        assert!(es.contains(&e));
        assert_eq!((&mut *m as *mut AlignedMarker as usize) % 16, 0);
        n += 1;
    }
    assert_eq!(n, 10);
    assert_eq!(world.remove::<AlignedMarker>(es[3]), Ok(AlignedMarker));
    assert_eq!(world.query::<&AlignedMarker>().count(), 9);
}

#[test]
fn query_state_survives_clear() {
    let mut world = World::new();
    for i in 0..10 {
        world.spawn((Pos(i, 0), MarkA));
    }
    let mut state = QueryState::<(Entity, &Pos), With<MarkA>>::new(&mut world);
    assert_eq!(state.iter(&world).count(), 10);
    world.clear();
    assert_eq!(state.iter(&world).count(), 0);
    let e = world.spawn((Pos(42, 0), MarkA));
    let _f = world.spawn((Pos(43, 0),));
    let got: Vec<(Entity, Pos)> = state.iter(&world).map(|(e, p)| (e, *p)).collect();
    assert_eq!(got, vec![(e, Pos(42, 0))]);
    assert_eq!(state.get(&world, e).map(|(_, p)| *p), Ok(Pos(42, 0)));
}

// ------------------------------------------------------------------ query_one

#[test]
fn query_one_reads_several_components_of_one_entity() {
    let mut world = World::new();
    let a = world.spawn((Pos(1, 2), Vel(3, 4), Label("a".into())));
    let b = world.spawn((Pos(5, 6),));
    let (pos, vel, label) = world.query_one::<(&Pos, Option<&Vel>, Option<&Label>)>(a).unwrap();
    assert_eq!((pos, vel, label.map(|l| l.0.as_str())), (&Pos(1, 2), Some(&Vel(3, 4)), Some("a")));
    let (pos, vel, label) = world.query_one::<(&Pos, Option<&Vel>, Option<&Label>)>(b).unwrap();
    assert_eq!((pos, vel, label.is_none()), (&Pos(5, 6), None, true));
    assert_eq!(world.query_one::<Entity>(b), Ok(b));
}

#[test]
fn query_one_errors_name_the_entity_and_query() {
    let mut world = World::new();
    let a = world.spawn((Pos(1, 2),));
    assert_eq!(
        world.query_one::<&Vel>(a).unwrap_err(),
        QueryEntityError::QueryDoesNotMatch { entity: a, query: type_name::<&Vel>() }
    );
    // A component type this world has never seen.
    assert_eq!(
        world.query_one::<&Big>(a).unwrap_err(),
        QueryEntityError::QueryDoesNotMatch { entity: a, query: type_name::<&Big>() }
    );
    world.despawn(a).unwrap();
    assert_eq!(world.query_one::<&Pos>(a).unwrap_err(), QueryEntityError::NoSuchEntity(a));
    assert_eq!(world.query_one_mut::<&mut Pos>(a).unwrap_err(), QueryEntityError::NoSuchEntity(a));
}

#[test]
fn query_one_mut_writes_through() {
    let mut world = World::new();
    let a = world.spawn((Pos(1, 2), Vel(10, 20)));
    let other = world.spawn((Pos(0, 0), Vel(1, 1)));
    {
        let (mut pos, vel) = world.query_one_mut::<(&mut Pos, &Vel)>(a).unwrap();
        pos.0 += vel.0;
        pos.1 += vel.1;
    }
    assert_eq!(world.get::<Pos>(a), Some(&Pos(11, 22)));
    assert_eq!(world.get::<Pos>(other), Some(&Pos(0, 0)));
}

#[test]
fn query_one_mut_that_aliases_panics_naming_the_component() {
    let mut world = World::new();
    let a = world.spawn((AliasedComp(1),));
    let payload = catch_unwind(AssertUnwindSafe(|| {
        let _ = world.query_one_mut::<(&mut AliasedComp, &AliasedComp)>(a);
    }))
    .unwrap_err();
    assert!(panic_message(payload).contains(type_name::<AliasedComp>()));
}

/// A hand-written filter that passes everything, except that its
/// `matches` panics while `TRIPWIRE` counts down to zero: a third-party
/// filter that panics while a query state meets new tables.
mod panicking_filter {
    use std::sync::atomic::{AtomicI32, Ordering};

    use archetable::storage::{Archetype, Components, TableRef};
    use archetable::{QueryFilter, RunTicks};

    /// Archetypes `matches` may still accept before it panics; negative:
    /// never panics.
    pub static TRIPWIRE: AtomicI32 = AtomicI32::new(-1);

    pub struct Tripwire;

    // SAFETY: reads nothing, and passes every row of every archetype it
    // accepts, so it is archetypal.
    #[allow(unsafe_code)]
    unsafe impl QueryFilter for Tripwire {
        type State = ();
        type Fetch<'w> = ();
        const IS_ARCHETYPAL: bool = true;

        fn init_state(_: &mut Components) {}

        fn get_state(_: &Components) -> Option<()> {
            Some(())
        }

        fn matches(_: &(), _: &Archetype) -> bool {
            let left = TRIPWIRE.load(Ordering::Relaxed);
            if left == 0 {
                TRIPWIRE.store(-1, Ordering::Relaxed);
                panic!("the filter gave up");
            }
            if left > 0 {
                TRIPWIRE.store(left - 1, Ordering::Relaxed);
            }
            true
        }

        fn dangling_fetch<'w>() -> Self::Fetch<'w> {}

        unsafe fn init_fetch<'w>(_: &(), _: TableRef<'w>, _: RunTicks) {}

        unsafe fn filter_row(_: &mut (), _: usize) -> bool {
            true
        }
    }
}

#[test]
fn a_filter_that_panics_while_the_state_meets_new_tables_leaves_the_state_exact() {
    use std::sync::atomic::Ordering;

    use panicking_filter::{Tripwire, TRIPWIRE};

    let mut world = World::new();
    let a = world.spawn(Pos(1, 0));
    let mut state = QueryState::<&Pos, Tripwire>::new(&mut world);
    assert_eq!(state.iter(&world).map(|p| p.0).collect::<Vec<_>>(), [1]);

    // Two new tables: the filter accepts the first, then panics on the second.
    let b = world.spawn((Pos(2, 0), MarkA));
    let c = world.spawn((Pos(3, 0), MarkB));
    TRIPWIRE.store(1, Ordering::Relaxed);
    let caught = catch_unwind(AssertUnwindSafe(|| state.iter(&world).count()));
    assert!(caught.is_err());

    // Each entity once, and each handle finds its own row.
    let mut seen: Vec<i64> = state.iter(&world).map(|p| p.0).collect();
    seen.sort_unstable();
    assert_eq!(seen, [1, 2, 3]);
    for (entity, hp) in [(a, 1), (b, 2), (c, 3)] {
        assert_eq!(state.get(&world, entity).map(|p| p.0), Ok(hp));
    }
}
