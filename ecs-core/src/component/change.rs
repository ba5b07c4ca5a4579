//! `Mut`, the handle through which queries and `World::get_mut` hand out
//! mutable component access.

use std::cell::UnsafeCell;
use std::fmt;
use std::ops::{Deref, DerefMut};

/// A point in a world's change history. The world's tick advances once per
/// system run (and once per [`QueryState`](crate::QueryState) iteration);
/// component writes are stamped with the tick of the run that made them.
///
/// Ticks are `u32` and wrap around. Comparisons are relative to the reader's
/// current tick, and the world keeps every stored tick within
/// [`Tick::MAX_AGE`] of the present (see
/// [`World::check_change_ticks`](crate::World::check_change_ticks)), so
/// wrapping never makes an old change look new.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Tick(u32);

impl Tick {
    /// How far back a tick can be before it is clamped to that age: older
    /// changes are all equally old.
    pub const MAX_AGE: u32 = u32::MAX - 2 * CHECK_INTERVAL;

    /// A tick with the given raw value.
    #[inline]
    pub const fn new(value: u32) -> Self {
        Tick(value)
    }

    /// The raw value.
    #[inline]
    pub const fn get(self) -> u32 {
        self.0
    }

    /// Whether this tick is after `last_run` and not after `this_run`: a
    /// change that a reader last run at `last_run` has not seen yet.
    #[inline]
    pub fn is_newer_than(self, last_run: Tick, this_run: Tick) -> bool {
        let age = this_run.0.wrapping_sub(self.0);
        let since_last_run = this_run.0.wrapping_sub(last_run.0);
        age < since_last_run
    }

    /// Moves a tick older than [`Tick::MAX_AGE`] relative to `now` up to that
    /// age. Returns whether it changed.
    #[inline]
    pub(crate) fn clamp_age(&mut self, now: Tick) -> bool {
        if now.0.wrapping_sub(self.0) > Self::MAX_AGE {
            self.0 = now.0.wrapping_sub(Self::MAX_AGE);
            true
        } else {
            false
        }
    }

    /// `self`, or the oldest tick still in range if `self` is older than
    /// [`Tick::MAX_AGE`] relative to `now`.
    #[inline]
    pub(crate) fn clamped(mut self, now: Tick) -> Tick {
        self.clamp_age(now);
        self
    }
}

/// How many ticks may pass between two clamping passes over the stored
/// ticks; [`Tick::MAX_AGE`] leaves room for that many ticks, twice.
pub(crate) const CHECK_INTERVAL: u32 = 1 << 29;

/// When a component value was added to its entity and when it was last
/// changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ComponentTicks {
    /// The tick at which the entity got this component.
    pub added: Tick,
    /// The tick of the last write (the insert counts as one).
    pub changed: Tick,
}

impl ComponentTicks {
    /// Ticks of a value added at `tick`.
    #[inline]
    pub fn new(tick: Tick) -> Self {
        ComponentTicks { added: tick, changed: tick }
    }
}

/// One stored tick, writable through a shared borrow of its column by
/// whoever holds exclusive access to the row.
#[repr(transparent)]
pub(crate) struct TickCell(UnsafeCell<Tick>);

impl TickCell {
    #[inline]
    pub fn new(tick: Tick) -> Self {
        TickCell(UnsafeCell::new(tick))
    }

    #[inline]
    pub fn get(&self) -> *mut Tick {
        self.0.get()
    }

    #[inline]
    pub fn get_mut(&mut self) -> &mut Tick {
        self.0.get_mut()
    }
}

/// The two ticks a reader compares against: when it last ran and now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunTicks {
    /// The tick of the reader's previous run; changes after it are new.
    pub last_run: Tick,
    /// The tick of this run; writes made now are stamped with it.
    pub this_run: Tick,
}

impl RunTicks {
    /// Both ticks zero: for fetches that never read them.
    pub const ZERO: RunTicks = RunTicks { last_run: Tick(0), this_run: Tick(0) };
}

/// A component type whose values carry change ticks:
/// `#[component(track_changes)]` implements it. [`Added`](crate::Added),
/// [`Changed`](crate::Changed) and [`Ref`](crate::Ref) need it.
///
/// Implemented only by the derive, alongside
/// [`Component::TRACK_CHANGES`](crate::Component::TRACK_CHANGES).
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not track changes",
    label = "this component has no change ticks",
    note = "change tracking is opt-in per type: add `#[component(track_changes)]` below `#[derive(Component)]` on `{Self}`"
)]
pub trait Tracked: crate::Component {}

