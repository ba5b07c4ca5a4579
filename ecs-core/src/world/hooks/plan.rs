//! What the hooks after an insert of one bundle come to, worked out once
//! per bundle and kept until a hook or an observer is registered or
//! removed.
//!
//! Most bundles have nothing that watches them, even in a world where
//! some component has hooks (every world with a hierarchy): their spawns
//! and inserts then skip the hook machinery altogether. A bundle whose
//! only watchers are the engine's own hooks (a child spawned with
//! `ChildOf`) runs those straight, in one pass, without the per-hook
//! guards that user code needs; a spawn of a bundle whose one watcher is a
//! relationship's join runs its quick join directly. Everything else takes
//! the general path.

use crate::component::bundle::BundleId;
use crate::component::ComponentId;
use crate::entity::{Entity, EntityLocation};
use crate::storage::archetype::ArchetypeId;
use crate::world::World;

use super::{Hook, HookKind};

/// The hooks after an insert (or spawn) of one bundle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AfterInsert {
    /// Nothing watches the bundle's components or those they require.
    Nothing,
    /// Only the engine's own `on_insert` hooks: those of `Plans::engine`
    /// from `start` to `end`, in bundle order.
    Engine { start: u32, end: u32 },
    /// A user hook or an observer: the general path.
    General,
}

/// What [`World::bundle_reacts`] asks about.
#[derive(Clone, Copy)]
enum Reaction {
    /// The replacing of a component an insert overwrites.
    Replace = 0,
    /// A removal.
    Remove = 1,
}

/// The hook kinds after an insert's write.
const INSERT: [HookKind; 2] = [HookKind::Add, HookKind::Insert];
/// The hook kinds a despawn runs.
pub(crate) const REMOVAL: [HookKind; 3] = [HookKind::Despawn, HookKind::Replace, HookKind::Remove];

/// Stores `value` at `index` of a plan table, growing it with `None`s;
/// returns `value`.
fn remember<T: Copy>(table: &mut Vec<Option<T>>, index: usize, value: T) -> T {
    if table.len() <= index {
        table.resize(index + 1, None);
    }
    table[index] = Some(value);
    value
}

/// The plans of the bundles a world has inserted, valid for one set of
/// hooks and observers.
#[derive(Default)]
pub(crate) struct Plans {
    /// The hooks' and the observers' generations the plans were worked out
    /// under.
    stamp: (u64, u64),
    /// Indexed by bundle id; `None` where not worked out yet.
    by_bundle: Vec<Option<AfterInsert>>,
    /// Indexed by archetype id: whether despawning an entity of the
    /// table runs anything; `None` where not worked out yet.
    despawn_runs: Vec<Option<bool>>,
    /// Indexed by archetype id: whether despawning an entity of the table
    /// runs only the hierarchy's own upkeep (`ChildOf` and `Children`);
    /// `None` where not worked out yet.
    hierarchy_only: Vec<Option<bool>>,
    /// Indexed by bundle id: whether something watches the replacing of
    /// one of the bundle's components (for an insert); `None` where not
    /// worked out yet.
    replace_reacts: Vec<Option<bool>>,
    /// Indexed by bundle id: whether something watches the removal of one
    /// of the bundle's components; `None` where not worked out yet.
    remove_reacts: Vec<Option<bool>>,
    /// The engine hooks the `Engine` plans run.
    engine: Vec<super::EngineHook>,
    /// Beside `engine`: the quick join of a relationship whose insert hook
    /// it is.
    spawn_joins: Vec<Option<super::SpawnJoin>>,
    /// The last bundle spawned through the hooked path, and its quick
    /// join if it has one: a game spawns one kind of child many times in a
    /// row.
    last_spawn_join: Option<(BundleId, Option<super::SpawnJoin>)>,
    /// The last bundle type asked whether its insert into an entity that
    /// has none of its components runs only the engine's hooks, with the
    /// answer: a relationship's first lists ask it once per target.
    #[cfg(feature = "hierarchy")]
    engine_only_insert: Option<(std::any::TypeId, bool)>,
}

impl Plans {
    /// Forgets every plan: they were worked out under another set of hooks
    /// and observers than the one of `stamp`.
    #[cold]
    #[inline(never)]
    fn forget(&mut self, stamp: (u64, u64)) {
        self.by_bundle.clear();
        self.despawn_runs.clear();
        self.replace_reacts.clear();
        self.remove_reacts.clear();
        self.hierarchy_only.clear();
        self.engine.clear();
        self.spawn_joins.clear();
        self.last_spawn_join = None;
        #[cfg(feature = "hierarchy")]
        {
            self.engine_only_insert = None;
        }
        self.stamp = stamp;
    }
}

