//! Component pools: values of `#[component(pooled)]` types that leave the
//! world are reset and kept, so the next spawn reuses their heap memory.
//!
//! ```text
//!   despawn, clear, overwriting insert, discarding remove
//!        │   Reset::reset, then kept; dropped instead when the pool is full
//!        ▼
//!   pools[ComponentId] = [ v0 v1 v2 .. ]   one Column per pooled type
//!        │   spawn_pooled takes the last value, or T::default() if none
//!        ▼
//!   the initializer gets `&mut` of each value, then the entity is spawned
//! ```

use std::any::TypeId;
use std::mem::ManuallyDrop;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

use crate::component::bundle::{Bundle, BundleInfo};
use crate::component::change::Tick;
use crate::component::{Component, ComponentId, ComponentInfo, Components};
use crate::storage::column::{for_each_unwinding, Column, Panics};

/// How many values a type's pool keeps unless
/// [`World::set_pool_cap`](crate::World::set_pool_cap) says otherwise.
pub(crate) const DEFAULT_POOL_CAP: usize = 65_536;

/// A bundle that [`World::spawn_pooled`](crate::World::spawn_pooled) can
/// build from the pools: any `T: Component + Default`, and tuples of them
/// (up to 15). Each value comes from its type's pool, already reset, or is
/// `T::default()` when the pool is empty or the type is not pooled.
///
/// ```
/// use archetable::prelude::*;
///
/// #[derive(Component, Default)]
/// #[component(pooled)]
/// struct Trail(Vec<[f32; 2]>);
/// impl Reset for Trail {
///     fn reset(&mut self) {
///         self.0.clear();
///     }
/// }
/// #[derive(Component, Default)]
/// struct Life(f32);
///
/// let mut world = World::new();
/// let e = world.spawn_pooled::<(Life, Trail)>(|(life, trail)| {
///     life.0 = 3.0;
///     trail.0.push([0.0, 0.0]);
/// });
/// assert_eq!(world.get::<Trail>(e).unwrap().0.len(), 1);
/// ```
///
/// A `#[derive(Bundle)]` struct can implement it by hand, taking each field
/// from the [`PoolSource`](crate::storage::PoolSource) (see there).
pub trait PooledBundle: Bundle + Sized {
    /// What the initializer receives: `&mut T` for one component, a tuple of
    /// those for a tuple.
    type Refs<'a>;

    /// Builds the bundle, taking each component from `source`.
    fn from_pools(source: &mut impl PoolSource) -> Self;

    /// Mutable references to each component, for the initializer.
    fn refs(&mut self) -> Self::Refs<'_>;
}

/// Hands out component values for [`PooledBundle::from_pools`]: a pooled,
/// reset value if the type's pool has one, else `C::default()`.
/// Implemented by the world.
///
/// A derived bundle becomes a [`PooledBundle`] by taking each field:
///
/// ```
/// use archetable::prelude::*;
/// use archetable::storage::PoolSource;
/// use archetable::PooledBundle;
///
/// #[derive(Component, Default)]
/// #[component(pooled)]
/// struct Trail(Vec<[f32; 2]>);
/// impl Reset for Trail {
///     fn reset(&mut self) {
///         self.0.clear();
///     }
/// }
/// #[derive(Component, Default)]
/// struct Life(f32);
///
/// #[derive(Bundle)]
/// struct Shot {
///     life: Life,
///     trail: Trail,
/// }
///
/// impl PooledBundle for Shot {
///     type Refs<'a> = &'a mut Shot;
///     fn from_pools(source: &mut impl PoolSource) -> Self {
///         Shot { life: source.take(), trail: source.take() }
///     }
///     fn refs(&mut self) -> &mut Shot {
///         self
///     }
/// }
///
/// let mut world = World::new();
/// let e = world.spawn_pooled::<Shot>(|shot| shot.life.0 = 2.0);
/// assert_eq!(world.get::<Life>(e).unwrap().0, 2.0);
/// ```
pub trait PoolSource {
    /// A value of `C`, from its pool or `C::default()`.
    fn take<C: Component + Default>(&mut self) -> C;
}

