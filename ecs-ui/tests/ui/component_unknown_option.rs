// A misspelled `component` option is refused with the options there are.
use archetable::Component;

#[derive(Component)]
#[component(track_change)]
struct Health(u32);

fn main() {}
