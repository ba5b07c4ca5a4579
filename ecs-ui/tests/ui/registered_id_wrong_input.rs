// A registered system's id carries its input and output types: running it
// without its input, or a schedule's id as a registered one, does not
// compile.
use archetable::prelude::*;

fn double(In(x): In<u32>) -> u32 {
    x * 2
}

fn tick() {}

fn main() {
    let mut world = World::new();
    let id = world.register_system(double);
    let _ = world.run_system(id);
    let mut schedule = Schedule::new();
    let scheduled = schedule.add_system(tick).id();
    let _ = world.run_system(scheduled);
}
