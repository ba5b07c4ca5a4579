//! `Query`: the system parameter that runs a cached query over the world.

use std::fmt;

use crate::entity::error::QueryEntityError;
use crate::entity::Entity;
use crate::query::{
    QueryCombinationIter, QueryData, QueryFilter, QueryIter, QueryManyIter, QueryManyIterMut, QueryParIter, QueryState,
    ReadOnlyQueryData,
};
use crate::system::access::AccessConflict;
use crate::system::param::{SystemMeta, SystemParam};
use crate::world::World;

/// A system parameter that iterates the entities matching `Q` and passing
/// `F`, with the query's cache kept between runs.
///
/// ```
/// use archetable::prelude::*;
///
/// #[derive(Component)] struct Position(f32);
/// #[derive(Component)] struct Velocity(f32);
/// #[derive(Component)] struct Frozen;
///
/// fn movement(mut bodies: Query<(&mut Position, &Velocity), Without<Frozen>>, time: Res<Time>) {
///     for (mut pos, vel) in bodies.iter_mut() {
///         pos.0 += vel.0 * time.delta_secs();
///     }
/// }
/// # let mut world = World::new();
/// # let mut schedule = Schedule::new();
/// # schedule.add_system(movement);
/// # schedule.run(&mut world);
/// ```
///
/// Read-only methods (`iter`, `get`, `single`, `for_each`, `par_for_each`)
/// need a read-only `Q`; the `_mut` methods work for every `Q`.
pub struct Query<'w, 's, Q: QueryData, F: QueryFilter = ()> {
    world: &'w World,
    state: &'s QueryState<Q, F>,
}

/// Why [`Query::single`] found no single entity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum QuerySingleError {
    /// No entity matches.
    NoEntities,
    /// More than one entity matches.
    MultipleEntities,
}

impl fmt::Display for QuerySingleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QuerySingleError::NoEntities => f.write_str("no entity matches the query"),
            QuerySingleError::MultipleEntities => f.write_str("more than one entity matches the query"),
        }
    }
}

impl std::error::Error for QuerySingleError {}

impl<'w, 's, Q: QueryData, F: QueryFilter> Query<'w, 's, Q, F> {
    /// Iterates the matching entities, read-only.
    pub fn iter(&self) -> QueryIter<'_, 's, Q, F>
    where
        Q: ReadOnlyQueryData,
    {
        // SAFETY: `Q` is read-only and the schedule checked that nothing
        // writes what it reads while the system runs.
        unsafe { self.state.iter_unchecked(self.world) }
    }

    /// Iterates the matching entities, with mutable access.
    pub fn iter_mut(&mut self) -> QueryIter<'_, 's, Q, F> {
        // SAFETY: the schedule gave this system exclusive access to what `Q`
        // writes, and `&mut self` keeps two iterators of this query apart.
        unsafe { self.state.iter_unchecked(self.world) }
    }

