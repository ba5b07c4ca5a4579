//! The list a relationship target keeps of its sources, in join order,
//! with joining and leaving amortized O(1) whatever its length.
//!
//! ```text
//!   slots:  [ -, -, a, -, c, d, -, f ]     `-` a hole left by a source that left
//!            head ^                  ^ never a hole (trailing holes are popped)
//!   index:  a -> 2, c -> 4, d -> 5, f -> 7 (long lists, once one left)
//! ```
//!
//! Joining pushes a slot (and an index entry, once there is an index).
//! Leaving finds the slot (the last one, else the index, else a scan of a
//! short list) and makes it a hole; when holes outnumber the sources, the
//! slots are compacted in one pass, which the removals since the last
//! compaction pay for. A long list builds its index the first time a
//! source leaves it other than from its end (one pass, paid for by the
//! joins before), so that lists that only grow, or shrink from the end as
//! in a recursive despawn, never hash. Short lists keep no index and no
//! holes: they shift, which for a few entries is cheaper than hashing.

use std::borrow::Borrow;
use std::fmt;
use std::ops::Index;

use hashbrown::{HashMap, HashSet};

use crate::entity::Entity;
use crate::world::relations::Place;

/// From this many slots on, a list keeps an index from source to slot
/// (built when a source first leaves from other than the end).
const INDEXED_FROM: usize = 32;
/// An indexed list compacted to fewer sources than this drops its index.
const UNINDEXED_BELOW: usize = INDEXED_FROM / 2;
/// The slots a list keeps in place, without a heap allocation: most
/// targets have a few sources, and a list this short costs no allocation
/// to create or free.
const INLINE: usize = 4;
/// The most holes [`SourceList::place_at`] walks back over.
const PLACE_WALK: usize = 64;

/// The sources of a relationship target ([`Children`](crate::Children),
/// or the list of your own [`RelationshipTarget`](crate::RelationshipTarget)),
/// in the order they joined: a read-only view, kept by the engine.
///
/// Joining and leaving are amortized O(1) whatever the number of
/// siblings; [`first`](Self::first), [`last`](Self::last) and
/// [`len`](Self::len) are O(1); [`contains`](Self::contains) is O(1) on a
/// list that keeps an index (one of 32 entries or more that a source left
/// from other than its end) and a scan otherwise; [`iter`](Self::iter) visits the
/// sources in join order. It compares equal to slices, arrays and vectors
/// of the same entities in the same order (either side of the `==`), and
/// serializes as that list.
///
/// Code written for a `&[Entity]` reads it unchanged: `iter` yields
/// `&Entity`, `first`, `last` and [`get`](Self::get) return
/// `Option<&Entity>`, `contains` takes an `Entity` or a `&Entity`,
/// `list[i]` indexes (O(1) on a list no source left from the middle, else
/// a walk to the `i`th source), and `to_vec` copies it out. A range
/// (`list[1..]`) is not a slice of it: use `iter().skip(1)` or `to_vec()`.
///
/// ```
/// use archetable::prelude::*;
///
/// let mut world = World::new();
/// let root = world.spawn(());
/// let kids: Vec<Entity> = (0..4).map(|_| world.spawn(ChildOf(root))).collect();
/// world.despawn(kids[1]).unwrap();
/// let children: &SourceList = world.children(root);
/// assert_eq!(children, [kids[0], kids[2], kids[3]]);
/// assert_eq!((children.len(), children.first(), children.last()), (3, Some(&kids[0]), Some(&kids[3])));
/// assert!(children.contains(kids[2]) && !children.contains(&kids[1]));
/// assert_eq!((children[0], children[1]), (kids[0], kids[2]));
/// assert_eq!(children.iter().rev().copied().collect::<Vec<_>>(), [kids[3], kids[2], kids[0]]);
/// ```
pub struct SourceList {
    /// The sources in join order, with holes where some left.
    slots: Slots,
    /// The first slot that is not a hole (0 when there are no holes).
    head: usize,
    /// How many slots are holes. Only indexed lists have holes.
    holes: usize,
    /// Source to slot, for lists of at least `INDEXED_FROM` slots (boxed:
    /// most lists have none, and every list's row carries the field).
    index: Option<Box<HashMap<Entity, usize>>>,
}

