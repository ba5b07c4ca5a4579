//! A `&mut` query through `&World` must not compile.
use archetable::{Component, World};

#[derive(Component)]
struct Position(f32);

fn main() {
    let world = World::new();
    let _ = world.query::<&mut Position>();
}
