//! `Schedule`: the systems of a game loop, their order, and how one frame
//! runs them. `condition.rs` holds run conditions and their combinators,
//! `config.rs` the tuples of systems added at once and the named sets,
//! `order.rs` the ordering and its errors, `executor.rs` the run plan and
//! the parallel runner, `timing.rs` the per-system timings.

mod ambiguity;
mod condition;
mod config;
#[allow(unsafe_code)]
mod executor;
mod order;
mod timing;

use std::any::TypeId;
use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;
use std::time::Duration;

use crate::component::change::Tick;
use crate::system::{AnySystem, BoxedSystem, IntoIoSystem, IntoSystem, SkippedSystem, System, SystemInput};
use crate::world::command_queue::CommandReport;
use crate::world::{World, WorldId};

pub use ambiguity::{Ambiguities, Ambiguity, Clash};
pub use condition::{Condition, IntoCondition};
pub use config::{IntoSystems, SetConfig, Systems};
pub use order::ScheduleError;
pub use timing::{SystemTiming, Timings};

use config::SetInfo;
use executor::Plan;

/// A handle to a system in a [`Schedule`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SystemId(u32);

/// What a `before`/`after` constraint points at: a system by id, every
/// system with a label, or every system made from a function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SystemSelector {
    /// One system.
    Id(SystemId),
    /// The systems with this label, or in the set of this name.
    Label(Cow<'static, str>),
    /// The systems made from this function (or `System` type).
    Type(TypeId, &'static str),
}

impl fmt::Display for SystemSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SystemSelector::Id(id) => write!(f, "system id {}", id.0),
            SystemSelector::Label(label) => write!(f, "label or set `{label}`"),
            SystemSelector::Type(_, name) => write!(f, "function `{name}`"),
        }
    }
}

/// Anything that can point at systems in a constraint: a [`SystemId`], a
/// label or set name (`&'static str` or `String`), or the system function
/// itself (a [`System`](crate::System) type too). A function selects the
/// systems made from it, pipes included: `.before(a)` orders before
/// `a.pipe(b)` and `a.map(f)`, and so does `.before(b)`, though `a` returns
/// a value and `b` takes an input, neither of which a schedule runs alone.
/// A pipe itself is no selector (it has no one function): use one of its
/// functions, or its id.
pub trait IntoSystemSelector<Marker> {
    /// The selector.
    fn into_selector(self) -> SystemSelector;
}

impl IntoSystemSelector<()> for SystemId {
    fn into_selector(self) -> SystemSelector {
        SystemSelector::Id(self)
    }
}

impl IntoSystemSelector<()> for &'static str {
    fn into_selector(self) -> SystemSelector {
        SystemSelector::Label(Cow::Borrowed(self))
    }
}

impl IntoSystemSelector<()> for String {
    fn into_selector(self) -> SystemSelector {
        SystemSelector::Label(Cow::Owned(self))
    }
}

/// Marker for [`IntoSystemSelector`] on system functions, with or without
/// an input or an output.
pub struct IsSystemType<M>(std::marker::PhantomData<M>);

impl<I: SystemInput, O, M, F: IntoIoSystem<I, O, M>> IntoSystemSelector<IsSystemType<(I, O, M)>> for F {
    fn into_selector(self) -> SystemSelector {
        SystemSelector::Type(TypeId::of::<F>(), std::any::type_name::<F>())
    }
}

/// Marker for [`IntoSystemSelector`] on [`System`] types.
pub struct IsSystemStruct;

impl<S: System> IntoSystemSelector<IsSystemStruct> for S {
    fn into_selector(self) -> SystemSelector {
        SystemSelector::Type(TypeId::of::<S>(), std::any::type_name::<S>())
    }
}

/// See [`Schedule::set_parallel_threshold`].
const DEFAULT_PARALLEL_ABOVE: Duration = Duration::from_micros(20);

type Hook = Box<dyn FnMut(&mut World) + Send>;

/// One system of a schedule with its configuration.
struct Entry {
    id: SystemId,
    system: Box<dyn AnySystem>,
    /// The functions a pipe is made from, each of which selects it (empty
    /// for other systems, selected by their own type).
    made_from: Vec<TypeId>,
    /// An `apply_deferred` point rather than a system.
    sync_point: bool,
    priority: i32,
    labels: Vec<Cow<'static, str>>,
    /// The named sets it is in.
    sets: Vec<Cow<'static, str>>,
    before: Vec<SystemSelector>,
    after: Vec<SystemSelector>,
    /// The systems its conflicts with are accepted (`ambiguous_with`).
    ambiguous_with: Vec<SystemSelector>,
    /// Every conflict of it is accepted (`ambiguous_with_all`).
    ambiguous_with_all: bool,
    debug: bool,
    enabled: bool,
    /// Its own conditions, in the order given (a group's after the
    /// system's).
    conditions: Vec<Condition>,
    /// What its sets give it, gathered when the schedule is built.
    inherited: Inherited,
    on_enabled: Vec<Hook>,
    on_disabled: Vec<Hook>,
    on_clear: Vec<Hook>,
    timing: SystemTiming,
    /// Ran this frame and its deferred commands are not applied yet.
    pending_deferred: bool,
    /// Why its run this frame was skipped, if it was (boxed: a skip is
    /// rare, and the entry stays small).
    skip: Option<Box<SkippedSystem>>,
}

