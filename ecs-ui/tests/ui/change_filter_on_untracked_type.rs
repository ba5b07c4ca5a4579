// `Added`, `Changed` and `Ref` need the type to opt in to change tracking;
// the error says how.
use archetable::prelude::*;

#[derive(Component)]
struct Position(f32);

fn main() {
    let mut world = World::new();
    let _ = QueryState::<Entity, Changed<Position>>::new(&mut world);
    let _ = QueryState::<Ref<Position>>::new(&mut world);
}
