//! Which archetypes a query can visit, as a formula over component presence.
//! The system access checker uses it to prove two queries disjoint: a
//! `Query<&mut Hp, With<Player>>` and a `Query<&mut Hp, Without<Player>>`
//! never see the same entity, so they may both write `Hp`.

use std::fmt;

use crate::component::ComponentId;
use crate::storage::bitset::BitSet;

/// Past this many terms a condition is widened to a single term, so that
/// nested `Or`s cannot make the check exponential. Widening only loses
/// precision: the checker may refuse a pair it could have accepted, never
/// the reverse.
const MAX_TERMS: usize = 64;

/// A set of archetypes described by a disjunction of terms, each term a
/// conjunction of "has component" and "lacks component" literals.
///
/// A query's condition covers (at least) every archetype it matches: `&T`
/// and `With<T>` give "has `T`", `Without<T>` gives "lacks `T`", tuples take
/// the conjunction and `Or` the disjunction. `Option<..>` and `Entity` add
/// nothing. Two conditions are disjoint when every pair of their terms
/// contradicts itself (one needs a component the other excludes).
#[derive(Clone, PartialEq, Eq)]
pub struct ArchetypeCondition {
    /// Satisfiable terms only; no terms means no archetype.
    terms: Vec<Term>,
}

#[derive(Clone, Default, PartialEq, Eq)]
struct Term {
    with: BitSet,
    without: BitSet,
}

impl Term {
    fn is_satisfiable(&self) -> bool {
        !self.with.intersects(&self.without)
    }

    fn and(&self, other: &Term) -> Term {
        let mut with = self.with.clone();
        with.union_with(&other.with);
        let mut without = self.without.clone();
        without.union_with(&other.without);
        Term { with, without }
    }
}

impl ArchetypeCondition {
    /// Every archetype.
    pub fn any() -> Self {
        ArchetypeCondition { terms: vec![Term::default()] }
    }

    /// No archetype.
    pub fn none() -> Self {
        ArchetypeCondition { terms: Vec::new() }
    }

    /// The archetypes that have component `id`.
    pub fn with(id: ComponentId) -> Self {
        let mut term = Term::default();
        term.with.insert(id.index());
        ArchetypeCondition { terms: vec![term] }
    }

    /// The archetypes that lack component `id`.
    pub fn without(id: ComponentId) -> Self {
        let mut term = Term::default();
        term.without.insert(id.index());
        ArchetypeCondition { terms: vec![term] }
    }

    /// The archetypes in both `self` and `other`.
    pub fn and(&self, other: &ArchetypeCondition) -> Self {
        let mut terms = Vec::with_capacity(self.terms.len() * other.terms.len());
        for a in &self.terms {
            for b in &other.terms {
                let term = a.and(b);
                if term.is_satisfiable() && !terms.contains(&term) {
                    terms.push(term);
                }
            }
        }
        ArchetypeCondition { terms }.widened()
    }

    /// The archetypes in `self` or `other`.
    pub fn or(mut self, other: ArchetypeCondition) -> Self {
        for term in other.terms {
            if !self.terms.contains(&term) {
                self.terms.push(term);
            }
        }
        self.widened()
    }

    /// Whether no archetype is in both `self` and `other`.
    pub fn is_disjoint(&self, other: &ArchetypeCondition) -> bool {
        self.terms.iter().all(|a| other.terms.iter().all(|b| !a.and(b).is_satisfiable()))
    }

    /// Whether the condition admits no archetype at all.
    pub fn is_none(&self) -> bool {
        self.terms.is_empty()
    }

    /// Replaces too many terms by the one term implied by all of them.
    fn widened(self) -> Self {
        if self.terms.len() <= MAX_TERMS {
            return self;
        }
        let mut terms = self.terms.into_iter();
        let mut widest = terms.next().unwrap_or_default();
        for term in terms {
            widest.with.intersect_with(&term.with);
            widest.without.intersect_with(&term.without);
        }
        ArchetypeCondition { terms: vec![widest] }
    }
}

impl fmt::Debug for ArchetypeCondition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.terms.is_empty() {
            return f.write_str("false");
        }
        for (i, term) in self.terms.iter().enumerate() {
            if i > 0 {
                f.write_str(" | ")?;
            }
            let literals: Vec<String> = term
                .with
                .iter()
                .map(|c| format!("#{c}"))
                .chain(term.without.iter().map(|c| format!("!#{c}")))
                .collect();
            if literals.is_empty() {
                f.write_str("true")?;
            } else {
                write!(f, "({})", literals.join(" & "))?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(i: u32) -> ComponentId {
        ComponentId(i)
    }

    #[test]
    fn with_and_without_of_one_component_are_disjoint() {
        let a = ArchetypeCondition::with(id(0));
        let not_a = ArchetypeCondition::without(id(0));
        assert!(a.is_disjoint(&not_a));
        assert!(!a.is_disjoint(&ArchetypeCondition::with(id(1))));
        assert!(!a.is_disjoint(&ArchetypeCondition::any()));
        assert!(a.is_disjoint(&ArchetypeCondition::none()));
    }

    #[test]
    fn or_is_disjoint_only_if_every_branch_is() {
        // (A | B) against (!A & !B): disjoint.
        let a_or_b = ArchetypeCondition::with(id(0)).or(ArchetypeCondition::with(id(1)));
        let neither = ArchetypeCondition::without(id(0)).and(&ArchetypeCondition::without(id(1)));
        assert!(a_or_b.is_disjoint(&neither));
        // (!A | X) against A: the `!A` branch is excluded, but `X` may hold
        // together with `A`, so they overlap.
        let not_a_or_x = ArchetypeCondition::without(id(0)).or(ArchetypeCondition::with(id(2)));
        assert!(!not_a_or_x.is_disjoint(&ArchetypeCondition::with(id(0))));
    }

    #[test]
    fn contradictions_vanish() {
        let c = ArchetypeCondition::with(id(3)).and(&ArchetypeCondition::without(id(3)));
        assert!(c.is_none());
    }

    #[test]
    fn widening_keeps_only_what_all_terms_share() {
        let mut c = ArchetypeCondition::none();
        for i in 0..(MAX_TERMS as u32 + 1) {
            c = c.or(ArchetypeCondition::with(id(100)).and(&ArchetypeCondition::with(id(i))));
        }
        assert_eq!(c.terms.len(), 1);
        assert!(c.is_disjoint(&ArchetypeCondition::without(id(100))));
        assert!(!c.is_disjoint(&ArchetypeCondition::with(id(5))));
    }
}