impl Entry {
    /// Keeps a skipped run for the schedule's list and count.
    #[inline]
    fn record_skip(&mut self, ran: Result<(), Box<SkippedSystem>>) {
        if let Err(skip) = ran {
            self.timing.skipped += 1;
            self.skip = Some(skip);
        }
    }

    fn matches(&self, selector: &SystemSelector) -> bool {
        match selector {
            SystemSelector::Id(id) => self.id == *id,
            SystemSelector::Label(label) => self.labels.iter().chain(&self.sets).any(|l| l == label),
            SystemSelector::Type(type_id, _) => {
                !self.sync_point && (self.system.type_id() == *type_id || self.made_from.contains(type_id))
            }
        }
    }

    fn run_hooks(&mut self, world: &mut World, transition: Transition) {
        match transition {
            Transition::Enabled => {
                self.system.on_enabled(world);
                self.on_enabled.iter_mut().for_each(|hook| hook(world));
            }
            Transition::Disabled => {
                self.system.on_disabled(world);
                self.on_disabled.iter_mut().for_each(|hook| hook(world));
            }
            Transition::Cleared => {
                self.system.on_clear(world);
                self.on_clear.iter_mut().for_each(|hook| hook(world));
            }
        }
    }
}

/// What a system's sets give it: their conditions, ordering and `debug`.
#[derive(Default)]
struct Inherited {
    conditions: Vec<Condition>,
    before: Vec<SystemSelector>,
    after: Vec<SystemSelector>,
    ambiguous_with: Vec<SystemSelector>,
    ambiguous_with_all: bool,
    debug: bool,
}

impl Entry {
    /// The systems its conflicts with are accepted for, its sets' included.
    fn all_ambiguous_with(&self) -> impl Iterator<Item = &SystemSelector> {
        self.ambiguous_with.iter().chain(&self.inherited.ambiguous_with)
    }

    /// Whether every conflict of it is accepted, by itself or a set.
    fn is_ambiguous_with_all(&self) -> bool {
        self.ambiguous_with_all || self.inherited.ambiguous_with_all
    }

    /// The conditions to check: its own, then its sets'.
    fn all_conditions(&self) -> impl Iterator<Item = &Condition> {
        self.conditions.iter().chain(&self.inherited.conditions)
    }

    /// Its `before` constraints, its sets' included.
    fn all_before(&self) -> impl Iterator<Item = &SystemSelector> {
        self.before.iter().chain(&self.inherited.before)
    }

    /// Its `after` constraints, its sets' included.
    fn all_after(&self) -> impl Iterator<Item = &SystemSelector> {
        self.after.iter().chain(&self.inherited.after)
    }

    /// Wraps a conflict of its parameters in an error that names its sets.
    fn conflict(&self, conflict: crate::system::AccessConflict) -> ScheduleError {
        conflict_error(conflict, &self.sets)
    }
}

