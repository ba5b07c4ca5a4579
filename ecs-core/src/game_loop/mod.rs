//! `GameLoop`: the layer above one [`Schedule`]: a world and its stages,
//! run in a fixed order each frame, a fixed-timestep stage fed from the
//! game clock, and states with their transitions.

mod fixed;
mod state;

use std::any::TypeId;
use std::borrow::Cow;
use std::fmt;
use std::time::Duration;

use crate::schedule::{Ambiguities, IntoSystems, Schedule, ScheduleError, SetConfig, SystemConfig, SystemId};
use crate::storage::resource::Resource;
use crate::system::commands::take_clear_request;
use crate::system::IntoSystem;
use crate::world::time::Time;
use crate::world::World;

pub use fixed::FixedTime;
pub use state::{in_state, LoopStarted, NextState, State, States};

use state::{Driver, Side, StateDriver};

/// The name of a [`GameLoop`] stage: one of the four built in, or one of
/// yours (`Stage::from("ui")`, or just `"ui"` where an `impl Into<Stage>`
/// is taken).
///
/// ```
/// use archetable::Stage;
///
/// assert_eq!(Stage::from("ui"), Stage::Custom("ui".into()));
/// assert_eq!(Stage::FixedUpdate.to_string(), "fixed_update");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Stage {
    /// Runs once, before the first frame.
    Startup,
    /// Runs zero or more times per frame, once per fixed step (see
    /// [`FixedTime`]).
    FixedUpdate,
    /// Runs once per frame, after the fixed steps.
    Update,
    /// Runs once per frame, last.
    LateUpdate,
    /// A stage of yours, added with [`GameLoop::add_stage_after`] or
    /// [`GameLoop::add_stage_before`]; runs once per frame.
    Custom(Cow<'static, str>),
}

impl From<&'static str> for Stage {
    fn from(name: &'static str) -> Self {
        Stage::Custom(Cow::Borrowed(name))
    }
}

impl From<String> for Stage {
    fn from(name: String) -> Self {
        Stage::Custom(Cow::Owned(name))
    }
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Stage::Startup => "startup",
            Stage::FixedUpdate => "fixed_update",
            Stage::Update => "update",
            Stage::LateUpdate => "late_update",
            Stage::Custom(name) => name,
        })
    }
}

/// A world and the stages that run it, frame by frame.
///
/// ```
/// use std::time::Duration;
/// use archetable::prelude::*;
///
/// #[derive(Component)] struct Position(f32);
/// #[derive(Component)] struct Velocity(f32);
///
/// fn physics(mut bodies: Query<(&mut Position, &Velocity)>, fixed: Res<FixedTime>) {
///     for (mut pos, vel) in bodies.iter_mut() {
///         pos.0 += vel.0 * fixed.step_secs();
///     }
/// }
///
/// let mut game = GameLoop::new();
/// game.set_fixed_step(Duration::from_millis(10));
/// game.add_system(Stage::Startup, |mut commands: Commands| {
///     commands.spawn((Position(0.0), Velocity(1.0)));
/// });
/// game.add_system(Stage::FixedUpdate, physics);
/// game.advance(Duration::from_millis(25)); // two 10 ms steps, 5 ms left over
/// assert_eq!(game.fixed_time().steps_this_frame(), 2);
/// assert_eq!(game.alpha(), 0.5);
/// let x = game.world_mut().query::<&Position>().next().unwrap().0;
/// assert!((x - 0.02).abs() < 1e-6);
/// ```
///
/// # A frame
/// [`advance`](GameLoop::advance) runs one frame, in this order:
/// 1. the first time only, [`startup`](GameLoop::startup): the
///    [`Stage::Startup`] schedule, then each state's `on_enter` systems for
///    its initial value;
/// 2. [`Time`] moves on by the frame's real duration (scaled, and zero
///    while paused), and [`FixedTime`] adds that scaled time to its
///    accumulator and plans the frame's fixed steps;
/// 3. the stages in order: [`Stage::FixedUpdate`] once per planned step,
///    then [`Stage::Update`], then [`Stage::LateUpdate`], with your stages
///    where you put them;
/// 4. the *transition point*, right after `update` (before any stage that
///    follows it): for each state type in the order they were added, a
///    pending [`NextState`] request for another value runs the old value's
///    `on_exit` systems, makes the new value current, then runs its
///    `on_enter` systems;
/// 5. events age by one frame ([`World::update_events`]), once for the
///    whole frame, so an event sent in any stage is readable by every stage
///    until the end of the next frame.
///
/// Each stage is a [`Schedule`], with everything a schedule does
/// (ordering, parallel groups, `run_if`, `debug`, `apply_deferred`). The
/// deferred commands of a stage apply at its end, so the next stage (and
/// the next fixed step) sees them; the `on_exit` and `on_enter` systems of
/// a transition are schedules too, and their commands apply before the
/// next one runs.
///
/// While [`Time`] is paused, game time stands still: no fixed step runs,
/// and the other stages run only their `.debug()` systems.
///
/// # Saving and resuming
/// A world saved between frames (with the `serde` feature, its states
/// registered with `register_serde_state`) and loaded into a fresh world
/// goes on in a loop built by [`GameLoop::resume`], with the same systems,
/// stages and states as the loop that saved it: the loaded states stay
/// current, their `on_enter` systems do not run again, and the startup
/// stage does not run (it built what the save holds). A save made before
/// the loop's first frame (an autosave at level start: the world's
/// [`LoopStarted`] is still false) resumes like that first frame instead:
/// the startup stage runs and the loaded states are entered. Set up what a save
/// does not hold in code both paths run: [`GameLoop::init_resource`]
/// keeps a loaded value, [`GameLoop::insert_resource`] replaces it.
///
/// # Level resets
/// [`Commands::clear_world`](crate::Commands::clear_world) in any stage,
/// or in an `on_exit`/`on_enter` system, empties the world once that
/// schedule's commands applied, as [`GameLoop::clear_world`] does, and the
/// frame goes on with the next stage.
pub struct GameLoop {
    world: World,
    startup: Schedule,
    /// The per-frame stages, in run order.
    stages: Vec<(Stage, Schedule)>,
    started: bool,
    single_threaded: bool,
    parallel_above: Option<Duration>,
    /// One driver per state type, in the order they were added.
    states: Vec<Box<dyn StateDriver>>,
    /// The `on_enter` and `on_exit` schedules, which the drivers index.
    state_schedules: Vec<Schedule>,
    /// Built by [`GameLoop::resume`]: the world is a saved game going on.
    resumed: bool,
    /// Built by [`GameLoop::resume`] over a world saved before its loop's
    /// startup ([`LoopStarted`] false): startup runs as in a fresh game,
    /// and the loaded states are entered then.
    resumed_before_startup: bool,
    /// Each schedule's system totals, copied at the end of each frame
    /// while [`GameLoop::keep_system_totals`] is on.
    totals: Option<Box<LoopTotals>>,
}

