// A required component named without a value is built by its `Default`;
// the error points at the type in the attribute.
use archetable::Component;

#[derive(Component)]
struct Velocity(f32);

#[derive(Component)]
#[component(requires(Velocity))]
struct Ship;

fn main() {}