impl<C: Component + Default> PooledBundle for C {
    type Refs<'a> = &'a mut C;

    #[inline]
    fn from_pools(source: &mut impl PoolSource) -> Self {
        source.take::<C>()
    }

    #[inline]
    fn refs(&mut self) -> &mut C {
        self
    }
}

macro_rules! impl_pooled_bundle_for_tuple {
    ($($name:ident $index:tt),*) => {
        #[allow(non_snake_case, unused_variables, clippy::unused_unit)]
        impl<$($name: PooledBundle),*> PooledBundle for ($($name,)*) {
            type Refs<'a> = ($($name::Refs<'a>,)*);

            #[inline]
            fn from_pools(source: &mut impl PoolSource) -> Self {
                // Tuple expressions evaluate left to right.
                ($(<$name as PooledBundle>::from_pools(source),)*)
            }

            #[inline]
            fn refs(&mut self) -> Self::Refs<'_> {
                ($(self.$index.refs(),)*)
            }
        }
    };
}

crate::tuples::all_tuples!(impl_pooled_bundle_for_tuple);

/// One world's pools, one per pooled component type that has had a value
/// leave the world (or a cap set), indexed by [`ComponentId`].
#[derive(Default)]
pub(crate) struct Pools {
    pools: Vec<Option<Pool>>,
}

/// The reset values of one component type.
///
/// Invariants: `values` stores `info`'s type and every value in it has been
/// reset since it left the world (outside [`Pools::absorb`], which resets
/// the values it moves in before it returns); `values.len() <= cap` once
/// any call returns.
struct Pool {
    values: Column,
    cap: usize,
    reset: unsafe fn(*mut u8),
    info: ComponentInfo,
}

impl Pool {
    /// Drops values from the end until `len` remain. A panicking destructor
    /// does not stop the others.
    fn truncate(&mut self, len: usize) {
        let values = &mut self.values;
        let excess = values.len().saturating_sub(len);
        for_each_unwinding(0..excess, |_| {
            let last = values.len() - 1;
            // SAFETY: `last` is in bounds; the value it moves past the end
            // is dropped once, right after, and the length is already
            // shorter when its destructor runs.
            unsafe {
                values.swap_remove_to_end(last);
                values.drop_past_end();
            }
        });
    }
}

impl Pools {
    /// The pool of the component `info` describes, created empty if needed.
    #[inline]
    fn pool_mut(&mut self, info: &ComponentInfo) -> &mut Pool {
        let index = info.id().index();
        match self.pools.get_mut(index) {
            Some(Some(_)) => self.pools[index].as_mut().expect("just matched"),
            _ => self.new_pool(info),
        }
    }

    /// Creates the empty pool of `info`'s type.
    #[cold]
    #[inline(never)]
    fn new_pool(&mut self, info: &ComponentInfo) -> &mut Pool {
        let index = info.id().index();
        if index >= self.pools.len() {
            self.pools.resize_with(index + 1, || None);
        }
        self.pools[index].get_or_insert_with(|| Pool {
            values: Column::without_ticks(info),
            cap: DEFAULT_POOL_CAP,
            reset: info.pool_reset().expect("only pooled components have a pool"),
            info: info.clone(),
        })
    }

    fn get(&self, id: ComponentId) -> Option<&Pool> {
        self.pools.get(id.index())?.as_ref()
    }

    /// Number of values in component `id`'s pool.
    pub fn len(&self, id: ComponentId) -> usize {
        self.get(id).map_or(0, |pool| pool.values.len())
    }

    /// The cap of component `id`'s pool.
    pub fn cap(&self, id: ComponentId) -> usize {
        self.get(id).map_or(DEFAULT_POOL_CAP, |pool| pool.cap)
    }

    /// Sets the cap of the pool of the (pooled) component `info`
    /// describes, dropping the values over it.
    pub fn set_cap(&mut self, info: &ComponentInfo, cap: usize) {
        let pool = self.pool_mut(info);
        pool.cap = cap;
        pool.truncate(cap);
    }

