//! Parent/child trees, built on [`Relationship`]s: [`ChildOf`] on a child
//! names its parent, [`Children`] on the parent lists the children in the
//! order they joined, kept by the engine. On top: `set_parent` with its
//! checks, traversal (`ancestors`, `descendants`, parents-first order) and
//! recursive despawn, and disabling whole trees (`disabling.rs`).
//!
//! | operation | cost |
//! |---|---|
//! | set, change or remove a parent | the row move of inserting or removing `ChildOf`, and amortized O(1) list upkeep whatever the number of siblings (see [`SourceList`]); `set_parent` also walks the new parent's ancestors to refuse a cycle, unless the child has no children |
//! | `parent`, `children` | one component lookup |
//! | `despawn_recursive` | each descendant once |
//!
//! Despawning a parent with plain [`World::despawn`] orphans its children:
//! their `ChildOf` is removed (with its hooks), so no child ever points at a
//! dead parent. [`World::despawn_recursive`] takes the children along.
//!
//! Disabled entities stay in their trees. Disabling hides an entity from
//! queries, not from its family: `parent`, `children`, `ancestors`,
//! `descendants` and `hierarchy_order` read the links by handle, as
//! [`World::get`] does, and list disabled entities (and those hidden by
//! other markers, see [`World::register_disabling_component`]) like any
//! other, so enabling an entity finds its tree as it left it, and
//! recursive despawns and recursive disabling reach every member. A
//! system that walks a tree and should pass over disabled members asks
//! [`World::is_disabled`], or reads them through a query, which refuses
//! them (as bevy_ecs keeps disabled entities in `Children` while its
//! queries skip them).

mod commands;
mod disabling;
mod relationship;
mod sources;
#[cfg(test)]
mod tests;

use std::fmt;
use std::ops::Deref;

pub use commands::ChildSpawner;
#[doc(hidden)]
pub use relationship::{install_relationship, install_target};
pub use relationship::{Relationship, RelationshipTarget};
#[doc(hidden)]
pub use sources::EngineAccess;
pub use sources::{SourceIter, SourceList};

use crate::component::Component;
use crate::entity::error::EntityError;
use crate::entity::Entity;
use crate::world::World;

/// The parent of the entity that has it: a [`Relationship`] whose list is
/// [`Children`]. Insert, overwrite or remove it through any path (the world,
/// commands, a bundle at spawn) and the parents' `Children` follow.
/// Tracks changes, so `Changed<ChildOf>` sees reparenting.
///
/// ```
/// use archetable::prelude::*;
///
/// let mut world = World::new();
/// let tank = world.spawn(());
/// let turret = world.spawn(ChildOf(tank));
/// assert_eq!(world.parent(turret), Some(tank));
/// assert_eq!(world.children(tank), [turret]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ChildOf(pub Entity);

// Not offered in the compiler's "other types implement" notes.
#[diagnostic::do_not_recommend]
impl Component for ChildOf {
    const TRACK_CHANGES: bool = true;
    const ENGINE_HOOKS: Option<fn(&mut World)> = Some(install_relationship::<ChildOf>);
    // A clone of a child is a child of the same parent.
    const CLONE: Option<fn(&Self) -> Self> = Some(|child_of| *child_of);
}

// Not offered in the compiler's "other types implement" notes.
#[diagnostic::do_not_recommend]
impl crate::component::change::Tracked for ChildOf {}

impl Relationship for ChildOf {
    type Target = Children;

    fn target(&self) -> Entity {
        self.0
    }

    fn from_target(target: Entity) -> Self {
        ChildOf(target)
    }
}

/// The children of the entity that has it, in the order they joined. Kept
/// by the engine from the children's [`ChildOf`]; it derefs to a
/// read-only [`SourceList`], where a child joins and leaves in amortized
/// O(1) however many siblings it has. An entity without children has none
/// (rather than an empty list). Serialized as the list of children.
///
/// Immutable: it does not implement
/// [`MutableComponent`](crate::MutableComponent), so no query, `get_mut`
/// or hook hands out `&mut Children`; [`ChildOf`] is immutable the same
/// way, and changes only through an insert or a removal, which the
/// engine's hooks follow.
///
/// It keeps no change ticks: to see reordering with `Changed<..>`, declare
/// your own relationship pair with `#[component(track_changes)]` on the
/// list (see [`Relationship`]).
#[derive(Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Children(SourceList);

impl Deref for Children {
    type Target = SourceList;

    fn deref(&self) -> &SourceList {
        &self.0
    }
}

// Not offered in the compiler's "other types implement" notes.
#[diagnostic::do_not_recommend]
impl Component for Children {
    const ENGINE_HOOKS: Option<fn(&mut World)> = Some(install_target::<Children>);
    const ENGINE_KEPT: bool = true;
    // A world copy keeps its lists; `clone_entity` leaves them behind (the
    // engine keeps them), so a cloned parent has no children.
    const CLONE: Option<fn(&Self) -> Self> = Some(|children| Children(children.0.clone()));
}

