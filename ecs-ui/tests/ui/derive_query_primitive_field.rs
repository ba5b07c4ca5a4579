//! A derived query's fields borrow from the world: a plain `u32` is refused.
use archetable::Query;

#[derive(Query)]
struct Count {
    n: u32,
}

fn main() {}
