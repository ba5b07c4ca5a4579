//! The `Component` trait and the per-world registry that gives each component
//! type a dense id and the metadata needed to store it without knowing it.

use std::alloc::Layout;
use std::any::TypeId;
use std::fmt;
use std::sync::Arc;

use std::hash::{BuildHasherDefault, Hash, Hasher};

use hashbrown::HashMap;

use crate::component::required::RequiredComponent;

/// A type that can be stored on entities.
///
/// Derive it: `#[derive(Component)]`. Any `'static + Send + Sync` type
/// qualifies; zero-sized types (markers) cost no memory per entity.
///
/// ```
/// use archetable::{Component, World};
///
/// #[derive(Component, Debug, PartialEq)]
/// struct Health(u32);
///
/// let mut world = World::new();
/// let e = world.spawn(Health(10));
/// assert_eq!(world.get::<Health>(e), Some(&Health(10)));
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a component",
    label = "not a component",
    note = "add `#[derive(Component)]` to the type's definition"
)]
pub trait Component: Send + Sync + 'static {
    /// Whether the world keeps an added and a changed tick for every value
    /// of this type, which [`Added`](crate::Added),
    /// [`Changed`](crate::Changed) and [`Ref`](crate::Ref) read. Off unless
    /// the derive says `#[component(track_changes)]`: an untracked type
    /// stores no ticks and its writes cost nothing extra.
    const TRACK_CHANGES: bool = false;

    /// What happens to a value that leaves the world: `None` drops it,
    /// `Some` resets it and keeps it in the type's pool for
    /// `spawn_pooled`. Set by `#[component(pooled)]`.
    #[doc(hidden)]
    const POOL: Option<crate::component::erased::PoolFns<Self>> = None;

    /// Hooks the engine itself keeps on this type, installed in a world
    /// when the type first appears there: relationship components (see
    /// [`Relationship`](crate::Relationship)) keep their targets' lists
    /// exact this way. Set by the derive's relationship options.
    #[doc(hidden)]
    const ENGINE_HOOKS: Option<fn(&mut crate::World)> = None;

    /// Whether the engine derives this component's value from other
    /// components (a relationship's list of sources), so that
    /// [`World::take`](crate::World::take) leaves it behind: the world that
    /// spawns the taken entity rebuilds it. Set by the derive's
    /// `relationship_target` option.
    #[doc(hidden)]
    const ENGINE_KEPT: bool = false;
    /// The components this one requires: spawning or inserting it also
    /// inserts each of them that the entity lacks, in the same table move,
    /// built by the constructor given (requirements of requirements
    /// included). Set by `#[component(requires(Transform, Velocity =
    /// Velocity::ZERO))]`: a bare type is built by its `Default`.
    ///
    /// ```
    /// use archetable::prelude::*;
    ///
    /// #[derive(Component, Default, Debug, PartialEq)] struct Health(u32);
    /// #[derive(Component)] #[component(requires(Health = Health(100)))] struct Player;
    ///
    /// let mut world = World::new();
    /// let p = world.spawn(Player);
    /// assert_eq!(world.get::<Health>(p), Some(&Health(100)));
    /// let q = world.spawn((Player, Health(5))); // a value given wins
    /// assert_eq!(world.get::<Health>(q), Some(&Health(5)));
    /// ```
    const REQUIRES: Option<fn(&mut crate::Requires)> = None;

    /// How to copy a value, for [`World::clone_entity`](crate::World::clone_entity)
    /// and [`World::try_clone`](crate::World::try_clone): `None` (the
    /// default) makes the type not cloneable. Set by
    /// `#[component(clone)]`, which needs `Clone`.
    ///
    /// ```
    /// # use archetable::Component;
    /// #[derive(Component, Clone)]
    /// #[component(clone)]
    /// struct Hp(u32);
    /// assert!(Hp::CLONE.is_some());
    /// ```
    const CLONE: Option<fn(&Self) -> Self> = None;

    /// Where the world keeps values of this type: in the archetype tables
    /// (the default, fastest to iterate) or in a sparse set beside them
    /// (`#[component(storage = "sparse")]`; bevy_ecs's `"SparseSet"` is
    /// accepted too), for components that come and
    /// go often: adding or removing a sparse component moves no table row
    /// and creates no archetype, while a query reading it looks each
    /// entity up. Since no archetype records a sparse component, `With` and
    /// `Without` of one do not prove two queries of a system disjoint
    /// (`error[E0002]`): use a [`ParamSet`](crate::ParamSet) there. Sparse
    /// components cannot be required components, and binary saves do not
    /// hold them yet (text saves do).
    ///
    /// ```
    /// use archetable::prelude::*;
    /// use archetable::StorageType;
    ///
    /// #[derive(Component)] struct Position(f32);
    /// #[derive(Component)] #[component(storage = "sparse")] struct Stunned;
    /// assert_eq!(Stunned::STORAGE, StorageType::Sparse);
    ///
    /// let mut world = World::new();
    /// let e = world.spawn(Position(0.0));
    /// world.insert(e, Stunned).unwrap(); // the entity stays in its table
    /// assert_eq!(world.query_filtered::<&Position, With<Stunned>>().count(), 1);
    /// ```
    const STORAGE: StorageType = StorageType::Table;
}

