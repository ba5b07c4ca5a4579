//! `EntityBuilder`: a bundle whose component types are chosen at run time
//! (from a prefab file, a save, an editor), spawned or inserted in one table
//! move like a tuple, with no box per component.
//!
//! ```text
//!   builder.add(Position { .. }); builder.add(Hp(3));
//!
//!   data:    [ Position ......... | Hp .. | ]     one buffer, each value at an
//!   entries: [ (Position, 0), (Hp, 16) ]          offset aligned for its type
//!
//!   world.spawn_built(&mut builder)  ->  one row in the (Position, Hp) table
//! ```

use std::alloc::{self, Layout};
use std::any::TypeId;
use std::ptr::NonNull;

use crate::component::erased::drop_ptr;
use crate::component::{Component, ComponentId, ComponentInfo, Components};
use crate::storage::column::Panics;

/// A set of components assembled at run time, for
/// [`World::spawn_built`](crate::World::spawn_built) and
/// [`World::insert_built`](crate::World::insert_built): one table move and
/// the hooks of a tuple bundle, whatever the number of components.
///
/// Adding a type the builder already holds replaces the value. Spawning
/// empties the builder and keeps its memory for the next entity.
///
/// ```
/// use archetable::prelude::*;
///
/// #[derive(Component, Debug, PartialEq)] struct Position(f32, f32);
/// #[derive(Component, Debug, PartialEq)] struct Hp(u32);
///
/// let mut world = World::new();
/// let mut builder = EntityBuilder::new();
/// builder.add(Position(1.0, 2.0)).add(Hp(3));
/// if true {
///     builder.add(Hp(5)); // replaces Hp(3)
/// }
/// let e = world.spawn_built(&mut builder);
/// assert!(builder.is_empty());
/// assert_eq!(world.get::<Hp>(e), Some(&Hp(5)));
/// assert_eq!(world.get::<Position>(e), Some(&Position(1.0, 2.0)));
/// ```
pub struct EntityBuilder {
    /// The values, back to back, each at an offset aligned for its type.
    /// Allocated with `capacity` bytes aligned to `align` (dangling while
    /// `capacity` is zero).
    data: NonNull<u8>,
    capacity: usize,
    align: usize,
    /// Bytes in use.
    len: usize,
    entries: Vec<Entry>,
    /// Scratch for spawning: the component ids in one world, and the
    /// values' addresses, in the builder's order.
    ids: Vec<ComponentId>,
    pointers: Vec<*mut u8>,
    /// Whether a value's type has engine hooks (`Component::ENGINE_HOOKS`),
    /// so that spawning it runs hooks even in a world that has none yet.
    engine_hooked: bool,
}

/// One value in the builder.
struct Entry {
    type_id: TypeId,
    offset: usize,
    layout: Layout,
    drop: Option<unsafe fn(*mut u8)>,
    register: fn(&mut Components) -> ComponentId,
}

// SAFETY: the builder owns its values, which are `Component`s and so
// `Send + Sync`; the buffer is not shared.
unsafe impl Send for EntityBuilder {}
// SAFETY: as above; `&EntityBuilder` gives no access to the values.
unsafe impl Sync for EntityBuilder {}

impl Default for EntityBuilder {
    fn default() -> Self {
        EntityBuilder::new()
    }
}

impl EntityBuilder {
    /// An empty builder; it allocates on the first non-zero-sized value.
    pub fn new() -> Self {
        EntityBuilder {
            data: NonNull::dangling(),
            capacity: 0,
            align: 1,
            len: 0,
            entries: Vec::new(),
            ids: Vec::new(),
            pointers: Vec::new(),
            engine_hooked: false,
        }
    }

