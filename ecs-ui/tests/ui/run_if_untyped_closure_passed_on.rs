// A run condition's closure must say its parameter's type (`|w: &World|`).
// A parameter passed on to a function of `&World` takes the type of one
// borrow only: "implementation of `FnMut` is not general enough", which
// `run_if`'s docs name.
use archetable::prelude::*;

struct Lives(u32);

fn fly() {}

fn has_lives(world: &World) -> bool {
    world.resource::<Lives>().0 > 0
}

fn main() {
    let mut schedule = Schedule::new();
    schedule.add_system(fly).run_if(|w| has_lives(w));
}
