//! Relationships: a component on a *source* entity that names one *target*
//! entity, paired with a component on the target that lists its sources.
//! The engine keeps the pair exact with hooks it installs itself, so a user
//! only ever writes the source side.
//!
//! ```text
//!   source a: ChildOf(p) ─┐
//!   source b: ChildOf(p) ─┼──▶  target p: Children[a, b, c]   (insertion order)
//!   source c: ChildOf(p) ─┘
//!
//!   insert / overwrite source   on_replace: leave the old target's list
//!                               on_insert:  join the new target's list, or,
//!                               if refused, put the replaced value back
//!                               (or remove the refused one)
//!   remove / despawn source     on_replace: leave the target's list
//!   target's list emptied       the list component is removed
//!   list inserted by hand       undone: the old list back, or none
//!   despawn target              sources orphaned (their relationship
//!                               removed), or despawned when the target
//!                               says `despawn_sources`
//! ```
//!
//! The lists change through the hooks' direct writes when the target has a
//! list already, else through one command per target that creates the list
//! for every source waiting for it, before the world method that set them
//! off returns. Nothing here scans other sources: a list is a
//! [`SourceList`], which a source joins and leaves in amortized O(1)
//! whatever its length, in join order; `clear` does no list upkeep, since
//! every list goes with its owner.
//! The engine's upkeep runs before the user's hooks and observers of an
//! insert, and after those of a removal, so a user's panic never leaves it
//! half done.

use std::any::TypeId;

use hashbrown::{HashMap, HashSet};

use crate::component::Component;
use crate::entity::{Entity, EntityLocation};
use crate::storage::column::Panics;
use crate::world::hooks::HookKind;
use crate::world::relations::{Cut, FirstList, LastJoin, Left, Place, Replaced, ReplacedList, Waiting};
use crate::world::World;

use super::sources::{EngineAccess, SourceList};

/// A component on a source entity that names one target entity, whose
/// [`RelationshipTarget`] component the engine keeps listing every source.
/// [`ChildOf`](crate::ChildOf) is one; declare your own with the derive:
///
/// ```
/// use archetable::prelude::*;
///
/// /// The item lies in the inventory of the entity it names.
/// #[derive(Component, Debug, PartialEq)]
/// #[component(relationship(target = Inventory))]
/// struct InInventory(Entity);
///
/// /// The items in an entity's inventory; kept by the engine.
/// #[derive(Component, Debug)]
/// #[component(relationship_target(source = InInventory, despawn_sources))]
/// struct Inventory(SourceList);
///
/// let mut world = World::new();
/// let hero = world.spawn(());
/// let sword = world.spawn(InInventory(hero));
/// let shield = world.spawn(InInventory(hero));
/// assert_eq!(world.get::<Inventory>(hero).unwrap().0, [sword, shield]);
/// world.despawn(hero).unwrap();
/// assert!(!world.contains(sword), "despawn_sources: the items go with their owner");
/// ```
///
/// The relationship never points at a dead entity, at its own entity, or
/// around a cycle: an insert that would is undone right after the world
/// method that made it, with a warning. If the insert replaced a value,
/// that value comes back, and the source goes back to its old place in
/// its old target's list; if it replaced none, the refused value is
/// removed. Hooks and observers see the undoing as an ordinary insert (or
/// removal): `on_replace` of the old value, then `on_insert` of the
/// refused one (the insert itself), then `on_replace` of the refused value
/// and `on_insert` of the old one. The old target's list stays in place
/// meanwhile. [`World::set_parent`](crate::World::set_parent) checks first
/// and changes nothing.
///
/// ```
/// use archetable::prelude::*;
///
/// let mut world = World::new();
/// let parent = world.spawn(());
/// let [a, b, c] = [(); 3].map(|_| world.spawn(ChildOf(parent)));
/// let grandchild = world.spawn(ChildOf(b));
/// world.insert(b, ChildOf(b)).unwrap(); // its own parent: refused
/// world.insert(b, ChildOf(grandchild)).unwrap(); // a cycle: refused
/// assert_eq!(world.parent(b), Some(parent));
/// assert_eq!(world.children(parent), [a, b, c]);
/// ```
pub trait Relationship: Component + Sized {
    /// The component that lists the sources on the target.
    type Target: RelationshipTarget<Relationship = Self>;

    /// The entity this source points at.
    fn target(&self) -> Entity;

    /// A relationship pointing at `target`.
    fn from_target(target: Entity) -> Self;
}

