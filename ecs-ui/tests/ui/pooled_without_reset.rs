// A pooled component must say how to reset its values for reuse.
use archetable::Component;

#[derive(Component, Default)]
#[component(pooled)]
struct Trail(Vec<f32>);

fn main() {}
