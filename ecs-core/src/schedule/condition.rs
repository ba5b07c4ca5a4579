//! Run conditions: the checks that decide, frame by frame, whether a
//! system runs. A [`Condition`] is cheap to clone and shared by its
//! clones, so one check can gate many systems, and combines with others
//! through [`and`](Condition::and), [`or`](Condition::or) and
//! [`not`](Condition::not).

use std::any::type_name;
use std::borrow::Cow;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use crate::world::World;

type CheckFn = dyn Fn(&World) -> bool + Send + Sync;

/// A run condition: a check on the world that says whether a system (or
/// every system of a group or set) runs this frame. Give one to
/// [`SystemConfig::run_if`](crate::SystemConfig::run_if),
/// [`IntoSystems::run_if`](crate::IntoSystems::run_if) or
/// [`SetConfig::run_if`](crate::SetConfig::run_if).
///
/// A condition is cheap to clone (the check is shared, not copied), and
/// `&Condition` is accepted wherever a condition is, so one condition can
/// gate any number of systems. Conditions combine with
/// [`and`](Condition::and), [`or`](Condition::or) and
/// [`not`](Condition::not), which short-circuit as `&&` and `||` do.
///
/// ```
/// use archetable::prelude::*;
///
/// struct Lives(u32);
/// struct Paused(bool);
///
/// let alive = Condition::new(|world| world.resource::<Lives>().0 > 0);
/// let paused = Condition::new(|world| world.resource::<Paused>().0);
/// let playing = alive.clone().and(paused.not());
///
/// let mut world = World::new();
/// world.insert_resource(Lives(3));
/// world.insert_resource(Paused(false));
/// assert!(playing.check(&world));
/// world.resource_mut::<Lives>().0 = 0;
/// assert!(!playing.check(&world));
/// assert!(!alive.check(&world)); // the clone is the same condition
/// ```
///
/// # When a condition is checked
/// The conditions of a system are checked when the group of systems
/// around it starts (the frame, or the part after an exclusive system or
/// an `apply_deferred` point), before any of that group runs, in the order
/// they were given, stopping at the first that does not hold. A condition
/// shared by several systems of one group (the same condition or clones of
/// it) is checked once for all of them, so a condition that keeps state
/// (a closure counting frames) advances once per group, however many
/// systems it gates.
#[derive(Clone)]
pub struct Condition {
    check: Arc<CheckFn>,
    name: Cow<'static, str>,
}

impl Condition {
    /// A condition from a check on the world. For a closure that keeps
    /// state (`FnMut`), pass it to `run_if` directly or through
    /// [`IntoCondition::into_condition`].
    pub fn new<F>(check: F) -> Condition
    where
        F: Fn(&World) -> bool + Send + Sync + 'static,
    {
        Condition { check: Arc::new(check), name: Cow::Borrowed(type_name::<F>()) }
    }

    /// The same condition under `name`, which [`Debug`](fmt::Debug) shows.
    pub fn named(mut self, name: impl Into<Cow<'static, str>>) -> Condition {
        self.name = name.into();
        self
    }

    /// The condition's name: the one given to [`named`](Condition::named),
    /// or the type of its check.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Checks the condition on `world`.
    #[inline]
    pub fn check(&self, world: &World) -> bool {
        (self.check)(world)
    }

    /// Holds when both hold; `other` is not checked when `self` does not
    /// hold.
    pub fn and<M>(self, other: impl IntoCondition<M>) -> Condition {
        let other = other.into_condition();
        let name = format!("({} and {})", self.name, other.name);
        Condition::new(move |world| self.check(world) && other.check(world)).named(name)
    }

    /// Holds when either holds; `other` is not checked when `self` holds.
    pub fn or<M>(self, other: impl IntoCondition<M>) -> Condition {
        let other = other.into_condition();
        let name = format!("({} or {})", self.name, other.name);
        Condition::new(move |world| self.check(world) || other.check(world)).named(name)
    }

    /// Holds when `self` does not.
    #[allow(clippy::should_implement_trait)] // `!condition` would read as a bool
    pub fn not(self) -> Condition {
        let name = format!("not {}", self.name);
        Condition::new(move |world| !self.check(world)).named(name)
    }

    /// Identifies the shared check, so a group checks it once.
    pub(crate) fn key(&self) -> usize {
        Arc::as_ptr(&self.check) as *const () as usize
    }
}

impl fmt::Debug for Condition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Condition").field(&self.name).finish()
    }
}