impl World {
    /// What the hooks after an insert of `bundle` come to, worked out now
    /// if the hooks or observers changed since it last was.
    #[inline]
    pub(crate) fn after_insert_plan(&mut self, bundle: BundleId) -> AfterInsert {
        if let Some(&Some(plan)) = self.plans().by_bundle.get(bundle.index()) {
            return plan;
        }
        self.work_out_after_insert(bundle)
    }

    /// Whether despawning an entity of table `archetype` runs a hook or an
    /// observer (a lifecycle one, or one attached to the entity).
    #[inline]
    pub(crate) fn despawn_runs_anything(&mut self, archetype: ArchetypeId) -> bool {
        if !self.hooks.observers.is_empty() || self.sparse_sets().any() {
            // Observers attached to the entity go with it; sparse
            // components belong to no table.
            return true;
        }
        if let Some(&Some(runs)) = self.plans().despawn_runs.get(archetype.index()) {
            return runs;
        }
        let runs = self.archetypes()[archetype].components().iter().any(|&id| self.reacts_to(id, &REMOVAL));
        remember(&mut self.hooks.plans.despawn_runs, archetype.index(), runs)
    }

    /// Whether despawning an entity of table `archetype` runs nothing but
    /// the hierarchy's own upkeep: no observer, no user hook, no sparse
    /// component, and no relationship other than `ChildOf` (whose list,
    /// `Children`, it may also have). Inside a tree that goes whole, that
    /// upkeep only tidies lists that go too.
    #[cfg(feature = "hierarchy")]
    pub(crate) fn despawn_runs_hierarchy_only(&mut self, archetype: ArchetypeId) -> bool {
        if !self.hooks.observers.is_empty() || self.sparse_sets().any() {
            return false;
        }
        if let Some(&Some(only)) = self.plans().hierarchy_only.get(archetype.index()) {
            return only;
        }
        let hierarchy = [self.components().id::<crate::ChildOf>(), self.components().id::<crate::Children>()];
        let only = self.archetypes()[archetype].components().iter().all(|&id| {
            let user = REMOVAL.into_iter().any(|kind| self.hooks.has_user(id, kind));
            !user && (hierarchy.contains(&Some(id)) || !self.reacts_to(id, &REMOVAL))
        });
        remember(&mut self.hooks.plans.hierarchy_only, archetype.index(), only)
    }

    /// Whether inserting `bundle` into an entity runs anything: a hook or
    /// an observer after the write ([`World::after_insert_plan`]), or one
    /// of the replacing of a component the entity has.
    #[inline]
    pub(crate) fn insert_runs_anything(&mut self, bundle: BundleId) -> bool {
        self.after_insert_plan(bundle) != AfterInsert::Nothing || self.bundle_reacts(bundle, Reaction::Replace)
    }

    /// Whether removing `bundle` from an entity runs a hook or an observer.
    #[inline]
    pub(crate) fn remove_runs_anything(&mut self, bundle: BundleId) -> bool {
        self.bundle_reacts(bundle, Reaction::Remove)
    }

    /// Whether a hook or an observer watches `reaction` of one of
    /// `bundle`'s own components.
    #[inline]
    fn bundle_reacts(&mut self, bundle: BundleId, reaction: Reaction) -> bool {
        let plans = self.plans();
        let known = match reaction {
            Reaction::Replace => &plans.replace_reacts,
            Reaction::Remove => &plans.remove_reacts,
        };
        if let Some(&Some(reacts)) = known.get(bundle.index()) {
            return reacts;
        }
        let kinds: &[HookKind] = match reaction {
            Reaction::Replace => &[HookKind::Replace],
            Reaction::Remove => &[HookKind::Replace, HookKind::Remove],
        };
        let reacts = self.bundle_components(bundle).iter().any(|&id| self.reacts_to(id, kinds));
        let plans = &mut self.hooks.plans;
        let known = match reaction {
            Reaction::Replace => &mut plans.replace_reacts,
            Reaction::Remove => &mut plans.remove_reacts,
        };
        remember(known, bundle.index(), reacts)
    }

    /// Whether component `id` has a hook (the engine's too) of one of
    /// `kinds`, or an observer watches the matching lifecycle events.
    pub(crate) fn reacts_to(&self, id: ComponentId, kinds: &[HookKind]) -> bool {
        kinds.iter().any(|&kind| self.hooks.has(id, kind)) || self.observes(id, kinds)
    }

    /// [`World::reacts_to`] leaving out the engine's own hooks: whether a
    /// hook of the user's of one of `kinds` or an observer of the matching
    /// events watches component `id`.
    pub(crate) fn reacts_to_user(&self, id: ComponentId, kinds: &[HookKind]) -> bool {
        kinds.iter().any(|&kind| self.hooks.has_user(id, kind)) || self.observes(id, kinds)
    }

