//! Systems with an input and an output: `In<T>`, `InRef<T>` and `InMut<T>`
//! as a function's first parameter, any return type, and the glue that
//! chains such systems (`pipe`, `map`, the error adapters) into one.

use std::any::{Any, TypeId};
use std::fmt::Display;
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};

use crate::component::change::Tick;
use crate::entity::ReservationLanes;
use crate::system::access::{AccessConflict, SystemAccess};
use crate::system::function::{function_name, init_for_world, AnySystem, BoxedSystem, IntoSystem};
use crate::system::param::{init_param, SkippedSystem, SystemMeta, SystemParam, SystemParamItem};
use crate::world::command_queue::{CommandQueue, CommandReport};
use crate::world::{World, WorldId};

/// What a system takes as its input, the first parameter of its function:
/// `()` (no input), [`In<T>`], [`InRef<T>`] or [`InMut<T>`].
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a system input",
    label = "not a system input",
    note = "a system's input is its first parameter: `In<T>` (by value), `InRef<T>` (shared borrow) or `InMut<T>` \
            (exclusive borrow)"
)]
pub trait SystemInput: Sized {
    /// The input as the function receives it, for a borrow of `'i`.
    type Param<'i>: SystemInput;
    /// What the caller hands over: `T`, `&T` or `&mut T`.
    type Inner<'i>;

    /// Wraps what the caller hands over for the function.
    fn wrap(inner: Self::Inner<'_>) -> Self::Param<'_>;
}

impl SystemInput for () {
    type Param<'i> = ();
    type Inner<'i> = ();

    fn wrap(_: Self::Inner<'_>) -> Self::Param<'_> {}
}

/// A system input taken by value: `fn double(In(x): In<u32>) -> u32`.
///
/// ```
/// use archetable::prelude::*;
///
/// fn double(In(x): In<u32>) -> u32 {
///     x * 2
/// }
/// let mut world = World::new();
/// let id = world.register_system(double);
/// assert_eq!(world.run_system_with(id, 21), Ok(42));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct In<T>(pub T);

impl<T> SystemInput for In<T> {
    type Param<'i> = In<T>;
    type Inner<'i> = T;

    fn wrap(inner: Self::Inner<'_>) -> Self::Param<'_> {
        In(inner)
    }
}

impl<T> Deref for In<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T> DerefMut for In<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.0
    }
}

/// A system input taken by shared borrow: the caller keeps the value.
///
/// ```
/// use archetable::prelude::*;
///
/// fn total(InRef(scores): InRef<[u32]>) -> u32 {
///     scores.iter().sum()
/// }
/// let mut world = World::new();
/// let id = world.register_system(total);
/// let scores = vec![1, 2, 3];
/// assert_eq!(world.run_system_with(id, &scores[..]), Ok(6));
/// ```
#[derive(Debug)]
pub struct InRef<'i, T: ?Sized>(pub &'i T);

impl<T: ?Sized + 'static> SystemInput for InRef<'_, T> {
    type Param<'i> = InRef<'i, T>;
    type Inner<'i> = &'i T;

    fn wrap(inner: Self::Inner<'_>) -> Self::Param<'_> {
        InRef(inner)
    }
}

impl<T: ?Sized> Deref for InRef<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.0
    }
}

/// A system input taken by exclusive borrow: the system may change the
/// caller's value.
///
/// ```
/// use archetable::prelude::*;
///
/// fn push(InMut(log): InMut<Vec<u32>>, mut calls: Local<u32>) {
///     *calls += 1;
///     log.push(*calls);
/// }
/// let mut world = World::new();
/// let id = world.register_system(push);
/// let mut log = Vec::new();
/// world.run_system_with(id, &mut log).unwrap();
/// world.run_system_with(id, &mut log).unwrap();
/// assert_eq!(log, [1, 2]);
/// ```
#[derive(Debug)]
pub struct InMut<'i, T: ?Sized>(pub &'i mut T);

impl<T: ?Sized + 'static> SystemInput for InMut<'_, T> {
    type Param<'i> = InMut<'i, T>;
    type Inner<'i> = &'i mut T;

    fn wrap(inner: Self::Inner<'_>) -> Self::Param<'_> {
        InMut(inner)
    }
}

impl<T: ?Sized> Deref for InMut<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.0
    }
}

impl<T: ?Sized> DerefMut for InMut<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        self.0
    }
}