    /// Drops every pooled value and frees the pools' memory; caps stay.
    pub fn trim(&mut self) {
        for_each_unwinding(self.pools.iter_mut().flatten(), |pool| {
            let empty = Column::without_ticks(&pool.info);
            // The old column drops its values and frees its memory, even if
            // a destructor panics.
            drop(std::mem::replace(&mut pool.values, empty));
        });
    }

    /// Takes a value out of component `id`'s pool, if it has one.
    ///
    /// # Panics
    /// If the pool does not store `C` (`id` is not `C`'s id).
    #[inline]
    pub fn take<C: Component>(&mut self, id: ComponentId) -> Option<C> {
        let pool = self.pools.get_mut(id.index())?.as_mut()?;
        let last = pool.values.len().checked_sub(1)?;
        assert_eq!(pool.info.type_id(), TypeId::of::<C>(), "pool of another component type");
        // SAFETY: the pool stores `C` (checked above), `last` is in bounds,
        // and the value read out is removed from the column at once without
        // being dropped.
        unsafe {
            let value = pool.values.read_typed::<C>(last);
            pool.values.swap_remove_forget(last);
            Some(value)
        }
    }

    /// Disposes of a value that leaves the world: a pooled one is reset and
    /// kept (or dropped when its pool is full); any other is dropped.
    ///
    /// If the reset panics, the value is dropped and the panic goes on.
    ///
    /// # Safety
    /// - `value` points to a valid, aligned value of `info`'s type, which
    ///   this call takes over: the caller never uses or drops it again;
    /// - `value` does not point into a pool.
    #[inline]
    pub unsafe fn release(&mut self, info: &ComponentInfo, value: *mut u8) {
        if info.is_pooled() {
            // SAFETY: as guaranteed by the caller.
            unsafe { self.keep(info, value) }
        } else if let Some(drop) = info.drop_fn() {
            // SAFETY: a valid value, ours to drop (caller).
            unsafe { drop(value) }
        }
    }

    /// [`Pools::release`] for a pooled type.
    ///
    /// # Safety
    /// As for `release`.
    unsafe fn keep(&mut self, info: &ComponentInfo, value: *mut u8) {
        // Owns the value until it is in the pool: a full pool, or a panic
        // while growing the pool or resetting, drops it.
        struct Owned {
            value: *mut u8,
            drop: Option<unsafe fn(*mut u8)>,
        }
        impl Drop for Owned {
            fn drop(&mut self) {
                if let Some(drop) = self.drop {
                    // SAFETY: the value is valid and owned by this guard
                    // (the caller of `keep` handed it over), and the guard
                    // is forgotten once the value moves into the pool.
                    unsafe { drop(self.value) }
                }
            }
        }
        let owned = Owned { value, drop: info.drop_fn() };
        let pool = self.pool_mut(info);
        if pool.values.len() >= pool.cap {
            return;
        }
        pool.values.reserve(1);
        // SAFETY: a valid value of the column's type from outside it; room
        // was reserved, so the push does not panic between the copy and the
        // `forget` below.
        unsafe { pool.values.push(value, Tick::default()) };
        std::mem::forget(owned);
        // Reset in the pool, after the move: the copy then reads the value
        // before the reset writes to it, not right after.
        self.reset_last(info);
    }

    /// Makes room for one more value in the pool of the pooled component
    /// `info` describes, unless it is at its cap.
    #[inline]
    pub fn reserve_one(&mut self, info: &ComponentInfo) {
        let pool = self.pool_mut(info);
        if pool.values.len() < pool.cap {
            pool.values.reserve(1);
        }
    }