/// The component on a target entity that lists every source whose
/// [`Relationship`] names it, in the order they joined. Kept by the
/// engine: edit the sources' relationships, never the list. A list
/// inserted by hand (`World::insert`, a spawn, commands) is undone right
/// after the world method that made it, with a warning: the entity gets
/// back the list it had, sources and order unchanged, or loses the one it
/// was given; no source gains or loses its relationship. The editing API
/// of saves and the inspector refuses it outright
/// (`EditError::EngineKept`). Lists that loads, prefabs and column
/// batches place whole, beside the sources that point at them, are kept.
/// Removing the list by hand orphans its sources.
///
/// ```
/// use archetable::prelude::*;
///
/// let mut world = World::new();
/// let parent = world.spawn(());
/// let [a, b] = [(); 2].map(|_| world.spawn(ChildOf(parent)));
/// world.insert(parent, Children::default()).unwrap(); // undone
/// assert_eq!(world.children(parent), [a, b]);
/// let lone = world.spawn(Children::default()); // undone: no list
/// assert!(!world.has::<Children>(lone));
/// ```
pub trait RelationshipTarget: Component + Sized {
    /// The component on the sources.
    type Relationship: Relationship<Target = Self>;

    /// Whether despawning the target despawns its sources (recursively);
    /// otherwise they are orphaned (their relationship removed).
    const DESPAWN_SOURCES: bool = false;

    /// The sources, in the order they joined.
    fn sources(&self) -> &SourceList;

    /// The list itself, for the engine's hooks (only the engine can pass
    /// an [`EngineAccess`]).
    #[doc(hidden)]
    fn sources_mut(&mut self, access: EngineAccess) -> &mut SourceList;

    /// A target component listing `sources`, for the engine's hooks.
    #[doc(hidden)]
    fn from_sources(sources: SourceList, access: EngineAccess) -> Self;
}

/// Installs the hooks of relationship `R` in `world`: what the derive's
/// `relationship(target = ..)` names as the component's engine hooks.
#[doc(hidden)]
pub fn install_relationship<R: Relationship>(world: &mut World) {
    world
        .register_component_hooks::<R>()
        .push_plain(HookKind::Insert, join::<R>)
        .push_plain(HookKind::Replace, leave::<R>)
        .push_plain(HookKind::Remove, forget_replaced::<R>)
        .set_spawn_join(join_spawned_quick::<R>);
    world.add_relationship(check::<R>, detach::<R>);
}

/// Installs the hooks of the list component `T`: what the derive's
/// `relationship_target(source = ..)` names as the component's engine hooks.
#[doc(hidden)]
pub fn install_target<T: RelationshipTarget>(world: &mut World) {
    world
        .register_component_hooks::<T>()
        .push_plain(HookKind::Despawn, despawn_sources::<T>)
        .push_plain(HookKind::Replace, orphan_sources::<T>)
        .push_plain(HookKind::Remove, forget_replaced_list::<T>)
        .push_plain(HookKind::Insert, refuse_by_hand::<T>);
}

/// `R`'s `on_insert`: the source joins its target's list, unless the
/// target is dead, itself, or its own descendant. One push when the list
/// exists; otherwise the source waits with the others that joined the same
/// target, and one command creates the list for all of them.
fn join<R: Relationship>(world: &mut World, source: Entity, spawned: Option<EntityLocation>) {
    if let Some(at) = spawned
        && join_spawned::<R>(world, source, at)
    {
        return;
    }
    let replaced = take_replaced::<R>(world, source);
    let Some((relationship, listing)) = world.get_and_has::<R, R::Target>(source) else { return };
    let target = relationship.target();
    let may_have_sources = listing || world.relations().is_pending_target(TypeId::of::<R>(), source);
    // The common case first: the target has a list (so it is alive) and
    // the source cannot be its ancestor. A batch placed whole (a load) may
    // have put the source in the list already: those joins wait, and the
    // list is checked once per target.
    if target != source
        && !world.relations().placed_lists
        && !(may_have_sources && reaches::<R>(world, target, source))
        && let Some(list) = world.get_mut_changed::<R::Target>(target)
    {
        list.sources_mut(EngineAccess::GRANTED).push(source);
        return;
    }
    if let Some(problem) = refusal_given::<R>(world, source, target, may_have_sources) {
        let name = short::<R>();
        match replaced {
            Some(replaced) => {
                crate::entity::error::warn(&format!(
                    "archetable: {} cannot point at {} through `{name}`: {problem}; \
                     the `{name}` it replaced (pointing at {}) was put back",
                    world.entity_label(source),
                    world.entity_label(target),
                    world.entity_label(replaced.target)
                ));
                world.relations_mut().returning.push(replaced);
                queue_cut(world, Cut { source, target, run: put_back_replaced::<R> });
            }
            None => {
                crate::entity::error::warn(&format!(
                    "archetable: {} cannot point at {} through `{name}`: {problem}; \
                     the relationship was removed",
                    world.entity_label(source),
                    world.entity_label(target)
                ));
                queue_cut(world, Cut { source, target, run: orphan::<R> });
            }
        }
        return;
    }
    // No list yet (or a batch placed whole): wait for it.
    let waiting = world
        .relations_mut()
        .pending
        .entry((TypeId::of::<R>(), target))
        .or_insert_with(|| Waiting { sources: Vec::new(), create: create_list::<R> });
    waiting.sources.push(source);
    if waiting.sources.len() == 1 {
        world.defer(move |world| create_list::<R>(world, target));
    }
}

