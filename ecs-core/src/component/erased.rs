//! The type-erased drop, clone and reset of a component: the function
//! pointers of [`ComponentInfo`](crate::storage::ComponentInfo) through
//! which columns, pools and builders drop, copy and reset values they hold
//! as bytes, and [`Reset`], the trait a pooled component implements.

use std::fmt;
use std::marker::PhantomData;

/// Drops the `T` at `ptr`; stored as a component's type-erased drop function.
///
/// # Safety
/// - `ptr` points to a valid, initialized `T`;
/// - the value is never used again.
pub(crate) unsafe fn drop_ptr<T>(ptr: *mut u8) {
    // SAFETY: both points are guaranteed by the caller.
    unsafe { ptr.cast::<T>().drop_in_place() }
}

/// Clones the `T` at `src` into `dst`, through [`Component::CLONE`](crate::Component::CLONE).
///
/// # Safety
/// `src` points to a valid `T`; `dst` is valid for writing a `T`, aligned,
/// and holds no value; `T::CLONE` is `Some`.
pub(crate) unsafe fn clone_ptr<T: crate::Component>(src: *const u8, dst: *mut u8) {
    let Some(clone) = T::CLONE else { unreachable!("clone_ptr of a type that is not cloneable") };
    // SAFETY: `src` is a valid `T` (caller); the shared borrow ends before
    // `dst`, which does not overlap it, is written.
    let value = clone(unsafe { &*src.cast::<T>() });
    // SAFETY: `dst` is valid for an aligned write of a `T` (caller).
    unsafe { dst.cast::<T>().write(value) };
}

/// A component whose values can be put back into a fresh state while keeping
/// the memory they own, so a pool can hand them out again.
///
/// ```
/// use archetable::{Component, Reset};
///
/// #[derive(Component, Default)]
/// #[component(pooled)]
/// struct Trail {
///     points: Vec<[f32; 2]>,
/// }
///
/// impl Reset for Trail {
///     fn reset(&mut self) {
///         // Keep the vector's capacity: that is the point of the pool.
///         self.points.clear();
///     }
/// }
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is pooled but does not implement `Reset`",
    label = "pooled component without `Reset`",
    note = "implement `archetable::Reset` for `{Self}`: `reset` clears a value for reuse, keeping the memory it owns"
)]
pub trait Reset {
    /// Returns the value to the state a fresh one would have, keeping its
    /// allocations.
    fn reset(&mut self);
}

/// The pool functions of component type `T`: how to reset one of its
/// values in place. Set by `#[component(pooled)]` through
/// [`Component::POOL`](crate::Component::POOL).
///
/// The type parameter ties the functions to the component they reset: the
/// only way to make a `PoolFns<T>` is [`PoolFns::of`], which requires
/// `T: Reset`, and `Component::POOL` of a type `C` holds a `PoolFns<C>`, so a
/// component can never hand the engine another type's reset.
#[doc(hidden)]
pub struct PoolFns<T: ?Sized> {
    /// Resets the value at the pointer, which points to a valid `T`.
    reset: unsafe fn(*mut u8),
    marker: PhantomData<fn() -> T>,
}

impl<T: ?Sized> Clone for PoolFns<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T: ?Sized> Copy for PoolFns<T> {}

impl<T: ?Sized> fmt::Debug for PoolFns<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PoolFns").field("type", &std::any::type_name::<T>()).finish()
    }
}

impl<T: Reset + 'static> PoolFns<T> {
    /// The functions for `T`.
    pub const fn of() -> Self {
        PoolFns { reset: reset_ptr::<T>, marker: PhantomData }
    }
}

impl<T: ?Sized> PoolFns<T> {
    /// The reset function with its type erased, for the world's tables.
    pub(crate) fn erased(self) -> unsafe fn(*mut u8) {
        self.reset
    }
}

/// Resets the `T` at `ptr`.
///
/// # Safety
/// `ptr` points to a valid `T` that nothing else borrows.
unsafe fn reset_ptr<T: Reset>(ptr: *mut u8) {
    // SAFETY: guaranteed by the caller.
    unsafe { (*ptr.cast::<T>()).reset() }
}
