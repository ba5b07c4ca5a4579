//! `CommandBuffer`: an owned list of world changes, recorded without any
//! borrow of the world (inside a `query_mut` loop, on another thread, in a
//! network handler) and run later on whichever world it is handed.

use std::fmt;

use crate::component::bundle::Bundle;
use crate::entity::Entity;
use crate::world::command_queue::{CommandQueue, CommandReport, Skip};
use crate::world::SpawnBundle;
use crate::world::World;

/// Structural changes recorded without a world, applied in recording order
/// by [`CommandBuffer::run_on`].
///
/// Unlike [`Commands`](crate::Commands), which reserves entity handles in
/// the world it records against, a buffer holds no borrow of any world, so
/// it can record while the world is borrowed mutably elsewhere:
///
/// ```
/// use archetable::prelude::*;
///
/// #[derive(Component)] struct Hp(i32);
///
/// let mut world = World::new();
/// let a = world.spawn(Hp(0));
/// let b = world.spawn(Hp(5));
/// let mut buffer = CommandBuffer::new();
/// for (e, hp) in world.query_mut::<(Entity, &mut Hp)>() {
///     if hp.0 <= 0 {
///         buffer.despawn(e);
///     }
/// }
/// let report = buffer.run_on(&mut world);
/// assert_eq!((report.applied(), world.contains(a), world.contains(b)), (1, false, true));
/// ```
///
/// # Spawned entities have no handle while recording
/// [`CommandBuffer::spawn`] returns nothing: a handle belongs to one world's
/// allocator, and a buffer is not tied to a world. Handles are taken when
/// the buffer runs, in recording order, exactly as the same sequence of
/// [`World::spawn`] calls would take them. To use a new entity's handle in
/// later changes, record one closure that spawns it and uses it
/// ([`CommandBuffer::add`]).
///
/// Commands aimed at an entity that is gone when they run are skipped and
/// counted in the [`CommandReport`], never a panic. The handles recorded in
/// `insert`, `remove` and `despawn` are the caller's: run the buffer on the
/// world they came from.
#[derive(Default)]
pub struct CommandBuffer {
    queue: CommandQueue,
}

impl CommandBuffer {
    /// An empty buffer.
    ///
    /// ```
    /// # use archetable::CommandBuffer;
    /// assert!(CommandBuffer::new().is_empty());
    /// ```
    pub fn new() -> Self {
        CommandBuffer::default()
    }

