// `iter` is read-only; a query that writes iterates with `iter_mut`.
use archetable::prelude::*;

#[derive(Component)]
struct Hp(u32);

fn heal(q: Query<&mut Hp>) {
    for _hp in q.iter() {}
}

fn main() {
    Schedule::new().add_system(heal);
}