/// The slots of a [`SourceList`]: up to [`INLINE`] in place, more on the
/// heap. Reads see a slice either way.
enum Slots {
    /// The first `len` of `items`.
    Inline { len: u8, items: [Option<Entity>; INLINE] },
    /// A list that outgrew its place; it stays on the heap.
    Heap(Vec<Option<Entity>>),
}

impl Slots {
    /// No slots.
    const fn new() -> Self {
        Slots::Inline { len: 0, items: [None; INLINE] }
    }

    /// `slots` in this order: in place if they fit.
    fn from_vec(slots: Vec<Option<Entity>>) -> Self {
        if slots.len() <= INLINE {
            let mut items = [None; INLINE];
            items[..slots.len()].copy_from_slice(&slots);
            Slots::Inline { len: slots.len() as u8, items }
        } else {
            Slots::Heap(slots)
        }
    }

    /// Adds `slot` at the end.
    #[inline]
    fn push(&mut self, slot: Option<Entity>) {
        match self {
            Slots::Heap(slots) => slots.push(slot),
            Slots::Inline { len, items } if (*len as usize) < INLINE => {
                items[*len as usize] = slot;
                *len += 1;
            }
            Slots::Inline { .. } => self.spill(slot),
        }
    }

    /// [`push`](Self::push) onto full inline slots: they move to the heap,
    /// with room for as many again.
    #[cold]
    fn spill(&mut self, slot: Option<Entity>) {
        let mut slots = Vec::with_capacity(2 * INLINE);
        slots.extend_from_slice(self);
        slots.push(slot);
        *self = Slots::Heap(slots);
    }

    /// Takes the last slot out.
    #[inline]
    fn pop(&mut self) -> Option<Option<Entity>> {
        match self {
            Slots::Heap(slots) => slots.pop(),
            Slots::Inline { len: 0, .. } => None,
            Slots::Inline { len, items } => {
                *len -= 1;
                Some(std::mem::take(&mut items[*len as usize]))
            }
        }
    }

    /// Takes slot `at` out, shifting the ones after it.
    fn remove(&mut self, at: usize) -> Option<Entity> {
        match self {
            Slots::Heap(slots) => slots.remove(at),
            Slots::Inline { len, items } => {
                let n = *len as usize;
                assert!(at < n, "removal index (is {at}) should be < len (is {n})");
                let slot = items[at];
                items.copy_within(at + 1..n, at);
                items[n - 1] = None;
                *len -= 1;
                slot
            }
        }
    }

    /// Keeps the slots for which `keep` holds, in order.
    fn retain(&mut self, mut keep: impl FnMut(&Option<Entity>) -> bool) {
        match self {
            Slots::Heap(slots) => slots.retain(keep),
            Slots::Inline { len, items } => {
                let mut kept = 0;
                for at in 0..*len as usize {
                    let slot = items[at];
                    if keep(&slot) {
                        items[kept] = slot;
                        kept += 1;
                    }
                }
                items[kept..].fill(None);
                *len = kept as u8;
            }
        }
    }
}

impl std::ops::Deref for Slots {
    type Target = [Option<Entity>];

    #[inline]
    fn deref(&self) -> &[Option<Entity>] {
        match self {
            Slots::Inline { len, items } => &items[..*len as usize],
            Slots::Heap(slots) => slots,
        }
    }
}

impl std::ops::DerefMut for Slots {
    #[inline]
    fn deref_mut(&mut self) -> &mut [Option<Entity>] {
        match self {
            Slots::Inline { len, items } => &mut items[..*len as usize],
            Slots::Heap(slots) => slots,
        }
    }
}

/// Proof that the caller is the engine: it alone can build one, so the
/// hidden mutating entry points of [`RelationshipTarget`](crate::RelationshipTarget)
/// cannot be called from user code.
#[doc(hidden)]
#[derive(Clone, Copy)]
pub struct EngineAccess(());

impl EngineAccess {
    /// The engine's proof of access.
    pub(crate) const GRANTED: EngineAccess = EngineAccess(());
}

