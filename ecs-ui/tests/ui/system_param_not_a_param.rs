// A system's parameters must all be system parameters.
use archetable::prelude::*;

fn takes_a_number(_: u32) {}

fn main() {
    Schedule::new().add_system(takes_a_number);
}
