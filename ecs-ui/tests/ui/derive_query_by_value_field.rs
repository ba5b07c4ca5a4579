//! A derived query's fields borrow from the world: a by-value component is
//! refused.
use archetable::{Component, Query};

#[derive(Component)]
struct Position(f32);

#[derive(Query)]
struct ByValue {
    pos: Position,
}

fn main() {}