/// Mutable access to a component, as returned by [`World::get_mut`] and by
/// `&mut T` query items. Derefs to `&mut T`.
///
/// Every write goes through [`DerefMut`], which is where the world can learn
/// that a component changed.
///
/// [`World::get_mut`]: crate::World::get_mut
pub struct Mut<'a, T: ?Sized> {
    value: &'a mut T,
    mark: ChangeMark<'a>,
}

/// The change-detection half of a [`Mut`]: where to stamp the change until
/// it is stamped. Only the first write through a handle stores the tick, so
/// a loop body that writes several fields stores one.
///
/// It holds no flag of its own: a `bool` would be the niche that
/// `Option<Mut<T>>` (what a query iterator's `next` returns) uses for
/// `None`, and a `for` loop over a query would then keep that flag in
/// memory and test it on every row; without one, `None` is the null value
/// pointer, which the compiler knows is never null.
pub(crate) struct ChangeMark<'a> {
    /// The value's changed tick, for a type that tracks changes, until the
    /// first write through the handle stamps it (then `None`).
    changed: Option<&'a mut Tick>,
    /// The value's added tick (unused for untracked types).
    added: Tick,
    run: RunTicks,
}

impl<'a> ChangeMark<'a> {
    #[inline(always)]
    pub fn new(changed: Option<&'a mut Tick>, added: Tick, run: RunTicks) -> Self {
        ChangeMark { changed, added, run }
    }
}

impl ChangeMark<'_> {
    /// Stamps the change, once per handle.
    #[inline(always)]
    fn mark(&mut self) {
        if let Some(changed) = self.changed.take() {
            *changed = self.run.this_run;
        }
    }
}

impl<'a, T: ?Sized> Mut<'a, T> {
    /// A handle that stamps the changed tick with the run's tick if written.
    #[inline(always)]
    pub(crate) fn new(value: &'a mut T, mark: ChangeMark<'a>) -> Self {
        Mut { value, mark }
    }

    /// The plain mutable reference, for the rest of the borrow. It counts as
    /// a write: the value is marked changed.
    #[inline]
    pub fn into_inner(self) -> &'a mut T {
        let Mut { value, mut mark } = self;
        mark.mark();
        value
    }

    /// Reborrows for a shorter lifetime, so the `Mut` can be used again after.
    #[inline]
    pub fn reborrow(&mut self) -> Mut<'_, T> {
        let mark = ChangeMark::new(self.mark.changed.as_deref_mut(), self.mark.added, self.mark.run);
        Mut { value: self.value, mark }
    }

    /// Marks the value changed without writing it.
    #[inline]
    pub fn set_changed(&mut self) {
        self.mark.mark();
    }

    /// The value, mutably, without marking it changed: for writes that
    /// readers of [`Changed`](crate::Changed) should not see, such as a
    /// cache refresh. Use sparingly.
    #[inline]
    pub fn bypass_change_detection(&mut self) -> &mut T {
        self.value
    }
}

impl<T: ?Sized + crate::Component + Tracked> Mut<'_, T> {
    /// Whether the entity got the component since the reader last ran.
    #[inline]
    pub fn is_added(&self) -> bool {
        self.mark.added.is_newer_than(self.mark.run.last_run, self.mark.run.this_run)
    }

    /// Whether the value was written (or added) since the reader last ran,
    /// writes through this handle included.
    #[inline]
    pub fn is_changed(&self) -> bool {
        // A tracked type's handle starts with its changed tick; without it,
        // the handle (or the one it was reborrowed from) has written.
        self.mark.changed.as_deref().is_none_or(|t| t.is_newer_than(self.mark.run.last_run, self.mark.run.this_run))
    }
}

impl<T: ?Sized> Deref for Mut<'_, T> {
    type Target = T;

    #[inline]
    fn deref(&self) -> &T {
        self.value
    }
}

impl<T: ?Sized> DerefMut for Mut<'_, T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        self.mark.mark();
        self.value
    }
}

impl<T: ?Sized> AsRef<T> for Mut<'_, T> {
    fn as_ref(&self) -> &T {
        self.value
    }
}

impl<T: ?Sized> AsMut<T> for Mut<'_, T> {
    fn as_mut(&mut self) -> &mut T {
        self.mark.mark();
        self.value
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for Mut<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.value.fmt(f)
    }
}

