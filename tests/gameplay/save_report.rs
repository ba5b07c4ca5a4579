//! What a save leaves out is reported: unregistered component types with
//! their entity counts, and unregistered resources by name. Event queues,
//! which the engine keeps for a frame or two, are not game state and are
//! not reported.

#![cfg(feature = "serde")]

use archetable::data::SerdeWorldExt;
use archetable::prelude::*;
use serde::{Deserialize, Serialize};

#[derive(Component, Serialize, Deserialize, Default, Debug, PartialEq)]
struct Position {
    x: f32,
}

#[derive(Component, Debug)]
struct Scratch;

#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct Score(u32);

struct Unsaved;

struct Boom;

#[test]
fn saves_name_the_resources_they_leave_out() {
    let mut world = World::new();
    world.register_serde::<Position>("Position");
    world.register_serde_resource::<Score>("Score");
    world.insert_resource(Score(7));
    world.insert_resource(Unsaved);
    world.add_event::<Boom>();
    world.spawn((Position { x: 1.0 }, Scratch));
    world.spawn(Position { x: 2.0 });

    let json = world.save_json().unwrap();
    let ron = world.save_ron().unwrap();
    let binary = world.save_binary().unwrap();
    let unsaved = vec![std::any::type_name::<Unsaved>().to_string()];
    assert_eq!(json.skipped_resources, unsaved);
    assert_eq!(ron.skipped_resources, unsaved);
    assert_eq!(binary.skipped_resources, unsaved);
    assert_eq!(json.skipped.len(), 1);
    assert_eq!(json.skipped[0].type_name, std::any::type_name::<Scratch>());
    assert_eq!(json.skipped[0].entities, 1);

    let loaded = World::load_json(&world.serde_registry(), &json.data).unwrap();
    assert_eq!(loaded.get_resource::<Score>(), Some(&Score(7)));
    assert!(loaded.get_resource::<Unsaved>().is_none());
    assert_eq!(loaded.len(), 2);

    world.remove_resource::<Unsaved>();
    world.init_resource::<FixedTime>();
    assert!(
        world.save_json().unwrap().skipped_resources.is_empty(),
        "Time and FixedTime are registered by default, and the event queue is not game state"
    );
}
