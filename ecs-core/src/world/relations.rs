//! What the world keeps for the relationships of the hierarchy layer
//! (`hierarchy/relationship.rs`), which installs one set of functions per
//! relationship type: the consistency check that `check_invariants` runs,
//! the upkeep a rollback runs for the entities it takes back, and the
//! sources waiting for a target's list to be created.

use std::any::TypeId;

use hashbrown::{HashMap, HashSet};

use crate::component::bundle::BundleId;
use crate::entity::{ArchetypeId, Entity, EntityLocation};
use crate::world::World;

/// Checks that one relationship type and its lists agree everywhere.
pub(crate) type RelationshipCheck = fn(&World) -> Result<(), String>;

/// Cuts the links between the entities of a set, about to go without
/// hooks, and those that stay: the staying targets' lists forget the
/// going sources, the staying sources of going targets lose their
/// relationship.
pub(crate) type RelationshipDetach = fn(&mut World, &HashSet<Entity>);

/// Sources waiting for a target's list, and the function that creates
/// the list (typed by relationship) from them.
#[cfg_attr(not(feature = "hierarchy"), allow(dead_code))]
pub(crate) struct Waiting {
    /// In join order.
    pub(crate) sources: Vec<Entity>,
    /// Creates the target's list from the sources that still point at it.
    pub(crate) create: fn(&mut World, Entity),
}

/// A link the engine must cut (or a source it must despawn, or a list
/// emptied by `source` it must drop) once the operation that set it off is
/// over: `run(world, source, target)` does it if it still applies, with
/// hooks, and makes sure of it without hooks if a user hook panics.
#[cfg_attr(not(feature = "hierarchy"), allow(dead_code))]
pub(crate) struct Cut {
    pub(crate) source: Entity,
    pub(crate) target: Entity,
    pub(crate) run: fn(&mut World, Entity, Entity),
}

/// The world's relationship bookkeeping; empty until a relationship type
/// is used.
#[derive(Default)]
pub(crate) struct Relations {
    /// One check per relationship type in use.
    pub(crate) checks: Vec<RelationshipCheck>,
    /// One detach per relationship type in use.
    pub(crate) detach: Vec<RelationshipDetach>,
    /// Sources that joined a target with no list yet, by relationship type
    /// and target, in join order; the list is created (once) by a command
    /// that applies before the operation returns.
    pub(crate) pending: HashMap<(TypeId, Entity), Waiting>,
    /// Set while the hooks of a batch run whose entities were placed whole,
    /// lists included (loads, prefabs, column batches): a joining source
    /// may already be in its target's list.
    pub(crate) placed_lists: bool,
    /// Links to cut once the operation is over (the sources of a list
    /// that went, links refused); kept here rather than in the command
    /// queue so that a panicking command cannot lose them.
    pub(crate) cuts: Vec<Cut>,
    /// Per open transaction (`all_or_nothing`), innermost last: where its
    /// part of `left` starts.
    pub(crate) txn_marks: Vec<usize>,
    /// Where the last source spawned under a target found its
    /// relationship and the target's list, for the next one.
    #[cfg_attr(not(feature = "hierarchy"), allow(dead_code))]
    pub(crate) last_join: Option<LastJoin>,
    /// The bundle id of the last list a spawned source's join placed in
    /// its target, checked against the list's type before use: the next
    /// first list skips the bundle lookup, and the lookup's memory of the
    /// last bundles keeps the spawned one.
    #[cfg_attr(not(feature = "hierarchy"), allow(dead_code))]
    pub(crate) list_bundle: Option<BundleId>,
    /// The last table a spawned source's join placed a first list out of,
    /// and where that took its target ([`FirstList`]).
    #[cfg_attr(not(feature = "hierarchy"), allow(dead_code))]
    pub(crate) first_list: Option<FirstList>,
    /// While a transaction is open: each target a source left, in order.
    /// A rollback gives a staying source that points at an entity taken
    /// back the last target it left that stays, at the place it left.
    pub(crate) left: Vec<Left>,
    /// Sources that just left a target's list because an insert replaces
    /// their relationship: kept from the engine's `on_replace` to that
    /// insert's `on_insert` (a removal's `on_remove` forgets them), so that
    /// a refused insert can put the replaced value back.
    #[cfg_attr(not(feature = "hierarchy"), allow(dead_code))]
    pub(crate) replaced: Vec<Replaced>,
    /// Refused inserts waiting to be undone with the cuts: each source goes
    /// back to the target it left, at its place.
    #[cfg_attr(not(feature = "hierarchy"), allow(dead_code))]
    pub(crate) returning: Vec<Replaced>,
    /// The sources of a target's list an insert is overwriting, kept from
    /// the list's `on_replace` to its `on_insert` (a removal's `on_remove`
    /// forgets them), so that a list inserted by hand can be undone.
    #[cfg_attr(not(feature = "hierarchy"), allow(dead_code))]
    pub(crate) replaced_lists: Vec<ReplacedList>,
    /// The list the engine itself is inserting (its relationship's type
    /// and its owner), which its `on_insert` accepts.
    #[cfg_attr(not(feature = "hierarchy"), allow(dead_code))]
    pub(crate) engine_list: Option<(TypeId, Entity)>,
}

