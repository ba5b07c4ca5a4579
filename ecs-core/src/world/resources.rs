//! Resources, events and removal tracking on the world: the values of which
//! a world has one (`insert_resource`, `resource`), its event queues
//! (`add_event`, `send_event`) and the lists of removed components.

use crate::component::change::ComponentTicks;
use crate::component::{Component, ComponentId};
use crate::entity::Entity;
use crate::storage::resource::{Resource, ResourceId, Resources};
use crate::world::event::{Event, Events};
use crate::world::removed::{RemovalRecord, Removals};
use crate::world::World;

impl World {
    /// Stores `value` as the world's `T` resource, returning the one it
    /// replaces.
    ///
    /// ```
    /// # use archetable::World;
    /// struct Score(u32);
    /// let mut world = World::new();
    /// world.insert_resource(Score(0));
    /// world.resource_mut::<Score>().0 += 10;
    /// assert_eq!(world.resource::<Score>().0, 10);
    /// ```
    pub fn insert_resource<T: Resource>(&mut self, value: T) -> Option<T> {
        let tick = self.change_tick();
        self.resources.insert(value, tick)
    }

    /// Inserts `T::default()` unless a `T` is already there.
    pub fn init_resource<T: Resource + Default>(&mut self) {
        if !self.resources.contains::<T>() {
            let tick = self.change_tick();
            self.resources.insert(T::default(), tick);
        }
    }

    /// Takes the `T` resource out of the world.
    pub fn remove_resource<T: Resource>(&mut self) -> Option<T> {
        self.resources.remove::<T>()
    }

    /// Whether the world holds a `T` resource.
    pub fn contains_resource<T: Resource>(&self) -> bool {
        self.resources.contains::<T>()
    }

    /// The `T` resource.
    ///
    /// # Panics
    /// If there is none; [`World::get_resource`] returns an `Option`.
    #[track_caller]
    pub fn resource<T: Resource>(&self) -> &T {
        self.get_resource().unwrap_or_else(|| missing_resource::<T>())
    }

    /// The `T` resource, mutably.
    ///
    /// # Panics
    /// If there is none; [`World::get_resource_mut`] returns an `Option`.
    #[track_caller]
    pub fn resource_mut<T: Resource>(&mut self) -> &mut T {
        self.get_resource_mut().unwrap_or_else(|| missing_resource::<T>())
    }

    /// The `T` resource, if there is one.
    pub fn get_resource<T: Resource>(&self) -> Option<&T> {
        self.resources.get()
    }

    /// The `T` resource, mutably, if there is one. Counts as a write:
    /// [`Res::is_changed`](crate::Res::is_changed) sees it.
    pub fn get_resource_mut<T: Resource>(&mut self) -> Option<&mut T> {
        let tick = self.change_tick();
        self.resources.get_mut(tick)
    }

    /// When the `T` resource was inserted and last written, if there is
    /// one.
    ///
    /// ```
    /// # use archetable::World;
    /// struct Score(u32);
    /// let mut world = World::new();
    /// world.insert_resource(Score(0));
    /// let ticks = world.resource_ticks::<Score>().unwrap();
    /// assert_eq!(ticks.added, ticks.changed);
    /// ```
    pub fn resource_ticks<T: Resource>(&self) -> Option<ComponentTicks> {
        self.resources.ticks::<T>()
    }