/// The systems' totals of every schedule of a loop, side by side (see
/// [`GameLoop::system_totals`]).
#[derive(Default)]
struct LoopTotals {
    /// Each schedule's [`Schedule::timings_layout`] at the copy, startup
    /// first.
    stamps: Vec<u64>,
    /// Each system's total in nanoseconds, schedule after schedule.
    ns: Vec<u64>,
}

impl LoopTotals {
    fn copy<'a>(&mut self, schedules: impl Iterator<Item = &'a Schedule>) {
        self.stamps.clear();
        self.ns.clear();
        for schedule in schedules {
            self.stamps.push(schedule.timings_layout());
            schedule.push_totals_ns(&mut self.ns);
        }
    }
}

impl Default for GameLoop {
    fn default() -> Self {
        GameLoop::new()
    }
}

impl fmt::Debug for GameLoop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GameLoop")
            .field("stages", &self.stages.iter().map(|(stage, _)| stage.to_string()).collect::<Vec<_>>())
            .field("started", &self.started)
            .field("resumed", &self.resumed)
            .field("entities", &self.world.len())
            .finish_non_exhaustive()
    }
}

impl GameLoop {
    /// A loop over an empty world, whose stages run non-conflicting systems
    /// in parallel.
    pub fn new() -> Self {
        GameLoop::with_world(World::new())
    }

    /// A loop over an empty world whose stages run one system at a time:
    /// the same results as [`GameLoop::new`], on the calling thread.
    pub fn single_threaded() -> Self {
        let mut game = GameLoop::new();
        game.set_single_threaded(true);
        game
    }

    /// Makes every schedule of the loop (those of stages and states added
    /// later included) run one system at a time (`true`) or spread
    /// non-conflicting systems over the thread pool (`false`, the default
    /// of [`GameLoop::new`]); the results are the same either way.
    pub fn set_single_threaded(&mut self, single_threaded: bool) -> &mut Self {
        self.single_threaded = single_threaded;
        for schedule in self.schedules_mut() {
            schedule.set_single_threaded(single_threaded);
        }
        self
    }

    /// A loop over `world`, which keeps its entities and resources; adds a
    /// [`FixedTime`] (1/60 s) and a [`Time`] unless it has them, and marks
    /// the world's [`LoopStarted`] false until [`startup`](GameLoop::startup).
    pub fn with_world(mut world: World) -> Self {
        world.init_resource::<Time>();
        world.init_resource::<FixedTime>();
        world.insert_resource(LoopStarted::default());
        GameLoop {
            world,
            startup: Schedule::new(),
            stages: vec![
                (Stage::FixedUpdate, Schedule::new()),
                (Stage::Update, Schedule::new()),
                (Stage::LateUpdate, Schedule::new()),
            ],
            started: false,
            single_threaded: false,
            parallel_above: None,
            states: Vec::new(),
            state_schedules: Vec::new(),
            resumed: false,
            resumed_before_startup: false,
            totals: None,
        }
    }

