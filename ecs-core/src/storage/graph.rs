//! The archetype graph: each archetype remembers, per bundle inserted or
//! removed, which archetype that leads to and how the columns line up, so a
//! structural change after the first costs an array lookup and one row move,
//! with no signature to build, hash or search.

use crate::component::bundle::{BundleId, BundleInfo, Bundles};
use crate::component::{ComponentId, Components};
use crate::storage::archetype::{Archetype, ArchetypeId, Archetypes};

/// Marks a source column that has no column in the target (it is removed).
pub(crate) const NO_COLUMN: u32 = u32::MAX;

/// Marks a bundle component that uses sparse storage: it has no column, its
/// value goes to (or comes from) the component's sparse set.
pub(crate) const SPARSE_COLUMN: u32 = u32::MAX - 1;

/// What inserting one bundle into one archetype does.
#[derive(Debug)]
pub(crate) struct InsertEdge {
    pub target: ArchetypeId,
    /// For each source column, its column in the target.
    pub move_map: Box<[u32]>,
    /// For each bundle component (in component order), its target column.
    pub columns: Box<[u32]>,
    /// For each bundle component, whether the source already has it (the
    /// insert overwrites it).
    pub existed: Box<[bool]>,
    /// No bundle component exists in the source: every value is appended.
    pub adds_only: bool,
    /// The bundle's required components the source lacks, which the insert
    /// adds: (index in the bundle's required list, target column).
    pub required: Box<[(u32, u32)]>,
}

/// What removing one bundle from one archetype does.
#[derive(Debug)]
pub(crate) struct RemoveEdge {
    pub target: ArchetypeId,
    /// For each source column, its column in the target, or `NO_COLUMN` for
    /// the removed components.
    pub move_map: Box<[u32]>,
    /// For each bundle component (in component order), its source column.
    pub columns: Box<[u32]>,
}

/// Edges indexed by bundle id, stored densely: `slots[bundle]` is one plus
/// the edge's index in `edges`, or zero when not computed yet.
#[derive(Debug)]
struct Sparse<E> {
    slots: Vec<u32>,
    edges: Vec<E>,
}

impl<E> Default for Sparse<E> {
    fn default() -> Self {
        Sparse { slots: Vec::new(), edges: Vec::new() }
    }
}

impl<E> Sparse<E> {
    #[inline]
    fn get(&self, bundle: BundleId) -> Option<&E> {
        match self.slots.get(bundle.index()) {
            Some(&slot) if slot != 0 => Some(&self.edges[slot as usize - 1]),
            _ => None,
        }
    }

    /// The computed edges with their bundle indices.
    /// Where `bundle`'s edge is among `edges`, if it has one.
    #[inline]
    fn position(&self, bundle: BundleId) -> Option<usize> {
        match self.slots.get(bundle.index()) {
            Some(&slot) if slot != 0 => Some(slot as usize - 1),
            _ => None,
        }
    }

    fn iter(&self) -> impl Iterator<Item = (usize, &E)> {
        self.slots
            .iter()
            .enumerate()
            .filter(|&(_, &slot)| slot != 0)
            .map(|(b, &slot)| (b, &self.edges[slot as usize - 1]))
    }

    fn insert(&mut self, bundle: BundleId, edge: E) {
        if self.slots.len() <= bundle.index() {
            self.slots.resize(bundle.index() + 1, 0);
        }
        self.edges.push(edge);
        self.slots[bundle.index()] = self.edges.len() as u32;
    }
}

/// The cached transitions out of one archetype.
#[derive(Default, Debug)]
pub(crate) struct Edges {
    insert: Sparse<InsertEdge>,
    remove: Sparse<RemoveEdge>,
}

impl Edges {
    /// The edge for inserting `bundle`; it must have been computed.
    #[inline]
    pub fn inserting(&self, bundle: BundleId) -> &InsertEdge {
        self.insert.get(bundle).expect("insert edge computed first")
    }

    /// Where the edge for inserting `bundle` is, if it was computed: for
    /// [`Edges::inserting_at`].
    #[inline]
    pub(crate) fn insert_position(&self, bundle: BundleId) -> Option<usize> {
        self.insert.position(bundle)
    }

    /// The insert edge at `at`, a position [`Edges::insert_position`] gave.
    #[inline]
    pub(crate) fn inserting_at(&self, at: usize) -> &InsertEdge {
        &self.insert.edges[at]
    }

    /// The edge for removing `bundle`; it must have been computed.
    #[inline]
    pub fn removing(&self, bundle: BundleId) -> &RemoveEdge {
        self.remove.get(bundle).expect("remove edge computed first")
    }
}

impl Archetypes {
    /// Makes sure the edge for inserting `bundle` into `source` exists, and
    /// returns its target.
    #[inline]
    pub(crate) fn insert_edge(
        &mut self,
        source: ArchetypeId,
        bundle: &BundleInfo,
        components: &Components,
    ) -> ArchetypeId {
        match self.edges(source).insert.get(bundle.id()) {
            Some(edge) => edge.target,
            None => self.new_insert_edge(source, bundle, components),
        }
    }

