// A schedule runs only systems without an input: one that takes `In<T>`
// runs by id, or at the end of a pipe.
use archetable::prelude::*;

fn add(In(x): In<u32>, mut total: ResMut<Total>) {
    total.0 += x;
}

#[derive(Default)]
struct Total(u32);

fn main() {
    let mut schedule = Schedule::new();
    schedule.add_system(add);
}