/// A function of an optional input and system parameters, with any return
/// type. `Marker` tells the signatures apart.
pub trait SystemFunction<Marker>: Send + 'static {
    /// The input: `()` or the first parameter.
    type In: SystemInput;
    /// The return type.
    type Out;
    /// The other parameters, as a tuple.
    type Param: SystemParam;

    /// Builds the parameters' states, recording each one's access in turn.
    fn init_params(
        world: &mut World,
        meta: &mut SystemMeta,
    ) -> Result<<Self::Param as SystemParam>::State, AccessConflict>;

    /// Calls the function.
    fn call(
        &mut self,
        input: <Self::In as SystemInput>::Inner<'_>,
        params: SystemParamItem<'_, '_, Self::Param>,
    ) -> Self::Out;
}

/// Marker for [`SystemFunction`] on functions without an input.
pub struct NoInput;
/// Marker for [`SystemFunction`] on functions whose first parameter is an
/// input.
pub struct HasInput;

macro_rules! impl_system_function {
    ($($name:ident $index:tt),*) => {
        #[allow(non_snake_case, unused_variables)]
        impl<Func, Out, $($name: SystemParam),*> SystemFunction<(NoInput, fn($($name,)*) -> Out)> for Func
        where
            Func: Send + 'static,
            Out: 'static,
            for<'a> &'a mut Func: FnMut($($name),*) -> Out + FnMut($(SystemParamItem<$name>),*) -> Out,
        {
            type In = ();
            type Out = Out;
            type Param = ($($name,)*);

            fn init_params(
                world: &mut World,
                meta: &mut SystemMeta,
            ) -> Result<<Self::Param as SystemParam>::State, AccessConflict> {
                Ok(($(init_param::<$name>(world, meta)?,)*))
            }

            #[inline]
            fn call(&mut self, _: (), params: SystemParamItem<'_, '_, Self::Param>) -> Out {
                #[inline(always)]
                #[allow(clippy::too_many_arguments)]
                fn call_inner<Out, $($name),*>(mut f: impl FnMut($($name),*) -> Out, $($name: $name),*) -> Out {
                    f($($name),*)
                }
                let ($($name,)*) = params;
                call_inner(self, $($name),*)
            }
        }

        #[allow(non_snake_case, unused_variables)]
        impl<Func, Input, Out, $($name: SystemParam),*> SystemFunction<(HasInput, fn(Input, $($name,)*) -> Out)> for Func
        where
            Func: Send + 'static,
            Input: SystemInput + 'static,
            Out: 'static,
            for<'a> &'a mut Func:
                FnMut(Input, $($name),*) -> Out + FnMut(Input::Param<'_>, $(SystemParamItem<$name>),*) -> Out,
        {
            type In = Input;
            type Out = Out;
            type Param = ($($name,)*);

            fn init_params(
                world: &mut World,
                meta: &mut SystemMeta,
            ) -> Result<<Self::Param as SystemParam>::State, AccessConflict> {
                Ok(($(init_param::<$name>(world, meta)?,)*))
            }

            #[inline]
            fn call(
                &mut self,
                input: Input::Inner<'_>,
                params: SystemParamItem<'_, '_, Self::Param>,
            ) -> Out {
                #[inline(always)]
                #[allow(clippy::too_many_arguments)]
                fn call_inner<Input, Out, $($name),*>(
                    mut f: impl FnMut(Input, $($name),*) -> Out,
                    input: Input,
                    $($name: $name),*
                ) -> Out {
                    f(input, $($name),*)
                }
                let ($($name,)*) = params;
                call_inner(self, Input::wrap(input), $($name),*)
            }
        }
    };
}

crate::tuples::all_tuples!(impl_system_function);

/// The object-safe face of a system with input `I` and output `O`.
pub(crate) trait AnyIoSystem<I: SystemInput, O>: Send {
    fn name(&self) -> &str;
    fn initialize(&mut self, world: &mut World) -> Result<(), AccessConflict>;
    fn access(&self) -> &SystemAccess;
    /// Runs the system through a shared borrow, or skips it.
    ///
    /// # Safety
    /// As for `AnySystem::run_shared`.
    unsafe fn run_shared(&mut self, input: I::Inner<'_>, world: &World) -> Result<O, SkippedSystem>;
    /// Runs the system with the whole world (initializing it for that
    /// world first), or skips it.
    fn run_exclusive(&mut self, input: I::Inner<'_>, world: &mut World) -> Result<O, SkippedSystem> {
        if let Err(conflict) = self.initialize(world) {
            panic!("{conflict}");
        }
        // SAFETY: initialized for this world; `&mut World` excludes every
        // other borrow.
        unsafe { self.run_shared(input, world) }
    }
    fn apply_deferred(&mut self, world: &mut World, report: &mut CommandReport);
    fn move_deferred(&mut self, queue: &mut CommandQueue);
    fn discard_deferred(&mut self);
    fn check_ticks(&mut self, now: Tick);
    fn set_next_run_tick(&mut self, tick: Option<Tick>);
    fn reserves_entities(&self) -> bool;
    /// Gives the next run lane `lane`, from its `start`th handle on;
    /// returns how far into its lane the run before got.
    fn set_entity_lane_at(&mut self, lane: Option<(ReservationLanes, u32)>, start: u32) -> u32;
}

/// A system with input `I` and output `O`, made by [`IntoIoSystem`]: to run
/// by id ([`World::register_system`]), to [`pipe`](IntoIoSystem::pipe) or
/// [`map`](IntoIoSystem::map), or, when both are `()`, to add to a
/// [`Schedule`](crate::Schedule).
pub struct IoSystem<I: SystemInput = (), O = ()> {
    pub(crate) inner: Box<dyn AnyIoSystem<I, O>>,
    /// The functions it is made from, in running order (a pipe's parts);
    /// a schedule selects it by any of them.
    pub(crate) made_from: Vec<TypeId>,
}

impl<I: SystemInput, O> IoSystem<I, O> {
    /// A system made from the one function `F`.
    fn of<F: 'static>(inner: Box<dyn AnyIoSystem<I, O>>) -> Self {
        IoSystem { inner, made_from: vec![TypeId::of::<F>()] }
    }

    /// The system's name: its function's, or the parts' joined by `|` for
    /// a pipe.
    pub fn name(&self) -> &str {
        self.inner.name()
    }
}

impl<I: SystemInput, O> std::fmt::Debug for IoSystem<I, O> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IoSystem").field("name", &self.inner.name()).finish()
    }
}

