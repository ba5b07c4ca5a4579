//! A query names components by reference: `&Position`, not `Position`.
use archetable::{Component, World};

#[derive(Component)]
struct Position(f32);

fn main() {
    let world = World::new();
    let _ = world.query::<Position>();
}
