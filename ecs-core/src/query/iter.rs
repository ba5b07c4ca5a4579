//! `QueryIter`, the iterator behind every query: an outer walk over matched
//! archetypes and an inner walk over rows through raw column pointers.

use std::slice;

use crate::component::change::RunTicks;
use crate::component::Components;
use crate::entity::Entity;
use crate::query::fetch::{QueryData, ReadOnlyQueryData};
use crate::query::filter::{ArchetypeFilter, QueryFilter};
use crate::query::hiding::sees;
use crate::query::state::{init_checked, QueryState};
use crate::storage::archetype::{Archetype, ArchetypeId};
use crate::world::World;

/// Where the next archetypes come from: a query state's cached match list,
/// or a scan of every archetype (one-off queries, which keep no cache).
enum Cursor<'s, C> {
    Cached(slice::Iter<'s, (ArchetypeId, C)>),
    Scan(usize),
}

impl<C> Clone for Cursor<'_, C> {
    fn clone(&self) -> Self {
        match self {
            Cursor::Cached(iter) => Cursor::Cached(iter.clone()),
            Cursor::Scan(next) => Cursor::Scan(*next),
        }
    }
}

impl<'s, C: Copy> Cursor<'s, C> {
    /// The next archetype of `archetypes` that the query matches, with its
    /// cache.
    ///
    /// Always inlined: a query state's iterator starts `Cached` and stays
    /// so, which the compiler sees only when this body is in the caller;
    /// then the scan is dead code there and the iterator lives in
    /// registers (a call here costs a system of ten rows about half again).
    #[inline(always)]
    fn next<'w, Q, F>(
        &mut self,
        archetypes: &'w [Archetype],
        components: &Components,
        states: &(Q::State, F::State),
    ) -> Option<(&'w Archetype, C)>
    where
        Q: QueryData<Cache = C>,
        F: QueryFilter,
    {
        match self {
            Cursor::Cached(iter) => iter.next().map(|&(id, cache)| (&archetypes[id.index()], cache)),
            Cursor::Scan(next) => {
                while let Some(archetype) = archetypes.get(*next) {
                    *next += 1;
                    if !F::matches(&states.1, archetype) || !sees::<Q, F>(components, &states.0, &states.1, archetype) {
                        continue;
                    }
                    if let Some(cache) = Q::match_archetype(&states.0, archetype) {
                        return Some((archetype, cache));
                    }
                }
                None
            }
        }
    }
}

/// The iterator of a query's items.
///
/// The per-row path is a bounds compare and pointer arithmetic; archetype
/// switches happen outside it. `fold`, and so `for_each`, `sum` and
/// `count`, runs as a nested loop over archetypes and rows that the
/// compiler can vectorize. On large tables a plain `for` loop is about as
/// fast; over many small tables prefer `for_each` in hot loops, since a
/// `for` loop's row-at-a-time `next` cannot be vectorized.
pub struct QueryIter<'w, 's, Q: QueryData, F: QueryFilter = ()> {
    archetypes: &'w [Archetype],
    world: &'w World,
    /// `None` when the query can match nothing (it names a component the
    /// world never saw).
    states: Option<(Q::State, F::State)>,
    cursor: Cursor<'s, Q::Cache>,
    fetch: Q::Fetch<'w>,
    filter: F::Fetch<'w>,
    row: usize,
    len: usize,
    /// The reader's previous and current runs, for change detection.
    ticks: RunTicks,
}

impl<'w, 's, Q: QueryData, F: QueryFilter> QueryIter<'w, 's, Q, F> {
    /// An iterator over the archetypes listed in `matched`.
    ///
    /// # Safety
    /// - every entry of `matched` was produced by `Q::match_archetype` with
    ///   `q_state` for that archetype of `archetypes`, and the archetype
    ///   passes `F::matches` with `f_state`;
    /// - unless `Q` is read-only, the caller has exclusive access to the
    ///   components `Q` writes for `'w`, and `Q`'s access has no conflicts.
    pub(crate) unsafe fn cached(
        world: &'w World,
        q_state: Q::State,
        f_state: F::State,
        matched: &'s [(ArchetypeId, Q::Cache)],
        ticks: RunTicks,
    ) -> Self {
        QueryIter {
            archetypes: world.archetypes().as_slice(),
            world,
            states: Some((q_state, f_state)),
            cursor: Cursor::Cached(matched.iter()),
            fetch: Q::dangling_fetch(),
            filter: F::dangling_fetch(),
            row: 0,
            len: 0,
            ticks,
        }
    }

    /// An iterator that checks every archetype of `archetypes` as it goes.
    ///
    /// # Safety
    /// As for [`QueryIter::cached`]: the access condition on `Q`.
    unsafe fn scan(world: &'w World, states: Option<(Q::State, F::State)>, ticks: RunTicks) -> Self {
        QueryIter {
            archetypes: world.archetypes().as_slice(),
            world,
            states,
            cursor: Cursor::Scan(0),
            fetch: Q::dangling_fetch(),
            filter: F::dangling_fetch(),
            row: 0,
            len: 0,
            ticks,
        }
    }