/// [`join`] of a source spawned just now at `at`, when its target has a
/// list: one push. Nothing can point at a fresh entity, so no cycle is
/// possible. Whether it joined; if not, the general path decides.
///
/// The places it looked up are kept ([`LastJoin`]): the next source spawned
/// into the same table under the same target reads its relationship and
/// finds the list there, after checking that the target has not moved.
#[inline(always)]
fn join_spawned<R: Relationship>(world: &mut World, source: Entity, at: EntityLocation) -> bool {
    if world.relations().placed_lists {
        return false;
    }
    join_fresh::<R>(world, source, at, false)
}

/// [`join_spawned`] of a source that no list can hold yet: one that
/// `World::spawn` created just now, not one placed whole with its lists.
/// With `first`, only as the one hook of a spawn, a target without a list
/// gets its first ([`first_list_of_spawned`]).
#[inline(always)]
fn join_fresh<R: Relationship>(world: &mut World, source: Entity, at: EntityLocation, first: bool) -> bool {
    // Another relationship's entry fails the column's type check.
    let last = world.relations().last_join;
    if let Some(last) = last
        && last.source_table == at.archetype
        && let Some(target) = world.get_in_column::<R>(at, last.source_column as usize).map(R::target)
    {
        if target == last.target
            && let Some(list) =
                world.get_mut_changed_in_column::<R::Target>(last.target, last.target_at, last.list_column as usize)
        {
            // The target is alive (the entity table says it is where it
            // was), so it is not the source, which was not alive before.
            list.sources_mut(EngineAccess::GRANTED).push(source);
            return true;
        }
        // Same table, another target (a parent's first child, or the
        // source of another parent): the relationship's column is known.
        return join_spawned_at::<R>(world, source, at, last.source_column as usize, target, first);
    }
    join_spawned_looked_up::<R>(world, source, at, first)
}

/// The relationship's [`SpawnJoin`](crate::world::hooks::SpawnJoin): the
/// join of a source `World::spawn` created just now, when nothing but this
/// relationship watches the spawn. The engine runs it in place of the
/// insert hook ([`join`]), and runs the hook if it returns false.
fn join_spawned_quick<R: Relationship>(world: &mut World, source: Entity, at: EntityLocation) -> bool {
    join_fresh::<R>(world, source, at, true)
}

/// [`join_spawned_quick`] under a living target (not the source, found at
/// `from`) that has no list yet: places the list, holding `source` alone, straight into the
/// target, where the general path would have the source wait for a
/// command to create it. Only when nothing else can tell the two apart: no
/// source waits for a list, no lists were placed whole, the list is kept
/// in a table, and nothing of the user's watches its insert (the engine's
/// [`refuse_by_hand`] would let a list it places be, so it is not run). Runs only as the one hook
/// of a spawn, never among other hooks: moving the target may move the
/// source, whose place another hook would have been given.
#[inline(never)]
fn first_list_of_spawned<R: Relationship>(
    world: &mut World,
    source: Entity,
    at: EntityLocation,
    source_column: usize,
    target: Entity,
    from: EntityLocation,
) -> bool {
    if <R::Target as Component>::STORAGE != crate::component::StorageType::Table
        || !world.relations().pending.is_empty()
        || world.relations().placed_lists
        || !world.insert_of_new_runs_engine_only::<R::Target>()
    {
        return false;
    }
    let (before, known) = (world.relations().last_join, world.relations().list_bundle);
    let list = SourceList::with_first(source);
    match world.insert_unhooked_known(target, R::Target::from_sources(list, EngineAccess::GRANTED), known) {
        Ok(bundle) => world.relations_mut().list_bundle = Some(bundle),
        Err(_) => return false,
    }
    // The target moved to a table with a list: the next source spawned
    // under it joins through the places kept here. The previous first
    // list often went to the same table: its column, if it holds lists.
    let Some(target_at) = world.location(target) else { return true };
    let kind = TypeId::of::<R::Target>();
    let list_column = match world.relations().first_list {
        Some(first) if first.kind == kind && first.from == from.archetype && first.to == target_at.archetype => {
            Some(first.column as usize)
        }
        _ => list_column_in::<R>(world, target_at, before),
    };
    if let Some(list_column) = list_column {
        if from.archetype != target_at.archetype {
            let (from, to, column) = (from.archetype, target_at.archetype, list_column as u32);
            world.relations_mut().first_list = Some(FirstList { kind, from, to, column });
        }
        world.relations_mut().last_join = Some(LastJoin {
            source_table: at.archetype,
            source_column: source_column as u32,
            target,
            target_at,
            list_column: list_column as u32,
        });
    }
    true
}

