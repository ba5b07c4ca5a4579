//! `RemovedComponents<T>`: the system parameter that lists the entities that
//! lost a `T` since the system last looked.

use std::marker::PhantomData;

use crate::component::{Component, ComponentId};
use crate::entity::Entity;
use crate::system::access::AccessConflict;
use crate::system::param::{SystemMeta, SystemParam};
use crate::world::event::Position;
use crate::world::removed::RemovalLog;
use crate::world::World;

/// The entities that lost a `T`, by `remove`, `despawn` or `World::clear`,
/// since this system last read them: each removal is seen once. Works for
/// every component type, tracked or not. Recording starts when the system
/// is added to a schedule, before the schedule first runs: from then on
/// every world records removals of `T` (one push per removal, kept two
/// frames). A removal stays readable for two frames, so a system that runs
/// every frame (or every other) misses none.
///
/// ```
/// use archetable::prelude::*;
///
/// #[derive(Component)] struct Hp(u32);
/// #[derive(Default)] struct Graveyard(Vec<Entity>);
///
/// fn bury(mut removed: RemovedComponents<Hp>, mut graveyard: ResMut<Graveyard>) {
///     graveyard.0.extend(removed.read());
/// }
///
/// let mut world = World::new();
/// world.init_resource::<Graveyard>();
/// let mut schedule = Schedule::new();
/// schedule.add_system(bury);
/// let a = world.spawn(Hp(1));
/// schedule.run(&mut world);
/// world.despawn(a).unwrap();
/// schedule.run(&mut world);
/// schedule.run(&mut world);
/// assert_eq!(world.resource::<Graveyard>().0, [a]);
/// ```
pub struct RemovedComponents<'w, 's, T: Component> {
    log: Option<&'w RemovalLog>,
    cursor: &'s mut RemovalCursor,
    _type: PhantomData<fn() -> T>,
}

impl<T: Component> RemovedComponents<'_, '_, T> {
    /// The entities that lost a `T` since the last read, oldest first. They
    /// may be despawned, or alive without a `T`, or have a `T` again.
    pub fn read(&mut self) -> impl Iterator<Item = Entity> + '_ + use<'_, T> {
        let cursor = &mut self.cursor.0;
        self.log.into_iter().flat_map(move |log| log.read(cursor))
    }

    /// How many removals are unread.
    pub fn len(&self) -> usize {
        self.log.map_or(0, |log| log.unread(&self.cursor.0))
    }

    /// Whether every removal has been read.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Marks every removal read.
    pub fn clear(&mut self) {
        self.read().for_each(drop);
    }
}

/// A [`RemovedComponents`] reader's place in its removal log, kept in the
/// system's state (and sent back by
/// [`World::rewind_removals`](crate::World::rewind_removals)).
#[derive(Debug)]
pub struct RemovalCursor(Position);

// SAFETY: reads only the world's removal log, which changes only through
// `&mut World` (structural changes and `update_events`), never while
// systems run; so it needs no recorded access.
unsafe impl<T: Component> SystemParam for RemovedComponents<'_, '_, T> {
    type State = (ComponentId, RemovalCursor);
    type Item<'w, 's> = RemovedComponents<'w, 's, T>;

    fn init_state(world: &mut World, _: &mut SystemMeta) -> Result<Self::State, AccessConflict> {
        crate::world::removed::want(std::any::TypeId::of::<T>());
        Ok((world.track_removed::<T>(), RemovalCursor(Position::default())))
    }

    #[inline]
    unsafe fn get_param<'w, 's>(
        (id, cursor): &'s mut Self::State,
        world: &'w World,
        _: &'s SystemMeta,
    ) -> RemovedComponents<'w, 's, T> {
        RemovedComponents { log: world.removals().log(*id), cursor, _type: PhantomData }
    }
}
