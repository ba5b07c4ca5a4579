//! The world's change tick: the tick writes are stamped with, handed out
//! to readers as their runs start (one at a time or several at once), and
//! the periodic clamp of every stored tick that keeps wrap-around from
//! making an old change look new (`component/change.rs` has the ticks
//! themselves).

use std::sync::atomic::Ordering;

use crate::component::change::{RunTicks, Tick, CHECK_INTERVAL};
use crate::world::World;

impl World {
    /// The world's current change tick: writes made now, outside systems,
    /// are stamped with it.
    #[inline]
    pub fn change_tick(&self) -> Tick {
        Tick::new(self.change_tick.load(Ordering::Relaxed))
    }

    /// Starts a reader's run: returns the tick of the run and advances the
    /// world's tick past it, so later writes are newer than the run.
    #[inline]
    pub(crate) fn increment_change_tick(&self) -> Tick {
        Tick::new(self.change_tick.fetch_add(1, Ordering::Relaxed))
    }

    /// [`World::increment_change_tick`] through an exclusive borrow: a plain
    /// add, not an atomic one (about 20 cycles, a good part of a pass over a
    /// few small tables).
    #[inline]
    pub(crate) fn increment_change_tick_mut(&mut self) -> Tick {
        let tick = self.change_tick.get_mut();
        let now = *tick;
        *tick = now.wrapping_add(1);
        Tick::new(now)
    }

    /// Hands out `n` consecutive change ticks at once, for readers that
    /// will run side by side: the first is returned, and the world's tick
    /// moves past the last. One update of the counter instead of one per
    /// reader, which threads would otherwise fight over.
    #[inline]
    pub(crate) fn reserve_change_ticks(&mut self, n: u32) -> Tick {
        let tick = self.change_tick.get_mut();
        let first = *tick;
        *tick = tick.wrapping_add(n);
        Tick::new(first)
    }

    /// Clamps every stored change tick to at most [`Tick::MAX_AGE`] old, so
    /// that ticks wrapping around never make an old change look new. A
    /// [`Schedule`](crate::Schedule) calls it when due (every 2^29 ticks);
    /// call it yourself if the world's tick advances without one.
    pub fn check_change_ticks(&mut self) {
        let now = self.change_tick();
        for archetype in self.archetypes.as_mut_slice() {
            archetype.check_ticks(now);
        }
        self.sparse.check_ticks(now);
        self.resources.check_ticks(now);
        self.last_check_tick = now;
    }

    /// The ticks of a reader without a previous run (`World::query`,
    /// `query_one`): writes are stamped now, and every change the world
    /// still remembers counts as new.
    #[inline]
    pub(crate) fn one_off_ticks(&self) -> RunTicks {
        let now = self.change_tick();
        RunTicks { last_run: Tick::new(now.get().wrapping_sub(Tick::MAX_AGE)), this_run: now }
    }

    /// Runs [`World::check_change_ticks`] if enough ticks passed since the
    /// last check; returns the tick it clamped to.
    pub(crate) fn check_change_ticks_if_due(&mut self) -> Option<Tick> {
        let now = self.change_tick();
        if now.get().wrapping_sub(self.last_check_tick.get()) >= CHECK_INTERVAL {
            self.check_change_ticks();
            Some(now)
        } else {
            None
        }
    }

    /// Moves the world's change tick one step on and returns the new tick:
    /// every write made from now on is newer than every write made before,
    /// as at the start of a system's run. For code outside a schedule that
    /// notes the world as it is now and later asks what changed since, with
    /// [`Tick::is_newer_than`] and `last_run` one before the returned tick
    /// (what a rollback snapshot does to keep the hashes of unchanged
    /// columns).
    pub fn next_change_tick(&mut self) -> Tick {
        let tick = self.change_tick.get_mut();
        *tick = tick.wrapping_add(1);
        Tick::new(*tick)
    }

    /// Advances the change tick by `ticks` at once, as if that many systems
    /// had run: a test hook for tick wrap-around. Not part of the API.
    #[doc(hidden)]
    pub fn advance_change_tick(&mut self, ticks: u32) {
        let tick = self.change_tick.get_mut();
        *tick = tick.wrapping_add(ticks);
    }
}
