//! A `pub` struct deriving `QueryFilter` may name components less visible
//! than itself, and a `pub` derived query may nest another one.
#![deny(warnings, unnameable_types, unreachable_pub, missing_docs)]

use archetable::prelude::*;

#[derive(Component)]
struct Secret;

#[derive(Component)]
pub(crate) struct Shared(u32);

#[derive(Component)]
#[component(track_changes)]
struct Tracked(u32);

/// Passes entities with a private component and without a crate one.
#[derive(QueryFilter)]
pub struct Hidden {
    _secret: With<Secret>,
    _shared: Without<Shared>,
}

/// A per-row filter over a private component, nesting another filter.
#[derive(QueryFilter)]
pub struct FreshHidden(Changed<Tracked>, Hidden);

/// Reads a crate component.
#[derive(Query)]
pub struct Inner<'w> {
    shared: &'w Shared,
}

/// Nests `Inner`.
#[derive(Query)]
pub struct Outer<'w> {
    inner: Inner<'w>,
    tracked: Option<&'w Tracked>,
}

fn main() {
    let mut world = World::new();
    world.spawn((Secret, Tracked(1)));
    world.spawn((Shared(2), Tracked(3)));
    assert_eq!(world.query_filtered::<Entity, Hidden>().len(), 1);
    assert_eq!(world.query_filtered::<Entity, FreshHidden>().count(), 1);
    let sum: u32 = world.query::<Outer<'_>>().map(|o| o.inner.shared.0 + o.tracked.map_or(0, |t| t.0)).sum();
    assert_eq!(sum, 5);
}
