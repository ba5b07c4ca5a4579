//! The derives: `Component` on every shape of type, `Bundle` on structs (with
//! nested bundles), and `Query` on named structs, mutable and read-only, used
//! with `query`, `query_mut`, `QueryState` and filters.

use std::any::type_name;
use std::collections::{BTreeMap, BTreeSet};

use archetable::prelude::*;

#[derive(Component, Debug, Clone, Copy, PartialEq)]
struct Position {
    x: f32,
    y: f32,
}

#[derive(Component, Debug, Clone, Copy, PartialEq)]
struct Velocity {
    x: f32,
    y: f32,
}

#[derive(Component, Debug, Clone, PartialEq)]
struct Name(String);

#[derive(Component, Debug, PartialEq)]
struct Frozen;

#[derive(Component, Debug, Clone, Copy, PartialEq)]
struct Mass(f32);

#[derive(Component, Debug, Clone, Copy, PartialEq)]
enum Team {
    Red,
    Blue,
}

#[derive(Component, Debug, Clone, PartialEq)]
struct Generic<T: Send + Sync + 'static> {
    value: T,
}

// ---------------------------------------------------------------- bundles

#[derive(Bundle)]
struct Mover {
    pos: Position,
    vel: Velocity,
}

#[derive(Bundle)]
struct Ship {
    name: Name,
    mover: Mover,
    mass: Mass,
}

#[derive(Bundle)]
struct Frigate {
    ship: Ship,
    team: Team,
    frozen: Frozen,
}

#[derive(Bundle)]
struct TwoPositions {
    a: Position,
    b: Position,
}

#[derive(Bundle)]
struct HiddenDuplicate {
    mover: Mover,
    pos: Position,
}

fn mover(i: f32) -> Mover {
    Mover { pos: Position { x: i, y: -i }, vel: Velocity { x: 1.0, y: i } }
}

fn names(world: &World, e: Entity) -> BTreeSet<&'static str> {
    world.entity(e).unwrap().component_names().collect()
}

#[test]
fn derived_component_shapes() {
    let mut world = World::new();
    let e = world.spawn((Team::Blue, Generic { value: 5u32 }, Generic { value: String::from("s") }));
    assert_eq!(world.get::<Team>(e), Some(&Team::Blue));
    assert_eq!(world.get::<Generic<u32>>(e), Some(&Generic { value: 5 }));
    assert_eq!(world.get::<Generic<String>>(e), Some(&Generic { value: "s".to_string() }));
    assert_eq!(world.get::<Generic<u64>>(e), None);
    assert_eq!(
        names(&world, e),
        BTreeSet::from([type_name::<Team>(), type_name::<Generic<u32>>(), type_name::<Generic<String>>(),])
    );
    world.insert(e, Team::Red).unwrap();
    assert_eq!(world.get::<Team>(e), Some(&Team::Red));
}

#[test]
fn spawn_derived_bundle() {
    let mut world = World::new();
    let e = world.spawn(mover(2.0));
    assert_eq!(world.get::<Position>(e), Some(&Position { x: 2.0, y: -2.0 }));
    assert_eq!(world.get::<Velocity>(e), Some(&Velocity { x: 1.0, y: 2.0 }));
    assert_eq!(names(&world, e), BTreeSet::from([type_name::<Position>(), type_name::<Velocity>()]));
}

#[test]
fn nested_bundles_flatten() {
    let mut world = World::new();
    let e = world.spawn(Frigate {
        ship: Ship { name: Name("Aurora".into()), mover: mover(3.0), mass: Mass(10.0) },
        team: Team::Red,
        frozen: Frozen,
    });
    assert_eq!(world.get::<Name>(e), Some(&Name("Aurora".into())));
    assert_eq!(world.get::<Position>(e), Some(&Position { x: 3.0, y: -3.0 }));
    assert_eq!(world.get::<Velocity>(e), Some(&Velocity { x: 1.0, y: 3.0 }));
    assert_eq!(world.get::<Mass>(e), Some(&Mass(10.0)));
    assert_eq!(world.get::<Team>(e), Some(&Team::Red));
    assert!(world.has::<Frozen>(e));
    assert_eq!(names(&world, e).len(), 6);
    assert_eq!(world.query::<(&Name, &Position, &Velocity, &Mass, &Team, &Frozen)>().count(), 1);
}

