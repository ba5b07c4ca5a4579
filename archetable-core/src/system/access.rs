//! What a system touches, recorded parameter by parameter when it is added,
//! and the two checks built on it: two parameters of one system must not
//! alias, and two systems that conflict must not run at the same time.

use std::borrow::Cow;
use std::fmt;

use crate::bitset::BitSet;
use crate::component::{ComponentId, Components};
use crate::query::{Access, ArchetypeCondition};
use crate::resource::ResourceId;

/// The component access of one query parameter: what it reads and writes,
/// and which archetypes it can visit.
#[derive(Clone, Debug)]
struct QueryAccess {
    param: usize,
    /// The query's own type name, when it sits inside a parameter set.
    leaf: String,
    reads: BitSet,
    writes: BitSet,
    condition: ArchetypeCondition,
}

impl QueryAccess {
    /// A component both queries touch, one of them mutably, on an
    /// archetype both can visit.
    fn conflict(&self, other: &QueryAccess) -> Option<(ComponentId, bool)> {
        let shared = |a: &BitSet, b: &BitSet| a.intersection(b).next();
        let found = shared(&self.writes, &other.writes)
            .map(|c| (c, true))
            .or_else(|| shared(&self.writes, &other.reads).map(|c| (c, true)))
            .or_else(|| shared(&self.reads, &other.writes).map(|c| (c, false)))?;
        if self.condition.is_disjoint(&other.condition) {
            return None;
        }
        Some((ComponentId(found.0 as u32), found.1))
    }
}

/// Everything one system reads and writes, by parameter.
#[derive(Clone, Debug, Default)]
pub struct SystemAccess {
    exclusive: bool,
    /// Parameter names (shortened type names), by position.
    params: Vec<Cow<'static, str>>,
    queries: Vec<QueryAccess>,
    resource_reads: Vec<(ResourceId, usize, String)>,
    resource_writes: Vec<(ResourceId, usize, String)>,
    /// Unions over all queries, for a quick "no overlap" answer.
    all_component_reads: BitSet,
    all_component_writes: BitSet,
    all_resource_reads: BitSet,
    all_resource_writes: BitSet,
}

/// Two parameters of one system that would alias: the system is refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccessConflict {
    /// The system's name.
    pub system: String,
    /// Position and type of the parameter that writes, as the message shows
    /// it (`` `Query<&mut A>` ``).
    pub writer: (usize, String),
    /// Position and type of the other parameter (the same position when one
    /// parameter, such as a derived parameter set, holds both).
    pub other: (usize, String),
    /// `component `Name`` or `resource `Name``.
    pub item: String,
}

impl fmt::Display for AccessConflict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Queries can be made disjoint by filters; a resource cannot.
        let hint = if self.item.starts_with("resource") {
            "take the resource once (a `ResMut` reads too), or split the system"
        } else {
            "make the two queries disjoint with `With`/`Without` filters, merge them into one parameter, or split the \
             system"
        };
        write!(
            f,
            "error[E0002]: system `{}` cannot run: parameter #{} {} writes {} while parameter #{} {} also borrows it; \
             {hint}",
            self.system, self.writer.0, self.writer.1, self.item, self.other.0, self.other.1
        )
    }
}

impl std::error::Error for AccessConflict {}

impl SystemAccess {
    /// The access of a system that takes `&mut World`: it conflicts with
    /// every other system.
    pub fn exclusive() -> Self {
        SystemAccess { exclusive: true, ..Default::default() }
    }

    /// Whether the system takes the whole world.
    pub fn is_exclusive(&self) -> bool {
        self.exclusive
    }

    /// Starts recording the parameter at the next position.
    pub(crate) fn begin_param(&mut self, name: Cow<'static, str>) {
        self.params.push(name);
    }

    fn current_param(&self) -> usize {
        self.params.len().saturating_sub(1)
    }

    /// `Name`, or `Set (Leaf)` when the borrow comes from `Leaf` inside the
    /// parameter set `Set`.
    fn param_name(&self, index: usize, leaf: &str) -> String {
        let top = self.params.get(index).map(|n| n.to_string()).unwrap_or_default();
        if top == leaf || leaf.is_empty() {
            format!("`{top}`")
        } else {
            format!("`{top}` (its `{leaf}`)")
        }
    }

