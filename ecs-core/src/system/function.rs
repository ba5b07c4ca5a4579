//! Turning functions and closures into systems: the glue that builds each
//! parameter's state once and fetches the parameters on every run.

use std::any::{type_name, TypeId};
use std::borrow::Cow;
use std::marker::PhantomData;

use crate::component::change::Tick;
use crate::entity::ReservationLanes;
use crate::names::short_type_name;
use crate::system::access::{AccessConflict, SystemAccess};
use crate::system::param::{init_param, SkippedSystem, SystemMeta, SystemParam, SystemParamItem};
use crate::world::command_queue::CommandReport;
use crate::world::{World, WorldId};

/// A system written as a struct: it takes the whole world, and may react to
/// being enabled, disabled, or told that the world was cleared.
///
/// ```
/// use archetable::prelude::*;
///
/// struct Spawner { every: u32, frame: u32 }
///
/// impl System for Spawner {
///     fn run(&mut self, world: &mut World) {
///         self.frame += 1;
///         if self.frame % self.every == 0 {
///             world.spawn(());
///         }
///     }
///     fn on_clear(&mut self, _world: &mut World) {
///         self.frame = 0;
///     }
/// }
///
/// let mut world = World::new();
/// let mut schedule = Schedule::new();
/// schedule.add_system(Spawner { every: 2, frame: 0 });
/// for _ in 0..4 { schedule.run(&mut world); }
/// assert_eq!(world.len(), 2);
/// ```
pub trait System: Send + 'static {
    /// Runs the system once.
    fn run(&mut self, world: &mut World);

    /// The name used in errors and timings; the type's name by default.
    fn name(&self) -> Cow<'static, str> {
        Cow::Owned(short_type_name(type_name::<Self>()))
    }

    /// Called when the system goes from disabled to enabled.
    fn on_enabled(&mut self, world: &mut World) {
        let _ = world;
    }

    /// Called when the system goes from enabled to disabled, or is removed
    /// while enabled.
    fn on_disabled(&mut self, world: &mut World) {
        let _ = world;
    }

    /// Called after [`Schedule::clear_world`](crate::Schedule::clear_world)
    /// emptied the world.
    fn on_clear(&mut self, world: &mut World) {
        let _ = world;
    }
}

/// A system ready for a schedule; made by [`IntoSystem`].
pub struct BoxedSystem {
    pub(crate) inner: Box<dyn AnySystem>,
}

impl std::fmt::Debug for BoxedSystem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BoxedSystem").field("name", &self.inner.name()).finish()
    }
}

/// Anything a schedule can run: a function or closure whose parameters are
/// [`SystemParam`]s, a function or closure taking `&mut World`, or a
/// [`System`] struct. `Marker` only tells the implementations apart.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a system",
    label = "not a system",
    note = "a system is a function whose parameters are system parameters (`Query`, `Res`, `ResMut`, `Commands`, ...), \
            a function taking only `&mut World`, or a type implementing `System`",
    note = "parameters that borrow (`Query<&mut A>`) must be taken by value, not by reference",
    note = "a schedule runs only systems with no input (`In<T>`, `InRef<T>`, `InMut<T>`) that return `()`: pipe the \
            output into a system that takes it (`a.pipe(b)`), map it away (`a.map(f)`), or handle a `Result` with \
            `.warn_errors()` or `.log_errors()`; a system with an input runs by id (`World::register_system`)"
)]
pub trait IntoSystem<Marker>: Sized + Send + 'static {
    /// Wraps `self` for a schedule.
    fn into_system(self) -> BoxedSystem;
}