/// A component that may be borrowed mutably: through `&mut T` in a query,
/// [`World::get_mut`](crate::World::get_mut),
/// [`EntityWorldMut::get_mut`](crate::EntityWorldMut::get_mut) and a
/// hook's [`HookWorld::get_mut`](crate::HookWorld::get_mut).
/// `#[derive(Component)]` implements it unless the type says
/// `#[component(immutable)]`; relationships and their lists (`ChildOf`,
/// `Children`) never have it.
///
/// An immutable component's value is only replaced, by an insert, so its
/// hooks and observers see every change: a value the engine keeps
/// consistent with other components cannot be edited behind its back.
///
/// ```
/// use archetable::prelude::*;
///
/// #[derive(Component, Debug, PartialEq)]
/// #[component(immutable)]
/// struct Seed(u64);
///
/// let mut world = World::new();
/// let e = world.spawn(Seed(1));
/// world.insert(e, Seed(2)).unwrap(); // the only way to change it
/// assert_eq!(world.get::<Seed>(e), Some(&Seed(2)));
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be borrowed mutably: it is not a mutable component",
    label = "immutable (or not a component)",
    note = "a component marked `#[component(immutable)]`, and a relationship or its list (`ChildOf`, `Children`), \
            is only replaced with `insert`, so that its hooks see every change"
)]
///
/// It is a marker beside [`Component`], not a subtrait, so that a type the
/// derive cannot make a component (one that is not `Sync`) gets one error,
/// not two: bounds name both (`T: Component + MutableComponent`).
pub trait MutableComponent {}

/// Where a component type's values live: see [`Component::STORAGE`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum StorageType {
    /// In the columns of the archetype tables: part of each entity's
    /// archetype; the fastest to iterate.
    #[default]
    Table,
    /// In a sparse set beside the tables: not part of the archetype, so
    /// adding and removing it moves no row; queries look entities up.
    Sparse,
}

/// The dense id a world gives a component type the first time it sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ComponentId(pub(crate) u32);

