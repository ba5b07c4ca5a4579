//! `World::query_many` runs through a shared borrow, so it takes read-only
//! queries only; `query_many_mut` is the one for `&mut`.
use archetable::{Component, World};

#[derive(Component)]
struct Health(u32);

fn main() {
    let mut world = World::new();
    let a = world.spawn(Health(1));
    let b = world.spawn(Health(2));
    let _ = world.query_many::<&mut Health, 2>([a, b]);
}