/// The object-safe face of every kind of system.
pub(crate) trait AnySystem: Send {
    fn name(&self) -> &str;
    fn type_id(&self) -> TypeId;
    /// Builds the parameters' states for `world` unless already built for it.
    fn initialize(&mut self, world: &mut World) -> Result<(), AccessConflict>;
    fn access(&self) -> &SystemAccess;
    /// Runs a non-exclusive system through a shared borrow; a parameter
    /// that has nothing to hand over skips the run instead. (The skip is
    /// boxed so that the result fits a register: every run pays for its
    /// size, only skips pay for the box.)
    ///
    /// # Safety
    /// `initialize` succeeded for this world, and nothing running at the same
    /// time conflicts with `access()`.
    unsafe fn run_shared(&mut self, world: &World) -> Result<(), Box<SkippedSystem>>;
    /// Runs the system with the whole world, or skips it as `run_shared`
    /// does.
    fn run_exclusive(&mut self, world: &mut World) -> Result<(), Box<SkippedSystem>>;
    fn apply_deferred(&mut self, world: &mut World, report: &mut CommandReport);
    fn discard_deferred(&mut self);
    fn on_enabled(&mut self, world: &mut World);
    fn on_disabled(&mut self, world: &mut World);
    fn on_clear(&mut self, world: &mut World);
    /// Clamps the system's stored ticks to at most `Tick::MAX_AGE` before
    /// `now`.
    fn check_ticks(&mut self, now: Tick) {
        let _ = now;
    }
    /// Gives the system's next run the change tick `tick`, handed out by
    /// the executor, instead of one it takes from the world when it starts
    /// (`None` takes back one that was not used).
    fn set_next_run_tick(&mut self, tick: Option<Tick>) {
        let _ = tick;
    }
    /// Whether the system reserves entity handles while it runs
    /// (`Commands`).
    fn reserves_entities(&self) -> bool {
        false
    }
    /// Gives the system's next run reservation lane `lane` (`None`: the
    /// world's shared counter); returns how many handles the run before
    /// took from its lane.
    fn set_entity_lane(&mut self, lane: Option<(ReservationLanes, u32)>) -> u32 {
        let _ = lane;
        0
    }
}

/// A function whose parameters are all [`SystemParam`]s. `Marker` is the
/// function pointer type of its signature.
pub trait SystemParamFunction<Marker>: Send + 'static {
    /// The parameters, as a tuple.
    type Param: SystemParam;

    /// Builds the parameters' states, recording each one's access in turn.
    fn init_params(
        world: &mut World,
        meta: &mut SystemMeta,
    ) -> Result<<Self::Param as SystemParam>::State, AccessConflict>;

    /// Calls the function.
    fn call(&mut self, params: SystemParamItem<'_, '_, Self::Param>);
}

macro_rules! impl_system_param_function {
    ($($name:ident $index:tt),*) => {
        #[allow(non_snake_case, unused_variables)]
        impl<Func, $($name: SystemParam),*> SystemParamFunction<fn($($name,)*)> for Func
        where
            Func: Send + 'static,
            for<'a> &'a mut Func: FnMut($($name),*) + FnMut($(SystemParamItem<$name>),*),
        {
            type Param = ($($name,)*);

            fn init_params(
                world: &mut World,
                meta: &mut SystemMeta,
            ) -> Result<<Self::Param as SystemParam>::State, AccessConflict> {
                Ok(($(init_param::<$name>(world, meta)?,)*))
            }

            #[inline]
            fn call(&mut self, params: SystemParamItem<'_, '_, Self::Param>) {
                // Calling through a helper with plain generic parameters
                // lets the compiler pick the `FnMut` impl over the items.
                #[inline(always)]
                #[allow(clippy::too_many_arguments)]
                fn call_inner<$($name),*>(mut f: impl FnMut($($name),*), $($name: $name),*) {
                    f($($name),*)
                }
                let ($($name,)*) = params;
                call_inner(self, $($name),*)
            }
        }
    };
}

crate::tuples::all_tuples!(impl_system_param_function);

/// The name a schedule shows for function type `F`: the function's own
/// name, or for a closure the function that defines it.
pub(crate) fn function_name<F>() -> Cow<'static, str> {
    name_of_function(type_name::<F>())
}

/// [`function_name`] from the type's full name: one copy for every function
/// type.
fn name_of_function(full: &'static str) -> Cow<'static, str> {
    match full.strip_suffix("::{{closure}}") {
        Some(owner) => Cow::Owned(format!("{}::{{{{closure}}}}", short_type_name(owner))),
        None => Cow::Owned(short_type_name(full)),
    }
}

/// Marker for [`IntoSystem`] on functions of system parameters.
pub struct IsFunctionSystem;
/// Marker for [`IntoSystem`] on functions taking `&mut World`.
pub struct IsExclusiveSystem;
/// Marker for [`IntoSystem`] on [`System`] structs.
pub struct IsStructSystem;

struct FunctionSystem<M, F: SystemParamFunction<M>> {
    func: F,
    state: Option<<F::Param as SystemParam>::State>,
    meta: SystemMeta,
    world: Option<WorldId>,
    /// The change tick the executor handed out for the next run, if any.
    next_run_tick: Option<Tick>,
    _marker: PhantomData<fn() -> M>,
}

impl<M: 'static, F: SystemParamFunction<M>> IntoSystem<(IsFunctionSystem, M)> for F {
    fn into_system(self) -> BoxedSystem {
        BoxedSystem {
            inner: Box::new(FunctionSystem {
                func: self,
                state: None,
                meta: SystemMeta::new(function_name::<F>()),
                world: None,
                next_run_tick: None,
                _marker: PhantomData,
            }),
        }
    }
}