    /// The type id and Rust type name of every resource the world holds,
    /// in the order the types were first registered; event queues, which
    /// the engine keeps, are left out. Saves use it to name the resources
    /// they could not write.
    ///
    /// ```
    /// use archetable::World;
    ///
    /// struct Score(u32);
    /// let mut world = World::new();
    /// world.insert_resource(Score(3));
    /// let names: Vec<&str> = world.resource_types().map(|(_, name)| name).collect();
    /// assert!(names.iter().any(|name| name.ends_with("Score")));
    /// ```
    pub fn resource_types(&self) -> impl Iterator<Item = (std::any::TypeId, &'static str)> + '_ {
        self.resources.present()
    }

    /// The type id and name of every event queue ([`Events<E>`], a resource
    /// that [`World::resource_types`] leaves out) in the world, in
    /// registration order.
    ///
    /// ```
    /// use archetable::World;
    ///
    /// struct Hit;
    /// let mut world = World::new();
    /// world.send_event(Hit);
    /// let names: Vec<&str> = world.event_types().map(|(_, name)| name).collect();
    /// assert_eq!(names.len(), 1);
    /// assert!(names[0].contains("Events<") && names[0].ends_with("Hit>"), "{names:?}");
    /// ```
    pub fn event_types(&self) -> impl Iterator<Item = (std::any::TypeId, &'static str)> + '_ {
        self.resources.event_queues()
    }

    pub(crate) fn resources(&self) -> &Resources {
        &self.resources
    }

    pub(crate) fn resources_mut(&mut self) -> &mut Resources {
        &mut self.resources
    }

    /// Registers event type `E`: inserts an empty [`Events<E>`] queue if
    /// there is none, and has [`World::update_events`] age it. Sending or
    /// reading an `E` registers it too; call this to make a queue exist
    /// before anything uses it.
    pub fn add_event<E: Event>(&mut self) -> ResourceId {
        let id = self.resources.register::<Events<E>>();
        if !self.resources.contains_id(id) {
            let tick = self.change_tick();
            self.resources.insert(Events::<E>::default(), tick);
            self.resources.mark_transient(id);
        }
        if !self.event_updaters.iter().any(|&(registered, _)| registered == id) {
            self.event_updaters.push((id, |world| {
                if let Some(events) = world.get_resource_mut::<Events<E>>() {
                    events.update();
                }
            }));
        }
        id
    }

    /// Sends `event` to the readers of `E`, registering the event type if
    /// needed.
    pub fn send_event<E: Event>(&mut self, event: E) {
        self.add_event::<E>();
        self.resource_mut::<Events<E>>().send(event);
    }

    /// Ends a frame for every registered event type (see [`Events`]): events
    /// sent two frames ago are dropped. A [`Schedule`](crate::Schedule)
    /// calls it at the end of every run.
    pub fn update_events(&mut self) {
        self.removals.update();
        for i in 0..self.event_updaters.len() {
            (self.event_updaters[i].1)(self);
        }
    }

    /// Drops every queued event of every registered event type.
    pub(crate) fn clear_events(&mut self) {
        for i in 0..self.event_updaters.len() {
            // Two updates age every event out, and keep readers' cursors valid.
            (self.event_updaters[i].1)(self);
            (self.event_updaters[i].1)(self);
        }
    }

    /// Starts recording which entities lose a `T` (by `remove`, `despawn`
    /// or `clear`), for [`World::removed`] and
    /// [`RemovedComponents`](crate::RemovedComponents), which calls this
    /// itself. Records live for two frames ([`World::update_events`]).
    pub fn track_removed<T: Component>(&mut self) -> ComponentId {
        let id = self.components.register::<T>();
        self.removals.track(id);
        id
    }

    /// The entities that lost a `T` in this frame and the previous one,
    /// oldest first; empty unless removals of `T` are recorded
    /// ([`World::track_removed`]).
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component)] struct Hp(u32);
    /// let mut world = World::new();
    /// world.track_removed::<Hp>();
    /// let a = world.spawn(Hp(1));
    /// world.despawn(a).unwrap();
    /// assert_eq!(world.removed::<Hp>().collect::<Vec<_>>(), [a]);
    /// ```
    pub fn removed<T: Component>(&self) -> impl Iterator<Item = Entity> + '_ {
        let log = self.components.id::<T>().and_then(|id| self.removals.log(id));
        log.into_iter().flat_map(|log| log.all())
    }

    pub(crate) fn removals(&self) -> &Removals {
        &self.removals
    }

    /// Copies the removal logs that [`RemovedComponents`](crate::RemovedComponents)
    /// and [`World::removed`] read into `record`, reusing its memory; for
    /// rollback, with [`World::rewind_removals`].
    pub fn save_removals(&self, record: &mut RemovalRecord) {
        self.removals.save(record);
    }

    /// Makes the removal logs those copied into `record` (from this world,
    /// by [`World::save_removals`]), and sends each
    /// [`RemovedComponents`](crate::RemovedComponents) reader back to
    /// where it was at that copy, if readers remember
    /// ([`World::remember_removal_readers`]): at its next read it sees what
    /// it saw after that point the first time, if the frames run again
    /// remove the same components. A log that did not exist at the copy
    /// stays as it is.
    ///
    /// ```
    /// use archetable::prelude::*;
    /// use archetable::RemovalRecord;
    ///
    /// #[derive(Component)] struct Hp(u32);
    /// #[derive(Default)] struct Seen(Vec<Entity>);
    /// fn note(mut removed: RemovedComponents<Hp>, mut seen: ResMut<Seen>) {
    ///     seen.0.extend(removed.read());
    /// }
    /// let mut world = World::new();
    /// world.init_resource::<Seen>();
    /// let mut schedule = Schedule::new();
    /// schedule.add_system(note);
    /// world.remember_removal_readers(4);
    /// let (a, b) = (world.spawn(Hp(1)), world.spawn(Hp(2)));
    /// schedule.run(&mut world);
    /// world.despawn(a).unwrap();
    /// let mut record = RemovalRecord::default();
    /// world.save_removals(&mut record);
    /// schedule.run(&mut world); // sees `a`
    /// world.despawn(b).unwrap();
    /// schedule.run(&mut world); // sees `b`
    /// world.rewind_removals(&record);
    /// schedule.run(&mut world); // back before it saw `a`: sees `a` again
    /// assert_eq!(world.resource::<Seen>().0, [a, b, a]);
    /// ```
    pub fn rewind_removals(&mut self, record: &RemovalRecord) {
        self.removals.rewind_to(record);
    }

    /// Has every [`RemovedComponents`](crate::RemovedComponents) reader
    /// remember its position at the start of each of the last `frames`
    /// frames it read in (in memory allocated once per reader), so that
    /// [`World::rewind_removals`] can send it back that far. 0, the
    /// default, turns it off.
    pub fn remember_removal_readers(&mut self, frames: usize) {
        self.removals.remember_readers(frames);
    }
}

#[cold]
#[track_caller]
pub(crate) fn missing_resource<T>() -> ! {
    panic!(
        "resource `{}` is not in the world; add it with `world.insert_resource(..)` or use `get_resource`",
        std::any::type_name::<T>()
    )
}
