//! `QueryState`: a query's component ids and its cached list of matching
//! archetypes, updated only with the archetypes created since it last looked.

use std::fmt;

use crate::component::change::RunTicks;
use crate::component::Components;
use crate::entity::error::QueryEntityError;
use crate::entity::Entity;
use crate::query::access::Access;
use crate::query::condition::ArchetypeCondition;
use crate::query::fetch::{QueryData, ReadOnlyQueryData};
use crate::query::filter::QueryFilter;
use crate::query::hiding::sees;
use crate::query::iter::{QueryIter, QueryManyIter, QueryManyIterMut};
#[cfg(feature = "parallel")]
use crate::query::par::ParMemo;
use crate::storage::archetype::ArchetypeId;
use crate::world::{World, WorldId};

/// A query prepared once and run many times: keep it between frames.
///
/// It caches the matching archetypes and where their columns are, and on
/// each run only examines the archetypes created since the last run.
///
/// ```
/// use archetable::{Component, QueryState, World};
///
/// #[derive(Component)] struct Position(f32);
/// #[derive(Component)] struct Velocity(f32);
///
/// let mut world = World::new();
/// world.spawn((Position(0.0), Velocity(2.0)));
/// let mut movement = QueryState::<(&mut Position, &Velocity)>::new(&mut world);
/// for _frame in 0..3 {
///     for (mut pos, vel) in movement.iter_mut(&mut world) {
///         pos.0 += vel.0;
///     }
/// }
/// let mut positions = QueryState::<&Position>::new(&mut world);
/// assert_eq!(positions.iter(&world).map(|p| p.0).sum::<f32>(), 6.0);
/// ```
///
/// # Panics
/// [`QueryState::new`] panics if the query would alias, borrowing a
/// component mutably and otherwise at once (`(&mut A, &A)`), with a message
/// naming the component (error code `E0001`). Running a state on a world
/// other than the one it was built for panics.
pub struct QueryState<Q: QueryData, F: QueryFilter = ()> {
    world_id: WorldId,
    q_state: Q::State,
    f_state: F::State,
    /// Archetypes `0..archetypes_seen` have been examined.
    archetypes_seen: usize,
    /// The matching archetypes in increasing id order, with their caches.
    matched: Vec<(ArchetypeId, Q::Cache)>,
    /// For each examined archetype, its position in `matched`, or
    /// `NOT_MATCHED`: `get` finds an entity's cache in one load.
    by_archetype: Vec<u32>,
    /// The reader's previous run and the current (or latest) one: changes
    /// after `last_run` are new to it.
    ticks: RunTicks,
    /// What parallel runs measured of their work, to decide the next one.
    #[cfg(feature = "parallel")]
    par_memo: ParMemo,
}

/// `QueryState::by_archetype`'s mark for an archetype the query skips.
const NOT_MATCHED: u32 = u32::MAX;

impl<Q: QueryData, F: QueryFilter> QueryState<Q, F> {
    /// Prepares the query for `world`, registering the component types it
    /// names.
    ///
    /// # Panics
    /// If the query would alias a component (see the type's docs).
    pub fn new(world: &mut World) -> Self {
        let (q_state, f_state) = init_checked::<Q, F>(world.components_mut());
        // Never run: every change the world remembers is new to it.
        let never = world.one_off_ticks().last_run;
        let ticks = RunTicks { last_run: never, this_run: never };
        let mut state = QueryState {
            world_id: world.id(),
            q_state,
            f_state,
            archetypes_seen: 0,
            matched: Vec::new(),
            by_archetype: Vec::new(),
            ticks,
            #[cfg(feature = "parallel")]
            par_memo: ParMemo::default(),
        };
        state.update(world);
        state
    }

    /// Examines the archetypes created since the last update.
    #[inline]
    pub(crate) fn update(&mut self, world: &World) {
        if self.world_id != world.id() || self.archetypes_seen != world.archetypes().len() {
            self.update_slow(world);
        }
    }

