//! A borrow from `EntityWorldMut::get` must not outlive an insert through
//! the same handle: the insert moves the entity's row to another table.
use archetable::{Component, World};

#[derive(Component)]
struct Position(f32);

#[derive(Component)]
struct Velocity(f32);

fn main() {
    let mut world = World::new();
    let e = world.spawn(Position(0.0));
    let mut entity = world.entity_mut(e).unwrap();
    let p = entity.get::<Position>().unwrap();
    entity.insert(Velocity(1.0));
    let _ = p.0;
}
