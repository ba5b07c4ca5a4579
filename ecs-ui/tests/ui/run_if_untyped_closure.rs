// A run condition's closure must say its parameter's type (`|w: &World|`):
// `run_if` takes a `Condition` or a function of `&World`, and a closure
// passed through that choice gets no type for its parameter from it. A
// method called on the parameter: "type annotations needed", which
// `run_if`'s docs name.
use archetable::prelude::*;

struct Lives(u32);

fn fly() {}

fn main() {
    let mut schedule = Schedule::new();
    schedule.add_system(fly).run_if(|w| w.resource::<Lives>().0 > 0);
}
