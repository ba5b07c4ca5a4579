//! The query methods of `World`: iterate, look up one entity or several
//! by a query type, without a `QueryState` to keep, and despawn what a
//! filter matches. They live in the query layer so that the world below
//! does not import it.

use crate::entity::error::QueryEntityError;
use crate::entity::Entity;
use crate::query::{QueryData, QueryFilter, QueryIter, ReadOnlyQueryData};
use crate::world::World;

impl World {
    /// Iterates the entities that match the read-only query `Q`.
    ///
    /// Builds no cache; for a query run every frame, keep a
    /// [`QueryState`](crate::QueryState).
    pub fn query<Q: ReadOnlyQueryData>(&self) -> QueryIter<'_, 'static, Q, ()> {
        self.query_filtered::<Q, ()>()
    }

    /// Iterates the entities that match the read-only query `Q` and pass `F`.
    pub fn query_filtered<Q: ReadOnlyQueryData, F: QueryFilter>(&self) -> QueryIter<'_, 'static, Q, F> {
        QueryIter::over_world(self)
    }

    /// Iterates the entities that match `Q`, with mutable access.
    ///
    /// # Panics
    /// If `Q` would alias a component (`(&mut A, &A)`).
    pub fn query_mut<Q: QueryData>(&mut self) -> QueryIter<'_, 'static, Q, ()> {
        self.query_filtered_mut::<Q, ()>()
    }

    /// Iterates the entities that match `Q` and pass `F`, with mutable access.
    ///
    /// # Panics
    /// If `Q` would alias a component (`(&mut A, &A)`).
    pub fn query_filtered_mut<Q: QueryData, F: QueryFilter>(&mut self) -> QueryIter<'_, 'static, Q, F> {
        QueryIter::over_world_mut(self)
    }

    /// The item of the read-only query `Q` for one entity: several
    /// components at once, `Option`s for the ones it may lack.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component, Debug, PartialEq)] struct Hp(u32);
    /// # #[derive(Component, Debug, PartialEq)] struct Name(&'static str);
    /// let mut world = World::new();
    /// let e = world.spawn((Hp(3), Name("orc")));
    /// let (hp, name) = world.query_one::<(&Hp, Option<&Name>)>(e).unwrap();
    /// assert_eq!((hp, name), (&Hp(3), Some(&Name("orc"))));
    /// ```
    pub fn query_one<Q: ReadOnlyQueryData>(&self, entity: Entity) -> Result<Q::Item<'_>, QueryEntityError> {
        crate::query::query_one::<Q>(self, entity)
    }

    /// The item of query `Q` for one entity, with mutable access.
    ///
    /// # Panics
    /// If `Q` would alias a component (`(&mut A, &A)`).
    pub fn query_one_mut<Q: QueryData>(&mut self, entity: Entity) -> Result<Q::Item<'_>, QueryEntityError> {
        crate::query::query_one_mut::<Q>(self, entity)
    }

    /// The items of the read-only query `Q` for several entities, in the
    /// order given; an entity may be named more than once.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component, Debug, PartialEq)] struct Hp(u32);
    /// let mut world = World::new();
    /// let (a, b) = (world.spawn(Hp(1)), world.spawn(Hp(2)));
    /// assert_eq!(world.query_many::<&Hp, 2>([b, a]).unwrap(), [&Hp(2), &Hp(1)]);
    /// ```
    ///
    /// # Errors
    /// The first entity, in the order given, that is not alive or does not
    /// match.
    pub fn query_many<Q: ReadOnlyQueryData, const N: usize>(
        &self,
        entities: [Entity; N],
    ) -> Result<[Q::Item<'_>; N], QueryEntityError> {
        crate::query::query_many::<N, Q>(self, entities)
    }

    /// The items of query `Q` for several distinct entities, with mutable
    /// access, in the order given.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component, Debug, PartialEq)] struct Health(u32);
    /// let mut world = World::new();
    /// let (a, b) = (world.spawn(Health(10)), world.spawn(Health(4)));
    /// let [mut x, mut y] = world.query_many_mut::<&mut Health, 2>([a, b]).unwrap();
    /// x.0 -= 3;
    /// y.0 += 3;
    /// assert_eq!(world.get::<Health>(b), Some(&Health(7)));
    /// assert_eq!(
    ///     world.query_many_mut::<&mut Health, 2>([a, a]).err(),
    ///     Some(QueryEntityError::AliasedMutability(a))
    /// );
    /// ```
    ///
    /// # Errors
    /// [`QueryEntityError::AliasedMutability`] if an entity is named twice
    /// (checked first); else the first entity, in the order given, that is
    /// not alive or does not match.
    ///
    /// # Panics
    /// If `Q` would alias a component (`(&mut A, &A)`).
    pub fn query_many_mut<Q: QueryData, const N: usize>(
        &mut self,
        entities: [Entity; N],
    ) -> Result<[Q::Item<'_>; N], QueryEntityError> {
        crate::query::query_many_mut::<N, Q>(self, entities)
    }

    /// Despawns every entity that passes filter `F` (for example
    /// `With<Expired>`, `(With<Enemy>, Without<Boss>)`), running the
    /// despawn hooks of each, and returns how many it despawned. Change
    /// filters (`Changed`, `Added`) count every change the world still
    /// remembers. An entity that an earlier entity's hook commands
    /// despawned is not counted.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component)] struct Hp(u32);
    /// # #[derive(Component)] struct Dead;
    /// let mut world = World::new();
    /// let alive = world.spawn(Hp(3));
    /// world.spawn((Hp(0), Dead));
    /// world.spawn(Dead);
    /// assert_eq!(world.despawn_where::<With<Dead>>(), 2);
    /// assert_eq!((world.len(), world.contains(alive)), (1, true));
    /// ```
    pub fn despawn_where<F: QueryFilter>(&mut self) -> usize {
        self.flush();
        let doomed: Vec<Entity> = self.query_filtered::<Entity, F>().collect();
        self.despawn_each(doomed)
    }
}