    /// A loop that goes on with a saved game: `world` was loaded from a
    /// save (see `archetable::data`). Build it as the loop that saved the
    /// world was built (the same systems, stages, states, fixed step);
    /// then, unlike [`GameLoop::with_world`]:
    /// - [`add_state`](GameLoop::add_state) keeps the world's `State<S>`
    ///   and `NextState<S>` (a request pending in the save applies at the
    ///   next transition point), and takes the state as entered: its
    ///   `on_enter` systems do not run again. A state the world does not
    ///   hold starts at the initial value given and is entered at startup,
    ///   as in a fresh game;
    /// - [`startup`](GameLoop::startup) skips the [`Stage::Startup`]
    ///   systems, which built what the save holds.
    ///
    /// A world saved before its loop's startup (its [`LoopStarted`] is
    /// false: an autosave made right after building the loop) resumes like
    /// the first frame of that loop instead: the startup systems run and the
    /// loaded states are entered, their `on_enter` systems included. A world
    /// without a `LoopStarted` (a save from before the loop kept one) counts
    /// as started.
    ///
    /// A loop resumed from a save made between two frames of a loop gives,
    /// frame by frame, the same entities, components and resources as that
    /// loop going on, as long as what the systems depend on was saved
    /// (registered components and resources, states), not kept elsewhere:
    /// a system's `Local`s, events still queued, change ticks (the first
    /// frame sees every value as added and changed).
    ///
    /// ```
    /// use std::time::Duration;
    /// use archetable::prelude::*;
    ///
    /// #[derive(States, Clone, Copy, PartialEq, Eq, Hash, Debug)]
    /// enum Phase { Playing, Over }
    /// #[derive(Component)] struct Rock;
    ///
    /// fn build(mut game: GameLoop) -> GameLoop {
    ///     game.add_state(Phase::Playing);
    ///     game.on_enter(Phase::Playing, |mut commands: Commands| {
    ///         commands.spawn(Rock);
    ///     });
    ///     game
    /// }
    ///
    /// let mut game = build(GameLoop::new());
    /// game.advance(Duration::from_millis(16));
    /// let world = game.into_world(); // a loaded save stands in for it here
    /// let mut resumed = build(GameLoop::resume(world));
    /// resumed.advance(Duration::from_millis(16));
    /// assert_eq!(resumed.world_mut().query::<&Rock>().count(), 1); // not rebuilt
    /// assert_eq!(resumed.state::<Phase>(), Some(&Phase::Playing));
    /// ```
    pub fn resume(world: World) -> Self {
        let started = world.get_resource::<LoopStarted>().is_none_or(|started| started.get());
        let mut game = GameLoop::with_world(world);
        game.world.insert_resource(LoopStarted(started));
        game.resumed = true;
        game.resumed_before_startup = !started;
        game
    }

    /// Whether the loop was built by [`GameLoop::resume`].
    pub fn is_resumed(&self) -> bool {
        self.resumed
    }

    /// Inserts resource `value`, replacing the world's (a loaded one too);
    /// the same as `world_mut().insert_resource(value)`.
    pub fn insert_resource<R: Resource>(&mut self, value: R) -> &mut Self {
        self.world.insert_resource(value);
        self
    }

    /// Inserts `R::default()` unless the world has an `R` (a loaded one
    /// stays); the same as `world_mut().init_resource::<R>()`.
    pub fn init_resource<R: Resource + Default>(&mut self) -> &mut Self {
        self.world.init_resource::<R>();
        self
    }

    /// Adds a global observer of event `E` to the world, as
    /// [`World::observe`] does; returns its id. Observers are part of the
    /// world, not of a stage: they run whenever `E` is triggered, from any
    /// stage's systems or commands.
    ///
    /// The order of commands and triggers: a system's commands apply in the
    /// order they were recorded, and a trigger recorded through
    /// [`Commands::trigger`](crate::Commands::trigger) or
    /// [`trigger_targets`](crate::Commands::trigger_targets) runs its
    /// observers at its place in that order. An observer that needs an
    /// entity the same system despawns must be triggered before the
    /// despawn:
    ///
    /// ```
    /// use archetable::prelude::*;
    ///
    /// #[derive(Component)] struct Rock;
    /// #[derive(Component)] struct Bullet { owner: u32 }
    /// struct Hit { by: Entity }
    /// #[derive(Default)] struct Credit(Vec<u32>);
    ///
    /// fn collide(bullets: Query<Entity, With<Bullet>>, rocks: Query<Entity, With<Rock>>, mut commands: Commands) {
    ///     for (bullet, rock) in bullets.iter().zip(rocks.iter()) {
    ///         // Trigger first: the observer still finds the bullet.
    ///         commands.trigger_targets(Hit { by: bullet }, rock);
    ///         commands.despawn(bullet);
    ///     }
    /// }
    ///
    /// let mut game = GameLoop::new();
    /// game.init_resource::<Credit>();
    /// game.observe(|hit: Trigger<Hit>, bullets: Query<&Bullet>, mut credit: ResMut<Credit>| {
    ///     // With the despawn recorded first, this would find no bullet.
    ///     if let Ok(bullet) = bullets.get(hit.by) {
    ///         credit.0.push(bullet.owner);
    ///     }
    /// });
    /// game.add_system(Stage::Update, collide);
    /// game.world_mut().spawn(Rock);
    /// game.world_mut().spawn(Bullet { owner: 7 });
    /// game.advance(std::time::Duration::from_millis(16));
    /// assert_eq!(game.world().resource::<Credit>().0, [7]);
    /// ```
    ///
    /// # Panics
    /// If two of the observer's parameters would alias (`error[E0002]`).
    #[cfg(feature = "observers")]
    #[track_caller]
    pub fn observe<E: crate::world::event::Event, M>(
        &mut self,
        observer: impl crate::IntoObserver<E, M>,
    ) -> crate::ObserverId {
        self.world.observe(observer)
    }

