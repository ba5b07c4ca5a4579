//! Components in sparse storage (`#[component(storage = "sparse")]`): they
//! split no archetype, adding and removing them moves no row, and every
//! part of the engine sees them as it sees table components.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use archetable::prelude::*;
use archetable::{AnyOf, EntityBuilder, Has, StorageType};

#[derive(Component, Debug, Clone, Copy, PartialEq)]
#[component(clone)]
struct Pos(i32);

#[derive(Component, Debug, Clone, Copy, PartialEq)]
#[component(clone)]
struct Vel(i32);

#[derive(Component, Debug, Clone, PartialEq)]
#[component(storage = "sparse", clone)]
struct Stunned(u32);

#[derive(Component, Debug, PartialEq)]
#[component(storage = "sparse", track_changes)]
struct Burning(u32);

#[derive(Component, Debug, PartialEq)]
#[component(storage = "sparse")]
struct Marker;

fn sorted(mut v: Vec<Entity>) -> Vec<Entity> {
    v.sort();
    v
}

#[test]
fn the_derive_sets_the_storage() {
    assert_eq!(Stunned::STORAGE, StorageType::Sparse);
    assert_eq!(Pos::STORAGE, StorageType::Table);
    let mut world = World::new();
    let id = world.register_component::<Stunned>();
    assert!(world.components().info(id).is_sparse());
}

#[test]
fn adding_and_removing_moves_no_row_and_makes_no_archetype() {
    let mut world = World::new();
    let a = world.spawn((Pos(1), Vel(1)));
    let b = world.spawn((Pos(2), Vel(2)));
    let archetypes = world.archetypes().len();
    world.insert(a, Stunned(3)).unwrap();
    world.insert(b, (Stunned(4), Marker)).unwrap();
    assert_eq!(world.archetypes().len(), archetypes, "no archetype for sparse components");
    assert_eq!(world.get::<Stunned>(a), Some(&Stunned(3)));
    assert!(world.has::<Marker>(b) && !world.has::<Marker>(a));
    assert_eq!(world.remove::<Stunned>(a).unwrap(), Stunned(3));
    assert!(!world.has::<Stunned>(a));
    assert_eq!(world.get::<Pos>(a), Some(&Pos(1)));
    assert_eq!(world.get::<Stunned>(b), Some(&Stunned(4)));
    // Overwrite keeps one value.
    world.insert(b, Stunned(5)).unwrap();
    assert_eq!(world.sparse_sets().iter().map(|s| s.len()).sum::<usize>(), 2);
    assert_eq!(world.get::<Stunned>(b), Some(&Stunned(5)));
    assert_eq!(
        world.remove::<Stunned>(a).unwrap_err(),
        ComponentError::MissingComponent { entity: a, component: std::any::type_name::<Stunned>() }
    );
    world.check_invariants().unwrap();
}

#[test]
fn mixed_bundles_spawn_insert_and_remove() {
    let mut world = World::new();
    let e = world.spawn((Pos(1), Stunned(2), Vel(3)));
    let archetypes = world.archetypes().len();
    world.spawn((Pos(0), Vel(0)));
    assert_eq!(world.archetypes().len(), archetypes, "the sparse member made no archetype of its own");
    assert_eq!(
        (world.get::<Pos>(e), world.get::<Stunned>(e), world.get::<Vel>(e)),
        (Some(&Pos(1)), Some(&Stunned(2)), Some(&Vel(3)))
    );
    let (stunned, vel) = world.remove::<(Stunned, Vel)>(e).unwrap();
    assert_eq!((stunned, vel), (Stunned(2), Vel(3)));
    assert!(!world.has::<Stunned>(e) && !world.has::<Vel>(e) && world.has::<Pos>(e));
    world.insert(e, (Vel(7), Burning(1))).unwrap();
    assert_eq!(world.get::<Burning>(e), Some(&Burning(1)));
    let batch: Vec<Entity> = world.spawn_batch((0..10).map(|i| (Pos(i), Stunned(i as u32)))).collect();
    assert_eq!(batch.iter().filter(|&&e| world.has::<Stunned>(e)).count(), 10);
    let mut builder = EntityBuilder::new();
    builder.add(Pos(9)).add(Marker);
    let built = world.spawn(builder.build());
    assert!(world.has::<Marker>(built));
    world.check_invariants().unwrap();
}

