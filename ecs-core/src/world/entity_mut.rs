//! `EntityWorldMut`: one entity with exclusive access to its world, so a
//! run of inserts, removals and reads on it needs the handle only once.
//!
//! Every method goes through the `World` method of the same name, so hooks,
//! change ticks and removal records behave exactly as they do there. The
//! handle looks the entity up again on every call (two array loads): an
//! insert or a removal moves it to another table, and the commands a hook
//! queues may move or despawn it before the call returns.

use std::fmt;

use crate::component::bundle::Bundle;
use crate::component::change::Mut;
use crate::component::Component;
use crate::entity::error::{ComponentError, EntityError};
use crate::entity::Entity;
use crate::world::entity_ref::EntityRef;
use crate::world::World;

/// One entity of a world, with mutable access to it: returned by
/// [`World::entity_mut`].
///
/// ```
/// use archetable::prelude::*;
///
/// #[derive(Component, Debug, PartialEq)] struct Hp(u32);
/// #[derive(Component, Debug, PartialEq)] struct Armor(u32);
/// #[derive(Component)] struct Burning;
///
/// let mut world = World::new();
/// let e = world.spawn(Hp(10));
/// let mut entity = world.entity_mut(e).unwrap();
/// entity.insert(Armor(2)).insert(Burning);
/// entity.get_mut::<Hp>().unwrap().0 -= 3;
/// entity.discard::<Burning>().unwrap();
/// assert_eq!(entity.remove::<Armor>(), Ok(Armor(2)));
/// assert_eq!((entity.get::<Hp>(), entity.has::<Burning>()), (Some(&Hp(7)), false));
/// entity.despawn().unwrap();
/// assert!(!world.contains(e));
/// ```
///
/// # When a hook despawns the entity
/// The commands that hooks queue apply before each method returns, and one
/// of them may despawn the entity. From then on the handle answers as a
/// stale one does: [`is_alive`](Self::is_alive) is false, `get`, `get_mut`
/// and `entity_ref` return `None`, `has` is false, `remove`, `discard`,
/// `try_insert` and `despawn` return the `NoSuchEntity` error, and
/// [`insert`](Self::insert) panics, naming the entity (use
/// [`try_insert`](Self::try_insert) where a hook may despawn it).
pub struct EntityWorldMut<'w> {
    world: &'w mut World,
    entity: Entity,
}

impl<'w> EntityWorldMut<'w> {
    pub(crate) fn new(world: &'w mut World, entity: Entity) -> Self {
        EntityWorldMut { world, entity }
    }

    /// The entity's handle.
    #[inline]
    pub fn id(&self) -> Entity {
        self.entity
    }

    /// Whether the entity is still alive: false once a hook's commands
    /// despawned it.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component)] struct Hp(u32);
    /// let mut world = World::new();
    /// let e = world.spawn(Hp(1));
    /// assert!(world.entity_mut(e).unwrap().is_alive());
    /// ```
    #[inline]
    pub fn is_alive(&self) -> bool {
        self.world.contains(self.entity)
    }

    /// Adds the components of `bundle`, overwriting (and dropping, or
    /// pooling) the ones the entity has, as [`World::insert`] does.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component, Debug, PartialEq)] struct Hp(u32);
    /// # #[derive(Component)] struct Enemy;
    /// let mut world = World::new();
    /// let e = world.spawn(Hp(1));
    /// world.entity_mut(e).unwrap().insert(Hp(5)).insert(Enemy);
    /// assert_eq!(world.get::<Hp>(e), Some(&Hp(5)));
    /// assert!(world.has::<Enemy>(e));
    /// ```
    ///
    /// # Panics
    /// If the entity was despawned (by a hook's commands) since this
    /// handle was made; [`EntityWorldMut::try_insert`] returns an error
    /// instead.
    #[track_caller]
    pub fn insert<B: Bundle>(&mut self, bundle: B) -> &mut Self {
        if let Err(error) = self.world.insert(self.entity, bundle) {
            despawned_meanwhile(error);
        }
        self
    }

