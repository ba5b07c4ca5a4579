//! Observers through deferred commands: triggering events and attaching
//! observers to entities when the commands apply.

use crate::observer::function::IntoObserver;
use crate::observer::TriggerTargets;
use crate::system::{Commands, EntityCommands};
use crate::world::event::Event;

impl Commands<'_, '_> {
    /// Triggers `event` when the commands apply, as [`World::trigger`](crate::World::trigger)
    /// does: the global observers of its type run then, each followed by
    /// its own commands.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// struct Alarm;
    /// #[derive(Default)] struct Rung(u32);
    ///
    /// let mut world = World::new();
    /// world.init_resource::<Rung>();
    /// world.observe(|_: Trigger<Alarm>, mut rung: ResMut<Rung>| rung.0 += 1);
    /// let mut queue = CommandQueue::default();
    /// Commands::new(&mut queue, &world).trigger(Alarm);
    /// assert_eq!(world.resource::<Rung>().0, 0);
    /// queue.apply(&mut world);
    /// assert_eq!(world.resource::<Rung>().0, 1);
    /// ```
    pub fn trigger<E: Event>(&mut self, event: E) {
        self.add(move |world| world.trigger(event));
    }

    /// Triggers `event` at `targets` when the commands apply, as
    /// [`World::trigger_targets`](crate::World::trigger_targets) does.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component)] struct Hp(u32);
    /// struct Poison(u32);
    ///
    /// fn spread(t: Trigger<Poison>, mut hp: Query<&mut Hp>) {
    ///     if let Ok(mut hp) = hp.get_mut(t.target().unwrap()) {
    ///         hp.0 -= t.0;
    ///     }
    /// }
    ///
    /// let mut world = World::new();
    /// world.observe(spread);
    /// let (a, b) = (world.spawn(Hp(10)), world.spawn(Hp(10)));
    /// let mut queue = CommandQueue::default();
    /// Commands::new(&mut queue, &world).trigger_targets(Poison(3), [a, b]);
    /// queue.apply(&mut world);
    /// assert_eq!((world.get::<Hp>(a).unwrap().0, world.get::<Hp>(b).unwrap().0), (7, 7));
    /// ```
    pub fn trigger_targets<E: Event>(&mut self, event: E, targets: impl TriggerTargets + Send + 'static) {
        self.add(move |world| world.trigger_targets(event, targets));
    }
}

impl EntityCommands<'_> {
    /// Attaches `observer` to the entity when the commands apply, as
    /// [`World::entity_observe`](crate::World::entity_observe) does: it runs on the events of its type
    /// aimed at the entity and goes away with it. Skipped if the entity is
    /// gone by then.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component)] struct Door;
    /// struct Open;
    /// #[derive(Default)] struct Opened(Vec<Entity>);
    ///
    /// let mut world = World::new();
    /// world.init_resource::<Opened>();
    /// let mut queue = CommandQueue::default();
    /// let door = Commands::new(&mut queue, &world)
    ///     .spawn(Door)
    ///     .observe(|t: Trigger<Open>, mut opened: ResMut<Opened>| opened.0.push(t.target().unwrap()))
    ///     .id();
    /// queue.apply(&mut world);
    /// world.trigger_targets(Open, door);
    /// assert_eq!(world.resource::<Opened>().0, [door]);
    /// ```
    ///
    /// # Panics
    /// When the command applies, if two of the observer's parameters would
    /// alias (`error[E0002]`).
    pub fn observe<E: Event, M>(&mut self, observer: impl IntoObserver<E, M>) -> &mut Self {
        self.push_fallible("observe", move |world, entity| {
            world.entity_observe(entity, observer).map(drop).map_err(|_| None)
        });
        self
    }
}
