//! One-shot systems by id: registered in a world, run on demand (from the
//! world or from commands), keeping their state between runs.

use std::any::Any;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::marker::PhantomData;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::{Mutex, PoisonError};

use crate::system::commands::Commands;
use crate::system::io::{In, IntoIoSystem, IoSystem, SystemInput};
use crate::system::param::SkippedSystem;
use crate::world::command_queue::{CommandQueue, CommandReport};
use crate::world::{World, WorldId};

/// The id of a system registered in a world with
/// [`World::register_system`]: input `I`, output `O`.
///
/// It is a type of its own, apart from a schedule's
/// [`SystemId`](crate::SystemId): a schedule's id does not run a registered
/// system, nor the reverse (a compile error), and the input and output
/// types are part of the id, so running it with the wrong input does not
/// compile either. An id remembers its world: using it on another is
/// [`RunSystemError::OtherWorld`].
pub struct RegisteredSystemId<I: SystemInput = (), O = ()> {
    world: WorldId,
    index: u32,
    generation: u32,
    _marker: PhantomData<fn(I) -> O>,
}

impl<I: SystemInput, O> Clone for RegisteredSystemId<I, O> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<I: SystemInput, O> Copy for RegisteredSystemId<I, O> {}

impl<I: SystemInput, O> PartialEq for RegisteredSystemId<I, O> {
    fn eq(&self, other: &Self) -> bool {
        (self.world, self.index, self.generation) == (other.world, other.index, other.generation)
    }
}

impl<I: SystemInput, O> Eq for RegisteredSystemId<I, O> {}

impl<I: SystemInput, O> Hash for RegisteredSystemId<I, O> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (self.world, self.index, self.generation).hash(state);
    }
}

impl<I: SystemInput, O> fmt::Debug for RegisteredSystemId<I, O> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RegisteredSystemId({}v{})", self.index, self.generation)
    }
}

/// Why [`World::run_system`] (or `run_system_with`, `unregister_system`)
/// did not run the system.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunSystemError {
    /// The world has no system at this id and never had: its registered
    /// systems were dropped with their resource, or the id was made for a
    /// world since replaced.
    Unknown,
    /// The system was unregistered.
    Unregistered,
    /// The system is running: it (or something it runs) asked to run it
    /// again, or to unregister it.
    Running,
    /// The id belongs to another world.
    OtherWorld,
    /// The system ran no further than its parameters: a
    /// [`Single`](crate::Single) or [`Populated`](crate::Populated) had
    /// nothing to hand over.
    Skipped(SkippedSystem),
}

impl fmt::Display for RunSystemError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunSystemError::Unknown => f.write_str("no system is registered at this id in this world"),
            RunSystemError::Unregistered => f.write_str("the system was unregistered"),
            RunSystemError::Running => {
                f.write_str("the system is running (a registered system cannot run or unregister itself)")
            }
            RunSystemError::OtherWorld => f.write_str("the system id belongs to another world"),
            RunSystemError::Skipped(skip) => write!(f, "{skip}"),
        }
    }
}

impl std::error::Error for RunSystemError {}

/// One slot of the registry.
enum Slot {
    /// Holds an `IoSystem<I, O>` of the id's types, boxed.
    Idle(Box<dyn Any + Send>),
    /// Taken out while it runs.
    Running,
    /// Unregistered; the generation moved on.
    Vacant,
}

/// The world's registered systems, a resource no save lists (saves keep
/// only the resources registered for saving).
#[derive(Default)]
struct Registry {
    /// Per index: the slot and its generation. A `Mutex` only so that the
    /// resource is `Sync`; it is reached through `&mut World` alone.
    slots: Vec<(u32, Mutex<Slot>)>,
    free: Vec<u32>,
}

/// The type of the resource that holds a world's registered systems, which
/// saves leave out without reporting it: it is no game state.
pub fn registry_type_id() -> std::any::TypeId {
    std::any::TypeId::of::<Registry>()
}

impl Registry {
    fn slot<I: SystemInput, O>(&mut self, id: RegisteredSystemId<I, O>) -> Result<&mut Slot, RunSystemError> {
        let (generation, slot) = self.slots.get_mut(id.index as usize).ok_or(RunSystemError::Unknown)?;
        if *generation != id.generation {
            return Err(RunSystemError::Unregistered);
        }
        Ok(slot.get_mut().unwrap_or_else(PoisonError::into_inner))
    }
}

