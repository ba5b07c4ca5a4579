//! The component types of the model harness: one per layout or drop
//! behaviour worth testing, each value carrying a serial number, and the
//! counters that see every value made and dropped.

use std::any::type_name;
use std::cell::{Cell, RefCell};
use std::collections::BTreeSet;

use archetable::prelude::*;

/// The component types of the model, one per layout or drop behaviour worth
/// testing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// Zero-sized, no destructor.
    Marker,
    /// Zero-sized, with a destructor.
    Ghost,
    /// Its destructor panics once armed. Early in the order, so that a
    /// bundle overwriting it has values after it to drop.
    Bomb,
    /// 4 bytes, no destructor.
    Small,
    /// 6 bytes, alignment 2, no destructor.
    Odd,
    /// 16 bytes, with a destructor.
    Pair,
    /// Owns a heap allocation.
    Heap,
    /// Every value recorded in a ledger, so a double drop or a leak of one
    /// particular value shows.
    Tracked,
    /// Aligned to 64 bytes.
    Aligned,
    /// 256 bytes.
    Big,
}

/// Every kind, in order; bit `i` of a [`Shape`] is `KINDS[i]`.
pub const KINDS: [Kind; 10] = [
    Kind::Marker,
    Kind::Ghost,
    Kind::Bomb,
    Kind::Small,
    Kind::Odd,
    Kind::Pair,
    Kind::Heap,
    Kind::Tracked,
    Kind::Aligned,
    Kind::Big,
];

/// Runs `$body` with `$T` naming the component type of `$kind`.
macro_rules! with_kind {
    ($kind:expr, $T:ident => $body:expr) => {
        match $kind {
            Kind::Marker => {
                type $T = Marker;
                $body
            }
            Kind::Ghost => {
                type $T = Ghost;
                $body
            }
            Kind::Small => {
                type $T = Small;
                $body
            }
            Kind::Odd => {
                type $T = Odd;
                $body
            }
            Kind::Pair => {
                type $T = Pair;
                $body
            }
            Kind::Heap => {
                type $T = Heap;
                $body
            }
            Kind::Tracked => {
                type $T = Tracked;
                $body
            }
            Kind::Aligned => {
                type $T = Aligned;
                $body
            }
            Kind::Big => {
                type $T = Big;
                $body
            }
            Kind::Bomb => {
                type $T = Bomb;
                $body
            }
        }
    };
}
pub(crate) use with_kind;

impl Kind {
    pub fn bit(self) -> u16 {
        1 << self as u16
    }

    /// Whether values of this kind are zero-sized (they have no value to
    /// compare, only presence).
    pub fn is_zero_sized(self) -> bool {
        matches!(self, Kind::Marker | Kind::Ghost)
    }

    /// The Rust type's name, as the world's errors report it.
    pub fn type_name(self) -> &'static str {
        with_kind!(self, T => type_name::<T>())
    }
}

thread_local! {
    /// Live values per kind: constructors add one, destructors take one away.
    pub static LIVE: RefCell<[i64; 10]> = const { RefCell::new([0; 10]) };
    /// The serials of the live `Tracked` values.
    pub static LEDGER: RefCell<BTreeSet<u64>> = const { RefCell::new(BTreeSet::new()) };
    /// What destructors saw go wrong (a value dropped twice, say); checked
    /// after every step.
    pub static FAULTS: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
    /// Set while a panic the model predicted may happen: the panic hook
    /// stays quiet.
    pub static EXPECTING_PANIC: Cell<bool> = const { Cell::new(false) };
    /// Serials continue across harnesses on one thread, so the ledger never
    /// confuses two runs' values.
    pub static NEXT_SERIAL: Cell<u64> = const { Cell::new(1) };
}

pub fn live_counts() -> [i64; 10] {
    LIVE.with(|l| *l.borrow())
}

pub fn fault(message: String) {
    let _ = FAULTS.try_with(|f| f.borrow_mut().push(message));
}

/// Counts the live values of kind `K`: a zero-sized field of every kind
/// with a destructor.
pub struct Token<const K: usize>(());

impl<const K: usize> Token<K> {
    fn new() -> Self {
        LIVE.with(|l| l.borrow_mut()[K] += 1);
        Token(())
    }
}

impl<const K: usize> Drop for Token<K> {
    fn drop(&mut self) {
        let _ = LIVE.try_with(|l| l.borrow_mut()[K] -= 1);
    }
}

#[derive(Component)]
pub struct Marker;

/// In sparse storage, as are `Pair` and `Bomb`: the model runs every op over
/// entities whose components are split between tables and sparse sets.
#[derive(Component)]
#[component(storage = "sparse")]
pub struct Ghost(Token<1>);

#[derive(Component)]
pub struct Small(pub u32);

#[derive(Component)]
pub struct Odd([u16; 3]);

#[derive(Component)]
#[component(storage = "sparse")]
pub struct Pair(u64, u64, Token<5>);

#[derive(Component)]
pub struct Heap(String, Token<6>);

#[derive(Component)]
pub struct Tracked(u64, Token<7>);

impl Tracked {
    fn new(serial: u64) -> Self {
        if !LEDGER.with(|l| l.borrow_mut().insert(serial)) {
            fault(format!("tracked serial {serial} made twice"));
        }
        Tracked(serial, Token::new())
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        if !LEDGER.try_with(|l| l.borrow_mut().remove(&self.0)).unwrap_or(true) {
            fault(format!("tracked value {} dropped twice (or never made)", self.0));
        }
    }
}

#[derive(Component)]
#[repr(align(64))]
pub struct Aligned(u64, Token<8>);