/// Builds a function system's (or observer's) parameter state and access
/// for `world`, keeping the name, unless it was built for that world
/// already; `initialized` remembers which world that was.
pub(crate) fn init_for_world<S>(
    world: &mut World,
    initialized: &mut Option<WorldId>,
    meta: &mut SystemMeta,
    state: &mut Option<S>,
    init: impl FnOnce(&mut World, &mut SystemMeta) -> Result<S, AccessConflict>,
) -> Result<(), AccessConflict> {
    if *initialized == Some(world.id()) {
        return Ok(());
    }
    let mut fresh = fresh_meta(world, meta);
    *state = Some(init(world, &mut fresh)?);
    *meta = fresh;
    *initialized = Some(world.id());
    Ok(())
}

/// A new meta for `world` with the name of `meta`: the part of
/// [`init_for_world`] every system type shares.
fn fresh_meta(world: &World, meta: &SystemMeta) -> SystemMeta {
    let mut fresh = SystemMeta::new(Cow::Owned(meta.name().to_string()));
    fresh.reset_ticks(world);
    fresh
}

impl<M: 'static, F: SystemParamFunction<M>> AnySystem for FunctionSystem<M, F> {
    fn name(&self) -> &str {
        self.meta.name()
    }

    fn type_id(&self) -> TypeId {
        TypeId::of::<F>()
    }

    fn initialize(&mut self, world: &mut World) -> Result<(), AccessConflict> {
        init_for_world(world, &mut self.world, &mut self.meta, &mut self.state, F::init_params)
    }

    fn access(&self) -> &SystemAccess {
        self.meta.access()
    }

    #[inline]
    unsafe fn run_shared(&mut self, world: &World) -> Result<(), Box<SkippedSystem>> {
        assert_eq!(
            self.world,
            Some(world.id()),
            "system `{}` run on a world it was not initialized for",
            self.meta.name()
        );
        let state = self.state.as_mut().expect("initialized above");
        let before = self.meta.ticks();
        match self.next_run_tick.take() {
            Some(tick) => self.meta.begin_run_at(tick),
            None => self.meta.begin_run(world),
        }
        // SAFETY: the state was built for this world (checked above), and the
        // caller guarantees that nothing running alongside conflicts with the
        // access the states recorded.
        if let Err(skip) = unsafe { F::Param::validate_param(state, world, &self.meta) } {
            // A skipped run is no run: the next one sees every change since
            // the last that ran.
            self.meta.restore_ticks(before);
            return Err(Box::new(skip));
        }
        // SAFETY: as above.
        let params = unsafe { F::Param::get_param(state, world, &self.meta) };
        self.func.call(params);
        Ok(())
    }

    fn run_exclusive(&mut self, world: &mut World) -> Result<(), Box<SkippedSystem>> {
        if let Err(conflict) = self.initialize(world) {
            panic!("{conflict}");
        }
        // SAFETY: initialized for this world; `&mut World` excludes every
        // other borrow.
        unsafe { self.run_shared(world) }
    }

    fn apply_deferred(&mut self, world: &mut World, report: &mut CommandReport) {
        if let Some(state) = &mut self.state {
            F::Param::apply_deferred(state, world, &self.meta, report);
        }
    }

    fn discard_deferred(&mut self) {
        if let Some(state) = &mut self.state {
            F::Param::discard_deferred(state);
        }
    }

    fn on_enabled(&mut self, _: &mut World) {}
    fn on_disabled(&mut self, _: &mut World) {}
    fn on_clear(&mut self, _: &mut World) {}

    fn check_ticks(&mut self, now: Tick) {
        self.meta.check_ticks(now);
    }

    fn set_next_run_tick(&mut self, tick: Option<Tick>) {
        self.next_run_tick = tick;
    }

    fn reserves_entities(&self) -> bool {
        self.meta.reserves_entities()
    }

    fn set_entity_lane(&mut self, lane: Option<(ReservationLanes, u32)>) -> u32 {
        self.meta.lane.set(lane)
    }
}

