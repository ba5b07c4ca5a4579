//! Bundles: sets of components spawned, inserted or removed together, and the
//! code that writes a bundle into a table row or takes one out of it.

use std::any::TypeId;
use std::mem::ManuallyDrop;

use hashbrown::HashMap;

use crate::archetype::{Archetype, ArchetypeId, Archetypes, Row};
use crate::component::{Component, ComponentId, Components};
use crate::entity::{Entities, Entity, EntityLocation};
use crate::error::ComponentError;

/// A set of components that are spawned, inserted or removed together.
///
/// Implemented for every component, for tuples of bundles (up to 15
/// elements) and by `#[derive(Bundle)]` on structs whose fields are bundles.
/// A bundle may not hold one component type twice.
///
/// ```
/// use ecs::{Bundle, Component, World};
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
/// The three methods describe the same list of components, the bundle's
/// *component order*, which never changes:
/// - `register_components` calls `ids` once per component, in that order,
///   with the id `components` gives the component's type;
/// - `get_components` calls `f` once per component, in that order, with a
///   pointer to that component's value inside `*this`; it reads, moves and
///   drops nothing itself;
/// - `from_components` calls `f` once per component, in that order, and takes
///   ownership of the value of that component's type at each returned
///   pointer, building `Self` from them.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a bundle",
    label = "not a bundle of components",
    note = "a bundle is a component, a tuple of bundles, or a struct with `#[derive(Bundle)]`"
)]
pub unsafe trait Bundle: Send + Sync + 'static {
    /// Registers each component type and reports its id, in component order.
    fn register_components(components: &mut Components, ids: &mut impl FnMut(ComponentId));

    /// Reports a pointer to each component value inside `*this`, in component
    /// order.
    ///
    /// # Safety
    /// `this` points to a valid value of `Self`.
    unsafe fn get_components(this: *mut Self, f: &mut impl FnMut(*mut u8));

    /// Builds the bundle from component values read from the pointers `f`
    /// returns, in component order.
    ///
    /// # Safety
    /// Each pointer `f` returns points to a valid value of the component type
    /// at that position, which the bundle takes ownership of.
    unsafe fn from_components(f: &mut impl FnMut() -> *mut u8) -> Self
    where
        Self: Sized;
}

// SAFETY: one component, reported, pointed to and read as its own type.
unsafe impl<C: Component> Bundle for C {
    fn register_components(components: &mut Components, ids: &mut impl FnMut(ComponentId)) {
        ids(components.register::<C>());
    }

    unsafe fn get_components(this: *mut Self, f: &mut impl FnMut(*mut u8)) {
        f(this.cast());
    }

    unsafe fn from_components(f: &mut impl FnMut() -> *mut u8) -> Self {
        // SAFETY: the caller hands over a valid `C` at the pointer.
        unsafe { f().cast::<C>().read() }
    }
}

macro_rules! impl_bundle_for_tuple {
    ($($name:ident $index:tt),*) => {
        // SAFETY: the elements' component orders, concatenated in element
        // order by all three methods.
        unsafe impl<$($name: Bundle),*> Bundle for ($($name,)*) {
            #[allow(unused_variables)]
            fn register_components(components: &mut Components, ids: &mut impl FnMut(ComponentId)) {
                $(<$name as Bundle>::register_components(components, ids);)*
            }

            #[allow(unused_variables)]
            unsafe fn get_components(this: *mut Self, f: &mut impl FnMut(*mut u8)) {
                $(
                    // SAFETY: `this` points to a valid tuple (caller), so each
                    // element is a valid value of its bundle type.
                    unsafe { <$name as Bundle>::get_components(&raw mut (*this).$index, f) };
                )*
            }

            #[allow(unused_variables, clippy::unused_unit)]
            unsafe fn from_components(f: &mut impl FnMut() -> *mut u8) -> Self {
                // SAFETY: the caller's pointers follow the concatenated order;
                // tuple expressions evaluate left to right.
                ($(unsafe { <$name as Bundle>::from_components(f) },)*)
            }
        }
    };
}

crate::tuples::all_tuples!(impl_bundle_for_tuple);

/// The index of a bundle type among the bundles one world has seen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BundleId(u32);

impl BundleId {
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
    /// The components sorted by id: the signature of the bundle's spawn archetype.
    sorted: Box<[ComponentId]>,
    /// For each component (in component order), its column in the spawn archetype.
    spawn_columns: Box<[usize]>,
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