    /// Calls `f` on every matching entity, read-only.
    pub fn for_each<'a>(&'a self, f: impl FnMut(Q::Item<'a>))
    where
        Q: ReadOnlyQueryData,
    {
        self.iter().for_each(f);
    }

    /// Calls `f` on every matching entity, with mutable access.
    pub fn for_each_mut<'a>(&'a mut self, f: impl FnMut(Q::Item<'a>)) {
        self.iter_mut().for_each(f);
    }

    /// The matching entities, read-only, to visit on several threads with
    /// [`QueryParIter::for_each`], optionally in chunks of a
    /// [`batch_size`](QueryParIter::batch_size).
    pub fn par_iter(&self) -> QueryParIter<'_, 's, Q, F>
    where
        Q: ReadOnlyQueryData,
    {
        // SAFETY: as for `iter`; the state was updated when the system
        // started.
        unsafe { QueryParIter::new(self.world, self.state) }
    }

    /// The matching entities, with mutable access, to visit on several
    /// threads with [`QueryParIter::for_each`], optionally in chunks of a
    /// [`batch_size`](QueryParIter::batch_size).
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component)] struct Path(Vec<u32>);
    /// # #[derive(Component)] struct Goal(u32);
    /// // Heavy work per entity: chunks of 8 agents, whatever their number.
    /// fn plan(mut agents: Query<(&mut Path, &Goal)>) {
    ///     agents.par_iter_mut().batch_size(8).for_each(|(mut path, goal)| {
    ///         path.0 = (0..goal.0).collect();
    ///     });
    /// }
    /// let mut world = World::new();
    /// world.spawn_batch((0..100).map(|i| (Path(Vec::new()), Goal(i)))).for_each(drop);
    /// world.run_system_once(plan);
    /// # assert_eq!(world.query::<&Path>().map(|p| p.0.len()).sum::<usize>(), 4950);
    /// ```
    pub fn par_iter_mut(&mut self) -> QueryParIter<'_, 's, Q, F> {
        // SAFETY: as for `iter_mut`; the state was updated when the system
        // started.
        unsafe { QueryParIter::new(self.world, self.state) }
    }

    /// Calls `f` on every matching entity, read-only, spreading the rows
    /// over rayon's thread pool when there are enough of them (see
    /// [`QueryParIter::for_each`]).
    pub fn par_for_each<'a>(&'a self, f: impl Fn(Q::Item<'a>) + Send + Sync)
    where
        Q: ReadOnlyQueryData,
    {
        self.par_iter().for_each(f);
    }

    /// Calls `f` on every matching entity, with mutable access, spreading
    /// the rows over rayon's thread pool when there are enough of them (see
    /// [`QueryParIter::for_each`]); each entity is visited once, by one
    /// thread.
    pub fn par_for_each_mut<'a>(&'a mut self, f: impl Fn(Q::Item<'a>) + Send + Sync) {
        self.par_iter_mut().for_each(f);
    }

    /// The item of `entity`, read-only.
    pub fn get(&self, entity: Entity) -> Result<Q::Item<'_>, QueryEntityError>
    where
        Q: ReadOnlyQueryData,
    {
        // SAFETY: as for `iter`; the state was updated when the system started.
        unsafe { self.state.get_unchecked(self.world, entity) }
    }

    /// The item of `entity`, with mutable access.
    pub fn get_mut(&mut self, entity: Entity) -> Result<Q::Item<'_>, QueryEntityError> {
        // SAFETY: as for `iter_mut`.
        unsafe { self.state.get_unchecked(self.world, entity) }
    }

    /// The items of the listed entities that match, read-only, in list
    /// order, skipping stale handles and those that do not match.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component)] struct Hp(u32);
    /// # #[derive(Default)] struct Watch(Vec<Entity>, u32);
    /// fn total(hp: Query<&Hp>, mut watch: ResMut<Watch>) {
    ///     watch.1 = hp.iter_many(watch.0.clone()).map(|hp| hp.0).sum();
    /// }
    /// let mut world = World::new();
    /// let a = world.spawn(Hp(2));
    /// let gone = world.spawn(Hp(50));
    /// world.despawn(gone).unwrap();
    /// world.insert_resource(Watch(vec![a, gone, a], 0));
    /// let mut schedule = Schedule::new();
    /// schedule.add_system(total);
    /// schedule.run(&mut world);
    /// assert_eq!(world.resource::<Watch>().1, 4);
    /// ```
    pub fn iter_many<I: IntoIterator<Item = Entity>>(&self, entities: I) -> QueryManyIter<'_, 's, Q, F, I::IntoIter>
    where
        Q: ReadOnlyQueryData,
    {
        // SAFETY: as for `iter`; the state was updated when the system
        // started.
        unsafe { QueryManyIter::new(self.world, self.state, entities.into_iter(), self.state.ticks()) }
    }

    /// The items of the listed entities that match, with mutable access,
    /// one at a time through [`QueryManyIterMut::fetch_next`], skipping
    /// stale handles and those that do not match.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component, Debug, PartialEq)] struct Hp(u32);
    /// # #[derive(Default)] struct Hit(Vec<Entity>);
    /// fn damage(mut hp: Query<&mut Hp>, hit: Res<Hit>) {
    ///     let mut iter = hp.iter_many_mut(hit.0.iter().copied());
    ///     while let Some(mut hp) = iter.fetch_next() {
    ///         hp.0 -= 1;
    ///     }
    /// }
    /// let mut world = World::new();
    /// let a = world.spawn(Hp(5));
    /// world.insert_resource(Hit(vec![a, a]));
    /// let mut schedule = Schedule::new();
    /// schedule.add_system(damage);
    /// schedule.run(&mut world);
    /// assert_eq!(world.get::<Hp>(a), Some(&Hp(3)));
    /// ```
    pub fn iter_many_mut<I: IntoIterator<Item = Entity>>(
        &mut self,
        entities: I,
    ) -> QueryManyIterMut<'_, 's, Q, F, I::IntoIter> {
        // SAFETY: as for `iter_mut`; the state was updated when the system
        // started.
        unsafe { QueryManyIterMut::new(self.world, self.state, entities.into_iter(), self.state.ticks()) }
    }

    /// The items of several entities, read-only, in the order given; an
    /// entity may be named more than once.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component)] struct Hp(u32);
    /// # #[derive(Default)] struct Pair(Vec<Entity>, u32);
    /// fn sum(hp: Query<&Hp>, mut pair: ResMut<Pair>) {
    ///     let [a, b] = hp.get_many([pair.0[0], pair.0[1]]).unwrap();
    ///     pair.1 = a.0 + b.0;
    /// }
    /// let mut world = World::new();
    /// let handles = vec![world.spawn(Hp(2)), world.spawn(Hp(3))];
    /// world.insert_resource(Pair(handles, 0));
    /// let mut schedule = Schedule::new();
    /// schedule.add_system(sum);
    /// schedule.run(&mut world);
    /// assert_eq!(world.resource::<Pair>().1, 5);
    /// ```
    ///
    /// # Errors
    /// The first entity, in the order given, that is not alive or does not
    /// match.
    pub fn get_many<const N: usize>(&self, entities: [Entity; N]) -> Result<[Q::Item<'_>; N], QueryEntityError>
    where
        Q: ReadOnlyQueryData,
    {
        // SAFETY: as for `iter`.
        unsafe { self.state.get_many_unchecked_at(self.world, entities, self.state.ticks()) }
    }

    /// The items of several distinct entities, with mutable access, in the
    /// order given.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component, Debug, PartialEq)] struct Health(u32);
    /// # #[derive(Component)] struct Target(Entity);
    /// // Each attacker moves a point of health from its target to itself.
    /// fn drain(attackers: Query<(Entity, &Target)>, mut health: Query<&mut Health>) {
    ///     for (attacker, target) in attackers.iter() {
    ///         if let Ok([mut me, mut them]) = health.get_many_mut([attacker, target.0]) {
    ///             them.0 -= 1;
    ///             me.0 += 1;
    ///         }
    ///     }
    /// }
    /// let mut world = World::new();
    /// let victim = world.spawn(Health(5));
    /// let attacker = world.spawn((Health(1), Target(victim)));
    /// let mut schedule = Schedule::new();
    /// schedule.add_system(drain);
    /// schedule.run(&mut world);
    /// assert_eq!(world.get::<Health>(victim), Some(&Health(4)));
    /// assert_eq!(world.get::<Health>(attacker), Some(&Health(2)));
    /// ```
    ///
    /// # Errors
    /// [`QueryEntityError::AliasedMutability`] if an entity is named twice
    /// (checked first); else the first entity, in the order given, that is
    /// not alive or does not match.
    pub fn get_many_mut<const N: usize>(
        &mut self,
        entities: [Entity; N],
    ) -> Result<[Q::Item<'_>; N], QueryEntityError> {
        crate::query::check_distinct(&entities)?;
        // SAFETY: as for `iter_mut`; the entities are distinct, so are their
        // rows, and each item touches only its own row.
        unsafe { self.state.get_many_unchecked_at(self.world, entities, self.state.ticks()) }
    }

    /// Every set of `K` distinct matching entities, once, as arrays of
    /// read-only items; see [`QueryCombinationIter`].
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component)] struct Pos(i32);
    /// # #[derive(Default)] struct Close(usize);
    /// fn count_close(bodies: Query<&Pos>, mut close: ResMut<Close>) {
    ///     close.0 = bodies.iter_combinations::<2>().filter(|[a, b]| (a.0 - b.0).abs() <= 1).count();
    /// }
    /// let mut world = World::new();
    /// world.spawn_batch([Pos(0), Pos(1), Pos(9)]).for_each(drop);
    /// world.init_resource::<Close>();
    /// world.run_system_once(count_close);
    /// assert_eq!(world.resource::<Close>().0, 1);
    /// ```
    pub fn iter_combinations<const K: usize>(&self) -> QueryCombinationIter<'_, 's, Q, F, K>
    where
        Q: ReadOnlyQueryData,
    {
        // SAFETY: as for `iter`; the state was updated when the system
        // started.
        unsafe { QueryCombinationIter::new(self.world, self.state, self.state.ticks()) }
    }

    /// Every set of `K` distinct matching entities, once, with mutable
    /// access, one array at a time through
    /// [`QueryCombinationIter::fetch_next`].
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component, Debug, PartialEq)] struct Pos(i32);
    /// // Each pair closer than 2 pushes its second body away by one.
    /// fn separate(mut bodies: Query<&mut Pos>) {
    ///     let mut pairs = bodies.iter_combinations_mut::<2>();
    ///     while let Some([a, mut b]) = pairs.fetch_next() {
    ///         if (a.0 - b.0).abs() < 2 {
    ///             b.0 += 1;
    ///         }
    ///     }
    /// }
    /// let mut world = World::new();
    /// let e = [world.spawn(Pos(0)), world.spawn(Pos(1))];
    /// world.run_system_once(separate);
    /// assert_eq!(world.get::<Pos>(e[1]), Some(&Pos(2)));
    /// ```
    pub fn iter_combinations_mut<const K: usize>(&mut self) -> QueryCombinationIter<'_, 's, Q, F, K> {
        // SAFETY: as for `iter_mut`; the state was updated when the system
        // started.
        unsafe { QueryCombinationIter::new(self.world, self.state, self.state.ticks()) }
    }

    /// Whether `entity` matches the query.
    pub fn contains(&self, entity: Entity) -> bool {
        // The item is dropped at once and nothing is written.
        // SAFETY: as for `iter`; the item is not used.
        unsafe { self.state.get_unchecked(self.world, entity) }.is_ok()
    }

    /// The item of the one matching entity, read-only.
    pub fn single(&self) -> Result<Q::Item<'_>, QuerySingleError>
    where
        Q: ReadOnlyQueryData,
    {
        single(self.iter())
    }

    /// The item of the one matching entity, with mutable access.
    pub fn single_mut(&mut self) -> Result<Q::Item<'_>, QuerySingleError> {
        single(self.iter_mut())
    }

    /// Whether no entity matches.
    pub fn is_empty(&self) -> bool {
        // SAFETY: as for `iter`; the first item, if any, is dropped at once
        // and no other item of this query is alive during a `&self` call on
        // a query that writes (its item methods all take `&mut self`).
        unsafe { self.state.iter_unchecked(self.world) }.next().is_none()
    }
}