impl ComponentId {
    /// The id as an index into per-component tables.
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// Everything needed to store, move and drop a component's values without
/// knowing its type.
#[derive(Clone)]
pub struct ComponentInfo {
    id: ComponentId,
    type_id: TypeId,
    layout: Layout,
    drop: Option<unsafe fn(*mut u8)>,
    name: &'static str,
    track_changes: bool,
    /// The reset of a pooled type: `T::POOL`'s, so it resets this type.
    pool: Option<unsafe fn(*mut u8)>,
    /// Registers the type in another world's registry, so a value moved
    /// out type-erased (`World::take`) can be stored there.
    register: fn(&mut Components) -> ComponentId,
    /// Whether the type has engine hooks ([`Component::ENGINE_HOOKS`]).
    engine_hooked: bool,
    /// Whether the engine keeps the value ([`Component::ENGINE_KEPT`]).
    engine_kept: bool,
    /// Hands out the type's lifecycle events (`OnAdd<T>`, ...).
    lifecycle: crate::observer::LifecycleFn,
    /// The components the type requires, transitively, nearest first.
    required: Arc<[RequiredComponent]>,
    /// The engine hooks' installer ([`Component::ENGINE_HOOKS`]).
    engine_hooks: Option<fn(&mut crate::World)>,
    /// Clones a value into uninitialized memory ([`Component::CLONE`]).
    clone: Option<unsafe fn(*const u8, *mut u8)>,
    /// Where the values live ([`Component::STORAGE`]).
    storage: StorageType,
    /// Whether entities holding it are hidden from the queries that do not
    /// name it ([`Disabled`](crate::Disabled), or a type given to
    /// `World::register_disabling_component`).
    hides: bool,
}

impl ComponentInfo {
    fn of<T: Component>(id: ComponentId) -> Self {
        ComponentInfo {
            id,
            type_id: TypeId::of::<T>(),
            layout: Layout::new::<T>(),
            drop: std::mem::needs_drop::<T>().then_some(crate::component::erased::drop_ptr::<T> as unsafe fn(*mut u8)),
            name: std::any::type_name::<T>(),
            track_changes: T::TRACK_CHANGES,
            pool: T::POOL.map(crate::component::erased::PoolFns::erased),
            register: Components::register::<T>,
            engine_hooked: T::ENGINE_HOOKS.is_some(),
            engine_kept: T::ENGINE_KEPT,
            lifecycle: crate::observer::lifecycle_event::<T>,
            required: Arc::new([]),
            engine_hooks: T::ENGINE_HOOKS,
            clone: T::CLONE.map(|_| crate::component::erased::clone_ptr::<T> as unsafe fn(*const u8, *mut u8)),
            storage: T::STORAGE,
            hides: TypeId::of::<T>() == TypeId::of::<crate::component::disabling::Disabled>(),
        }
    }

    /// The component's id in its world.
    #[inline]
    pub fn id(&self) -> ComponentId {
        self.id
    }

    /// The Rust type of the component.
    #[inline]
    pub fn type_id(&self) -> TypeId {
        self.type_id
    }

    /// Size and alignment of one value.
    #[inline]
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// The function that drops one value in place, if the type needs
    /// dropping. Calling it is `unsafe`: the pointer must point to a valid,
    /// aligned value of this component's type, which is never used again.
    #[inline]
    pub fn drop_fn(&self) -> Option<unsafe fn(*mut u8)> {
        self.drop
    }

    /// Whether the world keeps change ticks for this type
    /// ([`Component::TRACK_CHANGES`]).
    #[inline]
    pub fn tracks_changes(&self) -> bool {
        self.track_changes
    }

    /// Whether values leaving the world are reset and pooled
    /// (`#[component(pooled)]`).
    #[inline]
    pub fn is_pooled(&self) -> bool {
        self.pool.is_some()
    }

    #[inline]
    pub(crate) fn pool_reset(&self) -> Option<unsafe fn(*mut u8)> {
        self.pool
    }

    /// The function that registers this type in a registry (another
    /// world's) and returns its id there.
    #[inline]
    pub(crate) fn register_fn(&self) -> fn(&mut Components) -> ComponentId {
        self.register
    }

    /// Whether the type has engine hooks ([`Component::ENGINE_HOOKS`]).
    #[inline]
    pub(crate) fn engine_hooked(&self) -> bool {
        self.engine_hooked
    }

