//! Required components: `#[component(requires(Transform, Velocity = Velocity::ZERO))]`
//! makes every spawn or insert of the component also insert each required
//! one the entity lacks, in the same table move.
//!
//! A component type's requirements are resolved once, when a world first
//! registers it: the whole closure (requirements of requirements), each
//! type with the constructor of the nearest component that names it, a
//! cycle refused with a panic that names the types. A bundle adds up the
//! requirements of its components when it is registered, so the archetype
//! graph sends it straight to the table with everything.

use std::any::{type_name, TypeId};
use std::collections::HashSet;
use std::fmt;
use std::mem::ManuallyDrop;
use std::sync::Arc;

use crate::component::{Component, ComponentId, Components};
use crate::names::short_type_name;

/// A required component's value on its way into the table: built before the
/// table write starts, since its constructor is user code that may panic,
/// then moved into its column (`Column::push_required` in the storage
/// layer, which checks the type and moves the value in).
pub(crate) trait RequiredValue: Send {
    /// The value's type, which the column it moves into must store.
    fn value_type(&self) -> TypeId;

    /// Hands the value to `take` as a pointer to it, for `take` to move it
    /// out; the value is forgotten afterwards, never dropped here.
    fn hand_over(self: Box<Self>, take: &mut dyn FnMut(*const u8));
}

impl<C: Component> RequiredValue for C {
    fn value_type(&self) -> TypeId {
        TypeId::of::<C>()
    }

    fn hand_over(self: Box<Self>, take: &mut dyn FnMut(*const u8)) {
        let value = ManuallyDrop::new(*self);
        take(std::ptr::from_ref::<C>(&value).cast());
    }
}

/// Builds a required component's value, boxed for the table write.
pub(crate) type RequiredCtor = Arc<dyn Fn() -> Box<dyn RequiredValue> + Send + Sync>;

/// The requirements a component type declares, collected by the function
/// its derive writes (`#[component(requires(..))]`); see
/// [`Component::REQUIRES`].
///
/// ```
/// use archetable::prelude::*;
///
/// #[derive(Component, Default, Debug, PartialEq)] struct Transform(f32);
/// #[derive(Component, Debug, PartialEq)] struct Velocity(f32);
///
/// #[derive(Component)]
/// #[component(requires(Transform, Velocity = Velocity(1.0)))]
/// struct Ship;
///
/// let mut world = World::new();
/// let ship = world.spawn(Ship);
/// assert_eq!(world.get::<Transform>(ship), Some(&Transform(0.0)));
/// assert_eq!(world.get::<Velocity>(ship), Some(&Velocity(1.0)));
/// ```
pub struct Requires {
    found: Vec<Requirement>,
}

/// One declared requirement, described by functions only, so the closure
/// can be walked (and a cycle found) before anything is registered.
#[derive(Clone)]
pub(crate) struct Requirement {
    type_id: TypeId,
    name: &'static str,
    register: fn(&mut Components) -> ComponentId,
    requires: Option<fn(&mut Requires)>,
    ctor: RequiredCtor,
}

/// A required component as a registered type stores it: its id, how far
/// down the requirements it was found (1: named by the type itself), and
/// its constructor.
///
/// The constructor builds a value of exactly the type `id` names: both come
/// from one [`Requires::add`] call, and the table write relies on it.
#[derive(Clone)]
pub(crate) struct RequiredComponent {
    pub id: ComponentId,
    pub depth: u32,
    pub ctor: RequiredCtor,
}

impl fmt::Debug for RequiredComponent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequiredComponent").field("id", &self.id).field("depth", &self.depth).finish()
    }
}

impl Requires {
    /// Declares that the component requires an `R`, built by `ctor` when an
    /// entity gets the component without one.
    ///
    /// # Panics
    /// If `R` uses sparse storage ([`Component::STORAGE`]): required
    /// components are written in the same table move as the component that
    /// requires them, so they must live in the tables. The panic comes when
    /// a world first registers the requiring type, before anything changes.
    pub fn add<R: Component>(&mut self, ctor: fn() -> R) -> &mut Self {
        assert!(
            R::STORAGE == crate::component::StorageType::Table,
            "`{}` is required by another component but uses sparse storage; required components must use table \
             storage",
            type_name::<R>()
        );
        self.found.push(Requirement {
            type_id: TypeId::of::<R>(),
            name: type_name::<R>(),
            register: Components::register::<R>,
            requires: R::REQUIRES,
            ctor: Arc::new(move || Box::new(ctor())),
        });
        self
    }
}

