//! Many entities at once through one query: `World::query_many(_mut)`,
//! `QueryState::get_many(_mut)` and `Query::get_many(_mut)` in systems. A
//! handle named twice in a mutable fetch is an error, never two `&mut`.

use archetable::prelude::*;

#[derive(Component, Debug, PartialEq)]
#[component(track_changes)]
struct Health(u32);

#[derive(Component, Debug, PartialEq)]
struct Name(&'static str);

#[derive(Component, Debug, PartialEq)]
struct Target(Entity);

fn three(world: &mut World) -> [Entity; 3] {
    [world.spawn((Health(10), Name("a"))), world.spawn((Health(20), Name("b"))), world.spawn(Health(30))]
}

#[test]
fn world_query_many_mut_gives_each_entity_its_own_item() {
    let mut world = World::new();
    let [a, b, c] = three(&mut world);
    let [mut x, mut y] = world.query_many_mut::<&mut Health, 2>([a, b]).unwrap();
    std::mem::swap(&mut x.0, &mut y.0);
    let [(_, hc), (ea, ha)] = world.query_many_mut::<(Entity, &mut Health), 2>([c, a]).unwrap();
    assert_eq!((ea, ha.0, hc.0), (a, 20, 30));
    let values: Vec<u32> = [a, b, c].iter().map(|&e| world.get::<Health>(e).unwrap().0).collect();
    assert_eq!(values, [20, 10, 30]);
    let names = world.query_many::<&Name, 3>([b, a, b]).unwrap();
    assert_eq!(names, [&Name("b"), &Name("a"), &Name("b")]);
}

#[test]
fn a_duplicate_entity_is_an_error_before_anything_is_fetched() {
    let mut world = World::new();
    let [a, b, c] = three(&mut world);
    assert_eq!(world.query_many_mut::<&mut Health, 3>([a, b, a]).err(), Some(QueryEntityError::AliasedMutability(a)));
    // Checked before liveness and matching.
    world.despawn(c).unwrap();
    assert_eq!(world.query_many_mut::<&mut Health, 3>([c, b, b]).err(), Some(QueryEntityError::AliasedMutability(b)));
    let mut state = QueryState::<&mut Health>::new(&mut world);
    assert_eq!(state.get_many_mut(&mut world, [b, b]).err(), Some(QueryEntityError::AliasedMutability(b)));
    // Read-only fetches may repeat an entity.
    assert_eq!(world.query_many::<&Health, 2>([a, a]).unwrap(), [&Health(10), &Health(10)]);
}

#[test]
fn the_first_missing_or_unmatched_entity_is_reported() {
    let mut world = World::new();
    let [a, b, c] = three(&mut world);
    world.despawn(b).unwrap();
    assert_eq!(world.query_many_mut::<&mut Health, 3>([a, b, c]).err(), Some(QueryEntityError::NoSuchEntity(b)));
    let error = world.query_many_mut::<(&mut Health, &Name), 2>([a, c]).err().unwrap();
    assert!(matches!(error, QueryEntityError::QueryDoesNotMatch { entity, .. } if entity == c), "{error:?}");
    let mut state = QueryState::<&Name>::new(&mut world);
    assert!(matches!(
        state.get_many(&world, [a, c]),
        Err(QueryEntityError::QueryDoesNotMatch { entity, .. }) if entity == c
    ));
    // Nothing was written by the failed fetches.
    assert_eq!(world.get::<Health>(a), Some(&Health(10)));
    assert_eq!(world.query_many::<&Health, 0>([]).unwrap(), [] as [&Health; 0]);
}

#[test]
fn query_state_get_many_mut_honours_its_filter_and_marks_changes() {
    let mut world = World::new();
    let [a, b, c] = three(&mut world);
    let mut named = QueryState::<&mut Health, With<Name>>::new(&mut world);
    let [mut x, mut y] = named.get_many_mut(&mut world, [b, a]).unwrap();
    x.0 += 1;
    y.0 += 2;
    assert!(matches!(
        named.get_many_mut(&mut world, [a, c]),
        Err(QueryEntityError::QueryDoesNotMatch { entity, .. }) if entity == c
    ));
    assert_eq!(world.query_many::<&Health, 2>([a, b]).unwrap(), [&Health(12), &Health(21)]);
    let mut changed = QueryState::<Entity, Changed<Health>>::new(&mut world);
    changed.iter(&world).for_each(drop);
    let [mut x] = named.get_many_mut(&mut world, [a]).unwrap();
    x.0 = 0;
    assert_eq!(changed.iter(&world).collect::<Vec<_>>(), [a]);
}

#[derive(Default)]
struct Pairs(Vec<(Entity, Entity)>, Vec<String>);

/// Moves one point of health from each target to its attacker.
fn drain(attackers: Query<(Entity, &Target)>, mut health: Query<&mut Health>, mut pairs: ResMut<Pairs>) {
    for (attacker, target) in attackers.iter() {
        match health.get_many_mut([attacker, target.0]) {
            Ok([mut me, mut them]) => {
                them.0 -= 1;
                me.0 += 1;
            }
            Err(error) => pairs.1.push(error.to_string()),
        }
    }
}

fn read_pairs(health: Query<&Health>, mut pairs: ResMut<Pairs>) {
    let list = pairs.0.clone();
    for (x, y) in list {
        let [hx, hy] = health.get_many([x, y]).unwrap();
        pairs.1.push(format!("{} {}", hx.0, hy.0));
    }
}

#[test]
fn system_queries_fetch_pairs() {
    let mut world = World::new();
    let victim = world.spawn(Health(5));
    let attacker = world.spawn((Health(1), Target(victim)));
    let confused = world.spawn(Health(7));
    world.insert(confused, Target(confused)).unwrap();
    world.insert_resource(Pairs(vec![(victim, attacker), (attacker, attacker)], Vec::new()));
    let mut schedule = Schedule::new();
    schedule.add_system(drain);
    schedule.run(&mut world);
    let mut schedule = Schedule::new();
    schedule.add_system(read_pairs);
    schedule.run(&mut world);
    assert_eq!(world.get::<Health>(victim), Some(&Health(4)));
    assert_eq!(world.get::<Health>(attacker), Some(&Health(2)));
    assert_eq!(world.get::<Health>(confused), Some(&Health(7)));
    assert_eq!(
        world.resource::<Pairs>().1,
        [QueryEntityError::AliasedMutability(confused).to_string(), "4 2".to_string(), "2 2".to_string()]
    );
}
