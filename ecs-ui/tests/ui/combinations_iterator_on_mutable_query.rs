//! `iter_combinations` (an `Iterator` of arrays) is for read-only queries;
//! a query that writes uses `iter_combinations_mut` and `fetch_next`.
use archetable::{Component, QueryState, World};

#[derive(Component)]
struct Health(u32);

fn main() {
    let mut world = World::new();
    let mut state = QueryState::<&mut Health>::new(&mut world);
    for [a, b] in state.iter_combinations::<2>(&world) {
        let _ = (a, b);
    }
}
