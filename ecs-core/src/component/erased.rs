//! The type-erased drop and clone of a component: the two function
//! pointers of [`ComponentInfo`](crate::storage::ComponentInfo) through
//! which columns, pools and builders drop and copy values they hold as
//! bytes.

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