/// Anything `run_if` takes: a [`Condition`], a `&Condition` (a clone of
/// it), or a function or closure `FnMut(&World) -> bool` (annotate the
/// closure's parameter: `|world: &World| ..`). In `archetable::prelude`,
/// which brings [`and`](IntoCondition::and), [`or`](IntoCondition::or) and
/// [`not`](IntoCondition::not) to plain functions too.
///
/// # A closure's parameter needs its type
///
/// `run_if(|w| w.resource::<Lives>().0 > 0)` does not compile: the
/// compiler picks the closure's parameter type from the function it is
/// passed to only when that function asks for a closure outright, and
/// `run_if` asks for anything that is a condition. It says
/// **"type annotations needed"** (E0282, suggesting `|w: /* Type */|`)
/// when the closure calls a method on its parameter, and
/// **"implementation of `FnMut` is not general enough"** when it passes
/// the parameter on. The fix for both: `|w: &World| ..`, or
/// [`Condition::new(|w| ..)`](Condition::new), which asks for a closure
/// outright and so infers it.
///
/// ```
/// use archetable::prelude::*;
///
/// struct Lives(u32);
/// fn fly() {}
///
/// let mut schedule = Schedule::new();
/// schedule.add_system(fly).run_if(|w: &World| w.resource::<Lives>().0 > 0);
/// schedule.add_system(fly).run_if(Condition::new(|w| w.resource::<Lives>().0 > 0));
/// ```
///
/// ```
/// use archetable::prelude::*;
///
/// struct Score(u32);
/// fn high_score(world: &World) -> bool {
///     world.resource::<Score>().0 >= 100
/// }
///
/// let mut world = World::new();
/// world.insert_resource(Score(120));
/// let both = high_score.and(|world: &World| world.contains_resource::<Score>());
/// assert!(both.check(&world));
/// assert!(!high_score.not().check(&world));
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a run condition",
    label = "not a run condition",
    note = "a run condition is a `Condition` (`in_state(..)`, `Condition::new(..)`), a `&Condition`, or a function \
            or closure taking `&World` and returning `bool`: annotate a closure's parameter (`|world: &World| ..`)"
)]
pub trait IntoCondition<Marker>: Sized {
    /// The condition.
    fn into_condition(self) -> Condition;

    /// Holds when both hold; see [`Condition::and`].
    fn and<M>(self, other: impl IntoCondition<M>) -> Condition {
        self.into_condition().and(other)
    }

    /// Holds when either holds; see [`Condition::or`].
    fn or<M>(self, other: impl IntoCondition<M>) -> Condition {
        self.into_condition().or(other)
    }

    /// Holds when `self` does not; see [`Condition::not`].
    fn not(self) -> Condition {
        self.into_condition().not()
    }
}

impl IntoCondition<()> for Condition {
    fn into_condition(self) -> Condition {
        self
    }
}

impl IntoCondition<()> for &Condition {
    fn into_condition(self) -> Condition {
        self.clone()
    }
}

/// Marker for [`IntoCondition`] on functions and closures.
pub struct IsConditionFn;

impl<F> IntoCondition<IsConditionFn> for F
where
    F: FnMut(&World) -> bool + Send + 'static,
{
    fn into_condition(self) -> Condition {
        // A `FnMut` may keep state; the lock lets clones share it. Checks
        // never overlap (a schedule checks its conditions on one thread),
        // so the lock is never contended within a schedule.
        let check = Mutex::new(self);
        Condition {
            check: Arc::new(move |world: &World| (check.lock().unwrap_or_else(PoisonError::into_inner))(world)),
            name: Cow::Borrowed(type_name::<F>()),
        }
    }
}

/// Checks `conditions` in order, stopping at the first that does not hold;
/// a check already made this round (by key) is not made again.
pub(crate) fn all_hold<'c>(
    conditions: impl IntoIterator<Item = &'c Condition>,
    world: &World,
    memo: &mut Vec<(usize, bool)>,
) -> bool {
    for condition in conditions {
        let key = condition.key();
        let holds = match memo.iter().find(|&&(k, _)| k == key) {
            Some(&(_, holds)) => holds,
            None => {
                let holds = condition.check(world);
                memo.push((key, holds));
                holds
            }
        };
        if !holds {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn combinators_short_circuit() {
        let calls = Arc::new(Mutex::new(0));
        let counted = {
            let calls = calls.clone();
            Condition::new(move |_| {
                *calls.lock().unwrap() += 1;
                true
            })
        };
        let never = Condition::new(|_| false);
        let always = Condition::new(|_| true);
        let world = World::new();
        assert!(!never.clone().and(&counted).check(&world));
        assert!(always.clone().or(&counted).check(&world));
        assert_eq!(*calls.lock().unwrap(), 0);
        assert!(never.or(&counted).check(&world));
        assert!(always.and(&counted).check(&world));
        assert_eq!(*calls.lock().unwrap(), 2);
    }

    #[test]
    fn a_memo_checks_a_shared_condition_once() {
        let calls = Arc::new(Mutex::new(0));
        let counted = {
            let calls = calls.clone();
            Condition::new(move |_| {
                *calls.lock().unwrap() += 1;
                true
            })
        };
        let copy = counted.clone();
        let world = World::new();
        let mut memo = Vec::new();
        assert!(all_hold([&counted, &copy], &world, &mut memo));
        assert!(all_hold([&copy], &world, &mut memo));
        assert_eq!(*calls.lock().unwrap(), 1);
        assert_eq!(counted.key(), copy.key());
        assert_ne!(counted.key(), counted.clone().not().key());
    }
}