    fn new_schedule(&self) -> Schedule {
        let mut schedule = if self.single_threaded { Schedule::single_threaded() } else { Schedule::new() };
        if let Some(threshold) = self.parallel_above {
            schedule.set_parallel_threshold(threshold);
        }
        schedule
    }

    /// Every schedule of the loop: startup, the stages in run order, then
    /// the state schedules in the order they were made.
    fn schedules_mut(&mut self) -> impl Iterator<Item = &mut Schedule> {
        std::iter::once(&mut self.startup)
            .chain(self.stages.iter_mut().map(|(_, schedule)| schedule))
            .chain(self.state_schedules.iter_mut())
    }

    /// Sets every schedule's parallel threshold (see
    /// [`Schedule::set_parallel_threshold`]), those of stages and states
    /// added later included. `Duration::ZERO` spreads every group of
    /// systems that can overlap over the thread pool.
    pub fn set_parallel_threshold(&mut self, parallel_above: Duration) -> &mut Self {
        self.parallel_above = Some(parallel_above);
        for schedule in self.schedules_mut() {
            schedule.set_parallel_threshold(parallel_above);
        }
        self
    }

    /// The world.
    #[inline]
    pub fn world(&self) -> &World {
        &self.world
    }

    /// The world, mutably.
    #[inline]
    pub fn world_mut(&mut self) -> &mut World {
        &mut self.world
    }

    /// Ends the loop, handing back its world.
    pub fn into_world(self) -> World {
        self.world
    }

    /// The per-frame stages in run order ([`Stage::Startup`], which runs
    /// once, is not among them).
    ///
    /// ```
    /// use archetable::{GameLoop, Stage};
    ///
    /// let mut game = GameLoop::new();
    /// game.add_stage_after(Stage::Update, "ui");
    /// let names: Vec<String> = game.stages().map(|s| s.to_string()).collect();
    /// assert_eq!(names, ["fixed_update", "update", "ui", "late_update"]);
    /// ```
    pub fn stages(&self) -> impl Iterator<Item = &Stage> {
        self.stages.iter().map(|(stage, _)| stage)
    }

    /// Every stage with its schedule: startup first, then the per-frame
    /// stages in run order. For a reader that visits them all each frame
    /// (a profiler), without a lookup per stage.
    ///
    /// ```
    /// # use archetable::{GameLoop, Stage};
    /// let game = GameLoop::new();
    /// let stages: Vec<&Stage> = game.schedules().map(|(stage, _)| stage).collect();
    /// assert_eq!(stages[0], &Stage::Startup);
    /// assert_eq!(stages.len(), game.stages().count() + 1);
    /// ```
    pub fn schedules(&self) -> impl Iterator<Item = (&Stage, &Schedule)> {
        std::iter::once((&Stage::Startup, &self.startup)).chain(self.stages.iter().map(|(stage, s)| (stage, s)))
    }

    fn position(&self, stage: &Stage) -> Option<usize> {
        self.stages.iter().position(|(s, _)| s == stage)
    }

    #[track_caller]
    fn position_or_panic(&self, stage: &Stage) -> usize {
        self.position(stage).unwrap_or_else(|| {
            let known: Vec<String> = self.stages().map(ToString::to_string).collect();
            panic!("the game loop has no stage `{stage}` (its stages: startup, {})", known.join(", "))
        })
    }

    /// The schedule of `stage`.
    ///
    /// # Panics
    /// If the loop has no such stage.
    #[track_caller]
    pub fn stage(&self, stage: impl Into<Stage>) -> &Schedule {
        let stage = stage.into();
        if stage == Stage::Startup {
            return &self.startup;
        }
        &self.stages[self.position_or_panic(&stage)].1
    }

    /// The schedule of `stage`, mutably: to add systems with their
    /// options, or an `apply_deferred` point.
    ///
    /// # Panics
    /// If the loop has no such stage.
    #[track_caller]
    pub fn stage_mut(&mut self, stage: impl Into<Stage>) -> &mut Schedule {
        let stage = stage.into();
        if stage == Stage::Startup {
            return &mut self.startup;
        }
        let i = self.position_or_panic(&stage);
        &mut self.stages[i].1
    }

