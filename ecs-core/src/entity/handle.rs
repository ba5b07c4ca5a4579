//! The entity handle: an index into the world's entity table and the
//! generation of that slot, 8 bytes, `Copy`. The allocator that hands
//! handles out is in `allocator.rs`.

use std::fmt;
use std::num::NonZeroU32;

/// A handle to an entity: an index into the world's entity table plus the
/// generation of that slot when the entity was spawned.
///
/// Handles are `Copy` and 8 bytes (`Option<Entity>` too). When an entity is
/// despawned its slot's generation moves on, so every handle to it becomes
/// stale: the world reports a stale handle as missing and never confuses it
/// with the entity that later reuses the slot.
///
/// ```
/// # use archetable::{Component, World};
/// # #[derive(Component)] struct Hp(u32);
/// let mut world = World::new();
/// let e = world.spawn(Hp(3));
/// world.despawn(e).unwrap();
/// let f = world.spawn(Hp(7));
/// assert_eq!(e.index(), f.index());
/// assert!(!world.contains(e));
/// assert_eq!(world.get::<Hp>(f).map(|hp| hp.0), Some(7));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Entity {
    // Field order makes the derived `Ord` sort by generation first; keep the
    // index second so that `to_bits` and the ordering agree.
    pub(super) generation: NonZeroU32,
    pub(super) index: u32,
}

impl Entity {
    pub(crate) const fn new(index: u32, generation: NonZeroU32) -> Self {
        Entity { generation, index }
    }

    /// The slot of this entity in the world's entity table. Slots are reused
    /// after despawn, with a new generation.
    #[inline]
    pub const fn index(self) -> u32 {
        self.index
    }

    /// How many times the slot had been reused when this entity was spawned,
    /// starting at 1.
    #[inline]
    pub const fn generation(self) -> u32 {
        self.generation.get()
    }

    /// Packs the handle into 64 bits: generation in the high half, index in
    /// the low half. [`Entity::from_bits`] is the inverse.
    #[inline]
    pub const fn to_bits(self) -> u64 {
        ((self.generation.get() as u64) << 32) | self.index as u64
    }

    /// Rebuilds a handle from [`Entity::to_bits`]; `None` if the generation
    /// half is zero (no handle has that form).
    #[inline]
    pub const fn from_bits(bits: u64) -> Option<Entity> {
        match NonZeroU32::new((bits >> 32) as u32) {
            Some(generation) => Some(Entity::new(bits as u32, generation)),
            None => None,
        }
    }
}

impl fmt::Debug for Entity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}v{}", self.index, self.generation)
    }
}

impl fmt::Display for Entity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}v{}", self.index, self.generation)
    }
}
