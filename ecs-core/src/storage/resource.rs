//! Resources: values that belong to the world rather than to an entity (the
//! clock, the input state, the score), one per type.
//!
//! Each resource sits in its own cell so that systems running in parallel
//! can borrow different resources, or share one, through a shared `&World`;
//! the schedule's access check is what makes those borrows disjoint.

use std::any::{type_name, Any, TypeId};
use std::cell::UnsafeCell;

use crate::component::change::{ComponentTicks, Tick};
use crate::component::TypeIdMap;

/// A type that can be stored as a world resource: any `Send + Sync + 'static`
/// type.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a resource",
    label = "not `Send + Sync + 'static`",
    note = "resources are shared between systems that may run on other threads"
)]
pub trait Resource: Send + Sync + 'static {}

impl<T: Send + Sync + 'static> Resource for T {}

/// The dense id a world gives a resource type the first time it sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ResourceId(u32);

impl ResourceId {
    /// Stands for every resource at once, in access records (`&World`);
    /// never a registered resource's id.
    pub(crate) const WORLD: ResourceId = ResourceId(u32::MAX);

    /// The id as an index into per-resource tables.
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

struct Slot {
    value: Option<UnsafeCell<Stored>>,
    /// The type's name and id, for listing what the world holds.
    name: &'static str,
    type_id: TypeId,
    /// Kept by the engine for a frame or two (event queues): not part of a
    /// game's state.
    transient: bool,
}

/// A resource value with its change ticks, borrowed together: whoever may
/// write the value may stamp its changed tick.
struct Stored {
    value: Box<dyn Any + Send + Sync>,
    ticks: ComponentTicks,
}

/// The world's resources, by type.
///
/// Invariant: the value in a slot, if any, has the slot's type; `&mut`
/// borrows of it are created only through `&mut self` or through
/// [`Resources::get_mut_unchecked`], whose callers promise exclusivity.
#[derive(Default)]
pub(crate) struct Resources {
    by_type: TypeIdMap<ResourceId>,
    slots: Vec<Slot>,
}

// SAFETY: the values are `Send + Sync`. Through `&Resources`, a value is only
// read, except by `get_mut_unchecked`, whose caller promises that no other
// borrow of that value exists at the same time, on any thread.
unsafe impl Sync for Resources {}

impl Resources {
    /// The id of `T`, registering the type (without a value) if needed.
    pub fn register<T: Resource>(&mut self) -> ResourceId {
        let next = ResourceId(
            u32::try_from(self.slots.len())
                .ok()
                .filter(|&n| n != u32::MAX)
                .expect("more than u32::MAX - 1 resource types"),
        );
        let slots = &mut self.slots;
        *self.by_type.entry(TypeId::of::<T>()).or_insert_with(|| {
            slots.push(Slot { value: None, name: type_name::<T>(), type_id: TypeId::of::<T>(), transient: false });
            next
        })
    }

    /// The id of `T`, if it was ever registered.
    #[inline]
    pub fn id<T: Resource>(&self) -> Option<ResourceId> {
        self.by_type.get(&TypeId::of::<T>()).copied()
    }

    /// Stores `value`, added and changed at `tick`, returning the previous
    /// value of that type.
    pub fn insert<T: Resource>(&mut self, value: T, tick: Tick) -> Option<T> {
        self.insert_boxed(Box::new(value), ComponentTicks::new(tick)).map(|old| *old)
    }

    /// Stores a boxed `value` with the given ticks, returning the previous
    /// value of that type.
    pub fn insert_boxed<T: Resource>(&mut self, value: Box<T>, ticks: ComponentTicks) -> Option<Box<T>> {
        let id = self.register::<T>();
        let old = self.slots[id.index()].value.replace(UnsafeCell::new(Stored { value, ticks }));
        old.map(|cell| downcast_box(cell.into_inner().value))
    }

    /// Takes the `T` out.
    pub fn remove<T: Resource>(&mut self) -> Option<T> {
        self.remove_boxed::<T>().map(|(value, _)| *value)
    }

    /// Takes the `T` out, still boxed, with its ticks.
    pub fn remove_boxed<T: Resource>(&mut self) -> Option<(Box<T>, ComponentTicks)> {
        let id = self.id::<T>()?;
        let stored = self.slots[id.index()].value.take()?.into_inner();
        Some((downcast_box(stored.value), stored.ticks))
    }

    /// The ticks of the stored `T`.
    pub fn ticks<T: Resource>(&self) -> Option<ComponentTicks> {
        let id = self.id::<T>()?;
        let cell = self.slots[id.index()].value.as_ref()?;
        // SAFETY: `&self` allows reads; a `&mut` to the ticks exists only
        // under `get_mut_unchecked`'s promise of exclusivity.
        Some(unsafe { (*cell.get()).ticks })
    }

    /// Clamps every resource's ticks to at most [`Tick::MAX_AGE`] before
    /// `now`.
    pub fn check_ticks(&mut self, now: Tick) {
        for cell in self.slots.iter_mut().filter_map(|slot| slot.value.as_mut()) {
            let ticks = &mut cell.get_mut().ticks;
            ticks.added.clamp_age(now);
            ticks.changed.clamp_age(now);
        }
    }

    /// Whether a `T` is stored.
    pub fn contains<T: Resource>(&self) -> bool {
        self.id::<T>().is_some_and(|id| self.slots[id.index()].value.is_some())
    }

    /// Whether resource `id` holds a value.
    pub fn contains_id(&self, id: ResourceId) -> bool {
        self.slots.get(id.index()).is_some_and(|slot| slot.value.is_some())
    }