    /// The ambiguity report of every stage ([`Schedule::ambiguities`]):
    /// startup first, then the per-frame stages in run order, each with its
    /// report (empty when its systems are all ordered where they
    /// conflict). Then the `on_enter` and `on_exit` systems: for each state
    /// type in the order added, a report per state's `on_enter`
    /// systems, then per state's `on_exit` systems, labelled
    /// `Stage::Custom("on_enter(Playing)")` (the state's `Debug`); those
    /// labels name no stage to add systems to. Systems of different
    /// stages, or of different transitions, never overlap, so only pairs
    /// within one are reported.
    ///
    /// ```
    /// use archetable::prelude::*;
    ///
    /// #[derive(Default)] struct Score(u32);
    /// fn coins(mut score: ResMut<Score>) { score.0 += 1 }
    /// fn double(mut score: ResMut<Score>) { score.0 *= 2 }
    ///
    /// let mut game = GameLoop::new();
    /// game.init_resource::<Score>();
    /// game.add_system(Stage::Update, coins);
    /// game.add_system(Stage::Update, double);
    /// game.add_system(Stage::LateUpdate, coins);
    /// let report = game.ambiguities().unwrap();
    /// let names: Vec<String> = report.iter().filter(|(_, r)| !r.is_empty()).map(|(s, _)| s.to_string()).collect();
    /// assert_eq!(names, ["update"]);
    /// assert_eq!(report[2].1.to_string().lines().nth(1), Some("  `coins` and `double` both write `Score`"));
    /// ```
    ///
    /// # Errors
    /// The first stage's error that [`Schedule::ambiguities`] finds.
    pub fn ambiguities(&mut self) -> Result<Vec<(Stage, Ambiguities)>, ScheduleError> {
        let mut reports = vec![(Stage::Startup, self.startup.ambiguities(&mut self.world)?)];
        for (stage, schedule) in &mut self.stages {
            reports.push((stage.clone(), schedule.ambiguities(&mut self.world)?));
        }
        let transitions: Vec<(String, usize)> = self.states.iter().flat_map(|driver| driver.schedules()).collect();
        for (label, i) in transitions {
            reports.push((Stage::Custom(Cow::Owned(label)), self.state_schedules[i].ambiguities(&mut self.world)?));
        }
        Ok(reports)
    }

