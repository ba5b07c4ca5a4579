//! World operations on entities chosen by handle or by predicate rather than
//! spawned fresh: `spawn_at` for handles that come from elsewhere, and
//! `despawn_where` and `retain` for despawning by filter or by test, and
//! `insert_batch` for inserting into many entities at once.

use crate::component::bundle::Bundle;
use crate::entity::error::{EntityError, SpawnAtError};
use crate::entity::{Entity, EntityLocation};
use crate::storage::archetype::{ArchetypeId, Row};
use crate::world::entity_ref::EntityRef;
use crate::world::World;

impl World {
    /// Spawns an entity with exactly the handle `entity`, for handles that
    /// come from elsewhere: a server's entities mirrored on a client, a
    /// replay. Runs the spawn hooks (`on_add`, then `on_insert`) as
    /// [`World::spawn`] does.
    ///
    /// The allocator stays consistent: later spawns never hand out the
    /// handle, and the slots skipped to reach a high index are handed out
    /// by later spawns, lowest first. A handle older than its slot is
    /// refused (`StaleGeneration`): this world already handed it out, and
    /// copies of it may still be around as stale handles, which must never
    /// name a new entity. A generation newer than the slot's is taken as it
    /// is; the slot's later handles continue from it.
    ///
    /// The entity table grows to the handle's index (12 bytes a slot), and
    /// taking a slot from inside the table scans the free list: bound the
    /// indices that come from an untrusted peer.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # use archetable::SpawnAtError;
    /// # #[derive(Component, Debug, PartialEq)] struct Hp(u32);
    /// let mut server = World::new();
    /// server.spawn(Hp(0));
    /// let remote = server.spawn(Hp(1));
    ///
    /// let mut client = World::new();
    /// assert_eq!(client.spawn_at(remote, Hp(1)), Ok(remote));
    /// assert_eq!(client.get::<Hp>(remote), Some(&Hp(1)));
    /// assert_eq!(client.spawn_at(remote, Hp(2)), Err(SpawnAtError::AlreadyAlive(remote)));
    /// // The slot skipped below it is handed out next; `remote` never is.
    /// let local = client.spawn(Hp(3));
    /// assert_eq!(local.index(), 0);
    /// assert_ne!(client.spawn(Hp(4)), remote);
    /// ```
    ///
    /// # Errors
    /// [`SpawnAtError`] if the handle is alive, its slot holds another live
    /// entity, its generation is older than its slot's, or its index is
    /// past the world's limit; the bundle is dropped and nothing changes.
    ///
    /// # Panics
    /// As [`World::spawn`], before anything changes.
    pub fn spawn_at<B: Bundle>(&mut self, entity: Entity, bundle: B) -> Result<Entity, SpawnAtError> {
        // A bundle that names a type twice panics here, before the claim.
        self.register_bundle::<B>();
        self.claim_entity(entity)?;
        // Through `insert`, whose hooks for an entity without components
        // are those of a spawn: `on_add` then `on_insert`, each in bundle
        // order.
        self.insert(entity, bundle).expect("the claimed entity is alive");
        Ok(entity)
    }

    /// Keeps the entities for which `keep` returns true and despawns the
    /// others, running their despawn hooks; returns how many it despawned.
    /// `keep` sees every entity once, before any is despawned, table by
    /// table. An entity that an earlier entity's hook commands despawned
    /// is not counted.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component)] struct Hp(u32);
    /// let mut world = World::new();
    /// for hp in [0, 5, 0, 7] {
    ///     world.spawn(Hp(hp));
    /// }
    /// world.spawn(());
    /// let despawned = world.retain(|entity| entity.get::<Hp>().is_some_and(|hp| hp.0 > 0));
    /// assert_eq!((despawned, world.len()), (3, 2));
    /// ```
    pub fn retain(&mut self, mut keep: impl FnMut(EntityRef<'_>) -> bool) -> usize {
        self.flush();
        let mut doomed = Vec::new();
        for archetype in self.archetypes().as_slice() {
            for (row, &index) in archetype.entity_indices().iter().enumerate() {
                let entity = self.entities().entity_at(index);
                let location = EntityLocation { archetype: archetype.id(), row: Row(row as u32) };
                if !keep(EntityRef::new(self, entity, location)) {
                    doomed.push(entity);
                }
            }
        }
        self.despawn_each(doomed)
    }

    /// Inserts many bundles at once, each into its entity, as
    /// [`World::insert`] does one by one (hooks included, in list order),
    /// but with each table the entities move to grown once for all of
    /// them. An entity listed twice gets both bundles, the later one
    /// overwriting.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component, Debug, PartialEq)] struct Hp(u32);
    /// # #[derive(Component, Debug, PartialEq)] struct Speed(u32);
    /// let mut world = World::new();
    /// let entities: Vec<Entity> = world.spawn_batch((0..100).map(Hp)).collect();
    /// world.insert_batch(entities.iter().map(|&e| (e, Speed(2)))).unwrap();
    /// assert_eq!(world.query::<(&Hp, &Speed)>().count(), 100);
    /// ```
    ///
    /// # Errors
    /// [`EntityError::NoSuchEntity`] for the first listed entity that is not
    /// alive, checked before anything is inserted: then nothing is, and
    /// the bundles are dropped. An entity that a hook's commands despawn
    /// during the batch is skipped, its bundle dropped.
    pub fn insert_batch<B: Bundle>(&mut self, batch: impl IntoIterator<Item = (Entity, B)>) -> Result<(), EntityError> {
        self.flush();
        let batch: Vec<(Entity, B)> = batch.into_iter().collect();
        if let Some(&(missing, _)) = batch.iter().find(|(entity, _)| !self.contains(*entity)) {
            return Err(EntityError::NoSuchEntity(missing));
        }
        let entities: Vec<Entity> = batch.iter().map(|&(entity, _)| entity).collect();
        self.reserve_insert_targets::<B>(&entities);
        for (entity, bundle) in batch {
            // Only a hook's commands can have despawned it since the check.
            let _ = self.insert(entity, bundle);
        }
        Ok(())
    }

    /// Despawns each of `entities` that is still alive when its turn comes;
    /// returns how many.
    pub(crate) fn despawn_each(&mut self, entities: Vec<Entity>) -> usize {
        entities.into_iter().filter(|&entity| self.despawn(entity).is_ok()).count()
    }
}

impl World {
    /// Makes room, in each table that inserting bundle `B` into `entities`
    /// (all alive) moves them to, for all the rows it receives, so that it
    /// grows once.
    pub(crate) fn reserve_insert_targets<B: Bundle>(&mut self, entities: &[Entity]) {
        let mut per_source = vec![0usize; self.archetypes.len()];
        for &entity in entities {
            if let Some(location) = self.entities.get(entity) {
                per_source[location.archetype.index()] += 1;
            }
        }
        let info = self.bundles.register::<B>(&mut self.components);
        // Several tables may lead to one target: sum their rows first.
        let mut per_target: Vec<(ArchetypeId, usize)> = Vec::new();
        for (source, &count) in per_source.iter().enumerate() {
            if count == 0 {
                continue;
            }
            let source = self.archetypes.as_slice()[source].id();
            let target = self.archetypes.insert_edge(source, info, &self.components);
            if target == source {
                continue;
            }
            match per_target.iter_mut().find(|(t, _)| *t == target) {
                Some((_, total)) => *total += count,
                None => per_target.push((target, count)),
            }
        }
        for (target, count) in per_target {
            self.archetypes.get_mut(target).reserve(count);
        }
    }
}
