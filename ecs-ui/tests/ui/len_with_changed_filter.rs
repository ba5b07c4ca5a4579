//! `len()` needs a filter that decides per archetype: `Changed` tests each
//! row, so its query iterator is not an `ExactSizeIterator`.
use archetable::{Changed, Component, World};

#[derive(Component)]
#[component(track_changes)]
struct Health(u32);

fn main() {
    let world = World::new();
    let _ = world.query_filtered::<&Health, Changed<Health>>().len();
}
