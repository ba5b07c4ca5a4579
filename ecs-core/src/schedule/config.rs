//! Several systems added at once: tuples of systems with shared ordering,
//! conditions and sets ([`IntoSystems`]), and the named sets a schedule
//! configures as a whole ([`SetConfig`]).

use std::any::TypeId;
use std::borrow::Cow;
use std::ops::Range;

use super::condition::{Condition, IntoCondition};
use super::{IntoSystemSelector, Schedule, SystemSelector};
use crate::system::{BoxedSystem, IntoSystem};

/// Systems ready to go into a schedule together, with what they share:
/// made from one system or a tuple of them by the methods of
/// [`IntoSystems`], and added with
/// [`Schedule::add_systems`](crate::Schedule::add_systems) or
/// `GameLoop::add_systems`.
pub struct Systems {
    node: Node,
    chained: bool,
    conditions: Vec<Condition>,
    before: Vec<SystemSelector>,
    after: Vec<SystemSelector>,
    sets: Vec<Cow<'static, str>>,
    ambiguous_with: Vec<SystemSelector>,
    ambiguous_with_all: bool,
    debug: bool,
}

enum Node {
    /// A system, with the functions a pipe is made from.
    One(BoxedSystem, Vec<TypeId>),
    Many(Vec<Systems>),
}

impl Systems {
    fn new(node: Node) -> Systems {
        Systems {
            node,
            chained: false,
            conditions: Vec::new(),
            before: Vec::new(),
            after: Vec::new(),
            sets: Vec::new(),
            ambiguous_with: Vec::new(),
            ambiguous_with_all: false,
            debug: false,
        }
    }

    /// Flattens into `out`, one leaf per system, each with everything its
    /// groups gave it (the innermost group's first); returns its leaves.
    pub(super) fn flatten(self, out: &mut Vec<Leaf>) -> Range<usize> {
        let start = out.len();
        match self.node {
            Node::One(system, made_from) => out.push(Leaf {
                system,
                made_from,
                conditions: Vec::new(),
                before: Vec::new(),
                after: Vec::new(),
                after_leaves: Vec::new(),
                sets: Vec::new(),
                ambiguous_with: Vec::new(),
                ambiguous_with_all: false,
                debug: false,
            }),
            Node::Many(members) => {
                let mut previous: Option<Range<usize>> = None;
                for member in members {
                    let range = member.flatten(out);
                    if range.is_empty() {
                        continue; // an empty tuple: the chain goes on past it
                    }
                    if let (true, Some(previous)) = (self.chained, &previous) {
                        for leaf in range.clone() {
                            out[leaf].after_leaves.extend(previous.clone());
                        }
                    }
                    previous = Some(range);
                }
            }
        }
        let range = start..out.len();
        for leaf in &mut out[range.clone()] {
            leaf.conditions.extend(self.conditions.iter().cloned());
            leaf.before.extend(self.before.iter().cloned());
            leaf.after.extend(self.after.iter().cloned());
            for set in &self.sets {
                if !leaf.sets.contains(set) {
                    leaf.sets.push(set.clone());
                }
            }
            leaf.ambiguous_with.extend(self.ambiguous_with.iter().cloned());
            leaf.ambiguous_with_all |= self.ambiguous_with_all;
            leaf.debug |= self.debug;
        }
        range
    }
}

/// One system of a flattened [`Systems`], with its share of the groups'
/// configuration.
pub(super) struct Leaf {
    pub system: BoxedSystem,
    /// The functions a pipe is made from (empty for other systems).
    pub made_from: Vec<TypeId>,
    pub conditions: Vec<Condition>,
    pub before: Vec<SystemSelector>,
    pub after: Vec<SystemSelector>,
    /// Leaves (by position in the flattened list) this one runs after: the
    /// previous member of a chain.
    pub after_leaves: Vec<usize>,
    pub sets: Vec<Cow<'static, str>>,
    pub ambiguous_with: Vec<SystemSelector>,
    pub ambiguous_with_all: bool,
    pub debug: bool,
}

