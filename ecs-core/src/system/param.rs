//! `SystemParam`: what a system function can take as a parameter, and the
//! resource and local-state parameters.

use std::any::type_name;
use std::borrow::Cow;
use std::fmt;
use std::ops::{Deref, DerefMut};

use crate::component::change::{ComponentTicks, RunTicks, Tick};
use crate::names::short_type_name;
use crate::storage::resource::{Resource, ResourceId};
use crate::system::access::{AccessConflict, SystemAccess};
use crate::system::commands::EntityLane;
use crate::world::command_queue::CommandReport;
use crate::world::World;

/// A system's name and what its parameters touch.
#[derive(Clone, Debug)]
pub struct SystemMeta {
    name: Cow<'static, str>,
    access: SystemAccess,
    /// The system's previous run and its current (or latest) one.
    ticks: RunTicks,
    /// Whether a parameter reserves entity handles (`Commands`).
    reserves_entities: bool,
    /// The reservation lane the executor gave the current run, if any.
    pub(crate) lane: EntityLane,
}

impl SystemMeta {
    pub(crate) fn new(name: Cow<'static, str>) -> Self {
        SystemMeta {
            name,
            access: SystemAccess::default(),
            ticks: RunTicks::ZERO,
            reserves_entities: false,
            lane: EntityLane::default(),
        }
    }

    /// Whether a parameter reserves entity handles while the system runs.
    pub(crate) fn reserves_entities(&self) -> bool {
        self.reserves_entities
    }

    /// Records that a parameter reserves entity handles while the system
    /// runs (as [`Commands::spawn`](crate::Commands::spawn) does), so that
    /// the schedule hands those out in a fixed order when such systems run
    /// at the same time.
    pub(crate) fn set_reserves_entities(&mut self) {
        self.reserves_entities = true;
    }

    /// The system's previous run and its current one: what change
    /// detection in its parameters compares against.
    #[inline]
    pub fn ticks(&self) -> RunTicks {
        self.ticks
    }

    /// Makes every change the world remembers new to the system: for a
    /// system that has never run.
    pub(crate) fn reset_ticks(&mut self, world: &World) {
        let never = world.one_off_ticks().last_run;
        self.ticks = RunTicks { last_run: never, this_run: never };
    }

    /// Starts a run: the previous run becomes the last one.
    #[inline]
    pub(crate) fn begin_run(&mut self, world: &World) {
        self.begin_run_at(world.increment_change_tick());
    }

    /// Starts a run at a tick handed out in advance (see
    /// `World::reserve_change_ticks`).
    #[inline]
    pub(crate) fn begin_run_at(&mut self, this_run: Tick) {
        self.ticks = RunTicks { last_run: self.ticks.this_run.clamped(this_run), this_run };
    }

    /// Puts back the ticks from before a run that was skipped.
    #[inline]
    pub(crate) fn restore_ticks(&mut self, ticks: RunTicks) {
        self.ticks = ticks;
    }

    /// Clamps the last-run tick (see `World::check_change_ticks`).
    pub(crate) fn check_ticks(&mut self, now: Tick) {
        self.ticks.this_run.clamp_age(now);
        self.ticks.last_run.clamp_age(now);
    }

    /// The system's name (its function's path, shortened).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What the system reads and writes.
    pub fn access(&self) -> &SystemAccess {
        &self.access
    }

    pub(crate) fn access_mut(&mut self) -> &mut SystemAccess {
        &mut self.access
    }

    pub(crate) fn add_query(
        &mut self,
        components: &crate::component::Components,
        leaf: &str,
        access: &crate::query::Access,
        condition: crate::query::ArchetypeCondition,
    ) -> Result<(), AccessConflict> {
        self.access.add_query(&self.name, components, leaf, access, condition)
    }

    /// Records a read of every component and resource by the current
    /// parameter (`&World`).
    pub(crate) fn add_world_read(&mut self, world: &World) -> Result<(), AccessConflict> {
        self.access.add_world_read(&self.name, world.components(), std::any::type_name::<&World>())
    }