    /// Records a query of the current parameter; fails if it aliases an
    /// earlier parameter's borrow.
    pub(crate) fn add_query(
        &mut self,
        system: &str,
        components: &Components,
        leaf: &str,
        access: &Access,
        condition: ArchetypeCondition,
    ) -> Result<(), AccessConflict> {
        let query = QueryAccess {
            param: self.current_param(),
            leaf: short_type_name(leaf),
            reads: access.reads().clone(),
            writes: access.writes().clone(),
            condition,
        };
        for earlier in &self.queries {
            if let Some((component, query_writes)) = query.conflict(earlier) {
                let (writer, other) = if query_writes { (&query, earlier) } else { (earlier, &query) };
                return Err(AccessConflict {
                    system: system.to_string(),
                    writer: (writer.param, self.param_name(writer.param, &writer.leaf)),
                    other: (other.param, self.param_name(other.param, &other.leaf)),
                    item: format!("component `{}`", short_type_name(components.name(component))),
                });
            }
        }
        self.all_component_reads.union_with(&query.reads);
        self.all_component_writes.union_with(&query.writes);
        self.queries.push(query);
        Ok(())
    }

    /// Records a shared borrow of resource `id` by the current parameter.
    pub(crate) fn add_resource_read(
        &mut self,
        system: &str,
        id: ResourceId,
        name: &str,
        leaf: &str,
    ) -> Result<(), AccessConflict> {
        let leaf = short_type_name(leaf);
        if let Some((_, writer, writer_leaf)) = self.resource_writes.iter().find(|(r, ..)| *r == id) {
            let writer = (*writer, self.param_name(*writer, writer_leaf));
            let other = (self.current_param(), self.param_name(self.current_param(), &leaf));
            return Err(resource_conflict(system, writer, other, name));
        }
        self.resource_reads.push((id, self.current_param(), leaf));
        self.all_resource_reads.insert(id.index());
        Ok(())
    }

    /// Records an exclusive borrow of resource `id` by the current parameter.
    pub(crate) fn add_resource_write(
        &mut self,
        system: &str,
        id: ResourceId,
        name: &str,
        leaf: &str,
    ) -> Result<(), AccessConflict> {
        let leaf = short_type_name(leaf);
        let earlier = self.resource_writes.iter().chain(&self.resource_reads).find(|(r, ..)| *r == id);
        if let Some((_, other, other_leaf)) = earlier {
            let writer = (self.current_param(), self.param_name(self.current_param(), &leaf));
            let other = (*other, self.param_name(*other, other_leaf));
            return Err(resource_conflict(system, writer, other, name));
        }
        self.resource_writes.push((id, self.current_param(), leaf));
        self.all_resource_writes.insert(id.index());
        Ok(())
    }

    /// Whether the two systems may not run at the same time: one writes
    /// what the other borrows (on archetypes both can visit), or either takes
    /// the whole world.
    pub fn conflicts_with(&self, other: &SystemAccess) -> bool {
        if self.exclusive || other.exclusive {
            return true;
        }
        if self.all_resource_writes.intersects(&other.all_resource_writes)
            || self.all_resource_writes.intersects(&other.all_resource_reads)
            || self.all_resource_reads.intersects(&other.all_resource_writes)
        {
            return true;
        }
        let components_overlap = self.all_component_writes.intersects(&other.all_component_writes)
            || self.all_component_writes.intersects(&other.all_component_reads)
            || self.all_component_reads.intersects(&other.all_component_writes);
        components_overlap && self.queries.iter().any(|a| other.queries.iter().any(|b| a.conflict(b).is_some()))
    }
}

fn resource_conflict(system: &str, writer: (usize, String), other: (usize, String), name: &str) -> AccessConflict {
    AccessConflict { system: system.to_string(), writer, other, item: format!("resource `{}`", short_type_name(name)) }
}

/// `a::b::Name<'_, c::D>` → `Name<D>`: type names as a reader writes them,
/// without paths or elided lifetimes.
pub(crate) fn short_type_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut segment_start = 0;
    for (i, c) in name.char_indices() {
        match c {
            ':' => segment_start = i + 1,
            '<' | '>' | ',' | ' ' | '(' | ')' | '[' | ']' | ';' | '&' => {
                out.push_str(&name[segment_start..i]);
                out.push(c);
                segment_start = i + 1;
            }
            _ => {}
        }
    }
    out.push_str(&name[segment_start..]);
    out.replace("'_, ", "").replace("<'_>", "").replace(", '_", "")
}

#[cfg(test)]
mod tests {
    use super::short_type_name;

    #[test]
    fn short_names_drop_paths() {
        assert_eq!(short_type_name("game::Position"), "Position");
        assert_eq!(
            short_type_name(
                "archetable_core::system::query::Query<(&mut game::A, &game::B), archetable_core::query::Without<game::C>>"
            ),
            "Query<(&mut A, &B), Without<C>>"
        );
        assert_eq!(short_type_name("u32"), "u32");
        assert_eq!(short_type_name("game::Set<'_, '_>"), "Set");
        assert_eq!(short_type_name("archetable::Query<'_, '_, &game::A>"), "Query<&A>");
    }
}