/// Anything that makes a system with input `I` and output `O`: a function
/// whose first parameter may be an input ([`In`], [`InRef`], [`InMut`]) and
/// whose others are system parameters, returning anything; or an
/// [`IoSystem`] already made.
///
/// A [`Schedule`](crate::Schedule) takes only systems with no input that
/// return `()`: [`pipe`](IntoIoSystem::pipe) an output into a system that
/// takes it, [`map`](IntoIoSystem::map) it away, or handle a `Result` with
/// [`ResultSystem::log_errors`] or [`ResultSystem::warn_errors`].
///
/// ```
/// use archetable::prelude::*;
///
/// #[derive(Component)] struct Hp(i32);
/// #[derive(Default)] struct Report(Vec<usize>);
///
/// fn count_dead(hp: Query<&Hp>) -> usize {
///     hp.iter().filter(|hp| hp.0 <= 0).count()
/// }
/// fn report(In(dead): In<usize>, mut report: ResMut<Report>) {
///     report.0.push(dead);
/// }
///
/// let mut world = World::new();
/// world.init_resource::<Report>();
/// world.spawn_batch([Hp(0), Hp(5), Hp(-1)]).for_each(drop);
/// let mut schedule = Schedule::new();
/// schedule.add_system(count_dead.pipe(report));
/// schedule.add_system(count_dead.map(|dead| assert_eq!(dead, 2)));
/// schedule.run(&mut world);
/// assert_eq!(world.resource::<Report>().0, [2]);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a system with input `{I}` and output `{O}`",
    label = "not a system with this input and output",
    note = "a system's input is its first parameter (`In<T>`, `InRef<T>`, `InMut<T>`), its output what it returns; \
            the other parameters are system parameters (`Query`, `Res`, `ResMut`, `Commands`, ...)"
)]
pub trait IntoIoSystem<I: SystemInput, O, Marker>: Sized + Send + 'static {
    /// Wraps `self`.
    fn into_io_system(self) -> IoSystem<I, O>;

    /// One system that runs `self`, then `next` with what `self` returned
    /// as its input: one system to a schedule, whose access is the union of
    /// both (they run one after the other, so they may touch the same
    /// data), `self` always first. When either part is skipped
    /// ([`Single`](crate::Single), [`Populated`](crate::Populated)), the
    /// whole is, and a part that ran keeps what it did.
    ///
    /// ```
    /// use archetable::prelude::*;
    ///
    /// #[derive(Default)] struct Total(u32);
    /// fn roll(mut n: Local<u32>) -> u32 {
    ///     *n += 1;
    ///     *n
    /// }
    /// fn add(In(x): In<u32>, mut total: ResMut<Total>) {
    ///     total.0 += x;
    /// }
    /// let mut world = World::new();
    /// world.init_resource::<Total>();
    /// let mut schedule = Schedule::new();
    /// schedule.add_system(roll.pipe(add));
    /// for _ in 0..3 { schedule.run(&mut world); }
    /// assert_eq!(world.resource::<Total>().0, 6);
    /// ```
    fn pipe<B, BO, BM>(self, next: B) -> IoSystem<I, BO>
    where
        I: 'static,
        O: 'static,
        BO: 'static,
        B: IntoIoSystem<In<O>, BO, BM>,
    {
        let (a, b) = (self.into_io_system(), next.into_io_system());
        let name = format!("{} | {}", a.name(), b.name());
        let made_from = a.made_from.into_iter().chain(b.made_from).collect();
        IoSystem {
            made_from,
            inner: Box::new(Pipe {
                a: a.inner,
                b: b.inner,
                name,
                access: SystemAccess::default(),
                lane: None,
                tick: None,
            }),
        }
    }

    /// One system that runs `self` and hands its output to `f`, a plain
    /// function; the result is the new output.
    ///
    /// ```
    /// use archetable::prelude::*;
    ///
    /// fn count(all: Query<Entity>) -> usize {
    ///     all.iter().count()
    /// }
    /// let mut world = World::new();
    /// world.spawn(());
    /// let id = world.register_system(count.map(|n| n * 10));
    /// assert_eq!(world.run_system(id), Ok(10));
    /// ```
    fn map<O2, F>(self, f: F) -> IoSystem<I, O2>
    where
        I: 'static,
        O: 'static,
        O2: 'static,
        F: FnMut(O) -> O2 + Send + 'static,
    {
        let system = self.into_io_system();
        let name = system.name().to_string();
        IoSystem {
            inner: Box::new(Map { system: system.inner, f, name, _marker: PhantomData }),
            made_from: system.made_from,
        }
    }
}