impl SourceList {
    /// An empty list.
    pub(crate) const fn new() -> Self {
        SourceList { slots: Slots::new(), head: 0, holes: 0, index: None }
    }

    /// A list of `source` alone, kept in place: a target's first source,
    /// whose siblings usually follow.
    pub(crate) fn with_first(source: Entity) -> Self {
        let mut items = [None; INLINE];
        items[0] = Some(source);
        SourceList { slots: Slots::Inline { len: 1, items }, head: 0, holes: 0, index: None }
    }

    /// A list of `sources` in this order, each kept once (the first time
    /// it appears).
    #[cfg_attr(not(feature = "serde"), allow(dead_code))]
    pub(crate) fn from_vec(sources: Vec<Entity>) -> Self {
        let mut seen = hashbrown::HashSet::with_capacity(sources.len());
        SourceList::from_unique(sources.into_iter().filter(|&source| seen.insert(source)).collect())
    }

    /// A list of `sources` in this order; the caller makes sure no entity
    /// is named twice.
    pub(crate) fn from_unique(sources: Vec<Entity>) -> Self {
        SourceList { slots: Slots::from_vec(sources.into_iter().map(Some).collect()), head: 0, holes: 0, index: None }
    }

    /// How many sources.
    #[inline]
    pub fn len(&self) -> usize {
        self.slots.len() - self.holes
    }

