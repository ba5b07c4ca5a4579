//! The operations of the model harness, and the decoder that turns a
//! fuzzer's bytes into them.

use std::collections::BTreeMap;
use std::fmt;

use super::components::{Kind, KINDS};

/// The most kinds in one bundle. Every shape is its own static bundle type,
/// and their number (176 with three of ten kinds) is what the test costs to
/// compile; entities get more components through further inserts.
pub const MAX_BUNDLE: usize = 3;

/// A set of kinds: bit `i` is `KINDS[i]`. Bundles list their kinds in this
/// order.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Shape(pub u16);

impl Shape {
    pub fn from_bools(bits: [bool; 10]) -> Self {
        Shape(bits.iter().enumerate().map(|(i, &b)| u16::from(b) << i).sum())
    }

    pub fn of(kinds: impl IntoIterator<Item = Kind>) -> Self {
        Shape(kinds.into_iter().fold(0, |bits, k| bits | k.bit()))
    }

    pub fn has(self, kind: Kind) -> bool {
        self.0 & kind.bit() != 0
    }

    pub fn kinds(self) -> impl Iterator<Item = Kind> {
        KINDS.into_iter().filter(move |&k| self.has(k))
    }
}

impl fmt::Debug for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.kinds()).finish()
    }
}

/// Which entity handle an op uses.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// The `n`-th most recently issued handle (0 is the newest), counted
    /// modulo the number issued: alive or stale.
    Recent(u16),
    /// A handle made up from bits: usually stale or never issued, sometimes
    /// equal to a live one.
    Forged { index: u8, generation: u8 },
    /// The `n`-th most recently issued handle that is still alive, counted
    /// modulo the number alive; `Recent(n)` when none is. Lets a few
    /// `set_parent`s in a row build a deep tree.
    Live(u16),
}

impl fmt::Debug for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Target::Recent(n) => write!(f, "Recent({n})"),
            Target::Forged { index, generation } => write!(f, "Forged({index}v{})", u32::from(generation) + 1),
            Target::Live(n) => write!(f, "Live({n})"),
        }
    }
}

/// The kinds a two-kind filter takes second. Every pair of kinds would be
/// 200 more filter types to compile; one of each sort (a marker, a kind
/// with a destructor, a large value) against every first kind finds the
/// same bugs.
pub const PARTNERS: [Kind; 3] = [Kind::Marker, Kind::Ghost, Kind::Big];

/// A query filter over the kinds; the second kind of `Or` and
/// `WithWithout` is one of [`PARTNERS`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Filter {
    All,
    With(Kind),
    Without(Kind),
    Or(Kind, Kind),
    WithWithout(Kind, Kind),
}

impl Filter {
    pub fn passes(self, kinds: &BTreeMap<Kind, u64>) -> bool {
        let has = |k| kinds.contains_key(&k);
        match self {
            Filter::All => true,
            Filter::With(k) => has(k),
            Filter::Without(k) => !has(k),
            Filter::Or(a, b) => has(a) || has(b),
            Filter::WithWithout(a, b) => has(a) && !has(b),
        }
    }
}

/// One step of a test.
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// `spawn` with a bundle of these kinds.
    Spawn(Shape),
    /// `despawn`.
    Despawn(Target),
    /// `insert` of a bundle: new components and overwrites.
    Insert(Target, Shape),
    /// `remove` of a bundle; the returned values are checked, then dropped.
    Remove(Target, Shape),
    /// `spawn_batch` of `count` bundles, from an iterator of exact size or
    /// of unknown size.
    SpawnBatch { shape: Shape, count: u8, exact: bool },
    /// `spawn_batch` whose bundle source panics while building bundle `at`,
    /// after making `after` of its components.
    SpawnBatchPanic { shape: Shape, count: u8, at: u8, after: u8 },
    /// `get_mut`, then a new value assigned over the old one.
    Replace(Target, Kind),
    /// `query_one_mut`, then the value changed in place.
    Mutate(Target, Kind),
    /// Arms the entity's `Bomb`, or inserts an armed one: its destructor
    /// will panic (one armed bomb at a time; otherwise a no-op).
    Arm(Target),
    /// A mutable filtered query that writes every `Small` (and `Odd`) it
    /// visits.
    QueryWrite(Filter),
    /// A mutable query loop that writes `after` values, then panics.
    QueryPanic { after: u8 },
    /// Counts, sums and entity sets of a filtered query, one-off and
    /// through a fresh `QueryState`.
    QueryCheck(Filter),
    /// `clear`.
    Clear,
    /// Moves the next generation of every free slot to `u32::MAX - left`
    /// (test hook), so that slots retire soon.
    AgeFreeSlots(u8),
    /// Ends the index space `extra` slots past the ones in use (test hook).
    LimitSlots(u8),
    /// `set_parent(child, parent)`, its result (or refusal) predicted.
    SetParent(Target, Target),
    /// `remove_parent`.
    RemoveParent(Target),
    /// `despawn_recursive`, its count predicted.
    DespawnRecursive(Target),
}

