//! Spawning a type that is neither a component nor a bundle.
use archetable::World;

struct NotAComponent;

fn main() {
    let mut world = World::new();
    world.spawn(NotAComponent);
}
