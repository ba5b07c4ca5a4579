//! A component borrow must not outlive a structural change: spawning may
//! reallocate the column the borrow points into.
use archetable::{Component, World};

#[derive(Component)]
struct Position(f32);

fn main() {
    let mut world = World::new();
    let e = world.spawn(Position(0.0));
    let p = world.get::<Position>(e).unwrap();
    world.spawn(Position(1.0));
    let _ = p.0;
}