impl RelationshipTarget for Children {
    type Relationship = ChildOf;

    fn sources(&self) -> &SourceList {
        &self.0
    }

    fn sources_mut(&mut self, _: EngineAccess) -> &mut SourceList {
        &mut self.0
    }

    fn from_sources(sources: SourceList, _: EngineAccess) -> Self {
        Children(sources)
    }
}

/// Why [`World::set_parent`] refused; nothing changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HierarchyError {
    /// The child is not alive.
    ChildNotAlive(Entity),
    /// The parent is not alive (in this world).
    ParentNotAlive(Entity),
    /// An entity cannot be its own parent.
    OwnParent(Entity),
    /// The parent is a descendant of the child: the tree would become a
    /// cycle.
    Cycle {
        /// The child.
        child: Entity,
        /// The would-be parent, one of its descendants.
        parent: Entity,
    },
}

impl fmt::Display for HierarchyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HierarchyError::ChildNotAlive(e) => write!(f, "the child {e} is not alive"),
            HierarchyError::ParentNotAlive(e) => write!(f, "the parent {e} is not alive"),
            HierarchyError::OwnParent(e) => write!(f, "{e} cannot be its own parent"),
            HierarchyError::Cycle { child, parent } => {
                write!(f, "{parent} is a descendant of {child}, so it cannot be its parent")
            }
        }
    }
}

impl std::error::Error for HierarchyError {}

impl World {
    /// Makes `parent` the parent of `child` (inserting `ChildOf(parent)`),
    /// moving it from its old parent's children to the end of the new
    /// one's. Refuses, changing nothing, a dead child or parent, an entity
    /// as its own parent, and a parent that is a descendant of the child.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// let mut world = World::new();
    /// let (a, b) = (world.spawn(()), world.spawn(()));
    /// world.set_parent(b, a).unwrap();
    /// assert_eq!(world.set_parent(a, b), Err(HierarchyError::Cycle { child: a, parent: b }));
    /// ```
    pub fn set_parent(&mut self, child: Entity, parent: Entity) -> Result<(), HierarchyError> {
        if !self.contains(child) {
            return Err(HierarchyError::ChildNotAlive(child));
        }
        if child == parent {
            return Err(HierarchyError::OwnParent(child));
        }
        if !self.contains(parent) {
            return Err(HierarchyError::ParentNotAlive(parent));
        }
        if relationship::may_have_sources::<ChildOf>(self, child)
            && relationship::reaches::<ChildOf>(self, parent, child)
        {
            return Err(HierarchyError::Cycle { child, parent });
        }
        self.insert(child, ChildOf(parent)).map_err(|_| HierarchyError::ChildNotAlive(child))
    }

    /// Takes `child` out of its parent's children (removing its `ChildOf`);
    /// returns the parent it had, if any.
    pub fn remove_parent(&mut self, child: Entity) -> Result<Option<Entity>, EntityError> {
        if !self.contains(child) {
            return Err(EntityError::NoSuchEntity(child));
        }
        match self.get::<ChildOf>(child) {
            Some(&ChildOf(parent)) => {
                self.discard::<ChildOf>(child).map_err(|_| EntityError::NoSuchEntity(child))?;
                Ok(Some(parent))
            }
            None => Ok(None),
        }
    }

    /// The parent of `entity`, if it has one: a disabled parent too
    /// (disabled entities stay in their trees; queries skip them, the
    /// tree's reads list them).
    pub fn parent(&self, entity: Entity) -> Option<Entity> {
        self.get::<ChildOf>(entity).map(|c| c.0)
    }

    /// The children of `entity` in the order they joined; empty if it has
    /// none or is not alive. Disabled children are listed, and a disabled
    /// entity's children are read as any other's.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// let mut world = World::new();
    /// let tank = world.spawn(());
    /// let turret = world.spawn(ChildOf(tank));
    /// world.disable(turret).unwrap();
    /// assert_eq!(world.children(tank), [turret]);
    /// assert!(world.children(tank).iter().all(|&c| world.is_disabled(c)));
    /// ```
    pub fn children(&self, entity: Entity) -> &SourceList {
        static NONE: SourceList = SourceList::new();
        self.get::<Children>(entity).map_or(&NONE, |c| &c.0)
    }

