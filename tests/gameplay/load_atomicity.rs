//! Prefab spawns and save loads are one step each: an entity arrives whole
//! (one table move, the hooks of a tuple of its components), a load's hooks
//! run once every entity is in place, and an error or a panic from user code
//! (a hook, a `Deserialize`) leaves the world exactly as it was, its entity
//! allocator included. Hooks that despawn through commands never make the
//! engine panic.

#![cfg(feature = "serde")]

use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};

use archetable::data::{EntityMap, Format, Prefabs};
use archetable::prelude::*;
use archetable::AllocatorState;
use serde::{Deserialize, Deserializer, Serialize};

#[derive(Component, Serialize, Deserialize, Default, Debug, PartialEq, Clone, Copy)]
struct Hp(u32);

#[derive(Component, Serialize, Deserialize, Default, Debug, PartialEq, Clone, Copy)]
struct Armor(u32);

thread_local! {
    /// While set, `Grudge`'s `Deserialize` counts down and misbehaves at
    /// zero: panics, or returns an error.
    static TRIP: Cell<Option<(u32, bool)>> = const { Cell::new(None) };
}

/// A component holding a handle (so merges read it twice: once to build,
/// once with the new handles) whose `Deserialize` can be made to fail.
#[derive(Component, Serialize, Debug, PartialEq, Clone, Copy)]
struct Grudge(Entity);

impl<'de> Deserialize<'de> for Grudge {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let entity = Entity::deserialize(deserializer)?;
        if let Some((left, panics)) = TRIP.get() {
            if left == 0 {
                TRIP.set(None);
                if panics {
                    panic!("Grudge refuses to load");
                }
                return Err(serde::de::Error::custom("Grudge refuses to load"));
            }
            TRIP.set(Some((left - 1, panics)));
        }
        Ok(Grudge(entity))
    }
}

fn registered() -> World {
    let mut world = World::new();
    world.register_serde::<Hp>("Hp");
    world.register_serde::<Armor>("Armor");
    world.register_serde_without_default::<Grudge>("Grudge");
    world
}

/// Hooks on `Hp` and `Armor` that log what they see of the entity.
fn hooked() -> (World, Arc<Mutex<Vec<String>>>) {
    let mut world = registered();
    let log = Arc::new(Mutex::new(Vec::new()));
    for (name, is_hp) in [("Hp", true), ("Armor", false)] {
        let (add, insert) = (log.clone(), log.clone());
        let seen = |w: &HookWorld<'_>, e: Entity| {
            format!("hp={:?} armor={:?}", w.get::<Hp>(e).map(|h| h.0), w.get::<Armor>(e).map(|a| a.0))
        };
        let hooks =
            if is_hp { world.register_component_hooks::<Hp>() } else { world.register_component_hooks::<Armor>() };
        hooks
            .on_add(move |w, e| add.lock().unwrap().push(format!("add {name}: {}", seen(w, e))))
            .on_insert(move |w, e| insert.lock().unwrap().push(format!("insert {name}: {}", seen(w, e))));
    }
    (world, log)
}

