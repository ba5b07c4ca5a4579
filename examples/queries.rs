//! Queries: tuples and filters, `QueryState` kept across frames, and named
//! queries with `#[derive(Query)]`.
//!
//! ```sh
//! cargo run --example queries
//! ```

use archetable::prelude::*;

#[derive(Component, Clone, Copy, Debug, PartialEq)]
struct Position {
    x: i32,
    y: i32,
}

#[derive(Component, Clone, Copy)]
struct Velocity {
    dx: i32,
    dy: i32,
}

#[derive(Component)]
struct Health(u32);

#[derive(Component)]
struct Name(&'static str);

#[derive(Component)]
struct Player;

#[derive(Component)]
struct Enemy;

/// Stuck in place: movement skips it.
#[derive(Component)]
struct Frozen;

/// A named query: the struct is both the query and the item it yields, so
/// `unit.health` reads better than `.2` of a tuple. `&'w mut` fields need
/// `&mut World` (or a `Query` in a system); `Option` fields match entities
/// with or without the component.
#[derive(Query)]
struct Unit<'w> {
    entity: Entity,
    name: &'w Name,
    health: &'w mut Health,
    frozen: Option<&'w Frozen>,
}

/// A named query with only shared borrows is read-only: `World::query`
/// (through `&World`) accepts it.
#[derive(Query)]
struct Located<'w> {
    name: &'w Name,
    pos: &'w Position,
}

fn names<'a>(iter: impl Iterator<Item = &'a Name>) -> String {
    let mut names: Vec<&str> = iter.map(|name| name.0).collect();
    names.sort_unstable();
    names.join(", ")
}

fn main() {
    let mut world = World::new();
    let hero = world.spawn((Name("hero"), Player, Health(10), Position { x: 0, y: 0 }, Velocity { dx: 1, dy: 0 }));
    world.spawn((Name("slime"), Enemy, Health(3), Position { x: 5, y: 5 }, Velocity { dx: 0, dy: -1 }));
    world.spawn((Name("golem"), Enemy, Health(20), Position { x: 9, y: 0 }, Velocity { dx: -1, dy: 0 }, Frozen));
    world.spawn((Name("well"), Position { x: 3, y: 3 })); // scenery: no health, no velocity

    // Tuples fetch several components; filters narrow the set without
    // fetching. `Option<&T>` fetches when present.
    let with_health = names(world.query::<(&Name, &Health)>().map(|(name, _)| name));
    let enemies = names(world.query_filtered::<&Name, With<Enemy>>());
    let units = names(world.query_filtered::<&Name, Or<(With<Player>, With<Enemy>)>>());
    let scenery = names(world.query_filtered::<&Name, (Without<Player>, Without<Enemy>)>());
    let frozen: Vec<bool> = world.query::<Option<&Frozen>>().map(|frozen| frozen.is_some()).collect();
    println!("with health: {with_health}; enemies: {enemies}; units: {units}; scenery: {scenery}");

    // A `QueryState` caches which tables match, and picks up new tables as
    // they appear. Keep one per job across frames instead of building the
    // query every time.
    let mut movement = QueryState::<(&mut Position, &Velocity), Without<Frozen>>::new(&mut world);
    let tables_before = movement.matched_archetypes();
    for _frame in 0..3 {
        for (mut pos, vel) in movement.iter_mut(&mut world) {
            pos.x += vel.dx;
            pos.y += vel.dy;
        }
    }
    // A moving entity with a new set of components: a new table, matched.
    world.spawn((Name("bat"), Enemy, Health(1), Position { x: 0, y: 9 }, Velocity { dx: 0, dy: -1 }, Player));
    movement.for_each_mut(&mut world, |(mut pos, vel)| pos.y += vel.dy);
    let tables_after = movement.matched_archetypes();
    let hero_pos = *movement.get_mut(&mut world, hero).unwrap().0;
    println!(
        "after 4 moves: hero at {},{}; the movement query matched {tables_before} tables, then {tables_after}",
        hero_pos.x, hero_pos.y
    );

    // Named queries, with filters like any other.
    let (mut hits, mut dead) = (Vec::new(), Vec::new());
    for unit in world.query_filtered_mut::<Unit, With<Enemy>>() {
        // Frozen enemies take double damage.
        let damage = if unit.frozen.is_some() { 4 } else { 2 };
        unit.health.0 = unit.health.0.saturating_sub(damage);
        hits.push(format!("{} -{damage} ({} left)", unit.name.0, unit.health.0));
        if unit.health.0 == 0 {
            dead.push(unit.entity);
        }
    }
    // No structural change while a query borrows the world: despawn after.
    for entity in &dead {
        world.despawn(*entity).unwrap();
    }
    println!("hits: {}; {} despawned", hits.join(", "), dead.len());
    let located: Vec<String> =
        world.query::<Located>().map(|l| format!("{}@{},{}", l.name.0, l.pos.x, l.pos.y)).collect();
    println!("positions: {}", located.join(" "));

    // One entity, several components.
    let (name, health, pos) = world.query_one::<(&Name, &Health, &Position)>(hero).unwrap();
    println!("{} has {} hp at {},{}", name.0, health.0, pos.x, pos.y);

    assert_eq!(with_health, "golem, hero, slime");
    assert_eq!(enemies, "golem, slime");
    assert_eq!(units, "golem, hero, slime");
    assert_eq!(scenery, "well");
    assert_eq!(frozen.iter().filter(|&&f| f).count(), 1);
    assert_eq!(hero_pos, Position { x: 3, y: 0 });
    assert_eq!((tables_before, tables_after), (2, 3));
    assert_eq!(hits.len(), 3);
    assert!(hits.contains(&"golem -4 (16 left)".to_string()));
    assert!(hits.contains(&"bat -2 (0 left)".to_string()));
    assert_eq!(dead.len(), 1);
    assert_eq!(located.len(), 4, "hero, slime, golem and the well");
    assert!(located.contains(&"slime@5,1".to_string()) && located.contains(&"golem@9,0".to_string()));
}
