//! Bundles: sets of components spawned, inserted or removed together, and
//! the registry that computes each bundle type's component list once.

use std::any::TypeId;

use crate::component::required::RequiredComponent;
use crate::component::{Component, ComponentId, Components, TypeIdMap};

/// A set of components that are spawned, inserted or removed together.
///
/// Implemented for every component, for tuples of bundles (up to 15
/// elements) and by `#[derive(Bundle)]` on structs whose fields are bundles.
/// A bundle may not hold one component type twice.
///
/// ```
/// use archetable::prelude::*;
///
/// #[derive(Component)] struct Position(f32);
/// #[derive(Component)] struct Velocity(f32);
/// #[derive(Bundle)] struct Mover { pos: Position, vel: Velocity }
///
/// let mut world = World::new();
/// let e = world.spawn(Mover { pos: Position(0.0), vel: Velocity(1.0) });
/// let (pos, vel) = world.remove::<(Position, Velocity)>(e).unwrap();
/// assert_eq!((pos.0, vel.0), (0.0, 1.0));
/// ```
///
/// # Safety
/// Every method walks the same list of components, the bundle's *component
/// order*, which never changes:
/// - `register_components` calls `ids` once per component, in that order,
///   with the id `components` gives the component's type;
/// - `write_components` calls `writer.write::<C>` once per component, in
///   that order, with `C` that component's type;
/// - `get_components` calls `f` once per component, in that order, with a
///   pointer to that component's value inside `*this`, aligned for the
///   component's type (so no `repr(packed)` bundles); it reads, moves and
///   drops nothing itself;
/// - `read_components` calls `reader.read::<C>` once per component, in that
///   order, with `C` that component's type, and builds `Self` from the
///   values;
/// - `write_components`, `get_components` and `read_components` do not
///   panic: the world is mid-write while they run.
///
/// The world writes each value into the column that order assigns it, so a
/// wrong order or type would put a value in a column of another type. The
/// derive, tuples and single components meet all of this.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a bundle",
    label = "not a bundle of components",
    note = "a bundle is a component, a tuple of bundles, or a struct with `#[derive(Bundle)]`"
)]
pub unsafe trait Bundle: Send + Sync + 'static {
    /// Whether a component of the bundle has engine hooks
    /// ([`Component::ENGINE_HOOKS`]), so that spawning or inserting it runs
    /// hooks even in a world that has none yet. Known at compile time.
    #[doc(hidden)]
    const ENGINE_HOOKED: bool = false;

    /// Whether the bundle is one component in sparse storage, which an
    /// insert or remove touches without a table lookup. Only the impl for
    /// single components sets it.
    #[doc(hidden)]
    const SPARSE_COMPONENT: bool = false;

    /// Registers each component type and reports its id, in component order.
    fn register_components(components: &mut Components, ids: &mut impl FnMut(ComponentId));

    /// Hands each component value to `writer`, in component order.
    fn write_components(self, writer: &mut impl ComponentWriter)
    where
        Self: Sized;

    /// Reports a pointer to each component value inside `*this`, in
    /// component order.
    ///
    /// # Safety
    /// `this` points to a valid value of `Self`.
    unsafe fn get_components(this: *mut Self, f: &mut impl FnMut(*mut u8));

    /// Builds the bundle from values taken from `reader`, in component order.
    fn read_components(reader: &mut impl ComponentReader) -> Self
    where
        Self: Sized;
}

/// Receives the component values of a bundle, in its component order.
/// Implemented by the world; bundles call it from [`Bundle::write_components`].
pub trait ComponentWriter {
    /// Takes the next component value.
    fn write<C: Component>(&mut self, value: C);
}

/// Hands out the component values of a bundle being removed, in its
/// component order. Implemented by the world; bundles call it from
/// [`Bundle::read_components`].
pub trait ComponentReader {
    /// Gives the next component value.
    fn read<C: Component>(&mut self) -> C;
}