    #[cold]
    #[inline(never)]
    fn update_slow(&mut self, world: &World) {
        assert!(
            self.world_id == world.id(),
            "QueryState<{}> used with a world other than the one it was built for",
            std::any::type_name::<Q>()
        );
        let archetypes = world.archetypes().as_slice();
        for archetype in &archetypes[self.archetypes_seen..] {
            // A hand-written `matches` or `match_archetype` may panic: the
            // lists grow and the count moves one archetype at a time, so
            // they stay in step for the next update.
            let cache = (F::matches(&self.f_state, archetype)
                && sees::<Q, F>(world.components(), &self.q_state, &self.f_state, archetype))
            .then(|| Q::match_archetype(&self.q_state, archetype));
            match cache.flatten() {
                Some(cache) => {
                    self.by_archetype.push(self.matched.len() as u32);
                    self.matched.push((archetype.id(), cache));
                }
                None => self.by_archetype.push(NOT_MATCHED),
            }
            self.archetypes_seen += 1;
        }
    }

    /// Iterates the matching entities of `world`, read-only.
    pub fn iter<'w, 's>(&'s mut self, world: &'w World) -> QueryIter<'w, 's, Q, F>
    where
        Q: ReadOnlyQueryData,
    {
        self.update(world);
        self.begin_run(world);
        // SAFETY: `matched` was built from this world's archetypes with these
        // states (`update` checked the world), and `Q` is read-only.
        unsafe { self.iter_unchecked(world) }
    }

    /// Iterates the matching entities of `world`, with mutable access.
    pub fn iter_mut<'w, 's>(&'s mut self, world: &'w mut World) -> QueryIter<'w, 's, Q, F> {
        self.update(world);
        self.begin_run_mut(world);
        let world: &'w World = world;
        // SAFETY: `matched` was built from this world's archetypes with these
        // states; the exclusive borrow of the world gives exclusive access
        // for `'w`, and `new` refused conflicting access.
        unsafe { self.iter_unchecked(world) }
    }

    /// Calls `f` on every matching entity of `world`, read-only.
    pub fn for_each<'w>(&mut self, world: &'w World, f: impl FnMut(Q::Item<'w>))
    where
        Q: ReadOnlyQueryData,
    {
        self.update(world);
        self.begin_run(world);
        // SAFETY: updated above; `Q` is read-only and the world is borrowed
        // shared for `'w`.
        unsafe { self.for_each_unchecked(world, f) }
    }

    /// Calls `f` on every matching entity of `world`, with mutable access.
    pub fn for_each_mut<'w>(&mut self, world: &'w mut World, f: impl FnMut(Q::Item<'w>)) {
        self.update(world);
        self.begin_run_mut(world);
        let world: &'w World = world;
        // SAFETY: updated above; the exclusive borrow of the world covers
        // `'w`, and `new` refused conflicting access.
        unsafe { self.for_each_unchecked(world, f) }
    }

    /// The loop of `for_each`: each matched table's rows in blocks of four
    /// and then the rest, in row order, which the compiler can vectorize.
    ///
    /// The next table is opened only when this one's rows are done: opening
    /// it ahead (to start its chain of dependent loads early) was measured
    /// slower over 26 tables of 20 rows, 1.22x-1.34x the nested `Vec` loop
    /// against 0.99x-1.09x for opening each in turn, since the extra fetch kept
    /// alive across the rows costs more than the out-of-order core already
    /// hides of the chain.
    ///
    /// # Safety
    /// As for [`QueryState::iter_unchecked`].
    #[inline(always)]
    pub(crate) unsafe fn for_each_unchecked<'w>(&self, world: &'w World, mut f: impl FnMut(Q::Item<'w>)) {
        let archetypes = world.archetypes().as_slice();
        // Read once: the stamp a fetch writes on each table's column could
        // be `self` for all the compiler knows, so it would read them again.
        let ticks = self.ticks;
        for &(id, cache) in &self.matched {
            // SAFETY: `matched` lists archetypes of this world, which never
            // removes one (`update` checked the world).
            let archetype = unsafe { archetypes.get_unchecked(id.index()) };
            let table = world.table_ref(archetype);
            // SAFETY: `cache` is `match_archetype`'s for this archetype of
            // this world, which passes `F` (`update` ran); the access is the
            // caller's.
            let (mut fetch, mut filter) = unsafe {
                (Q::init_fetch(&self.q_state, cache, table, ticks), F::init_fetch(&self.f_state, table, ticks))
            };
            // The rows go in blocks of four, then the last zero to three,
            // in order. A block is a fixed count of calls, which the compiler
            // can turn into one vector step, and the loop over blocks gets
            // its own wide vector loop: a table of 20 four-byte values is
            // then a step of 16 and one of 4, where a plain loop over the
            // rows does two vector steps of 8 and then 4 rows one by one. Over
            // 26 tables of 20 rows, 1,373 instructions a run against 1,866
            // for that plain loop and 1,737 for nested `Vec`s; 10,000 tables
            // of one row pay 4 instructions a table for the test of a block.
            let (mut row, mut left) = (0, archetype.len());
            let mut visit = |row: usize| {
                // SAFETY: `row` is below the table's length, which the
                // world's borrow keeps unchanged; each row is fetched once.
                unsafe {
                    if (F::IS_ARCHETYPAL || F::filter_row(&mut filter, row))
                        && (Q::DENSE || Q::row_matches(&fetch, row))
                    {
                        f(Q::fetch(&mut fetch, row));
                    }
                }
            };
            while left >= 4 {
                for i in 0..4 {
                    visit(row + i);
                }
                row += 4;
                left -= 4;
            }
            // `% 4` tells the compiler the count is below four.
            for i in 0..left % 4 {
                visit(row + i);
            }
        }
    }

    /// The query's item for `entity`, read-only.
    #[inline]
    pub fn get<'w>(&mut self, world: &'w World, entity: Entity) -> Result<Q::Item<'w>, QueryEntityError>
    where
        Q: ReadOnlyQueryData,
    {
        self.update(world);
        // SAFETY: `Q` is read-only and the world is borrowed shared for `'w`.
        unsafe { self.get_unchecked_at(world, entity, self.lookup_ticks(world)) }
    }

