//! The ambiguity report: the pairs of systems whose accesses conflict (one
//! writes what the other reads or writes) with no ordering constraint
//! between them, directly or through other systems.
//!
//! Such a pair still runs in a fixed order (the schedule's order: its
//! constraints, then priority, then insertion order), one after the other,
//! so a run is repeatable. But nothing the user wrote fixes that order:
//! adding a system, a constraint elsewhere or a priority can flip it, and
//! with it the outcome, which rollback netcode and replays must reproduce
//! exactly. Priorities do not count as an order: they only break ties
//! among the systems free to go next, so a constraint elsewhere can put a
//! higher priority value first.
//!
//! What counts as a conflict is what keeps two systems from running at the
//! same time: a component or a resource both borrow with one of them
//! writing it (on tables both queries can visit), events (an
//! `EventWriter` writes the event queue, an `EventReader` reads it), a
//! `&World` parameter (it reads everything the other writes), and an
//! exclusive `&mut World` system (it conflicts with every system).
//! `Commands` are not a conflict by themselves: they apply after the
//! systems, in run order. `apply_deferred` points are not systems and are
//! left out; disabled systems and run conditions do not matter (a
//! disabled system can be enabled, a condition can hold).

use std::fmt;

use super::{executor, Entry, ScheduleError};
use crate::component::Components;

/// Two systems that conflict with no order between them, in insertion
/// order, and what they both touch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ambiguity {
    /// The system added first.
    pub first: String,
    /// The system added later.
    pub second: String,
    /// What they both touch, one of them writing it, sorted by name.
    pub clashes: Vec<Clash>,
}

/// One thing two systems of an [`Ambiguity`] both touch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Clash {
    /// A system takes the whole world (`&mut World`): it conflicts with
    /// every other system. Names that system.
    Exclusive(String),
    /// A component or a resource (an event's queue is the resource
    /// `Events<E>`) by its short type name, and which of the two write it.
    Data {
        /// The type's short name.
        item: String,
        /// Whether [`Ambiguity::first`] writes it.
        first_writes: bool,
        /// Whether [`Ambiguity::second`] writes it.
        second_writes: bool,
    },
}

/// The ambiguity report of a schedule ([`Schedule::ambiguities`]): every
/// pair of systems that conflict with no order between them and that no
/// `ambiguous_with` accepts, sorted by the systems' insertion order (first
/// by the earlier system of each pair, then by the later).
///
/// Its `Display` prints one line per pair, naming the data:
///
/// ```
/// use archetable::prelude::*;
///
/// #[derive(Component)] struct Position(f32);
/// fn move_player(mut q: Query<&mut Position>) { for mut p in q.iter_mut() { p.0 += 1.0 } }
/// fn clamp(mut q: Query<&mut Position>) { for mut p in q.iter_mut() { p.0 = p.0.min(10.0) } }
///
/// let mut world = World::new();
/// let mut schedule = Schedule::new();
/// schedule.add_system(move_player);
/// schedule.add_system(clamp);
/// let report = schedule.ambiguities(&mut world).unwrap();
/// assert_eq!(report.len(), 1);
/// assert!(report.to_string().ends_with("`move_player` and `clamp` both write `Position`\n"));
///
/// // Ordered: nothing to report.
/// let mut schedule = Schedule::new();
/// let moved = schedule.add_system(move_player).id();
/// schedule.add_system(clamp).after(moved);
/// assert!(schedule.ambiguities(&mut world).unwrap().is_empty());
/// ```
///
/// [`Schedule::ambiguities`]: crate::Schedule::ambiguities
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ambiguities {
    pairs: Vec<Ambiguity>,
}

impl Ambiguities {
    /// The pairs, in the report's order.
    pub fn pairs(&self) -> &[Ambiguity] {
        &self.pairs
    }

    /// How many pairs.
    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    /// Whether no pair is ambiguous.
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// The pairs as `(first, second)` names, in the report's order: what a
    /// test compares against a known list.
    pub fn names(&self) -> Vec<(&str, &str)> {
        self.pairs.iter().map(|p| (p.first.as_str(), p.second.as_str())).collect()
    }
}

