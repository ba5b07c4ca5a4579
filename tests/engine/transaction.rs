//! `World::all_or_nothing`, built-entity batches and `peek_entities`: a
//! failed step takes back what it spawned, entity allocator included.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};

use archetable::prelude::*;
use archetable::{AllocatorState, EntityBuilder};

#[derive(Component, Debug, PartialEq, Clone, Copy)]
struct Hp(u32);
#[derive(Component, Debug, PartialEq, Clone, Copy)]
struct Link(Entity);

/// A world with live entities and a free list, and its allocator state.
fn populated() -> (World, Vec<Entity>, AllocatorState) {
    let mut world = World::new();
    let all: Vec<Entity> = (0..10).map(|i| world.spawn(Hp(i))).collect();
    for &e in &all[2..6] {
        world.despawn(e).unwrap();
    }
    let state = world.allocator_state();
    (world, all, state)
}

/// The handles three spawns get in a world that is `populated()`.
fn next_three() -> Vec<Entity> {
    let (mut world, ..) = populated();
    (0..3).map(|i| world.spawn(Hp(100 + i))).collect()
}

#[test]
fn an_error_takes_back_the_spawns_and_the_allocator() {
    let (mut world, all, state) = populated();
    let result: Result<(), &str> = world.all_or_nothing(|world| {
        for i in 0..20 {
            world.spawn(Hp(50 + i));
        }
        let reserved = world.reserve_entity();
        world.flush();
        assert!(world.contains(reserved));
        Err("broken")
    });
    assert_eq!(result, Err("broken"));
    assert_eq!(world.len(), 6);
    assert_eq!(world.allocator_state(), state);
    assert!(all[6..].iter().all(|&e| world.contains(e)));
    world.check_invariants().unwrap();
    let again: Vec<Entity> = (0..3).map(|i| world.spawn(Hp(100 + i))).collect();
    assert_eq!(again, next_three());
}

#[test]
fn a_panic_takes_back_the_spawns_and_goes_on() {
    let (mut world, _, state) = populated();
    let panicked = catch_unwind(AssertUnwindSafe(|| {
        let _: Result<(), ()> = world.all_or_nothing(|world| {
            world.spawn(Hp(7));
            panic!("a Deserialize impl panicked");
        });
    }));
    assert!(panicked.is_err());
    assert_eq!((world.len(), world.allocator_state()), (6, state));
    world.check_invariants().unwrap();
}

#[test]
fn success_keeps_everything_and_nested_failures_take_back_their_part() {
    let (mut world, _, state) = populated();
    let kept = world
        .all_or_nothing(|world| {
            let a = world.spawn(Hp(1));
            let inner: Result<(), ()> = world.all_or_nothing(|world| {
                world.spawn(Hp(2));
                world.spawn(Hp(3));
                Err(())
            });
            assert!(inner.is_err());
            let b = world.spawn(Hp(4));
            Ok::<_, ()>([a, b])
        })
        .unwrap();
    assert_eq!(world.len(), 8);
    assert_eq!(world.get::<Hp>(kept[1]), Some(&Hp(4)));
    // The inner spawns never happened as far as the allocator knows: the
    // two kept entities have the first two handles a plain world would give.
    assert_eq!(kept.to_vec(), next_three()[..2]);
    assert_ne!(world.allocator_state(), state);
    world.check_invariants().unwrap();
}

#[test]
fn a_step_that_despawned_an_older_entity_still_takes_back_its_spawns() {
    let (mut world, all, _) = populated();
    let result: Result<(), ()> = world.all_or_nothing(|world| {
        world.spawn(Hp(1));
        world.despawn(all[0]).unwrap();
        world.spawn(Hp(2));
        Err(())
    });
    assert!(result.is_err());
    assert_eq!(world.len(), 5, "the older entity stays despawned, the new ones are gone");
    assert!(!world.contains(all[0]));
    world.check_invariants().unwrap();
}

#[test]
fn a_restored_allocator_is_put_back() {
    let mut world = World::new();
    let gone = world.spawn(Hp(0));
    world.despawn(gone).unwrap();
    let state = world.allocator_state();
    let (source, ..) = populated();
    let live: Vec<Entity> = source.query::<Entity>().collect();
    let result: Result<(), ()> = world.all_or_nothing(|world| {
        world.restore_allocator_state(&source.allocator_state(), &live).unwrap();
        assert_eq!(world.len(), 6);
        Err(())
    });
    assert!(result.is_err());
    assert_eq!((world.len(), world.allocator_state()), (0, state));
    world.check_invariants().unwrap();
}

