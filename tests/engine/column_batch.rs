//! Whole tables in one step: `ColumnBatch` with `World::spawn_column_batch`
//! and `World::insert_column_batches`. Values arrive exactly, in row order,
//! each moved once (never cloned or dropped on the way); refused batches
//! change nothing; hooks run once every entity is in place; a panic on the
//! way (a required component's constructor, a hook) leaves no half-built
//! entity, and inside `all_or_nothing` no entity at all.

#![cfg(all(feature = "serde", feature = "observers"))]

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use archetable::prelude::*;
use archetable::{ColumnBatch, ColumnBatchError};

#[derive(Component, Debug, PartialEq, Clone, Copy)]
struct Hp(u32);

#[derive(Component, Debug, PartialEq, Clone)]
struct Name(String);

#[derive(Component, Debug, PartialEq, Clone)]
struct Marker;

/// Counts its drops in a shared counter.
#[derive(Component, Debug)]
struct Counted(u32, Arc<AtomicUsize>);

impl Drop for Counted {
    fn drop(&mut self) {
        self.1.fetch_add(1, Ordering::Relaxed);
    }
}

fn counted(n: u32, drops: &Arc<AtomicUsize>) -> Vec<Counted> {
    (0..n).map(|i| Counted(i, drops.clone())).collect()
}

fn batch(hp: &[u32], names: &[&str]) -> ColumnBatch {
    let mut batch = ColumnBatch::new(hp.len());
    batch.add(hp.iter().copied().map(Hp).collect());
    if !names.is_empty() {
        batch.add(names.iter().map(|n| Name((*n).to_owned())).collect());
    }
    batch
}

#[test]
fn a_spawned_batch_holds_its_values_in_row_order_at_the_handles_spawns_would_get() {
    let mut world = World::new();
    let gone = world.spawn(Hp(0));
    world.despawn(gone).unwrap();
    let expected = world.peek_entities(3);
    let mut b = batch(&[1, 2, 3], &["a", "b", "c"]);
    b.add(vec![Marker, Marker, Marker]);
    assert_eq!((b.len(), b.columns(), b.has::<Name>(), b.has::<Counted>()), (3, 3, true, false));
    let spawned = world.spawn_column_batch(b);
    assert_eq!(spawned, expected);
    for (i, &e) in spawned.iter().enumerate() {
        assert_eq!(world.get::<Hp>(e), Some(&Hp(i as u32 + 1)));
        assert_eq!(world.get::<Name>(e).map(|n| n.0.as_str()), Some(["a", "b", "c"][i]));
        assert!(world.has::<Marker>(e));
    }
    let tables: Vec<_> = world.archetypes().as_slice().iter().filter(|t| !t.is_empty()).collect();
    assert_eq!(tables.len(), 1, "one table holds the batch");
    assert_eq!(world.table_entities(tables[0]).collect::<Vec<_>>(), spawned);
    // The same table as a tuple spawn of the same components.
    let single = world.spawn((Hp(4), Name("d".into()), Marker));
    assert_eq!(world.archetypes().as_slice().iter().filter(|t| !t.is_empty()).count(), 1);
    assert_eq!(world.query::<&Hp>().map(|h| h.0).collect::<Vec<_>>(), [1, 2, 3, 4]);
    world.check_invariants().unwrap();
    let _ = single;
}

#[test]
fn empty_batches_and_batches_without_columns() {
    let mut world = World::new();
    assert_eq!(world.spawn_column_batch(ColumnBatch::new(0)), []);
    assert_eq!(world.spawn_column_batch(batch(&[], &[])), []);
    let bare = world.spawn_column_batch(ColumnBatch::new(2));
    assert_eq!(bare.len(), 2);
    assert!(bare.iter().all(|&e| world.contains(e) && world.entity(e).unwrap().component_names().count() == 0));
    assert_eq!(world.len(), 2);
    world.check_invariants().unwrap();
}