// SAFETY: one component, reported, written, pointed to and read as its own
// type.
unsafe impl<C: Component> Bundle for C {
    // A type that requires others takes the hooked path too: a required
    // type may have engine hooks, installed when the first spawn fires them.
    const ENGINE_HOOKED: bool = C::ENGINE_HOOKS.is_some() || C::REQUIRES.is_some();
    const SPARSE_COMPONENT: bool = matches!(C::STORAGE, crate::component::StorageType::Sparse);

    fn register_components(components: &mut Components, ids: &mut impl FnMut(ComponentId)) {
        ids(components.register::<C>());
    }

    #[inline(always)]
    fn write_components(self, writer: &mut impl ComponentWriter) {
        writer.write::<C>(self);
    }

    unsafe fn get_components(this: *mut Self, f: &mut impl FnMut(*mut u8)) {
        f(this.cast());
    }

    #[inline(always)]
    fn read_components(reader: &mut impl ComponentReader) -> Self {
        reader.read::<C>()
    }
}

macro_rules! impl_bundle_for_tuple {
    ($($name:ident $index:tt),*) => {
        // SAFETY: the elements' component orders, concatenated in element
        // order by every method.
        #[allow(non_snake_case, unused_variables, clippy::unused_unit)]
        unsafe impl<$($name: Bundle),*> Bundle for ($($name,)*) {
            const ENGINE_HOOKED: bool = false $(|| $name::ENGINE_HOOKED)*;

            fn register_components(components: &mut Components, ids: &mut impl FnMut(ComponentId)) {
                $(<$name as Bundle>::register_components(components, ids);)*
            }

            #[inline(always)]
            fn write_components(self, writer: &mut impl ComponentWriter) {
                let ($($name,)*) = self;
                $(<$name as Bundle>::write_components($name, writer);)*
            }

            unsafe fn get_components(this: *mut Self, f: &mut impl FnMut(*mut u8)) {
                $(
                    // SAFETY: `this` points to a valid tuple (caller), so each
                    // element is a valid value of its bundle type.
                    unsafe { <$name as Bundle>::get_components(&raw mut (*this).$index, f) };
                )*
            }

            #[inline(always)]
            fn read_components(reader: &mut impl ComponentReader) -> Self {
                // Tuple expressions evaluate left to right.
                ($(<$name as Bundle>::read_components(reader),)*)
            }
        }
    };
}

crate::tuples::all_tuples!(impl_bundle_for_tuple);

/// The index of a bundle type among the bundles one world has seen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BundleId(u32);

impl BundleId {
    pub(crate) fn from_index(index: usize) -> Self {
        BundleId(u32::try_from(index).expect("bundle index fits u32"))
    }

    /// The id as an index.
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// What a world knows about one bundle type, computed once.
#[derive(Debug)]
pub struct BundleInfo {
    id: BundleId,
    type_id: TypeId,
    /// The components in component order.
    components: Box<[ComponentId]>,
    /// The table components sorted by id: the part of the bundle that
    /// belongs to an archetype's signature.
    sorted: Box<[ComponentId]>,
    /// For each component in component order, whether it uses sparse
    /// storage; empty when none does.
    sparse: Box<[bool]>,
    /// The components the bundle's components require that it does not
    /// hold itself (see `required.rs` beside it): a spawn or insert adds those the
    /// entity lacks.
    required: Box<[RequiredComponent]>,
}

impl BundleInfo {
    /// The bundle's id.
    #[inline]
    pub fn id(&self) -> BundleId {
        self.id
    }

    /// The components, in the bundle's own order.
    #[inline]
    pub fn components(&self) -> &[ComponentId] {
        &self.components
    }

    /// The Rust type of the bundle.
    #[inline]
    pub fn type_id(&self) -> TypeId {
        self.type_id
    }

    /// The table components sorted by id, without those in sparse storage
    /// ([`Component::STORAGE`]): the bundle's part of an archetype's
    /// signature.
    #[inline]
    pub fn sorted_components(&self) -> &[ComponentId] {
        &self.sorted
    }

