//! `Option<&mut T>` of an immutable component is refused like `&mut T`.
use archetable::prelude::*;

#[derive(Component)]
#[component(immutable)]
struct Seed(u64);

fn main() {
    let mut world = World::new();
    let e = world.spawn(Seed(1));
    let _ = world.query_one_mut::<Option<&mut Seed>>(e);
}
