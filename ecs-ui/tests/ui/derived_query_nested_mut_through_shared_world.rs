//! A derived query that nests one that writes is not read-only: it cannot
//! run through a shared borrow of the world.
use archetable::{Component, Query, World};

#[derive(Component)]
struct Health(u32);

#[derive(Query)]
struct Inner<'w> {
    health: &'w mut Health,
}

#[derive(Query)]
struct Outer<'w> {
    inner: Inner<'w>,
}

fn main() {
    let world = World::new();
    for outer in world.query::<Outer<'_>>() {
        let _ = outer.inner.health.0;
    }
}