/// Marker for [`IntoIoSystem`] on functions.
pub struct IsIoFunction;
/// Marker for [`IntoIoSystem`] on an [`IoSystem`].
pub struct IsIoSystem;

impl<I: SystemInput, O> IntoIoSystem<I, O, IsIoSystem> for IoSystem<I, O>
where
    I: 'static,
    O: 'static,
{
    fn into_io_system(self) -> IoSystem<I, O> {
        self
    }
}

impl<M: 'static, F: SystemFunction<M>> IntoIoSystem<F::In, F::Out, (IsIoFunction, M)> for F
where
    F::In: 'static,
{
    fn into_io_system(self) -> IoSystem<F::In, F::Out> {
        IoSystem::of::<F>(Box::new(IoFunctionSystem {
            func: self,
            state: None,
            meta: SystemMeta::new(function_name::<F>()),
            world: None,
            next_run_tick: None,
            _marker: PhantomData,
        }))
    }
}

/// What a system that returns a `Result` does with an error when its
/// output is not wanted: log it and go on. A schedule takes the result.
///
/// ```
/// use archetable::prelude::*;
///
/// #[derive(Component)] struct Hp(u32);
///
/// fn heal(mut hp: Query<&mut Hp>) -> Result<(), String> {
///     let mut hp = hp.single_mut().map_err(|e| e.to_string())?;
///     hp.0 += 1;
///     Ok(())
/// }
/// let mut world = World::new();
/// let mut schedule = Schedule::new();
/// schedule.add_system(heal.warn_errors()); // no entity: a warning, then the next frame
/// schedule.run(&mut world);
/// ```
pub trait ResultSystem<I: SystemInput, E, Marker>: IntoIoSystem<I, Result<(), E>, Marker> {
    /// Logs an error at the error level (through the `log` facade when a
    /// logger is installed, else on standard error), naming the system,
    /// every time one is returned.
    fn log_errors(self) -> IoSystem<I, ()>;
    /// Logs an error as a warning, naming the system, every time one is
    /// returned.
    fn warn_errors(self) -> IoSystem<I, ()>;
}