    /// A one-off read-only query over `world`, which keeps no cache: it
    /// checks every archetype as it goes.
    pub(crate) fn over_world(world: &'w World) -> Self
    where
        Q: ReadOnlyQueryData,
    {
        let components = world.components();
        let states = Q::get_state(components).zip(F::get_state(components));
        // A one-off query has no previous run: every change is new to it.
        let ticks = world.one_off_ticks();
        // SAFETY: `Q` is read-only and the world is borrowed shared for `'w`.
        unsafe { QueryIter::scan(world, states, ticks) }
    }

    /// A one-off query over `world` with mutable access, which keeps no
    /// cache.
    ///
    /// # Panics
    /// If `Q` would alias a component (`(&mut A, &A)`).
    pub(crate) fn over_world_mut(world: &'w mut World) -> Self {
        let states = init_checked::<Q, F>(world.components_mut());
        let ticks = world.one_off_ticks();
        let world: &'w World = world;
        // SAFETY: the exclusive borrow of the world covers `'w`, and
        // `init_checked` refused aliasing queries.
        unsafe { QueryIter::scan(world, Some(states), ticks) }
    }

    /// Moves to the next matched archetype with rows; false at the end.
    /// Always inlined, as [`Cursor::next`] is.
    #[inline(always)]
    fn next_archetype(&mut self) -> bool {
        let Some(states) = &self.states else { return false };
        while let Some((archetype, cache)) = self.cursor.next::<Q, F>(self.archetypes, self.world.components(), states)
        {
            if archetype.is_empty() {
                continue;
            }
            // SAFETY: `cache` came from `Q::match_archetype` for this
            // archetype, which passes `F::matches` (constructor contract or
            // the scan in `Cursor::next`).
            unsafe {
                let table = self.world.table_ref(archetype);
                self.fetch = Q::init_fetch(&states.0, cache, table, self.ticks);
                self.filter = F::init_fetch(&states.1, table, self.ticks);
            }
            self.row = 0;
            self.len = archetype.len();
            return true;
        }
        false
    }

    /// Number of entities left, counted per archetype without visiting rows,
    /// when the filter is archetypal.
    fn remaining(&self) -> Option<usize> {
        if !F::IS_ARCHETYPAL || !Q::DENSE {
            return None;
        }
        let mut n = self.len - self.row;
        if let Some(states) = &self.states {
            let mut cursor = self.cursor.clone();
            while let Some((archetype, _)) = cursor.next::<Q, F>(self.archetypes, self.world.components(), states) {
                n += archetype.len();
            }
        }
        Some(n)
    }
}

impl<'w, Q: QueryData, F: QueryFilter> Iterator for QueryIter<'w, '_, Q, F> {
    type Item = Q::Item<'w>;