/// Read access to a component together with its change ticks: the query
/// item of `Ref<T>` for a type with `#[component(track_changes)]`.
///
/// ```
/// use archetable::prelude::*;
///
/// #[derive(Component)]
/// #[component(track_changes)]
/// struct Hp(u32);
///
/// let mut world = World::new();
/// world.spawn(Hp(3));
/// let mut query = QueryState::<Ref<Hp>>::new(&mut world);
/// let seen: Vec<(u32, bool)> = query.iter(&world).map(|hp| (hp.0, hp.is_added())).collect();
/// assert_eq!(seen, [(3, true)]);
/// // The next pass has seen it already.
/// assert!(query.iter(&world).all(|hp| !hp.is_added()));
/// ```
pub struct Ref<'a, T: ?Sized> {
    value: &'a T,
    ticks: ComponentTicks,
    run: RunTicks,
}

impl<'a, T: ?Sized> Ref<'a, T> {
    #[inline]
    pub(crate) fn new(value: &'a T, ticks: ComponentTicks, run: RunTicks) -> Self {
        Ref { value, ticks, run }
    }

    /// Whether the entity got the component since the reader last ran.
    #[inline]
    pub fn is_added(&self) -> bool {
        self.ticks.added.is_newer_than(self.run.last_run, self.run.this_run)
    }

    /// Whether the value was written (or added) since the reader last ran.
    #[inline]
    pub fn is_changed(&self) -> bool {
        self.ticks.changed.is_newer_than(self.run.last_run, self.run.this_run)
    }

    /// The value's added and changed ticks.
    #[inline]
    pub fn ticks(&self) -> ComponentTicks {
        self.ticks
    }

    /// The plain reference, for the rest of the borrow.
    #[inline]
    pub fn into_inner(self) -> &'a T {
        self.value
    }
}

impl<T: ?Sized> Deref for Ref<'_, T> {
    type Target = T;

    #[inline]
    fn deref(&self) -> &T {
        self.value
    }
}

impl<T: ?Sized> AsRef<T> for Ref<'_, T> {
    fn as_ref(&self) -> &T {
        self.value
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for Ref<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.value.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newer_than_is_relative_to_now_and_survives_wrapping() {
        let t = |v| Tick::new(v);
        assert!(t(5).is_newer_than(t(4), t(5)));
        assert!(!t(4).is_newer_than(t(4), t(5)), "a change at the last run was seen then");
        assert!(!t(6).is_newer_than(t(4), t(5)), "a change after now is not visible yet");
        // Across the wrap: last run just before `u32::MAX`, now just after 0.
        assert!(t(2).is_newer_than(t(u32::MAX - 1), t(3)));
        assert!(t(u32::MAX).is_newer_than(t(u32::MAX - 1), t(3)));
        assert!(!t(u32::MAX - 2).is_newer_than(t(u32::MAX - 1), t(3)));
    }

    #[derive(archetable_macros::Component, Debug, PartialEq)]
    #[component(track_changes)]
    struct Hp(u32);

    #[test]
    fn a_handle_stamps_its_first_write_and_knows_it_wrote() {
        let mut world = crate::World::new();
        let e = world.spawn(Hp(1));
        let mut query = crate::QueryState::<&mut Hp>::new(&mut world);
        query.iter_mut(&mut world).for_each(drop);
        let mut hp = query.iter_mut(&mut world).next().expect("one entity");
        assert!(!hp.is_changed(), "seen by the previous pass");
        {
            let mut child = hp.reborrow();
            assert!(!child.is_changed());
            child.0 += 1;
            assert!(child.is_changed(), "its own write");
        }
        assert!(hp.is_changed(), "a reborrow's write");
        hp.0 += 1;
        hp.0 += 1;
        assert!(hp.is_changed());
        let stamped = world.component_ticks::<Hp>(e).expect("tracked").changed;
        assert_eq!(world.get::<Hp>(e), Some(&Hp(4)));
        let mut hp = query.iter_mut(&mut world).next().expect("one entity");
        hp.bypass_change_detection().0 += 1;
        assert!(!hp.is_changed(), "a bypass is no change");
        hp.set_changed();
        assert!(hp.is_changed());
        assert_ne!(world.component_ticks::<Hp>(e).expect("tracked").changed, stamped);
    }

    #[test]
    fn clamping_keeps_old_ticks_old() {
        let now = Tick::new(10);
        let mut old = Tick::new(10u32.wrapping_sub(Tick::MAX_AGE).wrapping_sub(100));
        assert!(old.clamp_age(now));
        assert_eq!(now.get().wrapping_sub(old.get()), Tick::MAX_AGE);
        let mut recent = Tick::new(3);
        assert!(!recent.clamp_age(now));
        assert_eq!(recent, Tick::new(3));
    }
}