/// [`join_spawned`] without a [`LastJoin`] that fits: looks the places up
/// and keeps them.
#[inline(never)]
fn join_spawned_looked_up<R: Relationship>(world: &mut World, source: Entity, at: EntityLocation, first: bool) -> bool {
    let Some(source_column) = world.column_of::<R>(at) else { return false };
    let Some(target) = world.get_in_column::<R>(at, source_column).map(R::target) else { return false };
    join_spawned_at::<R>(world, source, at, source_column, target, first)
}

/// The column of `R::Target` in the table at `at`, if it has one. When
/// `hint`'s list column holds `R::Target`s: that column if the table is the
/// same, else the list's component looked up in the table by the id found
/// there; otherwise looked up by type.
#[inline(always)]
fn list_column_in<R: Relationship>(world: &World, at: EntityLocation, hint: Option<LastJoin>) -> Option<usize> {
    if let Some(hint) = hint
        && let Some(list) = world.component_in_column::<R::Target>(hint.target_at.archetype, hint.list_column as usize)
    {
        if hint.target_at.archetype == at.archetype {
            return Some(hint.list_column as usize);
        }
        return world.column_of_id(at, list);
    }
    world.column_of::<R::Target>(at)
}

/// [`join_spawned_looked_up`] once the relationship's column
/// (`source_column`) and `target` are known.
#[inline(never)]
fn join_spawned_at<R: Relationship>(
    world: &mut World,
    source: Entity,
    at: EntityLocation,
    source_column: usize,
    target: Entity,
    first: bool,
) -> bool {
    if target == source {
        return false;
    }
    let Some(target_at) = world.location(target) else { return false };
    // A target in the table the last first list was placed out of has no
    // list ([`FirstList`]).
    if let Some(known) = world.relations().first_list
        && known.from == target_at.archetype
        && known.kind == TypeId::of::<R::Target>()
    {
        debug_assert_eq!(world.column_of::<R::Target>(target_at), None);
        return first && first_list_of_spawned::<R>(world, source, at, source_column, target, target_at);
    }
    let Some(list_column) = list_column_in::<R>(world, target_at, world.relations().last_join) else {
        return first && first_list_of_spawned::<R>(world, source, at, source_column, target, target_at);
    };
    let Some(list) = world.get_mut_changed_in_column::<R::Target>(target, target_at, list_column) else {
        return false;
    };
    list.sources_mut(EngineAccess::GRANTED).push(source);
    world.relations_mut().last_join = Some(LastJoin {
        source_table: at.archetype,
        source_column: source_column as u32,
        target,
        target_at,
        list_column: list_column as u32,
    });
    true
}

/// Adds the sources waiting for `target` to its list, creating the list,
/// each that still points there (a later command may have moved or removed
/// it) and is not listed yet, in the order they joined.
fn create_list<R: Relationship>(world: &mut World, target: Entity) {
    let Some(Waiting { sources: waiting, .. }) = world.relations_mut().pending.remove(&(TypeId::of::<R>(), target))
    else {
        return;
    };
    if !world.contains(target) {
        return;
    }
    if let Some(mut list) = world.get_mut_any::<R::Target>(target) {
        // Each waiting source is looked up in the list.
        list.sources_mut(EngineAccess::GRANTED).ensure_index();
    }
    let listed = world.get::<R::Target>(target).map(R::Target::sources);
    let mut seen: HashSet<Entity> = HashSet::with_capacity(waiting.len());
    let joining: Vec<Entity> = waiting
        .into_iter()
        .filter(|&source| {
            world.get::<R>(source).map(R::target) == Some(target)
                && !listed.is_some_and(|list| list.contains(source))
                && seen.insert(source)
        })
        .collect();
    if joining.is_empty() {
        return;
    }
    match world.get_mut_any::<R::Target>(target) {
        Some(mut list) => {
            let list = list.sources_mut(EngineAccess::GRANTED);
            for source in joining {
                list.push(source);
            }
        }
        None => {
            let list = SourceList::from_unique(joining);
            // The list's `on_insert` runs first after the write and takes
            // this mark: the engine's own list, not one inserted by hand.
            world.relations_mut().engine_list = Some((TypeId::of::<R::Target>(), target));
            let _ = world.insert(target, R::Target::from_sources(list, EngineAccess::GRANTED));
            world.relations_mut().engine_list = None;
        }
    }
}

