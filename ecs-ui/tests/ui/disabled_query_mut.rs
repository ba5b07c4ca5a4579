//! `Disabled` cannot be borrowed mutably: an entity is disabled and enabled
//! by inserting and removing the marker (`World::disable`, `World::enable`),
//! so that the move between tables and `Disabled`'s hooks always happen.
use archetable::prelude::*;

fn main() {
    let mut world = World::new();
    let e = world.spawn(());
    world.disable(e).unwrap();
    for disabled in world.query_mut::<&mut Disabled>() {
        let _ = disabled;
    }
}
