//! Turning functions of a [`Trigger`] and system parameters into observers:
//! the glue that builds the parameters' states once and runs the function
//! with the event on every trigger.

use std::any::{Any, TypeId};
use std::marker::PhantomData;

use crate::entity::Entity;
use crate::observer::Trigger;
use crate::system::access::AccessConflict;
use crate::system::function::{function_name, init_for_world};
use crate::system::param::{init_param, SystemMeta, SystemParam, SystemParamItem};
use crate::world::command_queue::{CommandQueue, CommandReport};
use crate::world::event::Event;
use crate::world::{World, WorldId};

/// A function whose first parameter is a [`Trigger<E>`] and whose other
/// parameters are [`SystemParam`]s. `Marker` is the function pointer type
/// of its signature.
pub trait ObserverFunction<E: Event, Marker>: Send + 'static {
    /// The parameters after the trigger, as a tuple.
    type Param: SystemParam;

    /// Builds the parameters' states, recording each one's access in turn.
    fn init_params(
        world: &mut World,
        meta: &mut SystemMeta,
    ) -> Result<<Self::Param as SystemParam>::State, AccessConflict>;

    /// Calls the function.
    fn call(&mut self, trigger: Trigger<'_, E>, params: SystemParamItem<'_, '_, Self::Param>);
}

macro_rules! impl_observer_function {
    ($($name:ident $index:tt),*) => {
        #[allow(non_snake_case, unused_variables)]
        impl<E: Event, Func, $($name: SystemParam),*> ObserverFunction<E, fn(Trigger<E>, $($name,)*)> for Func
        where
            Func: Send + 'static,
            for<'a> &'a mut Func:
                FnMut(Trigger<E>, $($name),*) + FnMut(Trigger<E>, $(SystemParamItem<$name>),*),
        {
            type Param = ($($name,)*);

            fn init_params(
                world: &mut World,
                meta: &mut SystemMeta,
            ) -> Result<<Self::Param as SystemParam>::State, AccessConflict> {
                Ok(($(init_param::<$name>(world, meta)?,)*))
            }

            #[inline]
            fn call(&mut self, trigger: Trigger<'_, E>, params: SystemParamItem<'_, '_, Self::Param>) {
                // As for systems: a helper with plain generic parameters
                // lets the compiler pick the `FnMut` impl over the items.
                #[inline(always)]
                #[allow(clippy::too_many_arguments)]
                fn call_inner<E: Event, $($name),*>(
                    mut f: impl FnMut(Trigger<E>, $($name),*),
                    trigger: Trigger<E>,
                    $($name: $name),*
                ) {
                    f(trigger, $($name),*)
                }
                let ($($name,)*) = params;
                call_inner(self, trigger, $($name),*)
            }
        }
    };
}

crate::tuples::all_tuples!(impl_observer_function);

/// Anything [`World::observe`] accepts for events of type `E`: a function
/// or closure whose first parameter is a [`Trigger<E>`] and whose other
/// parameters are system parameters (`Query`, `Res`, `ResMut`, `Commands`,
/// `Local`, ...). `Marker` only tells the implementations apart.
///
/// An observer has no `&mut World` parameter: it runs in the middle of a
/// trigger, which may be in the middle of a world operation (lifecycle
/// events). For world access, record a closure with
/// [`Commands::add`](crate::Commands::add).
///
/// ```
/// use archetable::prelude::*;
///
/// struct Ping(u32);
///
/// fn count(trigger: Trigger<Ping>, mut total: ResMut<Total>) {
///     total.0 += trigger.0;
/// }
/// #[derive(Default)] struct Total(u32);
///
/// let mut world = World::new();
/// world.init_resource::<Total>();
/// world.observe(count);
/// world.trigger(Ping(2));
/// world.trigger(Ping(3));
/// assert_eq!(world.resource::<Total>().0, 5);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an observer of `{E}`",
    label = "not an observer",
    note = "an observer is a function whose first parameter is `Trigger<E>` and whose other parameters are system \
            parameters (`Query`, `Res`, `ResMut`, `Commands`, ...)"
)]
pub trait IntoObserver<E: Event, Marker>: Send + 'static {
    /// Wraps `self` for the world's observer registry.
    fn into_observer(self) -> BoxedObserver;
}

