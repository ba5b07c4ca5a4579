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
//!                               on_insert:  join the new target's list
//!   remove / despawn source     on_replace: leave the target's list
//!   target's list emptied       the list component is removed
//!   despawn target              sources orphaned (their relationship
//!                               removed), or despawned when the target
//!                               says `despawn_sources`
//! ```
//!
//! The lists change through the hooks' direct writes when the target has a
//! list already, else through commands that apply before the world method
//! that set them off returns. Nothing here scans other sources: joining or
//! leaving a list is one push, or one search of that list (its length).

use crate::component::Component;
use crate::entity::Entity;
use crate::world::hooks::{HookKind, HookWorld};
use crate::world::World;

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
/// struct Inventory(Vec<Entity>);
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
/// method that made it, with a warning.
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
/// engine: never insert or edit it yourself.
pub trait RelationshipTarget: Component + Sized {
    /// The component on the sources.
    type Relationship: Relationship<Target = Self>;

    /// Whether despawning the target despawns its sources (recursively);
    /// otherwise they are orphaned (their relationship removed).
    const DESPAWN_SOURCES: bool = false;

    /// The sources, in the order they joined.
    fn sources(&self) -> &[Entity];

    /// The list itself, for the engine's hooks.
    #[doc(hidden)]
    fn sources_mut(&mut self) -> &mut Vec<Entity>;

    /// A target component listing `sources`, for the engine's hooks.
    #[doc(hidden)]
    fn from_sources(sources: Vec<Entity>) -> Self;
}

/// Installs the hooks of relationship `R` in `world`: what the derive's
/// `relationship(target = ..)` names as the component's engine hooks.
#[doc(hidden)]
pub fn install_relationship<R: Relationship>(world: &mut World) {
    world
        .register_component_hooks::<R>()
        .push_plain(HookKind::Insert, join::<R>)
        .push_plain(HookKind::Replace, leave::<R>);
    world.add_relationship_check(check::<R>);
}

/// Installs the hooks of the list component `T`: what the derive's
/// `relationship_target(source = ..)` names as the component's engine hooks.
#[doc(hidden)]
pub fn install_target<T: RelationshipTarget>(world: &mut World) {
    world
        .register_component_hooks::<T>()
        .push_plain(HookKind::Despawn, despawn_sources::<T>)
        .push_plain(HookKind::Replace, orphan_sources::<T>);
}

/// `R`'s `on_insert`: the source joins its target's list, unless the
/// target is dead, itself, or its own descendant.
fn join<R: Relationship>(world: &mut HookWorld<'_>, source: Entity) {
    let Some(target) = world.get::<R>(source).map(R::target) else { return };
    if let Some(problem) = refusal::<R>(world.world(), source, target) {
        crate::entity::error::warn(&format!(
            "archetable: {source} cannot point at {target} through `{}`: {problem}; the relationship was removed",
            short::<R>()
        ));
        world.commands().add(move |world| {
            if world.get::<R>(source).map(R::target) == Some(target) {
                let _ = world.remove::<R>(source);
            }
        });
        return;
    }
    if let Some(mut list) = world.get_mut::<R::Target>(target) {
        let sources = list.sources_mut();
        if !sources.contains(&source) {
            sources.push(source);
        }
        return;
    }
    world.commands().add(move |world| add_source::<R>(world, target, source));
}

/// Adds `source` to `target`'s list, creating the list, if the source still
/// points there (a later command may have moved or removed it).
fn add_source<R: Relationship>(world: &mut World, target: Entity, source: Entity) {
    if world.get::<R>(source).map(R::target) != Some(target) || !world.contains(target) {
        return;
    }
    match world.get_mut::<R::Target>(target) {
        Some(mut list) => {
            if !list.sources().contains(&source) {
                list.sources_mut().push(source);
            }
        }
        None => {
            let _ = world.insert(target, R::Target::from_sources(vec![source]));
        }
    }
}

