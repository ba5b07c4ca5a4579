//! `EventReader` and `EventWriter`: the system parameters over a world's
//! [`Events`] queues.

use std::any::type_name;

use crate::storage::resource::ResourceId;
use crate::system::access::AccessConflict;
use crate::system::param::{SystemMeta, SystemParam};
use crate::world::event::{Event, EventCursor, Events};
use crate::world::World;

/// Reads the events of type `E` sent since this system last read them.
///
/// Each system keeps its own position, so several readers each see every
/// event once. Adding a system with an `EventReader<E>` registers `E`.
///
/// ```
/// use archetable::prelude::*;
///
/// struct Hit { damage: u32 }
///
/// fn tally(mut hits: EventReader<Hit>, mut total: ResMut<u32>) {
///     for hit in hits.read() {
///         *total += hit.damage;
///     }
/// }
/// let mut world = World::new();
/// world.insert_resource(0u32);
/// let mut schedule = Schedule::new();
/// schedule.add_system(tally);
/// world.send_event(Hit { damage: 3 });
/// world.send_event(Hit { damage: 4 });
/// schedule.run(&mut world);
/// schedule.run(&mut world);
/// assert_eq!(*world.resource::<u32>(), 7);
/// ```
pub struct EventReader<'w, 's, E: Event> {
    events: &'w Events<E>,
    cursor: &'s mut EventCursor<E>,
}

impl<'w, E: Event> EventReader<'w, '_, E> {
    /// The events not read yet, oldest first; marks them read.
    pub fn read(&mut self) -> impl DoubleEndedIterator<Item = &'w E> + use<'w, E> {
        self.cursor.read(self.events)
    }

    /// Number of events not read yet.
    pub fn len(&self) -> usize {
        self.cursor.len(self.events)
    }

    /// Whether every event has been read.
    pub fn is_empty(&self) -> bool {
        self.cursor.is_empty(self.events)
    }

    /// Marks every waiting event read without looking at it.
    pub fn clear(&mut self) {
        self.cursor.read(self.events).for_each(drop);
    }

    /// Events dropped before this reader saw them (it did not run for two
    /// frames).
    pub fn missed(&self) -> u64 {
        self.cursor.missed()
    }
}

/// Sends events of type `E`. Adding a system with an `EventWriter<E>`
/// registers `E`.
pub struct EventWriter<'w, E: Event> {
    events: &'w mut Events<E>,
}

impl<E: Event> EventWriter<'_, E> {
    /// Sends `event`.
    pub fn send(&mut self, event: E) {
        self.events.send(event);
    }

    /// Sends every event of `events`.
    pub fn send_batch(&mut self, events: impl IntoIterator<Item = E>) {
        self.events.send_batch(events);
    }
}

#[cold]
#[inline(never)]
fn missing_events<E>(system: &str) -> ! {
    panic!("system `{system}` reads or writes events `{}`, whose queue was removed from the world", type_name::<E>())
}

// SAFETY: borrows only the `Events<E>` resource, recorded as a read.
unsafe impl<E: Event> SystemParam for EventReader<'_, '_, E> {
    type State = (ResourceId, EventCursor<E>);
    type Item<'w, 's> = EventReader<'w, 's, E>;

    fn init_state(world: &mut World, meta: &mut SystemMeta) -> Result<Self::State, AccessConflict> {
        let id = world.add_event::<E>();
        meta.add_resource_read(id, type_name::<Events<E>>(), type_name::<Self>())?;
        Ok((id, EventCursor::default()))
    }

    #[inline]
    unsafe fn get_param<'w, 's>(
        (id, cursor): &'s mut Self::State,
        world: &'w World,
        meta: &'s SystemMeta,
    ) -> EventReader<'w, 's, E> {
        // SAFETY: nothing writes `Events<E>` for `'w` (caller).
        match unsafe { world.resources().get_by_id::<Events<E>>(*id) } {
            Some(events) => EventReader { events, cursor },
            None => missing_events::<E>(meta.name()),
        }
    }
}

// SAFETY: borrows only the `Events<E>` resource, recorded as a write.
unsafe impl<E: Event> SystemParam for EventWriter<'_, E> {
    type State = ResourceId;
    type Item<'w, 's> = EventWriter<'w, E>;

    fn init_state(world: &mut World, meta: &mut SystemMeta) -> Result<ResourceId, AccessConflict> {
        let id = world.add_event::<E>();
        meta.add_resource_write(id, type_name::<Events<E>>(), type_name::<Self>())?;
        Ok(id)
    }

    #[inline]
    unsafe fn get_param<'w, 's>(id: &'s mut ResourceId, world: &'w World, meta: &'s SystemMeta) -> EventWriter<'w, E> {
        // SAFETY: nothing else borrows `Events<E>` for `'w` (caller).
        match unsafe { world.resources().get_mut_unchecked::<Events<E>>(*id) } {
            Some(events) => EventWriter { events },
            None => missing_events::<E>(meta.name()),
        }
    }
}