    /// Whether some component of the bundle uses sparse storage.
    #[inline]
    pub fn has_sparse(&self) -> bool {
        !self.sparse.is_empty()
    }

    /// Whether the `i`-th component in component order uses sparse storage.
    #[inline]
    pub(crate) fn is_sparse(&self, i: usize) -> bool {
        self.sparse.get(i).copied().unwrap_or(false)
    }

    /// The sparse components, in component order.
    pub(crate) fn sparse_components(&self) -> impl Iterator<Item = ComponentId> + '_ {
        self.components.iter().enumerate().filter(|&(i, _)| self.is_sparse(i)).map(|(_, &id)| id)
    }

    /// The components that spawning or inserting the bundle adds besides
    /// its own, where the entity lacks them: what its components require
    /// ([`Component::REQUIRES`]), transitively, nearest first.
    #[inline]
    pub(crate) fn required(&self) -> &[RequiredComponent] {
        &self.required
    }
}

/// The registry of bundle types a world has seen.
#[derive(Debug)]
pub(crate) struct Bundles {
    infos: Vec<BundleInfo>,
    by_type: TypeIdMap<BundleId>,
    /// The bundle type looked up last, with its id: a game's loops spawn
    /// or insert one bundle type many times in a row.
    last: (TypeId, BundleId),
    /// The bundle type looked up before `last`, with its id: a loop that
    /// alternates two bundle types (a spawn, then an insert into another
    /// entity) finds both here.
    before_last: (TypeId, BundleId),
    /// The bundles assembled at run time (`EntityBuilder`), by their
    /// components in order.
    dynamic: hashbrown::HashMap<Box<[ComponentId]>, BundleId>,
}

impl Default for Bundles {
    fn default() -> Self {
        /// No bundle has this type.
        struct NoBundle;
        Bundles {
            infos: Vec::new(),
            by_type: TypeIdMap::default(),
            last: (TypeId::of::<NoBundle>(), BundleId(u32::MAX)),
            before_last: (TypeId::of::<NoBundle>(), BundleId(u32::MAX)),
            dynamic: hashbrown::HashMap::default(),
        }
    }
}

impl Bundles {
    /// The info of bundle `B`, registering it (and its components) first if
    /// needed.
    ///
    /// # Panics
    /// If `B` holds one component type twice.
    #[inline]
    pub fn register<B: Bundle>(&mut self, components: &mut Components) -> &BundleInfo {
        let id = if self.last.0 == TypeId::of::<B>() { self.last.1 } else { self.look_up::<B>(components) };
        &self.infos[id.index()]
    }

    /// [`Bundles::register`] of a bundle type other than the last one.
    fn look_up<B: Bundle>(&mut self, components: &mut Components) -> BundleId {
        let id = if self.before_last.0 == TypeId::of::<B>() {
            self.before_last.1
        } else {
            match self.by_type.get(&TypeId::of::<B>()) {
                Some(&id) => id,
                None => self.register_new::<B>(components),
            }
        };
        self.before_last = self.last;
        self.last = (TypeId::of::<B>(), id);
        id
    }

    /// Whether `id` is registered as bundle type `B`: a kept id, checked
    /// before use.
    #[cfg(feature = "hierarchy")]
    #[inline]
    pub(crate) fn is_of<B: Bundle>(&self, id: BundleId) -> bool {
        self.infos.get(id.index()).is_some_and(|info| info.type_id == TypeId::of::<B>())
    }

    /// The info of a registered bundle.
    #[inline]
    pub fn get(&self, id: BundleId) -> &BundleInfo {
        &self.infos[id.index()]
    }

