//! `World::spawn_at`: entities with handles chosen elsewhere. A live handle
//! is refused, a handle older than its slot is refused, and the allocator
//! stays consistent: no later spawn hands out a handle that was ever alive.

use std::collections::{HashMap, HashSet};

use archetable::prelude::*;
use archetable::SpawnAtError;

#[derive(Component, Debug, PartialEq)]
struct Hp(u32);

#[derive(Component, Debug, PartialEq)]
struct Tag;

fn handle(index: u32, generation: u32) -> Entity {
    Entity::from_bits((u64::from(generation) << 32) | u64::from(index)).unwrap()
}

#[test]
fn a_high_index_leaves_the_skipped_slots_to_later_spawns_lowest_first() {
    let mut world = World::new();
    let remote = handle(3, 1);
    assert_eq!(world.spawn_at(remote, (Hp(7), Tag)), Ok(remote));
    assert_eq!((world.get::<Hp>(remote), world.has::<Tag>(remote)), (Some(&Hp(7)), true));
    world.check_invariants().unwrap();
    let spawned: Vec<Entity> = (0..4).map(|i| world.spawn(Hp(i))).collect();
    assert_eq!(spawned, [handle(0, 1), handle(1, 1), handle(2, 1), handle(4, 1)]);
    assert_eq!(world.len(), 5);
    world.check_invariants().unwrap();
}

#[test]
fn refusals_name_the_reason_and_change_nothing() {
    let mut world = World::new();
    let a = world.spawn(Hp(1));
    let b = world.spawn(Hp(2));
    let state = world.allocator_state();
    assert_eq!(world.spawn_at(a, Hp(9)), Err(SpawnAtError::AlreadyAlive(a)));
    let other_generation = handle(a.index(), 4);
    assert_eq!(
        world.spawn_at(other_generation, Hp(9)),
        Err(SpawnAtError::SlotOccupied { requested: other_generation, occupant: a })
    );
    world.despawn(b).unwrap();
    let state_after_despawn = world.allocator_state();
    // The slot's next generation is 2: handle b (generation 1) was used.
    assert_eq!(world.spawn_at(b, Hp(9)), Err(SpawnAtError::StaleGeneration { entity: b, current: 2 }));
    assert_eq!(world.allocator_state(), state_after_despawn);
    assert_ne!(world.allocator_state(), state);
    assert_eq!(world.get::<Hp>(a), Some(&Hp(1)));
    assert_eq!(world.len(), 1);
    world.entity_allocator_hooks().limit_slots(10);
    let far = handle(10, 1);
    assert_eq!(world.spawn_at(far, Hp(9)), Err(SpawnAtError::IndexOutOfRange(far)));
    assert_eq!(world.spawn_at(handle(9, 1), Hp(9)), Ok(handle(9, 1)));
    world.check_invariants().unwrap();
    assert_eq!(
        SpawnAtError::StaleGeneration { entity: b, current: 2 }.to_string(),
        "cannot spawn 1v1: its slot is at generation 2, so the handle was already used here"
    );
}

#[test]
fn a_newer_generation_is_taken_and_the_slot_continues_from_it() {
    let mut world = World::new();
    let a = world.spawn(Hp(1));
    world.despawn(a).unwrap();
    let newer = handle(a.index(), 6);
    assert_eq!(world.spawn_at(newer, Hp(2)), Ok(newer));
    assert!(!world.contains(a));
    world.despawn(newer).unwrap();
    assert_eq!(world.spawn(Hp(3)), handle(a.index(), 7));
    world.check_invariants().unwrap();
}

#[test]
fn a_slot_in_the_middle_of_the_free_list_is_taken_out_in_place() {
    let mut world = World::new();
    let handles: Vec<Entity> = (0..5).map(|i| world.spawn(Hp(i))).collect();
    for &e in &handles[..4] {
        world.despawn(e).unwrap();
    }
    // Free list, top last: 0 1 2 3; take slot 1 out of the middle.
    assert_eq!(world.spawn_at(handle(1, 2), Hp(10)), Ok(handle(1, 2)));
    let next: Vec<Entity> = (0..4).map(|i| world.spawn(Hp(20 + i))).collect();
    assert_eq!(next, [handle(3, 2), handle(2, 2), handle(0, 2), handle(5, 1)]);
    world.check_invariants().unwrap();
}

#[derive(Default)]
struct Log(Vec<String>);

fn logging_world() -> World {
    let mut world = World::new();
    world.init_resource::<Log>();
    world
        .register_component_hooks::<Hp>()
        .on_add(|w, e| w.resource_mut::<Log>().0.push(format!("add hp {e}")))
        .on_insert(|w, e| w.resource_mut::<Log>().0.push(format!("insert hp {e}")));
    world
        .register_component_hooks::<Tag>()
        .on_add(|w, e| w.resource_mut::<Log>().0.push(format!("add tag {e}")))
        .on_insert(|w, e| w.resource_mut::<Log>().0.push(format!("insert tag {e}")));
    world
}

