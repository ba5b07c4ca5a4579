//! `ParamSet`: parameters that would alias if used together, such as two
//! queries writing one component, taken by one system and used one at a
//! time.

use crate::system::access::AccessConflict;
use crate::system::param::{forward_deferred, forward_validate, SystemMeta, SystemParam};
use crate::world::World;

/// A set of system parameters that may conflict with each other, used one
/// at a time through `p0()`, `p1()`, ... (up to eight members). Each
/// accessor borrows the set mutably, so the borrow checker refuses to keep
/// one member's value while another is taken.
///
/// Against the system's other parameters (and other systems), the set
/// counts as the union of its members' accesses, checked as usual
/// (`error[E0002]`).
///
/// Inside the set, spell the query data's references `'static`
/// (`Query<&'static mut Hp>`), as in a `#[derive(SystemParam)]` struct:
/// the set needs its members to be system parameters in its own type, and
/// a query's cached state outlives any one borrow.
///
/// ```
/// use archetable::prelude::*;
///
/// #[derive(Component)] struct Hp(u32);
/// #[derive(Component)] struct Boss;
///
/// // Both queries write `Hp` on bosses: used together they would alias.
/// fn balance(mut set: ParamSet<(Query<&'static mut Hp>, Query<&'static mut Hp, With<Boss>>)>) {
///     for mut hp in set.p0().iter_mut() {
///         hp.0 += 1;
///     }
///     for mut hp in set.p1().iter_mut() {
///         hp.0 *= 10;
///     }
/// }
///
/// let mut world = World::new();
/// let minion = world.spawn(Hp(1));
/// let boss = world.spawn((Hp(1), Boss));
/// world.run_system_once(balance);
/// assert_eq!((world.get::<Hp>(minion).unwrap().0, world.get::<Hp>(boss).unwrap().0), (2, 20));
/// ```
pub struct ParamSet<'w, 's, T: SystemParam> {
    state: &'s mut T::State,
    world: &'w World,
    meta: &'s SystemMeta,
}

macro_rules! impl_param_set {
    ($(($name:ident, $index:tt, $method:ident)),*) => {
        // SAFETY: each member records its own access into `meta`, checked
        // against the system's other parameters; members are exempt only
        // from checks against each other, and the accessors below hand out
        // one member at a time (each borrows the set mutably).
        unsafe impl<$($name: SystemParam),*> SystemParam for ParamSet<'_, '_, ($($name,)*)> {
            type State = ($($name::State,)*);
            type Item<'w, 's> = ParamSet<'w, 's, ($($name,)*)>;

            fn init_state(world: &mut World, meta: &mut SystemMeta) -> Result<Self::State, AccessConflict> {
                meta.access_mut().open_set();
                let state = (|| Ok(($({
                    meta.access_mut().set_member($index);
                    $name::init_state(world, meta)?
                },)*)))();
                meta.access_mut().close_set();
                state
            }

            #[inline]
            unsafe fn get_param<'w, 's>(
                state: &'s mut Self::State,
                world: &'w World,
                meta: &'s SystemMeta,
            ) -> Self::Item<'w, 's> {
                ParamSet { state, world, meta }
            }

            // All three steps, moving the commands out included: an
            // observer takes its members' commands to apply once it is back
            // in its place (and a lifecycle observer's once the world
            // operation is over).
            // A member that would skip the system skips it, as it would
            // outside a set.
            forward_validate!($($name $index),*);
            forward_deferred!($($name $index),*);
        }

        impl<$($name: SystemParam),*> ParamSet<'_, '_, ($($name,)*)> {
            $(
                #[doc = concat!("Member ", stringify!($index), " of the set, for as long as this borrow of the set lasts.")]
                #[inline]
                pub fn $method(&mut self) -> $name::Item<'_, '_> {
                    // SAFETY: the schedule checked the union of the
                    // members' accesses against everything that runs
                    // alongside (the `get_param` contract of the set), and
                    // `&mut self` keeps every other member's value dead
                    // while this one lives.
                    unsafe { $name::get_param(&mut self.state.$index, self.world, self.meta) }
                }
            )*
        }
    };
}

impl_param_set!((P0, 0, p0), (P1, 1, p1));
impl_param_set!((P0, 0, p0), (P1, 1, p1), (P2, 2, p2));
impl_param_set!((P0, 0, p0), (P1, 1, p1), (P2, 2, p2), (P3, 3, p3));
impl_param_set!((P0, 0, p0), (P1, 1, p1), (P2, 2, p2), (P3, 3, p3), (P4, 4, p4));
impl_param_set!((P0, 0, p0), (P1, 1, p1), (P2, 2, p2), (P3, 3, p3), (P4, 4, p4), (P5, 5, p5));
impl_param_set!((P0, 0, p0), (P1, 1, p1), (P2, 2, p2), (P3, 3, p3), (P4, 4, p4), (P5, 5, p5), (P6, 6, p6));
impl_param_set!((P0, 0, p0), (P1, 1, p1), (P2, 2, p2), (P3, 3, p3), (P4, 4, p4), (P5, 5, p5), (P6, 6, p6), (P7, 7, p7));
