//! `QueryState::iter` takes `&World`, so it runs only read-only queries.
use archetable::{Component, QueryState, World};

#[derive(Component)]
struct Position(f32);

fn main() {
    let mut world = World::new();
    let mut state = QueryState::<&mut Position>::new(&mut world);
    let _ = state.iter(&world);
}
