//! `QueryIter`, the iterator behind every query: an outer walk over matched
//! archetypes and an inner walk over rows through raw column pointers.

use std::slice;

use crate::archetype::{Archetype, ArchetypeId};
use crate::query::fetch::QueryData;
use crate::query::filter::QueryFilter;

/// Where the next archetypes come from: a query state's cached match list,
/// or a scan of every archetype (one-off queries, which keep no cache).
enum Cursor<'s, C> {
    Cached(slice::Iter<'s, (ArchetypeId, C)>),
    Scan(usize),
}

/// The iterator of a query's items.
///
/// A `for` loop and the internal iteration of `for_each`, `fold`, `sum` and
/// `count` are both cheap: the per-row path is a bounds compare and pointer
/// arithmetic, and archetype switches happen outside it; `fold` runs as a
/// nested loop over archetypes and rows.
pub struct QueryIter<'w, 's, Q: QueryData, F: QueryFilter = ()> {
    archetypes: &'w [Archetype],
    /// `None` when the query can match nothing (it names a component the
    /// world never saw).
    states: Option<(Q::State, F::State)>,
    cursor: Cursor<'s, Q::Cache>,
    fetch: Q::Fetch<'w>,
    filter: F::Fetch<'w>,
    row: usize,
    len: usize,
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
        archetypes: &'w [Archetype],
        q_state: Q::State,
        f_state: F::State,
        matched: &'s [(ArchetypeId, Q::Cache)],
    ) -> Self {
        QueryIter {
            archetypes,
            states: Some((q_state, f_state)),
            cursor: Cursor::Cached(matched.iter()),
            fetch: Q::dangling_fetch(),
            filter: F::dangling_fetch(),
            row: 0,
            len: 0,
        }
    }

    /// An iterator that checks every archetype of `archetypes` as it goes.
    ///
    /// # Safety
    /// As for [`QueryIter::cached`]: the access condition on `Q`.
    pub(crate) unsafe fn scan(archetypes: &'w [Archetype], states: Option<(Q::State, F::State)>) -> Self {
        QueryIter {
            archetypes,
            states,
            cursor: Cursor::Scan(0),
            fetch: Q::dangling_fetch(),
            filter: F::dangling_fetch(),
            row: 0,
            len: 0,
        }
    }

    /// The next matched archetype after the cursor, with its cache.
    #[inline]
    fn next_match(&mut self) -> Option<(&'w Archetype, Q::Cache)> {
        let (q_state, f_state) = self.states.as_ref()?;
        match &mut self.cursor {
            Cursor::Cached(iter) => iter.next().map(|&(id, cache)| (&self.archetypes[id.index()], cache)),
            Cursor::Scan(next) => {
                while let Some(archetype) = self.archetypes.get(*next) {
                    *next += 1;
                    if !F::matches(f_state, archetype) {
                        continue;
                    }
                    if let Some(cache) = Q::match_archetype(q_state, archetype) {
                        return Some((archetype, cache));
                    }
                }
                None
            }
        }
    }

    /// Moves to the next matched archetype with rows; false at the end.
    #[inline]
    fn next_archetype(&mut self) -> bool {
        loop {
            let Some((archetype, cache)) = self.next_match() else {
                return false;
            };
            if archetype.is_empty() {
                continue;
            }
            let (q_state, f_state) = self.states.as_ref().expect("next_match found states");
            // SAFETY: `cache` came from `Q::match_archetype` for this
            // archetype, which passes `F::matches` (constructor contract or
            // the scan above).
            unsafe {
                self.fetch = Q::init_fetch(q_state, cache, archetype);
                self.filter = F::init_fetch(f_state, archetype);
            }
            self.row = 0;
            self.len = archetype.len();
            return true;
        }
    }

    /// Number of entities left, counted per archetype without visiting rows
    /// when the filter is archetypal.
    fn remaining(&self) -> Option<usize>
    where
        Q::Cache: Copy,
    {
        if !F::IS_ARCHETYPAL {
            return None;
        }
        let mut rest = QueryIter::<Q, F> {
            archetypes: self.archetypes,
            states: self.states.clone(),
            cursor: match &self.cursor {
                Cursor::Cached(iter) => Cursor::Cached(iter.clone()),
                Cursor::Scan(next) => Cursor::Scan(*next),
            },
            fetch: Q::dangling_fetch(),
            filter: F::dangling_fetch(),
            row: 0,
            len: 0,
        };
        let mut n = self.len - self.row;
        while let Some((archetype, _)) = rest.next_match() {
            n += archetype.len();
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
                    if F::IS_ARCHETYPAL || F::filter_row(&mut self.filter, row) {
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
                    if F::IS_ARCHETYPAL || F::filter_row(&mut self.filter, row) {
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
