//! Copies: one entity (`World::clone_entity`), the whole world as a new
//! one (`World::try_clone`) or into a world that exists already, reusing
//! its memory (`World::clone_from`, what rollback snapshots use), for the
//! component types that opt in with `#[component(clone)]`.

use std::fmt;

use std::any::TypeId;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

use crate::component::Component;
use crate::entity::Entity;
use crate::storage::builder::EntityBuilder;
use crate::storage::column::{for_each_unwinding, CloneColumnFn, Column};
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
        let mut copy = World::from_parts(
            self.entities().snapshot(),
            components.snapshot(),
            archetypes,
            sparse,
            self.change_tick(),
            self.last_check_tick(),
        );
        copy.cloners.clone_from(&self.cloners);
        Ok(copy)
    }

    /// Makes this world a copy of `source`, as [`World::try_clone`] does,
    /// but in place: every entity with the same handle, the allocator in
    /// the same state, every table and sparse set with the same values (and
    /// their change ticks) in the same rows, and the same change tick. The
    /// values are cloned into the memory this world has already: a table
    /// keeps its columns, a value of a type registered with
    /// [`World::register_clone_from`] is assigned with `Clone::clone_from`
    /// (a `String` keeps its buffer, where the type's `Clone` forwards
    /// `clone_from`) and a column of such a type is copied whole (a `Copy`
    /// type in bulk). Copying back and forth between two
    /// worlds of the same tables allocates nothing once each has had room
    /// for the other's rows: what a rollback snapshot needs every frame.
    ///
    /// This world keeps what is its own: its [`WorldId`](crate::WorldId)
    /// (query states and systems built for it stay valid), its resources,
    /// hooks, observers and pools. That holds while the two worlds agree on
    /// the component types and tables they share (the same type at each
    /// component id, the same signature at each table id), as a world and
    /// its copies do, whichever has made more since. Otherwise this world
    /// is rebuilt as a [`World::try_clone`] of `source` that keeps this
    /// world's resources, with a new id; its hooks and observers are not in
    /// the copy then (the engine's own are installed).
    ///
    /// ```
    /// use archetable::prelude::*;
    ///
    /// #[derive(Component, Clone, Debug, PartialEq)]
    /// #[component(clone)]
    /// struct Name(String);
    ///
    /// let mut world = World::new();
    /// world.register_clone_from::<Name>();
    /// let a = world.spawn(Name("ship".into()));
    /// let mut saved = World::new();
    /// saved.clone_from(&world).unwrap();
    ///
    /// world.get_mut::<Name>(a).unwrap().0.push_str(" (hit)");
    /// let b = world.spawn(Name("bullet".into()));
    /// let id = world.id();
    ///
    /// // Roll back: the same world, as it was.
    /// world.clone_from(&saved).unwrap();
    /// assert_eq!(world.id(), id);
    /// assert_eq!(world.get::<Name>(a), Some(&Name("ship".into())));
    /// assert!(!world.contains(b));
    /// assert_eq!(world.spawn(Name("bullet".into())), b);
    /// ```
    ///
    /// # Errors
    /// [`CloneError::NotCloneable`] naming the first component, in
    /// archetype order then sparse set order, that some entity of `source`
    /// holds and that is not cloneable; nothing changes then.
    ///
    /// # Panics
    /// If a clone panics: this world is then left empty (every entity
    /// despawned, without hooks) and the panic goes on.
    pub fn clone_from(&mut self, source: &World) -> Result<(), CloneError> {
        self.clone_from_keeping(source, &|_, _| false)
    }

    /// [`World::clone_from`], leaving alone each table column for which
    /// `keep(table, component)` is true when this world's table holds the
    /// same entities in the same rows as `source`'s: the caller vouches
    /// that its values (and change ticks) are `source`'s already, for
    /// instance because neither was written since one was copied from the
    /// other ([`Archetype::column_written`](crate::storage::archetype::Archetype::column_written)
    /// tells). A wrong vouch leaves stale values, never unsound ones.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component, Clone, PartialEq, Debug)] #[component(clone)] struct Hp(u32);
    /// let mut world = World::new();
    /// let a = world.spawn(Hp(3));
    /// let mut saved = World::new();
    /// saved.clone_from(&world).unwrap();
    /// world.get_mut::<Hp>(a).unwrap().0 = 4;
    /// // Vouching wrongly keeps the present value...
    /// world.clone_from_keeping(&saved, &|_, _| true).unwrap();
    /// assert_eq!(world.get::<Hp>(a), Some(&Hp(4)));
    /// // ...and not vouching copies it back.
    /// world.clone_from_keeping(&saved, &|_, _| false).unwrap();
    /// assert_eq!(world.get::<Hp>(a), Some(&Hp(3)));
    /// ```
    ///
    /// # Errors
    /// As for [`World::clone_from`].
    pub fn clone_from_keeping(
        &mut self,
        source: &World,
        keep: &dyn Fn(crate::storage::archetype::ArchetypeId, crate::ComponentId) -> bool,
    ) -> Result<(), CloneError> {
        self.flush();
        let components = source.components();
        if let Some(id) = source.archetypes().first_not_cloneable(components) {
            return Err(CloneError::NotCloneable { component: components.name(id) });
        }
        let sparse = source.sparse_sets().iter();
        if let Some(set) = sparse.filter(|set| !set.is_empty()).find(|set| !components.info(set.id()).is_cloneable()) {
            return Err(CloneError::NotCloneable { component: components.name(set.id()) });
        }
        if !self.adopt_registry(source) {
            return self.clone_anew(source);
        }
        let World { archetypes, sparse, pools, components, cloners, .. } = self;
        let typed = |type_id: TypeId| -> Option<CloneColumnFn> {
            cloners.iter().chain(&source.cloners).find(|(t, _)| *t == type_id).map(|&(_, copy)| copy)
        };
        let copied = catch_unwind(AssertUnwindSafe(|| {
            if !archetypes.clone_from_same_layout(source.archetypes(), components, pools, typed, keep) {
                return Ok(false);
            }
            sparse.clone_from_sets(source.sparse_sets(), components, typed).map(|()| true)
        }));
        match copied {
            Ok(Ok(true)) => {}
            Ok(Ok(false)) => return self.clone_anew(source),
            Ok(Err(component)) => {
                // Checked above, so not met here; were it, the tables are
                // `source`'s by then: empty this world rather than leave the
                // tables of one and the sets of another.
                self.empty_after_failed_copy();
                return Err(CloneError::NotCloneable { component });
            }
            Err(payload) => {
                self.empty_after_failed_copy();
                resume_unwind(payload);
            }
        }
        self.entities.clone_from_table(source.entities());
        *self.change_tick.get_mut() = source.change_tick().get();
        self.last_check_tick = source.last_check_tick();
        Ok(())
    }

    /// Makes this world's component registry agree with `source`'s: kept
    /// if `source`'s is a prefix of it, extended with `source`'s later
    /// types (and their engine hooks) if it is a prefix of `source`'s.
    /// False, changing nothing, if the two disagree on some id.
    fn adopt_registry(&mut self, source: &World) -> bool {
        let (mine, theirs) = (self.components(), source.components());
        if mine.iter().zip(theirs.iter()).any(|(a, b)| a.type_id() != b.type_id()) {
            return false;
        }
        if theirs.len() <= mine.len() {
            return true;
        }
        let known = mine.len();
        let installers: Vec<fn(&mut World)> =
            theirs.iter().skip(known).filter_map(|info| info.engine_hooks()).collect();
        self.components = theirs.snapshot();
        for install in installers {
            install(self);
        }
        true
    }

    /// [`World::clone_from`] between worlds whose registries or tables
    /// disagree: a new copy, which keeps this world's resources and
    /// whole-column copies.
    fn clone_anew(&mut self, source: &World) -> Result<(), CloneError> {
        let mut copy = source.try_clone()?;
        std::mem::swap(&mut copy.resources, &mut self.resources);
        std::mem::swap(&mut copy.event_updaters, &mut self.event_updaters);
        std::mem::swap(&mut copy.cloners, &mut self.cloners);
        *self = copy;
        Ok(())
    }

    /// Empties the tables, the sparse sets and the entity table after a
    /// copy that stopped half-way, so that they agree again.
    fn empty_after_failed_copy(&mut self) {
        let (pools, components) = (&mut self.pools, &self.components);
        for_each_unwinding(self.archetypes.as_mut_slice().iter_mut(), |archetype| archetype.clear(pools, components));
        self.sparse.clear(components, pools);
        self.entities.clear();
    }

    /// Lets [`World::clone_from`] copy `T`'s values with `Clone::clone_from`,
    /// a whole column at a time: a value that owns memory (a `String`, a
    /// `Vec`) keeps it, and a column of a `Copy` type is one memory copy.
    /// Without it, `clone_from` drops each value and clones the source's in
    /// (one allocation per value that owns memory). `T` must still opt in
    /// with `#[component(clone)]` to be copied at all. Either world of a
    /// copy may hold the registration.
    ///
    /// `#[derive(Clone)]` does not forward `clone_from` to the fields: it
    /// clones anew and drops the old value. A type that should keep its
    /// buffers implements `Clone` by hand, with a `clone_from` that calls
    /// its fields' `clone_from` (as below).
    ///
    /// ```
    /// use archetable::prelude::*;
    ///
    /// #[derive(Component)]
    /// #[component(clone)]
    /// struct Name(String);
    ///
    /// impl Clone for Name {
    ///     fn clone(&self) -> Self {
    ///         Name(self.0.clone())
    ///     }
    ///
    ///     fn clone_from(&mut self, source: &Self) {
    ///         self.0.clone_from(&source.0);
    ///     }
    /// }
    ///
    /// let mut world = World::new();
    /// world.register_clone_from::<Name>();
    /// let a = world.spawn(Name("ship".into()));
    /// let mut copy = World::new();
    /// copy.clone_from(&world).unwrap();
    /// let buffer = copy.get::<Name>(a).unwrap().0.as_ptr();
    /// world.get_mut::<Name>(a).unwrap().0.replace_range(0..1, "S");
    /// copy.clone_from(&world).unwrap();
    /// assert_eq!(copy.get::<Name>(a).unwrap().0, "Ship");
    /// assert_eq!(copy.get::<Name>(a).unwrap().0.as_ptr(), buffer);
    /// ```
    pub fn register_clone_from<T: Component + Clone>(&mut self) {
        self.register_component::<T>();
        let type_id = TypeId::of::<T>();
        if !self.cloners.iter().any(|(t, _)| *t == type_id) {
            self.cloners.push((type_id, Column::clone_from_typed::<T>));
        }
    }
}