#[test]
fn despawn_and_clear_drop_sparse_values() {
    #[derive(Component)]
    #[component(storage = "sparse")]
    struct Counted(Arc<AtomicUsize>);
    impl Drop for Counted {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }
    let drops = Arc::new(AtomicUsize::new(0));
    let mut world = World::new();
    let a = world.spawn((Pos(1), Counted(drops.clone())));
    let b = world.spawn(Pos(2));
    world.insert(b, Counted(drops.clone())).unwrap();
    world.spawn(Counted(drops.clone()));
    world.despawn(a).unwrap();
    assert_eq!(drops.load(Ordering::Relaxed), 1);
    assert!(!world.has::<Counted>(a));
    // A reused slot does not inherit the old value.
    let c = world.spawn(Pos(3));
    assert_eq!(c.index(), a.index());
    assert!(!world.has::<Counted>(c));
    world.check_invariants().unwrap();
    world.clear();
    assert_eq!(drops.load(Ordering::Relaxed), 3);
    world.check_invariants().unwrap();
    world.spawn(Counted(drops.clone()));
    drop(world);
    assert_eq!(drops.load(Ordering::Relaxed), 4);
}

#[test]
fn queries_read_write_and_filter_sparse_components() {
    let mut world = World::new();
    let a = world.spawn((Pos(1), Stunned(10)));
    let b = world.spawn(Pos(2));
    let c = world.spawn((Pos(3), Vel(0), Stunned(30)));
    let d = world.spawn(Stunned(40));

    let mut seen: Vec<(Entity, u32)> = world.query::<(Entity, &Stunned)>().map(|(e, s)| (e, s.0)).collect();
    seen.sort();
    assert_eq!(seen, [(a, 10), (c, 30), (d, 40)]);
    assert_eq!(sorted(world.query_filtered::<Entity, With<Stunned>>().collect()), [a, c, d]);
    assert_eq!(sorted(world.query_filtered::<Entity, (With<Pos>, Without<Stunned>)>().collect()), [b]);
    let flags: Vec<(Entity, bool)> = {
        let mut v: Vec<_> = world.query::<(Entity, Has<Stunned>)>().collect();
        v.sort();
        v
    };
    assert_eq!(flags, [(a, true), (b, false), (c, true), (d, true)]);
    let optional: i64 =
        world.query::<(&Pos, Option<&Stunned>)>().map(|(p, s)| p.0 as i64 * s.map_or(1, |s| s.0 as i64)).sum();
    assert_eq!(optional, 10 + 2 + 90);
    assert_eq!(world.query::<AnyOf<(&Vel, &Stunned)>>().count(), 3);

    for (mut s, p) in world.query_mut::<(&mut Stunned, &Pos)>() {
        s.0 += p.0 as u32;
    }
    assert_eq!(world.get::<Stunned>(c), Some(&Stunned(33)));
    assert_eq!(world.get::<Stunned>(d), Some(&Stunned(40)), "no Pos: not visited");

    let mut state = QueryState::<&mut Stunned>::new(&mut world);
    state.for_each_mut(&mut world, |mut s| s.0 *= 2);
    assert_eq!(world.get::<Stunned>(a), Some(&Stunned(22)));
    let mut read = QueryState::<&Stunned>::new(&mut world);
    assert_eq!(
        read.get(&world, b).unwrap_err(),
        QueryEntityError::QueryDoesNotMatch { entity: b, query: std::any::type_name::<QueryState<&Stunned>>() }
    );
    assert_eq!(read.get(&world, a).unwrap(), &Stunned(22));
    assert_eq!(world.query_one::<&Stunned>(a).unwrap(), &Stunned(22));
    assert!(world.query_one::<&Stunned>(b).is_err());
    world.check_invariants().unwrap();
}

#[test]
fn len_of_a_query_over_sparse_components_is_refused_loudly() {
    let mut world = World::new();
    world.spawn((Pos(1), Stunned(1)));
    world.spawn(Pos(2));
    let iter = world.query::<&Stunned>();
    assert_eq!(iter.size_hint(), (0, None));
    assert_eq!(world.query::<&Stunned>().count(), 1);
    let len = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| world.query::<&Stunned>().len()));
    assert!(len.is_err(), "an exact length is not known");
    assert_eq!(world.query_filtered::<&Pos, Without<Stunned>>().count(), 1);
}