/// One system or a tuple of them (nested tuples too), with the options
/// they share: [`chain`](IntoSystems::chain) (run in the order written),
/// [`run_if`](IntoSystems::run_if), [`before`](IntoSystems::before) /
/// [`after`](IntoSystems::after), [`in_set`](IntoSystems::in_set) and
/// [`debug`](IntoSystems::debug). Each option applies to every system of
/// the tuple; options given to an inner tuple apply to its systems only.
///
/// ```
/// use archetable::prelude::*;
///
/// #[derive(Default)] struct Trace(Vec<&'static str>);
/// struct Lives(u32);
///
/// fn thrust(mut t: ResMut<Trace>) { t.0.push("thrust") }
/// fn integrate(mut t: ResMut<Trace>) { t.0.push("integrate") }
/// fn collide(mut t: ResMut<Trace>) { t.0.push("collide") }
/// fn input(mut t: ResMut<Trace>) { t.0.push("input") }
///
/// let mut world = World::new();
/// world.init_resource::<Trace>();
/// world.insert_resource(Lives(3));
/// let mut schedule = Schedule::new();
/// let playing = Condition::new(|world| world.resource::<Lives>().0 > 0);
/// schedule.add_systems((thrust, integrate, collide).chain().in_set("physics").run_if(&playing));
/// schedule.add_systems(input.before("physics").run_if(playing));
/// schedule.run(&mut world);
/// assert_eq!(world.resource::<Trace>().0, ["input", "thrust", "integrate", "collide"]);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a system or a tuple of systems",
    label = "not systems",
    note = "`add_systems` takes a system, or a tuple of systems and tuples (up to 15 members each)"
)]
pub trait IntoSystems<Marker>: Sized {
    /// The systems, with what they share.
    fn into_systems(self) -> Systems;

    /// Runs the members in the order written: each after every system of
    /// the member before it. (Their commands still apply at the end of the
    /// frame: add an `apply_deferred` point between two members when the
    /// second must see the first one's commands.)
    fn chain(self) -> Systems {
        let mut systems = self.into_systems();
        systems.chained = true;
        systems
    }

    /// Runs every system only when `condition` holds (as well as its own
    /// conditions). The condition is shared, so a group checks it once
    /// (see [`Condition`]). A closure's parameter needs its type,
    /// `|w: &World| ..` (see [`IntoCondition`]).
    fn run_if<M>(self, condition: impl IntoCondition<M>) -> Systems {
        let mut systems = self.into_systems();
        systems.conditions.push(condition.into_condition());
        systems
    }

    /// Runs every system before the systems `other` selects: an id, a label
    /// or set name, or a system function.
    fn before<M>(self, other: impl IntoSystemSelector<M>) -> Systems {
        let mut systems = self.into_systems();
        systems.before.push(other.into_selector());
        systems
    }

    /// Runs every system after the systems `other` selects.
    fn after<M>(self, other: impl IntoSystemSelector<M>) -> Systems {
        let mut systems = self.into_systems();
        systems.after.push(other.into_selector());
        systems
    }

    /// Puts every system in set `set`: other systems can be ordered against
    /// the set by its name, and [`Schedule::configure_set`] gives the whole
    /// set conditions and ordering.
    fn in_set(self, set: impl Into<Cow<'static, str>>) -> Systems {
        let mut systems = self.into_systems();
        let set = set.into();
        if !systems.sets.contains(&set) {
            systems.sets.push(set);
        }
        systems
    }

    /// Accepts the conflicts of every system with the systems `other`
    /// selects (an id, a label or set name, or a system function), so
    /// [`Schedule::ambiguities`] leaves those pairs out, as
    /// [`SystemConfig::ambiguous_with`](crate::SystemConfig::ambiguous_with)
    /// does for one system. A selector that matches no system makes the
    /// report an error.
    ///
    /// ```
    /// use archetable::prelude::*;
    ///
    /// #[derive(Default)] struct Score(u32);
    /// fn coins(mut score: ResMut<Score>) { score.0 += 1 }
    /// fn gems(mut score: ResMut<Score>) { score.0 += 5 }
    /// fn stars(mut score: ResMut<Score>) { score.0 += 9 }
    ///
    /// let mut world = World::new();
    /// world.init_resource::<Score>();
    /// let mut schedule = Schedule::new();
    /// schedule.add_systems((coins, gems).ambiguous_with(stars)); // adding commutes
    /// schedule.add_system(stars);
    /// let pairs = schedule.ambiguities(&mut world).unwrap();
    /// assert_eq!(pairs.len(), 1); // coins and gems, not accepted between them
    /// ```
    fn ambiguous_with<M>(self, other: impl IntoSystemSelector<M>) -> Systems {
        let mut systems = self.into_systems();
        systems.ambiguous_with.push(other.into_selector());
        systems
    }