#[test]
fn derived_bundle_in_insert_remove_and_batch() {
    let mut world = World::new();
    let e = world.spawn((Name("e".into()),));
    world.insert(e, mover(4.0)).unwrap();
    assert_eq!(world.get::<Position>(e), Some(&Position { x: 4.0, y: -4.0 }));
    assert_eq!(world.get::<Name>(e), Some(&Name("e".into())));

    let (p, v) = world.remove::<(Position, Velocity)>(e).unwrap();
    assert_eq!(p, Position { x: 4.0, y: -4.0 });
    assert_eq!(v, Velocity { x: 1.0, y: 4.0 });
    assert_eq!(names(&world, e), BTreeSet::from([type_name::<Name>()]));

    // A derived bundle can also be removed as a whole.
    world.insert(e, mover(5.0)).unwrap();
    let m: Mover = world.remove::<Mover>(e).unwrap();
    assert_eq!(m.pos, Position { x: 5.0, y: -5.0 });
    assert_eq!(m.vel, Velocity { x: 1.0, y: 5.0 });
    assert!(!world.has::<Position>(e));

    let es: Vec<Entity> = world.spawn_batch((0..100).map(|i| mover(i as f32))).collect();
    assert_eq!(es.len(), 100);
    for (i, &e) in es.iter().enumerate() {
        assert_eq!(world.get::<Velocity>(e), Some(&Velocity { x: 1.0, y: i as f32 }));
    }
    assert_eq!(world.len(), 101);
}

#[test]
#[should_panic(expected = "Position")]
fn derived_bundle_with_duplicate_field_type_panics() {
    let mut world = World::new();
    world.spawn(TwoPositions { a: Position { x: 0.0, y: 0.0 }, b: Position { x: 1.0, y: 1.0 } });
}

#[test]
#[should_panic(expected = "Position")]
fn nested_bundle_with_duplicate_type_panics() {
    let mut world = World::new();
    world.spawn(HiddenDuplicate { mover: mover(1.0), pos: Position { x: 0.0, y: 0.0 } });
}

#[test]
#[should_panic(expected = "Position")]
fn tuple_containing_bundle_with_duplicate_type_panics() {
    let mut world = World::new();
    world.spawn((mover(1.0), Position { x: 0.0, y: 0.0 }));
}

// ---------------------------------------------------------------- queries

#[derive(Query)]
struct Movement<'w> {
    pos: &'w mut Position,
    vel: &'w Velocity,
    e: Entity,
    f: Option<&'w Frozen>,
}

#[derive(Query)]
struct View<'w> {
    id: Entity,
    pos: &'w Position,
    name: Option<&'w Name>,
}

#[derive(Query)]
struct MassMut<'w> {
    mass: &'w mut Mass,
    name: Option<&'w mut Name>,
}

fn movement_world() -> (World, Vec<Entity>) {
    let mut world = World::new();
    let mut es = Vec::new();
    for i in 0..40 {
        let f = i as f32;
        let e = world.spawn(mover(f));
        if i % 2 == 0 {
            world.insert(e, (Frozen,)).unwrap();
        }
        if i % 5 == 0 {
            world.insert(e, (Name(format!("n{i}")),)).unwrap();
        }
        es.push(e);
    }
    // Entities without velocity.
    for i in 40..50 {
        es.push(world.spawn((Position { x: i as f32, y: 0.0 }, Name(format!("n{i}")))));
    }
    (world, es)
}

#[test]
fn derived_mutable_query_with_query_mut() {
    let (mut world, es) = movement_world();
    let mut visited = BTreeSet::new();
    for m in world.query_mut::<Movement<'_>>() {
        visited.insert(m.e);
        if m.f.is_none() {
            m.pos.x += m.vel.x;
            m.pos.y += m.vel.y;
        }
    }
    assert_eq!(visited, es[..40].iter().copied().collect());
    for (i, &e) in es[..40].iter().enumerate() {
        let f = i as f32;
        let want = if i % 2 == 0 { Position { x: f, y: -f } } else { Position { x: f + 1.0, y: 0.0 } };
        assert_eq!(world.get::<Position>(e), Some(&want), "entity {i}");
    }
}