    /// Adds `value`, or replaces the builder's value of the same type.
    pub fn add<T: Component>(&mut self, value: T) -> &mut Self {
        if let Some(entry) = self.entries.iter().find(|e| e.type_id == TypeId::of::<T>()) {
            let slot = self.ptr(entry).cast::<T>();
            // SAFETY: the entry's value is a valid `T` owned by the builder;
            // the new one takes its place before the old one is dropped, so
            // a panicking destructor leaves a valid value behind.
            drop(unsafe { slot.replace(value) });
            return self;
        }
        let layout = Layout::new::<T>();
        let offset = self.len.next_multiple_of(layout.align());
        let end = offset.checked_add(layout.size()).expect("entity builder larger than the address space");
        if end > self.capacity || layout.align() > self.align {
            self.grow(end, layout.align());
        }
        let entry = Entry {
            type_id: TypeId::of::<T>(),
            offset,
            layout,
            drop: std::mem::needs_drop::<T>().then_some(drop_ptr::<T> as unsafe fn(*mut u8)),
            register: Components::register::<T>,
        };
        // SAFETY: `offset .. offset + size` lies in the buffer (grown above)
        // and is aligned for `T` (the buffer's alignment is at least `T`'s,
        // and `offset` a multiple of it); nothing lives there yet.
        unsafe { self.ptr(&entry).cast::<T>().write(value) };
        self.len = end;
        self.entries.push(entry);
        self.engine_hooked |= T::ENGINE_HOOKS.is_some();
        self
    }