    /// Whether there are no sources.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// The sources in join order (double-ended, exact size).
    #[inline]
    pub fn iter(&self) -> SourceIter<'_> {
        SourceIter { slots: self.slots[self.head..].iter(), left: self.len() }
    }

    /// The first source to join that is still here.
    #[inline]
    pub fn first(&self) -> Option<&Entity> {
        self.slots.get(self.head).and_then(Option::as_ref)
    }

    /// The last source to join.
    #[inline]
    pub fn last(&self) -> Option<&Entity> {
        self.slots.last().and_then(Option::as_ref)
    }

    /// The `i`th source in join order, if there are more than `i`: O(1)
    /// on a list no source left from the middle, else a walk.
    #[inline]
    pub fn get(&self, i: usize) -> Option<&Entity> {
        if self.holes == 0 {
            self.slots.get(i).and_then(Option::as_ref)
        } else {
            self.iter().nth(i)
        }
    }

    /// Whether `source` is in the list; takes an `Entity` or a `&Entity`,
    /// as a slice's `contains` does.
    #[inline]
    pub fn contains(&self, source: impl Borrow<Entity>) -> bool {
        self.position(*source.borrow()).is_some()
    }

    /// The sources in join order, copied out.
    pub fn to_vec(&self) -> Vec<Entity> {
        self.iter().copied().collect()
    }

    /// The slot of `source`: the last slot first (a recursive despawn
    /// takes children last first), then the index or a short scan.
    fn position(&self, source: Entity) -> Option<usize> {
        let last = self.slots.len().checked_sub(1)?;
        if self.slots[last] == Some(source) {
            return Some(last);
        }
        match &self.index {
            Some(index) => index.get(&source).copied(),
            None => self.slots.iter().position(|&slot| slot == Some(source)),
        }
    }

    /// Where the source in slot `at` is: first, or just after which
    /// source. Walks back over at most [`PLACE_WALK`] holes, else the place
    /// is [`Place::Unknown`] (so a run of leaves inside a transaction stays
    /// amortized O(1)).
    fn place_at(&self, at: usize) -> Place {
        if at <= self.head {
            return Place::First;
        }
        match self.slots[self.head..at].iter().rev().take(PLACE_WALK).find_map(|&slot| slot) {
            Some(before) => Place::After(before),
            None if at - self.head <= PLACE_WALK => Place::First,
            None => Place::Unknown,
        }
    }

    /// Puts listed sources back where they were: `returns` holds each with
    /// its [`Place`] when it left, the latest to leave first, and each goes
    /// just after its place as the list then stood (so the ones that
    /// follow each other come back in order). A source whose place is gone
    /// or unknown goes at the end. One pass over the list: O(n + k).
    pub(crate) fn put_back(&mut self, returns: &[(Entity, Place)]) {
        let returning: HashSet<Entity> =
            returns.iter().map(|&(source, _)| source).filter(|&s| self.contains(s)).collect();
        if returning.is_empty() {
            return;
        }
        // Per anchor (`None`: the front), the sources put just after it,
        // in the order they were put back.
        let mut after: HashMap<Option<Entity>, Vec<Entity>> = HashMap::new();
        let mut at_end = Vec::new();
        let mut placed: HashSet<Entity> = HashSet::with_capacity(returning.len());
        for &(source, place) in returns {
            if !returning.contains(&source) || placed.contains(&source) {
                continue;
            }
            let anchor = match place {
                Place::First => Some(None),
                Place::After(a)
                    if a != source && (placed.contains(&a) || (!returning.contains(&a) && self.contains(a))) =>
                {
                    Some(Some(a))
                }
                _ => None,
            };
            match anchor {
                Some(anchor) => after.entry(anchor).or_default().push(source),
                None => at_end.push(source),
            }
            placed.insert(source);
        }
        // Each source, then what was put just after it, the latest first
        // (it went nearest); with a stack, not recursion, for long chains.
        let mut order = Vec::with_capacity(self.len());
        let mut stack: Vec<Entity> = Vec::new();
        let mut emit = |roots: &mut dyn Iterator<Item = Entity>, order: &mut Vec<Entity>| {
            for root in roots {
                stack.push(root);
                while let Some(source) = stack.pop() {
                    order.push(source);
                    if let Some(next) = after.get(&Some(source)) {
                        stack.extend(next.iter().copied());
                    }
                }
            }
        };
        let front: Vec<Entity> = after.get(&None).map_or(Vec::new(), |v| v.iter().rev().copied().collect());
        emit(&mut front.into_iter(), &mut order);
        let staying: Vec<Entity> = self.iter().copied().filter(|s| !returning.contains(s)).collect();
        emit(&mut staying.into_iter(), &mut order);
        emit(&mut at_end.into_iter(), &mut order);
        debug_assert_eq!(order.len(), self.len());
        self.slots = Slots::from_vec(order.into_iter().map(Some).collect());
        self.holes = 0;
        self.head = 0;
        self.reindex();
    }

    /// Adds `source` at the end. The caller makes sure it is not listed.
    #[inline]
    pub(crate) fn push(&mut self, source: Entity) {
        self.slots.push(Some(source));
        if let Some(index) = &mut self.index {
            index.insert(source, self.slots.len() - 1);
        }
    }

    /// Builds the index of a long list that has none, so that `contains`
    /// is O(1) for a run of lookups.
    pub(crate) fn ensure_index(&mut self) {
        if self.index.is_none() && self.slots.len() >= INDEXED_FROM {
            self.build_index();
        }
    }

    /// Takes `source` out, keeping the others' order; whether it was
    /// listed. Amortized O(1).
    #[cfg(test)]
    pub(crate) fn remove(&mut self, source: Entity) -> bool {
        self.remove_placed(source).is_some()
    }

    /// Takes `source` out, keeping the others' order, and says where it was
    /// (see [`place_at`](Self::place_at)); `None` if it was not listed.
    /// Amortized O(1).
    pub(crate) fn remove_placed(&mut self, source: Entity) -> Option<Place> {
        if self.slots.last() != Some(&Some(source)) {
            self.ensure_index();
        }
        let at = self.position(source)?;
        let place = self.place_at(at);
        self.remove_at(at, source);
        Some(place)
    }

    /// Takes the source in slot `at` out.
    fn remove_at(&mut self, at: usize, source: Entity) {
        let Some(index) = &mut self.index else {
            // Short: shift, no holes.
            self.slots.remove(at);
            return;
        };
        index.remove(&source);
        if at + 1 == self.slots.len() {
            self.slots.pop();
            while let Some(None) = self.slots.last() {
                self.slots.pop();
                self.holes -= 1;
            }
            if self.slots.is_empty() {
                self.head = 0;
            }
        } else {
            self.slots[at] = None;
            self.holes += 1;
            if at == self.head {
                while self.slots[self.head].is_none() {
                    self.head += 1;
                }
            }
        }
        if self.holes * 2 > self.slots.len() {
            self.compact();
        }
    }

    /// Keeps the sources for which `keep` holds, in order. O(length).
    pub(crate) fn retain(&mut self, mut keep: impl FnMut(Entity) -> bool) {
        let len = self.len();
        self.slots.retain(|slot| slot.is_some_and(&mut keep));
        if self.slots.len() != len || self.holes != 0 {
            self.holes = 0;
            self.head = 0;
            self.reindex();
        }
    }

    /// Removes the holes, in one pass.
    fn compact(&mut self) {
        self.slots.retain(Option::is_some);
        self.holes = 0;
        self.head = 0;
        self.reindex();
    }

    /// Rebuilds (or drops) the index after the slots moved.
    fn reindex(&mut self) {
        if self.slots.len() < UNINDEXED_BELOW {
            self.index = None;
        } else if self.index.is_some() {
            self.build_index();
        }
    }

    fn build_index(&mut self) {
        let index = self.index.get_or_insert_with(Box::default);
        index.clear();
        index.reserve(self.slots.len());
        index.extend(self.slots.iter().enumerate().filter_map(|(at, slot)| slot.map(|source| (source, at))));
    }

    /// Checks the list's own bookkeeping (for `check_invariants`): the
    /// hole count, the first source, the index, no source twice.
    pub(crate) fn check(&self) -> Result<(), String> {
        let holes = self.slots.iter().filter(|slot| slot.is_none()).count();
        if holes != self.holes {
            return Err(format!("a list of sources counts {} holes but has {holes}", self.holes));
        }
        if self.slots.last().is_some_and(Option::is_none) {
            return Err("a list of sources ends in a hole".into());
        }
        if self.slots[..self.head].iter().any(Option::is_some) || self.slots.get(self.head).is_some_and(Option::is_none)
        {
            return Err("a list of sources has a wrong first source".into());
        }
        if holes != 0 && self.index.is_none() {
            return Err("a list of sources has holes but no index".into());
        }
        let mut seen = hashbrown::HashSet::with_capacity(self.len());
        for (at, slot) in self.slots.iter().enumerate() {
            let Some(source) = *slot else { continue };
            if !seen.insert(source) {
                return Err(format!("a list of sources names {source} twice"));
            }
            if let Some(index) = &self.index
                && index.get(&source) != Some(&at)
            {
                return Err(format!("a list of sources indexes {source} at the wrong slot"));
            }
        }
        if let Some(index) = &self.index
            && index.len() != seen.len()
        {
            return Err("a list of sources indexes entities it does not list".into());
        }
        Ok(())
    }
}

