//! Component hooks keeping an index in step with the world.
//!
//! A strategy game wants to ask "who stands in this cell?" without scanning
//! every unit. The `Grid` resource answers that, and only the hooks of the
//! `Cell` component write it: spawning, moving (an overwriting insert),
//! taking a unit off the map and despawning all keep it right, whoever does
//! them. A second hook shows deferred commands: a building that is
//! despawned leaves rubble in its cell.
//!
//! ```sh
//! cargo run --example hooks
//! ```

use std::collections::{BTreeMap, BTreeSet};

use archetable::prelude::*;

/// The grid cell an entity stands in.
#[derive(Component, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Cell {
    x: i32,
    y: i32,
}

/// A name for the printout.
#[derive(Component)]
struct Name(&'static str);

/// A building: it leaves rubble when it is despawned.
#[derive(Component)]
struct Building;

/// The index the hooks maintain: the entities in each occupied cell.
#[derive(Default)]
struct Grid(BTreeMap<Cell, BTreeSet<Entity>>);

fn name(world: &HookWorld<'_>, entity: Entity) -> &'static str {
    world.get::<Name>(entity).map_or("?", |name| name.0)
}

/// Registers the hooks. Game code never touches `Grid` itself.
fn register_hooks(world: &mut World) {
    world
        .register_component_hooks::<Cell>()
        // Every write by spawn or insert, overwrites included: the new
        // value is in place.
        .on_insert(|world, entity| {
            let cell = *world.get::<Cell>(entity).unwrap();
            world.resource_mut::<Grid>().0.entry(cell).or_default().insert(entity);
        })
        // Before an overwrite, a removal or a despawn: the old value is
        // still readable, so the entity can be taken out of its old cell.
        .on_replace(|world, entity| {
            let cell = *world.get::<Cell>(entity).unwrap();
            let grid = &mut world.resource_mut::<Grid>().0;
            let emptied = grid.get_mut(&cell).is_some_and(|units| {
                units.remove(&entity);
                units.is_empty()
            });
            if emptied {
                grid.remove(&cell);
            }
        });

    world.register_component_hooks::<Building>().on_despawn(|world, entity| {
        // A hook cannot spawn while the world is busy despawning; the
        // command applies right after, before `despawn` returns.
        let cell = *world.get::<Cell>(entity).unwrap();
        println!("  ({} collapses: rubble queued at {},{})", name(world, entity), cell.x, cell.y);
        world.commands().spawn((Name("rubble"), cell));
    });
}

/// The grid as one line: `x,y: names`, cell by cell.
fn show(world: &World) -> String {
    let cells: Vec<String> = world
        .resource::<Grid>()
        .0
        .iter()
        .map(|(cell, units)| {
            let names: Vec<&str> = units.iter().map(|&e| world.get::<Name>(e).unwrap().0).collect();
            format!("{},{}: {}", cell.x, cell.y, names.join(" "))
        })
        .collect();
    cells.join(" | ")
}

/// Builds the index again from scratch, the slow way, to check the hooks.
fn rebuilt(world: &World) -> BTreeMap<Cell, BTreeSet<Entity>> {
    let mut grid: BTreeMap<Cell, BTreeSet<Entity>> = BTreeMap::new();
    for (entity, cell) in world.query::<(Entity, &Cell)>() {
        grid.entry(*cell).or_default().insert(entity);
    }
    grid
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut world = World::new();
    world.init_resource::<Grid>();
    register_hooks(&mut world);
    let mut lines = Vec::new();
    let mut step = |world: &World, what: &str| {
        let line = format!("{what:<22} {}", show(world));
        println!("{line}");
        assert_eq!(world.resource::<Grid>().0, rebuilt(world), "the index drifted after: {what}");
        lines.push(line);
    };

    let knight = world.spawn((Name("knight"), Cell { x: 0, y: 0 }));
    let archer = world.spawn((Name("archer"), Cell { x: 0, y: 0 }));
    let tower = world.spawn((Name("tower"), Building, Cell { x: 2, y: 1 }));
    step(&world, "spawned three:");

    // A move is an insert that overwrites `Cell`, so the hooks see it.
    // (A write through `get_mut` or a query runs no hook: keep indexed
    // values behind inserts.)
    world.insert(knight, Cell { x: 1, y: 0 })?;
    step(&world, "knight moves to 1,0:");

    world.remove::<Cell>(archer)?;
    step(&world, "archer leaves the map:");

    world.despawn(tower)?;
    step(&world, "tower despawned:");

    world.despawn(knight)?;
    step(&world, "knight despawned:");

    assert_eq!(lines.len(), 5);
    assert!(lines[0].ends_with("0,0: knight archer | 2,1: tower"));
    assert!(lines[1].ends_with("0,0: archer | 1,0: knight | 2,1: tower"));
    assert!(lines[3].ends_with("1,0: knight | 2,1: rubble"));
    assert!(lines[4].ends_with("2,1: rubble"));
    assert!(world.contains(archer) && !world.has::<Cell>(archer));
    Ok(())
}