#[derive(Component)]
pub struct Big([u64; 32], Token<9>);

#[derive(Component)]
#[component(storage = "sparse")]
pub struct Bomb {
    pub serial: u64,
    pub armed: bool,
    _token: Token<2>,
}

/// What a bomb's destructor says when it goes off.
pub const BOMB: &str = "bomb exploded";
/// What a bundle source says when it panics mid-construction.
pub const CONSTRUCTION: &str = "bundle construction panicked";
/// What a query loop says when it panics.
pub const QUERY_LOOP: &str = "query loop panicked";
/// The world's message when no entity index is left.
pub const EXHAUSTED: &str = "entity index space exhausted";

impl Drop for Bomb {
    fn drop(&mut self) {
        if self.armed && !std::thread::panicking() {
            panic!("{BOMB}: bomb {}", self.serial);
        }
    }
}

/// A value that cannot have come from its serial.
pub const CORRUPT: u64 = u64::MAX;

/// What the harness needs of each component type.
pub trait Comp: Component + archetable::MutableComponent + Sized {
    const KIND: Kind;
    /// A new value carrying `serial`.
    fn make(serial: u64) -> Self;
    /// The serial the value carries (`CORRUPT` if its parts disagree), or
    /// `None` for zero-sized kinds.
    fn value(&self) -> Option<u64>;
    /// Changes the value in place to carry `serial`.
    fn set(&mut self, serial: u64);
}

impl Comp for Marker {
    const KIND: Kind = Kind::Marker;
    fn make(_: u64) -> Self {
        Marker
    }
    fn value(&self) -> Option<u64> {
        None
    }
    fn set(&mut self, _: u64) {}
}

impl Comp for Ghost {
    const KIND: Kind = Kind::Ghost;
    fn make(_: u64) -> Self {
        Ghost(Token::new())
    }
    fn value(&self) -> Option<u64> {
        None
    }
    fn set(&mut self, _: u64) {}
}

impl Comp for Small {
    const KIND: Kind = Kind::Small;
    fn make(serial: u64) -> Self {
        Small(serial as u32)
    }
    fn value(&self) -> Option<u64> {
        Some(u64::from(self.0))
    }
    fn set(&mut self, serial: u64) {
        self.0 = serial as u32;
    }
}

impl Comp for Odd {
    const KIND: Kind = Kind::Odd;
    fn make(serial: u64) -> Self {
        Odd([serial as u16, (serial >> 16) as u16, (serial >> 32) as u16])
    }
    fn value(&self) -> Option<u64> {
        Some(u64::from(self.0[0]) | u64::from(self.0[1]) << 16 | u64::from(self.0[2]) << 32)
    }
    fn set(&mut self, serial: u64) {
        self.0 = Odd::make(serial).0;
    }
}

impl Comp for Pair {
    const KIND: Kind = Kind::Pair;
    fn make(serial: u64) -> Self {
        Pair(serial, !serial, Token::new())
    }
    fn value(&self) -> Option<u64> {
        Some(if self.1 == !self.0 { self.0 } else { CORRUPT })
    }
    fn set(&mut self, serial: u64) {
        (self.0, self.1) = (serial, !serial);
    }
}

impl Comp for Heap {
    const KIND: Kind = Kind::Heap;
    fn make(serial: u64) -> Self {
        Heap(format!("heap value {serial}"), Token::new())
    }
    fn value(&self) -> Option<u64> {
        Some(self.0.strip_prefix("heap value ").and_then(|s| s.parse().ok()).unwrap_or(CORRUPT))
    }
    fn set(&mut self, serial: u64) {
        self.0.clear();
        self.0.push_str(&format!("heap value {serial}"));
    }
}

impl Comp for Tracked {
    const KIND: Kind = Kind::Tracked;
    fn make(serial: u64) -> Self {
        Tracked::new(serial)
    }
    fn value(&self) -> Option<u64> {
        Some(self.0)
    }
    fn set(&mut self, serial: u64) {
        LEDGER.with(|l| {
            let mut l = l.borrow_mut();
            if !l.remove(&self.0) || !l.insert(serial) {
                fault(format!("tracked value {} changed to {serial}: ledger out of step", self.0));
            }
        });
        self.0 = serial;
    }
}

impl Comp for Aligned {
    const KIND: Kind = Kind::Aligned;
    fn make(serial: u64) -> Self {
        Aligned(serial, Token::new())
    }
    fn value(&self) -> Option<u64> {
        Some(self.0)
    }
    fn set(&mut self, serial: u64) {
        self.0 = serial;
    }
}

impl Comp for Big {
    const KIND: Kind = Kind::Big;
    fn make(serial: u64) -> Self {
        Big(Big::make_array(serial), Token::new())
    }
    fn value(&self) -> Option<u64> {
        let serial = self.0[0];
        Some(if self.0 == Big::make_array(serial) { serial } else { CORRUPT })
    }
    fn set(&mut self, serial: u64) {
        self.0 = Big::make_array(serial);
    }
}

impl Big {
    fn make_array(serial: u64) -> [u64; 32] {
        std::array::from_fn(|i| serial.wrapping_add(i as u64 * 0x1_0000_0001))
    }
}

impl Comp for Bomb {
    const KIND: Kind = Kind::Bomb;
    fn make(serial: u64) -> Self {
        Bomb { serial, armed: false, _token: Token::new() }
    }
    fn value(&self) -> Option<u64> {
        Some(self.serial)
    }
    fn set(&mut self, serial: u64) {
        self.serial = serial;
    }
}
