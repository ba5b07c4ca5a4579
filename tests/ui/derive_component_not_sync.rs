//! Components are shared across threads: a `!Sync` type is refused.
use ecs::Component;

#[derive(Component)]
struct Counter(std::cell::Cell<u32>);

fn main() {}
