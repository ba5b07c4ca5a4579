//! What rolls back and how each type is hashed: one entry per component or
//! resource type, made where the type is known (the generic `component`,
//! `resource`, `skip_*` methods) and used type-erased by the snapshots and
//! the checksum.
//!
//! The whole world rolls back: every entity, and every component and
//! resource in it, is in each snapshot. An entry gives a rolled-back type
//! its hash function; a skipped type is carried over from the present
//! world on a load instead of restored. A type in the world with neither is
//! refused when the session starts (see [`RollbackError`]), never left out
//! of the checksum silently.

use std::any::{Any, TypeId};
use std::hash::{Hash, Hasher};

use archetable_core::storage::{Archetype, Components};
use archetable_core::{
    ChildOf, Children, Component, ComponentId, Disabled, Entity, Event, Events, MutableComponent, Name, Resource, World,
};

use crate::checksum::StableHasher;
use crate::error::RollbackError;

/// A type's hash function: a closure without captures (a zero-sized type,
/// so calls to it inline) or a function pointer.
pub(crate) trait HashFn<T>: Fn(&T, &mut StableHasher) + Copy + Send + Sync + 'static {}

impl<T, F: Fn(&T, &mut StableHasher) + Copy + Send + Sync + 'static> HashFn<T> for F {}

/// A resource value kept in a snapshot.
pub(crate) type Stored = Option<Box<dyn Any + Send + Sync>>;

type HashWorld = Box<dyn Fn(&World, &mut StableHasher) + Send + Sync>;
type HashColumn = Box<dyn Fn(&Archetype, ComponentId, &mut StableHasher) + Send + Sync>;
type DetailWorld = Box<dyn Fn(&World, u32, &mut Vec<Detail>) + Send + Sync>;
type Carry = Box<dyn Fn(&mut World, &mut World) + Send + Sync>;
type SaveResource = Box<dyn Fn(&World, &mut Stored) + Send + Sync>;
type LoadResource = Box<dyn Fn(&mut World, &Stored) + Send + Sync>;

/// One value's hash in a debug record: which type (an index into the
/// registry), which entity (none for a resource), and the value's hash.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Detail {
    pub kind: u32,
    pub entity: Option<Entity>,
    pub hash: u64,
}

pub(crate) struct ComponentEntry {
    pub type_id: TypeId,
    pub name: &'static str,
    /// Hashes every holder (handle and value) in query order: for a
    /// component stored in sparse sets.
    pub hash: HashWorld,
    /// Hashes the values of one table's column, in row order.
    pub hash_column: HashColumn,
    /// The type's id in a world, if the world knows it.
    pub id: fn(&Components) -> Option<ComponentId>,
    pub detail: DetailWorld,
}

pub(crate) struct ResourceEntry {
    pub type_id: TypeId,
    pub name: &'static str,
    pub save: SaveResource,
    pub load: LoadResource,
    pub hash: HashWorld,
    /// Readies the world for rollback of this type, with the ring's length
    /// (an event queue is made to exist and its readers to remember their
    /// positions).
    pub prepare: fn(&mut World, usize),
}

pub(crate) struct Skipped {
    pub type_id: TypeId,
    pub carry: Carry,
}

/// The rollback registrations of one driver: which components and
/// resources roll back (with their hash functions) and which are skipped.
///
/// Made by [`RollbackDriver::new`](crate::RollbackDriver::new), which
/// registers the engine's own types (`ChildOf`, `Children`, `Disabled`,
/// `Name`, `Time`) and the
/// driver's (`SimTime`, `RollbackRng`, `PlayerInputs`); the game adds its
/// own through the driver's `component`, `resource` and `skip_*` methods.
#[derive(Default)]
pub struct Registry {
    pub(crate) components: Vec<ComponentEntry>,
    pub(crate) resources: Vec<ResourceEntry>,
    pub(crate) skipped_components: Vec<Skipped>,
    pub(crate) skipped_resources: Vec<Skipped>,
}

impl Registry {
    fn knows(&self, type_id: TypeId) -> bool {
        self.components.iter().any(|e| e.type_id == type_id)
            || self.resources.iter().any(|e| e.type_id == type_id)
            || self.skipped_components.iter().any(|e| e.type_id == type_id)
            || self.skipped_resources.iter().any(|e| e.type_id == type_id)
    }

