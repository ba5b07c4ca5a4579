// A schedule runs only systems that return `()`: a system's output must be
// piped, mapped or handled first.
use archetable::prelude::*;

fn fallible() -> Result<(), String> {
    Ok(())
}

fn main() {
    let mut schedule = Schedule::new();
    schedule.add_system(fallible);
}
