//! Components are owned by the world: a borrowing type is refused.
use archetable::Component;

#[derive(Component)]
struct Named<'a>(&'a str);

fn main() {}