#[test]
fn batch_hooks_see_the_whole_batch_and_a_panicking_one_takes_it_all_back() {
    let (mut world, _, state) = populated();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    world.register_component_hooks::<Link>().on_add(move |world, entity| {
        let target = world.get::<Link>(entity).unwrap().0;
        log.lock().unwrap().push(world.get::<Hp>(target).copied());
        if world.get::<Hp>(entity) == Some(&Hp(666)) {
            panic!("hook refuses");
        }
    });
    // Two entities that point at each other: each hook sees the other
    // complete, wherever it is in the batch.
    let handles = world.peek_entities(2);
    let mut builders: Vec<EntityBuilder> = (0..2).map(|_| EntityBuilder::new()).collect();
    builders[0].add(Hp(10)).add(Link(handles[1]));
    builders[1].add(Hp(11)).add(Link(handles[0]));
    let spawned = world.spawn_built_batch(&mut builders);
    assert_eq!(spawned, handles);
    assert_eq!(*seen.lock().unwrap(), [Some(Hp(11)), Some(Hp(10))]);
    let state_after = world.allocator_state();
    assert_ne!(state_after, state);

    // A hook that panics on the third of three: all three go.
    let handles = world.peek_entities(3);
    for (i, builder) in builders.iter_mut().enumerate() {
        builder.add(Hp(20 + i as u32)).add(Link(handles[0]));
    }
    let mut builders: Vec<EntityBuilder> = builders.into_iter().chain([EntityBuilder::new()]).collect();
    builders[2].add(Hp(666)).add(Link(handles[1]));
    let panicked = catch_unwind(AssertUnwindSafe(|| {
        world.all_or_nothing(|world| Ok::<_, ()>(world.spawn_built_batch(&mut builders)))
    }));
    assert!(panicked.is_err());
    assert_eq!(world.len(), 8);
    assert_eq!(world.allocator_state(), state_after);
    world.check_invariants().unwrap();
}

#[test]
fn insert_built_batch_checks_every_entity_first() {
    let mut world = World::new();
    let a = world.spawn(Hp(1));
    let b = world.spawn(Hp(2));
    world.despawn(b).unwrap();
    let mut builders: Vec<EntityBuilder> = (0..2).map(|_| EntityBuilder::new()).collect();
    builders[0].add(Hp(10));
    builders[1].add(Hp(20));
    assert_eq!(world.insert_built_batch(&[a, b], &mut builders), Err(EntityError::NoSuchEntity(b)));
    assert_eq!(world.get::<Hp>(a), Some(&Hp(1)));
    assert_eq!(builders[0].get::<Hp>(), Some(&Hp(10)));
    let c = world.spawn(());
    world.insert_built_batch(&[a, c], &mut builders).unwrap();
    assert_eq!((world.get::<Hp>(a), world.get::<Hp>(c)), (Some(&Hp(10)), Some(&Hp(20))));
    world.check_invariants().unwrap();
}

#[test]
fn peek_entities_only_looks_and_counts_handles_reserved_meanwhile() {
    let mut world = World::new();
    let old: Vec<Entity> = (0..4).map(|i| world.spawn(Hp(i))).collect();
    world.despawn(old[1]).unwrap();
    world.despawn(old[3]).unwrap();
    let state = world.allocator_state();
    let view: &World = &world;
    let peeked = view.peek_entities(3);
    assert_eq!(view.peek_entities(3), peeked, "looking twice sees the same");
    assert_eq!(world.allocator_state(), state, "looking changes nothing");
    // Commands reserve the first handle through `&World`: the peek after
    // it names the ones after.
    let mut queue = CommandQueue::default();
    let reserved = Commands::new(&mut queue, &world).spawn(Hp(10)).id();
    assert_eq!(reserved, peeked[0]);
    let after = world.peek_entities(2);
    assert_eq!(after, peeked[1..]);
    queue.apply(&mut world);
    let spawned = [world.spawn(Hp(11)), world.spawn(Hp(12))];
    assert_eq!(spawned, [peeked[1], peeked[2]]);
    assert_eq!(spawned.map(|e| e.index()), [old[1].index(), 4], "a freed slot, then a new one");
    world.check_invariants().unwrap();
}
