//! What a system touches, recorded parameter by parameter when it is added,
//! and the two checks built on it: two parameters of one system must not
//! alias, and two systems that conflict must not run at the same time.

use std::borrow::Cow;
use std::fmt;

use crate::component::{ComponentId, Components};
use crate::names::short_type_name;
use crate::query::{Access, ArchetypeCondition};
use crate::storage::bitset::BitSet;
use crate::storage::resource::ResourceId;

/// Where a borrow sits inside [`ParamSet`](crate::system::ParamSet)s: per
/// enclosing set (outermost first), the set's number and the member's
/// position. Members of one set are used one at a time, so two borrows
/// under different members of one set never alias.
type SetPath = Vec<(u32, u32)>;

/// Whether two borrows sit in different members of one parameter set.
fn exclusive_members(a: &SetPath, b: &SetPath) -> bool {
    a.iter().any(|&(set, member)| b.iter().any(|&(other_set, other)| set == other_set && member != other))
}

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
    path: SetPath,
}

/// A borrow of one resource by one parameter.
#[derive(Clone, Debug)]
struct ResourceBorrow {
    id: ResourceId,
    /// The resource's short type name.
    name: String,
    param: usize,
    leaf: String,
    path: SetPath,
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
    resource_reads: Vec<ResourceBorrow>,
    resource_writes: Vec<ResourceBorrow>,
    /// The `&World` parameters: each reads every component and resource.
    world_reads: Vec<ResourceBorrow>,
    /// Where the parameter being recorded sits inside parameter sets.
    path: SetPath,
    /// How many parameter sets were opened so far.
    sets: u32,
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
        let hint = if self.writer.1.contains("&World") || self.other.1.contains("&World") {
            "`&World` reads every component and resource: name what the system reads instead (`Query<&A>`, \
             `Res<T>`), or make it an exclusive system taking only `&mut World`"
        } else if self.item.starts_with("resource") {
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

    /// The access of two systems run one after the other as one (a pipe):
    /// everything either touches. The two are not checked against each
    /// other, since they never run at the same time.
    pub(crate) fn union(a: &SystemAccess, b: &SystemAccess) -> SystemAccess {
        let mut out = a.clone();
        let offset = a.params.len();
        out.exclusive |= b.exclusive;
        out.params.extend(b.params.iter().cloned());
        out.queries.extend(b.queries.iter().cloned().map(|mut q| {
            q.param += offset;
            q
        }));
        fn shifted(borrows: &[ResourceBorrow], offset: usize) -> impl Iterator<Item = ResourceBorrow> + '_ {
            borrows.iter().cloned().map(move |mut r| {
                r.param += offset;
                r
            })
        }
        out.resource_reads.extend(shifted(&b.resource_reads, offset));
        out.resource_writes.extend(shifted(&b.resource_writes, offset));
        out.world_reads.extend(shifted(&b.world_reads, offset));
        out.sets += b.sets;
        out.all_component_reads.union_with(&b.all_component_reads);
        out.all_component_writes.union_with(&b.all_component_writes);
        out.all_resource_reads.union_with(&b.all_resource_reads);
        out.all_resource_writes.union_with(&b.all_resource_writes);
        out
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
            path: self.path.clone(),
        };
        let world = self.world_reads.iter().find(|w| !exclusive_members(&w.path, &query.path));
        if let (Some(component), Some(world)) = (query.writes.iter().next(), world) {
            return Err(AccessConflict {
                system: system.to_string(),
                writer: (query.param, self.param_name(query.param, &query.leaf)),
                other: (world.param, self.param_name(world.param, &world.leaf)),
                item: format!("component `{}`", short_type_name(components.name(ComponentId(component as u32)))),
            });
        }
        for earlier in &self.queries {
            if exclusive_members(&query.path, &earlier.path) {
                continue;
            }
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
        let borrow = self.borrow(id, name, leaf);
        let writer = self.resource_writes.iter().find(|w| w.id == id && !exclusive_members(&w.path, &borrow.path));
        if let Some(writer) = writer {
            return Err(self.resource_conflict(system, writer, &borrow, name));
        }
        self.resource_reads.push(borrow);
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
        let borrow = self.borrow(id, name, leaf);
        let earlier = self
            .resource_writes
            .iter()
            .chain(&self.resource_reads)
            .chain(&self.world_reads)
            .find(|b| (b.id == id || b.id == WORLD) && !exclusive_members(&b.path, &borrow.path));
        if let Some(other) = earlier {
            return Err(self.resource_conflict(system, &borrow, other, name));
        }
        self.resource_writes.push(borrow);
        self.all_resource_writes.insert(id.index());
        Ok(())
    }

    /// Records that the current parameter reads the whole world (`&World`):
    /// every component and every resource. Fails if an earlier parameter
    /// writes anything.
    pub(crate) fn add_world_read(
        &mut self,
        system: &str,
        components: &Components,
        leaf: &str,
    ) -> Result<(), AccessConflict> {
        let borrow = self.borrow(WORLD, "World", leaf);
        let other = (borrow.param, self.param_name(borrow.param, &borrow.leaf));
        let query = self.queries.iter().find(|q| !q.writes.is_empty() && !exclusive_members(&q.path, &borrow.path));
        if let Some(query) = query {
            let component = query.writes.iter().next().map(|c| components.name(ComponentId(c as u32))).unwrap_or("");
            return Err(AccessConflict {
                system: system.to_string(),
                writer: (query.param, self.param_name(query.param, &query.leaf)),
                other,
                item: format!("component `{}`", short_type_name(component)),
            });
        }
        if let Some(writer) = self.resource_writes.iter().find(|w| !exclusive_members(&w.path, &borrow.path)) {
            let writer = (writer.param, self.param_name(writer.param, &writer.leaf));
            return Err(AccessConflict { system: system.to_string(), writer, other, item: "a resource".to_string() });
        }
        self.world_reads.push(borrow);
        Ok(())
    }