#[test]
fn derived_mutable_query_with_filter() {
    let (mut world, es) = movement_world();
    let mut n = 0;
    world.query_filtered_mut::<Movement<'_>, Without<Frozen>>().for_each(|m| {
        assert!(m.f.is_none());
        m.pos.x = -100.0;
        n += 1;
    });
    assert_eq!(n, 20);
    for (i, &e) in es[..40].iter().enumerate() {
        let x = world.get::<Position>(e).unwrap().x;
        assert_eq!(x == -100.0, i % 2 == 1, "entity {i}");
    }
    let frozen_with_names =
        world.query_filtered_mut::<Movement<'_>, (With<Frozen>, With<Name>)>().map(|m| m.e).collect::<BTreeSet<_>>();
    let want: BTreeSet<Entity> = (0..40).filter(|i| i % 10 == 0).map(|i| es[i]).collect();
    assert_eq!(frozen_with_names, want);
}

#[test]
fn derived_read_only_query_through_shared_world() {
    let (world, es) = movement_world();
    let world = &world;
    let got: BTreeMap<Entity, Option<String>> = world
        .query::<View<'_>>()
        .map(|v| {
            assert!(v.pos.x >= 0.0);
            (v.id, v.name.map(|n| n.0.clone()))
        })
        .collect();
    assert_eq!(got.len(), 50);
    for (i, e) in es.iter().enumerate() {
        let want = (i % 5 == 0 || i >= 40).then(|| format!("n{i}"));
        assert_eq!(got[e], want, "entity {i}");
    }
    let n = world.query_filtered::<View<'_>, Without<Velocity>>().count();
    assert_eq!(n, 10);
    let folded = world.query::<View<'_>>().fold(0.0f32, |acc, v| acc + v.pos.x);
    assert_eq!(folded, (0..50).map(|i| i as f32).sum::<f32>());
}

#[test]
fn derived_queries_with_query_state() {
    let (mut world, es) = movement_world();
    let mut moving = QueryState::<Movement<'_>, Without<Frozen>>::new(&mut world);
    let mut view = QueryState::<View<'_>>::new(&mut world);

    for m in moving.iter_mut(&mut world) {
        m.pos.y = 1234.0;
    }
    {
        let m = moving.get_mut(&mut world, es[1]).unwrap();
        assert_eq!(m.e, es[1]);
        m.pos.x = 77.0;
    }
    assert!(matches!(
        moving.get_mut(&mut world, es[0]),
        Err(QueryEntityError::QueryDoesNotMatch { entity, .. }) if entity == es[0]
    ));
    assert!(matches!(
        moving.get_mut(&mut world, es[45]),
        Err(QueryEntityError::QueryDoesNotMatch { entity, .. }) if entity == es[45]
    ));

    let v = view.get(&world, es[1]).unwrap();
    assert_eq!(v.id, es[1]);
    assert_eq!(*v.pos, Position { x: 77.0, y: 1234.0 });
    assert!(v.name.is_none());
    let v = view.get(&world, es[45]).unwrap();
    assert_eq!(v.name, Some(&Name("n45".into())));

    let updated = view.iter(&world).filter(|v| v.pos.y == 1234.0).count();
    assert_eq!(updated, 20);

    // A new archetype with a new component shows up in both states.
    let late = world.spawn((mover(0.5), Mass(1.0)));
    assert!(moving.iter_mut(&mut world).any(|m| m.e == late));
    assert_eq!(view.iter(&world).count(), 51);

    world.despawn(late).unwrap();
    assert!(matches!(
        view.get(&world, late),
        Err(QueryEntityError::NoSuchEntity(e)) if e == late
    ));
}

#[test]
fn derived_query_with_optional_mut_field_and_in_tuple() {
    let mut world = World::new();
    let a = world.spawn((Mass(1.0), Name("a".into())));
    let b = world.spawn((Mass(2.0),));
    let c = world.spawn((Name("c".into()),));
    let mut n = 0;
    for m in world.query_mut::<MassMut<'_>>() {
        m.mass.0 *= 10.0;
        if let Some(name) = m.name {
            name.0.push('!');
        }
        n += 1;
    }
    assert_eq!(n, 2);
    assert_eq!(world.get::<Mass>(a), Some(&Mass(10.0)));
    assert_eq!(world.get::<Mass>(b), Some(&Mass(20.0)));
    assert_eq!(world.get::<Name>(a), Some(&Name("a!".into())));
    assert_eq!(world.get::<Name>(c), Some(&Name("c".into())));

    // A derived query as part of a tuple query.
    world.insert(a, Frozen).unwrap();
    let got: BTreeSet<Entity> = world
        .query_mut::<(Entity, MassMut<'_>, Option<&Frozen>)>()
        .filter(|(_, _, n)| n.is_none())
        .map(|(e, _, _)| e)
        .collect();
    assert_eq!(got, BTreeSet::from([b]));
}