impl fmt::Display for Ambiguity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (a, b) = (&self.first, &self.second);
        if let [Clash::Data { item, first_writes: true, second_writes: true }] = &self.clashes[..] {
            return write!(f, "`{a}` and `{b}` both write `{item}`");
        }
        write!(f, "`{a}` and `{b}`: ")?;
        for (i, clash) in self.clashes.iter().enumerate() {
            if i > 0 {
                write!(f, "; ")?;
            }
            match clash {
                Clash::Exclusive(system) => write!(f, "`{system}` takes the whole world (`&mut World`)")?,
                Clash::Data { item, first_writes: true, second_writes: true } => write!(f, "both write `{item}`")?,
                Clash::Data { item, first_writes: true, .. } => write!(f, "`{a}` writes `{item}`, `{b}` reads it")?,
                Clash::Data { item, .. } => write!(f, "`{b}` writes `{item}`, `{a}` reads it")?,
            }
        }
        Ok(())
    }
}

impl fmt::Display for Ambiguities {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.pairs.is_empty() {
            return writeln!(f, "no two systems conflict without an order between them");
        }
        let noun = if self.pairs.len() == 1 { "pair" } else { "pairs" };
        writeln!(
            f,
            "{} {noun} of systems conflict with no order between them (order them with `before`/`after`, or \
             accept a pair with `ambiguous_with`):",
            self.pairs.len()
        )?;
        for pair in &self.pairs {
            writeln!(f, "  {pair}")?;
        }
        Ok(())
    }
}

/// The report for `entries`, whose systems are initialized (their accesses
/// known) and whose sets are gathered.
pub(super) fn report(entries: &[Entry], components: &Components) -> Result<Ambiguities, ScheduleError> {
    let n = entries.len();
    // Who may go before whom, through any chain of constraints.
    let mut successors = vec![Vec::new(); n];
    for (a, b) in executor::edges(entries)? {
        successors[a].push(b);
    }
    let mut reaches = vec![vec![false; n]; n];
    for (start, reached) in reaches.iter_mut().enumerate() {
        let mut stack = successors[start].clone();
        while let Some(at) = stack.pop() {
            if !reached[at] {
                reached[at] = true;
                stack.extend(successors[at].iter().copied());
            }
        }
    }
    // The accepted pairs, each way.
    let mut accepted = vec![vec![false; n]; n];
    for (i, entry) in entries.iter().enumerate() {
        for selector in entry.all_ambiguous_with() {
            let targets: Vec<usize> = (0..n).filter(|&j| j != i && entries[j].matches(selector)).collect();
            if targets.is_empty() {
                return Err(ScheduleError::UnknownSystem {
                    system: entry.system.name().to_string(),
                    target: selector.to_string(),
                });
            }
            for j in targets {
                accepted[i][j] = true;
                accepted[j][i] = true;
            }
        }
    }
    let mut pairs = Vec::new();
    for i in 0..n {
        for j in i + 1..n {
            let (a, b) = (&entries[i], &entries[j]);
            if a.sync_point || b.sync_point || reaches[i][j] || reaches[j][i] {
                continue;
            }
            if accepted[i][j] || a.is_ambiguous_with_all() || b.is_ambiguous_with_all() {
                continue;
            }
            let (access_a, access_b) = (a.system.access(), b.system.access());
            if !access_a.conflicts_with(access_b) {
                continue;
            }
            let (first, second) = (a.system.name().to_string(), b.system.name().to_string());
            let clashes = if access_a.is_exclusive() || access_b.is_exclusive() {
                let exclusive = [(access_a, &first), (access_b, &second)];
                exclusive
                    .into_iter()
                    .filter(|(access, _)| access.is_exclusive())
                    .map(|(_, n)| Clash::Exclusive(n.clone()))
                    .collect()
            } else {
                access_a
                    .clashes(access_b, components)
                    .into_iter()
                    .map(|(item, first_writes, second_writes)| Clash::Data { item, first_writes, second_writes })
                    .collect()
            };
            pairs.push(Ambiguity { first, second, clashes });
        }
    }
    Ok(Ambiguities { pairs })
}
