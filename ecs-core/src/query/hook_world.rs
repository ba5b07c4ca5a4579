//! The read-only queries a hook runs through its [`HookWorld`]: in the
//! query layer, beside what they return, as the hierarchy's commands are
//! beside the hierarchy.

use crate::entity::error::QueryEntityError;
use crate::entity::Entity;
use crate::query::fetch::ReadOnlyQueryData;
use crate::query::filter::QueryFilter;
use crate::query::iter::QueryIter;
use crate::world::hooks::HookWorld;

impl HookWorld<'_> {
    /// Iterates the entities that match the read-only query `Q`.
    pub fn query<Q: ReadOnlyQueryData>(&self) -> QueryIter<'_, 'static, Q, ()> {
        self.world.query()
    }

    /// Iterates the entities that match the read-only query `Q` and pass `F`.
    pub fn query_filtered<Q: ReadOnlyQueryData, F: QueryFilter>(&self) -> QueryIter<'_, 'static, Q, F> {
        self.world.query_filtered()
    }

    /// The item of the read-only query `Q` for one entity.
    pub fn query_one<Q: ReadOnlyQueryData>(&self, entity: Entity) -> Result<Q::Item<'_>, QueryEntityError> {
        self.world.query_one::<Q>(entity)
    }
}