    /// The stored `T`.
    #[inline]
    pub fn get<T: Resource>(&self) -> Option<&T> {
        let id = self.id::<T>()?;
        // SAFETY: `&self` allows reads; no `&mut` to this value exists unless
        // a caller of `get_mut_unchecked` broke its promise.
        unsafe { self.get_by_id(id) }
    }

    /// The stored `T`, mutably; stamps it changed at `tick`.
    #[inline]
    pub fn get_mut<T: Resource>(&mut self, tick: Tick) -> Option<&mut T> {
        let id = self.id::<T>()?;
        let stored = self.slots[id.index()].value.as_mut()?.get_mut();
        stored.ticks.changed = tick;
        Some(downcast_mut(stored.value.as_mut()))
    }

    /// The value of resource `id`, which must be a `T`.
    ///
    /// # Safety
    /// No `&mut` borrow of this resource's value is alive for the returned
    /// lifetime.
    #[inline]
    pub unsafe fn get_by_id<T: Resource>(&self, id: ResourceId) -> Option<&T> {
        // SAFETY: forwarded to the caller.
        unsafe { self.get_with_ticks(id) }.map(|(value, _)| value)
    }

    /// The value of resource `id`, which must be a `T`, with its ticks.
    ///
    /// # Safety
    /// No `&mut` borrow of this resource's value or ticks is alive for the
    /// returned lifetime.
    #[inline]
    pub unsafe fn get_with_ticks<T: Resource>(&self, id: ResourceId) -> Option<(&T, ComponentTicks)> {
        let cell = self.slots.get(id.index())?.value.as_ref()?;
        // SAFETY: the caller promises no `&mut` to the value is alive.
        let stored: &Stored = unsafe { &*cell.get() };
        Some((downcast_ref(stored.value.as_ref()), stored.ticks))
    }

    /// The value of resource `id`, which must be a `T`, mutably, through a
    /// shared borrow.
    ///
    /// # Safety
    /// No other borrow of this resource's value, shared or mutable, is alive
    /// for the returned lifetime.
    #[inline]
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn get_mut_unchecked<T: Resource>(&self, id: ResourceId) -> Option<&mut T> {
        // SAFETY: forwarded to the caller.
        unsafe { self.get_mut_with_ticks(id) }.map(|(value, _)| value)
    }

    /// The value of resource `id`, which must be a `T`, and its ticks,
    /// mutably, through a shared borrow.
    ///
    /// # Safety
    /// No other borrow of this resource's value or ticks, shared or
    /// mutable, is alive for the returned lifetime.
    #[inline]
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn get_mut_with_ticks<T: Resource>(&self, id: ResourceId) -> Option<(&mut T, &mut ComponentTicks)> {
        let cell = self.slots.get(id.index())?.value.as_ref()?;
        // SAFETY: the caller promises that this is the only borrow.
        let stored: &mut Stored = unsafe { &mut *cell.get() };
        Some((downcast_mut(stored.value.as_mut()), &mut stored.ticks))
    }

    /// Marks resource `id` as the engine's bookkeeping (an event queue),
    /// left out of [`Resources::present`].
    pub fn mark_transient(&mut self, id: ResourceId) {
        self.slots[id.index()].transient = true;
    }

    /// The type id and name of every resource that holds a value, event
    /// queues aside, in registration order.
    pub fn present(&self) -> impl Iterator<Item = (TypeId, &'static str)> + '_ {
        self.slots.iter().filter(|slot| slot.value.is_some() && !slot.transient).map(|slot| (slot.type_id, slot.name))
    }

    /// The type id and name of every event queue that holds a value, in
    /// registration order.
    pub fn event_queues(&self) -> impl Iterator<Item = (TypeId, &'static str)> + '_ {
        self.slots.iter().filter(|slot| slot.value.is_some() && slot.transient).map(|slot| (slot.type_id, slot.name))
    }

    /// Number of resource types registered (with or without a value).
    pub fn len(&self) -> usize {
        self.slots.len()
    }
}

fn downcast_box<T: Resource>(value: Box<dyn Any + Send + Sync>) -> Box<T> {
    value.downcast().unwrap_or_else(|_| unreachable!("resource slot of {} holds another type", type_name::<T>()))
}

fn downcast_ref<T: Resource>(value: &(dyn Any + Send + Sync)) -> &T {
    value.downcast_ref().unwrap_or_else(|| unreachable!("resource slot of {} holds another type", type_name::<T>()))
}

fn downcast_mut<T: Resource>(value: &mut (dyn Any + Send + Sync)) -> &mut T {
    value.downcast_mut().unwrap_or_else(|| unreachable!("resource slot of {} holds another type", type_name::<T>()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_get_replace_remove() {
        let mut resources = Resources::default();
        assert_eq!(resources.insert(3u32, Tick::new(1)), None);
        assert_eq!(resources.insert(4u32, Tick::new(2)), Some(3));
        assert_eq!(resources.get::<u32>(), Some(&4));
        *resources.get_mut::<u32>(Tick::new(3)).unwrap() += 1;
        assert_eq!(resources.ticks::<u32>(), Some(ComponentTicks { added: Tick::new(2), changed: Tick::new(3) }));
        assert_eq!(resources.remove::<u32>(), Some(5));
        assert!(!resources.contains::<u32>());
        assert_eq!(resources.get::<u32>(), None);
        assert_eq!(resources.len(), 1, "the type stays registered");
    }

    #[test]
    fn ids_are_dense_and_named() {
        let mut resources = Resources::default();
        let a = resources.register::<u8>();
        let b = resources.register::<String>();
        assert_eq!((a.index(), b.index()), (0, 1));
        assert_eq!(resources.register::<u8>(), a);
    }
}