    /// Accepts every conflict of every system with a system it is not
    /// ordered against, as
    /// [`SystemConfig::ambiguous_with_all`](crate::SystemConfig::ambiguous_with_all)
    /// does for one system.
    fn ambiguous_with_all(self) -> Systems {
        let mut systems = self.into_systems();
        systems.ambiguous_with_all = true;
        systems
    }

    /// Runs every system also while [`Time`](crate::Time) is paused.
    fn debug(self) -> Systems {
        let mut systems = self.into_systems();
        systems.debug = true;
        systems
    }
}

impl IntoSystems<()> for Systems {
    fn into_systems(self) -> Systems {
        self
    }
}

/// Marker for [`IntoSystems`] on one system.
pub struct IsOneSystem<M>(std::marker::PhantomData<M>);

impl<M, S: IntoSystem<M>> IntoSystems<IsOneSystem<M>> for S {
    fn into_systems(self) -> Systems {
        let made_from = crate::system::io::made_from(&self);
        Systems::new(Node::One(self.into_system(), made_from))
    }
}

/// Marker for [`IntoSystems`] on tuples.
pub struct IsSystemTuple<M>(std::marker::PhantomData<M>);

macro_rules! impl_into_systems {
    ($($T:ident $M:ident $i:tt),*) => {
        impl<$($T, $M,)*> IntoSystems<IsSystemTuple<($($M,)*)>> for ($($T,)*)
        where
            $($T: IntoSystems<$M>,)*
        {
            #[allow(clippy::vec_init_then_push)]
            fn into_systems(self) -> Systems {
                #[allow(unused_mut)]
                let mut members = Vec::new();
                $(members.push(self.$i.into_systems());)*
                Systems::new(Node::Many(members))
            }
        }
    };
}

// Tuples of 0 to 15 members, as elsewhere in the crate.
impl_into_systems!();
impl_into_systems!(T0 M0 0);
impl_into_systems!(T0 M0 0, T1 M1 1);
impl_into_systems!(T0 M0 0, T1 M1 1, T2 M2 2);
impl_into_systems!(T0 M0 0, T1 M1 1, T2 M2 2, T3 M3 3);
impl_into_systems!(T0 M0 0, T1 M1 1, T2 M2 2, T3 M3 3, T4 M4 4);
impl_into_systems!(T0 M0 0, T1 M1 1, T2 M2 2, T3 M3 3, T4 M4 4, T5 M5 5);
impl_into_systems!(T0 M0 0, T1 M1 1, T2 M2 2, T3 M3 3, T4 M4 4, T5 M5 5, T6 M6 6);
impl_into_systems!(T0 M0 0, T1 M1 1, T2 M2 2, T3 M3 3, T4 M4 4, T5 M5 5, T6 M6 6, T7 M7 7);
impl_into_systems!(T0 M0 0, T1 M1 1, T2 M2 2, T3 M3 3, T4 M4 4, T5 M5 5, T6 M6 6, T7 M7 7, T8 M8 8);
impl_into_systems!(T0 M0 0, T1 M1 1, T2 M2 2, T3 M3 3, T4 M4 4, T5 M5 5, T6 M6 6, T7 M7 7, T8 M8 8, T9 M9 9);
impl_into_systems!(T0 M0 0, T1 M1 1, T2 M2 2, T3 M3 3, T4 M4 4, T5 M5 5, T6 M6 6, T7 M7 7, T8 M8 8, T9 M9 9, T10 M10 10);
impl_into_systems!(T0 M0 0, T1 M1 1, T2 M2 2, T3 M3 3, T4 M4 4, T5 M5 5, T6 M6 6, T7 M7 7, T8 M8 8, T9 M9 9, T10 M10 10, T11 M11 11);
impl_into_systems!(T0 M0 0, T1 M1 1, T2 M2 2, T3 M3 3, T4 M4 4, T5 M5 5, T6 M6 6, T7 M7 7, T8 M8 8, T9 M9 9, T10 M10 10, T11 M11 11, T12 M12 12);
impl_into_systems!(T0 M0 0, T1 M1 1, T2 M2 2, T3 M3 3, T4 M4 4, T5 M5 5, T6 M6 6, T7 M7 7, T8 M8 8, T9 M9 9, T10 M10 10, T11 M11 11, T12 M12 12, T13 M13 13);
impl_into_systems!(T0 M0 0, T1 M1 1, T2 M2 2, T3 M3 3, T4 M4 4, T5 M5 5, T6 M6 6, T7 M7 7, T8 M8 8, T9 M9 9, T10 M10 10, T11 M11 11, T12 M12 12, T13 M13 13, T14 M14 14);

