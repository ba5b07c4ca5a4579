//! Reading a type without `#[derive(Component)]` from the world.
use archetable::{Entity, World};

struct NotAComponent;

fn read(world: &World, e: Entity) {
    let _ = world.get::<NotAComponent>(e);
}

fn main() {}