/// `R`'s `on_replace`: the source leaves its target's list; an emptied list
/// is removed once the operation is over (unless something joined again).
/// Where it was is kept until the insert replacing it decides (the
/// world's `relations().replaced`): if that insert is refused, the source
/// comes back there. A source its target
/// never listed (a refused value on its way out) leaves nothing.
fn leave<R: Relationship>(world: &mut World, source: Entity, _: Option<EntityLocation>) {
    let Some(target) = world.get::<R>(source).map(R::target) else { return };
    let kind = TypeId::of::<R>();
    // A rollback may have to bring the source back here, where it was.
    let in_txn = !world.relations().txn_marks.is_empty();
    let Some(mut list) = world.get_mut_any::<R::Target>(target) else {
        // Still waiting for the list: it is not created for this source.
        let waited = match world.relations_mut().pending.get_mut(&(kind, target)) {
            Some(waiting) => {
                let before = waiting.sources.len();
                waiting.sources.retain(|&e| e != source);
                waiting.sources.len() != before
            }
            None => false,
        };
        if waited {
            if in_txn {
                world.relations_mut().left.push(Left { kind, source, target, place: Place::Unknown });
            }
            remember_replaced(world, Replaced { kind, source, target, place: Place::Unknown });
        }
        return;
    };
    let sources = list.sources_mut(EngineAccess::GRANTED);
    let Some(place) = sources.remove_placed(source) else { return };
    let emptied = sources.is_empty();
    if in_txn {
        world.relations_mut().left.push(Left { kind, source, target, place });
    }
    remember_replaced(world, Replaced { kind, source, target, place });
    if emptied {
        // With the cuts, so that a panicking command before it cannot
        // leave the empty list behind.
        queue_cut(world, Cut { source, target, run: drop_empty_list::<R> });
    }
}

/// Keeps `replaced` until the insert that replaces the source's
/// relationship joins (or a removal forgets it); one per source and type.
fn remember_replaced(world: &mut World, replaced: Replaced) {
    let kept = &mut world.relations_mut().replaced;
    kept.retain(|r| (r.kind, r.source) != (replaced.kind, replaced.source));
    kept.push(replaced);
}

/// The place `source` left when its `R` was replaced, taken out: what a
/// refused insert puts back.
#[inline]
fn take_replaced<R: Relationship>(world: &mut World, source: Entity) -> Option<Replaced> {
    if world.relations().replaced.is_empty() {
        return None;
    }
    let kept = &mut world.relations_mut().replaced;
    let kind = TypeId::of::<R>();
    let at = kept.iter().position(|r| r.kind == kind && r.source == source)?;
    Some(kept.swap_remove(at))
}

/// `R`'s `on_remove`: a removal (or despawn) replaces the relationship
/// with nothing, so there is no insert to undo.
fn forget_replaced<R: Relationship>(world: &mut World, source: Entity, _: Option<EntityLocation>) {
    take_replaced::<R>(world, source);
}

/// A [`Cut`] of a refused insert that replaced a relationship: `source`
/// gets back the value it had (an insert, with hooks: `on_replace` of the
/// refused value, `on_insert` of the old one), at its old place in its old
/// target's list. If the old target cannot take it back any more (it died
/// meanwhile), the refused value is removed instead.
fn put_back_replaced<R: Relationship>(world: &mut World, source: Entity, refused: Entity) {
    let kind = TypeId::of::<R>();
    let returning = &mut world.relations_mut().returning;
    let Some(at) = returning.iter().position(|r| r.kind == kind && r.source == source) else { return };
    let old = returning.swap_remove(at);
    let done = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        if world.get::<R>(source).map(R::target) != Some(refused) {
            // Changed again since: nothing to undo.
            return;
        }
        if refusal::<R>(world, source, old.target).is_some() {
            orphan::<R>(world, source, refused);
            return;
        }
        cut::<R>(world, source, refused, |world| {
            let _ = world.insert(source, R::from_target(old.target));
        });
        if let Some(list) = world.get_mut_changed::<R::Target>(old.target)
            && list.sources().contains(source)
        {
            list.sources_mut(EngineAccess::GRANTED).put_back(&[(source, old.place)]);
        }
    }));
    // The old list, kept while the source was on its way back, goes if
    // it is still empty.
    drop_empty_list::<R>(world, source, old.target);
    if let Err(payload) = done {
        std::panic::resume_unwind(payload);
    }
}

/// A [`Cut`]: `target`'s list of `R` sources goes if it is still empty
/// (nothing joined since); without hooks if a user hook stops its removal.
fn drop_empty_list<R: Relationship>(world: &mut World, _source: Entity, target: Entity) {
    let empty = |world: &World| world.get::<R::Target>(target).is_some_and(|list| list.sources().is_empty());
    if !empty(world) {
        return;
    }
    // A source on its way back (a refused insert undone) drops it itself
    // if it does not come back.
    let kind = TypeId::of::<R>();
    if world.relations().returning.iter().any(|r| r.kind == kind && r.target == target) {
        return;
    }
    let done = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = world.remove::<R::Target>(target);
    }));
    if empty(world) {
        let _ = world.remove_unhooked::<R::Target>(target);
    }
    if let Err(payload) = done {
        std::panic::resume_unwind(payload);
    }
}

