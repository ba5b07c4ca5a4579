//! `derive(QueryFilter)` and nested `derive(Query)` structs.

use archetable::prelude::*;

#[derive(Component, Debug, PartialEq, Clone, Copy)]
struct Hp(u32);

#[derive(Component, Debug, PartialEq, Clone, Copy)]
struct Pos(i32);

#[derive(Component)]
struct Enemy;

#[derive(Component)]
struct Dead;

#[derive(Component)]
struct Flying;

#[derive(Component, Debug, PartialEq)]
#[component(track_changes)]
struct Score(u32);

#[derive(QueryFilter)]
struct LiveEnemies {
    _enemy: With<Enemy>,
    _alive: Without<Dead>,
}

#[derive(QueryFilter)]
struct EnemyOrFlying(Or<(With<Enemy>, With<Flying>)>);

#[derive(QueryFilter)]
struct FreshScore {
    _changed: Changed<Score>,
    _enemies: LiveEnemies,
}

fn world() -> (World, Vec<Entity>) {
    let mut world = World::new();
    let e = vec![
        world.spawn((Hp(1), Enemy)),
        world.spawn((Hp(2), Enemy, Dead)),
        world.spawn((Hp(3), Flying)),
        world.spawn(Hp(4)),
        world.spawn((Hp(5), Enemy, Score(0))),
    ];
    (world, e)
}

#[test]
fn a_derived_filter_passes_what_its_tuple_passes() {
    let (world, e) = world();
    let live: Vec<Entity> = world.query_filtered::<Entity, LiveEnemies>().collect();
    let tuple: Vec<Entity> = world.query_filtered::<Entity, (With<Enemy>, Without<Dead>)>().collect();
    assert_eq!(live, tuple);
    let mut live_sorted = live.clone();
    live_sorted.sort();
    assert_eq!(live_sorted, [e[0], e[4]]);
    let mut either: Vec<u32> = world.query_filtered::<&Hp, EnemyOrFlying>().map(|h| h.0).collect();
    either.sort();
    assert_eq!(either, [1, 2, 3, 5]);
}

#[test]
fn archetypal_derived_filters_give_exact_lengths() {
    let (world, _) = world();
    assert_eq!(world.query_filtered::<&Hp, LiveEnemies>().len(), 2);
    assert_eq!(world.query_filtered::<&Hp, EnemyOrFlying>().len(), 4);
}

#[test]
fn a_derived_filter_with_a_change_filter_tests_rows() {
    let (mut world, e) = world();
    let mut state = QueryState::<Entity, FreshScore>::new(&mut world);
    assert_eq!(state.iter(&world).collect::<Vec<_>>(), [e[4]]);
    assert_eq!(state.iter(&world).count(), 0);
    world.get_mut::<Score>(e[4]).unwrap().0 = 1;
    assert_eq!(state.iter(&world).collect::<Vec<_>>(), [e[4]]);
}

#[derive(Default)]
struct Total(u32);

fn total(hp: Query<&Hp, LiveEnemies>, mut out: ResMut<Total>) {
    out.0 = hp.iter().map(|h| h.0).sum();
}

#[test]
fn derived_filters_in_systems_and_disjointness() {
    let (mut world, _) = world();
    world.init_resource::<Total>();
    world.run_system_once(total);
    assert_eq!(world.resource::<Total>().0, 6);
    // The derived filter's `Without<Dead>` proves it disjoint from a
    // writer of `Hp` on dead entities.
    fn both(_: Query<&mut Hp, LiveEnemies>, _: Query<&mut Hp, With<Dead>>) {}
    assert!(Schedule::new().try_add_system(both).is_ok());
}

#[derive(Query)]
struct Body<'w> {
    pos: &'w Pos,
    hp: &'w Hp,
}

#[derive(Query)]
struct Tagged<'w> {
    entity: Entity,
    body: Body<'w>,
    enemy: Option<&'w Enemy>,
}

#[derive(Query)]
struct BodyMut<'w> {
    pos: &'w mut Pos,
}

#[derive(Query)]
struct Mover<'w> {
    body: BodyMut<'w>,
    hp: &'w Hp,
}

#[test]
fn nested_derived_queries_read_and_write() {
    let mut world = World::new();
    let a = world.spawn((Pos(1), Hp(10), Enemy));
    let b = world.spawn((Pos(2), Hp(20)));
    world.spawn(Pos(3));
    let mut seen: Vec<(Entity, i32, u32, bool)> =
        world.query::<Tagged<'_>>().map(|t| (t.entity, t.body.pos.0, t.body.hp.0, t.enemy.is_some())).collect();
    seen.sort_by_key(|s| s.1);
    assert_eq!(seen, [(a, 1, 10, true), (b, 2, 20, false)]);
    for m in world.query_mut::<Mover<'_>>() {
        m.body.pos.0 += m.hp.0 as i32;
    }
    assert_eq!((world.get::<Pos>(a), world.get::<Pos>(b)), (Some(&Pos(11)), Some(&Pos(22))));
}

fn read_tagged(q: Query<Tagged<'static>>, mut out: ResMut<Total>) {
    out.0 = q.iter().map(|t| t.body.hp.0).sum();
}

#[test]
fn a_nested_read_only_query_is_read_only() {
    fn assert_read_only<Q: archetable::ReadOnlyQueryData>() {}
    assert_read_only::<Tagged<'static>>();
    let mut world = World::new();
    world.spawn((Pos(1), Hp(10)));
    world.init_resource::<Total>();
    world.run_system_once(read_tagged);
    assert_eq!(world.resource::<Total>().0, 10);
}

#[derive(Query)]
struct Pair<'w, A: Component, B: Component + archetable::MutableComponent> {
    a: &'w A,
    b: Option<&'w mut B>,
}

#[derive(Query)]
struct ReadOf<'w, T>
where
    T: Component,
{
    entity: Entity,
    value: &'w T,
}

#[derive(Query)]
struct WithGeneric<'w, T: Component> {
    inner: ReadOf<'w, T>,
    hp: &'w Hp,
}

#[test]
fn generic_derived_queries() {
    let mut world = World::new();
    let a = world.spawn((Hp(1), Pos(10)));
    let b = world.spawn(Hp(2));
    for pair in world.query_mut::<Pair<'_, Hp, Pos>>() {
        if let Some(pos) = pair.b {
            pos.0 += pair.a.0 as i32;
        }
    }
    assert_eq!(world.get::<Pos>(a), Some(&Pos(11)));
    let mut seen: Vec<(Entity, u32)> = world.query::<ReadOf<'_, Hp>>().map(|r| (r.entity, r.value.0)).collect();
    seen.sort();
    assert_eq!(seen, [(a, 1), (b, 2)]);
    let with: Vec<(i32, u32)> = world.query::<WithGeneric<'_, Pos>>().map(|w| (w.inner.value.0, w.hp.0)).collect();
    assert_eq!(with, [(11, 1)]);
    fn assert_read_only<Q: archetable::ReadOnlyQueryData>() {}
    assert_read_only::<ReadOf<'static, Pos>>();
    assert_read_only::<WithGeneric<'static, Pos>>();
}
