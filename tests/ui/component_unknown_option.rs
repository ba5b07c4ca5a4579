// A misspelled `component` option is refused with the options there are.
use ecs::Component;

#[derive(Component)]
#[component(track_change)]
struct Health(u32);

fn main() {}