fn single<I: Iterator>(mut iter: I) -> Result<I::Item, QuerySingleError> {
    let first = iter.next().ok_or(QuerySingleError::NoEntities)?;
    match iter.next() {
        None => Ok(first),
        Some(_) => Err(QuerySingleError::MultipleEntities),
    }
}

impl<'w, 's, Q: ReadOnlyQueryData, F: QueryFilter> IntoIterator for &'s Query<'w, '_, Q, F> {
    type Item = Q::Item<'s>;
    type IntoIter = QueryIter<'s, 's, Q, F>;
    fn into_iter(self) -> Self::IntoIter {
        // SAFETY: as for `iter`.
        unsafe { self.state.iter_unchecked(self.world) }
    }
}

impl<'s, Q: QueryData, F: QueryFilter> IntoIterator for &'s mut Query<'_, '_, Q, F> {
    type Item = Q::Item<'s>;
    type IntoIter = QueryIter<'s, 's, Q, F>;
    fn into_iter(self) -> Self::IntoIter {
        // SAFETY: as for `iter_mut`.
        unsafe { self.state.iter_unchecked(self.world) }
    }
}

// SAFETY: the query's reads and writes, and the archetypes it can visit, are
// recorded; `get_param` borrows only through the query.
unsafe impl<Q: QueryData + 'static, F: QueryFilter + 'static> SystemParam for Query<'_, '_, Q, F> {
    type State = QueryState<Q, F>;
    type Item<'w, 's> = Query<'w, 's, Q, F>;

    fn init_state(world: &mut World, meta: &mut SystemMeta) -> Result<Self::State, AccessConflict> {
        let state = QueryState::<Q, F>::new(world);
        let (access, condition) = state.access(world.components());
        meta.add_query(world.components(), std::any::type_name::<Self>(), &access, condition)?;
        Ok(state)
    }

    #[inline]
    unsafe fn get_param<'w, 's>(
        state: &'s mut Self::State,
        world: &'w World,
        meta: &'s SystemMeta,
    ) -> Query<'w, 's, Q, F> {
        state.update(world);
        state.set_ticks(meta.ticks());
        Query { world, state }
    }
}
