//! A hook's `HookWorld::get_mut` refuses an immutable component too.
use archetable::prelude::*;

#[derive(Component)]
#[component(immutable)]
struct Seed(u64);

fn main() {
    let mut world = World::new();
    world.register_component_hooks::<Seed>().on_add(|world, entity| {
        world.get_mut::<Seed>(entity).unwrap().0 = 2;
    });
}