#[test]
fn change_tracking_sees_sparse_writes() {
    let mut world = World::new();
    let a = world.spawn(Pos(1));
    let b = world.spawn(Pos(2));
    let mut added = QueryState::<Entity, Added<Burning>>::new(&mut world);
    let mut changed = QueryState::<Entity, Changed<Burning>>::new(&mut world);
    assert_eq!(added.iter(&world).count(), 0);
    assert_eq!(changed.iter(&world).count(), 0);
    world.insert(a, Burning(1)).unwrap();
    assert_eq!(added.iter(&world).collect::<Vec<_>>(), [a]);
    assert_eq!(changed.iter(&world).collect::<Vec<_>>(), [a]);
    world.insert(b, Burning(2)).unwrap();
    world.get_mut::<Burning>(a).unwrap().0 = 5;
    assert_eq!(added.iter(&world).collect::<Vec<_>>(), [b]);
    assert_eq!(sorted(changed.iter(&world).collect()), [a, b]);
    for (e, mut burning) in world.query_mut::<(Entity, &mut Burning)>() {
        if e == b {
            burning.0 += 1;
        }
    }
    assert_eq!(changed.iter(&world).collect::<Vec<_>>(), [b]);
    assert!(world.component_ticks::<Burning>(a).is_some());
    let mut refs = QueryState::<Ref<Burning>>::new(&mut world);
    assert_eq!(refs.iter(&world).filter(|r| r.is_changed()).count(), 2);
    assert_eq!(refs.iter(&world).filter(|r| r.is_changed()).count(), 0);
}

#[test]
fn removed_components_report_sparse_removals() {
    let mut world = World::new();
    world.track_removed::<Stunned>();
    let a = world.spawn((Pos(1), Stunned(1)));
    let b = world.spawn((Pos(2), Stunned(2)));
    let c = world.spawn((Pos(3), Stunned(3)));
    world.remove::<Stunned>(a).unwrap();
    world.despawn(b).unwrap();
    let _ = c;
    assert_eq!(sorted(world.removed::<Stunned>().collect()), [a, b]);
}

#[test]
#[cfg(feature = "observers")]
fn hooks_and_observers_fire_for_sparse_components() {
    use std::sync::Mutex;

    let log = Arc::new(Mutex::new(Vec::<String>::new()));
    let mut world = World::new();
    for (kind, name) in [(0, "add"), (1, "insert"), (2, "replace"), (3, "remove"), (4, "despawn")] {
        let log = log.clone();
        let hook = move |_: &mut HookWorld<'_>, e: Entity| log.lock().unwrap().push(format!("{name} {}", e.index()));
        let hooks = world.register_component_hooks::<Stunned>();
        match kind {
            0 => hooks.on_add(hook),
            1 => hooks.on_insert(hook),
            2 => hooks.on_replace(hook),
            3 => hooks.on_remove(hook),
            _ => hooks.on_despawn(hook),
        };
    }
    let observed = Arc::new(AtomicUsize::new(0));
    let counter = observed.clone();
    world.observe(move |_: Trigger<OnAdd<Stunned>>| {
        counter.fetch_add(1, Ordering::Relaxed);
    });
    let a = world.spawn(Pos(0));
    world.insert(a, Stunned(1)).unwrap();
    world.insert(a, Stunned(2)).unwrap();
    world.remove::<Stunned>(a).unwrap();
    let b = world.spawn((Pos(1), Stunned(3)));
    world.despawn(b).unwrap();
    let take = |log: &Arc<Mutex<Vec<String>>>| std::mem::take(&mut *log.lock().unwrap());
    assert_eq!(
        take(&log),
        [
            "add 0",
            "insert 0", // first insert
            "replace 0",
            "insert 0", // overwrite
            "replace 0",
            "remove 0", // remove
            "add 1",
            "insert 1", // spawn
            "despawn 1",
            "replace 1",
            "remove 1", // despawn
        ]
    );
    assert_eq!(observed.load(Ordering::Relaxed), 2);
    let c = world.spawn(Pos(2));
    world.insert(c, Stunned(4)).unwrap();
    take(&log);
    world.clear();
    assert_eq!(
        take(&log),
        [format!("despawn {0}", c.index()), format!("replace {0}", c.index()), format!("remove {0}", c.index())]
    );
}

#[test]
fn a_hook_that_despawns_during_a_sparse_insert() {
    let mut world = World::new();
    world.register_component_hooks::<Stunned>().on_insert(|w, e| {
        w.commands().entity(e).despawn();
    });
    let a = world.spawn(Pos(1));
    world.insert(a, Stunned(1)).unwrap();
    assert!(!world.contains(a));
    assert_eq!(world.query::<&Stunned>().count(), 0);
    world.check_invariants().unwrap();
}

