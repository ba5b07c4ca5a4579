//! The queue of deferred commands: world changes recorded now and applied
//! later, in order, with `&mut World`. Systems record into one through
//! their `Commands` parameter (`system/commands.rs`), hooks through
//! `HookWorld::commands`; the world keeps one for the commands its hooks
//! queue (`hooks/`), so the queue lives here, below both.

use std::fmt;

use crate::entity::Entity;
use crate::world::named::EntityLabel;
use crate::world::{World, WorldId};

/// How many skipped commands a report keeps as examples.
const EXAMPLES: usize = 8;

type Command = Box<dyn FnOnce(&mut World) -> Result<(), Skip> + Send>;

/// A command that found its entity gone: what it was and at whom it aimed.
pub(crate) struct Skip {
    pub(crate) command: &'static str,
    pub(crate) entity: Entity,
    /// Why, when not because the entity is gone.
    pub(crate) reason: Option<String>,
}

/// A recorded list of commands. Each system's [`Commands`](crate::Commands) parameter keeps
/// one; use one directly to defer changes outside a schedule.
///
/// ```
/// # use archetable::prelude::*;
/// # #[derive(Component)] struct Hp(u32);
/// let mut world = World::new();
/// let mut queue = CommandQueue::default();
/// let e = Commands::new(&mut queue, &world).spawn(Hp(3)).id();
/// assert!(!world.contains(e));
/// queue.apply(&mut world);
/// assert_eq!(world.get::<Hp>(e).map(|hp| hp.0), Some(3));
/// ```
#[derive(Default)]
pub struct CommandQueue {
    commands: Vec<Command>,
    /// The world the commands were recorded against: their entity handles,
    /// reserved ones included, belong to it.
    world: Option<WorldId>,
}

/// A [`CommandQueue`] was applied to a world other than the one its
/// commands were recorded against (whose handles they hold). Nothing was
/// applied; the queue still holds its commands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ForeignQueueError {
    /// The world the commands were recorded against.
    pub recorded: WorldId,
    /// The world they were applied to.
    pub applied: WorldId,
}

impl fmt::Display for ForeignQueueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "a command queue recorded against world {:?} was applied to world {:?}: its entity handles belong to \
             the first world; apply it there",
            self.recorded, self.applied
        )
    }
}

impl std::error::Error for ForeignQueueError {}

impl CommandQueue {
    /// An empty queue tied to the world `world` for recording.
    pub(crate) fn for_world(world: WorldId) -> Self {
        CommandQueue { commands: Vec::new(), world: Some(world) }
    }

    /// Applies every command in recording order and empties the queue.
    /// Commands aimed at entities that are gone are skipped and counted.
    ///
    /// # Panics
    /// If the commands were recorded against another world (see
    /// [`CommandQueue::try_apply`]); nothing is applied then.
    #[track_caller]
    pub fn apply(&mut self, world: &mut World) -> CommandReport {
        match self.try_apply(world) {
            Ok(report) => report,
            Err(error) => panic!("{error}"),
        }
    }

    /// Applies every command as [`CommandQueue::apply`] does, or refuses,
    /// changing nothing, if they were recorded against another world: their
    /// handles (and the entities they reserved) belong to that world.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component)] struct Hp(u32);
    /// let (mut a, mut b) = (World::new(), World::new());
    /// let mut queue = CommandQueue::default();
    /// Commands::new(&mut queue, &a).spawn(Hp(3));
    /// assert!(queue.try_apply(&mut b).is_err());
    /// assert!(b.is_empty());
    /// assert_eq!(queue.try_apply(&mut a).unwrap().applied(), 1);
    /// ```
    pub fn try_apply(&mut self, world: &mut World) -> Result<CommandReport, ForeignQueueError> {
        self.check_world(world.id())?;
        let mut report = CommandReport::default();
        self.apply_into(world, &mut report, "");
        Ok(report)
    }

    fn check_world(&self, applied: WorldId) -> Result<(), ForeignQueueError> {
        match self.world {
            Some(recorded) if recorded != applied && !self.commands.is_empty() => {
                Err(ForeignQueueError { recorded, applied })
            }
            _ => Ok(()),
        }
    }