    #[cold]
    fn new_insert_edge(&mut self, source: ArchetypeId, bundle: &BundleInfo, components: &Components) -> ArchetypeId {
        let mut signature = self.get(source).components().to_vec();
        signature.extend_from_slice(bundle.sorted_components());
        signature.extend(bundle.required().iter().map(|r| r.id));
        signature.sort_unstable();
        signature.dedup();
        let target_id = self.get_or_create(signature.into_boxed_slice(), components);
        let (src, target) = (self.get(source), self.get(target_id));
        let existed: Box<[bool]> = bundle.components().iter().map(|&c| src.contains(c)).collect();
        let edge = InsertEdge {
            target: target_id,
            move_map: column_map(src, target),
            columns: bundle_columns(bundle, target),
            // A sparse component may exist or not per entity: such bundles
            // take the path that checks each value.
            adds_only: !existed.contains(&true) && !bundle.has_sparse(),
            existed,
            required: (bundle.required().iter().enumerate())
                .filter(|(_, r)| !src.contains(r.id))
                .map(|(i, r)| {
                    (i as u32, target.column_index(r.id).expect("the target holds every required component") as u32)
                })
                .collect(),
        };
        self.edges_mut(source).insert.insert(bundle.id(), edge);
        target_id
    }

    /// Makes sure the edge for removing `bundle` from `source` exists, and
    /// returns its target. The caller has checked that `source` holds every
    /// component of the bundle.
    #[inline]
    pub(crate) fn remove_edge(
        &mut self,
        source: ArchetypeId,
        bundle: &BundleInfo,
        components: &Components,
    ) -> ArchetypeId {
        match self.edges(source).remove.get(bundle.id()) {
            Some(edge) => edge.target,
            None => self.new_remove_edge(source, bundle, components),
        }
    }

    #[cold]
    fn new_remove_edge(&mut self, source: ArchetypeId, bundle: &BundleInfo, components: &Components) -> ArchetypeId {
        let removed = bundle.sorted_components();
        let signature: Box<[_]> =
            self.get(source).components().iter().copied().filter(|c| removed.binary_search(c).is_err()).collect();
        let target_id = self.get_or_create(signature, components);
        let (src, target) = (self.get(source), self.get(target_id));
        let edge =
            RemoveEdge { target: target_id, move_map: column_map(src, target), columns: bundle_columns(bundle, src) };
        self.edges_mut(source).remove.insert(bundle.id(), edge);
        target_id
    }
}

impl Edges {
    /// Checks every cached edge out of `source` against the signatures it
    /// connects; for the world's consistency check.
    pub(crate) fn check_invariants(
        &self,
        source: &Archetype,
        archetypes: &Archetypes,
        bundles: &Bundles,
    ) -> Result<(), String> {
        let column_holds = |archetype: &Archetype, column: u32, id: ComponentId| {
            archetype.components().get(column as usize) == Some(&id)
        };
        for (b, edge) in self.insert.iter() {
            let bundle = bundles.get(BundleId::from_index(b));
            let fail = |what: &str| Err(format!("insert edge of bundle {b} out of {:?}: {what}", source.id()));
            let target = archetypes.get(edge.target);
            let required = bundle.required().iter().map(|r| r.id);
            let mut want: Vec<ComponentId> =
                source.components().iter().chain(bundle.sorted_components()).copied().chain(required).collect();
            want.sort_unstable();
            want.dedup();
            if target.components() != want.as_slice() {
                return fail("wrong target");
            }
            let moves_ok = edge.move_map.len() == source.components().len()
                && source.components().iter().zip(edge.move_map.iter()).all(|(&c, &to)| column_holds(target, to, c));
            let columns_ok = *edge.columns == *bundle_columns(bundle, target);
            let existed_ok = edge.existed.len() == bundle.components().len()
                && bundle.components().iter().zip(edge.existed.iter()).all(|(&c, &e)| e == source.contains(c));
            let added: Vec<(u32, u32)> = (bundle.required().iter().enumerate())
                .filter(|(_, r)| !source.contains(r.id))
                .map(|(i, r)| (i as u32, target.column_index(r.id).map_or(NO_COLUMN, |c| c as u32)))
                .collect();
            let required_ok = *edge.required == *added;
            let adds_only = !edge.existed.contains(&true) && !bundle.has_sparse();
            if !moves_ok || !columns_ok || !existed_ok || !required_ok || edge.adds_only != adds_only {
                return fail("column maps disagree with the signatures");
            }
        }
        for (b, edge) in self.remove.iter() {
            let bundle = bundles.get(BundleId::from_index(b));
            let fail = |what: &str| Err(format!("remove edge of bundle {b} out of {:?}: {what}", source.id()));
            let target = archetypes.get(edge.target);
            let removed = |c: &ComponentId| bundle.sorted_components().contains(c);
            if !target.components().iter().copied().eq(source.components().iter().copied().filter(|c| !removed(c))) {
                return fail("wrong target");
            }
            let moves_ok = edge.move_map.len() == source.components().len()
                && source.components().iter().zip(edge.move_map.iter()).all(|(c, &to)| {
                    if removed(c) {
                        to == NO_COLUMN
                    } else {
                        column_holds(target, to, *c)
                    }
                });
            let columns_ok = *edge.columns == *bundle_columns(bundle, source);
            if !moves_ok || !columns_ok {
                return fail("column maps disagree with the signatures");
            }
        }
        Ok(())
    }
}

/// For each column of `from`, the column of `to` with the same component, or
/// `NO_COLUMN`.
fn column_map(from: &Archetype, to: &Archetype) -> Box<[u32]> {
    from.components().iter().map(|&c| to.column_index(c).map_or(NO_COLUMN, |i| i as u32)).collect()
}

/// For each component of `bundle` (in component order), its column in
/// `archetype`, or `SPARSE_COLUMN` for a sparse one.
fn bundle_columns(bundle: &BundleInfo, archetype: &Archetype) -> Box<[u32]> {
    let column = |(i, &c): (usize, &ComponentId)| {
        if bundle.is_sparse(i) {
            SPARSE_COLUMN
        } else {
            archetype.column_index(c).expect("archetype holds the bundle's component") as u32
        }
    };
    bundle.components().iter().enumerate().map(column).collect()
}