impl Default for SourceList {
    /// An empty list.
    fn default() -> Self {
        SourceList::new()
    }
}

impl Clone for SourceList {
    fn clone(&self) -> Self {
        SourceList::from_unique(self.to_vec())
    }
}

impl fmt::Debug for SourceList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl PartialEq for SourceList {
    fn eq(&self, other: &SourceList) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl Eq for SourceList {}

impl PartialEq<[Entity]> for SourceList {
    fn eq(&self, other: &[Entity]) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl PartialEq<&[Entity]> for SourceList {
    fn eq(&self, other: &&[Entity]) -> bool {
        *self == **other
    }
}

impl<const N: usize> PartialEq<[Entity; N]> for SourceList {
    fn eq(&self, other: &[Entity; N]) -> bool {
        *self == other[..]
    }
}

impl PartialEq<Vec<Entity>> for SourceList {
    fn eq(&self, other: &Vec<Entity>) -> bool {
        *self == other[..]
    }
}

impl PartialEq<[Entity]> for &SourceList {
    fn eq(&self, other: &[Entity]) -> bool {
        **self == *other
    }
}

impl<const N: usize> PartialEq<[Entity; N]> for &SourceList {
    fn eq(&self, other: &[Entity; N]) -> bool {
        **self == other[..]
    }
}

impl PartialEq<Vec<Entity>> for &SourceList {
    fn eq(&self, other: &Vec<Entity>) -> bool {
        **self == other[..]
    }
}

/// Reverse comparisons, so that `[a, b] == *list` reads as it does with a
/// slice.
macro_rules! equal_the_other_way {
    ($($other:ty),*) => {$(
        impl PartialEq<SourceList> for $other {
            fn eq(&self, list: &SourceList) -> bool {
                *list == self[..]
            }
        }

        impl PartialEq<&SourceList> for $other {
            fn eq(&self, list: &&SourceList) -> bool {
                **list == self[..]
            }
        }
    )*};
}

equal_the_other_way!([Entity], Vec<Entity>);

// `&[Entity] == &SourceList` is the standard library's, through `[Entity]`.
impl PartialEq<SourceList> for &[Entity] {
    fn eq(&self, list: &SourceList) -> bool {
        *list == self[..]
    }
}

impl<const N: usize> PartialEq<SourceList> for [Entity; N] {
    fn eq(&self, list: &SourceList) -> bool {
        *list == self[..]
    }
}

impl<const N: usize> PartialEq<&SourceList> for [Entity; N] {
    fn eq(&self, list: &&SourceList) -> bool {
        **list == self[..]
    }
}

/// `list[i]`: the `i`th source in join order, as [`SourceList::get`].
///
/// # Panics
/// If the list has `i` sources or fewer, as a slice does.
impl Index<usize> for SourceList {
    type Output = Entity;