    /// [`EntityWorldMut::insert`], with an error instead of a panic when
    /// the entity is gone (the bundle is dropped then).
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component)] struct Hp(u32);
    /// let mut world = World::new();
    /// let e = world.spawn(Hp(1));
    /// assert!(world.entity_mut(e).unwrap().try_insert(Hp(2)).is_ok());
    /// ```
    pub fn try_insert<B: Bundle>(&mut self, bundle: B) -> Result<&mut Self, EntityError> {
        self.world.insert(self.entity, bundle)?;
        Ok(self)
    }

    /// Removes the components of bundle `B` and returns them, as
    /// [`World::remove`] does. The entity must have all of them.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component, Debug, PartialEq)] struct Hp(u32);
    /// # #[derive(Component, Debug, PartialEq)] struct Armor(u32);
    /// let mut world = World::new();
    /// let e = world.spawn((Hp(1), Armor(2)));
    /// let mut entity = world.entity_mut(e).unwrap();
    /// assert_eq!(entity.remove::<(Hp, Armor)>(), Ok((Hp(1), Armor(2))));
    /// assert!(entity.remove::<Hp>().is_err());
    /// ```
    pub fn remove<B: Bundle>(&mut self) -> Result<B, ComponentError> {
        self.world.remove(self.entity)
    }

    /// Removes the components of bundle `B` and disposes of them (pooled
    /// ones are reset and pooled), as [`World::discard`] does. The entity
    /// must have all of them. Returns the handle for chaining.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component)] struct Hp(u32);
    /// # #[derive(Component)] struct Stunned;
    /// let mut world = World::new();
    /// let e = world.spawn((Hp(1), Stunned));
    /// world.entity_mut(e).unwrap().discard::<Stunned>().unwrap().insert(Hp(2));
    /// assert!(!world.has::<Stunned>(e));
    /// ```
    pub fn discard<B: Bundle>(&mut self) -> Result<&mut Self, ComponentError> {
        self.world.discard::<B>(self.entity)?;
        Ok(self)
    }

    /// The entity's `T`, if it is alive and has one.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component, Debug, PartialEq)] struct Hp(u32);
    /// let mut world = World::new();
    /// let e = world.spawn(Hp(4));
    /// assert_eq!(world.entity_mut(e).unwrap().get::<Hp>(), Some(&Hp(4)));
    /// ```
    #[inline]
    pub fn get<T: Component>(&self) -> Option<&T> {
        self.world.get(self.entity)
    }

    /// Mutable access to the entity's `T`, if it is alive and has one; a
    /// write through the [`Mut`] marks the value changed, as with
    /// [`World::get_mut`].
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component, Debug, PartialEq)] struct Hp(u32);
    /// let mut world = World::new();
    /// let e = world.spawn(Hp(4));
    /// world.entity_mut(e).unwrap().get_mut::<Hp>().unwrap().0 += 1;
    /// assert_eq!(world.get::<Hp>(e), Some(&Hp(5)));
    /// ```
    #[inline]
    pub fn get_mut<T: Component + crate::component::MutableComponent>(&mut self) -> Option<Mut<'_, T>> {
        self.world.get_mut(self.entity)
    }

    /// Whether the entity is alive and has a `T`.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component)] struct Hp(u32);
    /// # #[derive(Component)] struct Armor(u32);
    /// let mut world = World::new();
    /// let e = world.spawn(Hp(4));
    /// let entity = world.entity_mut(e).unwrap();
    /// assert!(entity.has::<Hp>() && !entity.has::<Armor>());
    /// ```
    #[inline]
    pub fn has<T: Component>(&self) -> bool {
        self.world.has::<T>(self.entity)
    }

    /// A read-only view of the entity, if it is alive.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component)] struct Hp(u32);
    /// let mut world = World::new();
    /// let e = world.spawn(Hp(4));
    /// let entity = world.entity_mut(e).unwrap();
    /// assert_eq!(entity.entity_ref().unwrap().component_names().count(), 1);
    /// ```
    pub fn entity_ref(&self) -> Option<EntityRef<'_>> {
        self.world.entity(self.entity)
    }

    /// The world, read-only.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component)] struct Hp(u32);
    /// let mut world = World::new();
    /// let e = world.spawn(Hp(4));
    /// assert_eq!(world.entity_mut(e).unwrap().world().len(), 1);
    /// ```
    #[inline]
    pub fn world(&self) -> &World {
        self.world
    }

    /// Disables the entity, as [`World::disable`] does: it keeps its
    /// components, and queries that do not name
    /// [`Disabled`](crate::Disabled) stop seeing it. Its children stay
    /// enabled.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component)] struct Hp(u32);
    /// let mut world = World::new();
    /// let e = world.spawn(Hp(4));
    /// let mut entity = world.entity_mut(e).unwrap();
    /// assert!(entity.disable().unwrap().is_disabled());
    /// assert!(!entity.enable().unwrap().is_disabled());
    /// ```
    ///
    /// # Errors
    /// [`EntityError::NoSuchEntity`] if a hook's commands despawned the
    /// entity since this handle was made.
    pub fn disable(&mut self) -> Result<&mut Self, EntityError> {
        self.world.disable(self.entity)?;
        Ok(self)
    }

    /// Enables the entity again, as [`World::enable`] does.
    ///
    /// # Errors
    /// [`EntityError::NoSuchEntity`] if a hook's commands despawned the
    /// entity since this handle was made.
    pub fn enable(&mut self) -> Result<&mut Self, EntityError> {
        self.world.enable(self.entity)?;
        Ok(self)
    }

    /// Whether the entity is alive and disabled, as
    /// [`World::is_disabled`] tells.
    #[inline]
    pub fn is_disabled(&self) -> bool {
        self.world.is_disabled(self.entity)
    }

    /// Despawns the entity, running the despawn hooks, as
    /// [`World::despawn`] does; an error if it was already despawned.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component)] struct Hp(u32);
    /// let mut world = World::new();
    /// let e = world.spawn(Hp(4));
    /// world.entity_mut(e).unwrap().despawn().unwrap();
    /// assert!(world.is_empty());
    /// ```
    pub fn despawn(self) -> Result<(), EntityError> {
        self.world.despawn(self.entity)
    }
}