#[test]
fn values_are_moved_never_dropped_on_the_way() {
    let drops = Arc::new(AtomicUsize::new(0));
    let mut world = World::new();
    let mut b = ColumnBatch::new(5);
    b.add(counted(5, &drops));
    let spawned = world.spawn_column_batch(b);
    assert_eq!(drops.load(Ordering::Relaxed), 0, "placing drops nothing");
    assert_eq!(world.get::<Counted>(spawned[4]).map(|c| c.0), Some(4));
    world.despawn(spawned[0]).unwrap();
    assert_eq!(drops.load(Ordering::Relaxed), 1);
    drop(world);
    assert_eq!(drops.load(Ordering::Relaxed), 5, "each value dropped once");

    // A batch never placed drops its values once.
    let drops = Arc::new(AtomicUsize::new(0));
    let mut b = ColumnBatch::new(3);
    b.add(counted(3, &drops));
    drop(b);
    assert_eq!(drops.load(Ordering::Relaxed), 3);
}

#[test]
fn a_column_of_the_wrong_length_or_a_second_of_one_type_is_refused() {
    let drops = Arc::new(AtomicUsize::new(0));
    let result = catch_unwind(AssertUnwindSafe(|| {
        ColumnBatch::new(2).add(counted(3, &drops));
    }));
    let message = *result.unwrap_err().downcast::<String>().unwrap();
    assert!(message.contains("with 3 values for a batch of 2 rows"), "{message}");
    assert_eq!(drops.load(Ordering::Relaxed), 3);
    let result = catch_unwind(AssertUnwindSafe(|| {
        ColumnBatch::new(1).add(vec![Hp(1)]).add(vec![Hp(2)]);
    }));
    let message = *result.unwrap_err().downcast::<String>().unwrap();
    assert!(message.contains("has a column of") && message.contains("Hp"), "{message}");
}

#[test]
fn filled_entities_keep_their_handles_batch_by_batch() {
    let mut world = World::new();
    let handles: Vec<Entity> = (0..6).map(|_| world.spawn(())).collect();
    let keep = world.spawn(Hp(100));
    // Batches in any order, rows naming any of the empty entities.
    world
        .insert_column_batches([
            (&[handles[4], handles[0]][..], batch(&[40, 0], &[])),
            (&[handles[2]][..], batch(&[20], &["two"])),
            (&[handles[5], handles[1]][..], batch(&[50, 10], &[])),
        ])
        .unwrap();
    let hp = |e: Entity| world.get::<Hp>(e).map(|h| h.0);
    assert_eq!(
        [hp(handles[0]), hp(handles[1]), hp(handles[2]), hp(handles[4]), hp(handles[5]), hp(keep)],
        [Some(0), Some(10), Some(20), Some(40), Some(50), Some(100)]
    );
    assert_eq!(world.get::<Name>(handles[2]).map(|n| n.0.as_str()), Some("two"));
    assert!(world.contains(handles[3]) && !world.has::<Hp>(handles[3]), "the unlisted entity stays empty");
    // Two batches of the same components share the table of a tuple spawn.
    let hp_only = world.archetypes().as_slice().iter().find(|t| world.table_entities(t).any(|e| e == keep)).unwrap();
    assert!(world.table_entities(hp_only).eq([keep, handles[4], handles[0], handles[5], handles[1]]));
    assert_eq!(world.len(), 7);
    world.check_invariants().unwrap();
}

#[test]
fn restored_entities_are_filled_in_place() {
    let mut source = World::new();
    let all: Vec<Entity> = (0..5).map(|i| source.spawn(Hp(i))).collect();
    source.despawn(all[2]).unwrap();
    let live: Vec<Entity> = all.iter().copied().filter(|&e| source.contains(e)).collect();
    let mut copy = World::new();
    copy.restore_allocator_state(&source.allocator_state(), &live).unwrap();
    copy.insert_column_batches([(&live[..], batch(&[0, 1, 3, 4], &[]))]).unwrap();
    for &e in &live {
        assert_eq!(copy.get::<Hp>(e), source.get::<Hp>(e));
    }
    assert_eq!(copy.spawn(Hp(9)), source.spawn(Hp(9)), "later spawns replay");
    copy.check_invariants().unwrap();
}

