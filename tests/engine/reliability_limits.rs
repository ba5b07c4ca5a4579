//! The engine at its limits: generation wrap-around, exhaustion of the
//! entity index space, very large alignments, a million entities.
//!
//! Reaching `u32::MAX` generations or indices for real would take billions
//! of operations, so these tests use the hidden allocator hooks
//! (`World::entity_allocator_hooks`): `age_free_slots` moves free slots'
//! generations close to the end, `limit_slots` ends the index space early.
//! The code paths are the ones a world that got there for real would take.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use archetable::prelude::*;

#[derive(Component, Debug, PartialEq)]
struct Hp(u32);

#[derive(Component)]
struct Counted(Arc<AtomicUsize>);

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

fn consistent(world: &World) {
    if let Err(problem) = world.check_invariants() {
        panic!("world invariants broken: {problem}");
    }
}

fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    match payload.downcast::<String>() {
        Ok(s) => *s,
        Err(payload) => payload.downcast::<&str>().map(|s| s.to_string()).unwrap_or_default(),
    }
}

#[test]
fn an_index_whose_generation_runs_out_is_retired() {
    let mut world = World::new();
    let first = world.spawn(Hp(0));
    let keep = world.spawn(Hp(1));
    world.despawn(first).unwrap();
    world.entity_allocator_hooks().age_free_slots(1);

    // Two more uses of the slot: generations u32::MAX - 1 and u32::MAX.
    let second = world.spawn(Hp(2));
    assert_eq!((second.index(), second.generation()), (first.index(), u32::MAX - 1));
    world.despawn(second).unwrap();
    let last = world.spawn(Hp(3));
    assert_eq!((last.index(), last.generation()), (first.index(), u32::MAX));
    world.despawn(last).unwrap();
    consistent(&world);

    // The slot is retired: the next entity gets a fresh index, and no handle
    // of the old slot ever comes back to life.
    let fresh = world.spawn(Hp(4));
    assert_ne!(fresh.index(), first.index());
    assert_eq!(fresh.generation(), 1);
    for stale in [first, second, last] {
        assert!(!world.contains(stale));
        assert!(world.get::<Hp>(stale).is_none());
        assert_eq!(world.despawn(stale), Err(EntityError::NoSuchEntity(stale)));
        assert!(world.insert(stale, Hp(9)).is_err());
    }
    let wrapped = Entity::from_bits(u64::from(first.index())).map(|e| world.contains(e));
    assert_eq!(wrapped, None, "generation 0 does not exist, so no wrapped handle can be made");
    assert_eq!(world.get::<Hp>(keep), Some(&Hp(1)));
    assert_eq!(world.entity_allocator_hooks().slots(), 3);
    for _ in 0..10 {
        let e = world.spawn(Hp(5));
        assert_ne!(e.index(), first.index());
        world.despawn(e).unwrap();
    }
    consistent(&world);
}

#[test]
fn clear_retires_exhausted_slots_too() {
    let mut world = World::new();
    let es: Vec<Entity> = world.spawn_batch((0..4).map(Hp)).collect();
    world.despawn(es[1]).unwrap();
    world.despawn(es[2]).unwrap();
    world.entity_allocator_hooks().age_free_slots(0);
    let at_max: Vec<Entity> = world.spawn_batch((0..2).map(Hp)).collect();
    assert!(at_max.iter().all(|e| e.generation() == u32::MAX));
    world.clear();
    consistent(&world);
    // Two slots retired, two reusable, then new ones.
    let next: Vec<Entity> = world.spawn_batch((0..4).map(Hp)).collect();
    let reused = next.iter().filter(|e| e.index() < 4).count();
    assert_eq!(reused, 2);
    assert!(next.iter().all(|e| !at_max.iter().any(|m| m.index() == e.index())));
    assert_eq!(world.entity_allocator_hooks().slots(), 6);
    consistent(&world);
}

#[test]
fn spawn_past_the_index_space_panics_and_changes_nothing() {
    let drops = Arc::new(AtomicUsize::new(0));
    let mut world = World::new();
    world.entity_allocator_hooks().limit_slots(3);
    let es: Vec<Entity> = (0..3).map(|i| world.spawn((Hp(i), Counted(drops.clone())))).collect();
    assert_eq!(world.entity_allocator_hooks().spare(), 0);

    let result = catch_unwind(AssertUnwindSafe(|| world.spawn((Hp(99), Counted(drops.clone())))));
    let message = panic_message(result.expect_err("a spawn past the index space panics"));
    assert!(message.starts_with("entity index space exhausted"), "{message}");
    assert_eq!(drops.load(Ordering::SeqCst), 1, "the bundle that found no index is dropped, once");
    assert_eq!(world.len(), 3);
    consistent(&world);

    // Freeing an index makes room again.
    world.despawn(es[1]).unwrap();
    let again = world.spawn((Hp(7), Counted(drops.clone())));
    assert_eq!(again.index(), es[1].index());
    assert_eq!(world.get::<Hp>(again), Some(&Hp(7)));
    consistent(&world);
    drop(world);
    assert_eq!(drops.load(Ordering::SeqCst), 5);
}