    /// Makes room for one value of each of `infos` after the values held,
    /// so that [`EntityBuilder::push_raw`] for them does not allocate.
    pub(crate) fn reserve_raw<'a>(&mut self, infos: impl Iterator<Item = &'a ComponentInfo> + Clone) {
        let mut end = self.len;
        let mut align = self.align;
        for info in infos.clone() {
            let layout = info.layout();
            let offset = end.next_multiple_of(layout.align());
            end = offset.checked_add(layout.size()).expect("entity builder larger than the address space");
            align = align.max(layout.align());
        }
        if end > self.capacity || align > self.align {
            self.grow(end, align);
        }
        self.entries.reserve(infos.count());
    }

    /// Moves in the value at `src`, of the component `info` describes
    /// (registered in another world, perhaps), after the values held.
    ///
    /// # Safety
    /// - `src` points to a valid, aligned value of `info`'s type, which the
    ///   caller treats as moved out afterwards;
    /// - the builder holds no value of that type;
    /// - room was made by [`EntityBuilder::reserve_raw`] for this value and
    ///   those pushed after it, so nothing allocates (or panics).
    pub(crate) unsafe fn push_raw(&mut self, info: &ComponentInfo, src: *const u8) {
        debug_assert!(self.entries.iter().all(|e| e.type_id != info.type_id()));
        let layout = info.layout();
        let offset = self.len.next_multiple_of(layout.align());
        let end = offset + layout.size();
        debug_assert!(end <= self.capacity, "push_raw without reserve_raw");
        let entry =
            Entry { type_id: info.type_id(), offset, layout, drop: info.drop_fn(), register: info.register_fn() };
        // SAFETY: `offset .. end` lies in the buffer (reserved by the
        // caller) and is aligned for the type (the buffer's alignment is at
        // least its, from `reserve_raw`); nothing lives there yet, and
        // `src` is a valid value of the type, outside the buffer.
        unsafe { std::ptr::copy_nonoverlapping(src, self.ptr(&entry), layout.size()) };
        self.len = end;
        self.entries.push(entry);
        self.engine_hooked |= info.engine_hooked();
    }

    /// Clones in the value at `src`, of the cloneable component `info`
    /// describes, after the values held. A panicking clone adds nothing.
    ///
    /// # Safety
    /// - `src` points to a valid, aligned value of `info`'s type;
    /// - the builder holds no value of that type;
    /// - room was made by [`EntityBuilder::reserve_raw`] for this value and
    ///   those pushed after it.
    ///
    /// # Panics
    /// If the type is not cloneable, or its `clone` panics.
    pub(crate) unsafe fn push_cloned(&mut self, info: &ComponentInfo, src: *const u8) {
        debug_assert!(self.entries.iter().all(|e| e.type_id != info.type_id()));
        let Some(clone) = info.clone_fn() else { panic!("component `{}` is not cloneable", info.name()) };
        let layout = info.layout();
        let offset = self.len.next_multiple_of(layout.align());
        let end = offset + layout.size();
        debug_assert!(end <= self.capacity, "push_cloned without reserve_raw");
        let entry =
            Entry { type_id: info.type_id(), offset, layout, drop: info.drop_fn(), register: info.register_fn() };
        // SAFETY: `offset .. end` lies in the buffer (reserved by the
        // caller), aligned for the type, with nothing in it; `src` is a
        // valid value of the type outside the buffer, and `clone` is the
        // type's clone function.
        unsafe { clone(src, self.ptr(&entry)) };
        self.len = end;
        self.entries.push(entry);
        self.engine_hooked |= info.engine_hooked();
    }

    /// Clones in the value of component `info` at row `row` of
    /// `archetype`, after the values held.
    ///
    /// # Panics
    /// If the archetype has no such component, the row is out of bounds,
    /// the type is not cloneable, the builder holds a value of that type
    /// already, or no room was reserved with
    /// [`EntityBuilder::reserve_raw`].
    pub(crate) fn clone_in(
        &mut self,
        archetype: &crate::storage::archetype::Archetype,
        info: &ComponentInfo,
        row: crate::storage::archetype::Row,
    ) {
        let column = archetype.column(archetype.column_index(info.id()).expect("the archetype has the component"));
        assert!(row.index() < column.len(), "row out of bounds");
        assert!(self.entries.iter().all(|e| e.type_id != info.type_id()), "the builder holds this type already");
        let layout = info.layout();
        let end = self.len.next_multiple_of(layout.align()) + layout.size();
        assert!(end <= self.capacity && layout.align() <= self.align, "clone_in without reserve_raw");
        // SAFETY: the row is in bounds, so the pointer is a valid value of
        // the column's type, which is `info`'s (looked up by its id); the
        // builder holds none of that type and has room (checked above).
        unsafe { self.push_cloned(info, column.ptr_at(row.index())) };
    }

    /// Clones in `entity`'s value of the sparse component `info`, after the
    /// values held.
    ///
    /// # Panics
    /// As [`EntityBuilder::clone_in`], or if `set` is not `info`'s or has
    /// no value for `entity`.
    pub(crate) fn clone_in_sparse(
        &mut self,
        set: &crate::storage::sparse::SparseSet,
        info: &ComponentInfo,
        entity: crate::Entity,
    ) {
        assert_eq!(set.id(), info.id(), "the sparse set of another component");
        let dense = set.dense(entity.index()).expect("the entity has the sparse component");
        assert!(self.entries.iter().all(|e| e.type_id != info.type_id()), "the builder holds this type already");
        let layout = info.layout();
        let end = self.len.next_multiple_of(layout.align()) + layout.size();
        assert!(end <= self.capacity && layout.align() <= self.align, "clone_in without reserve_raw");
        // SAFETY: `dense` is the entity's position in the set, so the pointer
        // is a valid value of the set's type, which is `info`'s; the builder
        // holds none of that type and has room (checked above).
        unsafe { self.push_cloned(info, set.values().ptr_at(dense)) };
    }

    /// Hands the values over to a [`BuiltBundle`] that
    /// [`World::spawn`](crate::World::spawn) takes like any bundle; the builder is left empty,
    /// without memory.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component, Debug, PartialEq)] struct Hp(u32);
    /// # #[derive(Component, Debug, PartialEq)] struct Name(&'static str);
    /// let mut world = World::new();
    /// let mut builder = EntityBuilder::new();
    /// builder.add(Hp(3)).add(Name("ogre"));
    /// let e = world.spawn(builder.build());
    /// assert_eq!((world.get::<Hp>(e), world.get::<Name>(e)), (Some(&Hp(3)), Some(&Name("ogre"))));
    /// assert!(builder.is_empty());
    /// ```
    pub fn build(&mut self) -> BuiltBundle {
        BuiltBundle { builder: std::mem::take(self) }
    }

    /// Whether the builder holds a `T`.
    pub fn has<T: Component>(&self) -> bool {
        self.entries.iter().any(|e| e.type_id == TypeId::of::<T>())
    }

    /// The builder's `T`, if it holds one.
    pub fn get<T: Component>(&self) -> Option<&T> {
        let entry = self.entries.iter().find(|e| e.type_id == TypeId::of::<T>())?;
        // SAFETY: the entry's value is a valid `T`, borrowed with `self`.
        Some(unsafe { &*self.ptr(entry).cast::<T>() })
    }

    /// Number of components held.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the builder holds no component.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Drops every value, keeping the memory.
    pub fn clear(&mut self) {
        let entries = std::mem::take(&mut self.entries);
        self.len = 0;
        let mut panics = Panics::default();
        for entry in &entries {
            if let Some(drop) = entry.drop {
                let ptr = self.ptr(entry);
                // SAFETY: each entry's value is valid and dropped once: the
                // entries are already out of the builder.
                panics.run(|| unsafe { drop(ptr) });
            }
        }
        self.entries = entries;
        self.entries.clear();
        self.engine_hooked = false;
        panics.finish();
    }

    /// The address of `entry`'s value.
    fn ptr(&self, entry: &Entry) -> *mut u8 {
        if entry.layout.size() == 0 {
            // A dangling, aligned address: all a zero-sized value needs.
            return entry.layout.align() as *mut u8;
        }
        // SAFETY: the entry's offset is within the allocation.
        unsafe { self.data.as_ptr().add(entry.offset) }
    }

    /// Makes room for `needed` bytes aligned to at least `align`.
    #[cold]
    fn grow(&mut self, needed: usize, align: usize) {
        let align = align.max(self.align);
        let capacity = needed.max(self.capacity * 2).max(64);
        let layout = Layout::from_size_align(capacity, align).expect("entity builder larger than the address space");
        // SAFETY: `capacity` is at least 64, so the layout is not zero-sized.
        let data = unsafe { alloc::alloc(layout) };
        let Some(data) = NonNull::new(data) else { alloc::handle_alloc_error(layout) };
        if self.capacity != 0 {
            // SAFETY: both buffers hold at least `len` bytes and do not
            // overlap; the old one was allocated with this layout. Offsets
            // stay aligned: the new base is aligned at least as strictly.
            unsafe {
                std::ptr::copy_nonoverlapping(self.data.as_ptr(), data.as_ptr(), self.len);
                alloc::dealloc(self.data.as_ptr(), Layout::from_size_align_unchecked(self.capacity, self.align));
            }
        }
        self.data = data;
        self.capacity = capacity;
        self.align = align;
    }

    /// Registers each component type in `components`; returns their ids,
    /// in the builder's order, and the values' addresses, in a vector the
    /// caller hands back with [`EntityBuilder::return_pointers`].
    pub(crate) fn prepare(&mut self, components: &mut Components) -> (&[ComponentId], Vec<*mut u8>) {
        let mut pointers = std::mem::take(&mut self.pointers);
        pointers.clear();
        pointers.extend(self.entries.iter().map(|e| self.ptr(e)));
        self.ids.clear();
        self.ids.extend(self.entries.iter().map(|e| (e.register)(components)));
        (&self.ids, pointers)
    }

    /// Takes back the vector [`EntityBuilder::prepare`] lent out, to reuse
    /// its memory.
    pub(crate) fn return_pointers(&mut self, pointers: Vec<*mut u8>) {
        self.pointers = pointers;
    }

    /// Forgets every value without dropping it: the caller moved them out.
    pub(crate) fn forget_values(&mut self) {
        self.entries.clear();
        self.len = 0;
        self.engine_hooked = false;
    }

    /// Whether spawning the builder must run hooks even in a world without
    /// any: a value's type has engine hooks.
    pub(crate) fn engine_hooked(&self) -> bool {
        self.engine_hooked
    }
}

