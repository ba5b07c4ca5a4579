//! Deferred commands: structural changes that systems record while they run
//! and the schedule applies later, in order, with `&mut World`.

use std::sync::atomic::{AtomicU32, Ordering};

use crate::component::bundle::Bundle;
use crate::entity::error::EntityError;
use crate::entity::Entity;
use crate::entity::ReservationLanes;
use crate::storage::pool::PooledBundle;
use crate::storage::resource::Resource;
use crate::system::access::AccessConflict;
use crate::system::param::{SystemMeta, SystemParam};
use crate::world::command_queue::{CommandError, CommandQueue, CommandReport, Skip};
use crate::world::event::Event;
use crate::world::hooks::HookWorld;
use crate::world::World;

/// A system parameter that records structural changes to apply after the
/// system (at the end of the frame, or at the next `apply_deferred` point),
/// in recording order. An entity despawned this way stays visible to the
/// systems that run later in the same frame, and is gone in the next.
///
/// A command aimed at an entity that is gone by the time it applies is
/// skipped, never a panic; the schedule counts the skipped commands
/// ([`Schedule::command_report`](crate::Schedule::command_report)).
///
/// ```
/// use archetable::prelude::*;
///
/// #[derive(Component)] struct Hp(i32);
///
/// fn reap(dead: Query<(Entity, &Hp)>, mut commands: Commands) {
///     for (entity, hp) in dead.iter() {
///         if hp.0 <= 0 {
///             commands.despawn(entity);
///         }
///     }
/// }
/// # let mut world = World::new();
/// # world.spawn(Hp(0));
/// # let mut schedule = Schedule::new();
/// # schedule.add_system(reap);
/// # schedule.run(&mut world);
/// # assert!(world.is_empty());
/// ```
pub struct Commands<'w, 's> {
    queue: &'s mut CommandQueue,
    world: &'w World,
    /// The system's reservation lane, when the schedule gave it one.
    lane: Option<&'s EntityLane>,
}

/// The reservation lane of one system's run: which lane of which
/// [`ReservationLanes`], and how many handles the run took from it.
#[derive(Debug, Default)]
pub(crate) struct EntityLane {
    lane: Option<(ReservationLanes, u32)>,
    used: AtomicU32,
}

impl Clone for EntityLane {
    fn clone(&self) -> Self {
        EntityLane { lane: self.lane, used: AtomicU32::new(self.used.load(Ordering::Relaxed)) }
    }
}

impl EntityLane {
    /// Gives the next run lane `lane` of `lanes` (or none); returns how many
    /// handles the previous lane handed out.
    pub(crate) fn set(&mut self, lane: Option<(ReservationLanes, u32)>) -> u32 {
        self.lane = lane;
        std::mem::take(self.used.get_mut())
    }

    /// As `set`, but the next run starts `start` handles into the lane
    /// (the second part of a pipe goes on where the first stopped).
    pub(crate) fn set_at(&mut self, lane: Option<(ReservationLanes, u32)>, start: u32) -> u32 {
        self.lane = lane;
        std::mem::replace(self.used.get_mut(), start)
    }

    fn reserve(&self, world: &World) -> Option<Entity> {
        let (lanes, lane) = self.lane?;
        // Only the system's own thread reserves in its lane.
        let k = self.used.load(Ordering::Relaxed);
        let entity = world.reserve_in_lane(lanes, lane, k);
        self.used.store(k + 1, Ordering::Relaxed);
        Some(entity)
    }
}

impl<'w, 's> Commands<'w, 's> {
    /// Records into `queue`, reserving new entities in `world`.
    ///
    /// # Panics
    /// If `queue` holds commands recorded against another world.
    #[track_caller]
    pub fn new(queue: &'s mut CommandQueue, world: &'w World) -> Self {
        queue.bind(world);
        Commands { queue, world, lane: None }
    }

    /// A handle for a new entity: from the system's lane when it has one,
    /// so parallel systems get the same handles in any order.
    fn reserve(&self) -> Entity {
        self.reserver().reserve()
    }

