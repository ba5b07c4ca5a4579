//! The component types and the registry the fuzz target loads into, and a
//! small populated world to merge into.

use std::collections::BTreeMap;

use archetable::prelude::*;
use serde::{Deserialize, Serialize};

#[derive(Component, Serialize, Deserialize, Default, Debug, Clone, PartialEq)]
pub struct Position {
    pub x: f32,
    pub y: f32,
}

#[derive(Component, Serialize, Deserialize, Default, Debug, Clone, PartialEq)]
pub enum Shape {
    #[default]
    Dot,
    Circle {
        r: f64,
    },
    Square(f32),
    Line(i16, i16),
}

#[derive(Component, Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Links {
    pub target: Entity,
    pub others: Vec<Entity>,
    pub maybe: Option<Entity>,
    pub by_name: BTreeMap<String, Entity>,
}

#[derive(Component, Serialize, Deserialize, Default, Debug, Clone, PartialEq)]
pub struct Name(pub String);

#[derive(Component, Serialize, Deserialize, Default, Debug, Clone, PartialEq)]
pub struct Inventory {
    pub items: Vec<(char, u8)>,
    pub bytes: Vec<u8>,
    pub gold: u64,
    pub debt: i128,
}

#[derive(Component, Serialize, Deserialize, Default, Debug, Clone, PartialEq)]
pub struct Marker;

/// In sparse storage: only some entities of a table have it.
#[derive(Component, Serialize, Deserialize, Default, Debug, Clone, PartialEq)]
#[component(storage = "sparse")]
pub struct Stunned(pub u8);

#[derive(Serialize, Deserialize, Default, Debug, Clone, PartialEq)]
pub struct Score(pub u32);

/// A world with every fixture type registered.
pub fn registered_world() -> World {
    let mut world = World::new();
    world
        .register_serde::<Position>("Position")
        .register_serde::<Shape>("Shape")
        .register_serde_without_default::<Links>("Links")
        .register_serde::<Name>("Name")
        .register_serde::<Inventory>("Inventory")
        .register_serde::<Marker>("Marker")
        .register_serde::<Stunned>("Stunned")
        .register_serde_resource::<Score>("Score");
    world
}

/// A registered world with a few entities, some despawned.
pub fn populated_world() -> World {
    let mut world = registered_world();
    let a = world.spawn((Position { x: 1.0, y: 2.0 }, Shape::Circle { r: 3.0 }, Marker));
    let b = world.spawn((Name("b".into()), Shape::Line(-1, 2)));
    let c = world.spawn(Inventory { items: vec![('x', 2)], bytes: vec![1, 2], gold: 9, debt: -4 });
    world.despawn(b).unwrap();
    let mut by_name = BTreeMap::new();
    by_name.insert("a".to_string(), a);
    world.spawn(Links { target: a, others: vec![c, b], maybe: Some(c), by_name });
    world.insert(a, Stunned(3)).expect("a is alive");
    world.spawn(Stunned(1));
    world.insert_resource(Score(5));
    world
}