impl Drop for EntityBuilder {
    fn drop(&mut self) {
        // Frees the buffer even if a value's destructor panics.
        struct Free<'a>(&'a mut EntityBuilder);
        impl Drop for Free<'_> {
            fn drop(&mut self) {
                let builder = &mut *self.0;
                if builder.capacity != 0 {
                    // SAFETY: allocated with exactly this layout.
                    unsafe {
                        alloc::dealloc(
                            builder.data.as_ptr(),
                            Layout::from_size_align_unchecked(builder.capacity, builder.align),
                        );
                    }
                }
            }
        }
        Free(self).0.clear();
    }
}

impl std::fmt::Debug for EntityBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EntityBuilder").field("components", &self.entries.len()).field("bytes", &self.len).finish()
    }
}

/// Components assembled at run time, as one value: made by
/// [`EntityBuilder::build`] or moved out of an entity by [`World::take`](crate::World::take),
/// and spawned by [`World::spawn`](crate::World::spawn) like a tuple (one table move, the hooks
/// of a tuple of the same components). The values live in one buffer, with
/// no box per component; dropping it drops them.
///
/// ```
/// # use archetable::prelude::*;
/// # #[derive(Component, Debug, PartialEq)] struct Hp(u32);
/// let mut world = World::new();
/// let e = world.spawn(Hp(3));
/// let taken = world.take(e).unwrap();
/// assert_eq!((taken.len(), taken.get::<Hp>()), (1, Some(&Hp(3))));
/// let mut other = World::new();
/// let moved = other.spawn(taken);
/// assert_eq!(other.get::<Hp>(moved), Some(&Hp(3)));
/// ```
pub struct BuiltBundle {
    builder: EntityBuilder,
}

