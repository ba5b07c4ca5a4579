//! A query filter position holding a type that is not a filter.
use archetable::{Component, World};

#[derive(Component)]
struct Position(f32);

struct NotAComponent;

fn main() {
    let world = World::new();
    let _ = world.query_filtered::<&Position, NotAComponent>();
}
