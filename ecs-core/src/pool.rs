//! Component pools: values of `#[component(pooled)]` types that leave the
//! world are reset and kept, so the next spawn reuses their heap memory.

/// A component whose values can be put back into a fresh state while keeping
/// the memory they own, so a pool can hand them out again.
///
/// ```
/// use ecs::{Component, Reset};
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
    note = "implement `ecs::Reset` for `{Self}`: `reset` clears a value for reuse, keeping the memory it owns"
)]
pub trait Reset {
    /// Returns the value to the state a fresh one would have, keeping its
    /// allocations.
    fn reset(&mut self);
}

/// The type-erased functions a pool needs for one component type.
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct PoolFns {
    /// Resets the value at the pointer, which points to a valid value of
    /// the type.
    pub(crate) reset: unsafe fn(*mut u8),
}

impl PoolFns {
    /// The functions for `T`.
    pub const fn of<T: Reset + 'static>() -> Self {
        PoolFns { reset: reset_ptr::<T> }
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