impl fmt::Debug for EntityWorldMut<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.entity_ref() {
            Some(entity) => entity.fmt(f),
            None => f.debug_struct("EntityWorldMut").field("id", &self.entity).field("alive", &false).finish(),
        }
    }
}

#[cold]
#[track_caller]
fn despawned_meanwhile(error: EntityError) -> ! {
    let EntityError::NoSuchEntity(entity) = error;
    panic!(
        "EntityWorldMut::insert: entity {entity} no longer exists (a hook's commands despawned it); \
         use `try_insert` where that can happen"
    )
}

impl World {
    /// One entity, with mutable access: a chain of inserts, removals and
    /// reads on it without repeating the handle. Makes reserved entities
    /// live first, so a handle from [`World::reserve_entity`] works.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component, Debug, PartialEq)] struct Hp(u32);
    /// # #[derive(Component)] struct Enemy;
    /// let mut world = World::new();
    /// let e = world.spawn(Hp(3));
    /// world.entity_mut(e).unwrap().insert(Enemy).get_mut::<Hp>().unwrap().0 = 9;
    /// assert_eq!(world.get::<Hp>(e), Some(&Hp(9)));
    /// world.despawn(e).unwrap();
    /// assert!(world.entity_mut(e).is_err());
    /// ```
    pub fn entity_mut(&mut self, entity: Entity) -> Result<EntityWorldMut<'_>, EntityError> {
        self.flush();
        if !self.contains(entity) {
            return Err(EntityError::NoSuchEntity(entity));
        }
        Ok(EntityWorldMut::new(self, entity))
    }
}