    /// Whether a parameter reads the whole world (`&World`): the system
    /// then conflicts with every system that writes anything.
    ///
    /// ```
    /// # use archetable::system::SystemAccess;
    /// assert!(!SystemAccess::default().reads_world());
    /// ```
    pub fn reads_world(&self) -> bool {
        !self.world_reads.is_empty()
    }

    /// Opens a parameter set: the borrows recorded until
    /// [`SystemAccess::close_set`] belong to its members, which are not
    /// checked against each other. Returns the set's number.
    pub(crate) fn open_set(&mut self) -> u32 {
        let set = self.sets;
        self.sets += 1;
        self.path.push((set, 0));
        set
    }

    /// Records the next borrows under member `member` of the innermost open
    /// set.
    pub(crate) fn set_member(&mut self, member: u32) {
        if let Some(last) = self.path.last_mut() {
            last.1 = member;
        }
    }

    /// Closes the innermost parameter set.
    pub(crate) fn close_set(&mut self) {
        self.path.pop();
    }

    fn borrow(&self, id: ResourceId, name: &str, leaf: &str) -> ResourceBorrow {
        ResourceBorrow {
            id,
            name: short_type_name(name),
            param: self.current_param(),
            leaf: short_type_name(leaf),
            path: self.path.clone(),
        }
    }

    /// What this system and `other` both borrow with at least one of them
    /// writing it, for the schedule's ambiguity report: each item's short
    /// type name, whether this system writes it and whether `other` does,
    /// sorted by name. A `&World` parameter reads everything the other
    /// writes. Empty when either system is exclusive (it conflicts with
    /// everything) or when they do not conflict.
    pub(crate) fn clashes(&self, other: &SystemAccess, components: &Components) -> Vec<(String, bool, bool)> {
        let mut found: Vec<(String, bool, bool)> = Vec::new();
        let mut note = |name: String, mine: bool, theirs: bool| match found.iter_mut().find(|f| f.0 == name) {
            Some(known) => {
                known.1 |= mine;
                known.2 |= theirs;
            }
            None => found.push((name, mine, theirs)),
        };
        let component = |c: usize| short_type_name(components.name(ComponentId(c as u32)));
        for (reader, writer, reader_is_self) in [(self, other, true), (other, self, false)] {
            if !reader.reads_world() {
                continue;
            }
            let written = writer.all_component_writes.iter().map(component);
            let written = written.chain(writer.resource_writes.iter().map(|w| w.name.clone()));
            for name in written.collect::<Vec<_>>() {
                note(name, !reader_is_self, reader_is_self);
            }
        }
        for mine in self.resource_writes.iter().chain(&self.resource_reads) {
            let mine_writes = self.all_resource_writes.contains(mine.id.index());
            let theirs_writes = other.all_resource_writes.contains(mine.id.index());
            let theirs = theirs_writes || other.all_resource_reads.contains(mine.id.index());
            if theirs && (mine_writes || theirs_writes) {
                note(mine.name.clone(), mine_writes, theirs_writes);
            }
        }
        for a in &self.queries {
            for b in &other.queries {
                if a.conflict(b).is_none() {
                    continue;
                }
                let mut touched = a.reads.clone();
                touched.union_with(&a.writes);
                let mut theirs = b.reads.clone();
                theirs.union_with(&b.writes);
                touched.intersect_with(&theirs);
                for c in touched.iter() {
                    let (aw, bw) = (a.writes.contains(c), b.writes.contains(c));
                    if aw || bw {
                        note(component(c), aw, bw);
                    }
                }
            }
        }
        found.sort();
        found
    }

    fn resource_conflict(
        &self,
        system: &str,
        writer: &ResourceBorrow,
        other: &ResourceBorrow,
        name: &str,
    ) -> AccessConflict {
        AccessConflict {
            system: system.to_string(),
            writer: (writer.param, self.param_name(writer.param, &writer.leaf)),
            other: (other.param, self.param_name(other.param, &other.leaf)),
            item: format!("resource `{}`", short_type_name(name)),
        }
    }

    /// Whether the two systems may not run at the same time: one writes
    /// what the other borrows (on archetypes both can visit), or either takes
    /// the whole world.
    pub fn conflicts_with(&self, other: &SystemAccess) -> bool {
        if self.exclusive || other.exclusive {
            return true;
        }
        let writes = |a: &SystemAccess| !a.all_component_writes.is_empty() || !a.all_resource_writes.is_empty();
        if (self.reads_world() && writes(other)) || (other.reads_world() && writes(self)) {
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

/// The id `&World` borrows are recorded under: it stands for every
/// resource at once.
const WORLD: ResourceId = ResourceId::WORLD;
