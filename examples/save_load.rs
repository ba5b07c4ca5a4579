//! Save games: a world saved as JSON, RON and binary, written to files and
//! read back, then loaded two ways:
//!
//! - into a fresh world, where every entity keeps its handle (and the
//!   allocator its state, so later spawns match too);
//! - merged into a world that is already populated, where the saved
//!   entities get new handles and the handles stored in components
//!   (`Target`, `Carries`) are remapped to them.
//!
//! The files go to a temporary folder, removed at the end.
//!
//! ```sh
//! cargo run --example save_load
//! ```

use std::fs;
use std::path::PathBuf;

use archetable::prelude::*;
use serde::{Deserialize, Serialize};

#[derive(Component, Serialize, Deserialize, Default, Debug, Clone, PartialEq)]
struct Name(String);

#[derive(Component, Serialize, Deserialize, Default, Debug, Clone, Copy, PartialEq)]
struct Health(u32);

/// Another entity's handle: saved as a handle, remapped on a merge.
#[derive(Component, Serialize, Deserialize, Debug, Clone, Copy, PartialEq)]
struct Target(Entity);

/// Handles in a collection are found and remapped too.
#[derive(Component, Serialize, Deserialize, Default, Debug, Clone, PartialEq)]
struct Carries(Vec<Entity>);

/// Not registered, so not saved: the save says so.
#[derive(Component)]
struct Selected;

/// A resource saved with the world.
#[derive(Serialize, Deserialize, Default, Debug, PartialEq)]
struct Turn(u32);

/// Every world that saves or loads registers the same names. The names,
/// not the Rust types' names, are what the files say.
fn register(world: &mut World) {
    world
        .register_serde::<Name>("Name")
        .register_serde::<Health>("Health")
        .register_serde_without_default::<Target>("Target")
        .register_serde::<Carries>("Carries")
        .register_serde_resource::<Turn>("Turn");
}

/// A folder of its own under the system's temporary folder, removed when
/// dropped, also when the example panics.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> std::io::Result<TempDir> {
        let path = std::env::temp_dir().join(format!("archetable-save-load-{}", std::process::id()));
        fs::create_dir_all(&path)?;
        Ok(TempDir(path))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// An entity's name, for the printout.
fn name(world: &World, entity: Entity) -> &str {
    world.get::<Name>(entity).map_or("?", |name| name.0.as_str())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut world = World::new();
    register(&mut world);
    world.insert_resource(Turn(7));
    let sword = world.spawn(Name("sword".into()));
    let potion = world.spawn(Name("potion".into()));
    let hero = world.spawn((Name("hero".into()), Health(12), Carries(vec![sword, potion]), Selected));
    let wolf = world.spawn((Name("wolf".into()), Health(5), Target(hero)));
    // A despawn leaves a free slot: the save keeps the allocator as it is.
    let gone = world.spawn(Name("ghost".into()));
    world.despawn(gone)?;

    // Save in each format and write the files.
    let temp = TempDir::new()?;
    let dir = temp.0.clone();
    let json = world.save_json()?;
    let ron = world.save_ron()?;
    let binary = world.save_binary()?;
    for skipped in &json.skipped {
        println!("note: {skipped}");
    }
    fs::write(dir.join("save.json"), &json.data)?;
    fs::write(dir.join("save.ron"), &ron.data)?;
    fs::write(dir.join("save.bin"), &binary.data)?;
    let sizes = [json.data.len(), ron.data.len(), binary.data.len()];
    println!("saved {} entities: {} bytes of JSON, {} of RON, {} of binary", world.len(), sizes[0], sizes[1], sizes[2]);

    // Exact loads: a fresh world per file, every handle as saved.
    let registry = world.serde_registry();
    let next = world.peek_entities(1)[0]; // the handle the original's next spawn gets
    let loaded = [
        World::load_json(&registry, &fs::read_to_string(dir.join("save.json"))?)?,
        World::load_ron(&registry, &fs::read_to_string(dir.join("save.ron"))?)?,
        World::load_binary(&registry, &fs::read(dir.join("save.bin"))?)?,
    ];
    for mut copy in loaded {
        assert_eq!(copy.len(), 4);
        assert_eq!(copy.get::<Target>(wolf), Some(&Target(hero)));
        assert_eq!(copy.get::<Carries>(hero), Some(&Carries(vec![sword, potion])));
        assert_eq!(copy.resource::<Turn>(), &Turn(7));
        assert!(!copy.has::<Selected>(hero), "unregistered components are not saved");
        assert!(!copy.contains(gone));
        // Same allocator: the next spawn gets the same handle as in the original.
        assert_eq!(copy.spawn(()), next);
    }
    println!(
        "loaded each file into a fresh world: the wolf is still {wolf}, the hero {hero}, the next spawn gets {next} \
         (the ghost's slot, one generation on)"
    );

    // Merge: a level that already has entities, then the save on top.
    let mut level = World::new();
    register(&mut level);
    let rock = level.spawn(Name("rock".into()));
    level.spawn_batch((0..3).map(|i| (Name(format!("tree {i}")),))).for_each(drop);
    let map = level.load_into_binary(&fs::read(dir.join("save.bin"))?)?;
    let (new_hero, new_wolf) = (map.get(hero).unwrap(), map.get(wolf).unwrap());
    let target = level.get::<Target>(new_wolf).unwrap().0;
    let carried: Vec<&str> = level.get::<Carries>(new_hero).unwrap().0.iter().map(|&e| name(&level, e)).collect();
    println!(
        "merged into a level of {} entities: hero {hero} -> {new_hero}, wolf {wolf} -> {new_wolf}, \
         the wolf targets {target} ({}), the hero carries {}",
        level.len() - map.len(),
        name(&level, target),
        carried.join(" and ")
    );

    drop(temp);

    assert_eq!(json.skipped.len(), 1);
    assert!(sizes[2] < sizes[0], "binary is the compact one");
    assert_eq!((map.len(), level.len()), (4, 8));
    assert_ne!(new_hero, hero);
    assert_eq!(target, new_hero);
    assert_eq!(carried, ["sword", "potion"]);
    assert_eq!(name(&level, rock), "rock");
    assert_eq!(next.index(), gone.index());
    assert!(!dir.exists());
    Ok(())
}