    /// Ties the queue to `world` for recording.
    ///
    /// # Panics
    /// If it holds commands recorded against another world.
    pub(crate) fn bind(&mut self, world: &World) {
        if let Err(error) = self.check_world(world.id()) {
            panic!("{error}");
        }
        self.world = Some(world.id());
    }

    pub(crate) fn apply_into(&mut self, world: &mut World, report: &mut CommandReport, system: &str) {
        if let Err(error) = self.check_world(world.id()) {
            panic!("{error}");
        }
        world.flush();
        for command in self.commands.drain(..) {
            match command(world) {
                Ok(()) => report.applied += 1,
                Err(skip) => report.skip(world, system, skip),
            }
        }
        world.flush();
    }

    /// Number of commands waiting.
    pub fn len(&self) -> usize {
        self.commands.len()
    }

    /// Whether no command is waiting.
    pub fn is_empty(&self) -> bool {
        self.commands.is_empty()
    }

    /// Drops every waiting command without applying it.
    pub fn clear(&mut self) {
        self.commands.clear();
    }

    /// Moves every command of `other` to the end of this queue.
    ///
    /// # Panics
    /// If the two queues hold commands recorded against different worlds.
    pub(crate) fn append(&mut self, other: &mut CommandQueue) {
        if other.commands.is_empty() {
            return;
        }
        if let Some(world) = other.world {
            if let Err(error) = self.check_world(world) {
                panic!("{error}");
            }
            self.world = Some(world);
        }
        self.commands.append(&mut other.commands);
    }

    /// Drops the commands recorded after the first `len`.
    pub(crate) fn truncate(&mut self, len: usize) {
        self.commands.truncate(len);
    }

    pub(crate) fn push(&mut self, command: impl FnOnce(&mut World) -> Result<(), Skip> + Send + 'static) {
        self.commands.push(Box::new(command));
    }
}

impl fmt::Debug for CommandQueue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CommandQueue").field("len", &self.commands.len()).finish()
    }
}

/// What applying commands did: how many applied, how many were skipped
/// because their entity was gone (or lacked what they removed), and the
/// first few skipped ones.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CommandReport {
    applied: usize,
    skipped: usize,
    examples: Vec<SkippedCommand>,
}

/// One skipped command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkippedCommand {
    /// The system that recorded it (empty outside a schedule).
    pub system: String,
    /// `"insert"`, `"remove"`, `"despawn"`, `"spawn"`, or the name given
    /// to [`Commands::add_fallible`](crate::Commands::add_fallible).
    pub command: &'static str,
    /// The entity it aimed at.
    pub entity: Entity,
    /// The entity's [`Name`](crate::Name) when the command was skipped, if
    /// it was still alive and had one (a fallible command that failed).
    pub name: Option<crate::Name>,
    /// Why it was skipped: `"entity gone"`, or the reason a fallible
    /// command gave.
    pub reason: String,
}

impl fmt::Display for SkippedCommand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let entity = EntityLabel { entity: self.entity, name: self.name.clone() };
        if self.system.is_empty() {
            write!(f, "{} on {entity}: {}", self.command, self.reason)
        } else {
            write!(f, "{} on {entity} from system `{}`: {}", self.command, self.system, self.reason)
        }
    }
}

/// Why a command recorded with [`Commands::add_fallible`](crate::Commands::add_fallible) did not apply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandError {
    /// The command's name, as reports show it.
    pub command: &'static str,
    /// The entity it was about.
    pub entity: Entity,
    /// What went wrong.
    pub reason: String,
}

impl CommandReport {
    /// Commands applied.
    pub fn applied(&self) -> usize {
        self.applied
    }

    /// Commands skipped.
    pub fn skipped(&self) -> usize {
        self.skipped
    }

    /// The first few skipped commands, in the order they were met.
    pub fn examples(&self) -> &[SkippedCommand] {
        &self.examples
    }

    fn skip(&mut self, world: &World, system: &str, skip: Skip) {
        self.skipped += 1;
        if self.examples.len() < EXAMPLES {
            self.examples.push(SkippedCommand {
                system: system.to_string(),
                command: skip.command,
                entity: skip.entity,
                name: world.entity_label(skip.entity).name,
                reason: skip.reason.unwrap_or_else(|| "entity gone".to_owned()),
            });
        }
    }

    pub(crate) fn clear(&mut self) {
        self.applied = 0;
        self.skipped = 0;
        self.examples.clear();
    }
}
