//! A `#[derive(Query)]` struct cannot hold `&mut` of an immutable component.
use archetable::prelude::*;

#[derive(Component)]
#[component(immutable)]
struct Seed(u64);

#[derive(Query)]
struct Reseed<'w> {
    seed: &'w mut Seed,
}

fn main() {}