fn conflict_error(conflict: crate::system::AccessConflict, sets: &[Cow<'static, str>]) -> ScheduleError {
    if sets.is_empty() {
        ScheduleError::Conflict(conflict)
    } else {
        ScheduleError::ConflictInSet {
            sets: sets.iter().map(|s| s.to_string()).collect(),
            conflict: Box::new(conflict),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Transition {
    Enabled,
    Disabled,
    Cleared,
}

/// The systems of a game loop and the order they run in.
///
/// ```
/// use std::time::Duration;
/// use archetable::prelude::*;
///
/// #[derive(Component)] struct Position(f32);
/// #[derive(Component)] struct Velocity(f32);
///
/// fn movement(mut q: Query<(&mut Position, &Velocity)>, time: Res<Time>) {
///     for (mut pos, vel) in q.iter_mut() {
///         pos.0 += vel.0 * time.delta_secs();
///     }
/// }
///
/// fn reap(q: Query<(Entity, &Position)>, mut commands: Commands) {
///     for (entity, pos) in q.iter() {
///         if pos.0 > 10.0 {
///             commands.despawn(entity);
///         }
///     }
/// }
///
/// let mut world = World::new();
/// world.spawn((Position(0.0), Velocity(8.0)));
/// let mut schedule = Schedule::new();
/// let moved = schedule.add_system(movement).id();
/// schedule.add_system(reap).after(moved);
/// for _ in 0..2 {
///     world.resource_mut::<Time>().advance(Duration::from_secs(1));
///     schedule.run(&mut world);
/// }
/// assert!(world.is_empty());
/// ```
///
/// # Order
/// Explicit [`before`](SystemConfig::before) / [`after`](SystemConfig::after)
/// constraints come first, then [`priority`](SystemConfig::priority) (lower
/// runs first), then insertion order: priority and insertion order only
/// break ties among the systems the constraints leave free to go next, so
/// they never contradict a constraint. A cycle of constraints is a
/// [`ScheduleError`] naming the systems.
///
/// # Parallelism
/// Systems whose accesses do not conflict run at the same time on rayon's
/// thread pool; two that conflict always run in the order above, so a frame
/// gives the same result as a single-threaded run. Exclusive systems
/// (`&mut World`) and `apply_deferred` points run alone. A group of systems
/// that took less than a threshold in its last run (20 µs unless
/// [`set_parallel_threshold`](Schedule::set_parallel_threshold) says
/// otherwise) runs on the calling thread: waking other cores would cost more.
/// Above it, each group keeps how long it took both ways and runs the faster
/// way, trying the other again every 64 runs: on a busy or virtual machine,
/// where waking a core is slow, a group of medium systems may stay on one
/// thread.
///
/// # Deferred commands
/// [`Commands`](crate::Commands) recorded by the systems apply at the end of
/// the frame, system by system in run order (and at any
/// [`add_apply_deferred`](Schedule::add_apply_deferred) point), so an entity
/// despawned mid-frame stays visible to later systems of that frame.
pub struct Schedule {
    entries: Vec<Entry>,
    /// The stamp of what [`Schedule::system_timings`] lists; see
    /// [`Schedule::timings_layout`].
    timings_layout: u64,
    next_id: u32,
    single_threaded: bool,
    /// A group of systems runs in parallel only if it took at least this
    /// long the last time.
    parallel_above: Duration,
    /// Stand-in world for checking systems' parameters when they are added.
    scratch: World,
    /// The run plan, valid for `plan_world` until the systems change.
    plan: Option<Plan>,
    plan_world: Option<WorldId>,
    /// Enable/disable transitions whose hooks run at the start of the next
    /// run.
    pending_hooks: Vec<(SystemId, Transition)>,
    /// The named sets configured with `configure_set`.
    sets: Vec<SetInfo>,
    /// Removed systems whose `on_disabled` hooks have not run yet.
    removed: Vec<Entry>,
    report: CommandReport,
    /// Whether skipped commands are reported as warnings, and the
    /// (system, command) pairs already reported.
    warn_skipped: bool,
    warned: HashSet<(String, &'static str)>,
    /// The systems skipped in the last run, in run order.
    skipped: Vec<SkippedSystem>,
    /// Whether skipped systems are reported as warnings, and the
    /// (system, parameter, reason) triples already reported.
    warn_skipped_systems: bool,
    warned_systems: HashSet<SkippedSystem>,
    frames: u64,
}

impl Default for Schedule {
    fn default() -> Self {
        Schedule::new()
    }
}

impl fmt::Debug for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Schedule")
            .field("systems", &self.entries.iter().map(|e| e.system.name()).collect::<Vec<_>>())
            .field("single_threaded", &self.single_threaded)
            .finish()
    }
}

impl Schedule {
    /// An empty schedule that runs non-conflicting systems in parallel.
    pub fn new() -> Self {
        Schedule {
            entries: Vec::new(),
            timings_layout: fresh_timings_layout(),
            next_id: 0,
            single_threaded: false,
            parallel_above: DEFAULT_PARALLEL_ABOVE,
            scratch: World::new(),
            plan: None,
            plan_world: None,
            pending_hooks: Vec::new(),
            sets: Vec::new(),
            removed: Vec::new(),
            report: CommandReport::default(),
            warn_skipped: true,
            warned: HashSet::new(),
            skipped: Vec::new(),
            warn_skipped_systems: true,
            warned_systems: HashSet::new(),
            frames: 0,
        }
    }

    /// An empty schedule that runs one system at a time, in order.
    pub fn single_threaded() -> Self {
        Schedule { single_threaded: true, ..Schedule::new() }
    }

    /// Runs one system at a time, in order (`true`), or non-conflicting
    /// systems in parallel (`false`, the default of [`Schedule::new`]).
    /// The results are the same either way.
    pub fn set_single_threaded(&mut self, single_threaded: bool) -> &mut Self {
        self.single_threaded = single_threaded;
        self
    }

    /// Sets how long a group of systems that may overlap must have taken in
    /// its last run for the next run to spread it over the thread pool
    /// (20 µs by default). Below that, waking other cores costs more than it
    /// saves, so the group runs on the calling thread, in order. A group
    /// with a system that never ran goes parallel. Above the threshold the
    /// group still runs on the calling thread when that has been faster
    /// (measured both ways, and again every 64 runs). `Duration::ZERO`
    /// always goes parallel; the results are the same either way.
    pub fn set_parallel_threshold(&mut self, parallel_above: Duration) -> &mut Self {
        self.parallel_above = parallel_above;
        self
    }

    /// Adds a system; configure it through the returned [`SystemConfig`].
    ///
    /// # Panics
    /// If two of the system's parameters would alias (`error[E0002]`, see
    /// [`try_add_system`](Schedule::try_add_system)).
    #[track_caller]
    pub fn add_system<M>(&mut self, system: impl IntoSystem<M>) -> SystemConfig<'_> {
        match self.try_add_system(system) {
            Ok(config) => config,
            Err(error) => panic!("{error}"),
        }
    }

    /// Adds a system, or returns the conflict between two of its parameters.
    pub fn try_add_system<M>(&mut self, system: impl IntoSystem<M>) -> Result<SystemConfig<'_>, ScheduleError> {
        let made_from = crate::system::io::made_from(&system);
        self.try_add_boxed(system.into_system(), made_from)
    }

    /// The part of [`Schedule::try_add_system`] that does not depend on the
    /// system's type: one copy for every system type.
    fn try_add_boxed(
        &mut self,
        mut system: BoxedSystem,
        made_from: Vec<TypeId>,
    ) -> Result<SystemConfig<'_>, ScheduleError> {
        system.inner.initialize(&mut self.scratch).map_err(ScheduleError::Conflict)?;
        let mut config = self.push(system, false);
        config.entry().made_from = made_from;
        Ok(config)
    }

    /// Adds several systems at once: one system or a tuple of them (nested
    /// tuples too), with the options they share (see [`IntoSystems`]:
    /// `chain`, `run_if`, `before`/`after`, `in_set`, `debug`). Returns
    /// their ids in the order written.
    ///
    /// ```
    /// use archetable::prelude::*;
    ///
    /// #[derive(Default)] struct Trace(Vec<&'static str>);
    /// fn a(mut t: ResMut<Trace>) { t.0.push("a") }
    /// fn b(mut t: ResMut<Trace>) { t.0.push("b") }
    /// fn c(mut t: ResMut<Trace>) { t.0.push("c") }
    ///
    /// let mut world = World::new();
    /// world.init_resource::<Trace>();
    /// let mut schedule = Schedule::new();
    /// let ids = schedule.add_systems((c, b, a).chain());
    /// assert_eq!(ids.len(), 3);
    /// schedule.run(&mut world);
    /// assert_eq!(world.resource::<Trace>().0, ["c", "b", "a"]);
    /// ```
    ///
    /// # Panics
    /// If two parameters of one of the systems would alias (`error[E0002]`,
    /// naming the sets the system was given), as
    /// [`try_add_systems`](Schedule::try_add_systems) says.
    #[track_caller]
    pub fn add_systems<M>(&mut self, systems: impl IntoSystems<M>) -> Vec<SystemId> {
        match self.try_add_systems(systems) {
            Ok(ids) => ids,
            Err(error) => panic!("{error}"),
        }
    }

    /// Adds several systems at once, or none of them if one of them has
    /// parameters that would alias: [`ScheduleError::Conflict`], or
    /// [`ScheduleError::ConflictInSet`] for a system given sets.
    pub fn try_add_systems<M>(&mut self, systems: impl IntoSystems<M>) -> Result<Vec<SystemId>, ScheduleError> {
        let mut leaves = Vec::new();
        systems.into_systems().flatten(&mut leaves);
        for leaf in &mut leaves {
            if let Err(conflict) = leaf.system.inner.initialize(&mut self.scratch) {
                return Err(conflict_error(conflict, &leaf.sets));
            }
        }
        let first = self.next_id;
        let ids: Vec<SystemId> = (0..leaves.len() as u32).map(|k| SystemId(first + k)).collect();
        for leaf in leaves {
            let mut config = self.push(leaf.system, false);
            let entry = config.entry();
            entry.made_from = leaf.made_from;
            entry.conditions = leaf.conditions;
            entry.before = leaf.before;
            entry.after = leaf.after;
            entry.after.extend(leaf.after_leaves.iter().map(|&k| SystemSelector::Id(ids[k])));
            entry.sets = leaf.sets;
            entry.ambiguous_with = leaf.ambiguous_with;
            entry.ambiguous_with_all = leaf.ambiguous_with_all;
            entry.debug = leaf.debug;
        }
        Ok(ids)
    }

    /// The options of set `name`, which apply to every system in it,
    /// those added later included: conditions, ordering and `debug`. A
    /// system joins a set through [`IntoSystems::in_set`] or
    /// [`SystemConfig::in_set`]; other systems are ordered against a set
    /// by its name (`.after("physics")`).
    pub fn configure_set(&mut self, name: impl Into<Cow<'static, str>>) -> SetConfig<'_> {
        let name = name.into();
        let index = match self.sets.iter().position(|set| set.name == name) {
            Some(index) => index,
            None => {
                self.sets.push(SetInfo {
                    name,
                    conditions: Vec::new(),
                    before: Vec::new(),
                    after: Vec::new(),
                    ambiguous_with: Vec::new(),
                    ambiguous_with_all: false,
                    debug: false,
                });
                self.sets.len() - 1
            }
        };
        self.invalidate();
        SetConfig { schedule: self, index }
    }

    /// Adds a point where the deferred commands of every system that ran
    /// before it this frame are applied, so that later systems see them.
    pub fn add_apply_deferred(&mut self) -> SystemConfig<'_> {
        let system = (|_: &mut World| {}).into_system();
        let config = self.push(system, true);
        let index = config.index;
        config.schedule.entries[index].timing.name = "apply_deferred".to_string();
        config
    }

    fn push(&mut self, system: BoxedSystem, sync_point: bool) -> SystemConfig<'_> {
        let id = SystemId(self.next_id);
        self.next_id += 1;
        let timing = SystemTiming::new(system.inner.name());
        self.entries.push(Entry {
            id,
            system: system.inner,
            made_from: Vec::new(),
            sync_point,
            priority: 0,
            labels: Vec::new(),
            sets: Vec::new(),
            before: Vec::new(),
            after: Vec::new(),
            ambiguous_with: Vec::new(),
            ambiguous_with_all: false,
            debug: false,
            enabled: true,
            conditions: Vec::new(),
            inherited: Inherited::default(),
            on_enabled: Vec::new(),
            on_disabled: Vec::new(),
            on_clear: Vec::new(),
            timing,
            pending_deferred: false,
            skip: None,
        });
        self.invalidate();
        SystemConfig { index: self.entries.len() - 1, schedule: self }
    }

    fn invalidate(&mut self) {
        self.plan = None;
        self.plan_world = None;
        self.timings_layout = fresh_timings_layout();
    }

    fn index_of(&self, id: SystemId) -> Option<usize> {
        self.entries.iter().position(|e| e.id == id)
    }

    /// Number of systems (and `apply_deferred` points).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the schedule has no system.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Enables a disabled system; its `on_enabled` hooks run at the start of
    /// the next [`run`](Schedule::run). Returns whether it was disabled.
    pub fn enable(&mut self, id: SystemId) -> bool {
        self.set_enabled(id, true)
    }

    /// Disables a system; its `on_disabled` hooks run at the start of the
    /// next [`run`](Schedule::run). Returns whether it was enabled.
    pub fn disable(&mut self, id: SystemId) -> bool {
        self.set_enabled(id, false)
    }

    /// Flips a system between enabled and disabled; returns the new state.
    pub fn toggle(&mut self, id: SystemId) -> bool {
        let enabled = !self.is_enabled(id);
        self.set_enabled(id, enabled);
        enabled
    }

    /// Whether the system is in the schedule and enabled.
    pub fn is_enabled(&self, id: SystemId) -> bool {
        self.index_of(id).is_some_and(|i| self.entries[i].enabled)
    }

    fn set_enabled(&mut self, id: SystemId, enabled: bool) -> bool {
        let Some(i) = self.index_of(id) else { return false };
        if self.entries[i].enabled == enabled {
            return false;
        }
        self.entries[i].enabled = enabled;
        self.pending_hooks.push((id, if enabled { Transition::Enabled } else { Transition::Disabled }));
        true
    }

    /// Removes a system. If it was enabled, its `on_disabled` hooks run at
    /// the start of the next [`run`](Schedule::run). Returns whether it was
    /// in the schedule.
    pub fn remove(&mut self, id: SystemId) -> bool {
        let Some(i) = self.index_of(id) else { return false };
        let entry = self.entries.remove(i);
        self.pending_hooks.retain(|&(pending, _)| pending != id);
        if entry.enabled {
            self.removed.push(entry);
        }
        self.invalidate();
        true
    }

    /// Runs the pending enable/disable hooks now (a run does this first).
    pub fn run_pending_hooks(&mut self, world: &mut World) {
        for mut entry in std::mem::take(&mut self.removed) {
            entry.run_hooks(world, Transition::Disabled);
        }
        for (id, transition) in std::mem::take(&mut self.pending_hooks) {
            if let Some(i) = self.index_of(id) {
                self.entries[i].run_hooks(world, transition);
            }
        }
    }

    /// Orders the systems and prepares them for `world`; a run does this
    /// when the systems changed. Returns the first problem found.
    pub fn build(&mut self, world: &mut World) -> Result<(), ScheduleError> {
        if self.plan.is_some() && self.plan_world == Some(world.id()) {
            return Ok(());
        }
        for entry in &mut self.entries {
            if let Err(conflict) = entry.system.initialize(world) {
                return Err(entry.conflict(conflict));
            }
        }
        for entry in &mut self.entries {
            let mut inherited = Inherited::default();
            for set in self.sets.iter().filter(|set| entry.sets.contains(&set.name)) {
                inherited.conditions.extend(set.conditions.iter().cloned());
                inherited.before.extend(set.before.iter().cloned());
                inherited.after.extend(set.after.iter().cloned());
                inherited.ambiguous_with.extend(set.ambiguous_with.iter().cloned());
                inherited.ambiguous_with_all |= set.ambiguous_with_all;
                inherited.debug |= set.debug;
            }
            entry.inherited = inherited;
        }
        let plan = Plan::build(&self.entries)?;
        self.plan = Some(plan);
        self.plan_world = Some(world.id());
        self.timings_layout = fresh_timings_layout();
        Ok(())
    }

    /// The names of the systems in run order.
    ///
    /// # Panics
    /// As [`run`](Schedule::run), if the schedule cannot be ordered.
    pub fn order(&mut self, world: &mut World) -> Vec<String> {
        self.build_or_panic(world);
        let plan = self.plan.as_ref().expect("built");
        plan.order().iter().map(|&i| self.entries[i].system.name().to_string()).collect()
    }

    /// The ambiguity report: every pair of systems whose accesses conflict
    /// (one writes what the other reads or writes, or one takes `&mut
    /// World`) with no `before`/`after` constraint between them, directly
    /// or through other systems, sets and chains included, and that no
    /// [`ambiguous_with`](SystemConfig::ambiguous_with) accepts. Such a
    /// pair runs in the order priority and insertion order give it, which
    /// no constraint holds: order it before determinism bites (rollback
    /// netcode and replays depend on it). Priorities do not count as an
    /// order (see [`Ambiguities`]). Builds the schedule for `world` first.
    ///
    /// # Errors
    /// What [`build`](Schedule::build) finds, and an `ambiguous_with` that
    /// selects no system ([`ScheduleError::UnknownSystem`]).
    pub fn ambiguities(&mut self, world: &mut World) -> Result<Ambiguities, ScheduleError> {
        self.build(world)?;
        ambiguity::report(&self.entries, world.components())
    }

    #[track_caller]
    fn build_or_panic(&mut self, world: &mut World) {
        if let Err(error) = self.build(world) {
            panic!("{error}");
        }
    }

    /// Runs one frame: every enabled system whose condition holds (only the
    /// `.debug()` ones while [`Time`](crate::Time) is paused), then the
    /// deferred commands, then the end of the frame for events.
    ///
    /// A [`Commands::clear_world`](crate::Commands::clear_world) request
    /// among the commands empties the world once every command of the run
    /// has applied, as [`Schedule::clear_world`] does.
    ///
    /// # Panics
    /// If the schedule cannot be ordered (see [`ScheduleError`]; use
    /// [`build`](Schedule::build) to get it as a `Result`), or if a system
    /// panics.
    pub fn run(&mut self, world: &mut World) {
        self.run_systems(world);
        if crate::system::commands::take_clear_request(world) {
            self.clear_world(world);
        }
        world.update_events();
        if let Some(now) = world.check_change_ticks_if_due() {
            self.check_ticks(now);
        }
    }

    /// The part of [`Schedule::run`] that a stage of a larger frame does:
    /// the systems and their deferred commands, without aging events,
    /// clamping ticks or acting on a clear request, which the owner of the
    /// frame does once for all its schedules.
    pub(crate) fn run_systems(&mut self, world: &mut World) {
        let _span = crate::trace::span!("schedule", format_args!("run {}", self.frames));
        self.run_pending_hooks(world);
        self.build_or_panic(world);
        self.report.clear();
        let plan = self.plan.take().expect("built");
        // Skips are gathered in run order as each system's commands are
        // applied.
        self.skipped.clear();
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            plan.run(
                &mut self.entries,
                world,
                self.single_threaded,
                self.parallel_above,
                &mut self.report,
                &mut self.skipped,
            );
        }));
        if result.is_err() {
            // The skips of a frame cut short stay that frame's: those not
            // gathered yet are listed now, and none is kept for the next
            // frame.
            for &i in plan.order() {
                self.skipped.extend(self.entries[i].skip.take().map(|skip| *skip));
            }
        }
        self.plan = Some(plan);
        if let Err(panic) = result {
            std::panic::resume_unwind(panic);
        }
        if self.warn_skipped && self.report.skipped() > 0 {
            self.warn_skipped_commands();
        }
        if self.warn_skipped_systems && !self.skipped.is_empty() {
            self.warn_skipped_systems();
        }
        self.frames += 1;
    }

    /// Tells every system that the world clamped its stored ticks to `now`.
    pub(crate) fn check_ticks(&mut self, now: Tick) {
        for entry in &mut self.entries {
            entry.system.check_ticks(now);
        }
    }

    /// Empties the world between levels: despawns every entity (old handles
    /// stay stale), drops every pending command and queued event, then runs
    /// every system's `on_clear` hooks in run order, so a hook may spawn
    /// the next level's entities. Resources stay.
    pub fn clear_world(&mut self, world: &mut World) {
        self.prepare_clear(world);
        world.clear();
        world.clear_events();
        self.run_clear_hooks(world);
    }

    /// The first half of [`Schedule::clear_world`]: runs the pending
    /// enable/disable hooks and drops every system's pending commands.
    pub(crate) fn prepare_clear(&mut self, world: &mut World) {
        self.run_pending_hooks(world);
        for entry in &mut self.entries {
            entry.system.discard_deferred();
            entry.pending_deferred = false;
        }
    }

    /// The second half of [`Schedule::clear_world`]: every system's
    /// `on_clear` hooks, in run order.
    pub(crate) fn run_clear_hooks(&mut self, world: &mut World) {
        let order: Vec<usize> = match self.build(world) {
            Ok(()) => self.plan.as_ref().expect("built").order().to_vec(),
            Err(_) => (0..self.entries.len()).collect(),
        };
        for i in order {
            self.entries[i].run_hooks(world, Transition::Cleared);
        }
    }

    /// What the deferred commands of the last run did: how many applied,
    /// how many were skipped because their entity was gone (or, for a
    /// fallible command, failed), and the first few skipped.
    pub fn command_report(&self) -> &CommandReport {
        &self.report
    }

    /// Whether skipped commands are reported as warnings (on by default):
    /// the first time a system's command of one kind is skipped, a warning
    /// names it, through the `log` facade when a logger is installed, else
    /// on standard error. Later skips of the same pair are only counted in
    /// [`Schedule::command_report`]. Turn it off for games that skip on
    /// purpose (despawning what another system may already have
    /// despawned).
    pub fn set_warn_on_skipped_commands(&mut self, warn: bool) -> &mut Self {
        self.warn_skipped = warn;
        self
    }

    /// The systems skipped in the last run, in run order: those whose
    /// [`Single`](crate::Single) found no entity or several, or whose
    /// [`Populated`](crate::Populated) found none. Each system's count over
    /// all runs is [`SystemTiming::skipped`].
    ///
    /// ```
    /// use archetable::prelude::*;
    ///
    /// #[derive(Component)] struct Player;
    /// fn greet(_: Single<&Player>) {}
    ///
    /// let mut world = World::new();
    /// world.spawn(Player);
    /// world.spawn(Player);
    /// let mut schedule = Schedule::new();
    /// schedule.set_warn_on_skipped_systems(false);
    /// schedule.add_system(greet);
    /// schedule.run(&mut world);
    /// let skip = &schedule.skipped_systems()[0];
    /// assert_eq!((skip.system.as_str(), skip.reason), ("greet", QuerySingleError::MultipleEntities));
    /// ```
    pub fn skipped_systems(&self) -> &[SkippedSystem] {
        &self.skipped
    }

    /// Whether skipped systems are reported as warnings (on by default):
    /// the first time a system is skipped by one parameter for one reason,
    /// a warning names them, through the `log` facade when a logger is
    /// installed, else on standard error. Later skips are only counted
    /// ([`Schedule::skipped_systems`], [`SystemTiming::skipped`]). Turn it
    /// off for systems that wait on purpose (a `Populated` of enemies
    /// between waves).
    pub fn set_warn_on_skipped_systems(&mut self, warn: bool) -> &mut Self {
        self.warn_skipped_systems = warn;
        self
    }

    /// Warns about the skipped systems of the last run not warned about yet.
    fn warn_skipped_systems(&mut self) {
        for skip in &self.skipped {
            if self.warned_systems.insert(skip.clone()) {
                crate::entity::error::warn(&format!(
                    "archetable: {skip} (later skips are counted in Schedule::skipped_systems; \
                     Schedule::set_warn_on_skipped_systems(false) silences this)"
                ));
            }
        }
    }

    /// Warns about the skipped commands of the last run not warned about yet.
    fn warn_skipped_commands(&mut self) {
        for skipped in self.report.examples() {
            if !self.warned.insert((skipped.system.clone(), skipped.command)) {
                continue;
            }
            let message = format!(
                "archetable: a deferred command was skipped: {skipped} (later skips of `{}` from this system are \
                 counted in Schedule::command_report; Schedule::set_warn_on_skipped_commands(false) silences this)",
                skipped.command
            );
            crate::entity::error::warn(&message);
        }
    }

    /// Per-system timings (runs, last and mean duration) in run order,
    /// printable as a table: a copy, names included. To read them every
    /// frame without copying, use [`Schedule::system_timings`].
    pub fn timings(&self) -> Timings {
        Timings(self.system_timings().cloned().collect())
    }

    /// A stamp of the list [`Schedule::system_timings`] gives: two equal
    /// stamps, from this schedule or any other, mean the same systems under
    /// the same names in the same order, so a reader that keeps a column
    /// per system (a profiler's chart) can skip matching names while the
    /// stamp stays. Adding or removing a system and each new plan give a
    /// new stamp; a stamp is never given twice in a process.
    ///
    /// ```
    /// # use archetable::{Schedule, World};
    /// let mut world = World::new();
    /// let mut schedule = Schedule::new();
    /// schedule.add_system(|| {});
    /// schedule.run(&mut world);
    /// let stamp = schedule.timings_layout();
    /// schedule.run(&mut world);
    /// assert_eq!(schedule.timings_layout(), stamp);
    /// schedule.add_system(|| {});
    /// assert_ne!(schedule.timings_layout(), stamp);
    /// ```
    pub fn timings_layout(&self) -> u64 {
        self.timings_layout
    }

    /// Each system's timing in run order, borrowed: what a profiler or an
    /// inspector reads every frame, allocating nothing.
    ///
    /// ```
    /// use archetable::prelude::*;
    ///
    /// fn tick() {}
    /// let mut world = World::new();
    /// let mut schedule = Schedule::new();
    /// schedule.add_system(tick);
    /// schedule.run(&mut world);
    /// let runs: Vec<(&str, u64)> = schedule.system_timings().map(|t| (t.name(), t.runs())).collect();
    /// assert_eq!(runs, [("tick", 1)]);
    /// ```
    pub fn system_timings(&self) -> impl Iterator<Item = &SystemTiming> + '_ {
        let planned = self.plan.as_ref().map(|plan| plan.order());
        let unplanned = if planned.is_some() { 0 } else { self.entries.len() };
        planned.into_iter().flatten().copied().chain(0..unplanned).map(move |i| &self.entries[i].timing)
    }

    /// Appends each system's total time in nanoseconds (saturating), in
    /// the order of [`Schedule::system_timings`], to `out`.
    #[cfg(feature = "game-loop")]
    pub(crate) fn push_totals_ns(&self, out: &mut Vec<u64>) {
        let nanos = |e: &Entry| {
            let total = e.timing.total;
            total.as_secs().saturating_mul(1_000_000_000).saturating_add(u64::from(total.subsec_nanos()))
        };
        match &self.plan {
            Some(plan) => {
                let order = plan.order();
                out.reserve(order.len());
                for &i in order {
                    out.push(nanos(&self.entries[i]));
                }
            }
            None => out.extend(self.entries.iter().map(nanos)),
        }
    }

    /// Number of runs so far.
    pub fn frames(&self) -> u64 {
        self.frames
    }
}

