//! A system taking `&World` reads everything and changes nothing: spawning
//! through it does not compile (take `Commands`, or `&mut World` alone).
use archetable::{Component, World};

#[derive(Component)]
struct Health(u32);

fn spawner(world: &World) {
    world.spawn(Health(1));
}

fn main() {
    let _ = spawner;
}