    /// Whether an observer watches the lifecycle events of `kinds` of
    /// component `id`.
    fn observes(&self, id: ComponentId, kinds: &[HookKind]) -> bool {
        if self.hooks.observers.is_empty() {
            return false;
        }
        let lifecycle = self.components().info(id).lifecycle();
        let mut watched = false;
        for &kind in kinds {
            lifecycle(kind, &mut |event, _| {
                watched |= self.hooks.observers.watches(std::any::Any::type_id(event));
            });
        }
        watched
    }

    /// The plans, emptied first if a hook or an observer was registered or
    /// removed since they were worked out.
    #[inline]
    fn plans(&mut self) -> &mut Plans {
        self.install_engine_hooks();
        let stamp = (self.hooks.generation, self.hooks.observers.generation());
        let plans = &mut self.hooks.plans;
        if plans.stamp != stamp {
            plans.forget(stamp);
        }
        plans
    }

    #[cold]
    #[inline(never)]
    fn work_out_after_insert(&mut self, bundle: BundleId) -> AfterInsert {
        #[cfg_attr(not(feature = "hierarchy"), allow(unused_mut))]
        let mut engine: Vec<(super::EngineHook, Option<super::SpawnJoin>)> = Vec::new();
        let info = self.bundle_info(bundle);
        let required = info.required().iter().map(|r| r.id);
        let plan = if required.into_iter().any(|id| self.reacts_to(id, &INSERT)) {
            AfterInsert::General
        } else {
            let mut plan = AfterInsert::Nothing;
            for &id in self.bundle_components(bundle) {
                if self.hooks.has(id, HookKind::Add) || self.observes(id, &INSERT) {
                    plan = AfterInsert::General;
                    break;
                }
                let Some(hooks) = self.hooks.by_component.get(id.index()) else { continue };
                let inserts = &hooks.by_kind[HookKind::Insert as usize];
                for hook in inserts {
                    match hook {
                        #[cfg(feature = "hierarchy")]
                        Hook::Plain(hook) => engine.push((*hook, hooks.spawn_join.filter(|_| inserts.len() == 1))),
                        Hook::Shared(_) => plan = AfterInsert::General,
                    }
                }
            }
            plan
        };
        let plans = &mut self.hooks.plans;
        let plan = match plan {
            AfterInsert::Nothing if !engine.is_empty() => {
                let start = plans.engine.len();
                for (hook, spawn_join) in engine {
                    plans.engine.push(hook);
                    plans.spawn_joins.push(spawn_join);
                }
                let index = |i: usize| u32::try_from(i).expect("fewer than u32::MAX engine hooks");
                AfterInsert::Engine { start: index(start), end: index(plans.engine.len()) }
            }
            plan => plan,
        };
        remember(&mut plans.by_bundle, bundle.index(), plan)
    }

    /// What [`World::insert_of_new_runs_engine_only`] last answered for
    /// bundle type `kind`, if that was the last type asked and no hook or
    /// observer came or went since.
    #[cfg(feature = "hierarchy")]
    #[inline]
    pub(crate) fn known_engine_only_insert(&mut self, kind: std::any::TypeId) -> Option<bool> {
        self.plans().engine_only_insert.filter(|&(known, _)| known == kind).map(|(_, only)| only)
    }

    /// Keeps `only`, the answer for bundle type `kind`, for
    /// [`World::known_engine_only_insert`]; valid while the plans are.
    #[cfg(feature = "hierarchy")]
    pub(crate) fn remember_engine_only_insert(&mut self, kind: std::any::TypeId, only: bool) {
        self.plans().engine_only_insert = Some((kind, only));
    }

    /// The quick join a spawn of `bundle` may run instead of its hooks:
    /// when the only thing that watches the bundle is one relationship's
    /// engine insert hook.
    #[inline(always)]
    pub(crate) fn spawn_join_plan(&mut self, bundle: BundleId) -> Option<super::SpawnJoin> {
        if let Some((last, join)) = self.plans().last_spawn_join
            && last == bundle
        {
            return join;
        }
        self.work_out_spawn_join(bundle)
    }

    /// [`World::spawn_join_plan`] of a bundle other than the last.
    #[inline(never)]
    fn work_out_spawn_join(&mut self, bundle: BundleId) -> Option<super::SpawnJoin> {
        let join = match self.after_insert_plan(bundle) {
            AfterInsert::Engine { start, end } if end == start + 1 => {
                self.hooks.plans.spawn_joins.get(start as usize).copied().flatten()
            }
            _ => None,
        };
        self.hooks.plans.last_spawn_join = Some((bundle, join));
        join
    }

    /// Runs the engine hooks `start..end` of [`Plans`] on `entity`, which
    /// is at `spawned` if it was spawned just now.
    pub(crate) fn run_engine_inserts(&mut self, start: u32, end: u32, entity: Entity, spawned: Option<EntityLocation>) {
        for i in start as usize..end as usize {
            let Some(&hook) = self.hooks.plans.engine.get(i) else { break };
            hook(self, entity, spawned);
        }
    }
}