    /// Moves the value at `src` into the pool of the pooled component
    /// `info` describes, without resetting it yet, if the pool has room;
    /// returns whether it did. Runs no user code: a caller moving values
    /// out of a table calls [`Pools::reset_last`] once the table is
    /// consistent.
    ///
    /// # Safety
    /// `src` points to a valid value of `info`'s type outside the pool; if
    /// this returns true, the pool owns it and the caller must treat `src`
    /// as moved out.
    #[inline]
    pub unsafe fn accept(&mut self, info: &ComponentInfo, src: *const u8) -> bool {
        let pool = self.pool_mut(info);
        if pool.values.len() >= pool.cap {
            return false;
        }
        // SAFETY: a valid value of the pool's type from outside it (caller);
        // with room reserved (`reserve_one`) the push does not grow.
        unsafe { pool.values.push(src, Tick::default()) };
        true
    }

    /// Resets the value [`Pools::accept`] last moved into `info`'s pool. If
    /// the reset panics, the value leaves the pool and is dropped, and the
    /// panic goes on (unless the thread already unwinds from another).
    #[inline]
    pub fn reset_last(&mut self, info: &ComponentInfo) {
        let pool = self.pool_mut(info);
        let Some(last) = pool.values.len().checked_sub(1) else { return };
        let reset = pool.reset;
        // SAFETY: `last` is in bounds.
        let value = unsafe { pool.values.ptr_at(last) };
        // SAFETY: a valid value of the pool's type, borrowed by nothing else.
        if let Err(payload) = catch_unwind(AssertUnwindSafe(|| unsafe { reset(value) })) {
            let mut panics = Panics::default();
            panics.keep(payload);
            // SAFETY: `last` is in bounds; the value moved past the end is
            // dropped once, right after.
            unsafe { pool.values.swap_remove_to_end(last) };
            let values = &mut pool.values;
            // SAFETY: as above.
            panics.run(|| unsafe { values.drop_past_end() });
            panics.finish();
        }
    }

    /// Moves every value of `column` (of the pooled type `info` describes)
    /// into the pool, resetting each, and drops those over the cap. The
    /// column ends empty, and every value is pooled or dropped exactly
    /// once, even if resets or destructors panic: a value whose reset
    /// panics is dropped, and the first panic goes on at the end.
    pub fn absorb(&mut self, info: &ComponentInfo, column: &mut Column) {
        let pool = self.pool_mut(info);
        let clean = pool.values.len();
        let moved = column.len().min(pool.cap.saturating_sub(clean));
        let values = &mut pool.values;
        if let Err(payload) = catch_unwind(AssertUnwindSafe(|| values.reserve(moved))) {
            // Growing the pool failed: the column still ends empty.
            column.clear();
            resume_unwind(payload);
        }
        for _ in 0..moved {
            let last = column.len() - 1;
            // SAFETY: the columns store the same type (the pool's and the
            // column's are `info`'s), `last` is in bounds, and the value is
            // moved: copied into the pool, then forgotten by the column.
            // Room was reserved, so nothing panics in between.
            unsafe {
                pool.values.push(column.ptr_at(last), Tick::default());
                column.swap_remove_forget(last);
            }
        }
        let mut panics = Panics::default();
        // The values over the cap.
        panics.run(|| column.clear());
        let reset = pool.reset;
        let mut row = clean;
        while row < pool.values.len() {
            // SAFETY: `row` is in bounds.
            let value = unsafe { pool.values.ptr_at(row) };
            // SAFETY: a valid value of the pool's type, not reset yet,
            // borrowed by nothing else.
            match catch_unwind(AssertUnwindSafe(|| unsafe { reset(value) })) {
                Ok(()) => row += 1,
                Err(payload) => {
                    panics.keep(payload);
                    // SAFETY: `row` is in bounds; the value moved past the
                    // end is dropped once, right after. The last value,
                    // not reset yet, takes its place and is reset next.
                    unsafe { pool.values.swap_remove_to_end(row) };
                    let values = &mut pool.values;
                    // SAFETY: as above.
                    panics.run(|| unsafe { values.drop_past_end() });
                }
            }
        }
        panics.finish();
    }

    /// Disposes of every component of `bundle`, as [`Pools::release`]
    /// does. A panicking reset or destructor does not stop the others.
    pub fn release_bundle<B: Bundle>(&mut self, bundle: B, info: &BundleInfo, components: &Components) {
        debug_assert_eq!(info.type_id(), TypeId::of::<B>());
        let mut bundle = ManuallyDrop::new(bundle);
        // SAFETY: the bundle is valid, never dropped itself (`ManuallyDrop`),
        // and every field is released below, once.
        unsafe { ReleaseFields::new(&raw mut *bundle, info.components(), None, components, self).release_remaining() }
    }

