//! What `World::spawn` takes ([`SpawnBundle`]: a typed bundle, or the
//! components an [`EntityBuilder`] gathered at run time), and spawning or
//! inserting the contents of an `EntityBuilder`.

use crate::component::bundle::Bundle;
use crate::entity::error::EntityError;
use crate::entity::Entity;
use crate::storage::builder::{BuiltBundle, EntityBuilder};
use crate::world::World;

/// What [`World::spawn`](World::spawn) takes: every [`Bundle`]
/// (components, tuples, `#[derive(Bundle)]` structs), whose component list
/// is known at compile time, and a [`BuiltBundle`](crate::BuiltBundle),
/// whose components are chosen at run time. Sealed: implement [`Bundle`].
///
/// ```
/// # use archetable::prelude::*;
/// # use archetable::{EntityBuilder, SpawnBundle};
/// # #[derive(Component)] struct Hp(u32);
/// fn spawn_two(world: &mut World, a: impl SpawnBundle, b: impl SpawnBundle) -> [Entity; 2] {
///     [world.spawn(a), world.spawn(b)]
/// }
/// let mut world = World::new();
/// let mut builder = EntityBuilder::new();
/// builder.add(Hp(2));
/// spawn_two(&mut world, Hp(1), builder.build());
/// assert_eq!(world.len(), 2);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a bundle",
    label = "not a bundle of components",
    note = "a bundle is a component, a tuple of bundles, a struct with `#[derive(Bundle)]`, or an `EntityBuilder`'s `build()`"
)]
pub trait SpawnBundle: sealed::Sealed {
    /// Spawns the components as a new entity of `world`.
    #[doc(hidden)]
    fn spawn_in(self, world: &mut World) -> Entity;
}

mod sealed {
    pub trait Sealed {}
    impl<B: crate::component::bundle::Bundle> Sealed for B {}
    impl Sealed for crate::storage::builder::BuiltBundle {}
}

impl<B: Bundle> SpawnBundle for B {
    #[inline(always)]
    fn spawn_in(self, world: &mut World) -> Entity {
        world.spawn_bundle(self)
    }
}

impl SpawnBundle for BuiltBundle {
    fn spawn_in(mut self, world: &mut World) -> Entity {
        world.spawn_built(self.builder_mut())
    }
}

impl World {
    /// Spawns an entity with the components of `builder`, in one table move,
    /// running the hooks as for a tuple of the same components (`on_add`
    /// for each, then `on_insert` for each). The builder ends empty and
    /// keeps its memory.
    ///
    /// # Panics
    /// As [`World::spawn`].
    pub fn spawn_built(&mut self, builder: &mut EntityBuilder) -> Entity {
        let hooked = builder.engine_hooked();
        let (entity, bundle) = self.spawn_built_unhooked(builder);
        if self.hooks.is_active() || hooked {
            self.after_spawn_hooks(bundle, entity);
        }
        entity
    }

    /// Inserts the components of `builder` into `entity`, replacing those
    /// it has, in one table move, running the hooks as
    /// [`World::insert`] does for a tuple. The builder ends empty; if the
    /// entity is gone, it keeps its values and nothing happens.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component, Debug, PartialEq)] struct Hp(u32);
    /// # #[derive(Component, Debug, PartialEq)] struct Armor(u32);
    /// let mut world = World::new();
    /// let e = world.spawn(Hp(1));
    /// let mut builder = EntityBuilder::new();
    /// builder.add(Hp(7)).add(Armor(2));
    /// world.insert_built(e, &mut builder).unwrap();
    /// assert_eq!((world.get::<Hp>(e), world.get::<Armor>(e)), (Some(&Hp(7)), Some(&Armor(2))));
    /// ```
    pub fn insert_built(&mut self, entity: Entity, builder: &mut EntityBuilder) -> Result<(), EntityError> {
        if self.hooks.is_active() || builder.engine_hooked() {
            return self.insert_built_hooked(entity, builder);
        }
        self.insert_built_unhooked(entity, builder).map(drop)
    }
}
