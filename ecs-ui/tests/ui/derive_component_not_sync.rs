//! Components are shared across threads: a `!Sync` type is refused.
use archetable::Component;

#[derive(Component)]
struct Counter(std::cell::Cell<u32>);

fn main() {}