    /// The query's item for `entity`, with mutable access.
    #[inline]
    pub fn get_mut<'w>(&mut self, world: &'w mut World, entity: Entity) -> Result<Q::Item<'w>, QueryEntityError> {
        self.update(world);
        let ticks = self.lookup_ticks(world);
        // SAFETY: the exclusive borrow of the world covers `'w`.
        unsafe { self.get_unchecked_at(world, entity, ticks) }
    }

    /// The items of the listed entities that match, read-only, in list
    /// order; handles that are stale or do not match are skipped, and one
    /// listed twice is visited twice.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component, Debug, PartialEq)] struct Hp(u32);
    /// # #[derive(Component)] struct Name;
    /// let mut world = World::new();
    /// let a = world.spawn(Hp(1));
    /// let b = world.spawn(Name);
    /// let c = world.spawn(Hp(3));
    /// let mut state = QueryState::<&Hp>::new(&mut world);
    /// let listed: Vec<u32> = state.iter_many(&world, [c, b, a]).map(|hp| hp.0).collect();
    /// assert_eq!(listed, [3, 1]);
    /// ```
    pub fn iter_many<'w, 's, I: IntoIterator<Item = Entity>>(
        &'s mut self,
        world: &'w World,
        entities: I,
    ) -> QueryManyIter<'w, 's, Q, F, I::IntoIter>
    where
        Q: ReadOnlyQueryData,
    {
        self.update(world);
        let ticks = self.lookup_ticks(world);
        // SAFETY: updated above; `Q` is read-only and the world is borrowed
        // shared for `'w`.
        unsafe { QueryManyIter::new(world, self, entities.into_iter(), ticks) }
    }

    /// The items of the listed entities that match, with mutable access,
    /// one at a time through [`QueryManyIterMut::fetch_next`]; handles
    /// that are stale or do not match are skipped, and one listed twice is
    /// visited twice.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component, Debug, PartialEq)] struct Hp(u32);
    /// let mut world = World::new();
    /// let a = world.spawn(Hp(1));
    /// let mut state = QueryState::<&mut Hp>::new(&mut world);
    /// let mut iter = state.iter_many_mut(&mut world, [a, a]);
    /// while let Some(mut hp) = iter.fetch_next() {
    ///     hp.0 += 1;
    /// }
    /// assert_eq!(world.get::<Hp>(a), Some(&Hp(3)));
    /// ```
    pub fn iter_many_mut<'w, 's, I: IntoIterator<Item = Entity>>(
        &'s mut self,
        world: &'w mut World,
        entities: I,
    ) -> QueryManyIterMut<'w, 's, Q, F, I::IntoIter> {
        self.update(world);
        let ticks = self.lookup_ticks(world);
        // SAFETY: updated above; the exclusive borrow of the world covers
        // `'w`, and `new` refused conflicting access.
        unsafe { QueryManyIterMut::new(world, self, entities.into_iter(), ticks) }
    }

    /// The query's items for several entities at once, read-only, in the
    /// order given. An entity may be named more than once.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component, Debug, PartialEq)] struct Hp(u32);
    /// let mut world = World::new();
    /// let (a, b) = (world.spawn(Hp(1)), world.spawn(Hp(2)));
    /// let mut state = QueryState::<&Hp>::new(&mut world);
    /// assert_eq!(state.get_many(&world, [b, a, b]).unwrap(), [&Hp(2), &Hp(1), &Hp(2)]);
    /// ```
    ///
    /// # Errors
    /// The first entity, in the order given, that is not alive or does not
    /// match.
    pub fn get_many<'w, const N: usize>(
        &mut self,
        world: &'w World,
        entities: [Entity; N],
    ) -> Result<[Q::Item<'w>; N], QueryEntityError>
    where
        Q: ReadOnlyQueryData,
    {
        self.update(world);
        let ticks = self.lookup_ticks(world);
        // SAFETY: `Q` is read-only and the world is borrowed shared for `'w`.
        unsafe { self.get_many_unchecked_at(world, entities, ticks) }
    }

    /// The query's items for several distinct entities at once, with
    /// mutable access, in the order given: two entities' `&mut Health` side
    /// by side, for example.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component, Debug, PartialEq)] struct Health(u32);
    /// let mut world = World::new();
    /// let (a, b) = (world.spawn(Health(10)), world.spawn(Health(4)));
    /// let mut state = QueryState::<&mut Health>::new(&mut world);
    /// let [mut x, mut y] = state.get_many_mut(&mut world, [a, b]).unwrap();
    /// std::mem::swap(&mut x.0, &mut y.0);
    /// assert_eq!((world.get::<Health>(a), world.get::<Health>(b)), (Some(&Health(4)), Some(&Health(10))));
    /// assert_eq!(
    ///     state.get_many_mut(&mut world, [a, a]).err(),
    ///     Some(QueryEntityError::AliasedMutability(a))
    /// );
    /// ```
    ///
    /// # Errors
    /// [`QueryEntityError::AliasedMutability`] if an entity is named twice
    /// (checked first); else the first entity, in the order given, that is
    /// not alive or does not match.
    pub fn get_many_mut<'w, const N: usize>(
        &mut self,
        world: &'w mut World,
        entities: [Entity; N],
    ) -> Result<[Q::Item<'w>; N], QueryEntityError> {
        self.update(world);
        let ticks = self.lookup_ticks(world);
        check_distinct(&entities)?;
        // SAFETY: the exclusive borrow of the world covers `'w`, and the
        // entities are distinct, so their rows are.
        unsafe { self.get_many_unchecked_at(world, entities, ticks) }
    }

    /// The items of several entities, fetched one after the other.
    ///
    /// # Safety
    /// `update(world)` has run; unless `Q` is read-only, the caller has
    /// exclusive access to the world for `'w` and `entities` are distinct.
    pub(crate) unsafe fn get_many_unchecked_at<'w, const N: usize>(
        &self,
        world: &'w World,
        entities: [Entity; N],
        ticks: RunTicks,
    ) -> Result<[Q::Item<'w>; N], QueryEntityError> {
        let mut error = None;
        let items: [Option<Q::Item<'w>>; N] = std::array::from_fn(|i| {
            if error.is_some() {
                return None;
            }
            // SAFETY: forwarded contract; distinct entities live in distinct
            // rows, and `fetch` touches only its own row, so no two items
            // alias.
            match unsafe { self.get_unchecked_at(world, entities[i], ticks) } {
                Ok(item) => Some(item),
                Err(e) => {
                    error = Some(e);
                    None
                }
            }
        });
        match error {
            Some(error) => Err(error),
            None => Ok(items.map(|item| item.expect("every item was fetched"))),
        }
    }

    /// # Safety
    /// `update(world)` has run; unless `Q` is read-only, the caller has
    /// exclusive access to the world for `'w`.
    pub(crate) unsafe fn get_unchecked<'w>(
        &self,
        world: &'w World,
        entity: Entity,
    ) -> Result<Q::Item<'w>, QueryEntityError> {
        // SAFETY: forwarded contract.
        unsafe { self.get_unchecked_at(world, entity, self.ticks) }
    }

    /// The ticks system queries fetch with.
    #[inline]
    pub(crate) fn ticks(&self) -> RunTicks {
        self.ticks
    }

    /// [`QueryState::get_unchecked`] with the given ticks.
    ///
    /// # Safety
    /// As for [`QueryState::get_unchecked`].
    #[inline]
    pub(crate) unsafe fn get_unchecked_at<'w>(
        &self,
        world: &'w World,
        entity: Entity,
        ticks: RunTicks,
    ) -> Result<Q::Item<'w>, QueryEntityError> {
        let location = world.location(entity).ok_or(QueryEntityError::NoSuchEntity(entity))?;
        let index = match self.by_archetype.get(location.archetype.index()) {
            Some(&index) if index != NOT_MATCHED => index as usize,
            _ => return Err(QueryEntityError::QueryDoesNotMatch { entity, query: std::any::type_name::<Self>() }),
        };
        let cache = self.matched[index].1;
        let archetype = world.archetypes().get(location.archetype);
        let row = location.row.index();
        // SAFETY: `cache` was made for this archetype, which passes `F`'s
        // archetype test; `row` is the entity's live row.
        unsafe {
            let table = world.table_ref(archetype);
            let mut filter = F::init_fetch(&self.f_state, table, ticks);
            let mut fetch = Q::init_fetch(&self.q_state, cache, table, ticks);
            if (!F::IS_ARCHETYPAL && !F::filter_row(&mut filter, row)) || (!Q::DENSE && !Q::row_matches(&fetch, row)) {
                return Err(QueryEntityError::QueryDoesNotMatch { entity, query: std::any::type_name::<Self>() });
            }
            Ok(Q::fetch(&mut fetch, row))
        }
    }

    /// Iterates the matching entities of `world` without a borrow that proves
    /// the access.
    ///
    /// # Safety
    /// `update(world)` has run; unless `Q` is read-only, nothing else
    /// borrows the components `Q` writes for `'w`, and nothing writes the
    /// ones it reads.
    pub(crate) unsafe fn iter_unchecked<'w, 's>(&'s self, world: &'w World) -> QueryIter<'w, 's, Q, F> {
        // SAFETY: `matched` was built from this world's archetypes with these
        // states (`update` checked the world); the access is the caller's.
        unsafe { QueryIter::cached(world, self.q_state.clone(), self.f_state.clone(), &self.matched, self.ticks) }
    }

    /// What a parallel run reads: the states, the matched archetypes with
    /// their caches, and the ticks.
    #[cfg(feature = "parallel")]
    #[allow(clippy::type_complexity)]
    pub(crate) fn parts(&self) -> (&Q::State, &F::State, &[(ArchetypeId, Q::Cache)], RunTicks) {
        (&self.q_state, &self.f_state, &self.matched, self.ticks)
    }

    /// What this state's parallel runs measured of their work.
    #[cfg(feature = "parallel")]
    pub(crate) fn par_memo(&self) -> &ParMemo {
        &self.par_memo
    }

    /// The matched archetypes, in increasing id order.
    pub(crate) fn matched_ids(&self) -> impl Iterator<Item = ArchetypeId> + '_ {
        self.matched.iter().map(|&(id, _)| id)
    }

    /// Whether the live entity at `row` of matched archetype `id` passes
    /// the filter's row test and has the sparse components the query reads
    /// (always, for an archetypal filter and dense data).
    ///
    /// # Safety
    /// `update(world)` has run, `id` is one of `matched_ids`, `row` is in
    /// bounds, and nothing writes the ticks the filter reads for the call.
    pub(crate) unsafe fn passes_row(&self, world: &World, id: ArchetypeId, row: usize, ticks: RunTicks) -> bool {
        if F::IS_ARCHETYPAL && Q::DENSE {
            return true;
        }
        let table = world.table_ref(world.archetypes().get(id));
        let cache = self.matched[self.by_archetype[id.index()] as usize].1;
        // SAFETY: the archetype passes `F`'s archetype test and `cache` is
        // its match (it is matched), and `row` is in bounds (caller); the
        // query fetch is only asked whether the row matches.
        unsafe {
            let passes = F::IS_ARCHETYPAL || F::filter_row(&mut F::init_fetch(&self.f_state, table, ticks), row);
            passes && (Q::DENSE || Q::row_matches(&Q::init_fetch(&self.q_state, cache, table, ticks), row))
        }
    }

    /// Starts a pass of this state's own (outside a system): the previous
    /// pass becomes the last run, and the world's tick advances.
    pub(crate) fn begin_run(&mut self, world: &World) {
        let this_run = world.increment_change_tick();
        self.ticks = RunTicks { last_run: self.ticks.this_run.clamped(this_run), this_run };
    }

    /// [`QueryState::begin_run`] through an exclusive borrow of the world.
    #[inline]
    pub(crate) fn begin_run_mut(&mut self, world: &mut World) {
        let this_run = world.increment_change_tick_mut();
        self.ticks = RunTicks { last_run: self.ticks.this_run.clamped(this_run), this_run };
    }

    /// Sets the ticks the next `*_unchecked` calls compare against: a
    /// system's runs.
    #[inline]
    pub(crate) fn set_ticks(&mut self, ticks: RunTicks) {
        self.ticks = ticks;
    }

    /// The ticks of a single-entity lookup between passes: changes after
    /// the last pass are new, and writes are stamped now.
    #[inline]
    fn lookup_ticks(&self, world: &World) -> RunTicks {
        let now = world.change_tick();
        RunTicks { last_run: self.ticks.this_run.clamped(now), this_run: now }
    }

    /// What the query reads and writes, and a condition covering the
    /// archetypes it can visit.
    pub(crate) fn access(&self, components: &Components) -> (Access, ArchetypeCondition) {
        let mut access = Access::new();
        Q::update_access(&self.q_state, components, &mut access);
        // The filter's reads (change ticks) matter against other systems'
        // writes; within the query they never overlap a fetched item.
        F::update_access(&self.f_state, &mut access);
        (access, Q::condition(&self.q_state).and(&F::condition(&self.f_state)))
    }

    /// Number of archetypes the query matches so far.
    pub fn matched_archetypes(&self) -> usize {
        self.matched.len()
    }
}

