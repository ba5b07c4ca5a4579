//! `Mut`, the handle through which queries and `World::get_mut` hand out
//! mutable component access.

use std::fmt;
use std::ops::{Deref, DerefMut};

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
}

impl<'a, T: ?Sized> Mut<'a, T> {
    #[inline]
    pub(crate) fn new(value: &'a mut T) -> Self {
        Mut { value }
    }

    /// The plain mutable reference, for the rest of the borrow.
    #[inline]
    pub fn into_inner(self) -> &'a mut T {
        self.value
    }

    /// Reborrows for a shorter lifetime, so the `Mut` can be used again after.
    #[inline]
    pub fn reborrow(&mut self) -> Mut<'_, T> {
        Mut { value: self.value }
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
        self.value
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for Mut<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.value.fmt(f)
    }
}
