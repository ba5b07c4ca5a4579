//! A state type lists its states as the variants of an enum.
use archetable::States;

#[derive(States, Clone, PartialEq, Eq, Hash, Debug)]
struct Screen {
    menu: bool,
}

fn main() {}