/// The list's `on_despawn`: with `DESPAWN_SOURCES`, the sources go too.
fn despawn_sources<T: RelationshipTarget>(world: &mut World, target: Entity, _: Option<EntityLocation>) {
    if !T::DESPAWN_SOURCES {
        return;
    }
    let Some(list) = world.get::<T>(target) else { return };
    let sources: Vec<Entity> = list.sources().iter().copied().filter(|&e| world.contains(e)).collect();
    for source in sources {
        queue_cut(world, Cut { source, target, run: despawn_source::<T::Relationship> });
    }
}

/// The list's `on_replace` (removed, despawned, overwritten): the sources
/// still pointing here lose their relationship, unless the list that
/// replaces this one names them (the same list, put back by
/// [`refuse_by_hand`]). Sources that went before the list (a recursive
/// despawn, deepest first) are passed over. The sources are kept until
/// the operation's `on_remove` or `on_insert` of the list.
fn orphan_sources<T: RelationshipTarget>(world: &mut World, target: Entity, _: Option<EntityLocation>) {
    let Some(list) = world.get::<T>(target) else { return };
    let sources: Vec<Entity> = list.sources().iter().copied().filter(|&e| world.contains(e)).collect();
    for &source in &sources {
        queue_cut(world, Cut { source, target, run: orphan::<T::Relationship> });
    }
    let kind = TypeId::of::<T>();
    let kept = &mut world.relations_mut().replaced_lists;
    kept.retain(|r| (r.kind, r.target) != (kind, target));
    kept.push(ReplacedList { kind, target, sources });
}

/// The sources the list of `target` named before the operation that is
/// overwriting it, taken out.
fn take_replaced_list<T: RelationshipTarget>(world: &mut World, target: Entity) -> Option<Vec<Entity>> {
    let kept = &mut world.relations_mut().replaced_lists;
    if kept.is_empty() {
        return None;
    }
    let kind = TypeId::of::<T>();
    let at = kept.iter().position(|r| r.kind == kind && r.target == target)?;
    Some(kept.swap_remove(at).sources)
}

/// The list's `on_remove` (removed or despawned): nothing replaces it.
fn forget_replaced_list<T: RelationshipTarget>(world: &mut World, target: Entity, _: Option<EntityLocation>) {
    take_replaced_list::<T>(world, target);
}

/// The list's `on_insert`: a list the engine did not make (inserted by
/// hand, through a spawn, an insert or commands) is undone with a warning,
/// as the editing API refuses it: the entity gets back the list it had,
/// which its sources still point at, or loses the one it was given. Lists
/// the engine creates, and those a batch places whole with their sources
/// (loads, prefabs, column batches), are kept.
fn refuse_by_hand<T: RelationshipTarget>(world: &mut World, target: Entity, _: Option<EntityLocation>) {
    let kind = TypeId::of::<T>();
    let old = take_replaced_list::<T>(world, target);
    if world.relations().engine_list == Some((kind, target)) {
        world.relations_mut().engine_list = None;
        return;
    }
    if world.relations().placed_lists {
        return;
    }
    crate::entity::error::warn(&format!(
        "archetable: a `{}` list was inserted on {target} by hand; the engine keeps it from its sources' `{}`, \
         so the insert was undone",
        short::<T>(),
        short::<T::Relationship>()
    ));
    let Some(mut list) = world.get_mut_any::<T>(target) else { return };
    let sources = list.sources_mut(EngineAccess::GRANTED);
    let mut restored = SourceList::from_unique(old.unwrap_or_default());
    // The cuts each look their source up in it.
    restored.ensure_index();
    let emptied = restored.is_empty();
    *sources = restored;
    if emptied {
        queue_cut(world, Cut { source: target, target, run: drop_empty_list::<T::Relationship> });
    }
}

/// Queues `cut` for the end of the operation (one command applies every
/// cut waiting; the operation's end settles them if a command panics).
fn queue_cut(world: &mut World, cut: Cut) {
    let cuts = &mut world.relations_mut().cuts;
    cuts.push(cut);
    if cuts.len() == 1 {
        world.defer(World::settle_cuts);
    }
}

/// A [`Cut`]: `source` loses its relationship to `target`, unless the
/// target's list names it (a list inserted by hand was undone meanwhile).
fn orphan<R: Relationship>(world: &mut World, source: Entity, target: Entity) {
    if world.get::<R>(source).map(R::target) == Some(target)
        && !world.get::<R::Target>(target).is_some_and(|list| list.sources().contains(source))
    {
        cut::<R>(world, source, target, |world| {
            let _ = world.remove::<R>(source);
        });
    }
}

