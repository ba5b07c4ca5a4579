//! The lending form of `iter_combinations_mut` hands out one array at a
//! time: two arrays alive together could name one entity twice.
use archetable::{Component, QueryState, World};

#[derive(Component)]
struct Health(u32);

fn main() {
    let mut world = World::new();
    let mut state = QueryState::<&mut Health>::new(&mut world);
    let mut pairs = state.iter_combinations_mut::<2>(&mut world);
    let first = pairs.fetch_next().unwrap();
    let second = pairs.fetch_next().unwrap();
    let _ = (first[0].0, second[0].0);
}