    /// Rolls back component `T`, hashed by `hash`. A second registration of
    /// the same type is ignored.
    pub(crate) fn component_with<T: Component>(&mut self, hash: impl HashFn<T>) {
        if self.knows(TypeId::of::<T>()) {
            return;
        }
        self.components.push(ComponentEntry {
            type_id: TypeId::of::<T>(),
            name: std::any::type_name::<T>(),
            hash: Box::new(move |world, hasher| {
                let mut count = 0u64;
                for (entity, value) in world.query::<(Entity, &T)>() {
                    hasher.write_u64(entity.to_bits());
                    hash(value, hasher);
                    count += 1;
                }
                hasher.write_u64_count(count);
            }),
            hash_column: Box::new(move |table, id, hasher| {
                let values = table.column_slice::<T>(id).unwrap_or_default();
                for value in values {
                    hash(value, hasher);
                }
                hasher.write_u64_count(values.len() as u64);
            }),
            id: Components::id::<T>,
            detail: Box::new(move |world, kind, out| {
                for (entity, value) in world.query::<(Entity, &T)>() {
                    let mut hasher = StableHasher::new();
                    hash(value, &mut hasher);
                    out.push(Detail { kind, entity: Some(entity), hash: (hasher.finish128() >> 64) as u64 });
                }
            }),
        });
    }

    /// Rolls back resource `T`, hashed by `hash`.
    pub(crate) fn resource_with<T: Resource + Clone>(&mut self, hash: impl HashFn<T>) {
        if self.knows(TypeId::of::<T>()) {
            return;
        }
        self.resources.push(ResourceEntry {
            type_id: TypeId::of::<T>(),
            name: std::any::type_name::<T>(),
            save: Box::new(|world, stored| match (world.get_resource::<T>(), stored.as_mut()) {
                (Some(value), Some(kept)) => match kept.downcast_mut::<T>() {
                    // Reuses the kept value's buffers.
                    Some(kept) => kept.clone_from(value),
                    None => *stored = Some(Box::new(value.clone())),
                },
                (Some(value), None) => *stored = Some(Box::new(value.clone())),
                (None, _) => *stored = None,
            }),
            load: Box::new(|world, stored| match stored.as_ref().and_then(|kept| kept.downcast_ref::<T>()) {
                Some(kept) => match world.get_resource_mut::<T>() {
                    Some(present) => present.clone_from(kept),
                    None => {
                        world.insert_resource(kept.clone());
                    }
                },
                None => {
                    world.remove_resource::<T>();
                }
            }),
            hash: Box::new(move |world, hasher| match world.get_resource::<T>() {
                Some(value) => {
                    hasher.write_u8_flag(1);
                    hash(value, hasher);
                }
                None => hasher.write_u8_flag(0),
            }),
            prepare: |_, _| {},
        });
    }

    /// Rolls back the queue of events `E` (`Events<E>`) and the positions
    /// of its readers, each event hashed by `hash`.
    pub(crate) fn event_with<E: Event + Clone>(&mut self, hash: impl HashFn<E>) {
        if self.knows(TypeId::of::<Events<E>>()) {
            return;
        }
        self.resources.push(ResourceEntry {
            type_id: TypeId::of::<Events<E>>(),
            name: std::any::type_name::<Events<E>>(),
            save: Box::new(|world, stored| {
                let kept = stored.as_mut().and_then(|kept| kept.downcast_mut::<Events<E>>());
                match (world.get_resource::<Events<E>>(), kept) {
                    // Reuses the kept queue's buffers.
                    (Some(events), Some(kept)) => kept.clone_from(events),
                    (Some(events), None) => *stored = Some(Box::new(events.clone())),
                    (None, _) => *stored = None,
                }
            }),
            load: Box::new(|world, stored| {
                // A queue that did not exist at the save (made since, by a
                // reader's first run) stays: its readers need it.
                let Some(kept) = stored.as_ref().and_then(|kept| kept.downcast_ref::<Events<E>>()) else { return };
                if world.get_resource::<Events<E>>().is_none() {
                    world.add_event::<E>();
                }
                world.resource_mut::<Events<E>>().rewind_to(kept);
            }),
            hash: Box::new(move |world, hasher| match world.get_resource::<Events<E>>() {
                Some(events) => {
                    hasher.write_u8_flag(1);
                    hasher.write_u64_count(events.len() as u64);
                    for event in events.iter() {
                        hash(event, hasher);
                    }
                }
                None => hasher.write_u8_flag(0),
            }),
            prepare: |world, frames| {
                world.add_event::<E>();
                world.resource_mut::<Events<E>>().remember_cursors(frames);
            },
        });
    }