fn prefabs() -> Prefabs {
    Prefabs::from_json_str(r#"{ "Knight": { "Hp": 30, "Armor": 5 }, "Ghost": { "Hp": 0 } }"#).unwrap()
}

/// Tables that hold at least one component.
fn tables(world: &World) -> usize {
    world.archetypes().as_slice().iter().filter(|a| !a.components().is_empty()).count()
}

#[test]
fn a_prefab_spawns_as_one_bundle_with_the_hooks_of_a_tuple() {
    let expected = [
        "add Hp: hp=Some(30) armor=Some(5)",
        "add Armor: hp=Some(30) armor=Some(5)",
        "insert Hp: hp=Some(30) armor=Some(5)",
        "insert Armor: hp=Some(30) armor=Some(5)",
    ];
    let (mut world, log) = hooked();
    let knight = world.spawn_prefab(&prefabs(), "Knight").unwrap();
    assert_eq!(*log.lock().unwrap(), expected);
    assert_eq!(tables(&world), 1, "no table for a half-built knight");

    let (mut world, log) = hooked();
    let mut queue = CommandQueue::default();
    let deferred = Commands::new(&mut queue, &world).spawn_prefab(&prefabs(), "Knight").id();
    queue.apply(&mut world);
    assert_eq!(*log.lock().unwrap(), expected);
    assert_eq!(world.query_one::<(&Hp, &Armor)>(deferred).unwrap(), (&Hp(30), &Armor(5)));
    assert_eq!(tables(&world), 1);
    let _ = knight;
}

#[test]
fn a_merged_save_shows_its_hooks_only_whole_entities() {
    let mut source = registered();
    source.spawn((Hp(7), Armor(2)));
    source.spawn(Hp(8));
    for format in [Format::Json, Format::Ron, Format::Binary] {
        let data = save(&source, format);
        let (mut world, log) = hooked();
        load_into(&mut world, format, &data).unwrap();
        assert_eq!(
            *log.lock().unwrap(),
            [
                "add Hp: hp=Some(7) armor=Some(2)",
                "add Armor: hp=Some(7) armor=Some(2)",
                "insert Hp: hp=Some(7) armor=Some(2)",
                "insert Armor: hp=Some(7) armor=Some(2)",
                "add Hp: hp=Some(8) armor=None",
                "insert Hp: hp=Some(8) armor=None",
            ],
            "{format:?}"
        );
        assert_eq!(tables(&world), 2, "{format:?}");
    }
}

/// An `on_add` hook that despawns (through commands) any entity whose `Hp`
/// is 0.
fn despawn_the_dead(world: &mut World) {
    world.register_component_hooks::<Hp>().on_add(|w, e| {
        if w.get::<Hp>(e) == Some(&Hp(0)) {
            w.commands().entity(e).despawn();
        }
    });
}

#[test]
fn hooks_that_despawn_through_commands_never_make_loads_or_prefabs_panic() {
    let mut source = registered();
    source.spawn((Hp(0), Armor(1)));
    source.spawn((Hp(3), Armor(1)));
    for format in [Format::Json, Format::Ron, Format::Binary] {
        let mut world = registered();
        despawn_the_dead(&mut world);
        let map = load_into(&mut world, format, &save(&source, format)).unwrap();
        assert_eq!(map.len(), 2);
        assert_eq!(world.query::<&Hp>().copied().collect::<Vec<_>>(), [Hp(3)], "{format:?}");
        world.check_invariants().unwrap();
    }
    let mut world = registered();
    despawn_the_dead(&mut world);
    let ghost = world.spawn_prefab(&prefabs(), "Ghost").unwrap();
    assert!(!world.contains(ghost));
    let mut queue = CommandQueue::default();
    let ghost = Commands::new(&mut queue, &world).spawn_prefab(&prefabs(), "Ghost").id();
    queue.apply(&mut world);
    assert!(!world.contains(ghost));
    assert!(world.is_empty());
    world.check_invariants().unwrap();
}

/// A populated world with a free list; its allocator state and the handle
/// its next spawn gets.
fn populated() -> (World, AllocatorState, Entity) {
    let mut world = registered();
    let all: Vec<Entity> = (0..6).map(|i| world.spawn(Hp(i))).collect();
    world.despawn(all[1]).unwrap();
    world.despawn(all[4]).unwrap();
    let state = world.allocator_state();
    let next = world.peek_entities(1)[0];
    (world, state, next)
}

/// A save of five entities, some holding `Grudge`s at each other.
fn grudges() -> World {
    let mut source = registered();
    let a = source.spawn(Hp(1));
    let b = source.spawn((Hp(2), Grudge(a)));
    source.spawn((Hp(3), Grudge(b)));
    source.spawn((Armor(4), Grudge(a)));
    source.spawn(Hp(5));
    source
}

fn assert_untouched(world: &mut World, state: &AllocatorState, next: Entity, why: &str) {
    assert_eq!(world.len(), 4, "{why}");
    assert_eq!(world.allocator_state(), *state, "{why}");
    assert_eq!(world.peek_entities(1)[0], next, "{why}");
    world.check_invariants().unwrap();
}

#[test]
fn a_panicking_hook_during_a_merge_leaves_the_world_as_it_was() {
    let source = grudges();
    for format in [Format::Json, Format::Ron, Format::Binary] {
        let data = save(&source, format);
        let (mut world, state, next) = populated();
        world.register_component_hooks::<Armor>().on_insert(|_, _| panic!("Armor's hook panics"));
        let result = catch_unwind(AssertUnwindSafe(|| load_into(&mut world, format, &data)));
        assert!(result.is_err(), "{format:?}: the hook's panic goes on");
        assert_untouched(&mut world, &state, next, &format!("{format:?}"));
    }
}

#[test]
fn a_deserialize_that_panics_or_fails_while_remapping_leaves_the_world_as_it_was() {
    let source = grudges();
    for format in [Format::Json, Format::Ron, Format::Binary] {
        let data = save(&source, format);
        // Three grudges are read once to build and once more with the new
        // handles: the fourth read is the first of the second pass.
        for panics in [true, false] {
            let (mut world, state, next) = populated();
            TRIP.set(Some((3, panics)));
            let result = catch_unwind(AssertUnwindSafe(|| load_into(&mut world, format, &data)));
            let tripped = TRIP.take().is_none();
            assert!(tripped, "{format:?}: the second pass read a Grudge");
            match (panics, result) {
                (true, Err(_)) => {}
                (false, Ok(Err(error))) => assert!(error.to_string().contains("Grudge refuses"), "{error}"),
                (_, other) => panic!("{format:?}, panics {panics}: {:?}", other.map(|r| r.map(|m| m.len()))),
            }
            assert_untouched(&mut world, &state, next, &format!("{format:?}, panics {panics}"));
        }
    }
}

#[test]
fn a_successful_merge_spawns_at_the_handles_it_peeked_and_remaps() {
    let source = grudges();
    for format in [Format::Json, Format::Ron, Format::Binary] {
        let (mut world, _, next) = populated();
        let map = load_into(&mut world, format, &save(&source, format)).unwrap();
        assert_eq!(world.len(), 9);
        let mut new: Vec<Entity> = map.iter().map(|(_, new)| new).collect();
        new.sort();
        assert!(new.contains(&next), "{format:?}");
        for (saved, loaded) in map.iter() {
            if let Some(&Grudge(target)) = source.get::<Grudge>(saved) {
                assert_eq!(world.get::<Grudge>(loaded), Some(&Grudge(map.get(target).unwrap())), "{format:?}");
            }
        }
        world.check_invariants().unwrap();
    }
}

fn save(world: &World, format: Format) -> Vec<u8> {
    match format {
        Format::Json => world.save_json().unwrap().data.into_bytes(),
        Format::Ron => world.save_ron().unwrap().data.into_bytes(),
        Format::Binary => world.save_binary().unwrap().data,
    }
}

fn load_into(world: &mut World, format: Format, data: &[u8]) -> Result<EntityMap, archetable::data::LoadError> {
    match format {
        Format::Json => world.load_into_json(std::str::from_utf8(data).unwrap()),
        Format::Ron => world.load_into_ron(std::str::from_utf8(data).unwrap()),
        Format::Binary => world.load_into_binary(data),
    }
}

#[test]
fn a_panicking_hook_takes_a_prefab_spawn_back() {
    let (mut world, state, next) = populated();
    world.register_component_hooks::<Armor>().on_add(|_, _| panic!("Armor's hook panics"));
    let result = catch_unwind(AssertUnwindSafe(|| world.spawn_prefab(&prefabs(), "Knight")));
    assert!(result.is_err());
    assert_untouched(&mut world, &state, next, "prefab");
    assert_eq!(world.spawn_prefab(&prefabs(), "Ghost").unwrap(), next);
}