    /// The id of the run-time bundle of `ids` (distinct components, in
    /// this order), registering it first if needed. `type_id` is the type
    /// that stands for run-time bundles in [`BundleInfo::type_id`] (the
    /// storage layer's `EntityBuilder`).
    pub fn register_dynamic(&mut self, type_id: TypeId, ids: &[ComponentId], components: &Components) -> BundleId {
        if let Some(&id) = self.dynamic.get(ids) {
            return id;
        }
        let mut sorted = ids.to_vec();
        sorted.sort_unstable();
        assert!(sorted.windows(2).all(|w| w[0] != w[1]), "a run-time bundle holds a component twice");
        let id = BundleId(u32::try_from(self.infos.len()).expect("more than u32::MAX bundle types"));
        let (sorted, sparse) = split_storage(components, ids, sorted);
        self.infos.push(BundleInfo {
            id,
            type_id,
            components: ids.into(),
            sorted,
            sparse,
            required: crate::component::required::of_bundle(components, ids),
        });
        self.dynamic.insert(ids.into(), id);
        id
    }

    #[cold]
    fn register_new<B: Bundle>(&mut self, components: &mut Components) -> BundleId {
        let mut ids = Vec::new();
        B::register_components(components, &mut |id| ids.push(id));
        self.register_ids(components, ids, TypeId::of::<B>(), std::any::type_name::<B>())
    }

    /// The part of [`Bundles::register_new`] that does not depend on the
    /// bundle type: one copy for every bundle type instead of one per type.
    fn register_ids(
        &mut self,
        components: &Components,
        ids: Vec<ComponentId>,
        type_id: TypeId,
        type_name: &'static str,
    ) -> BundleId {
        let mut sorted = ids.clone();
        sorted.sort_unstable();
        if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
            panic!(
                "bundle `{type_name}` holds component `{}` twice; a bundle holds each component type at most once",
                components.name(w[0]),
            );
        }
        let id = BundleId(u32::try_from(self.infos.len()).expect("more than u32::MAX bundle types"));
        let required = crate::component::required::of_bundle(components, &ids);
        let (sorted, sparse) = split_storage(components, &ids, sorted);
        self.infos.push(BundleInfo { id, type_id, components: ids.into_boxed_slice(), sorted, sparse, required });
        self.by_type.insert(type_id, id);
        id
    }
}

/// The table part of a bundle's sorted components, and the per-component
/// sparse flags (empty when no component is sparse).
fn split_storage(
    components: &Components,
    ids: &[ComponentId],
    mut sorted: Vec<ComponentId>,
) -> (Box<[ComponentId]>, Box<[bool]>) {
    if !ids.iter().any(|&id| components.info(id).is_sparse()) {
        return (sorted.into_boxed_slice(), Box::default());
    }
    let sparse: Box<[bool]> = ids.iter().map(|&id| components.info(id).is_sparse()).collect();
    sorted.retain(|&id| !components.info(id).is_sparse());
    (sorted.into_boxed_slice(), sparse)
}

#[cfg(test)]
mod tests {
    use archetable_macros::Component;

    use super::Bundles;
    use crate::component::registry::Components;

    #[derive(Component)]
    struct A;

    #[derive(Component)]
    struct B;

    #[derive(Component)]
    struct C;

    #[test]
    fn alternating_bundle_types_keep_their_ids() {
        let (mut bundles, mut components) = (Bundles::default(), Components::default());
        let a = bundles.register::<A>(&mut components).id();
        let b = bundles.register::<(B, C)>(&mut components).id();
        let c = bundles.register::<C>(&mut components).id();
        assert_eq!([a.index(), b.index(), c.index()], [0, 1, 2]);
        // Each order of two or three types, from the last two looked up
        // and from the map.
        for order in [[0, 1, 0], [1, 0, 1], [2, 0, 1], [0, 2, 2], [1, 2, 0]] {
            for which in order {
                let (got, want) = match which {
                    0 => (bundles.register::<A>(&mut components).id(), a),
                    1 => (bundles.register::<(B, C)>(&mut components).id(), b),
                    _ => (bundles.register::<C>(&mut components).id(), c),
                };
                assert_eq!(got, want, "bundle {which} in {order:?}");
            }
        }
        assert_eq!(bundles.register::<(B, C)>(&mut components).components().len(), 2);
    }
}
