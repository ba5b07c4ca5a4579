//! A component borrow must not outlive a structural change: despawning drops
//! the value, or moves another row into its place.
use archetable::{Component, World};

#[derive(Component)]
struct Position(f32);

fn main() {
    let mut world = World::new();
    let e = world.spawn(Position(0.0));
    let p = world.get::<Position>(e).unwrap();
    world.despawn(e).unwrap();
    let _ = p.0;
}