    /// The components sorted by id.
    #[inline]
    pub fn sorted_components(&self) -> &[ComponentId] {
        &self.sorted
    }
}

/// The registry of bundle types a world has seen.
#[derive(Default, Debug)]
pub(crate) struct Bundles {
    infos: Vec<BundleInfo>,
    by_type: HashMap<TypeId, BundleId>,
}

impl Bundles {
    /// The info of bundle `B`, registering it (and its components) first if
    /// needed.
    ///
    /// # Panics
    /// If `B` holds one component type twice.
    #[inline]
    pub fn register<B: Bundle>(&mut self, components: &mut Components) -> &BundleInfo {
        let id = match self.by_type.get(&TypeId::of::<B>()) {
            Some(&id) => id,
            None => self.register_new::<B>(components),
        };
        &self.infos[id.index()]
    }

    /// The info of a registered bundle.
    #[inline]
    pub fn get(&self, id: BundleId) -> &BundleInfo {
        &self.infos[id.index()]
    }

    #[cold]
    fn register_new<B: Bundle>(&mut self, components: &mut Components) -> BundleId {
        let mut ids = Vec::new();
        B::register_components(components, &mut |id| ids.push(id));
        let mut sorted = ids.clone();
        sorted.sort_unstable();
        if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
            panic!(
                "bundle `{}` holds component `{}` twice; a bundle holds each component type at most once",
                std::any::type_name::<B>(),
                components.name(w[0]),
            );
        }
        let spawn_columns = ids.iter().map(|id| sorted.binary_search(id).expect("sorted holds every id")).collect();
        let id = BundleId(u32::try_from(self.infos.len()).expect("more than u32::MAX bundle types"));
        self.infos.push(BundleInfo {
            id,
            type_id: TypeId::of::<B>(),
            components: ids.into_boxed_slice(),
            sorted: sorted.into_boxed_slice(),
            spawn_columns,
        });
        self.by_type.insert(TypeId::of::<B>(), id);
        id
    }
}

/// Writes `bundle` as a new row of `archetype`, the bundle's spawn archetype.
///
/// # Panics
/// If `info` is not `B`'s, or `archetype` is not its spawn archetype.
#[inline]
pub(crate) fn write_new_row<B: Bundle>(bundle: B, info: &BundleInfo, archetype: &mut Archetype, entity: Entity) -> Row {
    assert!(
        info.type_id == TypeId::of::<B>() && archetype.components() == &*info.sorted,
        "bundle info does not match the bundle or the archetype"
    );
    let row = archetype.push_entity(entity);
    let mut bundle = ManuallyDrop::new(bundle);
    let columns = archetype.columns_mut();
    let mut field = 0;
    // SAFETY: `bundle` is a valid `B`. The component order matches `info`
    // (checked type id), so field `i` has the type of column
    // `spawn_columns[i]`, each column receiving exactly one value; the values
    // are moved into the columns and the bundle is never dropped.
    unsafe {
        B::get_components(&mut *bundle, &mut |ptr| {
            columns[info.spawn_columns[field]].push(ptr);
            field += 1;
        });
    }
    row
}

/// Inserts `bundle` into the live `entity` at `location`: moves it to the
/// archetype that has the bundle's components as well as its own, then
/// writes each component, adding it or overwriting (and dropping) the old
/// value.
///
/// Tables and the entity table are consistent before any old value is
/// dropped.
pub(crate) fn insert<B: Bundle>(
    bundle: B,
    info: &BundleInfo,
    archetypes: &mut Archetypes,
    entities: &mut Entities,
    components: &Components,
    entity: Entity,
    location: EntityLocation,
) {
    assert_eq!(info.type_id, TypeId::of::<B>(), "bundle info does not match the bundle");
    let source = location.archetype;
    let target = archetypes.insert_target(source, info, components);
    let mut bundle = ManuallyDrop::new(bundle);
    if target == source {
        let archetype = archetypes.get_mut(target);
        write_fields(&mut *bundle, info, archetype, location.row, |_| true, components);
    } else {
        let (src, dst) = archetypes.pair_mut(source, target);
        let (row, moved) = src.move_row_to_superset(location.row, dst);
        if let Some(moved) = moved {
            entities.set_location(moved.index(), location);
        }
        entities.set_location(entity.index(), EntityLocation { archetype: target, row });
        write_fields(&mut *bundle, info, dst, row, |id| src.contains(id), components);
    }
}