impl<I, E, M, S> ResultSystem<I, E, M> for S
where
    I: SystemInput + 'static,
    E: Display + 'static,
    S: IntoIoSystem<I, Result<(), E>, M>,
{
    fn log_errors(self) -> IoSystem<I, ()> {
        let system = self.into_io_system();
        let name = system.name().to_string();
        let message = name.clone();
        system.map(move |result: Result<(), E>| {
            if let Err(error) = result {
                log_error(&format!("archetable: system `{message}` failed: {error}"));
            }
        })
    }

    fn warn_errors(self) -> IoSystem<I, ()> {
        let system = self.into_io_system();
        let name = system.name().to_string();
        system.map(move |result: Result<(), E>| {
            if let Err(error) = result {
                crate::entity::error::warn(&format!("archetable: system `{name}` failed: {error}"));
            }
        })
    }
}

fn log_error(message: &str) {
    if log::max_level() == log::LevelFilter::Off {
        eprintln!("error: {message}");
    } else {
        log::error!("{message}");
    }
}

struct IoFunctionSystem<M, F: SystemFunction<M>> {
    func: F,
    state: Option<<F::Param as SystemParam>::State>,
    meta: SystemMeta,
    world: Option<WorldId>,
    next_run_tick: Option<Tick>,
    _marker: PhantomData<fn() -> M>,
}

impl<M: 'static, F: SystemFunction<M>> AnyIoSystem<F::In, F::Out> for IoFunctionSystem<M, F> {
    fn name(&self) -> &str {
        self.meta.name()
    }

    fn initialize(&mut self, world: &mut World) -> Result<(), AccessConflict> {
        init_for_world(world, &mut self.world, &mut self.meta, &mut self.state, F::init_params)
    }

    fn access(&self) -> &SystemAccess {
        self.meta.access()
    }

    unsafe fn run_shared(
        &mut self,
        input: <F::In as SystemInput>::Inner<'_>,
        world: &World,
    ) -> Result<F::Out, SkippedSystem> {
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
            self.meta.restore_ticks(before);
            return Err(skip);
        }
        // SAFETY: as above.
        let params = unsafe { F::Param::get_param(state, world, &self.meta) };
        Ok(self.func.call(input, params))
    }

    fn apply_deferred(&mut self, world: &mut World, report: &mut CommandReport) {
        if let Some(state) = &mut self.state {
            F::Param::apply_deferred(state, world, &self.meta, report);
        }
    }

    fn move_deferred(&mut self, queue: &mut CommandQueue) {
        if let Some(state) = &mut self.state {
            F::Param::move_deferred(state, queue);
        }
    }

    fn discard_deferred(&mut self) {
        if let Some(state) = &mut self.state {
            F::Param::discard_deferred(state);
        }
    }

    fn check_ticks(&mut self, now: Tick) {
        self.meta.check_ticks(now);
    }

    fn set_next_run_tick(&mut self, tick: Option<Tick>) {
        self.next_run_tick = tick;
    }

    fn reserves_entities(&self) -> bool {
        self.meta.reserves_entities()
    }

    fn set_entity_lane_at(&mut self, lane: Option<(ReservationLanes, u32)>, start: u32) -> u32 {
        self.meta.lane.set_at(lane, start)
    }
}

/// Marker for [`IntoIoSystem`] on functions taking `&mut World`, with or
/// without an input first.
pub struct IsExclusiveIoFunction<M>(PhantomData<M>);

impl<F, O> IntoIoSystem<(), O, IsExclusiveIoFunction<fn() -> O>> for F
where
    F: FnMut(&mut World) -> O + Send + 'static,
    O: 'static,
{
    fn into_io_system(mut self) -> IoSystem<(), O> {
        let name = function_name::<F>().into_owned();
        let run = move |_: (), world: &mut World| self(world);
        IoSystem::of::<F>(Box::new(ExclusiveIo { run, name, access: SystemAccess::exclusive(), _marker: PhantomData }))
    }
}