    /// Adds `system` to `stage`; configure it through the returned
    /// [`SystemConfig`] as in a [`Schedule`].
    ///
    /// # Panics
    /// If the loop has no such stage, or as [`Schedule::add_system`].
    #[track_caller]
    pub fn add_system<M>(&mut self, stage: impl Into<Stage>, system: impl IntoSystem<M>) -> SystemConfig<'_> {
        self.stage_mut(stage).add_system(system)
    }

    /// Adds several systems to `stage` at once, with the options they
    /// share (see [`IntoSystems`] and [`Schedule::add_systems`]); returns
    /// their ids in the order written.
    ///
    /// ```
    /// use archetable::prelude::*;
    ///
    /// #[derive(States, Clone, Copy, PartialEq, Eq, Hash, Debug)]
    /// enum Phase { Playing, Over }
    /// #[derive(Default)] struct Trace(Vec<&'static str>);
    ///
    /// fn thrust(mut t: ResMut<Trace>) { t.0.push("thrust") }
    /// fn integrate(mut t: ResMut<Trace>) { t.0.push("integrate") }
    /// fn collide(mut t: ResMut<Trace>) { t.0.push("collide") }
    ///
    /// let mut game = GameLoop::new();
    /// game.add_state(Phase::Playing).init_resource::<Trace>();
    /// game.add_systems(Stage::Update, (thrust, integrate, collide).chain().run_if(in_state(Phase::Playing)));
    /// game.advance(std::time::Duration::from_millis(16));
    /// assert_eq!(game.world().resource::<Trace>().0, ["thrust", "integrate", "collide"]);
    /// ```
    ///
    /// # Panics
    /// If the loop has no such stage, or as [`Schedule::add_systems`].
    #[track_caller]
    pub fn add_systems<M>(&mut self, stage: impl Into<Stage>, systems: impl IntoSystems<M>) -> Vec<SystemId> {
        self.stage_mut(stage).add_systems(systems)
    }

    /// The options of set `name` in `stage` (see
    /// [`Schedule::configure_set`]); a set belongs to one stage.
    ///
    /// # Panics
    /// If the loop has no such stage.
    #[track_caller]
    pub fn configure_set(
        &mut self,
        stage: impl Into<Stage>,
        name: impl Into<std::borrow::Cow<'static, str>>,
    ) -> SetConfig<'_> {
        self.stage_mut(stage).configure_set(name)
    }

    /// Adds stage `name` to run right after `anchor` each frame; returns
    /// its schedule. After [`Stage::FixedUpdate`] means once per frame
    /// after the fixed steps: only `fixed_update` runs at the fixed rate.
    ///
    /// # Panics
    /// If `anchor` is not a per-frame stage of the loop (it is
    /// [`Stage::Startup`], or unknown), or if a stage of that name exists
    /// (built-in names included: `"update"` is taken).
    #[track_caller]
    pub fn add_stage_after(&mut self, anchor: impl Into<Stage>, name: impl Into<Stage>) -> &mut Schedule {
        let at = self.insertion_point(anchor.into()) + 1;
        self.insert_stage(at, name.into())
    }

    /// Adds stage `name` to run right before `anchor` each frame; returns
    /// its schedule.
    ///
    /// # Panics
    /// As [`GameLoop::add_stage_after`].
    #[track_caller]
    pub fn add_stage_before(&mut self, anchor: impl Into<Stage>, name: impl Into<Stage>) -> &mut Schedule {
        let at = self.insertion_point(anchor.into());
        self.insert_stage(at, name.into())
    }

    #[track_caller]
    fn insertion_point(&self, anchor: Stage) -> usize {
        assert!(anchor != Stage::Startup, "stages run each frame, so none can be placed around `startup`");
        self.position_or_panic(&anchor)
    }

    #[track_caller]
    fn insert_stage(&mut self, at: usize, name: Stage) -> &mut Schedule {
        // By name, so that `Stage::from("update")` cannot stand beside
        // `Stage::Update` and make messages ambiguous.
        let label = name.to_string();
        let taken = label == "startup" || self.stages.iter().any(|(stage, _)| stage.to_string() == label);
        assert!(!taken, "the game loop already has a stage `{label}`");
        let schedule = self.new_schedule();
        self.stages.insert(at, (name, schedule));
        &mut self.stages[at].1
    }

    /// The fixed-step clock: the [`FixedTime`] resource.
    ///
    /// # Panics
    /// If it was removed from the world.
    pub fn fixed_time(&self) -> &FixedTime {
        self.world.resource::<FixedTime>()
    }

    /// Sets the fixed step (1/60 s by default) from the next frame on.
    ///
    /// # Panics
    /// If `step` is zero.
    pub fn set_fixed_step(&mut self, step: Duration) -> &mut Self {
        self.fixed_mut().set_step(step);
        self
    }

    /// Sets the most fixed steps one frame runs (8 by default); the steps
    /// due beyond it are dropped and counted in [`FixedTime`].
    ///
    /// # Panics
    /// If `max` is zero.
    pub fn set_max_fixed_steps(&mut self, max: u32) -> &mut Self {
        self.fixed_mut().set_max_steps_per_frame(max);
        self
    }

    fn fixed_mut(&mut self) -> &mut FixedTime {
        if !self.world.contains_resource::<FixedTime>() {
            self.world.insert_resource(FixedTime::default());
        }
        self.world.resource_mut::<FixedTime>()
    }

    /// How far the present is between the last fixed step and the next,
    /// in `[0, 1)`: [`FixedTime::alpha`], for rendering.
    pub fn alpha(&self) -> f64 {
        self.world.get_resource::<FixedTime>().map_or(0.0, FixedTime::alpha)
    }

    /// Makes `S` a state of the game, starting at `initial`: inserts the
    /// [`State<S>`] and [`NextState<S>`] resources. The `on_enter`
    /// systems of `initial` run at startup (or, for a state added after
    /// startup, at the next transition point).
    ///
    /// In a loop built by [`GameLoop::resume`], a `State<S>` the world
    /// holds (a loaded one) stays, with its `NextState<S>`, and counts as
    /// entered (unless the world was saved before its loop's startup: then
    /// it is entered at startup). A resumed world that holds no `State<S>`
    /// (the save did not register it) starts at `initial`, whose `on_enter`
    /// systems then run over the loaded world: that warns, naming
    /// `register_serde_state`. Elsewhere the world's `State<S>` is replaced
    /// by `initial`, with a warning before startup, since that is how a
    /// loaded game is started over by mistake.
    pub fn add_state<S: States>(&mut self, initial: S) -> &mut Self {
        let held = self.world.get_resource::<State<S>>().map(|state| state.get().clone());
        match held {
            Some(_) if self.resumed => {
                self.world.init_resource::<NextState<S>>();
                let entered = !self.resumed_before_startup;
                let driver = self.driver::<S>();
                if entered {
                    driver.resume();
                }
            }
            _ => {
                if held.is_none() && self.resumed && !self.resumed_before_startup && !self.started {
                    crate::entity::error::warn(&format!(
                        "archetable: GameLoop::resume over a world that holds no `State<{}>`: the initial state \
                         {initial:?} is entered at startup and its on_enter systems run over the loaded world; to \
                         keep the saved state, register it before saving with \
                         `world.register_serde_state::<{}>(name)`",
                        std::any::type_name::<S>(),
                        crate::names::short_type_name(std::any::type_name::<S>())
                    ));
                }
                if let (Some(held), false) = (held, self.started) {
                    crate::entity::error::warn(&format!(
                        "archetable: GameLoop::add_state replaces the world's `State<{}>` ({held:?}) with the \
                         initial state {initial:?}, whose on_enter systems run at startup; to go on with a loaded \
                         game, build the loop with GameLoop::resume",
                        std::any::type_name::<S>()
                    ));
                }
                self.world.insert_resource(state::state(initial));
                self.world.insert_resource(NextState::<S>::default());
                self.driver::<S>();
            }
        }
        self
    }

    /// The current value of state `S`, if it was added.
    pub fn state<S: States>(&self) -> Option<&S> {
        self.world.get_resource::<State<S>>().map(State::get)
    }

    fn driver<S: States>(&mut self) -> &mut Driver<S> {
        let i = match self.states.iter().position(|d| d.state_type() == TypeId::of::<S>()) {
            Some(i) => i,
            None => {
                self.states.push(Box::new(Driver::<S>::default()));
                self.states.len() - 1
            }
        };
        self.states[i].as_any_mut().downcast_mut::<Driver<S>>().expect("a driver per state type")
    }

    fn state_schedule<S: States>(&mut self, state: S, side: Side) -> &mut Schedule {
        let i = match self.driver::<S>().schedule(&state, side) {
            Some(i) => i,
            None => {
                let i = self.state_schedules.len();
                let schedule = self.new_schedule();
                self.state_schedules.push(schedule);
                self.driver::<S>().set_schedule(state, side, i);
                i
            }
        };
        &mut self.state_schedules[i]
    }

    /// Adds `system` to run once each time the game enters `state`: after
    /// the `on_exit` systems of the state it leaves, with [`State<S>`]
    /// already `state`. The initial state is entered at startup.
    ///
    /// ```
    /// use archetable::prelude::*;
    ///
    /// #[derive(States, Clone, Copy, PartialEq, Eq, Hash, Debug)]
    /// enum Screen { Menu, Playing }
    /// #[derive(Component)] struct Button;
    ///
    /// let mut game = GameLoop::new();
    /// game.add_state(Screen::Menu);
    /// game.on_enter(Screen::Menu, |mut commands: Commands| {
    ///     commands.spawn(Button);
    /// });
    /// game.startup();
    /// assert_eq!(game.world_mut().query::<&Button>().count(), 1);
    /// ```
    pub fn on_enter<S: States, M>(&mut self, state: S, system: impl IntoSystem<M>) -> SystemConfig<'_> {
        self.state_schedule(state, Side::Enter).add_system(system)
    }

    /// Adds `system` to run once each time the game leaves `state`, with
    /// [`State<S>`] still `state`.
    pub fn on_exit<S: States, M>(&mut self, state: S, system: impl IntoSystem<M>) -> SystemConfig<'_> {
        self.state_schedule(state, Side::Exit).add_system(system)
    }

    /// Whether [`startup`](GameLoop::startup) ran.
    pub fn has_started(&self) -> bool {
        self.started
    }

    /// Runs the startup stage, then enters every state's initial value;
    /// does nothing after the first call. The first
    /// [`advance`](GameLoop::advance) calls it; call it yourself to set up
    /// the world before the first frame. In a loop built by
    /// [`GameLoop::resume`], the startup stage does not run, and only the
    /// states the loaded world did not hold are entered.
    pub fn startup(&mut self) {
        if std::mem::replace(&mut self.started, true) {
            return;
        }
        self.world.insert_resource(LoopStarted(true));
        if !self.resumed || self.resumed_before_startup {
            {
                let _span = crate::trace::span!("stage", Stage::Startup);
                self.startup.run_systems(&mut self.world);
            }
            if take_clear_request(&mut self.world) {
                self.clear_world();
            }
        }
        // Only entering here: a request made during startup (or pending in
        // a save) waits for the first frame's transition point.
        self.apply_transitions_where(|driver| !driver.entered());
    }

    /// Runs one frame that took `real_dt` of real time; see
    /// [`GameLoop`] for what a frame does, in which order.
    ///
    /// Any `real_dt`, up to [`Duration::MAX`], and any scale
    /// [`Time::set_scale`] accepts are fine: the clocks saturate instead of
    /// overflowing (see [`Time::advance`] and [`FixedTime::accumulate`]),
    /// and at most [`FixedTime::max_steps_per_frame`] fixed steps run.
    ///
    /// # Panics
    /// If a stage cannot be ordered or a system panics (see
    /// [`Schedule::run`]); never on account of time.
    pub fn advance(&mut self, real_dt: Duration) {
        self.startup();
        let _span = crate::trace::span!("frame", format_args!("{real_dt:?}"));
        let delta = match self.world.get_resource_mut::<Time>() {
            Some(time) => {
                time.advance(real_dt);
                time.delta()
            }
            None => {
                let mut time = Time::default();
                time.advance(real_dt);
                let delta = time.delta();
                self.world.insert_resource(time);
                delta
            }
        };
        let steps = self.fixed_mut().accumulate(delta);
        for i in 0..self.stages.len() {
            match self.stages[i].0 {
                Stage::FixedUpdate => {
                    for _ in 0..steps {
                        self.run_stage(i);
                        self.fixed_mut().finish_step();
                    }
                }
                Stage::Update => {
                    self.run_stage(i);
                    self.apply_transitions();
                }
                _ => self.run_stage(i),
            }
        }
        self.world.update_events();
        if let Some(now) = self.world.check_change_ticks_if_due() {
            for schedule in self.schedules_mut() {
                schedule.check_ticks(now);
            }
        }
        if let Some(totals) = &mut self.totals {
            totals.copy(std::iter::once(&self.startup).chain(self.stages.iter().map(|(_, s)| s)));
        }
    }

    /// Keeps (or stops keeping) a copy of every system's total time, made
    /// at the end of each [`GameLoop::advance`] while the timings are in
    /// cache, side by side in one buffer: for a reader that samples the
    /// systems' times every frame (a profiler's chart), which then reads
    /// one slice instead of visiting each schedule and system. Off by
    /// default; a frame costs a few nanoseconds per system more while on.
    pub fn keep_system_totals(&mut self, on: bool) -> &mut Self {
        self.totals = on.then(Box::default);
        self
    }

    /// The copy kept by [`GameLoop::keep_system_totals`], as of the end of
    /// the last frame: each schedule's [`Schedule::timings_layout`] stamp
    /// (startup first, then the stages in run order, as
    /// [`GameLoop::schedules`] lists them), and each system's total time
    /// in nanoseconds (saturating), schedule after schedule, each in the
    /// order of [`Schedule::system_timings`]. `None` while off, or before
    /// the first frame since it was turned on. The copy stays as it was
    /// until the next frame: a reader compares the stamps with the
    /// schedules' own to know it lists the systems they list.
    ///
    /// ```
    /// # use archetable::{GameLoop, Stage};
    /// # use std::time::Duration;
    /// let mut game = GameLoop::new();
    /// game.add_systems(Stage::Update, (|| {}, || {}));
    /// game.keep_system_totals(true);
    /// assert!(game.system_totals().is_none());
    /// game.advance(Duration::from_millis(16));
    /// let (stamps, totals) = game.system_totals().unwrap();
    /// let mine: Vec<u64> = game.schedules().map(|(_, s)| s.timings_layout()).collect();
    /// assert_eq!(stamps, &mine[..]);
    /// let each: Vec<u64> = game
    ///     .schedules()
    ///     .flat_map(|(_, s)| s.system_timings().map(|t| t.total().as_nanos() as u64))
    ///     .collect();
    /// assert_eq!((totals.len(), totals), (2, &each[..]));
    /// ```
    pub fn system_totals(&self) -> Option<(&[u64], &[u64])> {
        let totals = self.totals.as_deref()?;
        (!totals.stamps.is_empty()).then_some((&totals.stamps[..], &totals.ns[..]))
    }

    fn run_stage(&mut self, i: usize) {
        let _span = crate::trace::span!("stage", self.stages[i].0);
        self.stages[i].1.run_systems(&mut self.world);
        if take_clear_request(&mut self.world) {
            self.clear_world();
        }
    }

    fn run_state_schedule(&mut self, i: usize) {
        self.state_schedules[i].run_systems(&mut self.world);
        if take_clear_request(&mut self.world) {
            self.clear_world();
        }
    }

    /// The transition point: for each state type in order, exit, switch,
    /// enter.
    fn apply_transitions(&mut self) {
        self.apply_transitions_where(|_| true);
    }

    /// The transition point for the state types `which` picks.
    fn apply_transitions_where(&mut self, which: impl Fn(&dyn StateDriver) -> bool) {
        for d in 0..self.states.len() {
            if !which(&*self.states[d]) {
                continue;
            }
            let Some(pending) = self.states[d].begin(&mut self.world) else { continue };
            if let Some(exit) = pending.exit {
                self.run_state_schedule(exit);
            }
            self.states[d].commit(&mut self.world);
            if let Some(enter) = pending.enter {
                self.run_state_schedule(enter);
            }
        }
    }

    /// Empties the world between levels, as [`Schedule::clear_world`] does
    /// for every schedule of the loop at once: drops every pending command,
    /// despawns every entity (no old handle stays valid), drops queued
    /// events, keeps resources (states included), then runs the `on_clear`
    /// hooks of every system: startup's, each stage's in stage order, then
    /// the `on_enter`/`on_exit` systems' in the order they were added.
    pub fn clear_world(&mut self) {
        let GameLoop { world, startup, stages, state_schedules, .. } = self;
        let mut schedules: Vec<&mut Schedule> = std::iter::once(startup)
            .chain(stages.iter_mut().map(|(_, schedule)| schedule))
            .chain(state_schedules.iter_mut())
            .collect();
        for schedule in &mut schedules {
            schedule.prepare_clear(world);
        }
        world.clear();
        world.clear_events();
        for schedule in &mut schedules {
            schedule.run_clear_hooks(world);
        }
    }
}