    /// Records a shared borrow of resource `id`, named `name`, by the
    /// parameter type `param` (for implementations of [`SystemParam`]).
    pub fn add_resource_read(&mut self, id: ResourceId, name: &str, param: &str) -> Result<(), AccessConflict> {
        self.access.add_resource_read(&self.name, id, name, param)
    }

    /// Records an exclusive borrow of resource `id`, named `name`, by the
    /// parameter type `param` (for implementations of [`SystemParam`]).
    pub fn add_resource_write(&mut self, id: ResourceId, name: &str, param: &str) -> Result<(), AccessConflict> {
        self.access.add_resource_write(&self.name, id, name, param)
    }
}

/// A parameter of a system function: [`Query`](crate::Query),
/// [`Single`](crate::Single), [`Populated`](crate::Populated), [`Res`],
/// [`ResMut`], `Option<Res<T>>`, [`Local`], [`Commands`](crate::Commands),
/// [`EventReader`](crate::EventReader), [`EventWriter`](crate::EventWriter),
/// tuples of these, and structs with `#[derive(SystemParam)]`.
///
/// # Safety
/// - `init_state` records in `meta` every component and resource that
///   `get_param` borrows, shared or mutably;
/// - `get_param` borrows nothing else of the world, and `Item` is `Self`
///   with other lifetimes.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a system parameter",
    label = "not a system parameter",
    note = "system parameters are `Query<..>`, `Res<T>`, `ResMut<T>`, `Option<Res<T>>`, `Local<T>`, `Commands`, \
            `EventReader<E>`, `EventWriter<E>`, `&World`, `ParamSet<(..)>`, tuples of these, and \
            `#[derive(SystemParam)]` structs",
    note = "a system that needs the whole world takes only `&mut World`"
)]
pub unsafe trait SystemParam: Sized {
    /// What the parameter keeps between runs (query caches, local values,
    /// command queues).
    type State: Send + 'static;
    /// The parameter with the lifetimes of one run.
    type Item<'w, 's>: SystemParam<State = Self::State>;

    /// Builds the state for `world` and records the parameter's access.
    fn init_state(world: &mut World, meta: &mut SystemMeta) -> Result<Self::State, AccessConflict>;

    /// The parameter's value for one run.
    ///
    /// # Safety
    /// `state` was built by `init_state` for this world, and for `'w` nothing
    /// else borrows what the recorded access says this parameter writes, nor
    /// writes what it reads.
    unsafe fn get_param<'w, 's>(
        state: &'s mut Self::State,
        world: &'w World,
        meta: &'s SystemMeta,
    ) -> Self::Item<'w, 's>;

    /// Whether the system may run this time: a parameter that has nothing
    /// to hand over ([`Single`](crate::Single) when no entity or several
    /// match, [`Populated`](crate::Populated) when none does) returns why,
    /// and the system is skipped for this run instead of called. Called
    /// right before [`SystemParam::get_param`], with the run's ticks set;
    /// every parameter that says yes by default. A parameter made of
    /// others forwards it to every member, in order, and stops at the
    /// first that says no.
    ///
    /// # Safety
    /// As for [`SystemParam::get_param`].
    unsafe fn validate_param(state: &mut Self::State, world: &World, meta: &SystemMeta) -> Result<(), SkippedSystem> {
        let _ = (state, world, meta);
        Ok(())
    }

    /// Applies what the parameter deferred (commands) to the world.
    fn apply_deferred(state: &mut Self::State, world: &mut World, meta: &SystemMeta, report: &mut CommandReport) {
        let _ = (state, world, meta, report);
    }

    /// Drops what the parameter deferred without applying it.
    fn discard_deferred(state: &mut Self::State) {
        let _ = state;
    }

    /// Moves the commands the parameter recorded into `queue`, for a
    /// caller that applies them itself: an observer's commands apply after
    /// the observer is back in the world's registry, so that they can
    /// trigger it again (and a lifecycle observer's after the world
    /// operation under way). A parameter that records commands implements
    /// it next to [`SystemParam::apply_deferred`]; what it does not move
    /// there, `apply_deferred` still applies, at once.
    ///
    /// A parameter made of others (a tuple, a `#[derive(SystemParam)]`
    /// struct, a [`ParamSet`](crate::ParamSet)) forwards each of the three
    /// deferred steps, this one included, to every member.
    fn move_deferred(state: &mut Self::State, queue: &mut crate::world::command_queue::CommandQueue) {
        let _ = (state, queue);
    }
}