/// `R`'s `on_replace`: the source leaves its target's list; an emptied list
/// is removed once the operation is over (unless something joined again).
fn leave<R: Relationship>(world: &mut HookWorld<'_>, source: Entity) {
    let Some(target) = world.get::<R>(source).map(R::target) else { return };
    let Some(mut list) = world.get_mut::<R::Target>(target) else { return };
    let sources = list.sources_mut();
    if let Some(i) = sources.iter().position(|&e| e == source) {
        sources.remove(i);
    }
    if sources.is_empty() {
        world.commands().add(move |world| {
            if world.get::<R::Target>(target).is_some_and(|list| list.sources().is_empty()) {
                let _ = world.remove::<R::Target>(target);
            }
        });
    }
}

/// The list's `on_despawn`: with `DESPAWN_SOURCES`, the sources go too.
fn despawn_sources<T: RelationshipTarget>(world: &mut HookWorld<'_>, target: Entity) {
    if !T::DESPAWN_SOURCES {
        return;
    }
    let Some(list) = world.get::<T>(target) else { return };
    let sources = list.sources().to_vec();
    for source in sources {
        world.commands().add(move |world| {
            if world.get::<T::Relationship>(source).map(|r| r.target()) == Some(target) {
                let _ = world.despawn(source);
            }
        });
    }
}

/// The list's `on_replace` (removed, despawned, overwritten): the sources
/// still pointing here lose their relationship.
fn orphan_sources<T: RelationshipTarget>(world: &mut HookWorld<'_>, target: Entity) {
    let Some(list) = world.get::<T>(target) else { return };
    let sources = list.sources().to_vec();
    for source in sources {
        world.commands().add(move |world| {
            if world.get::<T::Relationship>(source).map(|r| r.target()) == Some(target) {
                let _ = world.remove::<T::Relationship>(source);
            }
        });
    }
}

/// Why `source` may not point at `target`, if it may not.
pub(crate) fn refusal<R: Relationship>(world: &World, source: Entity, target: Entity) -> Option<&'static str> {
    if target == source {
        Some("an entity cannot be its own target")
    } else if !world.contains(target) {
        Some("the target is not alive")
    } else if world.has::<R::Target>(source) && reaches::<R>(world, target, source) {
        // Only a source with sources of its own can have the target below
        // it: a leaf (every fresh spawn) skips the walk.
        Some("the target is a descendant of the source, which would make a cycle")
    } else {
        None
    }
}

/// Whether following `R` up from `from` reaches `to`. Bounded by the number
/// of entities, so a cycle made some other way cannot hang it.
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
/// list names only live sources that point back, no list is empty, and no
/// source is its own ancestor.
fn check<R: Relationship>(world: &World) -> Result<(), String> {
    let name = short::<R>();
    for (source, r) in world.query::<(Entity, &R)>() {
        let target = r.target();
        let Some(list) = world.get::<R::Target>(target) else {
            return Err(format!("{source}'s `{name}` names {target}, which has no list of sources"));
        };
        let times = list.sources().iter().filter(|&&e| e == source).count();
        if times != 1 {
            return Err(format!("{source}'s `{name}` names {target}, whose list names it {times} times"));
        }
        if reaches::<R>(world, target, source) {
            return Err(format!("{source}'s `{name}` is part of a cycle"));
        }
    }
    for (target, list) in world.query::<(Entity, &R::Target)>() {
        if list.sources().is_empty() {
            return Err(format!("{target} keeps an empty list of `{name}` sources"));
        }
        for &source in list.sources() {
            if world.get::<R>(source).map(R::target) != Some(target) {
                return Err(format!("{target}'s list names {source}, whose `{name}` does not point back"));
            }
        }
    }
    Ok(())
}

fn short<T>() -> &'static str {
    let name = std::any::type_name::<T>();
    name.rsplit("::").next().unwrap_or(name)
}