#[derive(Query)]
struct Aliasing<'w> {
    a: &'w mut Mass,
    b: &'w Mass,
}

#[test]
#[should_panic(expected = "Mass")]
fn derived_query_that_aliases_panics() {
    let mut world = World::new();
    world.spawn((Mass(1.0),));
    for q in world.query_mut::<Aliasing<'_>>() {
        q.a.0 = q.b.0;
    }
}

#[test]
#[should_panic(expected = "Mass")]
fn derived_query_aliasing_with_tuple_member_panics() {
    let mut world = World::new();
    world.spawn((Mass(1.0), Name("x".into())));
    let _ = QueryState::<(MassMut<'_>, &Mass)>::new(&mut world);
}

/// A query struct declared through `macro_rules!`, whose field types arrive
/// as `$t:ty` fragments (invisible groups around the type).
macro_rules! declare_query {
    ($name:ident { $($field:ident: $t:ty),* }) => {
        #[derive(Query)]
        struct $name<'w> {
            $($field: $t,)*
        }
    };
}

declare_query!(MacroMass { mass: &'w Mass, entity: Entity });

#[test]
fn derived_query_declared_by_a_macro() {
    let mut world = World::new();
    let a = world.spawn((Mass(3.0),));
    let got: Vec<(Entity, f32)> = world.query::<MacroMass<'_>>().map(|q| (q.entity, q.mass.0)).collect();
    assert_eq!(got, [(a, 3.0)]);
}

/// A public query over this file's private components: its impl must not
/// expose them (the derive once named them in the impl's associated types,
/// error E0446).
#[derive(Query)]
pub struct PublicMover<'w> {
    id: Entity,
    pos: &'w mut Position,
    vel: &'w Velocity,
    mass: Option<&'w Mass>,
}

/// The read-only counterpart of [`PublicMover`].
#[derive(Query)]
pub struct PublicView<'w>(Entity, &'w Position, Option<&'w Mass>);

#[test]
fn derived_public_query_over_private_components() {
    let mut world = World::new();
    let a = world.spawn((Position { x: 1.0, y: 2.0 }, Velocity { x: 10.0, y: 20.0 }, Mass(4.0)));
    let b = world.spawn((Position { x: -1.0, y: 0.5 }, Velocity { x: 0.25, y: -4.0 }));
    let c = world.spawn((Position { x: 7.0, y: 7.0 }, Mass(9.0)));

    let mut moved = BTreeMap::new();
    for m in world.query_mut::<PublicMover<'_>>() {
        let scale = m.mass.map_or(1.0, |mass| 1.0 / mass.0);
        m.pos.x += m.vel.x * scale;
        m.pos.y += m.vel.y * scale;
        moved.insert(m.id, (m.pos.x, m.pos.y));
    }
    assert_eq!(moved, BTreeMap::from([(a, (3.5, 7.0)), (b, (-0.75, -3.5))]));

    let mut seen: Vec<(Entity, Position, Option<Mass>)> =
        world.query::<PublicView<'_>>().map(|PublicView(e, pos, mass)| (e, *pos, mass.copied())).collect();
    seen.sort_by_key(|&(e, ..)| [a, b, c].iter().position(|&x| x == e));
    assert_eq!(
        seen,
        [
            (a, Position { x: 3.5, y: 7.0 }, Some(Mass(4.0))),
            (b, Position { x: -0.75, y: -3.5 }, None),
            (c, Position { x: 7.0, y: 7.0 }, Some(Mass(9.0))),
        ]
    );

    let mut state = QueryState::<PublicView<'_>, Without<Velocity>>::new(&mut world);
    let PublicView(e, pos, mass) = state.get(&world, c).unwrap();
    assert_eq!((e, *pos, mass.copied()), (c, Position { x: 7.0, y: 7.0 }, Some(Mass(9.0))));
    assert!(state.get(&world, a).is_err());
}