    fn reserver(&self) -> Reserver<'_> {
        Reserver { world: self.world, lane: self.lane }
    }

    /// Spawns an entity with `bundle`. The handle is valid at once (to store
    /// in other components); the entity exists once the commands apply.
    pub fn spawn<B: Bundle>(&mut self, bundle: B) -> EntityCommands<'_> {
        let entity = self.reserve();
        self.queue.push(move |world| {
            world.flush();
            world.insert(entity, bundle).map_err(|_| Skip { command: "spawn", entity, reason: None })
        });
        EntityCommands { entity, reserver: Reserver { world: self.world, lane: self.lane }, queue: self.queue }
    }

    /// Spawns an entity whose components come from their pools, as
    /// [`World::spawn_pooled`] does. The handle is valid at once; `init`
    /// runs, and the entity exists, once the commands apply.
    ///
    /// `init` runs later, possibly on another thread, so it must be
    /// `Send + 'static` and cannot borrow the system's parameters. Read what
    /// it needs first and move copies in (`let speed = settings.speed;` then
    /// `move |b| b.speed = speed`); for anything that needs the world when
    /// the entity is made, use [`Commands::add`] with a closure taking
    /// `&mut World` and call [`World::spawn_pooled`] there.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// #[derive(Component, Default)]
    /// #[component(pooled)]
    /// struct Trail(Vec<[f32; 2]>);
    /// impl Reset for Trail {
    ///     fn reset(&mut self) {
    ///         self.0.clear();
    ///     }
    /// }
    ///
    /// let mut world = World::new();
    /// let mut queue = CommandQueue::default();
    /// let e = Commands::new(&mut queue, &world).spawn_pooled::<Trail>(|t| t.0.push([1.0, 2.0])).id();
    /// assert!(!world.contains(e));
    /// queue.apply(&mut world);
    /// assert_eq!(world.get::<Trail>(e).unwrap().0, [[1.0, 2.0]]);
    /// ```
    pub fn spawn_pooled<B: PooledBundle>(
        &mut self,
        init: impl FnOnce(B::Refs<'_>) + Send + 'static,
    ) -> EntityCommands<'_> {
        let entity = self.reserve();
        self.queue.push(move |world| {
            world.flush();
            world.insert_pooled::<B>(entity, init).map_err(|_| Skip { command: "spawn", entity, reason: None })
        });
        EntityCommands { entity, reserver: Reserver { world: self.world, lane: self.lane }, queue: self.queue }
    }

    /// Spawns an entity with no components.
    pub fn spawn_empty(&mut self) -> EntityCommands<'_> {
        let entity = self.reserve();
        EntityCommands { entity, reserver: Reserver { world: self.world, lane: self.lane }, queue: self.queue }
    }

    /// Records commands for `entity`.
    pub fn entity(&mut self, entity: Entity) -> EntityCommands<'_> {
        EntityCommands { entity, reserver: Reserver { world: self.world, lane: self.lane }, queue: self.queue }
    }

    /// Despawns `entity`.
    pub fn despawn(&mut self, entity: Entity) {
        self.entity(entity).despawn();
    }

    /// Inserts (or replaces) resource `value`.
    pub fn insert_resource<R: Resource>(&mut self, value: R) {
        self.queue.push(move |world| {
            world.insert_resource(value);
            Ok(())
        });
    }

    /// Removes resource `R`.
    pub fn remove_resource<R: Resource>(&mut self) {
        self.queue.push(|world| {
            world.remove_resource::<R>();
            Ok(())
        });
    }

    /// Sends `event` when the commands apply.
    pub fn send_event<E: Event>(&mut self, event: E) {
        self.queue.push(move |world| {
            world.send_event(event);
            Ok(())
        });
    }

    /// Records a change to the world that may fail as it applies; a
    /// failure is skipped and counted like a command whose entity is gone,
    /// with the reason it gives (see
    /// [`Schedule::command_report`](crate::Schedule::command_report)).
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # use archetable::system::CommandError;
    /// # #[derive(Component)] struct Hp(u32);
    /// let mut world = World::new();
    /// let e = world.spawn(Hp(0));
    /// let mut queue = CommandQueue::default();
    /// Commands::new(&mut queue, &world).add_fallible(move |world| {
    ///     match world.get::<Hp>(e) {
    ///         Some(hp) if hp.0 > 0 => Ok(()),
    ///         _ => Err(CommandError { command: "heal", entity: e, reason: "already dead".into() }),
    ///     }
    /// });
    /// let report = queue.apply(&mut world);
    /// assert_eq!(report.skipped(), 1);
    /// assert_eq!(report.examples()[0].reason, "already dead");
    /// ```
    pub fn add_fallible(&mut self, command: impl FnOnce(&mut World) -> Result<(), CommandError> + Send + 'static) {
        self.queue.push(move |world| {
            command(world).map_err(|e| Skip { command: e.command, entity: e.entity, reason: Some(e.reason) })
        });
    }

    /// Records any change to the world.
    pub fn add(&mut self, command: impl FnOnce(&mut World) + Send + 'static) {
        self.queue.push(move |world| {
            command(world);
            Ok(())
        });
    }

    /// Asks for a level reset: once every command of the current run has
    /// applied (the end of the [`Schedule::run`](crate::Schedule::run), or
    /// of the `GameLoop` stage or state schedule that
    /// recorded it), the world is emptied as by
    /// [`Schedule::clear_world`](crate::Schedule::clear_world) (or
    /// `GameLoop::clear_world`, which tells
    /// the systems of every stage): every entity is despawned, queued events
    /// are dropped, resources stay, and the systems' `on_clear` hooks run,
    /// so one of them can build the next level.
    ///
    /// Everything the run's commands spawned is cleared with the rest, so
    /// spawn the next level from an `on_clear` hook, a later stage, or an
    /// `on_enter` system of a state, not next to this call. No handle from
    /// before the clear stays valid: each despawned index comes back with a
    /// new generation. Asking twice in one run clears once. Applied
    /// outside a schedule (by [`CommandQueue::apply`]), the request waits
    /// for the end of the next schedule run or stage on that world; call
    /// [`Schedule::clear_world`](crate::Schedule::clear_world) directly
    /// there instead.
    ///
    /// ```
    /// use archetable::prelude::*;
    ///
    /// #[derive(Component)] struct Hp(i32);
    ///
    /// fn game_over(players: Query<&Hp>, mut commands: Commands) {
    ///     if players.iter().all(|hp| hp.0 <= 0) {
    ///         commands.clear_world();
    ///     }
    /// }
    ///
    /// let mut world = World::new();
    /// let old = world.spawn(Hp(0));
    /// let mut schedule = Schedule::new();
    /// schedule.add_system(game_over).on_clear(|world: &mut World| {
    ///     world.spawn(Hp(3)); // the next level
    /// });
    /// schedule.run(&mut world);
    /// assert!(!world.contains(old));
    /// assert_eq!(world.query::<&Hp>().map(|hp| hp.0).collect::<Vec<_>>(), [3]);
    /// ```
    pub fn clear_world(&mut self) {
        self.queue.push(|world| {
            world.insert_resource(ClearRequest);
            Ok(())
        });
    }
}