/// A source that left its target's list when an insert replaced its
/// relationship, and where it was.
#[derive(Clone, Copy, Debug)]
#[cfg_attr(not(feature = "hierarchy"), allow(dead_code))]
pub(crate) struct Replaced {
    /// The relationship's type.
    pub kind: TypeId,
    pub source: Entity,
    pub target: Entity,
    pub place: Place,
}

/// The sources a target's list named when an insert overwrote it.
#[derive(Clone, Debug)]
#[cfg_attr(not(feature = "hierarchy"), allow(dead_code))]
pub(crate) struct ReplacedList {
    /// The list's type.
    pub kind: TypeId,
    pub target: Entity,
    pub sources: Vec<Entity>,
}

/// A move a target made when a spawned source's join placed its first
/// list: out of table `from`, into table `to`, whose column `column` holds
/// the lists. Since `to` differs from `from`, `from` has no column of the
/// list's component (an insert of a component a table has keeps the entity
/// in place); a table's components never change and its id is never
/// reused, so that stays true for the world's life. The next target found
/// in `from` gets its first list without looking for one.
#[derive(Clone, Copy, Debug)]
#[cfg_attr(not(feature = "hierarchy"), allow(dead_code))]
pub(crate) struct FirstList {
    /// The list component's type.
    pub kind: TypeId,
    pub from: ArchetypeId,
    pub to: ArchetypeId,
    pub column: u32,
}

/// The places a spawned source's join looked up, kept so that the next
/// source spawned into the same table under the same target joins without
/// looking them up again (a parent's children are often spawned in a row).
/// Each use checks them against the tables and the entity table (the
/// relationship's type too, through its column's): a stale entry costs a
/// lookup, never a wrong list.
#[derive(Clone, Copy, Debug)]
#[cfg_attr(not(feature = "hierarchy"), allow(dead_code))]
pub(crate) struct LastJoin {
    /// The table the source was spawned into, and the relationship's
    /// column there.
    pub source_table: ArchetypeId,
    pub source_column: u32,
    /// The target, where it was, and its list's column there.
    pub target: Entity,
    pub target_at: EntityLocation,
    pub list_column: u32,
}

/// A source that left a target's list while a transaction was open.
#[derive(Clone, Copy, Debug)]
#[cfg_attr(not(feature = "hierarchy"), allow(dead_code))]
pub(crate) struct Left {
    /// The relationship's type.
    pub kind: TypeId,
    pub source: Entity,
    pub target: Entity,
    /// Where it was in the list.
    pub place: Place,
}

/// Where a source was in its target's list when it left.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(not(feature = "hierarchy"), allow(dead_code))]
pub(crate) enum Place {
    /// At the front.
    First,
    /// Just after this source.
    After(Entity),
    /// Not known (the list was not created yet, or finding the source
    /// before it would have meant a long walk): a rollback puts it back at
    /// the end.
    Unknown,
}

