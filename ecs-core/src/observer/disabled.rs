//! Without the `observers` feature: the few things the hooks and the world
//! ask of the observers, answering that there are none. The lifecycle
//! paths then reduce to the hooks alone.

use std::any::{Any, TypeId};

use crate::component::ComponentId;
use crate::entity::Entity;
use crate::world::hooks::HookKind;
use crate::world::World;

/// Hands the lifecycle event of one kind for one component type to a
/// callback; without observers there is none to hand.
pub(crate) type LifecycleFn = fn(HookKind, &mut dyn FnMut(&dyn Any, &'static str));

/// The lifecycle events of `T`: none without observers.
pub(crate) fn lifecycle_event<T>(_: HookKind, _: &mut dyn FnMut(&dyn Any, &'static str)) {}

/// No observers.
#[derive(Default)]
pub(crate) struct Observers;

impl Observers {
    /// Always: nothing can register an observer.
    #[inline(always)]
    pub(crate) fn is_empty(&self) -> bool {
        true
    }

    /// Never changes.
    #[inline(always)]
    pub(crate) fn generation(&self) -> u64 {
        0
    }

    /// Never.
    #[inline(always)]
    pub(crate) fn watches(&self, _: TypeId) -> bool {
        false
    }
}

impl World {
    /// Nothing observes a lifecycle event.
    #[inline(always)]
    pub(crate) fn fire_observers(&mut self, _: HookKind, _: ComponentId, _: Entity) {}

    /// Nothing to detach.
    #[inline(always)]
    pub(crate) fn detach_observers(&mut self, _: Entity) {}

    /// Nothing to detach.
    #[inline(always)]
    pub(crate) fn detach_all_observers(&mut self) {}
}