impl fmt::Debug for Requires {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.found.iter().map(|r| short_type_name(r.name))).finish()
    }
}

/// The requirements `requires` declares, in declaration order.
fn direct(requires: fn(&mut Requires)) -> Vec<Requirement> {
    let mut found = Requires { found: Vec::new() };
    requires(&mut found);
    found.found
}

/// The closure of the requirements of the type `of` (its `TypeId` and
/// name), nearest first (breadth first, then in declaration order), each
/// type once with its depth. Not generic: every component type shares this
/// one copy.
///
/// # Panics
/// If the requirements form a cycle; nothing is registered then.
pub(crate) fn closure(of: (TypeId, &'static str), requires: fn(&mut Requires)) -> Vec<(Requirement, u32)> {
    let mut path = vec![of];
    find_cycle(requires, &mut path, &mut HashSet::new());

    let mut seen = HashSet::from([of.0]);
    let mut out = Vec::new();
    let mut level = direct(requires);
    let mut depth = 1;
    while !level.is_empty() {
        let mut next = Vec::new();
        for requirement in level {
            if seen.insert(requirement.type_id) {
                if let Some(requires) = requirement.requires {
                    next.extend(direct(requires));
                }
                out.push((requirement, depth));
            }
        }
        level = next;
        depth += 1;
    }
    out
}

/// Walks the requirements depth first along `path`; panics on a type that
/// is already on it.
fn find_cycle(requires: fn(&mut Requires), path: &mut Vec<(TypeId, &'static str)>, done: &mut HashSet<TypeId>) {
    for requirement in direct(requires) {
        if let Some(start) = path.iter().position(|&(t, _)| t == requirement.type_id) {
            let cycle: Vec<String> =
                path[start..].iter().map(|&(_, n)| n).chain([requirement.name]).map(short_type_name).collect();
            panic!(
                "required components form a cycle: {}; `#[component(requires(..))]` cannot require a component \
                 that requires it back",
                cycle.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(" requires ")
            );
        }
        if !done.insert(requirement.type_id) {
            continue;
        }
        if let Some(next) = requirement.requires {
            path.push((requirement.type_id, requirement.name));
            find_cycle(next, path, done);
            path.pop();
        }
    }
}

/// Registers the types of a closure made by [`closure`].
pub(crate) fn register(components: &mut Components, closure: Vec<(Requirement, u32)>) -> Arc<[RequiredComponent]> {
    closure
        .into_iter()
        .map(|(requirement, depth)| RequiredComponent {
            id: (requirement.register)(components),
            depth,
            ctor: requirement.ctor,
        })
        .collect()
}

/// The required components of a bundle of `explicit` components: the union
/// of their requirements, without the bundle's own components (a value
/// given wins over a default), each once, from the nearest requirement
/// (then the first component in the bundle's order).
pub(crate) fn of_bundle(components: &Components, explicit: &[ComponentId]) -> Box<[RequiredComponent]> {
    let mut all: Vec<(usize, &RequiredComponent)> = Vec::new();
    for (order, &id) in explicit.iter().enumerate() {
        all.extend(components.info(id).required().iter().map(|r| (order, r)));
    }
    if all.is_empty() {
        return Box::default();
    }
    // Stable: within one depth, bundle order, then each list's own order.
    all.sort_by_key(|&(order, r)| (r.depth, order));
    let mut taken: Vec<ComponentId> = explicit.to_vec();
    let mut out = Vec::new();
    for (_, required) in all {
        if !taken.contains(&required.id) {
            taken.push(required.id);
            out.push(required.clone());
        }
    }
    out.into_boxed_slice()
}