impl World {
    /// Registers `system` (a function of system parameters, with or
    /// without an input, returning anything; or a pipe or map of such) to
    /// run by id with [`World::run_system`] or
    /// [`World::run_system_with`], or through
    /// [`Commands::run_system`]. Unlike [`World::run_system_once`], the
    /// system keeps its state from run to run: its [`Local`](crate::Local)s,
    /// query caches and change ticks.
    ///
    /// Saves skip registered systems, as they skip schedules: register them
    /// again after loading (ids of the old world are
    /// [`RunSystemError::OtherWorld`] in the new one).
    ///
    /// ```
    /// use archetable::prelude::*;
    ///
    /// #[derive(Component)] struct Coin;
    ///
    /// fn spawn_coin(mut commands: Commands, mut spawned: Local<u32>) -> u32 {
    ///     commands.spawn(Coin);
    ///     *spawned += 1;
    ///     *spawned
    /// }
    /// let mut world = World::new();
    /// let id = world.register_system(spawn_coin);
    /// assert_eq!(world.run_system(id), Ok(1));
    /// assert_eq!(world.run_system(id), Ok(2)); // its `Local` kept counting
    /// assert_eq!(world.len(), 2);
    /// ```
    ///
    /// # Panics
    /// If the system's parameters alias (`error[E0002]`), naming them.
    #[track_caller]
    pub fn register_system<I, O, M>(&mut self, system: impl IntoIoSystem<I, O, M>) -> RegisteredSystemId<I, O>
    where
        I: SystemInput + 'static,
        O: 'static,
    {
        let mut system = system.into_io_system();
        if let Err(conflict) = system.inner.initialize(self) {
            panic!("{conflict}");
        }
        let world = self.id();
        let registry = self.get_resource_or_default::<Registry>();
        let boxed: Box<dyn Any + Send> = Box::new(system);
        let (index, generation) = match registry.free.pop() {
            Some(index) => {
                let (generation, slot) = &mut registry.slots[index as usize];
                *slot.get_mut().unwrap_or_else(PoisonError::into_inner) = Slot::Idle(boxed);
                (index, *generation)
            }
            None => {
                registry.slots.push((0, Mutex::new(Slot::Idle(boxed))));
                (registry.slots.len() as u32 - 1, 0)
            }
        };
        RegisteredSystemId { world, index, generation, _marker: PhantomData }
    }

    /// Runs the registered system `id` (which takes no input) now, applies
    /// its commands, and returns its output.
    ///
    /// A command that applies in the middle (one that was skipped because
    /// its entity was gone is warned about, as a schedule does) may run
    /// the system again: it is back in its place by then.
    ///
    /// # Errors
    /// [`RunSystemError::OtherWorld`], [`Unknown`](RunSystemError::Unknown),
    /// [`Unregistered`](RunSystemError::Unregistered),
    /// [`Running`](RunSystemError::Running) (a system that runs itself),
    /// or [`Skipped`](RunSystemError::Skipped).
    pub fn run_system<O: 'static>(&mut self, id: RegisteredSystemId<(), O>) -> Result<O, RunSystemError> {
        self.run_system_with(id, ())
    }

    /// Runs the registered system `id` with `input`: the value for an
    /// [`In<T>`] input, a reference for [`InRef<T>`](crate::system::InRef)
    /// and [`InMut<T>`](crate::system::InMut).
    ///
    /// ```
    /// use archetable::prelude::*;
    ///
    /// #[derive(Component, Debug, PartialEq)] struct Hp(u32);
    ///
    /// fn damage(In((target, amount)): In<(Entity, u32)>, mut hp: Query<&mut Hp>) -> bool {
    ///     let Ok(mut hp) = hp.get_mut(target) else { return false };
    ///     hp.0 = hp.0.saturating_sub(amount);
    ///     hp.0 == 0
    /// }
    /// let mut world = World::new();
    /// let goblin = world.spawn(Hp(5));
    /// let id = world.register_system(damage);
    /// assert_eq!(world.run_system_with(id, (goblin, 3)), Ok(false));
    /// assert_eq!(world.run_system_with(id, (goblin, 3)), Ok(true));
    /// assert_eq!(world.get::<Hp>(goblin), Some(&Hp(0)));
    /// ```
    ///
    /// # Errors
    /// As [`World::run_system`].
    pub fn run_system_with<I, O>(
        &mut self,
        id: RegisteredSystemId<I, O>,
        input: I::Inner<'_>,
    ) -> Result<O, RunSystemError>
    where
        I: SystemInput + 'static,
        O: 'static,
    {
        let mut system = self.take_registered(id, Slot::Running)?;
        let name = system.name().to_string();
        let outcome = catch_unwind(AssertUnwindSafe(|| system.inner.run_exclusive(input, self)));
        let mut queue = CommandQueue::for_world(self.id());
        let mut report = CommandReport::default();
        match outcome {
            Ok(_) => {
                system.inner.move_deferred(&mut queue);
                system.inner.apply_deferred(self, &mut report);
            }
            Err(_) => system.inner.discard_deferred(),
        }
        // Back in its place, a panic included, so that the id stays usable
        // and a command below may run it again.
        if let Some((_, slot)) =
            self.get_resource_mut::<Registry>().and_then(|registry| registry.slots.get_mut(id.index as usize))
        {
            *slot.get_mut().unwrap_or_else(PoisonError::into_inner) = Slot::Idle(system);
        }
        let result = match outcome {
            Ok(result) => result,
            Err(payload) => resume_unwind(payload),
        };
        queue.apply_into(self, &mut report, &name);
        if let Some(skipped) = report.examples().first() {
            crate::entity::error::warn(&format!(
                "archetable: {} deferred command(s) of registered system `{name}` skipped, the first: {skipped}",
                report.skipped()
            ));
        }
        result.map_err(RunSystemError::Skipped)
    }

    /// Unregisters the system `id` and hands it back; the id (and every
    /// copy of it) is [`RunSystemError::Unregistered`] from now on.
    ///
    /// ```
    /// use archetable::prelude::*;
    ///
    /// fn hello() -> &'static str { "hello" }
    /// let mut world = World::new();
    /// let id = world.register_system(hello);
    /// let system = world.unregister_system(id).unwrap();
    /// assert_eq!(system.name(), "hello");
    /// assert_eq!(world.run_system(id), Err(RunSystemError::Unregistered));
    /// ```
    ///
    /// # Errors
    /// As [`World::run_system`]; [`RunSystemError::Running`] for a system
    /// that unregisters itself while it runs.
    pub fn unregister_system<I, O>(&mut self, id: RegisteredSystemId<I, O>) -> Result<IoSystem<I, O>, RunSystemError>
    where
        I: SystemInput + 'static,
        O: 'static,
    {
        let system = self.take_registered(id, Slot::Vacant)?;
        let registry = self.resource_mut::<Registry>();
        let entry = &mut registry.slots[id.index as usize];
        entry.0 = entry.0.wrapping_add(1);
        registry.free.push(id.index);
        Ok(*system)
    }

    /// Takes the system at `id` out of its slot, leaving `leave` there
    /// (`Running` while it runs, `Vacant` when unregistered); a running
    /// system stays where it is, and the error says why nothing was taken.
    fn take_registered<I, O>(
        &mut self,
        id: RegisteredSystemId<I, O>,
        leave: Slot,
    ) -> Result<Box<IoSystem<I, O>>, RunSystemError>
    where
        I: SystemInput + 'static,
        O: 'static,
    {
        if id.world != self.id() {
            return Err(RunSystemError::OtherWorld);
        }
        let registry = self.get_resource_mut::<Registry>().ok_or(RunSystemError::Unknown)?;
        let slot = registry.slot(id)?;
        match std::mem::replace(slot, leave) {
            Slot::Idle(boxed) => Ok(boxed.downcast::<IoSystem<I, O>>().expect("the id's types are the system's")),
            Slot::Running => {
                *slot = Slot::Running;
                Err(RunSystemError::Running)
            }
            Slot::Vacant => unreachable!("a vacant slot's generation moved on"),
        }
    }

    /// The `T` resource, inserted with its default first if missing.
    fn get_resource_or_default<T: crate::Resource + Default>(&mut self) -> &mut T {
        if self.get_resource::<T>().is_none() {
            self.insert_resource(T::default());
        }
        self.resource_mut::<T>()
    }
}

