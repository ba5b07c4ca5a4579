// A pipe whose last system returns something is not a schedule's system
// either.
use archetable::prelude::*;

fn count(all: Query<Entity>) -> usize {
    all.iter().count()
}

fn double(In(n): In<usize>) -> usize {
    n * 2
}

fn main() {
    let mut schedule = Schedule::new();
    schedule.add_system(count.pipe(double));
}