/// Options of a named set of a [`Schedule`]: what every member shares,
/// members added later included. Get it from
/// [`Schedule::configure_set`].
///
/// ```
/// use archetable::prelude::*;
///
/// #[derive(Default)] struct Trace(Vec<&'static str>);
/// struct Enabled(bool);
///
/// let mut world = World::new();
/// world.init_resource::<Trace>();
/// world.insert_resource(Enabled(false));
/// let mut schedule = Schedule::single_threaded();
/// schedule.configure_set("physics").run_if(|world: &World| world.resource::<Enabled>().0);
/// schedule.add_systems((|mut t: ResMut<Trace>| t.0.push("move")).in_set("physics"));
/// schedule.add_system(|mut t: ResMut<Trace>| t.0.push("draw")).after("physics");
/// schedule.run(&mut world);
/// assert_eq!(world.resource::<Trace>().0, ["draw"]);
/// world.resource_mut::<Enabled>().0 = true;
/// schedule.run(&mut world);
/// assert_eq!(world.resource::<Trace>().0, ["draw", "move", "draw"]);
/// ```
pub struct SetConfig<'a> {
    pub(super) schedule: &'a mut Schedule,
    pub(super) index: usize,
}

/// A named set's own options.
pub(super) struct SetInfo {
    pub name: Cow<'static, str>,
    pub conditions: Vec<Condition>,
    pub before: Vec<SystemSelector>,
    pub after: Vec<SystemSelector>,
    pub ambiguous_with: Vec<SystemSelector>,
    pub ambiguous_with_all: bool,
    pub debug: bool,
}

impl SetConfig<'_> {
    fn set(&mut self) -> &mut SetInfo {
        self.schedule.invalidate();
        &mut self.schedule.sets[self.index]
    }

    /// Runs the set's systems only when `condition` holds (as well as their
    /// own conditions). Checked once per group of systems, however many
    /// members the group has (see [`Condition`]). A closure's parameter
    /// needs its type, `|w: &World| ..` (see [`IntoCondition`]).
    pub fn run_if<M>(mut self, condition: impl IntoCondition<M>) -> Self {
        self.set().conditions.push(condition.into_condition());
        self
    }

    /// Runs every member before the systems `other` selects.
    pub fn before<M>(mut self, other: impl IntoSystemSelector<M>) -> Self {
        self.set().before.push(other.into_selector());
        self
    }

    /// Runs every member after the systems `other` selects.
    pub fn after<M>(mut self, other: impl IntoSystemSelector<M>) -> Self {
        self.set().after.push(other.into_selector());
        self
    }

    /// Accepts the conflicts of every member with the systems `other`
    /// selects, members added later included: [`Schedule::ambiguities`]
    /// leaves those pairs out. A set's name selects its members, so
    /// `configure_set("audio").ambiguous_with("audio")` accepts the
    /// conflicts among them.
    ///
    /// ```
    /// use archetable::prelude::*;
    ///
    /// #[derive(Default)] struct Mix(f32);
    /// fn music(mut mix: ResMut<Mix>) { mix.0 += 0.5 }
    /// fn effects(mut mix: ResMut<Mix>) { mix.0 += 0.25 }
    /// fn voices(mut mix: ResMut<Mix>) { mix.0 += 0.125 }
    ///
    /// let mut world = World::new();
    /// world.init_resource::<Mix>();
    /// let mut schedule = Schedule::new();
    /// schedule.configure_set("audio").ambiguous_with("audio");
    /// schedule.add_systems((music, effects).in_set("audio"));
    /// schedule.add_system(voices);
    /// let pairs = schedule.ambiguities(&mut world).unwrap();
    /// assert_eq!(pairs.len(), 2); // voices against each member
    /// ```
    pub fn ambiguous_with<M>(mut self, other: impl IntoSystemSelector<M>) -> Self {
        self.set().ambiguous_with.push(other.into_selector());
        self
    }

    /// Accepts every conflict of every member with a system it is not
    /// ordered against.
    pub fn ambiguous_with_all(mut self) -> Self {
        self.set().ambiguous_with_all = true;
        self
    }

    /// Runs every member also while [`Time`](crate::Time) is paused.
    pub fn debug(mut self) -> Self {
        self.set().debug = true;
        self
    }

    /// The set's name.
    pub fn name(&self) -> &str {
        &self.schedule.sets[self.index].name
    }
}
