//! An immutable component cannot be borrowed mutably through a query: only
//! an insert replaces it, so its hooks see every change.
use archetable::prelude::*;

#[derive(Component)]
#[component(immutable)]
struct Seed(u64);

fn main() {
    let mut world = World::new();
    world.spawn(Seed(1));
    for mut seed in world.query_mut::<&mut Seed>() {
        seed.0 += 1;
    }
}
