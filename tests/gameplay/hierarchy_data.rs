//! Trees in data: prefabs that declare children spawn as one tree, all or
//! nothing; saves keep trees exactly on a fresh load and remapped on a
//! merge, child order included.

#![cfg(feature = "serde")]

use archetable::data::{Format, PrefabError};
use archetable::prelude::*;
use serde::{Deserialize, Serialize};

#[derive(Component, Serialize, Deserialize, Default, Debug, PartialEq, Clone)]
struct Part {
    name: String,
    size: u32,
}

fn world() -> World {
    let mut world = World::new();
    world.register_serde::<Part>("Part");
    world
}

const CAR: &str = r#"{
    "Car": {
        "Part": { "name": "car", "size": 10 },
        "children": [
            { "prefab": "Wheel" },
            { "prefab": "Wheel", "Part": { "name": "spare" } }
        ]
    },
    "Wheel": {
        "Part": { "name": "wheel", "size": 2 },
        "children": [ { "prefab": "Hubcap" } ]
    },
    "Hubcap": { "Part": { "name": "hubcap", "size": 1 } },
    "Truck": { "extends": "Car", "children": [ { "prefab": "Hubcap", "Part": { "name": "horn" } } ] }
}"#;

fn names<'a>(world: &World, entities: impl IntoIterator<Item = &'a Entity>) -> Vec<String> {
    entities.into_iter().map(|&e| world.get::<Part>(e).unwrap().name.clone()).collect()
}

#[test]
fn a_prefab_with_children_spawns_one_tree() {
    let prefabs = Prefabs::from_json_str(CAR).unwrap();
    let mut world = world();
    let car = world.spawn_prefab(&prefabs, "Car").unwrap();
    assert_eq!(world.len(), 5);
    let wheels = world.children(car).to_vec();
    assert_eq!(names(&world, &wheels), ["wheel", "spare"]);
    assert_eq!(world.get::<Part>(wheels[1]).unwrap().size, 2, "the override changed one field");
    for &wheel in &wheels {
        assert_eq!(names(&world, world.children(wheel)), ["hubcap"]);
    }
    let order: Vec<String> = names(&world, &world.hierarchy_order());
    assert_eq!(order, ["car", "wheel", "hubcap", "spare", "hubcap"]);
    world.check_invariants().unwrap();

    // A prefab inherits the children of the one it extends, then adds its own.
    let truck = world.spawn_prefab(&prefabs, "Truck").unwrap();
    assert_eq!(names(&world, world.children(truck)), ["wheel", "spare", "horn"]);

    // Through commands.
    let mut queue = CommandQueue::default();
    let deferred = Commands::new(&mut queue, &world).spawn_prefab(&prefabs, "Car").id();
    queue.apply(&mut world);
    assert_eq!(names(&world, world.children(deferred)), ["wheel", "spare"]);
    assert_eq!(world.descendants(deferred).count(), 4);
    world.check_invariants().unwrap();
}

#[test]
fn a_tree_that_fails_anywhere_spawns_nothing() {
    let bad = r#"{
        "Car": { "Part": { "name": "car" }, "children": [ { "prefab": "Wheel" }, { "prefab": "Broken" } ] },
        "Wheel": { "Part": { "name": "wheel" } },
        "Broken": { "Part": { "size": "huge" } }
    }"#;
    let prefabs = Prefabs::from_json_str(bad).unwrap();
    let mut world = world();
    world.spawn(Part::default());
    let state = world.allocator_state();
    let error = world.spawn_prefab(&prefabs, "Car").unwrap_err();
    assert!(matches!(error, PrefabError::Field { ref prefab, .. } if prefab == "Broken"), "{error}");
    assert_eq!((world.len(), world.allocator_state()), (1, state));

    let looped = r#"{ "A": { "children": [ { "prefab": "B" } ] }, "B": { "children": [ { "prefab": "A" } ] } }"#;
    let prefabs = Prefabs::from_json_str(looped).unwrap();
    let error = world.spawn_prefab(&prefabs, "A").unwrap_err();
    assert!(error.to_string().contains("lists itself among its own descendants"), "{error}");
    assert_eq!(world.len(), 1);

    let unknown = Prefabs::from_json_str(r#"{ "A": { "children": [ { "prefab": "Wheal" } ] }, "Wheel": {} }"#);
    assert_eq!(
        unknown.unwrap_err(),
        PrefabError::UnknownPrefab { prefab: "Wheal".into(), suggestion: Some("Wheel".into()) }
    );
    let malformed = Prefabs::from_json_str(r#"{ "A": { "children": [ "Wheel" ] } }"#).unwrap_err();
    assert!(malformed.to_string().contains("`children` must be a list of maps"), "{malformed}");
}

#[test]
fn typed_overrides_name_their_component_through_the_registry() {
    let prefabs = Prefabs::from_json_str(CAR).unwrap();
    let mut world = world();
    let part = Part { name: "golden hubcap".into(), size: 7 };
    let cap = world.spawn_prefab_with(&prefabs, "Hubcap", &Overrides::new().with(part.clone())).unwrap();
    assert_eq!(world.get::<Part>(cap), Some(&part));

    #[derive(Serialize)]
    struct Unregistered(u8);
    let error = world.spawn_prefab_with(&prefabs, "Hubcap", &Overrides::new().with(Unregistered(1))).unwrap_err();
    assert!(matches!(error, PrefabError::UnknownComponent { .. }), "{error}");
}

fn save(world: &World, format: Format) -> Vec<u8> {
    match format {
        Format::Json => world.save_json().unwrap().data.into_bytes(),
        Format::Ron => world.save_ron().unwrap().data.into_bytes(),
        Format::Binary => world.save_binary().unwrap().data,
    }
}

#[test]
fn saves_keep_trees_exactly_and_merges_remap_them() {
    let prefabs = Prefabs::from_json_str(CAR).unwrap();
    let mut source = world();
    let car = source.spawn_prefab(&prefabs, "Truck").unwrap();
    // Reorder: the first wheel moves to the end of the list.
    let first = *source.children(car).first().unwrap();
    source.set_parent(first, car).unwrap();
    let order = source.children(car).to_vec();
    assert_eq!(names(&source, &order), ["spare", "horn", "wheel"]);

    for format in [Format::Json, Format::Ron, Format::Binary] {
        let data = save(&source, format);
        let registry = source.serde_registry();
        let fresh = match format {
            Format::Json => World::load_json(&registry, std::str::from_utf8(&data).unwrap()),
            Format::Ron => World::load_ron(&registry, std::str::from_utf8(&data).unwrap()),
            Format::Binary => World::load_binary(&registry, &data),
        }
        .unwrap();
        assert_eq!(fresh.children(car), order, "{format:?}: exact handles and order");
        assert_eq!(fresh.hierarchy_order(), source.hierarchy_order(), "{format:?}");
        fresh.check_invariants().unwrap();

        let mut populated = world();
        populated.spawn(Part::default());
        let map = match format {
            Format::Json => populated.load_into_json(std::str::from_utf8(&data).unwrap()),
            Format::Ron => populated.load_into_ron(std::str::from_utf8(&data).unwrap()),
            Format::Binary => populated.load_into_binary(&data),
        }
        .unwrap();
        let new_car = map.get(car).unwrap();
        let mapped: Vec<Entity> = order.iter().map(|&e| map.get(e).unwrap()).collect();
        assert_eq!(populated.children(new_car), mapped, "{format:?}: remapped, same order");
        assert_eq!(populated.descendants(new_car).count(), source.descendants(car).count());
        populated.check_invariants().unwrap();
    }
}
