//! A query over a type without `#[derive(Component)]`.
use archetable::World;

struct NotAComponent;

fn main() {
    let world = World::new();
    let _ = world.query::<&NotAComponent>();
}
