//! Lifecycle events: the triggers the world sets off itself when an entity
//! gains, writes or loses a component, beside the hooks of the same names.

use std::any::{type_name, Any};
use std::fmt;
use std::marker::PhantomData;

use crate::component::{Component, ComponentId};
use crate::entity::Entity;
use crate::observer::Delivery;
use crate::world::hooks::HookKind;
use crate::world::World;

/// Hands the lifecycle event of one kind for one component type, and its
/// type name, to a callback: stored per component type, so the world can
/// trigger `OnAdd<T>` knowing only `T`'s id.
pub(crate) type LifecycleFn = fn(HookKind, &mut dyn FnMut(&dyn Any, &'static str));

/// The [`LifecycleFn`] of component type `T`.
pub(crate) fn lifecycle_event<T: Component>(kind: HookKind, f: &mut dyn FnMut(&dyn Any, &'static str)) {
    // Written out per kind, with no generic helper: this function has a
    // copy per component type, and a helper would add five more.
    match kind {
        HookKind::Add => f(&OnAdd::<T>(PhantomData), type_name::<OnAdd<T>>()),
        HookKind::Insert => f(&OnInsert::<T>(PhantomData), type_name::<OnInsert<T>>()),
        HookKind::Replace => f(&OnReplace::<T>(PhantomData), type_name::<OnReplace<T>>()),
        HookKind::Remove => f(&OnRemove::<T>(PhantomData), type_name::<OnRemove<T>>()),
        HookKind::Despawn => f(&OnDespawn::<T>(PhantomData), type_name::<OnDespawn<T>>()),
    }
}

macro_rules! lifecycle_events {
    ($($(#[$doc:meta])* $name:ident;)*) => {$(
        $(#[$doc])*
        ///
        /// The trigger's target is the entity; the component is readable
        /// through the observer's queries. See the [module
        /// documentation](crate::observer) for the order against the hooks.
        pub struct $name<T: Component>(PhantomData<fn() -> T>);

        impl<T: Component> fmt::Debug for $name<T> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}<{}>", stringify!($name), crate::names::short_type_name(type_name::<T>()))
            }
        }
    )*};
}

lifecycle_events! {
    /// Triggered when an entity gets a `T` it did not have (spawned with it,
    /// or given it by an insert), after the value is written and after
    /// `T`'s `on_add` hooks.
    ///
    /// ```
    /// use archetable::prelude::*;
    ///
    /// #[derive(Component)] struct Enemy;
    /// #[derive(Default)] struct Spawned(Vec<Entity>);
    ///
    /// let mut world = World::new();
    /// world.init_resource::<Spawned>();
    /// world.observe(|t: Trigger<OnAdd<Enemy>>, mut log: ResMut<Spawned>| log.0.push(t.target().unwrap()));
    /// let e = world.spawn(Enemy);
    /// world.insert(e, Enemy).unwrap(); // already had one: no `OnAdd`
    /// assert_eq!(world.resource::<Spawned>().0, [e]);
    /// ```
    OnAdd;
    /// Triggered on every write of a `T` by spawn or insert, a new value or
    /// one that replaces the old, after `T`'s `on_insert` hooks.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component)] struct Hp(u32);
    /// # #[derive(Default)] struct Writes(u32);
    /// let mut world = World::new();
    /// world.init_resource::<Writes>();
    /// world.observe(|_: Trigger<OnInsert<Hp>>, mut w: ResMut<Writes>| w.0 += 1);
    /// let e = world.spawn(Hp(1));
    /// world.insert(e, Hp(2)).unwrap();
    /// assert_eq!(world.resource::<Writes>().0, 2);
    /// ```
    OnInsert;
    /// Triggered when a `T`'s value is about to be overwritten by an insert
    /// or to leave the entity (remove, despawn, clear), after `T`'s
    /// `on_replace` hooks; the old value is still readable.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component)] struct Hp(u32);
    /// # #[derive(Default)] struct Old(Vec<u32>);
    /// let mut world = World::new();
    /// world.init_resource::<Old>();
    /// world.observe(|t: Trigger<OnReplace<Hp>>, hp: Query<&Hp>, mut old: ResMut<Old>| {
    ///     old.0.push(hp.get(t.target().unwrap()).unwrap().0);
    /// });
    /// let e = world.spawn(Hp(1));
    /// world.insert(e, Hp(2)).unwrap();
    /// world.despawn(e).unwrap();
    /// assert_eq!(world.resource::<Old>().0, [1, 2]);
    /// ```
    OnReplace;
    /// Triggered when a `T` is about to leave the entity (remove, despawn,
    /// clear), after `T`'s `on_remove` hooks; the value is still readable.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component)] struct Hp(u32);
    /// # #[derive(Default)] struct Gone(u32);
    /// let mut world = World::new();
    /// world.init_resource::<Gone>();
    /// world.observe(|_: Trigger<OnRemove<Hp>>, mut gone: ResMut<Gone>| gone.0 += 1);
    /// let e = world.spawn(Hp(1));
    /// world.remove::<Hp>(e).unwrap();
    /// world.spawn(Hp(2));
    /// world.clear();
    /// assert_eq!(world.resource::<Gone>().0, 2);
    /// ```
    OnRemove;
    /// Triggered when an entity that has a `T` is about to be despawned (by
    /// despawn or clear), after `T`'s `on_despawn` hooks and before the
    /// `OnReplace` and `OnRemove` of its components.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component)] struct Hp(u32);
    /// # #[derive(Default)] struct Dead(Vec<Entity>);
    /// let mut world = World::new();
    /// world.init_resource::<Dead>();
    /// world.observe(|t: Trigger<OnDespawn<Hp>>, mut dead: ResMut<Dead>| dead.0.push(t.target().unwrap()));
    /// let e = world.spawn(Hp(1));
    /// world.remove::<Hp>(e).unwrap(); // a removal, not a despawn
    /// let f = world.spawn(Hp(2));
    /// world.despawn(f).unwrap();
    /// assert_eq!(world.resource::<Dead>().0, [f]);
    /// ```
    OnDespawn;
}

impl World {
    /// Triggers the lifecycle event of `kind` for component `id` at
    /// `entity` (`OnAdd<T>`, ...), if anything observes it.
    #[cold]
    #[inline(never)]
    pub(crate) fn fire_observers(&mut self, kind: HookKind, id: ComponentId, entity: Entity) {
        let lifecycle = self.components().info(id).lifecycle();
        lifecycle(kind, &mut |event, name| {
            self.run_observers(event, name, Some(entity), Delivery::AfterOperation);
        });
    }
}
