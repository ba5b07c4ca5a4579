//! Copies: one entity (`World::clone_entity`) or the whole world
//! (`World::try_clone`), for the component types that opt in with
//! `#[component(clone)]`.

use std::fmt;

use crate::entity::Entity;
use crate::storage::builder::EntityBuilder;
use crate::world::World;

/// Why a copy could not be made.
///
/// ```
/// # use archetable::prelude::*;
/// # use archetable::CloneError;
/// #[derive(Component)]
/// struct Socket(u32);
///
/// let mut world = World::new();
/// let e = world.spawn(Socket(1));
/// assert_eq!(world.clone_entity(e), Err(CloneError::NotCloneable { component: std::any::type_name::<Socket>() }));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CloneError {
    /// The entity to clone is not alive.
    NoSuchEntity(Entity),
    /// A component to copy does not opt in with `#[component(clone)]`:
    /// the first one met, by its type name.
    NotCloneable {
        /// The component's type name.
        component: &'static str,
    },
}

impl fmt::Display for CloneError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CloneError::NoSuchEntity(entity) => write!(f, "cannot clone entity {entity}: it is not alive"),
            CloneError::NotCloneable { component } => write!(
                f,
                "component `{component}` is not cloneable; add `#[component(clone)]` (and `Clone`) to its definition"
            ),
        }
    }
}

impl std::error::Error for CloneError {}

impl World {
    /// Spawns a copy of `entity`: a clone of each of its components, added
    /// now (fresh change ticks), with hooks run as for [`World::spawn`].
    /// Every component type must opt in with `#[component(clone)]`; a
    /// relationship's list of sources (`Children`) is
    /// left out, as by [`World::take`].
    ///
    /// ```
    /// use archetable::prelude::*;
    ///
    /// #[derive(Component, Clone, Debug, PartialEq)]
    /// #[component(clone)]
    /// struct Hp(u32);
    ///
    /// #[derive(Component)]
    /// struct Socket;
    ///
    /// let mut world = World::new();
    /// let orc = world.spawn(Hp(7));
    /// let twin = world.clone_entity(orc).unwrap();
    /// assert_ne!(twin, orc);
    /// assert_eq!(world.get::<Hp>(twin), Some(&Hp(7)));
    ///
    /// let player = world.spawn((Hp(3), Socket));
    /// let error = world.clone_entity(player).unwrap_err();
    /// assert!(error.to_string().contains("Socket"));
    /// ```
    ///
    /// # Errors
    /// [`CloneError::NoSuchEntity`] if `entity` is not alive;
    /// [`CloneError::NotCloneable`] naming its first component (in id
    /// order) that is not cloneable. Nothing changes then.
    pub fn clone_entity(&mut self, entity: Entity) -> Result<Entity, CloneError> {
        self.flush();
        let location = self.location(entity).ok_or(CloneError::NoSuchEntity(entity))?;
        let archetype = self.archetypes().get(location.archetype);
        let components = self.components();
        let sparse: Vec<_> = self.sparse_sets().components_of(entity).collect();
        let infos = || {
            archetype
                .components()
                .iter()
                .chain(&sparse)
                .map(|&id| components.info(id))
                .filter(|info| !info.engine_kept())
        };
        if let Some(info) = infos().find(|info| !info.is_cloneable()) {
            return Err(CloneError::NotCloneable { component: info.name() });
        }
        let mut builder = EntityBuilder::new();
        builder.reserve_raw(infos());
        for info in infos() {
            match self.sparse_sets().get(info.id()) {
                Some(set) if info.is_sparse() => builder.clone_in_sparse(set, info, entity),
                _ => builder.clone_in(archetype, info, location.row),
            }
        }
        Ok(self.spawn(builder.build()))
    }

    /// A copy of the whole world: every entity with the same handle, the
    /// entity allocator in the same state (the next spawns hand out the
    /// same handles in both), every component value cloned with its change
    /// ticks, and the same change tick; for rollback and for trying things
    /// on a copy (an editor's play mode). Every component type some entity
    /// holds must opt in with `#[component(clone)]`.
    ///
    /// The copy is a new world, with its own [`WorldId`](crate::WorldId):
    /// query states and schedules built for this one start over on it.
    /// Resources are not copied (they may hold anything, from handles to
    /// outside state to events); the copy has a default
    /// [`Time`](crate::Time), as [`World::new`] does: insert the ones it
    /// needs. Hooks are not copied either; the engine's own (relationships)
    /// are installed.
    ///
    /// ```
    /// use archetable::prelude::*;
    ///
    /// #[derive(Component, Clone, Debug, PartialEq)]
    /// #[component(clone, track_changes)]
    /// struct Pos(i32);
    ///
    /// let mut world = World::new();
    /// let a = world.spawn(Pos(1));
    /// let saved = world.try_clone().unwrap();
    /// world.get_mut::<Pos>(a).unwrap().0 = 99;
    /// world.despawn(a).unwrap();
    ///
    /// // Roll back.
    /// world = saved.try_clone().unwrap();
    /// assert_eq!(world.get::<Pos>(a), Some(&Pos(1)));
    /// assert_eq!(world.spawn(Pos(2)), saved.try_clone().unwrap().spawn(Pos(2)));
    /// ```
    ///
    /// # Errors
    /// [`CloneError::NotCloneable`] naming the first component, in
    /// archetype order, that some entity holds and that is not cloneable.
    pub fn try_clone(&self) -> Result<World, CloneError> {
        let components = self.components();
        if let Some(id) = self.archetypes().first_not_cloneable(components) {
            return Err(CloneError::NotCloneable { component: components.name(id) });
        }
        let sparse = self.sparse_sets().try_clone(components);
        let sparse = sparse.map_err(|component| CloneError::NotCloneable { component })?;
        let archetypes = self.archetypes().clone_all(components);
        Ok(World::from_parts(
            self.entities().snapshot(),
            components.snapshot(),
            archetypes,
            sparse,
            self.change_tick(),
            self.last_check_tick(),
        ))
    }
}