/// Why a system (or observer) did not run this time: one of its
/// parameters had nothing to hand over. [`Schedule::skipped_systems`](crate::Schedule::skipped_systems)
/// lists the skips of the last run.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SkippedSystem {
    /// The system's name.
    pub system: String,
    /// The parameter that said no, as its type is written (`Single<&Player>`).
    pub param: String,
    /// What it found: no entity, or more than one.
    pub reason: crate::system::QuerySingleError,
}

impl SkippedSystem {
    /// A skip of the system `meta` describes, because of parameter `P`.
    pub fn new<P>(meta: &SystemMeta, reason: crate::system::QuerySingleError) -> Self {
        SkippedSystem { system: meta.name().to_string(), param: short_type_name(type_name::<P>()), reason }
    }
}

impl fmt::Display for SkippedSystem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "system `{}` skipped: its parameter `{}` found {}",
            self.system,
            self.param,
            match self.reason {
                crate::system::QuerySingleError::NoEntities => "no matching entity",
                crate::system::QuerySingleError::MultipleEntities => "more than one matching entity",
            }
        )
    }
}

/// The item type of parameter `P` for one run.
pub type SystemParamItem<'w, 's, P> = <P as SystemParam>::Item<'w, 's>;

/// Records the parameter `P` at the next position of `meta`'s access, then
/// builds its state. The function-system glue calls this per parameter.
pub(crate) fn init_param<P: SystemParam>(world: &mut World, meta: &mut SystemMeta) -> Result<P::State, AccessConflict> {
    meta.access_mut().begin_param(Cow::Owned(short_type_name(type_name::<P>())));
    P::init_state(world, meta)
}

/// Shared access to the world's `T` resource.
///
/// A system that takes `Res<T>` panics, naming the system and the type, if
/// the world has no `T` when it runs; take `Option<Res<T>>` when it may be
/// missing.
pub struct Res<'w, T: Resource> {
    value: &'w T,
    ticks: ComponentTicks,
    run: RunTicks,
}

impl<'w, T: Resource> Res<'w, T> {
    /// Whether the resource was inserted since the system last ran (on its
    /// first run: since the world began).
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// #[derive(Default)] struct Score(u32);
    /// #[derive(Default)] struct Seen(Vec<(bool, bool)>);
    /// fn watch(score: Res<Score>, mut seen: ResMut<Seen>) {
    ///     seen.0.push((score.is_added(), score.is_changed()));
    /// }
    /// let mut world = World::new();
    /// world.init_resource::<Score>();
    /// world.init_resource::<Seen>();
    /// let mut schedule = Schedule::new();
    /// schedule.add_system(watch);
    /// schedule.run(&mut world);
    /// schedule.run(&mut world);
    /// world.resource_mut::<Score>().0 += 1;
    /// schedule.run(&mut world);
    /// assert_eq!(world.resource::<Seen>().0, [(true, true), (false, false), (false, true)]);
    /// ```
    #[inline]
    pub fn is_added(&self) -> bool {
        self.ticks.added.is_newer_than(self.run.last_run, self.run.this_run)
    }

    /// Whether the resource was written (or inserted) since the system last
    /// ran; see [`Res::is_added`] for an example.
    #[inline]
    pub fn is_changed(&self) -> bool {
        self.ticks.changed.is_newer_than(self.run.last_run, self.run.this_run)
    }

    /// The resource's added and changed ticks.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Default)] struct Score(u32);
    /// fn show(score: Res<Score>) {
    ///     assert_eq!(score.ticks().added, score.ticks().changed);
    /// }
    /// # let mut world = World::new();
    /// # world.init_resource::<Score>();
    /// # world.run_system_once(show);
    /// ```
    #[inline]
    pub fn ticks(&self) -> ComponentTicks {
        self.ticks
    }

