//! The ring of snapshots ggrs saves into and loads from, and the checksum
//! of a world.
//!
//! Each slot keeps a world of its own, and a save makes it a copy of the
//! present one in place (`World::clone_from`: every entity with its handle
//! and generation, the allocator's free list, every table and sparse set,
//! the hierarchy lists, the change tick), plus a copy of each rolled-back
//! resource; the slot for a frame is `frame % len`. The copy goes into the
//! memory the slot's world has from earlier saves, so once every slot has
//! held a world of the present size, a save allocates nothing (for the
//! types copied with `clone_from`, see
//! [`RollbackDriver::copy_with_clone_from`](crate::RollbackDriver::copy_with_clone_from)).
//! ggrs keeps at most `max_prediction + 2` frames alive, so a ring a little
//! longer than that never overwrites a frame ggrs may still ask for; each
//! slot remembers its frame and a load checks it.
//!
//! A load copies the slot's world back into the present one, in place too
//! (the slot stays, as ggrs may load the same frame again), and puts the
//! rolled-back resources back. The present world keeps its id, so the
//! schedule's systems and query states stay set up, and its resources, so
//! the skipped ones keep their present values; skipped components are
//! handed to the slot before the copy, so that they come back as they
//! were before the load.

use std::hash::{Hash, Hasher};

use archetable_core::{Entity, World};
use ggrs::Frame;

use crate::checksum::StableHasher;
use crate::error::RollbackError;
use crate::registry::{Detail, Registry, Stored};

struct Slot {
    frame: Frame,
    /// Whether `world` holds the save of `frame`.
    saved: bool,
    world: World,
    resources: Vec<Stored>,
    checksum: u128,
}

/// The saved frames, one slot per frame modulo the ring's length.
pub(crate) struct Ring {
    slots: Vec<Slot>,
}

impl Ring {
    pub(crate) fn new(len: usize) -> Self {
        let slots = (0..len.max(1))
            .map(|_| Slot {
                frame: ggrs::NULL_FRAME,
                saved: false,
                world: World::new(),
                resources: Vec::new(),
                checksum: 0,
            })
            .collect();
        Ring { slots }
    }

    /// How many frames the ring keeps.
    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }

    fn index(&self, frame: Frame) -> usize {
        frame.rem_euclid(self.slots.len() as Frame) as usize
    }

    /// Saves `world` as frame `frame`; its checksum.
    pub(crate) fn save(&mut self, world: &World, registry: &Registry, frame: Frame) -> Result<u128, RollbackError> {
        let index = self.index(frame);
        let slot = &mut self.slots[index];
        slot.world.clone_from(world).map_err(|error| match error {
            archetable_core::CloneError::NotCloneable { component } => RollbackError::NotCloneable { name: component },
            archetable_core::CloneError::NoSuchEntity(_) => unreachable!("a whole-world copy names no entity"),
        })?;
        slot.saved = true;
        slot.resources.resize_with(registry.resources.len(), || None);
        for (entry, stored) in registry.resources.iter().zip(&mut slot.resources) {
            (entry.save)(world, stored);
        }
        slot.frame = frame;
        slot.checksum = checksum(world, registry);
        Ok(slot.checksum)
    }

    /// Makes `world` the snapshot of frame `frame`.
    pub(crate) fn load(&mut self, world: &mut World, registry: &Registry, frame: Frame) -> Result<(), RollbackError> {
        let index = self.index(frame);
        let slot = &mut self.slots[index];
        if !slot.saved || slot.frame != frame {
            return Err(RollbackError::MissingSnapshot { frame });
        }
        for skipped in &registry.skipped_components {
            (skipped.carry)(world, &mut slot.world);
        }
        world.clone_from(&slot.world).expect("a snapshot is a copy, so it copies back");
        for (entry, stored) in registry.resources.iter().zip(&slot.resources) {
            (entry.load)(world, stored);
        }
        Ok(())
    }

    /// The world saved as frame `frame` (without its resources), if that
    /// frame is still kept.
    pub(crate) fn world_of(&self, frame: Frame) -> Option<&World> {
        let slot = &self.slots[self.index(frame)];
        (slot.saved && slot.frame == frame).then_some(&slot.world)
    }

    /// The checksum saved with frame `frame`, if that frame is still kept.
    pub(crate) fn checksum_of(&self, frame: Frame) -> Option<u128> {
        let slot = &self.slots[self.index(frame)];
        (slot.frame == frame && slot.saved).then_some(slot.checksum)
    }
}

/// The checksum of `world`: the allocator (every slot's generation and the
/// free list), the live entities in the order queries visit them, then each
/// rolled-back component type (each holder's handle and value, in query
/// order) and each rolled-back resource, in registration order.
pub(crate) fn checksum(world: &World, registry: &Registry) -> u128 {
    let mut h = StableHasher::new();
    hash_entities(world, &mut h);
    for (kind, entry) in registry.components.iter().enumerate() {
        h.write_usize(kind);
        (entry.hash)(world, &mut h);
    }
    for (kind, entry) in registry.resources.iter().enumerate() {
        h.write_usize(kind);
        (entry.hash)(world, &mut h);
    }
    h.finish128()
}

fn hash_entities(world: &World, h: &mut StableHasher) {
    let (generations, free) = world.allocator_view();
    h.write_usize(generations.len());
    for generation in generations {
        h.write_u32(generation.get());
    }
    free.hash(h);
    h.write_usize(world.len());
    for entity in world.query::<Entity>() {
        h.write_u64(entity.to_bits());
    }
}

/// The debug record of `world`: one hash per entity (its place in query
/// order), per component value and per resource, for naming the first
/// thing two records disagree on.
pub(crate) fn details(world: &World, registry: &Registry, out: &mut Vec<Detail>) {
    out.clear();
    let mut h = StableHasher::new();
    hash_entities(world, &mut h);
    out.push(Detail { kind: u32::MAX, entity: None, hash: h.finish() });
    for (kind, entry) in registry.components.iter().enumerate() {
        (entry.detail)(world, kind as u32, out);
    }
    let base = registry.components.len();
    for (kind, entry) in registry.resources.iter().enumerate() {
        let mut h = StableHasher::new();
        (entry.hash)(world, &mut h);
        out.push(Detail { kind: (base + kind) as u32, entity: None, hash: h.finish() });
    }
}
