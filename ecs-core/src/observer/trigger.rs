//! `Trigger`: what an observer receives, the event and the entity it was
//! aimed at; and the ways to name the targets of a trigger.

use std::fmt;
use std::ops::Deref;

use crate::entity::Entity;
use crate::world::event::Event;

/// The first parameter of an observer: the event that set it off, and the
/// entity the event was aimed at, if any. Derefs to the event.
///
/// ```
/// use archetable::prelude::*;
///
/// struct Damage(u32);
/// #[derive(Component)] struct Hp(u32);
///
/// let mut world = World::new();
/// world.observe(|trigger: Trigger<Damage>, mut hp: Query<&mut Hp>| {
///     let target = trigger.target().expect("damage is aimed at an entity");
///     if let Ok(mut hp) = hp.get_mut(target) {
///         hp.0 = hp.0.saturating_sub(trigger.0); // `trigger.0` is `trigger.event().0`
///     }
/// });
/// let orc = world.spawn(Hp(10));
/// world.trigger_targets(Damage(4), orc);
/// assert_eq!(world.get::<Hp>(orc).unwrap().0, 6);
/// ```
pub struct Trigger<'a, E: Event> {
    event: &'a E,
    target: Option<Entity>,
}

impl<'a, E: Event> Trigger<'a, E> {
    pub(crate) fn new(event: &'a E, target: Option<Entity>) -> Self {
        Trigger { event, target }
    }

    /// The event.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// struct Hello(&'static str);
    /// let mut world = World::new();
    /// world.observe(|trigger: Trigger<Hello>| assert_eq!(trigger.event().0, "hi"));
    /// world.trigger(Hello("hi"));
    /// ```
    #[inline]
    pub fn event(&self) -> &'a E {
        self.event
    }

    /// The entity the event was aimed at ([`World::trigger_targets`]), or
    /// `None` for an event triggered without targets ([`World::trigger`]).
    /// For a lifecycle event ([`OnAdd`](crate::OnAdd), ...), the entity
    /// whose component it is about. The entity may have been despawned
    /// since the trigger was requested.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// struct Hello;
    /// let mut world = World::new();
    /// let e = world.spawn(());
    /// world.observe(move |trigger: Trigger<Hello>| assert_eq!(trigger.target(), Some(e)));
    /// world.trigger_targets(Hello, e);
    /// ```
    ///
    /// [`World::trigger_targets`]: crate::World::trigger_targets
    /// [`World::trigger`]: crate::World::trigger
    #[inline]
    pub fn target(&self) -> Option<Entity> {
        self.target
    }
}

impl<E: Event> Deref for Trigger<'_, E> {
    type Target = E;
    #[inline]
    fn deref(&self) -> &E {
        self.event
    }
}

impl<E: Event + fmt::Debug> fmt::Debug for Trigger<'_, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Trigger").field("event", self.event).field("target", &self.target).finish()
    }
}

/// The entities a trigger is aimed at: one [`Entity`], an array, a slice or
/// a `Vec` of them. The observers run once per target, in the order given.
///
/// ```
/// # use archetable::prelude::*;
/// # #[derive(Default)] struct Hits(Vec<Entity>);
/// struct Shock;
/// let mut world = World::new();
/// world.init_resource::<Hits>();
/// world.observe(|t: Trigger<Shock>, mut hits: ResMut<Hits>| hits.0.push(t.target().unwrap()));
/// let (a, b) = (world.spawn(()), world.spawn(()));
/// world.trigger_targets(Shock, [b, a]);
/// world.trigger_targets(Shock, vec![a]);
/// assert_eq!(world.resource::<Hits>().0, [b, a, a]);
/// ```
pub trait TriggerTargets {
    /// The targets, in order.
    fn targets(&self) -> &[Entity];
}

impl TriggerTargets for Entity {
    fn targets(&self) -> &[Entity] {
        std::slice::from_ref(self)
    }
}

impl<const N: usize> TriggerTargets for [Entity; N] {
    fn targets(&self) -> &[Entity] {
        self
    }
}

impl TriggerTargets for &[Entity] {
    fn targets(&self) -> &[Entity] {
        self
    }
}

impl TriggerTargets for Vec<Entity> {
    fn targets(&self) -> &[Entity] {
        self
    }
}