#[test]
fn spawn_hooks_run_as_for_a_spawn() {
    let mut spawned = logging_world();
    let e = spawned.spawn((Tag, Hp(1)));
    let mut placed = logging_world();
    placed.spawn_at(e, (Tag, Hp(1))).unwrap();
    assert_eq!(placed.resource::<Log>().0, spawned.resource::<Log>().0);
    assert_eq!(placed.resource::<Log>().0, ["add tag 0v1", "add hp 0v1", "insert tag 0v1", "insert hp 0v1"]);
}

#[test]
fn all_or_nothing_takes_a_spawn_at_back_with_the_allocator() {
    let mut world = World::new();
    let handles: Vec<Entity> = (0..6).map(|i| world.spawn(Hp(i))).collect();
    for &e in &[handles[1], handles[4], handles[2]] {
        world.despawn(e).unwrap();
    }
    let before = world.allocator_state();
    let result: Result<(), ()> = world.all_or_nothing(|world| {
        world.spawn_at(handle(4, 3), Hp(40)).unwrap();
        world.spawn_at(handle(12, 1), Hp(120)).unwrap();
        world.spawn(Hp(99));
        world.spawn_at(handle(1, 2), Hp(10)).unwrap();
        Err(())
    });
    assert!(result.is_err());
    assert_eq!(world.allocator_state(), before);
    assert_eq!(world.len(), 3);
    world.check_invariants().unwrap();
    // Committed, the claims stay.
    let kept: Result<(), ()> =
        world.all_or_nothing(|world| world.spawn_at(handle(4, 2), Hp(40)).map(drop).map_err(drop));
    assert!(kept.is_ok());
    assert_eq!(world.get::<Hp>(handle(4, 2)), Some(&Hp(40)));
    world.check_invariants().unwrap();
}

/// A small deterministic generator, so a failure replays.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Spawns, despawns, reservations, flushes, spawn_at of random handles and
/// rolled-back steps, interleaved; after each, the world is consistent, the
/// live set is the model's, and no handle has ever been alive twice.
#[test]
fn interleavings_never_alias_a_handle() {
    for seed in 1..=40u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let mut world = World::new();
        let mut live: Vec<Entity> = Vec::new();
        let mut ever: HashSet<Entity> = HashSet::new();
        let mut newest: HashMap<u32, u32> = HashMap::new();
        let note = |e: Entity, ever: &mut HashSet<Entity>, newest: &mut HashMap<u32, u32>| {
            assert!(ever.insert(e), "seed {seed}: handle {e} became alive twice");
            let g = newest.entry(e.index()).or_insert(0);
            *g = (*g).max(e.generation());
        };
        for step in 0..400 {
            match rng.below(10) {
                0..=2 => {
                    let e = world.spawn(Hp(step));
                    note(e, &mut ever, &mut newest);
                    live.push(e);
                }
                3..=4 if !live.is_empty() => {
                    let e = live.swap_remove(rng.below(live.len() as u64) as usize);
                    world.despawn(e).unwrap();
                }
                5..=7 => {
                    let index = rng.below(48) as u32;
                    let seen = newest.get(&index).copied().unwrap_or(0);
                    let generation = (seen + rng.below(3) as u32).max(1);
                    let e = handle(index, generation);
                    let was_live = world.contains(e);
                    match world.spawn_at(e, Hp(1000 + step)) {
                        Ok(got) => {
                            assert_eq!(got, e);
                            assert!(!was_live);
                            note(e, &mut ever, &mut newest);
                            live.push(e);
                        }
                        Err(SpawnAtError::AlreadyAlive(x)) => assert!(was_live && x == e),
                        Err(SpawnAtError::SlotOccupied { occupant, .. }) => {
                            assert!(live.contains(&occupant), "seed {seed}: occupant {occupant} not live")
                        }
                        Err(SpawnAtError::StaleGeneration { .. }) => {
                            assert!(ever.iter().any(|x| x.index() == index && x.generation() >= generation))
                        }
                        Err(other) => panic!("seed {seed}: unexpected {other:?}"),
                    }
                }
                8 => {
                    let r = world.reserve_entity();
                    world.flush();
                    note(r, &mut ever, &mut newest);
                    live.push(r);
                }
                _ => {
                    let before = world.allocator_state();
                    let index = rng.below(64) as u32;
                    let _: Result<(), ()> = world.all_or_nothing(|world| {
                        world.spawn(Hp(1));
                        let _ = world.spawn_at(handle(index, 9), Hp(2));
                        world.spawn(Hp(3));
                        Err(())
                    });
                    assert_eq!(world.allocator_state(), before, "seed {seed}: rollback");
                }
            }
            world.check_invariants().unwrap_or_else(|e| panic!("seed {seed} step {step}: {e}"));
            assert_eq!(world.len(), live.len());
            assert!(live.iter().all(|&e| world.contains(e)));
        }
    }
}
