// Queries are taken by value: a reference to one is not a parameter.
use archetable::prelude::*;

#[derive(Component)]
struct Hp(u32);

fn heal(_: &Query<&mut Hp>) {}

fn main() {
    Schedule::new().add_system(heal);
}
