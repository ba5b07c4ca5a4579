//! Where an entity lives: the id of its table and its row there. The two
//! index newtypes are the storage layer's (tables, rows), defined here, at
//! the bottom, because the allocator keeps a location for every entity;
//! `archetable::storage` re-exports them.

/// The index of an archetype in its world. Archetypes are never removed, so an
/// id stays valid for the world's lifetime.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ArchetypeId(pub(crate) u32);

impl ArchetypeId {
    /// The archetype of entities without components.
    pub const EMPTY: ArchetypeId = ArchetypeId(0);
    /// Marks "no archetype" in tables that store ids without `Option`.
    pub(crate) const INVALID: ArchetypeId = ArchetypeId(u32::MAX);

    /// The id as an index.
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A row of an archetype's table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Row(pub(crate) u32);

impl Row {
    /// The row as an index.
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// Where a live entity's components are: its archetype and row there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct EntityLocation {
    pub archetype: ArchetypeId,
    pub row: Row,
}

impl EntityLocation {
    /// The location of a slot that holds no live entity.
    pub(crate) const VACANT: EntityLocation = EntityLocation { archetype: ArchetypeId::INVALID, row: Row(u32::MAX) };
}
