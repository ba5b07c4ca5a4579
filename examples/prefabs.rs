//! Prefabs and save games: loads the prefab file in `examples/assets/`,
//! spawns a small scene from it, saves the scene, loads the save into a
//! fresh world and prints both.
//!
//! ```sh
//! cargo run --example prefabs           # JSON prefabs
//! cargo run --example prefabs -- ron    # the same prefabs in RON
//! ```

use std::fmt::Write as _;
use std::path::Path;

use archetable::prelude::*;
use serde::{Deserialize, Serialize};

/// Where an entity is.
#[derive(Component, Serialize, Deserialize, Default, Debug, Clone, PartialEq)]
struct Position {
    x: f32,
    y: f32,
}

/// How fast it moves.
#[derive(Component, Serialize, Deserialize, Default, Debug, Clone, PartialEq)]
struct Move {
    speed: f32,
}

/// Drawn on screen (a marker).
#[derive(Component, Serialize, Deserialize, Default, Debug, Clone, PartialEq)]
struct Render;

/// Its color.
#[derive(Component, Serialize, Deserialize, Default, Debug, Clone, PartialEq)]
struct Color {
    color: String,
}

/// Hit points.
#[derive(Component, Serialize, Deserialize, Default, Debug, Clone, PartialEq)]
struct Health {
    hp: u32,
    max: u32,
}

/// A name to show.
#[derive(Component, Serialize, Deserialize, Default, Debug, Clone, PartialEq)]
struct Name(String);

/// The entity this one chases: a handle that must survive a save.
#[derive(Component, Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Chases(Entity);

/// A resource saved with the world.
#[derive(Serialize, Deserialize, Default, Debug, Clone, PartialEq)]
struct Wave(u32);

fn register(world: &mut World) {
    world
        .register_serde::<Position>("Position")
        .register_serde::<Move>("Move")
        .register_serde::<Render>("Render")
        .register_serde::<Color>("Color")
        .register_serde::<Health>("Health")
        .register_serde::<Name>("Name")
        .register_serde_without_default::<Chases>("Chases")
        .register_serde_resource::<Wave>("Wave");
}

/// One line per entity, in handle order.
fn describe(world: &World) -> String {
    let mut entities: Vec<Entity> = world.query::<Entity>().collect();
    entities.sort_by_key(|e| e.index());
    let mut out = String::new();
    for e in entities {
        let name = world.get::<Name>(e).map_or("-", |n| n.0.as_str());
        let color = world.get::<Color>(e).map_or("-", |c| c.color.as_str());
        let pos = world.get::<Position>(e).map(|p| format!("({}, {})", p.x, p.y)).unwrap_or_default();
        let speed = world.get::<Move>(e).map_or(0.0, |m| m.speed);
        let hp = world.get::<Health>(e).map(|h| format!("{}/{}", h.hp, h.max)).unwrap_or_else(|| "-".into());
        let chases = world.get::<Chases>(e).map(|c| c.0.to_string()).unwrap_or_else(|| "-".into());
        let render = if world.has::<Render>(e) { "drawn" } else { "hidden" };
        writeln!(
            out,
            "  {e:<5} {name:<6} {color:<6} at {pos:<12} speed {speed:<4} hp {hp:<8} chases {chases:<5} {render}"
        )
        .unwrap();
    }
    writeln!(out, "  wave {}", world.resource::<Wave>().0).unwrap();
    out
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let format = std::env::args().nth(1).unwrap_or_else(|| "json".into());
    let assets = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/assets");
    let prefabs = Prefabs::load(assets.join(format!("prefabs.{format}")))?;

    let mut world = World::new();
    register(&mut world);
    prefabs.check(&world.serde_registry())?;
    world.insert_resource(Wave(3));

    let ball = world.spawn_prefab(&prefabs, "Ball")?;
    let chet = Overrides::new().set("Color", "color", "blue").component("Name", "Chet").set("Position", "x", 4.0);
    world.spawn_prefab_with(&prefabs, "Ball", &chet)?;
    for (i, kind) in ["Zombie", "GreenZombie", "ZombieBoss"].into_iter().enumerate() {
        let zombie = world.spawn_prefab(&prefabs, kind)?;
        world.get_mut::<Position>(zombie).unwrap().y = 10.0 + i as f32;
        world.insert(zombie, Chases(ball))?;
    }
    // A despawn leaves a hole in the allocator: the save keeps it.
    let doomed = world.spawn_prefab(&prefabs, "Zombie")?;
    world.despawn(doomed)?;

    // A typo is caught with a suggestion, and nothing is spawned.
    let before = world.len();
    if let Err(error) = world.spawn_prefab(&prefabs, "GreenZombi") {
        println!("refused: {error}");
    }
    assert_eq!(world.len(), before);

    println!("scene:\n{}", describe(&world));
    let save = world.save_json()?;
    for skipped in &save.skipped {
        println!("warning: {skipped}");
    }
    println!("save ({} bytes of JSON):\n{}\n", save.data.len(), save.data);

    let registry: SerdeRegistry = world.serde_registry();
    let mut loaded = World::load_json(&registry, &save.data)?;
    println!("loaded back:\n{}", describe(&loaded));
    assert_eq!(describe(&loaded), describe(&world));
    // Same allocator: the next spawn gets the same handle in both worlds.
    assert_eq!(loaded.spawn_prefab(&prefabs, "Ball")?, world.spawn_prefab(&prefabs, "Ball")?);

    let binary = world.save_binary()?;
    let ron = world.save_ron()?;
    println!("the same world is {} bytes as RON, {} bytes in binary", ron.data.len(), binary.data.len());
    Ok(())
}