    /// Checks every pool: its column stores its type, and it holds no more
    /// than its cap.
    pub fn check_invariants(&self) -> Result<(), String> {
        for pool in self.pools.iter().flatten() {
            pool.values.check_invariants(&pool.info).map_err(|e| format!("pool: {e}"))?;
            if pool.values.len() > pool.cap {
                return Err(format!(
                    "pool of `{}` holds {} values over its cap {}",
                    pool.info.name(),
                    pool.values.len(),
                    pool.cap
                ));
            }
        }
        Ok(())
    }
}

/// The world's [`PoolSource`]: takes from its pools.
pub(crate) struct FromPools<'a> {
    pub pools: &'a mut Pools,
    pub components: &'a Components,
    /// The bundle's components in order: the `n`-th value taken is
    /// usually the `n`-th of them, which saves looking its id up.
    pub ids: &'a [ComponentId],
    pub next: usize,
}

impl PoolSource for FromPools<'_> {
    #[inline]
    fn take<C: Component + Default>(&mut self) -> C {
        let expected = self.ids.get(self.next).copied();
        self.next += 1;
        if C::POOL.is_none() {
            return C::default();
        }
        let id = match expected {
            Some(id) if self.components.info(id).type_id() == TypeId::of::<C>() => Some(id),
            // A hand-written `PooledBundle` may take in another order.
            _ => self.components.id::<C>(),
        };
        id.and_then(|id| self.pools.take::<C>(id)).unwrap_or_default()
    }
}

/// Releases (as [`Pools::release`] does) the fields of a bundle whose
/// memory the caller owns but never drops as a whole, resuming after the
/// last one attempted if dropped while a panic unwinds: one panicking
/// reset or destructor does not leak the fields after it.
pub(crate) struct ReleaseFields<'a, B: Bundle> {
    bundle: *mut B,
    /// The component of each field, in field order.
    ids: &'a [ComponentId],
    /// Which fields to release; `None`: all of them.
    only: Option<&'a [bool]>,
    components: &'a Components,
    pools: &'a mut Pools,
    /// Fields below `done` have been handled.
    done: usize,
}

impl<'a, B: Bundle> ReleaseFields<'a, B> {
    /// # Safety
    /// `bundle` points to a live bundle whose fields selected by `only` are
    /// valid values of the components `ids` lists for them, owned by nobody
    /// else; the bundle is not dropped as a whole, and the fields not
    /// selected are not touched.
    pub unsafe fn new(
        bundle: *mut B,
        ids: &'a [ComponentId],
        only: Option<&'a [bool]>,
        components: &'a Components,
        pools: &'a mut Pools,
    ) -> Self {
        ReleaseFields { bundle, ids, only, components, pools, done: 0 }
    }

    /// Releases the fields not handled yet. Panicking resets or
    /// destructors do not stop the others; the first panic goes on once
    /// every field is handled.
    pub fn release_remaining(&mut self) {
        let (ids, only, components, pools, done) =
            (self.ids, self.only, self.components, &mut *self.pools, &mut self.done);
        let mut field = 0;
        let mut panics = Panics::default();
        // SAFETY: the fields selected are valid and owned by this guard
        // (`new`'s contract); `done` moves past each field before it is
        // released, so each is released at most once.
        unsafe {
            B::get_components(self.bundle, &mut |ptr| {
                if field == *done {
                    *done += 1;
                    if only.is_none_or(|only| only[field]) {
                        let info = components.info(ids[field]);
                        panics.run(|| pools.release(info, ptr));
                    }
                }
                field += 1;
            });
        }
        panics.finish();
    }
}

impl<B: Bundle> Drop for ReleaseFields<'_, B> {
    fn drop(&mut self) {
        self.release_remaining();
    }
}