/// A [`Cut`]: `source` goes with `target` (`despawn_sources`).
fn despawn_source<R: Relationship>(world: &mut World, source: Entity, target: Entity) {
    if world.get::<R>(source).map(R::target) == Some(target) {
        cut::<R>(world, source, target, |world| {
            let _ = world.despawn(source);
        });
    }
}

/// Runs `change`, which removes `source`'s link to `target` (a removal or
/// a despawn, with hooks). If a user hook or observer panics before the
/// change is done and `source` still points at `target` without being in
/// its list (the list went, or never took it), the link is cut without
/// hooks; then the panic goes on. So no source is left pointing at a
/// target that does not list it, whatever user code does.
fn cut<R: Relationship>(world: &mut World, source: Entity, target: Entity, change: impl FnOnce(&mut World)) {
    let done = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| change(world)));
    if let Err(payload) = done {
        let listed = world.get::<R::Target>(target).is_some_and(|list| list.sources().contains(source));
        if world.get::<R>(source).map(R::target) == Some(target) && !listed {
            let _ = world.remove_unhooked::<R>(source);
        }
        std::panic::resume_unwind(payload);
    }
}

/// Cuts `R`'s links between the entities of `going` (about to be
/// despawned without hooks, by a rollback) and those that stay: a staying
/// target's list forgets its going sources (and goes if emptied), a staying
/// source of a going target goes back to the last target it left in the
/// transaction that stays, where it left its list (just after the source
/// it followed then), or else loses its relationship. Linear in the
/// entities going and the lists they touch.
fn detach<R: Relationship>(world: &mut World, going: &HashSet<Entity>) {
    let mut lists: HashSet<Entity> = HashSet::new();
    let mut orphans = Vec::new();
    for &entity in going {
        if let Some(target) = world.get::<R>(entity).map(R::target)
            && !going.contains(&target)
        {
            lists.insert(target);
        }
        if let Some(list) = world.get::<R::Target>(entity) {
            orphans.extend(list.sources().iter().copied().filter(|s| !going.contains(s)));
        }
    }
    // Sources still waiting for the list of a going target (the command
    // that would create it was lost to a panic) are orphaned the same way.
    let kind = TypeId::of::<R>();
    let waiting: Vec<Entity> = world
        .relations()
        .pending
        .iter()
        .filter(|((k, target), _)| *k == kind && going.contains(target))
        .flat_map(|(_, waiting)| waiting.sources.iter().copied())
        .filter(|s| !going.contains(s))
        .collect();
    orphans.extend(waiting.into_iter().filter(|&s| world.get::<R>(s).is_some_and(|r| going.contains(&r.target()))));
    world.relations_mut().pending.retain(|(k, target), _| *k != kind || !going.contains(target));
    // A user hook or observer that panics here does not stop the rest:
    // the first panic goes on once every link is cut, and whatever a
    // panicking removal left is taken out without hooks.
    let mut panics = Panics::default();
    for target in lists {
        let emptied = match world.get_mut_any::<R::Target>(target) {
            Some(mut list) => {
                list.sources_mut(EngineAccess::GRANTED).retain(|s| !going.contains(&s));
                list.sources().is_empty()
            }
            None => false,
        };
        if emptied {
            panics.run(|| {
                let _ = world.remove::<R::Target>(target);
            });
            if world.get::<R::Target>(target).is_some_and(|list| list.sources().is_empty()) {
                let _ = world.remove_unhooked::<R::Target>(target);
            }
        }
    }
    // The last target each source left in the transaction that stays,
    // with the place it left and when.
    let mut earlier: HashMap<Entity, (usize, Left)> = HashMap::new();
    for (when, left) in world.left_in_txn().iter().enumerate() {
        if left.kind == kind && !going.contains(&left.target) && world.contains(left.target) {
            earlier.insert(left.source, (when, *left));
        }
    }
    // Undone latest first, so that each goes back next to the source it
    // followed then, which the later ones' return has put back.
    orphans.sort_by_key(|source| std::cmp::Reverse(earlier.get(source).map(|&(when, _)| when)));
    // Per staying target, the sources it gets back (joining at the end),
    // to put in their places in one pass over its list at the end.
    let mut returns: HashMap<Entity, Vec<(Entity, Place)>> = HashMap::new();
    for source in orphans {
        // The going target's list loses the source through the hook; the
        // target goes right after, without hooks.
        panics.run(|| match earlier.get(&source) {
            Some(&(_, left)) if refusal::<R>(world, source, left.target).is_none() => {
                let _ = world.insert(source, R::from_target(left.target));
                returns.entry(left.target).or_default().push((source, left.place));
            }
            _ => {
                let _ = world.remove::<R>(source);
            }
        });
        if world.get::<R>(source).is_some_and(|r| going.contains(&r.target())) {
            // A user hook stopped the change before the engine's upkeep:
            // the going target's list goes with it, so only the link is
            // left to cut.
            let _ = world.remove_unhooked::<R>(source);
        }
    }
    for (target, returns) in returns {
        if let Some(list) = world.get_mut_changed::<R::Target>(target) {
            list.sources_mut(EngineAccess::GRANTED).put_back(&returns);
        }
    }
    panics.finish();
}