    #[track_caller]
    fn index(&self, i: usize) -> &Entity {
        match self.get(i) {
            Some(source) => source,
            None => panic!("index out of bounds: the len is {} but the index is {i}", self.len()),
        }
    }
}

impl<'a> IntoIterator for &'a SourceList {
    type Item = &'a Entity;
    type IntoIter = SourceIter<'a>;

    fn into_iter(self) -> SourceIter<'a> {
        self.iter()
    }
}

/// The sources of a [`SourceList`] in join order, from [`SourceList::iter`].
#[derive(Clone)]
pub struct SourceIter<'a> {
    slots: std::slice::Iter<'a, Option<Entity>>,
    left: usize,
}

impl<'a> Iterator for SourceIter<'a> {
    type Item = &'a Entity;

    #[inline]
    fn next(&mut self) -> Option<&'a Entity> {
        let source = self.slots.by_ref().flatten().next()?;
        self.left -= 1;
        Some(source)
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl DoubleEndedIterator for SourceIter<'_> {
    #[inline]
    fn next_back(&mut self) -> Option<Self::Item> {
        while let Some(slot) = self.slots.next_back() {
            if let Some(source) = slot {
                self.left -= 1;
                return Some(source);
            }
        }
        None
    }
}

impl ExactSizeIterator for SourceIter<'_> {}

impl std::iter::FusedIterator for SourceIter<'_> {}

impl fmt::Debug for SourceIter<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.clone()).finish()
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for SourceList {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for SourceList {
    /// Reads a list of entities; an entity named twice is kept once.
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Vec::<Entity>::deserialize(deserializer).map(SourceList::from_vec)
    }
}

#[cfg(test)]
mod tests {
    use std::num::NonZeroU32;

    use super::*;

    fn e(i: u32) -> Entity {
        Entity::new(i, NonZeroU32::MIN)
    }

    #[test]
    fn order_kept_through_holes_compaction_and_index_changes() {
        let mut list = SourceList::new();
        let mut model: Vec<Entity> = Vec::new();
        // A deterministic mix of pushes and removals from the front,
        // middle and end, across the index threshold both ways.
        let mut next = 0u32;
        let mut state = 12345u64;
        for step in 0..20_000 {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let grow = (step / 2000) % 2 == 0;
            let push = model.is_empty() || (state >> 33) % 100 < if grow { 65 } else { 35 };
            if push {
                list.push(e(next));
                model.push(e(next));
                next += 1;
            } else {
                let at = match (state >> 20) % 4 {
                    0 => 0,
                    1 => model.len() - 1,
                    _ => (state >> 40) as usize % model.len(),
                };
                let gone = model.remove(at);
                assert!(list.remove(gone));
                assert!(!list.remove(gone), "step {step}: removed twice");
            }
            assert_eq!(list, model, "step {step}");
            assert_eq!(list.len(), model.len());
            assert_eq!(list.first(), model.first());
            assert_eq!(list.last(), model.last());
            let at = step % (model.len() + 1);
            assert_eq!(list.get(at), model.get(at));
            assert_eq!(list.iter().rev().count(), model.len());
            if step % 97 == 0 {
                list.check().unwrap();
                for &source in &model {
                    assert!(list.contains(source));
                }
                assert!(!list.contains(e(next)));
            }
        }
        list.retain(|s| s.index() % 3 == 0);
        model.retain(|s| s.index() % 3 == 0);
        assert_eq!(list, model);
        list.check().unwrap();
    }

