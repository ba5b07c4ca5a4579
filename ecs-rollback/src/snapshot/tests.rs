//! A save may leave a slot's column as it is, and a load the present
//! world's, when nothing wrote them since the two were last the same.
//! These tests run long seeded sequences of writes (through `get_mut`,
//! `EntityWorldMut`, a system's `Query<&mut T>`), spawns, despawns,
//! components removed and added back, sparse components, a resource,
//! saves and loads of older and newer frames, and compare every load with
//! a full copy of the world taken at the save, and every checksum with a
//! full rehash.

use std::hash::Hash;

use archetable_core::{Entity, Query, Schedule, World};
use archetable_macros::Component;

use super::{checksum, Ring};
use crate::registry::Registry;

#[derive(Component, Clone, Debug, PartialEq, Eq, Hash)]
#[component(clone, track_changes)]
struct Hp(u32);

#[derive(Component, Clone, Debug, PartialEq, Eq, Hash)]
#[component(clone)]
struct Label(String);

#[derive(Component, Clone, Debug, PartialEq, Eq, Hash)]
#[component(clone)]
struct Plain(u32);

#[derive(Component, Clone, Debug, PartialEq, Eq, Hash)]
#[component(clone, storage = "sparse")]
struct Marked(u8);

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Score(u64);

fn registry() -> Registry {
    let mut registry = Registry::default();
    registry.component_with::<Hp>(|v, h| v.hash(h));
    registry.component_with::<Label>(|v, h| v.hash(h));
    registry.component_with::<Plain>(|v, h| v.hash(h));
    registry.component_with::<Marked>(|v, h| v.hash(h));
    registry.resource_with::<Score>(|v, h| v.hash(h));
    registry
}

/// Every entity in query order with its components, and the resource.
type Dump = (Vec<(u64, Option<Hp>, Option<Label>, Option<Plain>, Option<Marked>)>, Option<Score>);

fn dump(world: &World) -> Dump {
    let rows = world
        .query::<Entity>()
        .map(|e| {
            (
                e.to_bits(),
                world.get::<Hp>(e).cloned(),
                world.get::<Label>(e).cloned(),
                world.get::<Plain>(e).cloned(),
                world.get::<Marked>(e).cloned(),
            )
        })
        .collect();
    (rows, world.get_resource::<Score>().cloned())
}

fn tables(world: &World) -> Vec<(usize, Vec<u32>)> {
    world
        .archetypes()
        .as_slice()
        .iter()
        .enumerate()
        .filter(|(_, t)| !t.is_empty())
        .map(|(i, t)| (i, t.entity_indices().to_vec()))
        .collect()
}

/// A small deterministic generator (64-bit LCG, high bits).
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % n
    }
}

fn add_to_plain(mut plain: Query<&mut Plain>) {
    for mut p in plain.iter_mut() {
        p.0 = p.0.wrapping_add(3);
    }
}

/// Runs `steps` random operations on a world of `start` entities with a
/// ring of `len` slots; checks every load against the copy taken at the
/// save. Returns how many loads were checked.
fn run(seed: u64, steps: usize, len: usize, start: u32) -> usize {
    let registry = registry();
    let mut rng = Lcg(seed);
    let mut world = World::new();
    world.insert_resource(Score(0));
    let mut alive: Vec<Entity> = (0..start).map(|i| world.spawn((Hp(i), Label(format!("u{i}")), Plain(i)))).collect();
    let mut schedule = Schedule::new();
    schedule.add_systems(add_to_plain);
    let mut ring = Ring::new(len);
    let mut copies: Vec<Option<(i32, Dump)>> = vec![None; len];
    let mut allocators: Vec<(Vec<u32>, Vec<u32>)> = vec![Default::default(); len];
    let mut frame = 0i32;
    let mut tables_at: Vec<Vec<(usize, Vec<u32>)>> = vec![Vec::new(); len];
    let mut loads = 0;
    for step in 0..steps {
        let pick = |rng: &mut Lcg, alive: &[Entity]| (!alive.is_empty()).then(|| alive[rng.below(alive.len())]);
        match rng.below(14) {
            0 => {
                if let Some(e) = pick(&mut rng, &alive)
                    && let Some(mut p) = world.get_mut::<Plain>(e)
                {
                    p.0 += 1;
                }
            }
            1 => {
                if let Some(e) = pick(&mut rng, &alive)
                    && let Some(mut l) = world.get_mut::<Label>(e)
                {
                    l.0.push('!');
                }
            }
            2 => schedule.run(&mut world),
            3 => {
                if let Some(e) = pick(&mut rng, &alive)
                    && let Some(mut hp) = world.entity_mut(e).unwrap().get_mut::<Hp>()
                {
                    hp.0 += 5;
                }
            }
            4 => {
                let i = step as u32;
                alive.push(world.spawn((Hp(i), Label(format!("s{i}")), Plain(i))));
            }
            5 => {
                if !alive.is_empty() {
                    let e = alive.swap_remove(rng.below(alive.len()));
                    world.despawn(e).unwrap();
                }
            }
            6 => {
                if let Some(e) = pick(&mut rng, &alive) {
                    if world.get::<Marked>(e).is_some() {
                        world.remove::<Marked>(e).unwrap();
                    } else {
                        world.insert(e, Marked(step as u8)).unwrap();
                    }
                }
            }
            7 => world.resource_mut::<Score>().0 += 1,
            8 => {
                // Out of the table and back in: the same rows may come back.
                if let Some(e) = pick(&mut rng, &alive)
                    && let Ok(p) = world.remove::<Plain>(e)
                {
                    world.insert(e, p).unwrap();
                }
            }
            9 => {
                for mut hp in world.query_mut::<&mut Hp>() {
                    hp.0 = hp.0.wrapping_mul(3);
                }
            }
            10 | 11 => {
                frame += 1;
                let saved = ring.save(&mut world, &registry, frame).unwrap();
                assert_eq!(saved, checksum(&world, &registry), "step {step}: the save's checksum is a full rehash");
                let slot = ring.index(frame);
                copies[slot] = Some((frame, dump(&world)));
                tables_at[slot] = tables(&world);
                let (generations, free) = world.allocator_view();
                allocators[slot] = (generations.map(|g| g.get()).collect(), free.to_vec());
            }
            _ => {
                // A load of any kept frame, older or newer than the last.
                let slot = rng.below(len);
                let Some((at, copy)) = copies[slot].clone() else { continue };
                ring.load(&mut world, &registry, at).unwrap();
                assert_eq!(dump(&world), copy, "step {step}: frame {at} comes back as saved");
                assert_eq!(tables(&world), tables_at[slot], "step {step}: the tables' rows come back");
                assert_eq!(checksum(&world, &registry), ring.checksum_of(at).unwrap(), "step {step}: the checksum too");
                let (generations, free) = world.allocator_view();
                let allocator: (Vec<u32>, Vec<u32>) = (generations.map(|g| g.get()).collect(), free.to_vec());
                assert_eq!(allocator, allocators[slot], "step {step}: the allocator comes back");
                world.check_invariants().unwrap();
                frame = at;
                alive = world.query::<Entity>().collect();
                loads += 1;
            }
        }
    }
    loads
}

#[test]
fn loads_after_random_writes_spawns_and_despawns_match_full_copies() {
    for seed in 0..6 {
        assert!(run(seed, 3_000, 4, 12) > 300);
    }
}

#[test]
fn a_long_ring_and_a_short_one_both_match_full_copies() {
    assert!(run(77, 4_000, 9, 30) > 400);
    assert!(run(78, 4_000, 1, 5) > 400);
}