impl<F, Input, O> IntoIoSystem<Input, O, IsExclusiveIoFunction<fn(Input) -> O>> for F
where
    Input: SystemInput + 'static,
    F: Send + 'static,
    for<'a> &'a mut F: FnMut(Input, &mut World) -> O + FnMut(Input::Param<'_>, &mut World) -> O,
    O: 'static,
{
    fn into_io_system(mut self) -> IoSystem<Input, O> {
        let name = function_name::<F>().into_owned();
        let run = move |input: Input::Inner<'_>, world: &mut World| {
            #[inline(always)]
            fn call_inner<Input, O>(mut f: impl FnMut(Input, &mut World) -> O, input: Input, world: &mut World) -> O {
                f(input, world)
            }
            call_inner(&mut self, Input::wrap(input), world)
        };
        IoSystem::of::<F>(Box::new(ExclusiveIo { run, name, access: SystemAccess::exclusive(), _marker: PhantomData }))
    }
}

/// A function taking `&mut World` (and maybe an input first).
struct ExclusiveIo<I, O, F> {
    run: F,
    name: String,
    access: SystemAccess,
    _marker: PhantomData<fn(I) -> O>,
}

impl<I, O, F> AnyIoSystem<I, O> for ExclusiveIo<I, O, F>
where
    I: SystemInput,
    F: for<'i> FnMut(I::Inner<'i>, &mut World) -> O + Send,
{
    fn name(&self) -> &str {
        &self.name
    }

    fn initialize(&mut self, _: &mut World) -> Result<(), AccessConflict> {
        Ok(())
    }

    fn access(&self) -> &SystemAccess {
        &self.access
    }

    unsafe fn run_shared(&mut self, _: I::Inner<'_>, _: &World) -> Result<O, SkippedSystem> {
        unreachable!("exclusive system `{}` run through a shared borrow", self.name)
    }

    fn run_exclusive(&mut self, input: I::Inner<'_>, world: &mut World) -> Result<O, SkippedSystem> {
        Ok((self.run)(input, world))
    }

    fn apply_deferred(&mut self, _: &mut World, _: &mut CommandReport) {}
    fn move_deferred(&mut self, _: &mut CommandQueue) {}
    fn discard_deferred(&mut self) {}
    fn check_ticks(&mut self, _: Tick) {}
    fn set_next_run_tick(&mut self, _: Option<Tick>) {}

    fn reserves_entities(&self) -> bool {
        false
    }

    fn set_entity_lane_at(&mut self, _: Option<(ReservationLanes, u32)>, _: u32) -> u32 {
        0
    }
}

/// `a.pipe(b)`.
struct Pipe<I: SystemInput, O, O2> {
    a: Box<dyn AnyIoSystem<I, O>>,
    b: Box<dyn AnyIoSystem<In<O>, O2>>,
    name: String,
    /// The union of both parts' accesses, built by `initialize`.
    access: SystemAccess,
    /// The reservation lane of the current run, for the second part.
    lane: Option<(ReservationLanes, u32)>,
    /// The change tick handed out for the next run, if any.
    tick: Option<Tick>,
}

impl<I: SystemInput, O, O2> Pipe<I, O, O2> {
    /// Before a run: both parts run at one change tick, as one system
    /// does, on one thread or many (the second sees the first's writes
    /// as this run's).
    fn share_tick(&mut self, world: &World) {
        let tick = self.tick.take().unwrap_or_else(|| world.increment_change_tick());
        self.a.set_next_run_tick(Some(tick));
        self.b.set_next_run_tick(Some(tick));
    }

    /// After a run: a part that did not start keeps no tick for later.
    fn drop_tick(&mut self) {
        self.a.set_next_run_tick(None);
        self.b.set_next_run_tick(None);
    }

    /// Between the parts: the second goes on in the first one's
    /// reservation lane, where the first stopped.
    fn hand_over_lane(&mut self) {
        if self.lane.is_some() {
            let used = self.a.set_entity_lane_at(None, 0);
            self.b.set_entity_lane_at(self.lane, used);
        }
    }
}

