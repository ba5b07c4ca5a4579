//! Spawning many entities as one step: batches of built entities whose
//! hooks run once the whole batch is in place, and `all_or_nothing`, which
//! takes back what a failed step spawned, entity allocator included. Save
//! loading and prefab spawning are built on these.

use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

use hashbrown::HashSet;

use crate::entity::error::EntityError;
use crate::entity::Entity;
use crate::storage::builder::EntityBuilder;
use crate::storage::column::Panics;
use crate::world::World;

impl World {
    /// Runs `f` as one step for the entities it makes: if `f` returns an
    /// error or panics, every entity spawned since the call (by `f`, by the
    /// hooks it set off, by their commands) is despawned without running
    /// hooks, and the entity allocator is put back as it was, so later
    /// spawns hand out the handles they would have handed out had `f` never
    /// run. Then the error is returned, or the panic goes on.
    ///
    /// What `f` did to entities that existed before, and to resources, is
    /// not undone, except for relationships (`ChildOf` and the like), so
    /// that no link is left dangling: a list that stays forgets the
    /// sources taken back, and an entity that stays and points at one
    /// taken back goes back to the last target it had in `f` that stays
    /// (the one it had before, unless `f` moved it elsewhere first), at the
    /// place it had in that target's list (just after the source it
    /// followed then; at the end if that one is gone, or was more than 64
    /// places back behind sources that had left too); if it had none (or
    /// that one is gone, or would now make a cycle), it loses the
    /// relationship. Either way with its hooks; if one of them panics, the
    /// link is cut without hooks (the entity loses the relationship) and
    /// the rollback goes on. If `f` despawned one of the entities that
    /// existed before, the allocator cannot be put back as it was and stays
    /// as it is (consistent, with the new entities gone). Handles of the entities
    /// taken back may be handed out again: do not keep them.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component)] struct Hp(u32);
    /// let mut world = World::new();
    /// let before = world.spawn(Hp(1));
    /// let failed: Result<(), &str> = world.all_or_nothing(|world| {
    ///     world.spawn(Hp(2));
    ///     world.spawn(Hp(3));
    ///     Err("the level file is broken")
    /// });
    /// assert!(failed.is_err());
    /// assert_eq!(world.len(), 1);
    /// let next = world.spawn(Hp(4));
    /// let mut fresh = World::new();
    /// fresh.spawn(Hp(1));
    /// assert_eq!(next, fresh.spawn(Hp(4)), "the same handle as if nothing had been spawned");
    /// # let _ = before;
    /// ```
    pub fn all_or_nothing<R, E>(&mut self, f: impl FnOnce(&mut World) -> Result<R, E>) -> Result<R, E> {
        self.flush();
        self.entities_mut().begin_txn();
        self.begin_relations_txn();
        match catch_unwind(AssertUnwindSafe(|| f(self))) {
            Ok(Ok(value)) => {
                self.entities_mut().commit_txn();
                self.end_relations_txn(false);
                Ok(value)
            }
            Ok(Err(error)) => {
                self.take_back();
                Err(error)
            }
            Err(payload) => {
                self.take_back();
                resume_unwind(payload)
            }
        }
    }

    /// Despawns, without hooks, the entities the innermost transaction
    /// made, then closes it, rolling the allocator back if it can.
    fn take_back(&mut self) {
        self.flush();
        let mut panics = Panics::default();
        if !self.relations().detach.is_empty() {
            // The links between what goes and what stays are cut first, so
            // no list that stays names an entity taken back and no entity
            // that stays points at one. The entities that stay get their
            // hooks for it; one that panics does not stop the rollback.
            let going: HashSet<Entity> = self.entities_mut().txn_entities().into_iter().collect();
            panics.run(|| self.detach_relationships(&going));
            self.flush();
        }
        self.end_relations_txn(true);
        for entity in self.entities_mut().txn_entities() {
            panics.run(|| {
                let _ = self.despawn_unhooked(entity);
                self.detach_observers(entity);
            });
        }
        // The allocator rolls back only if nothing else changed it (see
        // `Entities::rollback_txn`); either way it is consistent.
        let _ = self.entities_mut().rollback_txn();
        // A destructor that panicked while taking back: the first panic of
        // `f` (or its error) is what the caller sees.
        drop(panics);
    }