#[test]
fn pooled_sparse_components_are_reset_and_reused() {
    #[derive(Component, Default)]
    #[component(storage = "sparse", pooled)]
    struct Trail(Vec<i32>);
    impl Reset for Trail {
        fn reset(&mut self) {
            self.0.clear();
        }
    }
    let mut world = World::new();
    let a = world.spawn(Pos(0));
    let mut trail = Trail::default();
    trail.0.extend([1, 2, 3]);
    world.insert(a, trail).unwrap();
    world.despawn(a).unwrap();
    assert_eq!(world.pool_len::<Trail>(), 1);
    let b = world.spawn_pooled::<Trail>(|t| assert!(t.0.is_empty() && t.0.capacity() >= 3));
    assert!(world.has::<Trail>(b));
    world.check_invariants().unwrap();
}

#[test]
fn commands_systems_and_parallel_queries_handle_sparse_components() {
    let mut world = World::new();
    let entities: Vec<Entity> = world.spawn_batch((0..100).map(Pos)).collect();
    let mut schedule = Schedule::new();
    schedule.add_system(|mut commands: Commands, q: Query<(Entity, &Pos), Without<Stunned>>| {
        for (e, p) in q.iter() {
            if p.0 % 3 == 0 {
                commands.entity(e).insert(Stunned(p.0 as u32));
            }
        }
    });
    schedule.run(&mut world);
    assert_eq!(world.query::<&Stunned>().count(), 34);
    let mut state = QueryState::<(&Pos, &mut Stunned)>::new(&mut world);
    state.par_for_each_mut(&mut world, |(p, mut s)| s.0 += p.0 as u32);
    assert_eq!(world.get::<Stunned>(entities[99]), Some(&Stunned(198)));
    assert_eq!(world.get::<Stunned>(entities[98]), None);
    world.check_invariants().unwrap();
}

#[test]
fn entity_views_clones_and_take_carry_sparse_components() {
    let mut world = World::new();
    let a = world.spawn((Pos(1), Stunned(5)));
    let view = world.entity(a).unwrap();
    assert_eq!(view.get::<Stunned>(), Some(&Stunned(5)));
    assert!(view.component_names().any(|n| n.ends_with("Stunned")));
    let twin = world.clone_entity(a).unwrap();
    assert_eq!(world.get::<Stunned>(twin), Some(&Stunned(5)));
    let copy = world.try_clone().unwrap();
    assert_eq!(copy.get::<Stunned>(a), Some(&Stunned(5)));
    copy.check_invariants().unwrap();
    let mut other = World::new();
    let moved = other.spawn(world.take(a).unwrap());
    assert_eq!(other.get::<Stunned>(moved), Some(&Stunned(5)));
    assert!(!world.contains(a));
    world.check_invariants().unwrap();
    other.check_invariants().unwrap();
    // A non-cloneable sparse value refuses the copy.
    world.spawn(Marker);
    assert!(world.try_clone().unwrap_err().to_string().contains("Marker"));
    let mut view = world.entity_mut(twin).unwrap();
    view.insert(Marker);
    assert!(view.has::<Marker>());
    assert_eq!(view.remove::<Stunned>().unwrap(), Stunned(5));
}

#[test]
#[should_panic(expected = "uses sparse storage")]
fn a_required_sparse_component_is_refused() {
    #[derive(Component, Default)]
    #[component(storage = "sparse")]
    struct Glow;
    #[derive(Component)]
    #[component(requires(Glow))]
    struct Lamp;
    World::new().spawn(Lamp);
}

#[test]
fn without_a_sparse_type_the_world_never_saw() {
    #[derive(Component)]
    #[component(storage = "sparse")]
    struct Unseen;
    let mut world = World::new();
    let a = world.spawn(Pos(1));
    let b = world.spawn(Pos(2));
    assert_eq!(sorted(world.query_filtered::<Entity, Without<Unseen>>().collect()), [a, b]);
    assert_eq!(world.query_filtered::<Entity, With<Unseen>>().count(), 0);
    assert_eq!(world.query::<(Entity, Has<Unseen>)>().filter(|&(_, has)| has).count(), 0);
}

#[cfg(feature = "serde")]
mod saves {
    use archetable::data::{LoadError, SerdeRegistry, SerdeWorldExt};
    use archetable::prelude::*;
    use serde::{Deserialize, Serialize};