#[test]
fn refused_batches_change_nothing_and_drop_their_values_once() {
    let mut world = World::new();
    let empty = world.spawn(());
    let other = world.spawn(());
    let full = world.spawn(Hp(1));
    let gone = world.spawn(());
    world.despawn(gone).unwrap();
    let state = world.allocator_state();
    let drops = Arc::new(AtomicUsize::new(0));
    let with = |n| {
        let mut b = ColumnBatch::new(n);
        b.add(counted(n as u32, &drops));
        b
    };
    let cases = [
        (vec![(vec![empty, gone], with(2))], ColumnBatchError::NoSuchEntity(gone)),
        (vec![(vec![full], with(1))], ColumnBatchError::HasComponents(full)),
        (vec![(vec![empty], with(1)), (vec![other, empty], with(2))], ColumnBatchError::ListedTwice(empty)),
        (vec![(vec![empty, empty], with(2))], ColumnBatchError::ListedTwice(empty)),
        (vec![(vec![empty], with(2))], ColumnBatchError::RowCount { entities: 1, rows: 2 }),
    ];
    let mut expected_drops = 0;
    for (batches, error) in cases {
        expected_drops += batches.iter().map(|(_, b)| b.len()).sum::<usize>();
        let lists: Vec<Vec<Entity>> = batches.iter().map(|(l, _)| l.clone()).collect();
        let result = world.insert_column_batches(lists.iter().map(|l| &l[..]).zip(batches.into_iter().map(|(_, b)| b)));
        assert_eq!(result, Err(error));
        assert_eq!(drops.load(Ordering::Relaxed), expected_drops, "{error}");
        assert_eq!(world.allocator_state(), state, "{error}");
        assert!(!world.has::<Counted>(empty) && !world.has::<Counted>(other));
        assert_eq!(world.len(), 3);
        world.check_invariants().unwrap();
    }
    assert_eq!(
        ColumnBatchError::RowCount { entities: 1, rows: 2 }.to_string(),
        "1 entities listed for a batch of 2 rows"
    );
}

#[derive(Component, Debug, PartialEq)]
#[component(track_changes)]
struct Seen(u32);

#[test]
fn batches_count_as_added_at_the_current_tick() {
    let mut world = World::new();
    world.advance_change_tick(5);
    let mut b = ColumnBatch::new(3);
    b.add(vec![Seen(1), Seen(2), Seen(3)]);
    let spawned = world.spawn_column_batch(b);
    for &e in &spawned {
        let ticks = world.component_ticks::<Seen>(e).unwrap();
        assert_eq!((ticks.added, ticks.changed), (world.change_tick(), world.change_tick()));
    }
    world.check_invariants().unwrap();
}

#[derive(Component, Debug, PartialEq, Default)]
struct Mass(u32);

#[derive(Component, Debug, PartialEq)]
#[component(requires(Mass = Mass(7)))]
struct Body;

#[test]
fn required_components_a_batch_lacks_are_added_to_every_row() {
    let mut world = World::new();
    let mut b = ColumnBatch::new(3);
    b.add(vec![Body, Body, Body]);
    let spawned = world.spawn_column_batch(b);
    assert!(spawned.iter().all(|&e| world.get::<Mass>(e) == Some(&Mass(7))));
    // A batch that has the required component keeps its own values.
    let mut b = ColumnBatch::new(2);
    b.add(vec![Body, Body]).add(vec![Mass(1), Mass(2)]);
    let spawned = world.spawn_column_batch(b);
    assert_eq!(world.get::<Mass>(spawned[1]), Some(&Mass(2)));
    world.check_invariants().unwrap();
}