#[test]
fn spawn_batch_past_the_index_space_keeps_what_fit() {
    let drops = Arc::new(AtomicUsize::new(0));
    let mut world = World::new();
    world.spawn(Hp(0));
    world.entity_allocator_hooks().limit_slots(100);
    // An exact size hint far past the index space: only what can be spawned
    // is reserved, and the batch stops with the exhaustion panic.
    let source = std::iter::repeat_with(|| (Hp(1), Counted(drops.clone()))).take(usize::MAX);
    assert_eq!(source.size_hint(), (usize::MAX, Some(usize::MAX)));
    let mut spawned = 0;
    let result = catch_unwind(AssertUnwindSafe(|| {
        for _ in world.spawn_batch(source) {
            spawned += 1;
        }
    }));
    let message = panic_message(result.expect_err("the batch runs out of indices"));
    assert!(message.starts_with("entity index space exhausted"), "{message}");
    assert_eq!(spawned, 99);
    assert_eq!(world.len(), 100);
    assert_eq!(drops.load(Ordering::SeqCst), 1, "only the bundle that found no index was dropped");
    assert!(world.archetypes().as_slice().iter().all(|a| a.len() <= 99));
    consistent(&world);
    drop(world);
    assert_eq!(drops.load(Ordering::SeqCst), 100);
}

/// Alignment far above the allocator's usual, zero-sized and not.
#[derive(Component)]
#[repr(align(4096))]
struct Page([u8; 4096]);

#[derive(Component)]
#[repr(align(4096))]
struct PageMarker;

#[test]
fn page_aligned_components_stay_aligned_across_moves() {
    let mut world = World::new();
    let mut es = Vec::new();
    for i in 0..40u32 {
        let mut page = Page([0; 4096]);
        page.0[0] = i as u8;
        page.0[4095] = !(i as u8);
        es.push(world.spawn((Hp(i), page, PageMarker)));
    }
    for (i, &e) in es.iter().enumerate() {
        match i % 3 {
            0 => world.despawn(e).unwrap(),
            1 => world.remove::<PageMarker>(e).map(drop).unwrap(),
            _ => world.insert(e, Counted(Arc::default())).unwrap(),
        }
    }
    consistent(&world);
    for (i, &e) in es.iter().enumerate().filter(|(i, _)| i % 3 != 0) {
        let page = world.get::<Page>(e).unwrap();
        assert_eq!(page as *const Page as usize % 4096, 0);
        assert_eq!((page.0[0], page.0[4095]), (i as u8, !(i as u8)));
        assert_eq!(world.get::<Hp>(e), Some(&Hp(i as u32)));
        if let Some(marker) = world.get::<PageMarker>(e) {
            assert_eq!(marker as *const PageMarker as usize % 4096, 0);
        }
    }
    assert_eq!(world.query::<&Page>().count(), 26);
    for page in world.query::<&Page>() {
        assert_eq!(page as *const Page as usize % 4096, 0);
    }
}

#[derive(Component)]
struct Position {
    x: f32,
    y: f32,
}

#[derive(Component)]
struct Id(u64);

#[test]
fn a_million_entities() {
    const N: u32 = 1_000_000;
    let mut world = World::new();
    let es: Vec<Entity> =
        world.spawn_batch((0..N).map(|i| (Id(u64::from(i)), Position { x: i as f32, y: 0.0 }))).collect();
    assert_eq!(world.len(), N as usize);
    let sum = world.query::<&Id>().fold(0u64, |s, id| s + id.0);
    assert_eq!(sum, u64::from(N) * u64::from(N - 1) / 2);

    // Despawn every other entity, move a quarter to another table, respawn.
    for &e in es.iter().step_by(2) {
        world.despawn(e).unwrap();
    }
    for &e in es.iter().skip(1).step_by(4) {
        world.insert(e, Hp(1)).unwrap();
    }
    assert_eq!(world.len(), N as usize / 2);
    assert_eq!(world.query_filtered::<&Id, With<Hp>>().count(), N as usize / 4);
    let again: Vec<Entity> = world.spawn_batch((0..N / 2).map(|i| (Id(u64::from(i)),))).collect();
    assert!(again.iter().all(|e| e.index() < N && e.generation() == 2), "freed indices are reused");
    assert_eq!(world.entity_allocator_hooks().slots(), N as usize);
    for mut pos in world.query_mut::<&mut Position>() {
        pos.y = pos.x + 1.0;
    }
    assert!(world.query::<&Position>().all(|p| p.y == p.x + 1.0));
    consistent(&world);
    world.clear();
    assert!(world.is_empty());
    consistent(&world);
}

#[test]
fn a_reservation_past_the_index_space_leaves_nothing_behind() {
    let mut world = World::new();
    world.entity_allocator_hooks().limit_slots(2);
    let a = world.reserve_entity();
    let b = world.reserve_entity();
    for _ in 0..3 {
        let result = catch_unwind(AssertUnwindSafe(|| world.reserve_entity()));
        let message = panic_message(result.expect_err("no index is left to reserve"));
        assert!(message.starts_with("entity index space exhausted"), "{message}");
    }
    world.flush();
    assert_eq!(world.len(), 2);
    assert!(world.contains(a) && world.contains(b));
    assert_eq!(world.entity_allocator_hooks().slots(), 2);
    consistent(&world);
    world.despawn(a).unwrap();
    let again = world.reserve_entity();
    assert_eq!(again.index(), a.index());
    world.flush();
    assert_eq!(world.len(), 2);
    consistent(&world);
}
