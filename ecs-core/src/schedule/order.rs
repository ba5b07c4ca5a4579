//! The order of a schedule's systems: explicit `before`/`after` constraints
//! first, then priority, then insertion order; and the errors when those
//! cannot all hold.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fmt;

use crate::system::AccessConflict;

/// Why a schedule cannot run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScheduleError {
    /// Two parameters of one system would alias (`error[E0002]`).
    Conflict(AccessConflict),
    /// Two parameters of a system in named sets would alias
    /// (`error[E0002]`); the message names the sets.
    ConflictInSet {
        /// The sets the system was given.
        sets: Vec<String>,
        /// The conflict.
        conflict: Box<AccessConflict>,
    },
    /// The `before`/`after` constraints form a cycle; the systems in it, in
    /// order (each must run before the next, and the last before the first).
    Cycle {
        /// The systems on the cycle.
        systems: Vec<String>,
    },
    /// A `before`/`after` constraint names no system of the schedule.
    UnknownSystem {
        /// The system whose constraint it is.
        system: String,
        /// What the constraint names.
        target: String,
    },
}

impl fmt::Display for ScheduleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScheduleError::Conflict(conflict) => conflict.fmt(f),
            ScheduleError::ConflictInSet { sets, conflict } => {
                let sets: Vec<String> = sets.iter().map(|set| format!("`{set}`")).collect();
                let noun = if sets.len() == 1 { "set" } else { "sets" };
                let text = conflict.to_string();
                let system = format!("system `{}`", conflict.system);
                match text.split_once(&system) {
                    Some((head, tail)) => write!(f, "{head}{system} (in {noun} {}){tail}", sets.join(", ")),
                    None => write!(f, "{text} (the system is in {noun} {})", sets.join(", ")),
                }
            }
            ScheduleError::Cycle { systems } => {
                write!(f, "the ordering constraints form a cycle: ")?;
                for name in systems {
                    write!(f, "`{name}` runs before ")?;
                }
                write!(f, "`{}` again", systems.first().map(String::as_str).unwrap_or(""))
            }
            ScheduleError::UnknownSystem { system, target } => {
                write!(f, "system `{system}` is ordered against {target}, which is not in the schedule")
            }
        }
    }
}

impl std::error::Error for ScheduleError {}

/// One node to order: its priority and name; its position in the input is
/// its insertion order.
pub(crate) struct Node<'a> {
    pub priority: i32,
    pub name: &'a str,
}

/// Orders `nodes` so that every edge `(a, b)` has `a` before `b`; among the
/// nodes free to go next, the lowest priority, then the earliest inserted,
/// goes first. Priority only breaks ties, so no constraint can contradict
/// it: a constraint that puts a high priority value first pulls that system
/// (and only the systems it must follow) ahead.
pub(crate) fn order(nodes: &[Node<'_>], edges: &[(usize, usize)]) -> Result<Vec<usize>, ScheduleError> {
    let mut successors = vec![Vec::new(); nodes.len()];
    let mut blockers = vec![0usize; nodes.len()];
    for &(a, b) in edges {
        successors[a].push(b);
        blockers[b] += 1;
    }
    let mut ready: BinaryHeap<Reverse<(i32, usize)>> =
        (0..nodes.len()).filter(|&i| blockers[i] == 0).map(|i| Reverse((nodes[i].priority, i))).collect();
    let mut order = Vec::with_capacity(nodes.len());
    while let Some(Reverse((_, i))) = ready.pop() {
        order.push(i);
        for &next in &successors[i] {
            blockers[next] -= 1;
            if blockers[next] == 0 {
                ready.push(Reverse((nodes[next].priority, next)));
            }
        }
    }
    if order.len() == nodes.len() {
        return Ok(order);
    }
    let cycle = find_cycle(&successors, &blockers);
    Err(ScheduleError::Cycle { systems: cycle.into_iter().map(|i| nodes[i].name.to_string()).collect() })
}

/// A cycle among the nodes still blocked after a topological sort: walk
/// backwards along blocked predecessors until a node repeats.
fn find_cycle(successors: &[Vec<usize>], blockers: &[usize]) -> Vec<usize> {
    let mut predecessor = vec![None; successors.len()];
    for (a, next) in successors.iter().enumerate() {
        if blockers[a] == 0 {
            continue;
        }
        for &b in next {
            if blockers[b] > 0 && predecessor[b].is_none() {
                predecessor[b] = Some(a);
            }
        }
    }
    let start = (0..blockers.len()).find(|&i| blockers[i] > 0 && predecessor[i].is_some()).unwrap_or(0);
    let mut seen = vec![usize::MAX; successors.len()];
    let mut path = Vec::new();
    let mut at = start;
    while seen[at] == usize::MAX {
        seen[at] = path.len();
        path.push(at);
        match predecessor[at] {
            Some(p) => at = p,
            None => break,
        }
    }
    let mut cycle = path.split_off(seen[at].min(path.len()));
    cycle.reverse();
    cycle
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nodes<'a>(spec: &[(&'a str, i32)]) -> Vec<Node<'a>> {
        spec.iter().map(|&(name, priority)| Node { priority, name }).collect()
    }

    #[test]
    fn priority_then_insertion_order() {
        let n = nodes(&[("a", 5), ("b", 1), ("c", 5), ("d", 1)]);
        assert_eq!(order(&n, &[]).unwrap(), [1, 3, 0, 2]);
    }

    #[test]
    fn constraints_come_first() {
        let n = nodes(&[("a", 0), ("b", 0), ("c", 0)]);
        // c before a, a before b.
        assert_eq!(order(&n, &[(2, 0), (0, 1)]).unwrap(), [2, 0, 1]);
    }

    #[test]
    fn a_cycle_names_every_member_in_order() {
        let n = nodes(&[("a", 0), ("b", 0), ("c", 0), ("free", 0)]);
        let err = order(&n, &[(0, 1), (1, 2), (2, 0)]).unwrap_err();
        let ScheduleError::Cycle { systems } = err else { panic!("{err:?}") };
        let mut rotated = systems.clone();
        let first_a = rotated.iter().position(|s| s == "a").unwrap();
        rotated.rotate_left(first_a);
        assert_eq!(rotated, ["a", "b", "c"]);
    }

    #[test]
    fn a_constraint_wins_over_priorities() {
        // `late` (10) must run before `early` (1), which then waits for it;
        // the free systems go by priority meanwhile.
        let n = nodes(&[("late", 10), ("early", 1), ("other", 5), ("first", 0)]);
        assert_eq!(order(&n, &[(0, 1)]).unwrap(), [3, 2, 0, 1]);
    }
}
