// A storage kind other than "table" or "sparse" is refused.
use archetable::Component;

#[derive(Component)]
#[component(storage = "dense")]
struct Health(u32);

fn main() {}
