//! `iter_combinations`: every set of `K` distinct matching entities, once
//! each, as arrays of items (pairs for collisions, triples for three-body
//! rules).

use crate::component::change::RunTicks;
use crate::entity::Entity;
use crate::query::fetch::{QueryData, ReadOnlyQueryData};
use crate::query::filter::QueryFilter;
use crate::query::state::QueryState;
use crate::world::World;

/// The iterator of `iter_combinations` and `iter_combinations_mut` on
/// [`QueryState`] and [`Query`](crate::Query): every set of `K` distinct
/// matching entities, once, in the order the query visits them (for
/// `[a, b, c]`: `[a, b]`, `[a, c]`, `[b, c]`). `K = 0`, or fewer than `K`
/// matching entities, yields nothing.
///
/// For a read-only query it is an [`Iterator`] of `[Item; K]`. For a query
/// that writes, use [`QueryCombinationIter::fetch_next`] in a `while let`
/// loop: each array borrows the iterator, so two arrays that share an
/// entity are never alive at once.
///
/// ```
/// # use archetable::prelude::*;
/// # #[derive(Component)] struct Mass(u32);
/// let mut world = World::new();
/// world.spawn_batch([Mass(1), Mass(2), Mass(3)]).for_each(drop);
/// let mut state = QueryState::<&Mass>::new(&mut world);
/// let pairs: Vec<[u32; 2]> = state.iter_combinations::<2>(&world).map(|[a, b]| [a.0, b.0]).collect();
/// assert_eq!(pairs, [[1, 2], [1, 3], [2, 3]]);
/// ```
pub struct QueryCombinationIter<'w, 's, Q: QueryData, F: QueryFilter, const K: usize> {
    world: &'w World,
    state: &'s QueryState<Q, F>,
    /// The matching entities, in visiting order.
    entities: Vec<Entity>,
    /// The positions in `entities` of the next combination, increasing;
    /// `None` once done.
    next: Option<[usize; K]>,
    ticks: RunTicks,
}

impl<'w, 's, Q: QueryData, F: QueryFilter, const K: usize> QueryCombinationIter<'w, 's, Q, F, K> {
    /// # Safety
    /// `state.update(world)` has run; unless `Q` is read-only, nothing else
    /// borrows the components `Q` writes for `'w`, and nothing writes the
    /// ones it reads.
    pub(crate) unsafe fn new(world: &'w World, state: &'s QueryState<Q, F>, ticks: RunTicks) -> Self {
        let mut entities = Vec::new();
        for id in state.matched_ids() {
            let archetype = world.archetypes().get(id);
            for (row, &index) in archetype.entity_indices().iter().enumerate() {
                let entity = world.entities().entity_at(index);
                // SAFETY: updated (caller), `id` is matched, `row` is in
                // bounds, and nothing writes the world's ticks for `'w`.
                if unsafe { state.passes_row(world, id, row, ticks) } {
                    entities.push(entity);
                }
            }
        }
        let next = (K > 0 && K <= entities.len()).then(|| std::array::from_fn(|i| i));
        QueryCombinationIter { world, state, entities, next, ticks }
    }

    /// The current combination's positions, moving on to the next one.
    fn advance(&mut self) -> Option<[usize; K]> {
        let current = self.next?;
        let n = self.entities.len();
        let mut next = current;
        // The rightmost position that can still move right; those after it
        // restart just past it.
        self.next = (0..K).rev().find(|&i| next[i] < n - K + i).map(|i| {
            next[i] += 1;
            for j in i + 1..K {
                next[j] = next[j - 1] + 1;
            }
            next
        });
        Some(current)
    }