/// A function taking `&mut World`, run as a [`System`] without hooks.
struct ExclusiveFn<F>(F);

impl<F: FnMut(&mut World) + Send + 'static> System for ExclusiveFn<F> {
    fn run(&mut self, world: &mut World) {
        (self.0)(world);
    }
}

impl<F> IntoSystem<IsExclusiveSystem> for F
where
    F: FnMut(&mut World) + Send + 'static,
{
    fn into_system(self) -> BoxedSystem {
        StructSystem::boxed(ExclusiveFn(self), function_name::<F>(), TypeId::of::<F>())
    }
}

/// A [`System`] struct, or a function taking `&mut World`: both run alone.
struct StructSystem<S> {
    system: S,
    name: Cow<'static, str>,
    /// What `before`/`after` match the system by: the struct's type, or the
    /// wrapped function's.
    type_id: TypeId,
    access: SystemAccess,
}

impl<S: System> StructSystem<S> {
    fn boxed(system: S, name: Cow<'static, str>, type_id: TypeId) -> BoxedSystem {
        BoxedSystem { inner: Box::new(StructSystem { system, name, type_id, access: SystemAccess::exclusive() }) }
    }
}

impl<S: System> IntoSystem<IsStructSystem> for S {
    fn into_system(self) -> BoxedSystem {
        let name = self.name();
        StructSystem::boxed(self, name, TypeId::of::<S>())
    }
}

impl<S: System> AnySystem for StructSystem<S> {
    fn name(&self) -> &str {
        &self.name
    }

    fn type_id(&self) -> TypeId {
        self.type_id
    }

    fn initialize(&mut self, _: &mut World) -> Result<(), AccessConflict> {
        Ok(())
    }

    fn access(&self) -> &SystemAccess {
        &self.access
    }

    unsafe fn run_shared(&mut self, _: &World) -> Result<(), Box<SkippedSystem>> {
        unreachable!("exclusive system `{}` run through a shared borrow", self.name)
    }

    fn run_exclusive(&mut self, world: &mut World) -> Result<(), Box<SkippedSystem>> {
        self.system.run(world);
        Ok(())
    }

    fn apply_deferred(&mut self, _: &mut World, _: &mut CommandReport) {}
    fn discard_deferred(&mut self) {}

    fn on_enabled(&mut self, world: &mut World) {
        self.system.on_enabled(world);
    }

    fn on_disabled(&mut self, world: &mut World) {
        self.system.on_disabled(world);
    }

    fn on_clear(&mut self, world: &mut World) {
        self.system.on_clear(world);
    }
}

impl World {
    /// Runs `system` once on this world, outside any schedule, and applies
    /// its deferred commands right after; returns what applying them did.
    /// The system keeps no state between calls: every change the world
    /// remembers is new to it, and its [`Local`](crate::Local)s start from
    /// their default.
    ///
    /// ```
    /// use archetable::prelude::*;
    ///
    /// #[derive(Component)] struct Hp(i32);
    ///
    /// fn reap(hp: Query<(Entity, &Hp)>, mut commands: Commands) {
    ///     for (e, hp) in hp.iter() {
    ///         if hp.0 <= 0 {
    ///             commands.despawn(e);
    ///         }
    ///     }
    /// }
    /// let mut world = World::new();
    /// world.spawn(Hp(0));
    /// world.spawn(Hp(3));
    /// let report = world.run_system_once(reap);
    /// assert_eq!((report.applied(), world.len()), (1, 1));
    /// ```
    ///
    /// A system that a [`Single`](crate::Single) or
    /// [`Populated`](crate::Populated) parameter skips does not run; a
    /// warning names it and the parameter.
    ///
    /// # Panics
    /// If the system's parameters alias (`error[E0002]`), naming them.
    #[track_caller]
    pub fn run_system_once<M>(&mut self, system: impl IntoSystem<M>) -> CommandReport {
        let mut system = system.into_system();
        if let Err(skip) = system.inner.run_exclusive(self) {
            crate::entity::error::warn(&format!("archetable: run_system_once: {skip}"));
        }
        let mut report = CommandReport::default();
        system.inner.apply_deferred(self, &mut report);
        report
    }
}
