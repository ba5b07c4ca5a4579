//! A hook runs in the middle of a world operation, so the view it gets has
//! no structural changes: they go through its commands instead.
use archetable::prelude::*;

#[derive(Component)]
struct Position(f32);

fn main() {
    let mut world = World::new();
    world.register_component_hooks::<Position>().on_add(|world, entity| {
        world.spawn(Position(0.0));
        world.despawn(entity);
    });
}
