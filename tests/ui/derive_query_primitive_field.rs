//! A derived query's fields borrow from the world: a plain `u32` is refused.
use ecs::Query;

#[derive(Query)]
struct Count {
    n: u32,
}

fn main() {}