    /// The plain reference, for the rest of the borrow.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Default)] struct Score(u32);
    /// fn show(score: Res<Score>) {
    ///     let score: &Score = score.into_inner();
    ///     assert_eq!(score.0, 0);
    /// }
    /// # let mut world = World::new();
    /// # world.init_resource::<Score>();
    /// # world.run_system_once(show);
    /// ```
    #[inline]
    pub fn into_inner(self) -> &'w T {
        self.value
    }
}

impl<T: Resource> Deref for Res<'_, T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        self.value
    }
}

impl<T: Resource + fmt::Debug> fmt::Debug for Res<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.value.fmt(f)
    }
}

/// Exclusive access to the world's `T` resource. A write through it
/// ([`DerefMut`]) marks the resource changed for
/// [`Res::is_changed`] and [`ResMut::is_changed`].
pub struct ResMut<'w, T: Resource> {
    value: &'w mut T,
    changed: &'w mut Tick,
    added: Tick,
    run: RunTicks,
}

impl<T: Resource> ResMut<'_, T> {
    /// Whether the resource was inserted since the system last ran.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// #[derive(Default)] struct Score(u32);
    /// fn bump(mut score: ResMut<Score>) {
    ///     if score.is_added() {
    ///         score.0 = 100;
    ///     }
    /// }
    /// let mut world = World::new();
    /// world.init_resource::<Score>();
    /// let mut schedule = Schedule::new();
    /// schedule.add_system(bump);
    /// schedule.run(&mut world);
    /// world.resource_mut::<Score>().0 = 1;
    /// schedule.run(&mut world);
    /// assert_eq!(world.resource::<Score>().0, 1);
    /// ```
    #[inline]
    pub fn is_added(&self) -> bool {
        self.added.is_newer_than(self.run.last_run, self.run.this_run)
    }

    /// Whether the resource was written (or inserted) since the system last
    /// ran, writes through this handle included.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Default)] struct Score(u32);
    /// fn check(mut score: ResMut<Score>) {
    ///     score.0 += 1;
    ///     assert!(score.is_changed());
    /// }
    /// # let mut world = World::new();
    /// # world.init_resource::<Score>();
    /// # world.run_system_once(check);
    /// ```
    #[inline]
    pub fn is_changed(&self) -> bool {
        self.changed.is_newer_than(self.run.last_run, self.run.this_run)
    }

    /// Marks the resource changed without writing it.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Default)] struct Score(u32);
    /// fn touch(mut score: ResMut<Score>) {
    ///     score.set_changed();
    /// }
    /// let mut world = World::new();
    /// world.init_resource::<Score>();
    /// world.run_system_once(|_: Res<Score>| {}); // a run moves the tick on
    /// let before = world.resource_ticks::<Score>().unwrap().changed;
    /// world.run_system_once(touch);
    /// assert_ne!(world.resource_ticks::<Score>().unwrap().changed, before);
    /// ```
    #[inline]
    pub fn set_changed(&mut self) {
        *self.changed = self.run.this_run;
    }

    /// The value, mutably, without marking it changed.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Default)] struct Cache(Vec<u32>);
    /// fn refresh(mut cache: ResMut<Cache>) {
    ///     cache.bypass_change_detection().0.clear();
    ///     assert!(!cache.is_changed() || cache.is_added());
    /// }
    /// # let mut world = World::new();
    /// # world.init_resource::<Cache>();
    /// # world.run_system_once(refresh);
    /// ```
    #[inline]
    pub fn bypass_change_detection(&mut self) -> &mut T {
        self.value
    }
}

impl<T: Resource> Deref for ResMut<'_, T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        self.value
    }
}

impl<T: Resource> DerefMut for ResMut<'_, T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        *self.changed = self.run.this_run;
        self.value
    }
}

impl<T: Resource + fmt::Debug> fmt::Debug for ResMut<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.value.fmt(f)
    }
}

#[cold]
#[inline(never)]
fn missing_resource(system: &str, resource: &str) -> ! {
    panic!(
        "system `{system}` needs resource `{}`, which is not in the world; add it with `world.insert_resource(..)`, \
         or take `Option<Res<..>>` if it may be missing",
        short_type_name(resource)
    )
}

