//! A `pub` struct deriving `SystemParam` may name components, resources and
//! local state less visible than itself: private, `pub(crate)`, and
//! `pub(super)` from inside a module.
#![deny(warnings, unnameable_types, unreachable_pub, missing_docs)]

use archetable::prelude::*;

#[derive(Component)]
struct Secret(u32);

#[derive(Default)]
struct Tally(u32);

#[derive(Component)]
pub(crate) struct Shared(u32);

pub(crate) struct Budget(u32);

/// Groups parameters over private types.
#[derive(SystemParam)]
pub struct Private<'w, 's> {
    secrets: Query<'w, 's, (&'static mut Secret, Option<&'static Shared>)>,
    tally: ResMut<'w, Tally>,
    runs: Local<'s, Tally>,
}

/// Groups parameters over `pub(crate)` types, as a tuple struct.
#[derive(SystemParam)]
pub struct Crate<'w, 's>(Query<'w, 's, &'static Shared, With<Secret>>, Res<'w, Budget>, Commands<'w, 's>);

/// Sees `inner`'s `pub(super)` component and resource.
pub mod outer {
    use archetable::prelude::*;

    /// Declares the `pub(super)` types and the parameter over them.
    pub mod inner {
        use archetable::prelude::*;

        #[derive(Component)]
        pub(super) struct Hidden(pub(super) u32);

        pub(super) struct Limit(pub(super) u32);

        /// Groups parameters over types visible only in `outer`.
        #[derive(SystemParam)]
        pub struct Nested<'w, 's> {
            hidden: Query<'w, 's, &'static mut Hidden>,
            limit: Option<Res<'w, Limit>>,
        }

        /// Caps every `Hidden` at the `Limit`, if there is one.
        pub fn clamp(mut nested: Nested) {
            let limit = nested.limit.as_ref().map_or(u32::MAX, |l| l.0);
            for mut hidden in nested.hidden.iter_mut() {
                hidden.0 = hidden.0.min(limit);
            }
        }
    }

    /// Inserts `Limit(7)` and spawns a `Hidden(100)`.
    pub fn setup(world: &mut World) -> Entity {
        world.insert_resource(inner::Limit(7));
        world.spawn(inner::Hidden(100))
    }

    /// The value of `entity`'s `Hidden`.
    pub fn hidden(world: &World, entity: Entity) -> Option<u32> {
        world.get::<inner::Hidden>(entity).map(|h| h.0)
    }
}

fn count(mut private: Private) {
    private.runs.0 += 1;
    for (mut secret, shared) in private.secrets.iter_mut() {
        secret.0 += shared.map_or(1, |s| s.0);
    }
    private.tally.0 = private.runs.0;
}

fn spend(Crate(shared, budget, mut commands): Crate) {
    let total: u32 = shared.iter().map(|s| s.0).sum();
    if total <= budget.0 {
        commands.spawn(Shared(total));
    }
}

fn main() {
    let mut world = World::new();
    world.insert_resource(Tally(0));
    world.insert_resource(Budget(5));
    let a = world.spawn((Secret(0), Shared(2)));
    let b = world.spawn(Secret(0));
    let c = outer::setup(&mut world);

    let mut schedule = Schedule::new();
    schedule.add_system(count);
    schedule.add_system(spend);
    schedule.add_system(outer::inner::clamp);
    schedule.run(&mut world);
    schedule.run(&mut world);

    assert_eq!(world.get::<Secret>(a).map(|s| s.0), Some(4));
    assert_eq!(world.get::<Secret>(b).map(|s| s.0), Some(2));
    assert_eq!(world.resource::<Tally>().0, 2);
    // `spend` ran twice, each time spawning one `Shared(2)` without `Secret`.
    assert_eq!(world.query::<&Shared>().map(|s| s.0).collect::<Vec<_>>(), vec![2, 2, 2]);
    assert_eq!(outer::hidden(&world, c), Some(7));
}