    #[derive(Component, Serialize, Deserialize, Debug, PartialEq, Default)]
    pub struct Life(u32);
    #[derive(Component, Serialize, Deserialize, Debug, PartialEq, Default)]
    #[component(storage = "sparse")]
    pub struct Frozen(u32);
    /// A sparse component that names another entity.
    #[derive(Component, Serialize, Deserialize, Debug, PartialEq, Default)]
    #[component(storage = "sparse")]
    pub struct Chasing(Option<Entity>);

    fn registry() -> SerdeRegistry {
        let mut registry = SerdeRegistry::default();
        registry.register::<Life>("Life").register::<Frozen>("Frozen").register::<Chasing>("Chasing");
        registry
    }

    /// Twelve entities of `Life` (one table, rows past a byte of bitmap),
    /// some frozen, one chasing another, and one with sparse components
    /// only.
    fn world() -> (World, Vec<Entity>) {
        let mut world = World::new();
        world.insert_resource(registry());
        let mut all: Vec<Entity> = (0..12).map(|i| world.spawn(Life(i))).collect();
        for &i in &[0usize, 3, 9, 11] {
            world.insert(all[i], Frozen(100 + i as u32)).unwrap();
        }
        world.insert(all[10], Chasing(Some(all[2]))).unwrap();
        all.push(world.spawn((Frozen(7), Chasing(Some(all[11])))));
        (world, all)
    }

    /// Every value of `world` as seen through the handles `to`, by saved
    /// entity.
    fn check(loaded: &World, all: &[Entity], to: impl Fn(Entity) -> Entity) {
        for (i, &saved) in all.iter().enumerate() {
            let e = to(saved);
            let frozen = match i {
                0 | 3 | 9 | 11 => Some(Frozen(100 + i as u32)),
                12 => Some(Frozen(7)),
                _ => None,
            };
            assert_eq!(loaded.get::<Frozen>(e), frozen.as_ref(), "entity {i}");
            assert_eq!(loaded.get::<Life>(e), (i < 12).then_some(Life(i as u32)).as_ref(), "entity {i}");
            let chasing = match i {
                10 => Some(Chasing(Some(to(all[2])))),
                12 => Some(Chasing(Some(to(all[11])))),
                _ => None,
            };
            assert_eq!(loaded.get::<Chasing>(e), chasing.as_ref(), "entity {i}");
        }
        loaded.check_invariants().unwrap();
    }

    #[test]
    fn every_save_format_keeps_sparse_components() {
        let (world, all) = world();
        let registry = registry();
        let json = world.save_json().unwrap().data;
        let ron = world.save_ron().unwrap().data;
        let binary = world.save_binary().unwrap().data;
        for loaded in [
            World::load_json(&registry, &json),
            World::load_ron(&registry, &ron),
            World::load_binary(&registry, &binary),
        ] {
            let loaded = loaded.unwrap();
            assert_eq!(loaded.len(), 13);
            check(&loaded, &all, |e| e);
        }
        for format in 0..3 {
            let mut merged = World::new();
            merged.insert_resource(registry.clone());
            let own = merged.spawn((Life(99), Frozen(99)));
            let map = match format {
                0 => merged.load_into_json(&json),
                1 => merged.load_into_ron(&ron),
                _ => merged.load_into_binary(&binary),
            }
            .unwrap();
            assert_eq!(merged.len(), 14);
            assert_eq!(merged.get::<Frozen>(own), Some(&Frozen(99)));
            check(&merged, &all, |e| map.get(e).unwrap());
        }
    }

    /// The binary save of one entity with `Frozen(9)` and no table
    /// component, and where its column starts.
    fn one_frozen() -> (SerdeRegistry, Vec<u8>, usize) {
        let mut world = World::new();
        world.insert_resource(registry());
        world.spawn(Frozen(9));
        let bytes = world.save_binary().unwrap().data;
        // The table's one column: component 0, flags: rows listed, 2
        // bytes: the bitmap (row 0) and the value; then the resources.
        let column = [0x00, 0x02, 0x02, 0x01, 0x09, 0x01, 0x04, b'T'];
        let found: Vec<usize> = (0..bytes.len() - column.len()).filter(|&i| bytes[i..].starts_with(&column)).collect();
        assert_eq!(found.len(), 1, "{bytes:x?}");
        (registry(), bytes, found[0])
    }

