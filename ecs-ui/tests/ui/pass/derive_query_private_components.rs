//! A `pub` struct deriving `Query` may name components less visible than
//! itself: private, `pub(crate)`, and `pub(super)` from inside a module.
#![deny(warnings, unnameable_types, unreachable_pub, missing_docs)]

use archetable::prelude::*;

#[derive(Component)]
struct Secret(u32);

#[derive(Component)]
pub(crate) struct Shared(u32);

/// Reads a private and a `pub(crate)` component.
#[derive(Query)]
pub struct Peek<'w> {
    secret: &'w Secret,
    shared: Option<&'w Shared>,
    id: Entity,
}

/// Writes a private component, through both mutable field forms.
#[derive(Query)]
pub struct Poke<'w>(&'w mut Secret, Mut<'w, Shared>);

/// Sees `inner`'s `pub(super)` components.
pub mod outer {
    use archetable::prelude::*;

    /// Declares the `pub(super)` components and the queries over them.
    pub mod inner {
        use archetable::prelude::*;

        #[derive(Component)]
        pub(super) struct Hidden(pub(super) u32);

        #[derive(Component)]
        pub(super) struct Step(pub(super) u32);

        /// Writes a component visible only in `outer`.
        #[derive(Query)]
        pub struct HiddenView<'w> {
            hidden: &'w mut Hidden,
            step: Option<&'w Step>,
        }

        /// Reads it.
        #[derive(Query)]
        pub struct HiddenRead<'w> {
            hidden: &'w Hidden,
            id: Entity,
        }

        /// Adds each entity's step (1 without one) to its `Hidden`.
        pub fn bump(world: &mut World) {
            for view in world.query_mut::<HiddenView<'_>>() {
                view.hidden.0 += view.step.map_or(1, |s| s.0);
            }
        }

        /// Every `Hidden`, with its entity, by value.
        pub fn values(world: &World) -> Vec<(Entity, u32)> {
            let mut values: Vec<_> = world.query::<HiddenRead<'_>>().map(|r| (r.id, r.hidden.0)).collect();
            values.sort_by_key(|&(_, v)| v);
            values
        }
    }

    /// Spawns a `Hidden(5)` and a `Hidden(6)` with a `Step(10)`.
    pub fn spawn(world: &mut World) -> (Entity, Entity) {
        (world.spawn(inner::Hidden(5)), world.spawn((inner::Hidden(6), inner::Step(10))))
    }

    /// How many entities `inner::HiddenRead` matches.
    pub fn count(world: &mut World) -> usize {
        let mut state = QueryState::<inner::HiddenRead<'_>>::new(world);
        state.iter(world).count()
    }
}

fn main() {
    let mut world = World::new();
    let a = world.spawn((Secret(1), Shared(10)));
    let b = world.spawn(Secret(2));
    let mut seen = Vec::new();
    for peek in world.query::<Peek<'_>>() {
        seen.push((peek.id, peek.secret.0, peek.shared.map(|s| s.0)));
    }
    seen.sort_by_key(|s| s.1);
    assert_eq!(seen, vec![(a, 1, Some(10)), (b, 2, None)]);

    let mut poked = 0;
    for Poke(secret, mut shared) in world.query_mut::<Poke<'_>>() {
        secret.0 += 100;
        shared.0 += 1000;
        poked += 1;
    }
    assert_eq!(poked, 1);
    assert_eq!(world.get::<Secret>(a).map(|s| s.0), Some(101));
    assert_eq!(world.get::<Shared>(a).map(|s| s.0), Some(1010));
    assert_eq!(world.get::<Secret>(b).map(|s| s.0), Some(2));

    let (c, d) = outer::spawn(&mut world);
    outer::inner::bump(&mut world);
    assert_eq!(outer::inner::values(&world), vec![(c, 6), (d, 16)]);
    assert_eq!(outer::count(&mut world), 2);
}