/// Why `source` may not point at `target`, if it may not.
pub(crate) fn refusal<R: Relationship>(world: &World, source: Entity, target: Entity) -> Option<&'static str> {
    refusal_given::<R>(world, source, target, may_have_sources::<R>(world, source))
}

/// [`refusal`], told whether some entity may point at `source`
/// ([`may_have_sources`]).
#[inline]
fn refusal_given<R: Relationship>(
    world: &World,
    source: Entity,
    target: Entity,
    may_have_sources: bool,
) -> Option<&'static str> {
    if target == source {
        Some("an entity cannot be its own target")
    } else if !world.contains(target) {
        Some("the target is not alive")
    } else if may_have_sources && reaches::<R>(world, target, source) {
        Some("the target is a descendant of the source, which would make a cycle")
    } else {
        None
    }
}

/// Whether some entity may point at `entity` through `R`: it has a list, or
/// sources wait for its list to be created. Only such an entity can have a
/// target below it, so a leaf (every fresh spawn) skips the cycle walk.
pub(crate) fn may_have_sources<R: Relationship>(world: &World, entity: Entity) -> bool {
    world.has::<R::Target>(entity) || world.relations().is_pending_target(TypeId::of::<R>(), entity)
}

/// Whether following `R` up from `from` reaches `to`: at most the depth of
/// `from`. Bounded by the number of entities, so a cycle made some other
/// way cannot hang it.
pub(crate) fn reaches<R: Relationship>(world: &World, from: Entity, to: Entity) -> bool {
    let mut at = from;
    for _ in 0..=world.len() {
        if at == to {
            return true;
        }
        match world.get::<R>(at) {
            Some(r) => at = r.target(),
            None => return false,
        }
    }
    true
}

/// Checks that `R` and its list agree everywhere and form a forest: every
/// source points at a live target whose list names it exactly once, every
/// list names only live sources that point back (never its owner), no list
/// is empty, and no source is its own ancestor.
///
/// Linear in the sources and lists: each source's chain of targets is
/// walked up only until it meets a source already known to lead to a root,
/// so a tree is walked once, not once per entity.
fn check<R: Relationship>(world: &World) -> Result<(), String> {
    let name = short::<R>();
    // Every source some list names (and which points back at it).
    let mut listed: HashSet<Entity> = HashSet::new();
    for (target, list) in world.query::<(Entity, &R::Target)>() {
        if list.sources().is_empty() {
            return Err(format!("{target} keeps an empty list of `{name}` sources"));
        }
        list.sources().check().map_err(|problem| format!("{target}'s `{name}` list: {problem}"))?;
        for &source in list.sources() {
            if source == target {
                return Err(format!("{target}'s `{name}` list names its owner"));
            }
            if world.get::<R>(source).map(R::target) != Some(target) {
                return Err(format!("{target}'s list names {source}, whose `{name}` does not point back"));
            }
            listed.insert(source);
        }
    }
    // The walk that first reached each source: a source reached by an
    // earlier walk leads to a root (that walk ended at one, or returned).
    let mut walked: HashMap<Entity, usize> = HashMap::new();
    for (walk, (source, r)) in world.query::<(Entity, &R)>().enumerate() {
        let target = r.target();
        if !world.has::<R::Target>(target) {
            return Err(format!("{source}'s `{name}` names {target}, which has no list of sources"));
        }
        if !listed.contains(&source) {
            return Err(format!("{source}'s `{name}` names {target}, whose list does not name it"));
        }
        // Up from `source` until a root or a source an earlier walk reached.
        let mut at = source;
        loop {
            match walked.insert(at, walk) {
                Some(earlier) if earlier == walk => return Err(format!("{at}'s `{name}` is part of a cycle")),
                Some(earlier) => {
                    walked.insert(at, earlier);
                    break;
                }
                None => {}
            }
            match world.get::<R>(at) {
                Some(r) => at = r.target(),
                None => break,
            }
        }
    }
    Ok(())
}

fn short<T>() -> &'static str {
    let name = std::any::type_name::<T>();
    name.rsplit("::").next().unwrap_or(name)
}