    #[test]
    fn short_lists_kept_in_place_behave_as_long_ones_across_the_boundary() {
        // Lists of up to `INLINE` slots live in place; the fifth push moves
        // them to the heap. Each operation is checked on both sides.
        let mut list = SourceList::with_first(e(0));
        assert!(matches!(list.slots, Slots::Inline { len: 1, .. }));
        for i in 1..INLINE as u32 {
            list.push(e(i));
        }
        assert!(matches!(list.slots, Slots::Inline { len: 4, .. }));
        assert_eq!(list, [e(0), e(1), e(2), e(3)]);
        // Removal from the middle of an inline list shifts the rest.
        assert!(list.remove(e(1)));
        assert_eq!(list, [e(0), e(2), e(3)]);
        assert_eq!((list.first(), list.last(), list.get(1)), (Some(&e(0)), Some(&e(3)), Some(&e(2))));
        list.push(e(4));
        list.push(e(5));
        assert!(matches!(list.slots, Slots::Heap(_)), "the fifth source moves the list to the heap");
        assert_eq!(list, [e(0), e(2), e(3), e(4), e(5)]);
        assert!(list.remove(e(5)));
        assert!(list.remove(e(0)));
        assert!(!list.remove(e(0)));
        assert_eq!(list, [e(2), e(3), e(4)]);
        list.check().unwrap();
        // Retain and removals from the end of an inline list.
        let mut short = SourceList::from_unique(vec![e(7), e(8), e(9)]);
        assert!(matches!(short.slots, Slots::Inline { len: 3, .. }));
        short.retain(|s| s != e(8));
        assert_eq!(short, [e(7), e(9)]);
        assert!(short.remove(e(9)));
        assert!(short.remove(e(7)));
        assert!(short.is_empty());
        assert_eq!(short.last(), None);
        short.push(e(6));
        assert_eq!(short, [e(6)]);
        short.check().unwrap();
        // Putting back rebuilds the slots, in place when they fit.
        let mut back = SourceList::from_unique(vec![e(1), e(3)]);
        back.push(e(2));
        back.put_back(&[(e(2), Place::After(e(1)))]);
        assert_eq!(back, [e(1), e(2), e(3)]);
        assert!(matches!(back.slots, Slots::Inline { len: 3, .. }));
    }

    #[test]
    fn from_vec_keeps_the_first_of_each_entity() {
        let list = SourceList::from_vec(vec![e(1), e(2), e(1), e(3), e(2)]);
        assert_eq!(list, [e(1), e(2), e(3)]);
        list.check().unwrap();
        assert_eq!(list.clone(), list);
        assert_eq!(format!("{list:?}"), format!("{:?}", [e(1), e(2), e(3)]));
    }

    #[test]
    fn leaving_half_of_a_wide_list_touches_a_bounded_number_of_slots() {
        // Work is counted as slots compacted: amortized O(1) per removal
        // means at most a small multiple of the removals.
        let n = 100_000u32;
        let mut list = SourceList::new();
        for i in 0..n {
            list.push(e(i));
        }
        let mut moved = 0;
        for i in (0..n).step_by(2) {
            let before = list.slots.len();
            list.remove(e(i));
            if list.holes == 0 {
                moved += before;
            }
        }
        for i in (1..n).step_by(2) {
            let before = list.slots.len();
            list.remove(e(i));
            if list.holes == 0 {
                moved += before;
            }
        }
        assert!(list.is_empty());
        assert!(moved <= 4 * n as usize, "{moved} slots moved for {n} removals");
    }
}
