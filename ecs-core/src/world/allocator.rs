//! The world's entity allocator: reserving handles (from any thread, or in
//! lanes for parallel commands), and saving or restoring the allocator's
//! state so that a rebuilt world hands out exactly the same handles.

use crate::entity::error::{AllocatorStateError, SpawnAtError};
use crate::entity::{AllocatorState, Entity, EntityLocation, ReservationLanes};
use crate::storage::archetype::{ArchetypeId, Row};
use crate::world::World;

impl World {
    /// Reserves a handle for an entity to be spawned later, through a shared
    /// borrow (deferred commands use this). The entity becomes live, with
    /// no components, at the next structural change or
    /// [`World::flush`]; until then [`World::contains`] is false for it.
    pub fn reserve_entity(&self) -> Entity {
        self.entities.reserve_entity()
    }

    /// Starts `count` reservation lanes for the systems of one group (see
    /// `ReservationLanes`).
    pub(crate) fn begin_reservation_lanes(&mut self, count: u32) -> ReservationLanes {
        ReservationLanes { base: self.entities.begin_lanes(), count }
    }

    /// The `k`-th handle reserved in lane `lane`.
    #[inline]
    pub(crate) fn reserve_in_lane(&self, lanes: ReservationLanes, lane: u32, k: u32) -> Entity {
        self.entities.reserve_in_lane(lanes, lane, k)
    }

    /// Ends reservation lanes; `used[r]` handles were taken in lane `r`.
    pub(crate) fn end_reservation_lanes(&mut self, lanes: ReservationLanes, used: &[u32]) {
        self.entities.end_lanes(lanes, used);
    }

    /// A copy of the entity allocator's state: the generation of every slot
    /// and the free list. With [`World::restore_allocator_state`] it rebuilds
    /// a world whose entities keep their exact handles, and whose later
    /// spawns hand out the same handles as this world's would.
    pub fn allocator_state(&self) -> AllocatorState {
        self.entities.state()
    }

    /// What [`World::allocator_state`] copies, borrowed: the generation of
    /// every slot in index order, and the free list.
    pub fn allocator_view(&self) -> (impl ExactSizeIterator<Item = std::num::NonZeroU32> + '_, &[u32]) {
        self.entities.state_view()
    }

    /// Makes this empty world's entity allocator a copy of `state`, with
    /// each of `live` alive and without components (insert them next).
    /// Checks first, and on error changes nothing.
    ///
    /// ```
    /// # use archetable::{Component, World};
    /// # #[derive(Component)] struct Hp(u32);
    /// let mut world = World::new();
    /// let handles: Vec<_> = world.spawn_batch((0..4).map(Hp)).collect();
    /// world.despawn(handles[1]).unwrap();
    /// let live: Vec<_> = handles.iter().copied().filter(|&e| world.contains(e)).collect();
    ///
    /// let mut copy = World::new();
    /// copy.restore_allocator_state(&world.allocator_state(), &live).unwrap();
    /// for &e in &live {
    ///     copy.insert(e, Hp(7)).unwrap();
    /// }
    /// assert_eq!(copy.spawn(Hp(0)), world.spawn(Hp(0)));
    /// ```
    pub fn restore_allocator_state(
        &mut self,
        state: &AllocatorState,
        live: &[Entity],
    ) -> Result<(), AllocatorStateError> {
        self.flush();
        if !self.is_empty() {
            return Err(AllocatorStateError::WorldNotEmpty);
        }
        // Restored handles may be ones whose names were remembered.
        self.departed.clear();
        let archetype = self.archetypes.get_mut(ArchetypeId::EMPTY);
        self.entities.restore(state, live, |entity| EntityLocation {
            archetype: ArchetypeId::EMPTY,
            row: archetype.push_entity(entity),
        })
    }

    /// Test hooks into the entity allocator, to reach index exhaustion and
    /// generation wrap-around quickly. Not part of the API.
    #[doc(hidden)]
    pub fn entity_allocator_hooks(&mut self) -> crate::entity::AllocatorHooks<'_> {
        self.entities.hooks()
    }

    /// Makes the exact handle `entity` live, without components, in the
    /// empty table (see `Entities::claim` for the rule).
    pub(crate) fn claim_entity(&mut self, entity: Entity) -> Result<(), SpawnAtError> {
        self.flush();
        let archetype = self.archetypes.get_mut(ArchetypeId::EMPTY);
        archetype.reserve(1);
        let row = Row(archetype.len() as u32);
        self.entities.claim(entity, EntityLocation { archetype: ArchetypeId::EMPTY, row })?;
        archetype.push_entity(entity);
        Ok(())
    }

    /// Makes every reserved entity live, with no components.
    #[inline]
    pub fn flush(&mut self) {
        if self.entities.has_reserved() {
            self.flush_reserved();
        }
    }

    #[cold]
    #[inline(never)]
    fn flush_reserved(&mut self) {
        let archetype = self.archetypes.get_mut(ArchetypeId::EMPTY);
        self.entities
            .flush(|entity| EntityLocation { archetype: ArchetypeId::EMPTY, row: archetype.push_entity(entity) });
    }
}