    /// Whether the engine keeps the value from other components
    /// ([`Component::ENGINE_KEPT`]): a relationship's list of sources.
    #[inline]
    pub(crate) fn engine_kept(&self) -> bool {
        self.engine_kept
    }

    /// The components the type requires (`#[component(requires(..))]`),
    /// transitively, nearest first.
    #[inline]
    pub(crate) fn required(&self) -> &[RequiredComponent] {
        &self.required
    }

    /// Whether the type requires other components
    /// ([`Component::REQUIRES`]).
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// #[derive(Component, Default)] struct Mass(f32);
    /// #[derive(Component)] #[component(requires(Mass))] struct Body;
    /// let mut world = World::new();
    /// let body = world.register_component::<Body>();
    /// assert!(world.components().info(body).has_required());
    /// ```
    #[inline]
    pub fn has_required(&self) -> bool {
        !self.required.is_empty()
    }

    /// The type's lifecycle events, for triggering them.
    #[inline]
    pub(crate) fn lifecycle(&self) -> crate::observer::LifecycleFn {
        self.lifecycle
    }

    /// The engine hooks' installer, if the type has engine hooks.
    #[inline]
    pub(crate) fn engine_hooks(&self) -> Option<fn(&mut crate::World)> {
        self.engine_hooks
    }

    /// Whether values can be cloned (`#[component(clone)]`).
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component, Clone)] #[component(clone)] struct Hp(u32);
    /// let mut world = World::new();
    /// let id = world.register_component::<Hp>();
    /// assert!(world.components().info(id).is_cloneable());
    /// ```
    #[inline]
    pub fn is_cloneable(&self) -> bool {
        self.clone.is_some()
    }

    /// The function that clones the value at its first pointer into the
    /// uninitialized memory at its second, if the type is cloneable.
    #[inline]
    pub(crate) fn clone_fn(&self) -> Option<unsafe fn(*const u8, *mut u8)> {
        self.clone
    }

    /// Where the values live ([`Component::STORAGE`]).
    #[inline]
    pub fn storage(&self) -> StorageType {
        self.storage
    }

    /// Whether the values live in a sparse set rather than the tables.
    #[inline]
    pub fn is_sparse(&self) -> bool {
        self.storage == StorageType::Sparse
    }

    /// Whether entities holding this component are hidden from the queries
    /// that do not name it: true for [`Disabled`](crate::Disabled) and for
    /// the types given to
    /// [`World::register_disabling_component`](crate::World::register_disabling_component).
    #[inline]
    pub fn hides_entities(&self) -> bool {
        self.hides
    }

    /// The type's name, as given by `std::any::type_name`.
    #[inline]
    pub fn name(&self) -> &'static str {
        self.name
    }
}

impl fmt::Debug for ComponentInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ComponentInfo")
            .field("id", &self.id)
            .field("name", &self.name)
            .field("layout", &self.layout)
            .finish()
    }
}

/// The registry of the component types one world has seen.
#[derive(Default, Debug, Clone)]
pub struct Components {
    infos: Vec<ComponentInfo>,
    by_type: TypeIdMap<ComponentId>,
    /// The same map for most types in fewer steps (see [`IdCache`]).
    cache: IdCache,
    /// Types registered with engine hooks the world has not installed yet.
    pending_hooks: Vec<fn(&mut crate::World)>,
}

/// A direct-mapped copy of part of `by_type`: each type has one place,
/// chosen by its `TypeId`'s bits, which holds it if no type registered
/// later wanted the same place. For `TypeId::of::<T>()` the place is a
/// constant, so a lookup is a load and a compare instead of a hash-table
/// probe: the whole price of a single sparse insert is a few dozen
/// instructions, and the probe was a good part of it. A miss falls back to
/// the map.
#[derive(Clone)]
struct IdCache(Box<[(TypeId, ComponentId); IdCache::PLACES]>);