impl<I: SystemInput, O: 'static, O2> AnyIoSystem<I, O2> for Pipe<I, O, O2> {
    fn name(&self) -> &str {
        &self.name
    }

    fn initialize(&mut self, world: &mut World) -> Result<(), AccessConflict> {
        self.a.initialize(world)?;
        self.b.initialize(world)?;
        self.access = SystemAccess::union(self.a.access(), self.b.access());
        Ok(())
    }

    fn access(&self) -> &SystemAccess {
        &self.access
    }

    unsafe fn run_shared(&mut self, input: I::Inner<'_>, world: &World) -> Result<O2, SkippedSystem> {
        self.share_tick(world);
        // SAFETY: the caller's promise covers the union of both accesses, and
        // the parts run one after the other.
        let result = match unsafe { self.a.run_shared(input, world) } {
            Ok(out) => {
                self.hand_over_lane();
                // SAFETY: as above.
                unsafe { self.b.run_shared(out, world) }
            }
            Err(skip) => Err(skip),
        };
        self.drop_tick();
        result
    }

    fn run_exclusive(&mut self, input: I::Inner<'_>, world: &mut World) -> Result<O2, SkippedSystem> {
        // A part that takes the whole world runs with it; the other through
        // it, as it would alone.
        self.share_tick(world);
        let result = match self.a.run_exclusive(input, world) {
            Ok(out) => {
                self.hand_over_lane();
                self.b.run_exclusive(out, world)
            }
            Err(skip) => Err(skip),
        };
        self.drop_tick();
        result
    }

    fn apply_deferred(&mut self, world: &mut World, report: &mut CommandReport) {
        self.a.apply_deferred(world, report);
        self.b.apply_deferred(world, report);
    }

    fn move_deferred(&mut self, queue: &mut CommandQueue) {
        self.a.move_deferred(queue);
        self.b.move_deferred(queue);
    }

    fn discard_deferred(&mut self) {
        self.a.discard_deferred();
        self.b.discard_deferred();
    }

    fn check_ticks(&mut self, now: Tick) {
        self.a.check_ticks(now);
        self.b.check_ticks(now);
    }

    fn set_next_run_tick(&mut self, tick: Option<Tick>) {
        self.tick = tick;
    }

    fn reserves_entities(&self) -> bool {
        self.a.reserves_entities() || self.b.reserves_entities()
    }

    fn set_entity_lane_at(&mut self, lane: Option<(ReservationLanes, u32)>, start: u32) -> u32 {
        // Set before a run: the first part starts the lane. Cleared after
        // one: the second part knows how far the two got together (or the
        // first alone, when the run stopped after it).
        self.lane = lane;
        let from_b = self.b.set_entity_lane_at(None, 0);
        let from_a = self.a.set_entity_lane_at(lane, start);
        from_a.max(from_b)
    }
}

/// `system.map(f)`.
struct Map<I: SystemInput, O, O2, F> {
    system: Box<dyn AnyIoSystem<I, O>>,
    f: F,
    name: String,
    _marker: PhantomData<fn(O) -> O2>,
}

impl<I: SystemInput, O, O2, F: FnMut(O) -> O2 + Send> AnyIoSystem<I, O2> for Map<I, O, O2, F> {
    fn name(&self) -> &str {
        &self.name
    }

    fn initialize(&mut self, world: &mut World) -> Result<(), AccessConflict> {
        self.system.initialize(world)
    }

    fn access(&self) -> &SystemAccess {
        self.system.access()
    }

    unsafe fn run_shared(&mut self, input: I::Inner<'_>, world: &World) -> Result<O2, SkippedSystem> {
        // SAFETY: the caller's, for the same access.
        unsafe { self.system.run_shared(input, world) }.map(&mut self.f)
    }

    fn run_exclusive(&mut self, input: I::Inner<'_>, world: &mut World) -> Result<O2, SkippedSystem> {
        self.system.run_exclusive(input, world).map(&mut self.f)
    }

    fn apply_deferred(&mut self, world: &mut World, report: &mut CommandReport) {
        self.system.apply_deferred(world, report);
    }

    fn move_deferred(&mut self, queue: &mut CommandQueue) {
        self.system.move_deferred(queue);
    }

    fn discard_deferred(&mut self) {
        self.system.discard_deferred();
    }

    fn check_ticks(&mut self, now: Tick) {
        self.system.check_ticks(now);
    }

    fn set_next_run_tick(&mut self, tick: Option<Tick>) {
        self.system.set_next_run_tick(tick);
    }

    fn reserves_entities(&self) -> bool {
        self.system.reserves_entities()
    }

    fn set_entity_lane_at(&mut self, lane: Option<(ReservationLanes, u32)>, start: u32) -> u32 {
        self.system.set_entity_lane_at(lane, start)
    }
}