impl Relations {
    #[cfg(feature = "hierarchy")]
    /// Whether `source` may be the target of sources of the relationship
    /// `relationship` whose list does not exist yet.
    pub(crate) fn is_pending_target(&self, relationship: TypeId, source: Entity) -> bool {
        !self.pending.is_empty() && self.pending.contains_key(&(relationship, source))
    }
}

impl World {
    /// The relationship bookkeeping.
    #[inline]
    pub(crate) fn relations(&self) -> &Relations {
        &self.relations
    }

    /// The relationship bookkeeping, to change.
    #[inline]
    pub(crate) fn relations_mut(&mut self) -> &mut Relations {
        &mut self.relations
    }

    /// Adds a relationship type's consistency check and rollback upkeep.
    #[cfg(feature = "hierarchy")]
    pub(crate) fn add_relationship(&mut self, check: RelationshipCheck, detach: RelationshipDetach) {
        self.relations.checks.push(check);
        self.relations.detach.push(detach);
    }

    /// Runs `f`, the hooks of a batch placed whole, with joins checked
    /// against the lists the batch placed (see `Relations::placed_lists`);
    /// the lists are completed by commands that `f`'s operations apply.
    pub(crate) fn with_placed_lists<R>(&mut self, f: impl FnOnce(&mut World) -> R) -> R {
        let outer = std::mem::replace(&mut self.relations.placed_lists, true);
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(self)));
        self.relations.placed_lists = outer;
        result.unwrap_or_else(|payload| std::panic::resume_unwind(payload))
    }

    /// Creates every list that sources still wait for: the commands that
    /// would have done it may have been dropped (a command before them
    /// panicked), and the lists must be exact whatever user code does.
    pub(crate) fn settle_relationships(&mut self) {
        while let Some((&(_, target), waiting)) = self.relations.pending.iter().next() {
            let create = waiting.create;
            create(self, target);
            // `create` takes the entry out; make sure, whatever it did.
            self.relations.pending.retain(|&(_, t), _| t != target);
        }
    }

    /// Cuts every link waiting in `cuts`, each whatever the user hooks of
    /// the others do; then the first panic goes on.
    pub(crate) fn settle_cuts(&mut self) {
        let mut panics = crate::storage::column::Panics::default();
        loop {
            let cuts = std::mem::take(&mut self.relations.cuts);
            if cuts.is_empty() {
                break;
            }
            for cut in cuts {
                panics.run(|| (cut.run)(self, cut.source, cut.target));
            }
        }
        panics.finish();
    }

    /// Runs every relationship type's detach for `going`, each whatever
    /// the others' user hooks do; then the first panic goes on.
    pub(crate) fn detach_relationships(&mut self, going: &HashSet<Entity>) {
        let mut panics = crate::storage::column::Panics::default();
        for i in 0..self.relations.detach.len() {
            let detach = self.relations.detach[i];
            panics.run(|| detach(self, going));
        }
        panics.finish();
    }

    /// A transaction opens: the targets sources leave are logged from now.
    pub(crate) fn begin_relations_txn(&mut self) {
        self.relations.txn_marks.push(self.relations.left.len());
    }

    /// The innermost transaction ends. Its log is kept for an outer one
    /// (which may still roll back) and dropped with the outermost; after a
    /// rollback it is dropped at once.
    pub(crate) fn end_relations_txn(&mut self, rolled_back: bool) {
        let mark = self.relations.txn_marks.pop().unwrap_or(0);
        if rolled_back || self.relations.txn_marks.is_empty() {
            self.relations.left.truncate(mark);
        }
    }

    /// The targets sources left since the innermost transaction opened.
    #[cfg(feature = "hierarchy")]
    pub(crate) fn left_in_txn(&self) -> &[Left] {
        let mark = self.relations.txn_marks.last().copied().unwrap_or(self.relations.left.len());
        &self.relations.left[mark..]
    }
}
