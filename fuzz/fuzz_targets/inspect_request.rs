//! Feeds the fuzzer's bytes to the inspector as a request body, against a
//! small world, the way the server hands a body to the game thread:
//! parsing, the JSON-RPC envelope, every method and its parameters. A
//! panic in the inspector is a crash; so is an answer that reports a
//! caught panic (no user code here panics, so it would be the
//! inspector's), an answer that is not JSON, and a world left
//! inconsistent.
//!
//! Seeds: `fuzz/seeds/inspect_request/` (one request per file).

#![no_main]

use archetable::prelude::*;
use libfuzzer_sys::fuzz_target;
use serde::{Deserialize, Serialize};

#[derive(Component, Serialize, Deserialize, Default, Clone, Copy)]
struct Position {
    x: f32,
    y: f32,
}

#[derive(Component, Serialize, Deserialize, Default)]
struct Health(u32);

#[derive(Component, Serialize, Deserialize, Default)]
struct Tags(Vec<String>);

#[derive(Component, Serialize, Deserialize)]
struct Target(Entity);

/// In sparse storage, and not registered: read-only.
#[derive(Component)]
#[component(storage = "sparse")]
struct Marked;

#[derive(Serialize, Deserialize, Default)]
struct Score(u32);

fn world() -> World {
    let mut world = World::new();
    world
        .register_serde::<Position>("Position")
        .register_serde::<Health>("Health")
        .register_serde::<Tags>("Tags")
        .register_serde_without_default::<Target>("Target")
        .register_serde_resource::<Score>("Score");
    world.insert_resource(Score(3));
    let a = world.spawn((Position { x: 1.0, y: 2.0 }, Health(5)));
    let b = world.spawn((Position { x: 3.0, y: 4.0 }, Tags(vec!["x".into()]), Target(a)));
    let c = world.spawn((Health(1), ChildOf(a)));
    world.spawn((Health(2), ChildOf(c)));
    world.insert(b, Marked).unwrap();
    world
}

fuzz_target!(|data: &[u8]| {
    let mut world = world();
    if let Some(answer) = archetable_inspect::answer_for_fuzzing(&mut world, data) {
        assert!(!answer.contains("\"code\":-32005"), "the inspector panicked: {answer}");
        let _: serde_json::Value = serde_json::from_str(&answer).expect("answers are JSON");
    }
    world.check_invariants().unwrap();
});
