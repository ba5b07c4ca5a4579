//! The archetype graph: each archetype remembers, per bundle inserted or
//! removed, which archetype that leads to, so a structural change after the
//! first costs an array lookup instead of building and hashing a signature.

use crate::archetype::{ArchetypeId, Archetypes};
use crate::bundle::{BundleId, BundleInfo};
use crate::component::Components;

/// The cached transitions out of one archetype, indexed by bundle id.
#[derive(Default, Debug)]
pub(crate) struct Edges {
    insert: Vec<ArchetypeId>,
    remove: Vec<ArchetypeId>,
}

fn lookup(edges: &[ArchetypeId], bundle: BundleId) -> Option<ArchetypeId> {
    edges.get(bundle.index()).copied().filter(|&id| id != ArchetypeId::INVALID)
}

fn store(edges: &mut Vec<ArchetypeId>, bundle: BundleId, target: ArchetypeId) {
    if edges.len() <= bundle.index() {
        edges.resize(bundle.index() + 1, ArchetypeId::INVALID);
    }
    edges[bundle.index()] = target;
}

impl Archetypes {
    /// The archetype an entity of `source` moves to when `bundle` is inserted.
    #[inline]
    pub(crate) fn insert_target(
        &mut self,
        source: ArchetypeId,
        bundle: &BundleInfo,
        components: &Components,
    ) -> ArchetypeId {
        if let Some(target) = lookup(&self.get(source).edges.insert, bundle.id()) {
            return target;
        }
        self.insert_target_slow(source, bundle, components)
    }

    #[cold]
    fn insert_target_slow(&mut self, source: ArchetypeId, bundle: &BundleInfo, components: &Components) -> ArchetypeId {
        let mut signature = self.get(source).components().to_vec();
        signature.extend_from_slice(bundle.sorted_components());
        signature.sort_unstable();
        signature.dedup();
        let target = self.get_or_create(signature.into_boxed_slice(), components);
        store(&mut self.get_mut(source).edges.insert, bundle.id(), target);
        target
    }

    /// The archetype an entity of `source` moves to when `bundle` is removed;
    /// the caller has checked that `source` holds all of the bundle.
    #[inline]
    pub(crate) fn remove_target(
        &mut self,
        source: ArchetypeId,
        bundle: &BundleInfo,
        components: &Components,
    ) -> ArchetypeId {
        if let Some(target) = lookup(&self.get(source).edges.remove, bundle.id()) {
            return target;
        }
        self.remove_target_slow(source, bundle, components)
    }

    #[cold]
    fn remove_target_slow(&mut self, source: ArchetypeId, bundle: &BundleInfo, components: &Components) -> ArchetypeId {
        let removed = bundle.sorted_components();
        let signature: Box<[_]> =
            self.get(source).components().iter().copied().filter(|c| removed.binary_search(c).is_err()).collect();
        let target = self.get_or_create(signature, components);
        store(&mut self.get_mut(source).edges.remove, bundle.id(), target);
        target
    }
}