    #[inline]
    fn next(&mut self) -> Option<Q::Item<'w>> {
        loop {
            if self.row < self.len {
                let row = self.row;
                self.row += 1;
                // SAFETY: `row < len`, the length of the archetype the fetches
                // were made for, which the iterator's borrow keeps unchanged;
                // each row is fetched once.
                unsafe {
                    if F::IS_ARCHETYPAL && Q::DENSE {
                        // Every row is fetched, in order: the fetch steps
                        // its pointers instead of computing each row's.
                        return Some(Q::fetch_next_row(&mut self.fetch, row));
                    }
                    if (F::IS_ARCHETYPAL || F::filter_row(&mut self.filter, row))
                        && (Q::DENSE || Q::row_matches(&self.fetch, row))
                    {
                        return Some(Q::fetch(&mut self.fetch, row));
                    }
                }
            } else if !self.next_archetype() {
                return None;
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match self.remaining() {
            Some(n) => (n, Some(n)),
            None => (0, None),
        }
    }

    fn count(self) -> usize {
        match self.remaining() {
            Some(n) => n,
            None => self.fold(0, |n, _| n + 1),
        }
    }

    #[inline]
    fn fold<B, G>(mut self, init: B, mut g: G) -> B
    where
        G: FnMut(B, Q::Item<'w>) -> B,
    {
        let mut acc = init;
        loop {
            let (start, len) = (self.row, self.len);
            for row in start..len {
                // SAFETY: as in `next`: in bounds, each row fetched once.
                unsafe {
                    if (F::IS_ARCHETYPAL || F::filter_row(&mut self.filter, row))
                        && (Q::DENSE || Q::row_matches(&self.fetch, row))
                    {
                        acc = g(acc, Q::fetch(&mut self.fetch, row));
                    }
                }
            }
            self.row = len;
            if !self.next_archetype() {
                return acc;
            }
        }
    }
}

/// A query whose filter decides per archetype ([`ArchetypeFilter`]: no
/// [`Added`](crate::Added) or [`Changed`](crate::Changed)) knows its length
/// from the sizes of the tables it matched, without visiting a row.
///
/// ```
/// # use archetable::prelude::*;
/// # #[derive(Component)] struct Hp(u32);
/// let mut world = World::new();
/// world.spawn_batch((0..5).map(Hp)).for_each(drop);
/// let mut iter = world.query::<&Hp>();
/// assert_eq!(iter.len(), 5);
/// iter.next();
/// assert_eq!(iter.len(), 4);
/// ```
impl<Q: QueryData, F: ArchetypeFilter> ExactSizeIterator for QueryIter<'_, '_, Q, F> {}

/// The iterator of [`QueryState::iter_many`](crate::QueryState::iter_many)
/// and [`Query::iter_many`](crate::Query::iter_many): the read-only items
/// of the listed entities that match, in list order, skipping the others.
pub struct QueryManyIter<'w, 's, Q: ReadOnlyQueryData, F: QueryFilter, I: Iterator<Item = Entity>> {
    world: &'w World,
    state: &'s QueryState<Q, F>,
    entities: I,
    ticks: RunTicks,
}

impl<'w, 's, Q: ReadOnlyQueryData, F: QueryFilter, I: Iterator<Item = Entity>> QueryManyIter<'w, 's, Q, F, I> {
    /// # Safety
    /// `state.update(world)` has run, and nothing mutates the components
    /// `Q` reads while `'w` lasts.
    pub(crate) unsafe fn new(world: &'w World, state: &'s QueryState<Q, F>, entities: I, ticks: RunTicks) -> Self {
        QueryManyIter { world, state, entities, ticks }
    }
}

impl<'w, Q: ReadOnlyQueryData, F: QueryFilter, I: Iterator<Item = Entity>> Iterator for QueryManyIter<'w, '_, Q, F, I> {
    type Item = Q::Item<'w>;

    fn next(&mut self) -> Option<Q::Item<'w>> {
        for entity in self.entities.by_ref() {
            // SAFETY: `Q` is read-only, the state is up to date and nothing
            // mutates what `Q` reads while `'w` lasts (from `new`).
            if let Ok(item) = unsafe { self.state.get_unchecked_at(self.world, entity, self.ticks) } {
                return Some(item);
            }
        }
        None
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, self.entities.size_hint().1)
    }
}

/// The lending iterator of
/// [`QueryState::iter_many_mut`](crate::QueryState::iter_many_mut) and
/// [`Query::iter_many_mut`](crate::Query::iter_many_mut): the items of the
/// listed entities that match, with mutable access, one at a time. Each
/// item borrows the iterator, so an entity listed twice is never fetched
/// twice at once; hence `fetch_next` in a `while let` loop instead of
/// `Iterator`.
///
/// ```
/// # use archetable::prelude::*;
/// # #[derive(Component, Debug, PartialEq)] struct Hp(u32);
/// let mut world = World::new();
/// let a = world.spawn(Hp(1));
/// let b = world.spawn(Hp(5));
/// let mut state = QueryState::<&mut Hp>::new(&mut world);
/// let mut iter = state.iter_many_mut(&mut world, [a, b, a]);
/// while let Some(mut hp) = iter.fetch_next() {
///     hp.0 *= 2;
/// }
/// assert_eq!((world.get::<Hp>(a), world.get::<Hp>(b)), (Some(&Hp(4)), Some(&Hp(10))));
/// ```
pub struct QueryManyIterMut<'w, 's, Q: QueryData, F: QueryFilter, I: Iterator<Item = Entity>> {
    world: &'w World,
    state: &'s QueryState<Q, F>,
    entities: I,
    ticks: RunTicks,
}

impl<'w, 's, Q: QueryData, F: QueryFilter, I: Iterator<Item = Entity>> QueryManyIterMut<'w, 's, Q, F, I> {
    /// # Safety
    /// `state.update(world)` has run, and for `'w` nothing else borrows the
    /// components `Q` writes, and nothing writes the ones it reads.
    pub(crate) unsafe fn new(world: &'w World, state: &'s QueryState<Q, F>, entities: I, ticks: RunTicks) -> Self {
        QueryManyIterMut { world, state, entities, ticks }
    }

    /// The item of the next listed entity that matches, skipping the
    /// others; `None` at the end of the list.
    pub fn fetch_next(&mut self) -> Option<Q::Item<'_>> {
        for entity in self.entities.by_ref() {
            // SAFETY: the state is up to date and the access is exclusive
            // for `'w` (from `new`); the item borrows `self` mutably, so no
            // other item of this iterator lives while it does.
            if let Ok(item) = unsafe { self.state.get_unchecked_at(self.world, entity, self.ticks) } {
                return Some(item);
            }
        }
        None
    }
}
