//! Pools on the world: `spawn_pooled`, `insert_pooled`, `discard`, and the
//! caps and counts of each type's pool (the pools themselves are in
//! `storage/pool.rs`).

use crate::component::bundle::Bundle;
use crate::component::Component;
use crate::entity::error::{ComponentError, EntityError};
use crate::entity::Entity;
use crate::storage::pool::{FromPools, PooledBundle};
use crate::storage::structural;
use crate::world::World;

/// Pools: values of `#[component(pooled)]` types that leave the world are
/// reset and kept per type, and `spawn_pooled` hands them out again, so a
/// game that spawns and despawns the same kinds of entities every frame
/// stops allocating.
impl World {
    /// How many values each type's pool keeps unless
    /// [`World::set_pool_cap`] says otherwise.
    pub const DEFAULT_POOL_CAP: usize = crate::storage::pool::DEFAULT_POOL_CAP;

    /// Spawns an entity whose components come from their pools (already
    /// reset), or from `Default` when a pool is empty or the type is not
    /// pooled. `init` sets them up through `&mut` references before the
    /// entity exists.
    ///
    /// If `init` panics, the values taken are dropped and no entity is
    /// spawned.
    ///
    /// ```
    /// use archetable::prelude::*;
    ///
    /// #[derive(Component, Default)]
    /// struct Particle { life: f32 }
    ///
    /// #[derive(Component, Default)]
    /// #[component(pooled)]
    /// struct Trail { points: Vec<[f32; 2]> }
    ///
    /// impl Reset for Trail {
    ///     fn reset(&mut self) {
    ///         self.points.clear();
    ///     }
    /// }
    ///
    /// let mut world = World::new();
    /// let e = world.spawn_pooled::<(Particle, Trail)>(|(p, t)| {
    ///     p.life = 3.0;
    ///     t.points.push([0.0, 1.0]);
    /// });
    /// world.despawn(e).unwrap();
    /// assert_eq!(world.pool_len::<Trail>(), 1);
    ///
    /// // The next one reuses the trail, empty but with its memory.
    /// world.spawn_pooled::<(Particle, Trail)>(|(_, t)| {
    ///     assert!(t.points.is_empty() && t.points.capacity() > 0);
    /// });
    /// assert_eq!(world.pool_len::<Trail>(), 0);
    /// ```
    ///
    /// # Panics
    /// As [`World::spawn`], before anything is taken from a pool.
    pub fn spawn_pooled<B: PooledBundle>(&mut self, init: impl FnOnce(B::Refs<'_>)) -> Entity {
        self.flush();
        if self.hooks.is_active() || B::ENGINE_HOOKED {
            let bundle = self.take_pooled::<B>(init);
            return self.spawn(bundle);
        }
        // One bundle lookup for taking and spawning.
        let tick = self.change_tick();
        let info = self.bundles.register::<B>(&mut self.components);
        let mut source =
            FromPools { pools: &mut self.pools, components: &self.components, ids: info.components(), next: 0 };
        let mut bundle = B::from_pools(&mut source);
        init(bundle.refs());
        let (archetypes, entities, sparse) = (&mut self.archetypes, &mut self.entities, &mut self.sparse);
        structural::spawn(bundle, info, archetypes, entities, &self.components, sparse, tick)
    }

    /// Adds the components of `B` to `entity`, taken from their pools as by
    /// [`World::spawn_pooled`] and set up by `init`; components the entity
    /// already has are overwritten (and the old values pooled or dropped).
    /// Nothing is taken if the entity is gone.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component, Default)] #[component(pooled)] struct Trail(Vec<u8>);
    /// # impl Reset for Trail { fn reset(&mut self) { self.0.clear() } }
    /// # #[derive(Component)] struct Hp(u32);
    /// let mut world = World::new();
    /// let e = world.spawn(Hp(3));
    /// world.insert_pooled::<Trail>(e, |t| t.0.push(1)).unwrap();
    /// assert_eq!(world.get::<Trail>(e).unwrap().0, [1]);
    /// ```
    pub fn insert_pooled<B: PooledBundle>(
        &mut self,
        entity: Entity,
        init: impl FnOnce(B::Refs<'_>),
    ) -> Result<(), EntityError> {
        self.flush();
        if !self.contains(entity) {
            return Err(EntityError::NoSuchEntity(entity));
        }
        let bundle = self.take_pooled::<B>(init);
        self.insert(entity, bundle)
    }

    /// Builds a `B` from the pools and runs `init` on it.
    fn take_pooled<B: PooledBundle>(&mut self, init: impl FnOnce(B::Refs<'_>)) -> B {
        // Registering first makes a bundle that names a type twice panic
        // before anything leaves a pool.
        let info = self.bundles.register::<B>(&mut self.components);
        let mut source =
            FromPools { pools: &mut self.pools, components: &self.components, ids: info.components(), next: 0 };
        let mut bundle = B::from_pools(&mut source);
        init(bundle.refs());
        bundle
    }

    /// Removes the components of bundle `B` from `entity` and disposes of
    /// them: pooled ones are reset and kept, the others dropped. The entity
    /// must have all of them. ([`World::remove`] returns the values instead,
    /// and so pools nothing.)
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component, Default)] #[component(pooled)] struct Trail(Vec<u8>);
    /// # impl Reset for Trail { fn reset(&mut self) { self.0.clear() } }
    /// # #[derive(Component)] struct Hp(u32);
    /// let mut world = World::new();
    /// let e = world.spawn((Hp(3), Trail(vec![1, 2])));
    /// world.discard::<Trail>(e).unwrap();
    /// assert!(!world.has::<Trail>(e));
    /// assert_eq!(world.pool_len::<Trail>(), 1);
    /// assert!(world.discard::<Trail>(e).is_err());
    /// ```
    pub fn discard<B: Bundle>(&mut self, entity: Entity) -> Result<(), ComponentError> {
        // Through `remove`, so hooks fire and removals are recorded.
        let values: B = self.remove(entity)?;
        // The entity has moved and the tables are consistent: only now run
        // resets and destructors.
        let info = self.bundles.register::<B>(&mut self.components);
        self.pools.release_bundle(values, info, &self.components);
        Ok(())
    }

    /// Sets how many values `T`'s pool keeps (by default
    /// [`World::DEFAULT_POOL_CAP`]); values that leave the world while the
    /// pool is full are dropped. Lowering the cap drops the values over it
    /// now.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component, Default)] #[component(pooled)] struct Trail(Vec<u8>);
    /// # impl Reset for Trail { fn reset(&mut self) { self.0.clear() } }
    /// let mut world = World::new();
    /// world.set_pool_cap::<Trail>(2);
    /// for _ in 0..5 {
    ///     world.spawn(Trail(vec![1]));
    /// }
    /// world.clear();
    /// assert_eq!((world.pool_len::<Trail>(), world.pool_cap::<Trail>()), (2, 2));
    /// world.set_pool_cap::<Trail>(1);
    /// assert_eq!(world.pool_len::<Trail>(), 1);
    /// ```
    ///
    /// # Panics
    /// If `T` is not pooled (`#[component(pooled)]`).
    #[track_caller]
    pub fn set_pool_cap<T: Component>(&mut self, cap: usize) {
        assert!(
            T::POOL.is_some(),
            "component `{}` is not pooled; add `#[component(pooled)]` to its derive",
            std::any::type_name::<T>()
        );
        let id = self.components.register::<T>();
        self.pools.set_cap(self.components.info(id), cap);
    }

    /// How many reset values `T`'s pool holds (zero for a type that is not
    /// pooled).
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component, Default)] #[component(pooled)] struct Trail(Vec<u8>);
    /// # impl Reset for Trail { fn reset(&mut self) { self.0.clear() } }
    /// let mut world = World::new();
    /// let e = world.spawn(Trail(vec![1]));
    /// assert_eq!(world.pool_len::<Trail>(), 0);
    /// world.despawn(e).unwrap();
    /// assert_eq!(world.pool_len::<Trail>(), 1);
    /// ```
    pub fn pool_len<T: Component>(&self) -> usize {
        self.components.id::<T>().map_or(0, |id| self.pools.len(id))
    }

    /// The most values `T`'s pool keeps: [`World::DEFAULT_POOL_CAP`] unless
    /// [`World::set_pool_cap`] changed it, zero for a type that is not
    /// pooled.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component, Default)] #[component(pooled)] struct Trail(Vec<u8>);
    /// # impl Reset for Trail { fn reset(&mut self) { self.0.clear() } }
    /// # #[derive(Component)] struct Hp(u32);
    /// let mut world = World::new();
    /// assert_eq!(world.pool_cap::<Trail>(), World::DEFAULT_POOL_CAP);
    /// assert_eq!(world.pool_cap::<Hp>(), 0);
    /// ```
    pub fn pool_cap<T: Component>(&self) -> usize {
        if T::POOL.is_none() {
            return 0;
        }
        self.components.id::<T>().map_or(Self::DEFAULT_POOL_CAP, |id| self.pools.cap(id))
    }

    /// Drops every pooled value of every type and frees the pools' memory,
    /// for example between levels. Caps are kept.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component, Default)] #[component(pooled)] struct Trail(Vec<u8>);
    /// # impl Reset for Trail { fn reset(&mut self) { self.0.clear() } }
    /// let mut world = World::new();
    /// world.spawn(Trail(vec![1]));
    /// world.clear();
    /// assert_eq!(world.pool_len::<Trail>(), 1);
    /// world.trim_pools();
    /// assert_eq!(world.pool_len::<Trail>(), 0);
    /// ```
    pub fn trim_pools(&mut self) {
        self.pools.trim();
    }
}