    /// Readies the world for rollback of the registered types, with a ring
    /// of `frames` snapshots.
    pub(crate) fn prepare(&self, world: &mut World, frames: usize) {
        for entry in &self.resources {
            (entry.prepare)(world, frames);
        }
    }

    /// Leaves component `T` out of rollback.
    pub(crate) fn skip_component<T: Component + MutableComponent>(&mut self) {
        if self.knows(TypeId::of::<T>()) {
            return;
        }
        self.skipped_components.push(Skipped {
            type_id: TypeId::of::<T>(),
            carry: Box::new(|present, restored| {
                // The present value goes to the same entity in the snapshot
                // about to be copied back, where that entity has the
                // component there too; no entity changes table, so no
                // query's order changes.
                for (entity, mut value) in present.query_mut::<(Entity, &mut T)>() {
                    if let Some(mut slot) = restored.get_mut::<T>(entity) {
                        std::mem::swap(&mut *slot, &mut *value);
                    }
                }
            }),
        });
    }

    /// Leaves resource `T` out of rollback: a load copies the snapshot's
    /// entities into the present world, which keeps its resources, so
    /// there is nothing to carry.
    pub(crate) fn skip_resource<T: Resource>(&mut self) {
        if self.knows(TypeId::of::<T>()) {
            return;
        }
        self.skipped_resources.push(Skipped { type_id: TypeId::of::<T>(), carry: Box::new(|_, _| {}) });
    }

    /// Registers the engine's own components: the relationship pair, the
    /// `Disabled` marker (whose presence the entity counts already hash)
    /// and `Name`; skips the resource that holds registered systems.
    pub(crate) fn engine_types(&mut self) {
        // The world's registered one-shot systems: kept as they are by a
        // load, their private state (`Local`s) with them.
        self.skipped_resources
            .push(Skipped { type_id: archetable_core::__private::registry_type_id(), carry: Box::new(|_, _| {}) });
        self.component_with::<ChildOf>(|parent, h| parent.0.hash(h));
        self.component_with::<Disabled>(|_, h| h.write_u8(1));
        self.component_with::<Name>(|name, h| name.as_str().hash(h));
        self.component_with::<Children>(|children, h| {
            h.write_usize(children.len());
            for child in children.iter() {
                child.hash(h);
            }
        });
    }

    /// Checks that every component, resource and event type in `world` rolls back
    /// cloneably with a hash function, or is skipped (and cloneable, for
    /// components: snapshots copy whole tables).
    pub(crate) fn check(&self, world: &World) -> Result<(), RollbackError> {
        for info in world.components().iter() {
            let rolled = self.components.iter().any(|e| e.type_id == info.type_id());
            let skipped = self.skipped_components.iter().any(|e| e.type_id == info.type_id());
            if !rolled && !skipped {
                return Err(RollbackError::UnregisteredComponent { name: info.name() });
            }
            if !info.is_cloneable() {
                return Err(RollbackError::NotCloneable { name: info.name() });
            }
        }
        for (type_id, name) in world.resource_types() {
            let rolled = self.resources.iter().any(|e| e.type_id == type_id);
            let skipped = self.skipped_resources.iter().any(|e| e.type_id == type_id);
            if !rolled && !skipped {
                return Err(RollbackError::UnregisteredResource { name });
            }
        }
        for (type_id, name) in world.event_types() {
            let rolled = self.resources.iter().any(|e| e.type_id == type_id);
            let skipped = self.skipped_resources.iter().any(|e| e.type_id == type_id);
            if !rolled && !skipped {
                return Err(RollbackError::UnregisteredEvent { name });
            }
        }
        Ok(())
    }

    /// The name of a registered type, by its index in the debug records.
    pub(crate) fn kind_name(&self, kind: u32) -> &'static str {
        let kind = kind as usize;
        match self.components.get(kind) {
            Some(entry) => entry.name,
            None => self.resources.get(kind - self.components.len()).map_or("?", |entry| entry.name),
        }
    }
}

/// Small helpers so the checksum layout reads as what it writes.
trait WriteExt {
    fn write_u64_count(&mut self, count: u64);
    fn write_u8_flag(&mut self, flag: u8);
}

impl WriteExt for StableHasher {
    fn write_u64_count(&mut self, count: u64) {
        std::hash::Hasher::write_u64(self, count);
    }

    fn write_u8_flag(&mut self, flag: u8) {
        std::hash::Hasher::write_u8(self, flag);
    }
}