// SAFETY: borrows only resource `T`, recorded as a read.
unsafe impl<T: Resource> SystemParam for Res<'_, T> {
    type State = ResourceId;
    type Item<'w, 's> = Res<'w, T>;

    fn init_state(world: &mut World, meta: &mut SystemMeta) -> Result<ResourceId, AccessConflict> {
        let id = world.resources_mut().register::<T>();
        meta.add_resource_read(id, type_name::<T>(), type_name::<Self>())?;
        Ok(id)
    }

    #[inline]
    unsafe fn get_param<'w, 's>(id: &'s mut ResourceId, world: &'w World, meta: &'s SystemMeta) -> Res<'w, T> {
        // SAFETY: nothing writes `T` for `'w` (caller), and `id` is `T`'s.
        match unsafe { world.resources().get_with_ticks::<T>(*id) } {
            Some((value, ticks)) => Res { value, ticks, run: meta.ticks() },
            None => missing_resource(meta.name(), type_name::<T>()),
        }
    }
}

// SAFETY: borrows only resource `T`, recorded as a read.
unsafe impl<T: Resource> SystemParam for Option<Res<'_, T>> {
    type State = ResourceId;
    type Item<'w, 's> = Option<Res<'w, T>>;

    fn init_state(world: &mut World, meta: &mut SystemMeta) -> Result<ResourceId, AccessConflict> {
        <Res<T> as SystemParam>::init_state(world, meta)
    }

    #[inline]
    unsafe fn get_param<'w, 's>(id: &'s mut ResourceId, world: &'w World, meta: &'s SystemMeta) -> Option<Res<'w, T>> {
        // SAFETY: as for `Res<T>`.
        let (value, ticks) = unsafe { world.resources().get_with_ticks::<T>(*id) }?;
        Some(Res { value, ticks, run: meta.ticks() })
    }
}

// SAFETY: borrows only resource `T`, recorded as a write.
unsafe impl<T: Resource> SystemParam for ResMut<'_, T> {
    type State = ResourceId;
    type Item<'w, 's> = ResMut<'w, T>;

    fn init_state(world: &mut World, meta: &mut SystemMeta) -> Result<ResourceId, AccessConflict> {
        let id = world.resources_mut().register::<T>();
        meta.add_resource_write(id, type_name::<T>(), type_name::<Self>())?;
        Ok(id)
    }

    #[inline]
    unsafe fn get_param<'w, 's>(id: &'s mut ResourceId, world: &'w World, meta: &'s SystemMeta) -> ResMut<'w, T> {
        // SAFETY: nothing else borrows `T` for `'w` (caller).
        match unsafe { world.resources().get_mut_with_ticks::<T>(*id) } {
            Some((value, ticks)) => {
                ResMut { value, added: ticks.added, changed: &mut ticks.changed, run: meta.ticks() }
            }
            None => missing_resource(meta.name(), type_name::<T>()),
        }
    }
}

// SAFETY: borrows only resource `T`, recorded as a write.
unsafe impl<T: Resource> SystemParam for Option<ResMut<'_, T>> {
    type State = ResourceId;
    type Item<'w, 's> = Option<ResMut<'w, T>>;

    fn init_state(world: &mut World, meta: &mut SystemMeta) -> Result<ResourceId, AccessConflict> {
        <ResMut<T> as SystemParam>::init_state(world, meta)
    }

    #[inline]
    unsafe fn get_param<'w, 's>(
        id: &'s mut ResourceId,
        world: &'w World,
        meta: &'s SystemMeta,
    ) -> Option<ResMut<'w, T>> {
        // SAFETY: as for `ResMut<T>`.
        let (value, ticks) = unsafe { world.resources().get_mut_with_ticks::<T>(*id) }?;
        Some(ResMut { value, added: ticks.added, changed: &mut ticks.changed, run: meta.ticks() })
    }
}

