//! What a query reads and writes, and the check that refuses a query whose
//! items would alias.

use crate::component::ComponentId;
use crate::storage::bitset::BitSet;

/// The components a query (later: a system) reads and writes.
#[derive(Clone, Debug, Default)]
pub struct Access {
    reads: BitSet,
    writes: BitSet,
    conflicts: Vec<ComponentId>,
}

impl Access {
    /// An access that touches nothing.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records a shared borrow of `id`; a conflict if `id` is also written.
    pub fn add_read(&mut self, id: ComponentId) {
        if self.writes.contains(id.index()) {
            self.conflicts.push(id);
        }
        self.reads.insert(id.index());
    }

    /// Records an exclusive borrow of `id`; a conflict if `id` is read or
    /// written elsewhere in the same query.
    pub fn add_write(&mut self, id: ComponentId) {
        if self.writes.contains(id.index()) || self.reads.contains(id.index()) {
            self.conflicts.push(id);
        }
        self.writes.insert(id.index());
    }

    /// Components read.
    pub fn reads(&self) -> &BitSet {
        &self.reads
    }

    /// Components written.
    pub fn writes(&self) -> &BitSet {
        &self.writes
    }

    /// Components borrowed mutably together with another borrow of the same
    /// component, in the order they were found.
    pub fn conflicts(&self) -> &[ComponentId] {
        &self.conflicts
    }
}
