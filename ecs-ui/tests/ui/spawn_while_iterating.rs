//! A query iterator borrows the world: no spawning while iterating.
use archetable::{Component, World};

#[derive(Component)]
struct Position(f32);

fn main() {
    let mut world = World::new();
    for p in world.query::<&Position>() {
        world.spawn(Position(p.0));
    }
}