    /// The ancestors of `entity`, nearest first, disabled ones included:
    /// the walk goes on through a disabled parent to its own parent.
    ///
    /// At most as many as there are live entities, whatever the links say.
    pub fn ancestors(&self, entity: Entity) -> impl Iterator<Item = Entity> + '_ {
        let mut next = self.parent(entity);
        std::iter::from_fn(move || {
            let at = next?;
            next = self.parent(at);
            Some(at)
        })
        .take(self.len())
    }

    /// The children of `at` that point back at it: a walk down follows
    /// only these, so a list naming an entity that is not a child (or its
    /// own owner) leads nowhere.
    fn children_pointing_back(&self, at: Entity) -> impl DoubleEndedIterator<Item = Entity> + '_ {
        self.children(at).iter().copied().filter(move |&child| child != at && self.parent(child) == Some(at))
    }

    /// The descendants of `entity` (not `entity` itself), depth first, each
    /// parent before its children, siblings in order. Disabled descendants
    /// are listed, and so are the children under them; `entity` may be
    /// disabled itself.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// let mut world = World::new();
    /// let root = world.spawn(());
    /// let a = world.spawn(ChildOf(root));
    /// let b = world.spawn(ChildOf(root));
    /// let a1 = world.spawn(ChildOf(a));
    /// assert_eq!(world.descendants(root).collect::<Vec<_>>(), [a, a1, b]);
    /// assert_eq!(world.ancestors(a1).collect::<Vec<_>>(), [a, root]);
    /// ```
    ///
    /// Follows only children whose `ChildOf` points back, so each entity
    /// comes at most once: a walk down the links can only meet an entity
    /// twice by coming back to `entity` around a cycle of links, where it
    /// stops. No list can make it loop.
    pub fn descendants(&self, entity: Entity) -> impl Iterator<Item = Entity> + '_ {
        let mut stack: Vec<Entity> = self.children_pointing_back(entity).rev().collect();
        std::iter::from_fn(move || {
            let at = stack.pop()?;
            if at == entity {
                return None;
            }
            stack.extend(self.children_pointing_back(at).rev());
            Some(at)
        })
        .take(self.len())
    }

    /// Every entity of a tree, each parent before its children: the roots
    /// (entities with children and no parent) in id order, each followed
    /// by its descendants depth first. The order to propagate anything down
    /// the trees (transforms, visibility) in one pass. Disabled entities
    /// are in it, roots included, like any other: a disabled parent's
    /// enabled children still follow it.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// let mut world = World::new();
    /// let root = world.spawn(());
    /// let child = world.spawn(ChildOf(root));
    /// let grandchild = world.spawn(ChildOf(child));
    /// world.spawn(()); // in no tree
    /// assert_eq!(world.hierarchy_order(), [root, child, grandchild]);
    /// ```
    pub fn hierarchy_order(&self) -> Vec<Entity> {
        // Every table, hidden ones too: a disabled root is still a root.
        let mut roots: Vec<Entity> = Vec::new();
        if let Some(children) = self.components().id::<Children>() {
            let child_of = self.components().id::<ChildOf>();
            for archetype in self.archetypes().as_slice() {
                if archetype.contains(children) && !child_of.is_some_and(|id| archetype.contains(id)) {
                    roots.extend(archetype.entity_indices().iter().map(|&index| self.entities().entity_at(index)));
                }
            }
        }
        roots.sort_unstable();
        // Only children pointing back are followed, and no more entities
        // than are alive: no list can make it loop.
        let mut order = Vec::new();
        let mut stack = Vec::new();
        for root in roots {
            stack.push(root);
            while let Some(at) = stack.pop() {
                if order.len() == self.len() {
                    return order;
                }
                order.push(at);
                stack.extend(self.children_pointing_back(at).rev());
            }
        }
        order
    }

    /// Despawns `entity` and all its descendants, deepest first, running
    /// every hook; returns how many were despawned. It is one operation:
    /// each entity's hooks run just before it goes, and the commands hooks
    /// queue are applied after the last one. Linear in the entities
    /// removed. When no user hook, no observer and no relationship other
    /// than `ChildOf` watches any of them, the descendants skip the
    /// engine's own list upkeep, which only tidies lists that go too; a
    /// user hook or observer sees every child leave its parent's list one
    /// by one.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// let mut world = World::new();
    /// let tank = world.spawn(());
    /// let turret = world.spawn(ChildOf(tank));
    /// world.spawn(ChildOf(turret));
    /// assert_eq!(world.despawn_recursive(tank), Ok(3));
    /// assert!(world.is_empty());
    /// ```
    pub fn despawn_recursive(&mut self, entity: Entity) -> Result<usize, EntityError> {
        if !self.contains(entity) {
            return Err(EntityError::NoSuchEntity(entity));
        }
        // Only children that point back go (never an entity a list names
        // by mistake), each once.
        let mut all = vec![entity];
        all.extend(self.descendants(entity));
        // Deepest first: no parent is despawned before its children, so no
        // child is orphaned on the way. Hooks may have despawned some.
        all.reverse();
        Ok(self.despawn_tree(&all, entity))
    }
}