impl Commands<'_, '_> {
    /// Runs the registered system `id` when the commands apply, with
    /// [`World::run_system`]. An error (the id unregistered by then, or
    /// the system skipped) is a warning naming the system id and the
    /// reason; the output is dropped.
    ///
    /// ```
    /// use archetable::prelude::*;
    ///
    /// #[derive(Default)] struct Opened(u32);
    /// struct OpenDoor(RegisteredSystemId);
    ///
    /// fn open(mut opened: ResMut<Opened>) { opened.0 += 1; }
    /// fn press(door: Res<OpenDoor>, mut commands: Commands) {
    ///     commands.run_system(door.0);
    /// }
    /// let mut world = World::new();
    /// world.init_resource::<Opened>();
    /// let id = world.register_system(open);
    /// world.insert_resource(OpenDoor(id));
    /// world.run_system_once(press);
    /// assert_eq!(world.resource::<Opened>().0, 1);
    /// ```
    pub fn run_system<O: 'static>(&mut self, id: RegisteredSystemId<(), O>) {
        self.add_run(move |world| world.run_system(id).map(drop), move || format!("run_system({id:?})"));
    }

    /// Runs the registered system `id` with `input` when the commands
    /// apply, as [`Commands::run_system`] does.
    ///
    /// ```
    /// use archetable::prelude::*;
    ///
    /// #[derive(Component, Debug, PartialEq)] struct Coin(u32);
    /// fn drop_coin(In(value): In<u32>, mut commands: Commands) {
    ///     commands.spawn(Coin(value));
    /// }
    /// let mut world = World::new();
    /// let id = world.register_system(drop_coin);
    /// world.run_system_once(move |mut commands: Commands| commands.run_system_with(id, 5));
    /// assert_eq!(world.query::<&Coin>().next(), Some(&Coin(5)));
    /// ```
    pub fn run_system_with<T: Send + 'static, O: 'static>(&mut self, id: RegisteredSystemId<In<T>, O>, input: T) {
        self.add_run(
            move |world| world.run_system_with(id, input).map(drop),
            move || format!("run_system_with({id:?}, ..)"),
        );
    }

    /// Records `run`, warning with the `call` it stands for when it fails.
    fn add_run(
        &mut self,
        run: impl FnOnce(&mut World) -> Result<(), RunSystemError> + Send + 'static,
        call: impl FnOnce() -> String + Send + 'static,
    ) {
        self.add(move |world| {
            if let Err(error) = run(world) {
                crate::entity::error::warn(&format!("archetable: commands.{}: {error}", call()));
            }
        });
    }
}