thread_local! {
    static BUILT: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// Built by `Fragile`'s requirement; the third construction panics.
#[derive(Component, Debug)]
struct Part(Arc<AtomicUsize>);

impl Drop for Part {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

static PART_DROPS: std::sync::LazyLock<Arc<AtomicUsize>> = std::sync::LazyLock::new(|| Arc::new(AtomicUsize::new(0)));

fn part() -> Part {
    let n = BUILT.get() + 1;
    BUILT.set(n);
    if n == 3 {
        panic!("the third part breaks");
    }
    Part(PART_DROPS.clone())
}

#[derive(Component, Debug, Clone)]
#[component(requires(Part = part()))]
struct Fragile;

#[test]
fn a_panicking_value_midway_leaves_the_world_as_it_was() {
    let mut world = World::new();
    let before = world.spawn(Hp(1));
    let empty = world.spawn(());
    let state = world.allocator_state();
    let drops = Arc::new(AtomicUsize::new(0));
    for fill in [false, true] {
        BUILT.set(0);
        let parts_before = PART_DROPS.load(Ordering::Relaxed);
        let drops_before = drops.load(Ordering::Relaxed);
        let rows = if fill { 1 } else { 5 };
        let mut b = ColumnBatch::new(rows);
        b.add(vec![Fragile; rows]).add(counted(rows as u32, &drops));
        let result = catch_unwind(AssertUnwindSafe(|| {
            if fill {
                // Two rows' parts are built here already: the batch of one
                // row is the third.
                BUILT.set(2);
                world.insert_column_batches([(&[empty][..], b)]).unwrap();
            } else {
                world.spawn_column_batch(b);
            }
        }));
        assert!(result.is_err(), "the constructor's panic goes on");
        assert_eq!(drops.load(Ordering::Relaxed) - drops_before, rows, "the batch's values dropped once");
        let built = if fill { 0 } else { 2 };
        assert_eq!(PART_DROPS.load(Ordering::Relaxed) - parts_before, built, "the parts built dropped once");
        assert_eq!(world.len(), 2);
        assert_eq!(world.allocator_state(), state);
        assert_eq!(world.get::<Hp>(before), Some(&Hp(1)));
        assert!(world.contains(empty) && !world.has::<Counted>(empty));
        assert_eq!(world.query::<&Counted>().count(), 0);
        world.check_invariants().unwrap();
    }
}

/// Hooks on `Hp` that log what they see: the entity's value and how many
/// entities have an `Hp` by then.
fn logging(world: &mut World) -> Arc<Mutex<Vec<String>>> {
    let log = Arc::new(Mutex::new(Vec::new()));
    let (add, insert) = (log.clone(), log.clone());
    world
        .register_component_hooks::<Hp>()
        .on_add(move |w, e| {
            let seen = w.query::<&Hp>().count();
            add.lock().unwrap().push(format!("add {} of {seen}", w.get::<Hp>(e).unwrap().0));
        })
        .on_insert(move |w, e| insert.lock().unwrap().push(format!("insert {}", w.get::<Hp>(e).unwrap().0)));
    log
}

#[test]
fn hooks_run_once_every_batch_is_in_place() {
    let mut world = World::new();
    let log = logging(&mut world);
    let a = world.spawn(());
    let b = world.spawn(());
    let c = world.spawn(());
    world.insert_column_batches([(&[b, a][..], batch(&[2, 1], &[])), (&[c][..], batch(&[3], &["c"]))]).unwrap();
    assert_eq!(
        *log.lock().unwrap(),
        ["add 2 of 3", "insert 2", "add 1 of 3", "insert 1", "add 3 of 3", "insert 3"],
        "batch by batch, row by row, each seeing all three"
    );
    log.lock().unwrap().clear();
    world.spawn_column_batch(batch(&[7, 8], &[]));
    assert_eq!(*log.lock().unwrap(), ["add 7 of 5", "insert 7", "add 8 of 5", "insert 8"]);
}

#[test]
fn an_entity_despawned_by_an_earlier_hook_gets_no_hooks() {
    let mut world = World::new();
    let log = Arc::new(Mutex::new(Vec::new()));
    let seen = log.clone();
    let victim = world.peek_entities(2)[1];
    world.register_component_hooks::<Hp>().on_add(move |w, e| {
        seen.lock().unwrap().push(w.get::<Hp>(e).unwrap().0);
        if w.get::<Hp>(e) == Some(&Hp(1)) {
            w.commands().entity(victim).despawn();
        }
    });
    let spawned = world.spawn_column_batch(batch(&[1, 2, 3], &[]));
    assert_eq!(spawned[1], victim);
    assert_eq!(*log.lock().unwrap(), [1, 3]);
    assert!(!world.contains(victim));
    assert_eq!(world.len(), 2);
    world.check_invariants().unwrap();
}

#[test]
fn inside_all_or_nothing_a_panicking_hook_takes_every_batch_back() {
    let mut world = World::new();
    world.spawn(Hp(1));
    let state = world.allocator_state();
    let next = world.peek_entities(1)[0];
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = calls.clone();
    world.register_component_hooks::<Name>().on_insert(move |_, _| {
        if counter.fetch_add(1, Ordering::Relaxed) == 1 {
            panic!("the second name hook panics");
        }
    });
    let result = catch_unwind(AssertUnwindSafe(|| {
        world.all_or_nothing(|world| {
            world.spawn_column_batch(batch(&[2, 3], &["a", "b"]));
            world.spawn_column_batch(batch(&[4], &["c"]));
            Ok::<(), ()>(())
        })
    }));
    assert!(result.is_err());
    assert_eq!(calls.load(Ordering::Relaxed), 2, "the first batch's hooks ran up to the panic");
    assert_eq!(world.len(), 1);
    assert_eq!(world.allocator_state(), state);
    assert_eq!(world.spawn(Hp(5)), next);
    world.check_invariants().unwrap();
}

#[test]
fn relationships_in_a_batch_are_kept_by_the_engine() {
    let mut world = World::new();
    let parent = world.spawn(());
    let mut b = ColumnBatch::new(3);
    b.add(vec![ChildOf(parent); 3]).add(vec![Hp(1), Hp(2), Hp(3)]);
    let children = world.spawn_column_batch(b);
    assert_eq!(world.children(parent), &children[..]);
    assert!(children.iter().all(|&c| world.parent(c) == Some(parent)));
    world.check_invariants().unwrap();
}

#[test]
fn zero_sized_and_large_columns() {
    let mut world = World::new();
    let n = 10_000;
    let mut b = ColumnBatch::new(n);
    b.add((0..n).map(|_| Marker).collect());
    b.add((0..n as u32).map(|i| Name(i.to_string())).collect());
    let spawned = world.spawn_column_batch(b);
    assert_eq!(world.get::<Name>(spawned[n - 1]).map(|s| s.0.as_str()), Some("9999"));
    assert_eq!(world.query_filtered::<&Name, With<Marker>>().count(), n);
    world.check_invariants().unwrap();
}

#[derive(Default)]
struct Arrivals(Vec<(Entity, u32)>);

#[test]
fn observers_of_added_components_see_every_row() {
    let mut world = World::new();
    world.init_resource::<Arrivals>();
    world.observe(|t: Trigger<OnAdd<Hp>>, hp: Query<&Hp>, mut seen: ResMut<Arrivals>| {
        let entity = t.target().unwrap();
        seen.0.push((entity, hp.get(entity).unwrap().0));
    });
    // A batch of other components runs nothing.
    let mut names = ColumnBatch::new(2);
    names.add(vec![Name("a".into()), Name("b".into())]);
    world.spawn_column_batch(names);
    assert!(world.resource::<Arrivals>().0.is_empty());
    let spawned = world.spawn_column_batch(batch(&[5, 6], &["x", "y"]));
    assert_eq!(world.resource::<Arrivals>().0, [(spawned[0], 5), (spawned[1], 6)]);
}

#[test]
fn a_restore_places_every_batch_at_its_saved_handles() {
    let mut source = World::new();
    let all: Vec<Entity> = (0..8).map(|i| source.spawn(Hp(i))).collect();
    for &gone in &all[5..7] {
        source.despawn(gone).unwrap();
    }
    let bare = source.spawn(());
    let state = source.allocator_state();
    let named = [all[3], all[1]];
    let plain = [all[7], all[0], all[2], all[4]];
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut copy = World::new();
    let seen = log.clone();
    copy.register_component_hooks::<Hp>().on_add(move |w, e| seen.lock().unwrap().push((e, w.query::<&Hp>().count())));
    copy.restore_with_column_batches(
        &state,
        &[bare],
        [(&named[..], batch(&[3, 1], &["three", "one"])), (&plain[..], batch(&[7, 0, 2, 4], &[]))],
    )
    .unwrap();
    for &e in named.iter().chain(&plain) {
        assert_eq!(copy.get::<Hp>(e), source.get::<Hp>(e));
    }
    assert_eq!(copy.get::<Name>(all[1]).map(|n| n.0.as_str()), Some("one"));
    assert!(copy.contains(bare) && !copy.has::<Hp>(bare));
    assert_eq!(copy.len(), 7);
    let order: Vec<Entity> = log.lock().unwrap().iter().map(|&(e, _)| e).collect();
    assert_eq!(order, [all[3], all[1], all[7], all[0], all[2], all[4]], "batch by batch, row by row");
    assert!(log.lock().unwrap().iter().all(|&(_, live)| live == 6), "hooks see the whole restore");
    let table = copy.archetypes().as_slice().iter().find(|t| copy.table_entities(t).any(|e| e == all[7])).unwrap();
    assert_eq!(copy.table_entities(table).collect::<Vec<_>>(), plain);
    assert_eq!(copy.spawn(Hp(9)), source.spawn(Hp(9)), "later spawns replay");
    copy.check_invariants().unwrap();
}

#[test]
fn a_refused_restore_changes_nothing_and_drops_its_values_once() {
    let mut source = World::new();
    let a = source.spawn(Hp(1));
    let b = source.spawn(Hp(2));
    let state = source.allocator_state();
    let drops = Arc::new(AtomicUsize::new(0));
    let with = |n: u32| {
        let mut batch = ColumnBatch::new(n as usize);
        batch.add(counted(n, &drops));
        batch
    };
    let mut copy = World::new();
    let stale = Entity::from_bits((2 << 32) | u64::from(a.index())).unwrap();
    assert_eq!(
        copy.restore_with_column_batches(&state, &[], [(&[stale, b][..], with(2))]),
        Err(archetable::AllocatorStateError::GenerationMismatch { entity: stale, slot_generation: 1 })
    );
    assert_eq!(
        copy.restore_with_column_batches(&state, &[a], [(&[a, b][..], with(2))]),
        Err(archetable::AllocatorStateError::DuplicateLiveEntity(a))
    );
    assert_eq!(drops.load(Ordering::Relaxed), 4);
    assert!(copy.is_empty());
    assert_eq!(copy.allocator_state(), World::new().allocator_state());
    copy.check_invariants().unwrap();
    let other = copy.spawn(());
    assert_eq!(
        copy.restore_with_column_batches(&state, &[], [(&[a, b][..], with(2))]),
        Err(archetable::AllocatorStateError::WorldNotEmpty)
    );
    assert_eq!(drops.load(Ordering::Relaxed), 6);
    assert_eq!(copy.len(), 1);
    let _ = other;
}

#[test]
fn a_restore_inside_all_or_nothing_is_taken_back_whole() {
    let mut source = World::new();
    let all: Vec<Entity> = (0..4).map(|i| source.spawn(Hp(i))).collect();
    let drops = Arc::new(AtomicUsize::new(0));
    let mut copy = World::new();
    let before = copy.allocator_state();
    let result: Result<(), &str> = copy.all_or_nothing(|world| {
        let mut batch = ColumnBatch::new(4);
        batch.add(counted(4, &drops));
        world.restore_with_column_batches(&source.allocator_state(), &[], [(&all[..], batch)]).unwrap();
        assert_eq!(world.len(), 4);
        Err("the rest of the load failed")
    });
    assert!(result.is_err());
    assert!(copy.is_empty());
    assert_eq!(copy.allocator_state(), before);
    assert_eq!(drops.load(Ordering::Relaxed), 4, "the restored values were dropped once");
    copy.check_invariants().unwrap();
    assert_eq!(copy.spawn(Hp(7)), World::new().spawn(Hp(7)));
}

#[test]
fn a_table_filled_from_empty_by_one_batch_takes_over_its_buffers() {
    let mut world = World::new();
    let hp: Vec<Hp> = (0..100).map(Hp).collect();
    let names: Vec<Name> = (0..100).map(|i| Name(format!("n{i}"))).collect();
    let (hp_buffer, name_buffer) = (hp.as_ptr(), names.as_ptr());
    let mut batch = ColumnBatch::new(100);
    batch.add(hp).add(names).add(vec![Marker; 100]);
    let spawned = world.spawn_column_batch(batch);
    // The values were not copied: the table's columns are the batch's own
    // buffers.
    assert!(std::ptr::eq(world.get::<Hp>(spawned[0]).unwrap(), hp_buffer));
    assert!(std::ptr::eq(world.get::<Name>(spawned[0]).unwrap(), name_buffer));
    assert_eq!(world.get::<Name>(spawned[99]), Some(&Name("n99".into())));
    world.check_invariants().unwrap();

    // The table grows, shrinks and takes a second batch as any other.
    let more: Vec<Entity> = (100..1_100).map(|i| world.spawn((Hp(i), Name(format!("n{i}")), Marker))).collect();
    for &e in spawned.iter().step_by(2) {
        world.despawn(e).unwrap();
    }
    let mut batch = ColumnBatch::new(2);
    batch.add(vec![Hp(7), Hp(8)]).add(vec![Name("a".into()), Name("b".into())]).add(vec![Marker, Marker]);
    let last = world.spawn_column_batch(batch);
    world.check_invariants().unwrap();
    assert_eq!(world.get::<Hp>(more[999]), Some(&Hp(1_099)));
    assert_eq!(world.get::<Hp>(spawned[1]), Some(&Hp(1)));
    assert_eq!(world.get::<Name>(last[1]), Some(&Name("b".into())));
    let total: u64 = world.query::<&Hp>().map(|hp| u64::from(hp.0)).sum();
    let expected: u64 = (0..1_100u64).filter(|i| *i >= 100 || i % 2 == 1).sum::<u64>() + 15;
    assert_eq!(total, expected);
}

#[test]
fn a_table_two_batches_fill_at_once_copies_them_in() {
    let mut world = World::new();
    let restore = |world: &mut World| {
        let first: Vec<Hp> = (0..10).map(Hp).collect();
        let pointer = first.as_ptr();
        let mut a = ColumnBatch::new(10);
        a.add(first);
        let mut b = ColumnBatch::new(5);
        b.add((10..15).map(Hp).collect::<Vec<_>>());
        let entities: Vec<Entity> = (0..15).map(|_| world.spawn(())).collect();
        world.insert_column_batches([(&entities[..10], a), (&entities[10..], b)]).expect("both batches fit");
        (entities, pointer)
    };
    let (entities, pointer) = restore(&mut world);
    assert!(!std::ptr::eq(world.get::<Hp>(entities[0]).unwrap(), pointer));
    let values: Vec<u32> = entities.iter().map(|&e| world.get::<Hp>(e).unwrap().0).collect();
    assert_eq!(values, (0..15).collect::<Vec<_>>());
    world.check_invariants().unwrap();
}