impl<Q: QueryData, F: QueryFilter> fmt::Debug for QueryState<Q, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("QueryState")
            .field("query", &std::any::type_name::<Q>())
            .field("filter", &std::any::type_name::<F>())
            .field("matched_archetypes", &self.matched.len())
            .finish()
    }
}

/// Refuses a list of entities that names one twice, for the many-entity
/// mutable fetches; quadratic, for the short lists they take.
pub(crate) fn check_distinct(entities: &[Entity]) -> Result<(), QueryEntityError> {
    for (i, &entity) in entities.iter().enumerate() {
        if entities[..i].contains(&entity) {
            return Err(QueryEntityError::AliasedMutability(entity));
        }
    }
    Ok(())
}

/// Builds the states of query `Q` with filter `F`, registering the component
/// types they name, and panics if `Q` borrows a component mutably together
/// with any other borrow of it.
pub(crate) fn init_checked<Q: QueryData, F: QueryFilter>(components: &mut Components) -> (Q::State, F::State) {
    let q_state = Q::init_state(components);
    let f_state = F::init_state(components);
    let mut access = Access::new();
    Q::update_access(&q_state, components, &mut access);
    if let Some(&id) = access.conflicts().first() {
        panic!(
            "error[E0001]: query `{}` borrows component `{}` mutably while also borrowing it elsewhere in the same query; \
             fetch each component once, with `&mut` if it is written",
            std::any::type_name::<Q>(),
            components.name(id),
        );
    }
    (q_state, f_state)
}
