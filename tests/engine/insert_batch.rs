//! `World::insert_batch`: many `(Entity, Bundle)` pairs at once, as the same
//! inserts one by one would do, with each target table grown once.

use archetable::prelude::*;

#[derive(Component, Debug, PartialEq)]
struct Hp(u32);

#[derive(Component, Debug, PartialEq)]
struct Speed(u32);

#[derive(Component, Debug, PartialEq)]
struct Flying;

#[derive(Default)]
struct Log(Vec<String>);

fn logging_world() -> World {
    let mut world = World::new();
    world.init_resource::<Log>();
    world
        .register_component_hooks::<Speed>()
        .on_add(|w, e| w.resource_mut::<Log>().0.push(format!("add {e}")))
        .on_insert(|w, e| w.resource_mut::<Log>().0.push(format!("insert {e}")))
        .on_replace(|w, e| w.resource_mut::<Log>().0.push(format!("replace {e}")));
    world
}

#[test]
fn every_pair_is_inserted_from_any_table() {
    let mut world = World::new();
    let walkers: Vec<Entity> = world.spawn_batch((0..10).map(Hp)).collect();
    let fliers: Vec<Entity> = world.spawn_batch((10..15).map(|i| (Hp(i), Flying))).collect();
    let pairs: Vec<(Entity, Speed)> =
        walkers.iter().chain(&fliers).enumerate().map(|(i, &e)| (e, Speed(i as u32))).collect();
    world.insert_batch(pairs).unwrap();
    for (i, &e) in walkers.iter().chain(&fliers).enumerate() {
        assert_eq!(world.get::<Speed>(e), Some(&Speed(i as u32)));
        assert_eq!(world.get::<Hp>(e), Some(&Hp(i as u32)));
    }
    assert_eq!(world.query_filtered::<&Speed, With<Flying>>().count(), 5);
    world.check_invariants().unwrap();
}

#[test]
fn hooks_run_as_for_inserts_one_by_one_and_a_repeat_overwrites() {
    let mut batched = logging_world();
    let mut single = logging_world();
    let a = batched.spawn(Hp(1));
    let b = batched.spawn((Hp(2), Speed(0)));
    single.spawn(Hp(1));
    single.spawn((Hp(2), Speed(0)));
    batched.resource_mut::<Log>().0.clear();
    single.resource_mut::<Log>().0.clear();
    let pairs = [(b, Speed(5)), (a, Speed(6)), (a, Speed(7))];
    batched.insert_batch(pairs.iter().map(|(e, s)| (*e, Speed(s.0)))).unwrap();
    for (e, s) in pairs {
        single.insert(e, s).unwrap();
    }
    assert_eq!(batched.resource::<Log>().0, single.resource::<Log>().0);
    assert_eq!(
        batched.resource::<Log>().0,
        [
            format!("replace {b}"),
            format!("insert {b}"),
            format!("add {a}"),
            format!("insert {a}"),
            format!("replace {a}"),
            format!("insert {a}")
        ]
    );
    assert_eq!((batched.get::<Speed>(a), batched.get::<Speed>(b)), (Some(&Speed(7)), Some(&Speed(5))));
}

#[test]
fn a_dead_entity_stops_the_batch_before_anything_is_inserted() {
    let mut world = World::new();
    let a = world.spawn(Hp(1));
    let gone = world.spawn(Hp(2));
    world.despawn(gone).unwrap();
    assert_eq!(world.insert_batch([(a, Speed(1)), (gone, Speed(2))]), Err(EntityError::NoSuchEntity(gone)));
    assert!(!world.has::<Speed>(a));
    world.check_invariants().unwrap();
}

#[test]
fn the_target_table_grows_once() {
    let table_bytes = |world: &World| -> usize {
        world.archetypes().as_slice().iter().filter(|t| t.len() == 1000).map(|t| t.allocated_bytes()).sum()
    };
    let mut batched = World::new();
    let entities: Vec<Entity> = batched.spawn_batch((0..1000).map(Hp)).collect();
    batched.insert_batch(entities.iter().map(|&e| (e, Speed(1)))).unwrap();
    let mut single = World::new();
    let entities: Vec<Entity> = single.spawn_batch((0..1000).map(Hp)).collect();
    for &e in &entities {
        single.insert(e, Speed(1)).unwrap();
    }
    // 1000 rows of (Hp, Speed) and their entity indices, with no slack
    // from doubling.
    assert_eq!(table_bytes(&batched), 1000 * (4 + 4 + 4));
    assert!(table_bytes(&single) > table_bytes(&batched));
}

/// Despawns the entity named in its `Doomed` when `Speed` is added.
#[derive(Component)]
struct Doomed(Entity);

#[test]
fn an_entity_a_hook_despawns_mid_batch_is_skipped() {
    let mut world = logging_world();
    world.register_component_hooks::<Speed>().on_add(|w, e| {
        if let Some(victim) = w.get::<Doomed>(e).map(|d| d.0) {
            w.commands().despawn(victim);
        }
    });
    let victim = world.spawn(Hp(2));
    let killer = world.spawn((Hp(1), Doomed(victim)));
    let bystander = world.spawn(Hp(3));
    world.resource_mut::<Log>().0.clear();
    world.insert_batch([(killer, Speed(1)), (victim, Speed(2)), (bystander, Speed(3))]).unwrap();
    assert!(!world.contains(victim));
    assert_eq!((world.get::<Speed>(killer), world.get::<Speed>(bystander)), (Some(&Speed(1)), Some(&Speed(3))));
    assert_eq!(
        world.resource::<Log>().0,
        [
            format!("add {killer}"),
            format!("insert {killer}"),
            format!("add {bystander}"),
            format!("insert {bystander}")
        ]
    );
    world.check_invariants().unwrap();
}

#[test]
fn tables_that_lead_to_one_target_reserve_together() {
    // Inserting (Speed, Flying) moves rows of (Hp) and of (Hp, Flying) to
    // the one table (Hp, Flying, Speed).
    let mut world = World::new();
    let plain: Vec<Entity> = world.spawn_batch((0..600).map(Hp)).collect();
    let fliers: Vec<Entity> = world.spawn_batch((0..400).map(|i| (Hp(i), Flying))).collect();
    let pairs = plain.iter().chain(&fliers).map(|&e| (e, (Speed(1), Flying)));
    world.insert_batch(pairs).unwrap();
    let target: Vec<_> = world.archetypes().as_slice().iter().filter(|t| t.len() == 1000).collect();
    assert_eq!(target.len(), 1);
    assert_eq!(target[0].allocated_bytes(), 1000 * (4 + 4 + 4), "grown once, for both tables' rows");
    world.check_invariants().unwrap();
}
