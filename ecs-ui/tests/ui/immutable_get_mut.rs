//! `World::get_mut` refuses an immutable component.
use archetable::prelude::*;

#[derive(Component)]
#[component(immutable)]
struct Seed(u64);

fn main() {
    let mut world = World::new();
    let e = world.spawn(Seed(1));
    world.get_mut::<Seed>(e).unwrap().0 = 2;
}