impl BuiltBundle {
    /// Number of components held.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component)] struct Hp(u32);
    /// let mut builder = EntityBuilder::new();
    /// builder.add(Hp(1));
    /// assert_eq!(builder.build().len(), 1);
    /// ```
    pub fn len(&self) -> usize {
        self.builder.len()
    }

    /// Whether no component is held.
    ///
    /// ```
    /// # use archetable::EntityBuilder;
    /// assert!(EntityBuilder::new().build().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.builder.is_empty()
    }

    /// Whether a `T` is held.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component)] struct Hp(u32);
    /// let mut world = World::new();
    /// let e = world.spawn(Hp(1));
    /// assert!(world.take(e).unwrap().has::<Hp>());
    /// ```
    pub fn has<T: Component>(&self) -> bool {
        self.builder.has::<T>()
    }

    /// The `T` held, if any.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component, Debug, PartialEq)] struct Hp(u32);
    /// let mut world = World::new();
    /// let e = world.spawn(Hp(1));
    /// assert_eq!(world.take(e).unwrap().get::<Hp>(), Some(&Hp(1)));
    /// ```
    pub fn get<T: Component>(&self) -> Option<&T> {
        self.builder.get::<T>()
    }

    /// The values, back in a builder, to add to or change.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component, Debug, PartialEq)] struct Hp(u32);
    /// # #[derive(Component)] struct Ghost;
    /// let mut world = World::new();
    /// let e = world.spawn(Hp(3));
    /// let mut builder = world.take(e).unwrap().into_builder();
    /// builder.add(Ghost);
    /// let ghost = world.spawn(builder.build());
    /// assert!(world.has::<Ghost>(ghost) && world.has::<Hp>(ghost));
    /// ```
    pub fn into_builder(self) -> EntityBuilder {
        self.builder
    }

    pub(crate) fn builder_mut(&mut self) -> &mut EntityBuilder {
        &mut self.builder
    }
}

impl std::fmt::Debug for BuiltBundle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BuiltBundle").field("components", &self.builder.len()).finish()
    }
}