    #[test]
    fn a_damaged_sparse_column_is_refused() {
        let (registry, bytes, at) = one_frozen();
        assert_eq!(World::load_binary(&registry, &bytes).unwrap().query::<&Frozen>().next(), Some(&Frozen(9)));
        let damaged = |offset: usize, byte: u8| {
            let mut bytes = bytes.clone();
            bytes[at + offset] = byte;
            World::load_binary(&registry, &bytes).map(drop)
        };
        let message = |result: Result<(), LoadError>| result.unwrap_err().to_string();
        assert!(message(damaged(1, 0x06)).contains("column flags 0x6"));
        assert!(message(damaged(3, 0x03)).contains("past the table's end"));
        assert!(message(damaged(3, 0x00)).contains("marks no row"));
        // Too short for its bitmap.
        let mut short = bytes.clone();
        short[at + 2] = 0x00;
        short.remove(at + 3);
        short.remove(at + 3);
        assert!(message(World::load_binary(&registry, &short).map(drop)).contains("shorter than its bitmap"));
    }

    /// In sparse storage, with a `Deserialize` that panics on 13.
    #[derive(Component, Serialize, Debug, PartialEq, Default)]
    #[component(storage = "sparse")]
    pub struct Cursed(u32);

    impl<'de> Deserialize<'de> for Cursed {
        fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            let n = u32::deserialize(deserializer)?;
            assert_ne!(n, 13, "a cursed value");
            Ok(Cursed(n))
        }
    }

    #[test]
    fn a_panicking_deserialize_in_a_sparse_column_leaves_the_world_as_it_was() {
        let mut registry = registry();
        registry.register::<Cursed>("Cursed");
        let mut source = World::new();
        source.insert_resource(registry.clone());
        let lives: Vec<Entity> = (0..10).map(|i| source.spawn(Life(i))).collect();
        source.insert(lives[2], Cursed(1)).unwrap();
        source.insert(lives[7], Cursed(13)).unwrap();
        let binary = source.save_binary().unwrap().data;
        let json = source.save_json().unwrap().data;

        let mut target = World::new();
        target.insert_resource(registry.clone());
        let own = target.spawn((Life(99), Cursed(5)));
        let before = target.allocator_state();
        for load in [0, 1] {
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match load {
                0 => target.load_into_binary(&binary).map(drop),
                _ => target.load_into_json(&json).map(drop),
            }));
            assert!(result.is_err(), "load {load} panics");
            assert_eq!((target.len(), target.allocator_state()), (1, before.clone()), "load {load}");
            assert_eq!((target.get::<Life>(own), target.get::<Cursed>(own)), (Some(&Life(99)), Some(&Cursed(5))));
            target.check_invariants().unwrap();
        }
        let fresh = std::panic::catch_unwind(|| World::load_binary(&registry, &binary).map(drop));
        assert!(fresh.is_err());
    }

    #[test]
    fn rows_listed_for_a_table_component_are_refused() {
        #[derive(Component, Serialize, Deserialize, Debug, PartialEq, Default)]
        struct TableFrozen(u32);
        let (_, bytes, _) = one_frozen();
        let mut registry = SerdeRegistry::default();
        registry.register::<TableFrozen>("Frozen");
        let error = World::load_binary(&registry, &bytes).unwrap_err();
        assert!(error.to_string().contains("stored in tables"), "{error}");
    }
}

#[test]
fn overwriting_a_sparse_value_releases_the_old_one_after_the_write() {
    #[derive(Component, Default)]
    #[component(storage = "sparse", pooled)]
    struct Aura(Vec<u8>);
    impl Reset for Aura {
        fn reset(&mut self) {
            self.0.clear();
        }
    }
    #[derive(Component)]
    #[component(storage = "sparse")]
    struct Fragile(u32);
    impl Drop for Fragile {
        fn drop(&mut self) {
            if self.0 == 13 {
                panic!("unlucky");
            }
        }
    }
    let mut world = World::new();
    let e = world.spawn(Pos(0));
    world.insert(e, Aura(vec![1, 2])).unwrap();
    world.insert(e, Aura(vec![3])).unwrap();
    assert_eq!(world.pool_len::<Aura>(), 1, "the replaced value went to the pool");
    assert_eq!(world.get::<Aura>(e).map(|a| a.0.clone()), Some(vec![3]));
    world.insert(e, Fragile(13)).unwrap();
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| world.insert(e, Fragile(1))));
    assert!(panicked.is_err(), "the old value's destructor panicked");
    assert_eq!(world.get::<Fragile>(e).map(|f| f.0), Some(1), "the new value is in place");
    world.check_invariants().unwrap();
}