/// The mark [`Commands::clear_world`] leaves in the world for whoever runs
/// the systems to act on once their commands applied.
struct ClearRequest;

/// Whether a [`Commands::clear_world`] asked for a clear since the last
/// call; removes the request.
pub(crate) fn take_clear_request(world: &mut World) -> bool {
    world.contains_resource::<ClearRequest>() && world.remove_resource::<ClearRequest>().is_some()
}

/// Commands for one entity; see [`Commands::entity`].
pub struct EntityCommands<'a> {
    entity: Entity,
    queue: &'a mut CommandQueue,
    /// Where children spawned through these commands get their handles.
    #[cfg_attr(not(feature = "hierarchy"), allow(dead_code))]
    reserver: Reserver<'a>,
}

/// Where commands get handles for the entities they spawn: the world's
/// counter, or the system's reservation lane.
#[derive(Clone, Copy)]
pub(crate) struct Reserver<'a> {
    world: &'a World,
    lane: Option<&'a EntityLane>,
}

impl Reserver<'_> {
    pub(crate) fn reserve(self) -> Entity {
        match self.lane.and_then(|lane| lane.reserve(self.world)) {
            Some(entity) => entity,
            None => self.world.reserve_entity(),
        }
    }
}

impl<'a> EntityCommands<'a> {
    /// The entity's handle.
    pub fn id(&self) -> Entity {
        self.entity
    }

    /// Records a command about this entity that may fail with a reason;
    /// for the engine's own entity commands.
    /// The reason is `None` when the entity was gone.
    #[cfg(any(feature = "hierarchy", feature = "observers"))]
    pub(crate) fn push_fallible(
        &mut self,
        command: &'static str,
        f: impl FnOnce(&mut World, Entity) -> Result<(), Option<String>> + Send + 'static,
    ) {
        let entity = self.entity;
        self.queue.push(move |world| f(world, entity).map_err(|reason| Skip { command, entity, reason }));
    }

    /// Commands for another entity, recorded into the same queue: for
    /// spawning children.
    #[cfg(feature = "hierarchy")]
    pub(crate) fn reborrow(&mut self) -> (&mut CommandQueue, Reserver<'a>) {
        (self.queue, self.reserver)
    }

    /// Commands for `entity` on `queue`.
    #[cfg(feature = "hierarchy")]
    pub(crate) fn new_raw(entity: Entity, queue: &'a mut CommandQueue, reserver: Reserver<'a>) -> Self {
        EntityCommands { entity, queue, reserver }
    }

    /// Records a command that spawns an entity with `bundle` into `queue`;
    /// returns its handle.
    #[cfg(feature = "hierarchy")]
    pub(crate) fn spawn_into<B: Bundle>(queue: &mut CommandQueue, reserver: Reserver<'_>, bundle: B) -> Entity {
        let entity = reserver.reserve();
        queue.push(move |world| {
            world.flush();
            world.insert(entity, bundle).map_err(|_| Skip { command: "spawn", entity, reason: None })
        });
        entity
    }