/// Writes each component of `*bundle` into `row` of `archetype`: pushed
/// where `existed` says the entity lacked it (that column ends at `row`),
/// swapped in where it had it. Then drops the old values, which the swap left
/// inside `*bundle`. The caller must not drop `*bundle` afterwards.
fn write_fields<B: Bundle>(
    bundle: &mut B,
    info: &BundleInfo,
    archetype: &mut Archetype,
    row: Row,
    existed: impl Fn(ComponentId) -> bool,
    components: &Components,
) {
    let r = row.index();
    let mut field = 0;
    // SAFETY: `bundle` is a valid `B`, and the component order matches
    // `info` (the caller checked the type id), so each pointer is a valid
    // value of the column's type. A new component's column ends at `r` and
    // an existing one holds a value at `r`: asserted before each write.
    unsafe {
        B::get_components(bundle, &mut |ptr| {
            let id = info.components[field];
            field += 1;
            let index = archetype.column_index(id).expect("target archetype holds every bundle component");
            let column = archetype.column_mut(index);
            if existed(id) {
                assert!(r < column.len(), "overwritten component has no value");
                column.swap_value(r, ptr);
            } else {
                assert_eq!(column.len(), r, "added component column out of step");
                column.push(ptr);
            }
        });
    }
    // Every table is consistent now; drop the replaced values. A panicking
    // destructor leaks the replaced values after it, never a live one.
    let mut field = 0;
    // SAFETY: as above; the fields of existing components now hold the old
    // values (swapped in), valid and owned by nobody else, each dropped once.
    // The other fields were moved into columns and are not touched.
    unsafe {
        B::get_components(bundle, &mut |ptr| {
            let id = info.components[field];
            field += 1;
            if existed(id) {
                if let Some(drop) = components.info(id).drop_fn() {
                    drop(ptr);
                }
            }
        });
    }
}

/// Takes the components of bundle `B` out of the live `entity` at
/// `location` and moves the entity to the archetype without them.
pub(crate) fn take<B: Bundle>(
    info: &BundleInfo,
    archetypes: &mut Archetypes,
    entities: &mut Entities,
    components: &Components,
    entity: Entity,
    location: EntityLocation,
) -> Result<B, ComponentError> {
    assert_eq!(info.type_id, TypeId::of::<B>(), "bundle info does not match the bundle");
    let source = location.archetype;
    if let Some(&missing) = info.components.iter().find(|&&id| !archetypes[source].contains(id)) {
        return Err(ComponentError::MissingComponent { entity, component: components.name(missing) });
    }
    let target = archetypes.remove_target(source, info, components);
    if target == source {
        // Only the empty bundle removes nothing.
        // SAFETY: an empty component order calls `f` no times.
        return Ok(unsafe { B::from_components(&mut || unreachable!("empty bundle")) });
    }
    let (src, dst) = archetypes.pair_mut(source, target);
    let r = location.row.index();
    let mut field = 0;
    // SAFETY: every component of `B` is in `src` (checked above), and
    // `location.row` is a live row there, so each pointer is a valid value of
    // the component at that position in `B`'s order; ownership moves to the
    // returned bundle and `move_row` below forgets those values.
    let value = unsafe {
        B::from_components(&mut || {
            let id = info.components[field];
            field += 1;
            let index = src.column_index(id).expect("checked above");
            src.column(index).ptr_at(r)
        })
    };
    // SAFETY: `target` holds exactly the source's components minus `B`'s,
    // whose values were moved out above; it gains no component.
    let (row, moved) = unsafe { src.move_row(location.row, dst) };
    if let Some(moved) = moved {
        entities.set_location(moved.index(), location);
    }
    entities.set_location(entity.index(), EntityLocation { archetype: target, row });
    Ok(value)
}

/// The spawn archetype of a bundle: the one reached by inserting it into the
/// empty archetype.
#[inline]
pub(crate) fn spawn_archetype(info: &BundleInfo, archetypes: &mut Archetypes, components: &Components) -> ArchetypeId {
    archetypes.insert_target(ArchetypeId::EMPTY, info, components)
}
