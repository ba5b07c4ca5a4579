//! A growable set of small integers, one bit each: an archetype's component
//! signature, and the read and write sets of a query's access.

/// A set of `usize` values stored as bits; grows as needed, never limited.
#[derive(Clone, Default, PartialEq, Eq, Hash, Debug)]
pub struct BitSet {
    words: Vec<u64>,
}

impl BitSet {
    /// An empty set.
    pub const fn new() -> Self {
        BitSet { words: Vec::new() }
    }

    /// Adds `bit`; returns whether it was absent.
    pub fn insert(&mut self, bit: usize) -> bool {
        let (word, mask) = (bit / 64, 1u64 << (bit % 64));
        if word >= self.words.len() {
            self.words.resize(word + 1, 0);
        }
        let absent = self.words[word] & mask == 0;
        self.words[word] |= mask;
        absent
    }

    /// Whether `bit` is in the set.
    #[inline]
    pub fn contains(&self, bit: usize) -> bool {
        self.words.get(bit / 64).is_some_and(|w| w & (1u64 << (bit % 64)) != 0)
    }

    /// Whether the two sets share a value.
    pub fn intersects(&self, other: &BitSet) -> bool {
        self.words.iter().zip(&other.words).any(|(a, b)| a & b != 0)
    }

    /// The values in both sets, in increasing order.
    pub fn intersection<'a>(&'a self, other: &'a BitSet) -> impl Iterator<Item = usize> + 'a {
        self.words.iter().zip(&other.words).enumerate().flat_map(|(i, (a, b))| Bits(a & b).map(move |bit| i * 64 + bit))
    }

    /// Adds every value of `other`.
    pub fn union_with(&mut self, other: &BitSet) {
        if other.words.len() > self.words.len() {
            self.words.resize(other.words.len(), 0);
        }
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a |= b;
        }
    }

    /// Keeps only the values also in `other`.
    pub fn intersect_with(&mut self, other: &BitSet) {
        for (i, a) in self.words.iter_mut().enumerate() {
            *a &= other.words.get(i).copied().unwrap_or(0);
        }
    }

    /// The values, in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.words.iter().enumerate().flat_map(|(i, &w)| Bits(w).map(move |bit| i * 64 + bit))
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }
}

/// The set bits of one word, lowest first.
struct Bits(u64);

impl Iterator for Bits {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        if self.0 == 0 {
            return None;
        }
        let bit = self.0.trailing_zeros() as usize;
        self.0 &= self.0 - 1;
        Some(bit)
    }
}

#[cfg(test)]
mod tests {
    use super::BitSet;

    #[test]
    fn insert_contains_and_iterate_across_words() {
        let mut set = BitSet::new();
        for bit in [0, 63, 64, 200, 5] {
            assert!(set.insert(bit));
        }
        assert!(!set.insert(64));
        assert!(set.contains(200) && set.contains(0) && !set.contains(199));
        assert!(!set.contains(100_000));
        assert_eq!(set.iter().collect::<Vec<_>>(), [0, 5, 63, 64, 200]);
    }

    #[test]
    fn intersection_and_union() {
        let mut a = BitSet::new();
        let mut b = BitSet::new();
        for x in [1, 70, 130] {
            a.insert(x);
        }
        for x in [70, 130, 131] {
            b.insert(x);
        }
        assert!(a.intersects(&b));
        assert_eq!(a.intersection(&b).collect::<Vec<_>>(), [70, 130]);
        a.union_with(&b);
        assert_eq!(a.iter().collect::<Vec<_>>(), [1, 70, 130, 131]);
        assert!(!BitSet::new().intersects(&a));
        assert!(BitSet::new().is_empty());
    }
}
