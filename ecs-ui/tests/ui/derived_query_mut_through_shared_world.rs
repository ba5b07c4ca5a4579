//! A derived query with a `&mut` field is not read-only: `&World` refuses it.
use archetable::{Component, Query, World};

#[derive(Component)]
struct Position(f32);

#[derive(Query)]
struct Moving<'w> {
    pos: &'w mut Position,
}

fn main() {
    let world = World::new();
    let _ = world.query::<Moving<'_>>();
}