    /// Adds the components of `bundle`, replacing the ones it has.
    pub fn insert<B: Bundle>(&mut self, bundle: B) -> &mut Self {
        let entity = self.entity;
        self.queue.push(move |world| {
            world.insert(entity, bundle).map_err(|_| Skip { command: "insert", entity, reason: None })
        });
        self
    }

    /// Removes the components of `B` and drops them (pooled ones are reset
    /// and kept, as by [`World::discard`]); skipped if the entity is gone or
    /// lacks one of them.
    pub fn remove<B: Bundle>(&mut self) -> &mut Self {
        let entity = self.entity;
        self.queue.push(move |world| {
            world.discard::<B>(entity).map_err(|_| Skip { command: "remove", entity, reason: None })
        });
        self
    }

    /// Disables the entity when the commands apply, as
    /// [`World::disable`] does: it keeps its components and queries that
    /// do not name [`Disabled`](crate::Disabled) stop seeing it; its
    /// children stay enabled (`disable_recursive` takes the whole tree).
    /// Skipped, and reported as `"disable"`, if the entity is gone by
    /// then.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component)] struct Hp(u32);
    /// let mut world = World::new();
    /// let e = world.spawn(Hp(1));
    /// let mut queue = CommandQueue::default();
    /// Commands::new(&mut queue, &world).entity(e).disable();
    /// assert!(!world.is_disabled(e)); // deferred
    /// queue.apply(&mut world);
    /// assert!(world.is_disabled(e));
    /// ```
    pub fn disable(&mut self) -> &mut Self {
        self.push_entity_op("disable", World::disable);
        self
    }

    /// Enables the entity again when the commands apply, as
    /// [`World::enable`] does; skipped, and reported as `"enable"`, if
    /// the entity is gone by then.
    pub fn enable(&mut self) -> &mut Self {
        self.push_entity_op("enable", World::enable);
        self
    }

    /// Records `op` on this entity, skipped as `command` with "entity
    /// gone" when it fails (only because the entity is dead).
    fn push_entity_op(&mut self, command: &'static str, op: fn(&mut World, Entity) -> Result<(), EntityError>) {
        let entity = self.entity;
        self.queue.push(move |world| op(world, entity).map_err(|_| Skip { command, entity, reason: None }));
    }

    /// Despawns the entity.
    pub fn despawn(&mut self) {
        self.push_entity_op("despawn", |world, entity| world.despawn_named(entity, World::despawn));
    }
}

/// A hook's commands: in the system layer, beside [`Commands`], which it
/// hands out.
impl HookWorld<'_> {
    /// Records structural changes (spawn, insert, remove, despawn) and other
    /// world changes. They apply right after the world operation that ran
    /// this hook, in the order recorded, before that operation returns; the
    /// hooks they fire in turn queue theirs after them, until none is left.
    /// A command whose entity is gone by then is skipped.
    pub fn commands(&mut self) -> Commands<'_, '_> {
        Commands::new(self.commands, self.world)
    }
}

// The engine hooks' deferral records through `Commands`, so it is here.
impl World {
    /// Queues `command` with the hooks' commands, to apply after the world
    /// operation under way: how the engine's own hooks, which have the
    /// whole world, defer their work.
    #[cfg(feature = "hierarchy")]
    pub(crate) fn defer(&mut self, command: impl FnOnce(&mut World) + Send + 'static) {
        let mut queue = std::mem::take(self.hooks.queue());
        Commands::new(&mut queue, self).add(command);
        *self.hooks.queue() = queue;
    }
}

// SAFETY: borrows nothing of the world but the entity allocator's atomic
// reservation counter, which is built for shared use.
unsafe impl SystemParam for Commands<'_, '_> {
    type State = CommandQueue;
    type Item<'w, 's> = Commands<'w, 's>;

    fn init_state(world: &mut World, meta: &mut SystemMeta) -> Result<CommandQueue, AccessConflict> {
        meta.set_reserves_entities();
        Ok(CommandQueue::for_world(world.id()))
    }

    #[inline]
    unsafe fn get_param<'w, 's>(
        queue: &'s mut CommandQueue,
        world: &'w World,
        meta: &'s SystemMeta,
    ) -> Commands<'w, 's> {
        let lane = meta.lane.lane.is_some().then_some(&meta.lane);
        Commands { queue, world, lane }
    }

    fn apply_deferred(queue: &mut CommandQueue, world: &mut World, meta: &SystemMeta, report: &mut CommandReport) {
        queue.apply_into(world, report, meta.name());
    }

    fn discard_deferred(queue: &mut CommandQueue) {
        queue.clear();
    }

    fn move_deferred(state: &mut CommandQueue, queue: &mut CommandQueue) {
        queue.append(state);
    }
}
