//! Disabling entities: [`World::disable`], [`World::enable`],
//! [`World::is_disabled`], and [`World::register_disabling_component`] for
//! markers of one's own that hide entities the way
//! [`Disabled`](crate::Disabled) does (a prefab template, for example).

use crate::component::disabling::Disabled;
use crate::component::{Component, StorageType};
use crate::entity::error::EntityError;
use crate::entity::Entity;
use crate::names::short_type_name;
use crate::world::World;

impl World {
    /// Disables `entity`: it keeps its components, and queries that do not
    /// name [`Disabled`] stop seeing it. Inserts the `Disabled` marker if
    /// the entity lacks it; disabling a disabled entity changes nothing.
    ///
    /// Only `Disabled`'s own hooks and observers run (`on_add`, `on_insert`,
    /// `OnAdd<Disabled>`, ...); those of the entity's other components do
    /// not. A parent's children stay enabled; see `disable_recursive` for
    /// a whole tree.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component)] struct Hp(u32);
    /// let mut world = World::new();
    /// let e = world.spawn(Hp(1));
    /// world.disable(e).unwrap();
    /// assert!(world.is_disabled(e));
    /// assert_eq!(world.query::<&Hp>().count(), 0);
    /// assert_eq!(world.query::<(&Hp, Has<Disabled>)>().map(|(_, d)| d).collect::<Vec<_>>(), [true]);
    /// ```
    ///
    /// # Errors
    /// [`EntityError::NoSuchEntity`] if `entity` is not alive.
    pub fn disable(&mut self, entity: Entity) -> Result<(), EntityError> {
        if !self.contains(entity) {
            return Err(EntityError::NoSuchEntity(entity));
        }
        if self.has::<Disabled>(entity) {
            return Ok(());
        }
        self.insert(entity, Disabled)
    }

    /// Enables `entity` again: removes its [`Disabled`] marker, so every
    /// query sees it again. Enabling an entity that is not disabled changes
    /// nothing. As with [`World::disable`], only `Disabled`'s own hooks and
    /// observers run (`on_replace`, `on_remove`, `OnRemove<Disabled>`).
    ///
    /// Other default-hiding markers
    /// ([`World::register_disabling_component`]) stay: remove them
    /// yourself.
    ///
    /// # Errors
    /// [`EntityError::NoSuchEntity`] if `entity` is not alive.
    pub fn enable(&mut self, entity: Entity) -> Result<(), EntityError> {
        if !self.contains(entity) {
            return Err(EntityError::NoSuchEntity(entity));
        }
        if self.has::<Disabled>(entity) {
            // The entity is alive and has the marker: the removal cannot
            // fail. A hook of `Disabled` may despawn it meanwhile, which
            // is not an error of this call.
            let _ = self.remove::<Disabled>(entity);
        }
        Ok(())
    }

    /// Whether `entity` is alive and holds [`Disabled`].
    pub fn is_disabled(&self, entity: Entity) -> bool {
        self.has::<Disabled>(entity)
    }

    /// Makes `T` hide the entities that hold it from every query that does
    /// not name `T` (reads it, or filters or tests on it), as
    /// [`Disabled`] does: bevy_ecs's default query filters. A prefab
    /// template that should never be simulated, or a pooled entity
    /// waiting to be reused, can carry such a marker.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// #[derive(Component, Clone)] #[component(clone)] struct Template;
    /// #[derive(Component, Clone, Debug, PartialEq)] #[component(clone)] struct Hp(u32);
    ///
    /// let mut world = World::new();
    /// world.register_disabling_component::<Template>();
    /// let goblin = world.spawn((Template, Hp(7)));
    /// assert_eq!(world.query::<&Hp>().count(), 0); // a template is no goblin
    /// let copy = world.clone_entity(goblin).unwrap();
    /// world.remove::<Template>(copy).unwrap();
    /// assert_eq!(world.query::<(Entity, &Hp)>().collect::<Vec<_>>(), [(copy, &Hp(7))]);
    /// ```
    ///
    /// Registering a type twice changes nothing.
    ///
    /// # Panics
    /// If `T` lives in sparse storage (`#[component(storage = "sparse")]`):
    /// hiding is decided per table, and no table records a sparse
    /// component. If an entity already held `T` at some point in this
    /// world (a table with `T` exists): query states may already have
    /// matched its tables, so register the marker before spawning
    /// anything with it, where the world is built.
    pub fn register_disabling_component<T: Component>(&mut self) -> &mut Self {
        assert!(
            T::STORAGE == StorageType::Table,
            "`{}` cannot hide entities: it is in sparse storage, and hiding is decided per table; \
             use a table component (the default storage) as the marker",
            short_type_name(std::any::type_name::<T>())
        );
        let id = self.components_mut().register::<T>();
        if self.components().info(id).hides_entities() {
            return self;
        }
        let held = self.archetypes().as_slice().iter().any(|archetype| archetype.contains(id));
        assert!(
            !held,
            "`{}` cannot become a disabling component now: entities of this world have held it, and queries may \
             already see their tables; call `register_disabling_component::<{0}>()` before spawning anything with it",
            short_type_name(std::any::type_name::<T>())
        );
        self.components_mut().set_hiding(id);
        self
    }
}