impl fmt::Debug for IdCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let held = self.0.iter().filter(|(type_id, _)| *type_id != TypeId::of::<NoComponent>()).count();
        write!(f, "IdCache({held} of {} places)", IdCache::PLACES)
    }
}

/// The `TypeId` in a free place: of a type that is never a component.
struct NoComponent;

impl Default for IdCache {
    fn default() -> Self {
        IdCache(Box::new([(TypeId::of::<NoComponent>(), ComponentId(u32::MAX)); IdCache::PLACES]))
    }
}

impl IdCache {
    const PLACES: usize = 64;

    #[inline(always)]
    fn place(type_id: TypeId) -> usize {
        let mut hasher = TypeIdHasher::default();
        type_id.hash(&mut hasher);
        hasher.finish() as usize % IdCache::PLACES
    }

    #[inline(always)]
    fn get(&self, type_id: TypeId) -> Option<ComponentId> {
        let (held, id) = self.0[IdCache::place(type_id)];
        (held == type_id).then_some(id)
    }

    fn put(&mut self, type_id: TypeId, id: ComponentId) {
        self.0[IdCache::place(type_id)] = (type_id, id);
    }
}

impl Components {
    /// The id of `T`, registering it first if this is its first appearance.
    ///
    /// # Panics
    /// If `T`'s required components ([`Component::REQUIRES`]) form a cycle;
    /// nothing is registered then.
    #[inline]
    pub fn register<T: Component>(&mut self) -> ComponentId {
        if let Some(id) = self.cache.get(TypeId::of::<T>()) {
            return id;
        }
        match self.by_type.get(&TypeId::of::<T>()) {
            Some(&id) => id,
            None => self.register_new::<T>(),
        }
    }

    #[cold]
    fn register_new<T: Component>(&mut self) -> ComponentId {
        let id = ComponentId(u32::try_from(self.infos.len()).expect("more than u32::MAX component types"));
        self.register_info(ComponentInfo::of::<T>(id), T::REQUIRES)
    }

    /// The part of [`Components::register_new`] that does not depend on the
    /// type: one copy for every component type instead of one per type.
    fn register_info(&mut self, info: ComponentInfo, requires: Option<fn(&mut crate::Requires)>) -> ComponentId {
        // Walked first, so that a cycle panics before anything changes.
        let closure = requires.map(|requires| crate::component::required::closure((info.type_id, info.name), requires));
        let (id, type_id, hooks) = (info.id, info.type_id, info.engine_hooks);
        self.infos.push(info);
        self.by_type.insert(type_id, id);
        self.cache.put(type_id, id);
        if let Some(hooks) = hooks {
            self.pending_hooks.push(hooks);
        }
        if let Some(closure) = closure {
            let required = crate::component::required::register(self, closure);
            self.infos[id.index()].required = required;
        }
        id
    }

    /// A copy of the registry (same ids) for another world, which installs
    /// the engine hooks of every type itself: none is left pending.
    pub(crate) fn snapshot(&self) -> Components {
        Components {
            infos: self.infos.clone(),
            by_type: self.by_type.clone(),
            cache: self.cache.clone(),
            pending_hooks: Vec::new(),
        }
    }

    /// Whether types registered since the last [`Components::take_pending_hooks`]
    /// have engine hooks to install.
    #[inline]
    pub(crate) fn has_pending_hooks(&self) -> bool {
        !self.pending_hooks.is_empty()
    }

    /// Takes the engine hooks of the types registered since the last call.
    #[inline]
    pub(crate) fn take_pending_hooks(&mut self) -> Option<Vec<fn(&mut crate::World)>> {
        (!self.pending_hooks.is_empty()).then(|| std::mem::take(&mut self.pending_hooks))
    }

    /// The id of `T`, if this world has seen it.
    #[inline]
    pub fn id<T: Component>(&self) -> Option<ComponentId> {
        self.id_of_type(TypeId::of::<T>())
    }

