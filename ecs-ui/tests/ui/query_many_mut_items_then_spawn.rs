//! The items of `query_many_mut` borrow the world: no spawn while they live.
use archetable::{Component, World};

#[derive(Component)]
struct Health(u32);

fn main() {
    let mut world = World::new();
    let a = world.spawn(Health(1));
    let b = world.spawn(Health(2));
    let [x, _y] = world.query_many_mut::<&mut Health, 2>([a, b]).unwrap();
    world.spawn(Health(3));
    let _ = x.0;
}