/// Reads ops out of arbitrary bytes; past the end every byte reads as zero.
struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn byte(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&b, rest)) => {
                self.0 = rest;
                b
            }
            None => 0,
        }
    }

    fn kind(&mut self) -> Kind {
        KINDS[usize::from(self.byte()) % KINDS.len()]
    }

    fn partner(&mut self) -> Kind {
        PARTNERS[usize::from(self.byte()) % PARTNERS.len()]
    }

    fn shape(&mut self) -> Shape {
        let n = usize::from(self.byte()) % (MAX_BUNDLE + 1);
        Shape::of((0..n).map(|_| self.kind()))
    }

    fn target(&mut self) -> Target {
        let b = self.byte();
        if b >= 0xF0 {
            Target::Forged { index: b & 0x7, generation: self.byte() % 4 }
        } else {
            Target::Recent(u16::from(b % 32))
        }
    }

    fn filter(&mut self) -> Filter {
        match self.byte() % 5 {
            0 => Filter::All,
            1 => Filter::With(self.kind()),
            2 => Filter::Without(self.kind()),
            3 => Filter::Or(self.kind(), self.partner()),
            _ => Filter::WithWithout(self.kind(), self.partner()),
        }
    }

    fn op(&mut self) -> Op {
        // Bytes below 224 mean what they meant before the hierarchy ops
        // existed (the op is the byte modulo 32), so old inputs mostly
        // decode as they did; the top 32 byte values are the hierarchy ops.
        let b = self.byte();
        match b {
            224..=233 => return Op::SetParent(self.target(), self.target()),
            234..=243 => {
                let n = u16::from(self.byte() % 4);
                return Op::SetParent(Target::Live(n), Target::Live(n + 1));
            }
            244..=249 => return Op::RemoveParent(self.target()),
            250..=255 => return Op::DespawnRecursive(self.target()),
            _ => {}
        }
        match b % 32 {
            0..=6 => Op::Spawn(self.shape()),
            7..=9 => Op::Despawn(self.target()),
            10..=13 => Op::Insert(self.target(), self.shape()),
            14..=16 => Op::Remove(self.target(), self.shape()),
            17 | 18 => {
                Op::SpawnBatch { shape: self.shape(), count: self.byte() % 24, exact: self.byte().is_multiple_of(2) }
            }
            19 => Op::SpawnBatchPanic {
                shape: self.shape(),
                count: self.byte() % 24,
                at: self.byte() % 24,
                after: self.byte() % 11,
            },
            20 | 21 => Op::Replace(self.target(), self.kind()),
            22 | 23 => Op::Mutate(self.target(), self.kind()),
            24 => Op::Arm(self.target()),
            25 => Op::QueryWrite(self.filter()),
            26 => Op::QueryPanic { after: self.byte() % 16 },
            27 | 28 => Op::QueryCheck(self.filter()),
            29 => Op::Clear,
            30 => Op::AgeFreeSlots(self.byte() % 4),
            _ => Op::LimitSlots(self.byte() % 16),
        }
    }
}

/// Decodes a fuzzer's bytes into at most 256 ops.
pub fn decode(bytes: &[u8]) -> Vec<Op> {
    let mut reader = Reader(bytes);
    let mut ops = Vec::new();
    while !reader.0.is_empty() && ops.len() < 256 {
        ops.push(reader.op());
    }
    ops
}