    /// The id of the component type `type_id`, if this world has seen it.
    #[inline]
    pub(crate) fn id_of_type(&self, type_id: TypeId) -> Option<ComponentId> {
        match self.cache.get(type_id) {
            Some(id) => Some(id),
            None => self.by_type.get(&type_id).copied(),
        }
    }

    /// The metadata of a registered component.
    ///
    /// # Panics
    /// If `id` was not handed out by this registry.
    #[inline]
    pub fn info(&self, id: ComponentId) -> &ComponentInfo {
        &self.infos[id.index()]
    }

    /// Marks component `id` as hiding the entities that hold it from the
    /// queries that do not name it. The caller checks that no archetype
    /// holds it yet and that it lives in tables.
    pub(crate) fn set_hiding(&mut self, id: ComponentId) {
        self.infos[id.index()].hides = true;
    }

    /// The name of a registered component.
    #[inline]
    pub fn name(&self, id: ComponentId) -> &'static str {
        self.info(id).name
    }

    /// Number of registered component types.
    #[inline]
    pub fn len(&self) -> usize {
        self.infos.len()
    }

    /// Whether no component type is registered yet.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.infos.is_empty()
    }

    /// All registered components, in id order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &ComponentInfo> {
        self.infos.iter()
    }
}

/// A map keyed by `TypeId`. A `TypeId` is already a well-mixed hash of the
/// type, so hashing it again is wasted work on every spawn and insert.
pub(crate) type TypeIdMap<V> = HashMap<TypeId, V, BuildHasherDefault<TypeIdHasher>>;

/// Uses the `TypeId`'s own bits as the hash.
#[derive(Default)]
pub(crate) struct TypeIdHasher(u64);

impl Hasher for TypeIdHasher {
    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.0 ^= n;
    }

    #[inline]
    fn write_u128(&mut self, n: u128) {
        self.0 ^= n as u64 ^ (n >> 64) as u64;
    }

    // `TypeId` hashes through the integer methods above; anything else is
    // folded in bytewise so the hasher stays correct, if slower.
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! kinds {
        ($($name:ident)*) => {
            $(
                struct $name;
                impl Component for $name {}
            )*
            /// Registers every kind, checking each id as it goes.
            fn register_all(components: &mut Components) -> Vec<ComponentId> {
                vec![$(components.register::<$name>()),*]
            }
            fn ids(components: &Components) -> Vec<Option<ComponentId>> {
                vec![$(components.id::<$name>()),*]
            }
        };
    }

    // More kinds than the cache has places: some must share one.
    kinds!(
        K00 K01 K02 K03 K04 K05 K06 K07 K08 K09 K10 K11 K12 K13 K14 K15 K16 K17 K18 K19
        K20 K21 K22 K23 K24 K25 K26 K27 K28 K29 K30 K31 K32 K33 K34 K35 K36 K37 K38 K39
        K40 K41 K42 K43 K44 K45 K46 K47 K48 K49 K50 K51 K52 K53 K54 K55 K56 K57 K58 K59
        K60 K61 K62 K63 K64 K65 K66 K67 K68 K69 K70 K71 K72 K73 K74 K75 K76 K77 K78 K79
    );

    #[test]
    fn ids_survive_a_crowded_cache() {
        let mut components = Components::default();
        assert_eq!(ids(&components), vec![None; 80]);
        let first = register_all(&mut components);
        assert_eq!(first, (0..80).map(ComponentId).collect::<Vec<_>>(), "one new id per kind, in order");
        assert_eq!(register_all(&mut components), first, "registering again hands out the same ids");
        assert_eq!(ids(&components), first.iter().copied().map(Some).collect::<Vec<_>>());
        let copy = components.snapshot();
        assert_eq!(ids(&copy), ids(&components));
        let places: std::collections::HashSet<usize> =
            components.by_type.keys().map(|&type_id| IdCache::place(type_id)).collect();
        assert!(places.len() < 80, "the test must crowd the cache");
    }
}
