//! A query naming a type without `#[derive(Component)]` inside a tuple.
use archetable::{Component, World};

#[derive(Component)]
struct Position(f32);

struct NotAComponent;

fn main() {
    let world = World::new();
    let _ = world.query::<(&Position, &NotAComponent)>();
}
