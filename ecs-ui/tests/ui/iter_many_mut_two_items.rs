//! `iter_many_mut` lends one item at a time: a handle listed twice must not
//! give two live `&mut` to one value.
use archetable::{Component, QueryState, World};

#[derive(Component)]
struct Health(u32);

fn main() {
    let mut world = World::new();
    let a = world.spawn(Health(1));
    let mut state = QueryState::<&mut Health>::new(&mut world);
    let mut iter = state.iter_many_mut(&mut world, [a, a]);
    let first = iter.fetch_next().unwrap();
    let second = iter.fetch_next().unwrap();
    let _ = (first.0, second.0);
}