/// An [`IoSystem`] with no input and no output, in a schedule.
struct InSchedule {
    system: Box<dyn AnyIoSystem<(), ()>>,
    type_id: TypeId,
}

/// Marker for [`IntoSystem`] on an [`IoSystem<(), ()>`] (a pipe or a map).
pub struct IsPipedSystem;

impl IntoSystem<IsPipedSystem> for IoSystem<(), ()> {
    fn into_system(self) -> BoxedSystem {
        // Known by its first function; the schedule also selects it by the
        // others (`made_from`).
        let type_id = self.made_from.first().copied().unwrap_or(TypeId::of::<Self>());
        BoxedSystem { inner: Box::new(InSchedule { system: self.inner, type_id }) }
    }
}

/// The functions `system` is made from, in running order, when it is a
/// pipe or a map in a schedule (an [`IoSystem<(), ()>`]); empty for any
/// other system, which is selected by its own type.
pub(crate) fn made_from<S: 'static>(system: &S) -> Vec<TypeId> {
    let system: &dyn Any = system;
    system.downcast_ref::<IoSystem<(), ()>>().map_or_else(Vec::new, |system| system.made_from.clone())
}

impl AnySystem for InSchedule {
    fn name(&self) -> &str {
        self.system.name()
    }

    fn type_id(&self) -> TypeId {
        self.type_id
    }

    fn initialize(&mut self, world: &mut World) -> Result<(), AccessConflict> {
        self.system.initialize(world)
    }

    fn access(&self) -> &SystemAccess {
        self.system.access()
    }

    unsafe fn run_shared(&mut self, world: &World) -> Result<(), Box<SkippedSystem>> {
        // SAFETY: the caller's.
        unsafe { self.system.run_shared((), world) }.map_err(Box::new)
    }

    fn run_exclusive(&mut self, world: &mut World) -> Result<(), Box<SkippedSystem>> {
        self.system.run_exclusive((), world).map_err(Box::new)
    }

    fn apply_deferred(&mut self, world: &mut World, report: &mut CommandReport) {
        self.system.apply_deferred(world, report);
    }

    fn discard_deferred(&mut self) {
        self.system.discard_deferred();
    }

    fn on_enabled(&mut self, _: &mut World) {}
    fn on_disabled(&mut self, _: &mut World) {}
    fn on_clear(&mut self, _: &mut World) {}

    fn check_ticks(&mut self, now: Tick) {
        self.system.check_ticks(now);
    }

    fn set_next_run_tick(&mut self, tick: Option<Tick>) {
        self.system.set_next_run_tick(tick);
    }

    fn reserves_entities(&self) -> bool {
        self.system.reserves_entities()
    }

    fn set_entity_lane(&mut self, lane: Option<(ReservationLanes, u32)>) -> u32 {
        self.system.set_entity_lane_at(lane, 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::system::{Query, Res, ResMut};
    use archetable_macros::Component;

    #[derive(Component)]
    struct A;
    #[derive(Component)]
    struct B;
    struct R;

    fn access_of<M>(world: &mut World, system: impl IntoSystem<M>) -> SystemAccess {
        let mut system = system.into_system();
        system.inner.initialize(world).unwrap();
        system.inner.access().clone()
    }

    #[test]
    fn a_pipe_conflicts_with_what_either_part_conflicts_with() {
        fn writes_a(_: Query<&mut A>) -> u32 {
            0
        }
        fn reads_a_writes_r(_: In<u32>, _: Query<&A>, _: ResMut<R>) {}
        let mut world = World::new();
        world.insert_resource(R);
        let pipe = access_of(&mut world, writes_a.pipe(reads_a_writes_r));
        let reads_a = access_of(&mut world, |_: Query<&A>| {});
        let reads_r = access_of(&mut world, |_: Res<R>| {});
        let writes_b = access_of(&mut world, |_: Query<&mut B>| {});
        assert!(pipe.conflicts_with(&reads_a), "the first part writes `A`");
        assert!(pipe.conflicts_with(&reads_r), "the second part writes `R`");
        assert!(!pipe.conflicts_with(&writes_b));
        let exclusive = access_of(&mut world, writes_a.pipe(|_: In<u32>, _: &mut World| {}));
        assert!(exclusive.is_exclusive());
    }
}