/// An observer ready for a world; made by [`IntoObserver`].
pub struct BoxedObserver {
    pub(crate) inner: Box<dyn AnyObserver>,
}

impl std::fmt::Debug for BoxedObserver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BoxedObserver").field("name", &self.inner.name()).finish()
    }
}

/// The object-safe face of an observer.
pub(crate) trait AnyObserver: Send {
    fn name(&self) -> &str;
    /// The `TypeId` of the event type it watches.
    fn event_type(&self) -> TypeId;
    /// Builds the parameters' states for `world` unless already built for it.
    fn initialize(&mut self, world: &mut World) -> Result<(), AccessConflict>;
    /// Runs the observer on `event` (which must be of its event type) and
    /// `target`; moves the commands it recorded into `commands`, and
    /// applies whatever else its parameters deferred.
    fn run(&mut self, world: &mut World, event: &dyn Any, target: Option<Entity>, commands: &mut CommandQueue);
    /// Drops what a run that panicked left deferred.
    fn discard_deferred(&mut self);
}

/// Marker for [`IntoObserver`] on functions of a trigger and system
/// parameters.
pub struct IsObserverFunction;

struct ObserverSystem<E: Event, M, F: ObserverFunction<E, M>> {
    func: F,
    state: Option<<F::Param as SystemParam>::State>,
    meta: SystemMeta,
    world: Option<WorldId>,
    /// The (parameter, reason) pairs already warned about.
    warned: Vec<(String, crate::system::QuerySingleError)>,
    _marker: PhantomData<fn(E) -> M>,
}

impl<E: Event, M: 'static, F: ObserverFunction<E, M>> IntoObserver<E, (IsObserverFunction, M)> for F {
    fn into_observer(self) -> BoxedObserver {
        BoxedObserver {
            inner: Box::new(ObserverSystem::<E, M, F> {
                func: self,
                state: None,
                meta: SystemMeta::new(function_name::<F>()),
                world: None,
                warned: Vec::new(),
                _marker: PhantomData,
            }),
        }
    }
}

impl<E: Event, M: 'static, F: ObserverFunction<E, M>> AnyObserver for ObserverSystem<E, M, F> {
    fn name(&self) -> &str {
        self.meta.name()
    }

    fn event_type(&self) -> TypeId {
        TypeId::of::<E>()
    }

    fn initialize(&mut self, world: &mut World) -> Result<(), AccessConflict> {
        init_for_world(world, &mut self.world, &mut self.meta, &mut self.state, F::init_params)
    }

    fn run(&mut self, world: &mut World, event: &dyn Any, target: Option<Entity>, commands: &mut CommandQueue) {
        if let Err(conflict) = self.initialize(world) {
            panic!("{conflict}");
        }
        let event = event.downcast_ref::<E>().expect("an observer runs on events of its own type");
        let state = self.state.as_mut().expect("initialized above");
        let before = self.meta.ticks();
        self.meta.begin_run(world);
        // SAFETY: the state was built for this world (initialized above), its
        // parameters' accesses were checked against each other, and
        // `&mut World` excludes every other borrow while they live.
        if let Err(skip) = unsafe { F::Param::validate_param(state, world, &self.meta) } {
            // Skipped, as a system would be: no run for change detection,
            // and a warning the first time for each reason.
            self.meta.restore_ticks(before);
            if !self.warned.contains(&(skip.param.clone(), skip.reason)) {
                self.warned.push((skip.param.clone(), skip.reason));
                crate::entity::error::warn(&format!("archetable: observer {skip} (warned once per reason)"));
            }
            return;
        }
        // SAFETY: as above.
        let params = unsafe { F::Param::get_param(state, world, &self.meta) };
        self.func.call(Trigger::new(event, target), params);
        F::Param::move_deferred(state, commands);
        F::Param::apply_deferred(state, world, &self.meta, &mut CommandReport::default());
    }

    fn discard_deferred(&mut self) {
        if let Some(state) = &mut self.state {
            F::Param::discard_deferred(state);
        }
    }
}
