//! An immutable component is spawned, read, queried by reference and
//! replaced by insert; the engine's lists read as any component.
use archetable::prelude::*;

#[derive(Component, Debug, PartialEq)]
#[component(immutable, track_changes)]
struct Seed(u64);

fn main() {
    let mut world = World::new();
    let e = world.spawn(Seed(1));
    world.insert(e, Seed(2)).unwrap();
    assert_eq!(world.get::<Seed>(e), Some(&Seed(2)));
    assert_eq!(world.query::<&Seed>().count(), 1);
    assert_eq!(world.query_filtered::<Entity, Changed<Seed>>().count(), 1);
    let child = world.spawn(ChildOf(e));
    assert_eq!(world.query::<&Children>().next().map(|c| c.len()), Some(1));
    world.insert(child, ChildOf(e)).unwrap();
    assert_eq!(world.children(e), [child]);
}
