//! `World::spawn_batch`: many entities of one bundle type, and the iterator
//! that spawns them.

use crate::component::bundle::{Bundle, BundleId};
use crate::entity::Entity;
use crate::storage::archetype::ArchetypeId;
use crate::storage::structural;
use crate::world::World;

impl World {
    /// Spawns one entity per bundle that `bundles` yields. The returned
    /// iterator yields the new handles as it spawns; dropping it early still
    /// spawns the rest (so do not pass an endless iterator and stop early).
    /// The tables grow once up front when the iterator knows its length.
    /// With hooks registered, each entity's spawn hooks (and the commands
    /// they queue) run before the next entity is spawned.
    ///
    /// # Panics
    /// As [`World::spawn`]; the entities spawned before the panic stay.
    ///
    /// ```
    /// # use archetable::{Component, World};
    /// # #[derive(Component)] struct Hp(u32);
    /// let mut world = World::new();
    /// let spawned: Vec<_> = world.spawn_batch((0..100).map(Hp)).collect();
    /// assert_eq!((spawned.len(), world.len()), (100, 100));
    /// ```
    pub fn spawn_batch<I>(&mut self, bundles: I) -> SpawnBatch<'_, I::IntoIter>
    where
        I: IntoIterator,
        I::Item: Bundle,
    {
        self.flush();
        let bundles = bundles.into_iter();
        let info = self.bundles.register::<I::Item>(&mut self.components);
        let bundle = info.id();
        let archetype = self.archetypes.insert_edge(ArchetypeId::EMPTY, info, &self.components);
        // Reserve what the iterator promises, but not a guessed lower bound
        // of an endless or filtered one.
        let additional = match bundles.size_hint() {
            (lower, Some(upper)) if lower == upper => lower.min(u32::MAX as usize),
            (lower, _) => lower.min(1 << 16),
        };
        // No more than can ever be spawned: an oversized length fails at
        // the first entity past the index space, not in the allocator.
        let additional = additional.min(self.entities.spare());
        self.archetypes.get_mut(archetype).reserve(additional);
        self.entities.reserve(additional);
        SpawnBatch { world: self, bundles, bundle, archetype }
    }
}

/// The iterator returned by [`World::spawn_batch`].
pub struct SpawnBatch<'w, I>
where
    I: Iterator,
    I::Item: Bundle,
{
    world: &'w mut World,
    bundles: I,
    bundle: BundleId,
    archetype: ArchetypeId,
}

impl<I> Iterator for SpawnBatch<'_, I>
where
    I: Iterator,
    I::Item: Bundle,
{
    type Item = Entity;

    #[inline]
    fn next(&mut self) -> Option<Entity> {
        let bundle = self.bundles.next()?;
        let world = &mut *self.world;
        let info = world.bundles.get(self.bundle);
        let tick = world.change_tick();
        let (archetypes, entities, sparse) = (&mut world.archetypes, &mut world.entities, &mut world.sparse);
        let (entity, at) = structural::spawn_into_at(
            bundle,
            info,
            archetypes,
            entities,
            &world.components,
            sparse,
            self.archetype,
            tick,
        );
        if I::Item::ENGINE_HOOKED {
            world.after_spawn_call(self.bundle, entity, at);
        } else if world.hooks.is_active() {
            world.after_spawn_hooks(self.bundle, entity);
        }
        Some(entity)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.bundles.size_hint()
    }
}

impl<I> ExactSizeIterator for SpawnBatch<'_, I>
where
    I: ExactSizeIterator,
    I::Item: Bundle,
{
}

impl<I> Drop for SpawnBatch<'_, I>
where
    I: Iterator,
    I::Item: Bundle,
{
    fn drop(&mut self) {
        // While unwinding (from the bundle iterator itself, most likely),
        // stop instead of pulling more bundles from it.
        if !std::thread::panicking() {
            for _ in self.by_ref() {}
        }
    }
}