/// A value private to one system, kept between its runs; starts as
/// `T::default()`.
///
/// A system's state belongs to the world it runs on: run the schedule on
/// another world (a freshly loaded save, a new level built in a second
/// world) and every `Local` starts again from `T::default()`, as do query
/// caches and change-detection ticks. State that must survive a load
/// belongs in a resource registered for saving.
///
/// ```
/// # use archetable::{Local, Schedule, World};
/// fn count_frames(mut frames: Local<u32>) {
///     *frames += 1;
/// }
/// # let mut world = World::new();
/// # let mut schedule = Schedule::new();
/// # schedule.add_system(count_frames);
/// # schedule.run(&mut world);
/// ```
pub struct Local<'s, T: Send + Sync + 'static> {
    value: &'s mut T,
}

impl<T: Send + Sync + 'static> Deref for Local<'_, T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        self.value
    }
}

impl<T: Send + Sync + 'static> DerefMut for Local<'_, T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        self.value
    }
}

// SAFETY: borrows nothing of the world.
unsafe impl<T: Default + Send + Sync + 'static> SystemParam for Local<'_, T> {
    type State = T;
    type Item<'w, 's> = Local<'s, T>;

    fn init_state(_: &mut World, _: &mut SystemMeta) -> Result<T, AccessConflict> {
        Ok(T::default())
    }

    #[inline]
    unsafe fn get_param<'s>(value: &'s mut T, _: &World, _: &'s SystemMeta) -> Local<'s, T> {
        Local { value }
    }
}

macro_rules! impl_system_param_for_tuple {
    ($($name:ident $index:tt),*) => {
        // SAFETY: each element records its own access, and the conflict
        // check covers pairs inside the tuple too.
        #[allow(unused_variables, clippy::unused_unit, non_snake_case)]
        unsafe impl<$($name: SystemParam),*> SystemParam for ($($name,)*) {
            type State = ($($name::State,)*);
            type Item<'w, 's> = ($($name::Item<'w, 's>,)*);

            fn init_state(world: &mut World, meta: &mut SystemMeta) -> Result<Self::State, AccessConflict> {
                Ok(($($name::init_state(world, meta)?,)*))
            }

            #[inline]
            unsafe fn get_param<'w, 's>(state: &'s mut Self::State, world: &'w World, meta: &'s SystemMeta)
                -> Self::Item<'w, 's>
            {
                let ($($name,)*) = state;
                // SAFETY: forwarded contract; the elements' accesses were
                // checked against each other.
                ($(unsafe { $name::get_param($name, world, meta) },)*)
            }

            forward_validate!($($name $index),*);
            forward_deferred!($($name $index),*);
        }
    };
}

/// [`SystemParam::validate_param`] of a parameter whose state is a tuple of
/// its members' states: every member in order, the first no wins.
macro_rules! forward_validate {
    ($($name:ident $index:tt),*) => {
        #[allow(unused_variables)]
        #[inline]
        unsafe fn validate_param(
            state: &mut Self::State,
            world: &World,
            meta: &SystemMeta,
        ) -> Result<(), crate::system::SkippedSystem> {
            // SAFETY: forwarded contract; each member borrows only what the
            // whole was promised.
            $(unsafe { $name::validate_param(&mut state.$index, world, meta) }?;)*
            Ok(())
        }
    };
}
pub(crate) use forward_validate;

/// The deferred steps of a parameter whose state is a tuple of its members'
/// states (a tuple, a [`ParamSet`](crate::ParamSet)): each step goes to
/// every member in order. One macro for all of them, so that a wrapper
/// cannot forward one step and forget another.
macro_rules! forward_deferred {
    ($($name:ident $index:tt),*) => {
        #[allow(unused_variables)]
        fn apply_deferred(
            state: &mut Self::State,
            world: &mut World,
            meta: &SystemMeta,
            report: &mut crate::world::command_queue::CommandReport,
        ) {
            $($name::apply_deferred(&mut state.$index, world, meta, report);)*
        }

        #[allow(unused_variables)]
        fn discard_deferred(state: &mut Self::State) {
            $($name::discard_deferred(&mut state.$index);)*
        }

        #[allow(unused_variables)]
        fn move_deferred(state: &mut Self::State, queue: &mut crate::world::command_queue::CommandQueue) {
            $($name::move_deferred(&mut state.$index, queue);)*
        }
    };
}
pub(crate) use forward_deferred;

crate::tuples::all_tuples!(impl_system_param_for_tuple);