/// Options of a system just added to a [`Schedule`].
pub struct SystemConfig<'a> {
    schedule: &'a mut Schedule,
    index: usize,
}

impl SystemConfig<'_> {
    fn entry(&mut self) -> &mut Entry {
        self.schedule.invalidate();
        &mut self.schedule.entries[self.index]
    }

    /// The system's id, for `before`/`after`, `enable`, `disable` and
    /// `remove`.
    pub fn id(&self) -> SystemId {
        self.schedule.entries[self.index].id
    }

    /// Sets the priority: lower runs first. The default is 0.
    pub fn priority(mut self, priority: i32) -> Self {
        self.entry().priority = priority;
        self
    }

    /// Runs this system after the systems `other` selects: an id, a label or
    /// a system function.
    pub fn after<M>(mut self, other: impl IntoSystemSelector<M>) -> Self {
        self.entry().after.push(other.into_selector());
        self
    }

    /// Runs this system before the systems `other` selects.
    pub fn before<M>(mut self, other: impl IntoSystemSelector<M>) -> Self {
        self.entry().before.push(other.into_selector());
        self
    }

    /// Adds a label that constraints can name.
    pub fn label(mut self, label: impl Into<Cow<'static, str>>) -> Self {
        self.entry().labels.push(label.into());
        self
    }

    /// Puts the system in set `set`: it gets the set's conditions and
    /// ordering ([`Schedule::configure_set`]), and constraints naming the
    /// set select it.
    pub fn in_set(mut self, set: impl Into<Cow<'static, str>>) -> Self {
        let set = set.into();
        let entry = self.entry();
        if !entry.sets.contains(&set) {
            entry.sets.push(set);
        }
        self
    }

    /// Accepts the conflicts between this system and the systems `other`
    /// selects (an id, a label or set name, or a system function) with no
    /// order between them: [`Schedule::ambiguities`] leaves those pairs
    /// out. Use it for pairs whose order does not change the outcome (two
    /// systems that only add to a counter). A selector that matches no
    /// system makes the report an error, as a `before`/`after` would.
    ///
    /// ```
    /// use archetable::prelude::*;
    ///
    /// #[derive(Default)] struct Score(u32);
    /// fn coins(mut score: ResMut<Score>) { score.0 += 1 }
    /// fn gems(mut score: ResMut<Score>) { score.0 += 5 }
    ///
    /// let mut world = World::new();
    /// world.init_resource::<Score>();
    /// let mut schedule = Schedule::new();
    /// schedule.add_system(coins);
    /// schedule.add_system(gems);
    /// assert_eq!(schedule.ambiguities(&mut world).unwrap().len(), 1);
    ///
    /// let mut schedule = Schedule::new();
    /// schedule.add_system(coins);
    /// schedule.add_system(gems).ambiguous_with(coins); // adding commutes
    /// assert!(schedule.ambiguities(&mut world).unwrap().is_empty());
    /// ```
    pub fn ambiguous_with<M>(mut self, other: impl IntoSystemSelector<M>) -> Self {
        self.entry().ambiguous_with.push(other.into_selector());
        self
    }

    /// Accepts every conflict of this system with a system it is not
    /// ordered against: [`Schedule::ambiguities`] never names it. For a
    /// system whose order against the others never matters (a debug
    /// overlay that reads everything).
    pub fn ambiguous_with_all(mut self) -> Self {
        self.entry().ambiguous_with_all = true;
        self
    }

    /// Runs this system also while [`Time`](crate::Time) is paused.
    pub fn debug(mut self) -> Self {
        self.entry().debug = true;
        self
    }

    /// Starts the system disabled (no hook runs for that).
    pub fn disabled(mut self) -> Self {
        self.entry().enabled = false;
        self
    }

    /// Runs the system only in frames where `condition` holds: a
    /// [`Condition`] (or `&Condition`, to share one), or a function or
    /// closure `FnMut(&World) -> bool`. Called again, adds another
    /// condition: all must hold. Conditions are checked when the group of
    /// systems around this one starts (the frame, or the part after an
    /// exclusive system or `apply_deferred` point), before any of them
    /// runs; see [`Condition`].
    ///
    /// A closure's parameter needs its type, `|w: &World| ..` (or pass
    /// `Condition::new(|w| ..)`, which infers it): without it the compiler
    /// says "type annotations needed" or "implementation of `FnMut` is not
    /// general enough" (see [`IntoCondition`]).
    pub fn run_if<M>(mut self, condition: impl IntoCondition<M>) -> Self {
        self.entry().conditions.push(condition.into_condition());
        self
    }

    /// Adds a hook that runs when the system goes from disabled to enabled.
    pub fn on_enabled(mut self, hook: impl FnMut(&mut World) + Send + 'static) -> Self {
        self.entry().on_enabled.push(Box::new(hook));
        self
    }

    /// Adds a hook that runs when the system goes from enabled to disabled,
    /// or is removed while enabled.
    pub fn on_disabled(mut self, hook: impl FnMut(&mut World) + Send + 'static) -> Self {
        self.entry().on_disabled.push(Box::new(hook));
        self
    }

    /// Adds a hook that runs after [`Schedule::clear_world`] emptied the
    /// world.
    pub fn on_clear(mut self, hook: impl FnMut(&mut World) + Send + 'static) -> Self {
        self.entry().on_clear.push(Box::new(hook));
        self
    }
}

/// A timings stamp never handed out before in this process.
fn fresh_timings_layout() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}
