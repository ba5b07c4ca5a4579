//! Components are owned by the world: a borrowing type is refused.
use ecs::Component;

#[derive(Component)]
struct Named<'a>(&'a str);

fn main() {}