    /// The handles the next `n` spawns will get, in order, provided
    /// nothing else spawns, reserves or despawns in between. Only looks:
    /// handles reserved meanwhile (by [`Commands`](crate::Commands)) are
    /// counted as the spawn that makes them live will count them. For
    /// loaders that must know the handles before they build the values that
    /// refer to them.
    ///
    /// # Panics
    /// If the index space would run out before the `n`th handle, as the
    /// `n`th spawn would.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component)] struct Hp(u32);
    /// let mut world = World::new();
    /// let gone = world.spawn(Hp(0));
    /// world.despawn(gone).unwrap();
    /// let view: &World = &world;
    /// let next = view.peek_entities(2);
    /// assert_eq!([world.spawn(Hp(1)), world.spawn(Hp(2))], [next[0], next[1]]);
    /// ```
    pub fn peek_entities(&self, n: usize) -> Vec<Entity> {
        self.entities().peek(n)
    }

    /// Spawns one entity per builder, in order, all in place before any
    /// hook runs; then the spawn hooks of each (`on_add`, then `on_insert`,
    /// as for a tuple), so every hook sees the whole batch complete. An
    /// entity despawned by an earlier entity's hook commands gets no hooks.
    /// The builders end empty.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # use archetable::EntityBuilder;
    /// # #[derive(Component)] struct Hp(u32);
    /// # #[derive(Component)] struct Name(&'static str);
    /// let mut world = World::new();
    /// let mut builders: Vec<EntityBuilder> = (0..3).map(|_| EntityBuilder::new()).collect();
    /// builders[0].add(Hp(3)).add(Name("ogre"));
    /// builders[2].add(Hp(1));
    /// let spawned = world.spawn_built_batch(&mut builders);
    /// assert_eq!(spawned.len(), 3);
    /// assert!(world.has::<Name>(spawned[0]) && !world.has::<Hp>(spawned[1]));
    /// ```
    pub fn spawn_built_batch(&mut self, builders: &mut [EntityBuilder]) -> Vec<Entity> {
        let hooked = builders.iter().any(EntityBuilder::engine_hooked);
        let mut placed = Vec::with_capacity(builders.len());
        for builder in builders.iter_mut() {
            placed.push(self.spawn_built_unhooked(builder));
        }
        if self.hooks.is_active() || hooked {
            self.with_placed_lists(|world| {
                for &(entity, bundle) in &placed {
                    if world.contains(entity) {
                        world.fire_insert_hooks(bundle, entity, &crate::world::hooks::Before::NOTHING);
                    }
                }
            });
        }
        placed.into_iter().map(|(entity, _)| entity).collect()
    }

    /// Inserts `builders[i]` into `entities[i]`, all in place before any
    /// hook runs; then the hooks of each insert, as [`World::insert_built`]
    /// runs them (`on_replace` for every entity first, before anything is
    /// written). Checks that every entity is live (and none listed twice)
    /// before changing anything. The builders end empty.
    pub fn insert_built_batch(
        &mut self,
        entities: &[Entity],
        builders: &mut [EntityBuilder],
    ) -> Result<(), EntityError> {
        assert_eq!(entities.len(), builders.len(), "one builder per entity");
        self.flush();
        let mut before = Vec::with_capacity(entities.len());
        for &entity in entities {
            let location = self.location(entity).ok_or(EntityError::NoSuchEntity(entity))?;
            before.push(self.before(entity, location));
        }
        let mut sorted = entities.to_vec();
        sorted.sort_unstable();
        if let Some(pair) = sorted.windows(2).find(|pair| pair[0] == pair[1]) {
            panic!("entity {} listed twice in one insert_built_batch", pair[0]);
        }
        let hooked = self.hooks.is_active() || builders.iter().any(EntityBuilder::engine_hooked);
        let mut bundles = Vec::with_capacity(entities.len());
        for ((&entity, builder), before) in entities.iter().zip(builders.iter_mut()).zip(&before) {
            let bundle = self.register_built(builder);
            if hooked {
                self.fire_replace_hooks(bundle, entity, before);
            }
            bundles.push(bundle);
        }
        for (&entity, builder) in entities.iter().zip(builders.iter_mut()) {
            // Replace hooks cannot despawn (their commands wait), so every
            // entity is still live.
            self.insert_built_unhooked(entity, builder)?;
        }
        if hooked {
            self.with_placed_lists(|world| {
                for ((&entity, &bundle), before) in entities.iter().zip(&bundles).zip(&before) {
                    if world.contains(entity) {
                        world.fire_insert_hooks(bundle, entity, before);
                    }
                }
            });
        }
        Ok(())
    }
}