    /// The items of the next combination, with the access the query has;
    /// `None` at the end. The array borrows the iterator.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component, Debug, PartialEq)] struct Charge(i32);
    /// let mut world = World::new();
    /// let a = world.spawn(Charge(1));
    /// let b = world.spawn(Charge(2));
    /// let c = world.spawn(Charge(3));
    /// let mut state = QueryState::<&mut Charge>::new(&mut world);
    /// let mut pairs = state.iter_combinations_mut::<2>(&mut world);
    /// while let Some([mut x, y]) = pairs.fetch_next() {
    ///     x.0 += y.0;
    /// }
    /// // Pairs [a, b], [a, c], [b, c], each seeing the values of the moment.
    /// assert_eq!(world.get::<Charge>(a), Some(&Charge(1 + 2 + 3)));
    /// assert_eq!(world.get::<Charge>(b), Some(&Charge(2 + 3)));
    /// assert_eq!(world.get::<Charge>(c), Some(&Charge(3)));
    /// ```
    pub fn fetch_next(&mut self) -> Option<[Q::Item<'_>; K]> {
        let positions = self.advance()?;
        let world: &World = self.world;
        Some(std::array::from_fn(|i| {
            let entity = self.entities[positions[i]];
            // SAFETY: the state is up to date and the access is the one
            // `new`'s caller promised for `'w`; the positions are distinct,
            // so are the entities and their rows, and the array borrows
            // `self` mutably, so no other item of this iterator is alive.
            match unsafe { self.state.get_unchecked_at(world, entity, self.ticks) } {
                Ok(item) => item,
                Err(_) => unreachable!("entity {entity} matched when the iterator was made, and the world is borrowed"),
            }
        }))
    }
}

impl<'w, Q: ReadOnlyQueryData, F: QueryFilter, const K: usize> Iterator for QueryCombinationIter<'w, '_, Q, F, K> {
    type Item = [Q::Item<'w>; K];

    fn next(&mut self) -> Option<Self::Item> {
        let positions = self.advance()?;
        Some(std::array::from_fn(|i| {
            let entity = self.entities[positions[i]];
            // SAFETY: `Q` is read-only, the state is up to date and nothing
            // writes what `Q` reads for `'w` (from `new`).
            match unsafe { self.state.get_unchecked_at(self.world, entity, self.ticks) } {
                Ok(item) => item,
                Err(_) => unreachable!("entity {entity} matched when the iterator was made, and the world is borrowed"),
            }
        }))
    }
}

impl<Q: QueryData, F: QueryFilter> QueryState<Q, F> {
    /// Every set of `K` distinct matching entities of `world`, once, as
    /// arrays of read-only items; see [`QueryCombinationIter`].
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component)] struct Pos(f32);
    /// let mut world = World::new();
    /// world.spawn_batch([Pos(0.0), Pos(1.0), Pos(5.0)]).for_each(drop);
    /// let mut state = QueryState::<&Pos>::new(&mut world);
    /// let close = state.iter_combinations::<2>(&world).filter(|[a, b]| (a.0 - b.0).abs() < 2.0).count();
    /// assert_eq!(close, 1);
    /// ```
    pub fn iter_combinations<'w, 's, const K: usize>(
        &'s mut self,
        world: &'w World,
    ) -> QueryCombinationIter<'w, 's, Q, F, K>
    where
        Q: ReadOnlyQueryData,
    {
        self.update(world);
        self.begin_run(world);
        let ticks = self.ticks();
        // SAFETY: updated above; `Q` is read-only and the world is borrowed
        // shared for `'w`.
        unsafe { QueryCombinationIter::new(world, self, ticks) }
    }

    /// Every set of `K` distinct matching entities of `world`, once, with
    /// mutable access, one array at a time through
    /// [`QueryCombinationIter::fetch_next`].
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component, Debug, PartialEq)] struct Hits(u32);
    /// let mut world = World::new();
    /// let all: Vec<Entity> = world.spawn_batch([Hits(0), Hits(0), Hits(0)]).collect();
    /// let mut state = QueryState::<&mut Hits>::new(&mut world);
    /// let mut pairs = state.iter_combinations_mut::<2>(&mut world);
    /// while let Some([mut a, mut b]) = pairs.fetch_next() {
    ///     a.0 += 1;
    ///     b.0 += 1;
    /// }
    /// assert!(all.iter().all(|&e| world.get::<Hits>(e) == Some(&Hits(2))));
    /// ```
    pub fn iter_combinations_mut<'w, 's, const K: usize>(
        &'s mut self,
        world: &'w mut World,
    ) -> QueryCombinationIter<'w, 's, Q, F, K> {
        self.update(world);
        self.begin_run(world);
        let ticks = self.ticks();
        let world: &'w World = world;
        // SAFETY: updated above; the exclusive borrow of the world covers
        // `'w`, and `new` refused conflicting access.
        unsafe { QueryCombinationIter::new(world, self, ticks) }
    }
}
