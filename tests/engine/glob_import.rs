//! The facade's glob import and serde's derives in one file: no item of the
//! facade shadows or clashes with the `serde` crate (this file would not
//! compile, error E0659, if one did).

#![cfg(feature = "serde")]

use archetable::data::SerdeWorldExt;
use archetable::*;
use serde::{Deserialize, Serialize};

#[derive(Component, Serialize, Deserialize, Default, Debug, PartialEq)]
struct Position {
    x: f32,
}

#[test]
fn the_glob_import_and_serde_derives_live_side_by_side() {
    let mut world = World::new();
    world.register_serde::<Position>("Position");
    let e = world.spawn(Position { x: 1.0 });
    let saved = world.save_json().unwrap().data;
    let loaded = World::load_json(&world.serde_registry(), &saved).unwrap();
    assert_eq!(loaded.get::<Position>(e), Some(&Position { x: 1.0 }));
}