    /// Records the spawn of an entity with `bundle` (a static bundle or a
    /// [`BuiltBundle`](crate::BuiltBundle)); its handle is taken when the
    /// buffer runs. Hooks run then, as for [`World::spawn`].
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component)] struct Hp(u32);
    /// let mut buffer = CommandBuffer::new();
    /// buffer.spawn((Hp(1),));
    /// buffer.spawn(Hp(2));
    /// let mut world = World::new();
    /// buffer.run_on(&mut world);
    /// assert_eq!(world.query::<&Hp>().map(|hp| hp.0).sum::<u32>(), 3);
    /// ```
    pub fn spawn<B: SpawnBundle + Send + 'static>(&mut self, bundle: B) {
        self.queue.push(move |world| {
            world.spawn(bundle);
            Ok(())
        });
    }

    /// Records adding the components of `bundle` to `entity`, replacing
    /// the ones it has; skipped if the entity is gone.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component, Debug, PartialEq)] struct Hp(u32);
    /// let mut world = World::new();
    /// let e = world.spawn(());
    /// let mut buffer = CommandBuffer::new();
    /// buffer.insert(e, Hp(4));
    /// buffer.run_on(&mut world);
    /// assert_eq!(world.get::<Hp>(e), Some(&Hp(4)));
    /// ```
    pub fn insert<B: Bundle>(&mut self, entity: Entity, bundle: B) {
        self.queue.push(move |world| {
            world.insert(entity, bundle).map_err(|_| Skip { command: "insert", entity, reason: None })
        });
    }

    /// Records removing the components of `B` from `entity` and dropping
    /// them (pooled ones are reset and kept, as by [`World::discard`]);
    /// skipped if the entity is gone or lacks one of them.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component)] struct Hp(u32);
    /// let mut world = World::new();
    /// let e = world.spawn(Hp(4));
    /// let mut buffer = CommandBuffer::new();
    /// buffer.remove::<Hp>(e);
    /// buffer.remove::<Hp>(e); // skipped: gone by then
    /// let report = buffer.run_on(&mut world);
    /// assert_eq!((report.applied(), report.skipped(), world.has::<Hp>(e)), (1, 1, false));
    /// ```
    pub fn remove<B: Bundle>(&mut self, entity: Entity) {
        self.queue.push(move |world| {
            world.discard::<B>(entity).map_err(|_| Skip { command: "remove", entity, reason: None })
        });
    }

    /// Records despawning `entity`; skipped if it is gone by then.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// let mut world = World::new();
    /// let e = world.spawn(());
    /// let mut buffer = CommandBuffer::new();
    /// buffer.despawn(e);
    /// buffer.run_on(&mut world);
    /// assert!(!world.contains(e));
    /// ```
    pub fn despawn(&mut self, entity: Entity) {
        self.queue.push(move |world| {
            world.despawn_named(entity, World::despawn).map_err(|_| Skip { command: "despawn", entity, reason: None })
        });
    }

    /// Records any change to the world, run in its place in the sequence.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component, Debug, PartialEq)] struct Hp(u32);
    /// # #[derive(Component, Debug, PartialEq)] struct Owner(Entity);
    /// let mut buffer = CommandBuffer::new();
    /// buffer.add(|world| {
    ///     let player = world.spawn(Hp(10));
    ///     world.spawn(Owner(player));
    /// });
    /// let mut world = World::new();
    /// buffer.run_on(&mut world);
    /// assert_eq!(world.len(), 2);
    /// ```
    pub fn add(&mut self, command: impl FnOnce(&mut World) + Send + 'static) {
        self.queue.push(move |world| {
            command(world);
            Ok(())
        });
    }

    /// Number of recorded commands.
    ///
    /// ```
    /// # use archetable::CommandBuffer;
    /// let mut buffer = CommandBuffer::new();
    /// buffer.spawn(());
    /// assert_eq!(buffer.len(), 1);
    /// ```
    pub fn len(&self) -> usize {
        self.queue.len()
    }

    /// Whether no command is recorded.
    ///
    /// ```
    /// # use archetable::CommandBuffer;
    /// assert!(CommandBuffer::new().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// Drops every recorded command without running it.
    ///
    /// ```
    /// # use archetable::CommandBuffer;
    /// let mut buffer = CommandBuffer::new();
    /// buffer.spawn(());
    /// buffer.clear();
    /// assert!(buffer.is_empty());
    /// ```
    pub fn clear(&mut self) {
        self.queue.clear();
    }

    /// Runs every recorded command on `world`, in recording order, and
    /// empties the buffer (it can record again). Entities reserved in the
    /// world beforehand become live first; spawns take their handles now.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// let mut world = World::new();
    /// let gone = world.spawn(());
    /// world.despawn(gone).unwrap();
    /// let mut buffer = CommandBuffer::new();
    /// buffer.spawn(());
    /// buffer.despawn(gone);
    /// let report = buffer.run_on(&mut world);
    /// assert_eq!((report.applied(), report.skipped()), (1, 1));
    /// assert_eq!(report.examples()[0].command, "despawn");
    /// assert!(buffer.is_empty());
    /// ```
    pub fn run_on(&mut self, world: &mut World) -> CommandReport {
        let mut report = CommandReport::default();
        self.queue.apply_into(world, &mut report, "");
        report
    }
}

impl fmt::Debug for CommandBuffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CommandBuffer").field("len", &self.queue.len()).finish()
    }
}
