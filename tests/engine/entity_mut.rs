//! `World::entity_mut` and `EntityWorldMut`: chained inserts, removals and
//! reads on one entity, with hooks and change ticks exactly as through the
//! `World` methods, and a defined answer once a hook despawns the entity.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use archetable::prelude::*;
use archetable::Tick;

#[derive(Component, Debug, PartialEq)]
#[component(track_changes)]
struct Hp(u32);

#[derive(Component, Debug, PartialEq)]
struct Armor(u32);

#[derive(Component, Debug, PartialEq)]
struct Poison;

#[derive(Component)]
struct Counted(#[allow(dead_code)] DropCount);

/// Counts drops in a shared counter.
struct DropCount(Arc<AtomicUsize>);

impl Drop for DropCount {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[derive(Default)]
struct Log(Vec<String>);

/// Logs every hook of `T` under `name`.
fn log_hooks<T: Component>(world: &mut World, name: &'static str) {
    world.init_resource::<Log>();
    world
        .register_component_hooks::<T>()
        .on_add(move |w, e| w.resource_mut::<Log>().0.push(format!("add {name} {e}")))
        .on_insert(move |w, e| w.resource_mut::<Log>().0.push(format!("insert {name} {e}")))
        .on_replace(move |w, e| w.resource_mut::<Log>().0.push(format!("replace {name} {e}")))
        .on_remove(move |w, e| w.resource_mut::<Log>().0.push(format!("remove {name} {e}")))
        .on_despawn(move |w, e| w.resource_mut::<Log>().0.push(format!("despawn {name} {e}")));
}

#[test]
fn chained_calls_give_the_components_written() {
    let mut world = World::new();
    let e = world.spawn(Hp(10));
    let other = world.spawn(Hp(1));
    let mut entity = world.entity_mut(e).unwrap();
    assert_eq!(entity.id(), e);
    entity.insert(Armor(3)).insert((Poison, Hp(8)));
    assert_eq!(entity.get::<Hp>(), Some(&Hp(8)));
    assert_eq!(entity.get::<Armor>(), Some(&Armor(3)));
    assert!(entity.has::<Poison>());
    entity.get_mut::<Hp>().unwrap().0 -= 2;
    assert_eq!(entity.remove::<(Armor, Poison)>(), Ok((Armor(3), Poison)));
    assert_eq!(
        entity.remove::<Armor>(),
        Err(ComponentError::MissingComponent { entity: e, component: std::any::type_name::<Armor>() })
    );
    assert!(!entity.has::<Armor>() && !entity.has::<Poison>());
    assert_eq!(entity.get::<Hp>(), Some(&Hp(6)));
    let names: Vec<_> = entity.entity_ref().unwrap().component_names().collect();
    assert_eq!(names, [std::any::type_name::<Hp>()]);
    entity.despawn().unwrap();
    assert!(!world.contains(e));
    assert_eq!(world.get::<Hp>(other), Some(&Hp(1)));
    world.check_invariants().unwrap();
}

#[test]
fn a_stale_handle_is_refused_and_a_reserved_one_is_made_live() {
    let mut world = World::new();
    let e = world.spawn(Hp(1));
    world.despawn(e).unwrap();
    assert_eq!(world.entity_mut(e).err(), Some(EntityError::NoSuchEntity(e)));
    let reserved = world.reserve_entity();
    world.entity_mut(reserved).unwrap().insert(Armor(4));
    assert_eq!(world.get::<Armor>(reserved), Some(&Armor(4)));
    world.check_invariants().unwrap();
}

/// Runs the same steps through the `World` methods or through an
/// `EntityWorldMut`, and returns the hook log and the ticks of `Hp`.
fn script(through_handle: bool) -> (Vec<String>, Option<(Tick, Tick)>, Vec<u32>) {
    let mut world = World::new();
    log_hooks::<Hp>(&mut world, "hp");
    log_hooks::<Armor>(&mut world, "armor");
    log_hooks::<Poison>(&mut world, "poison");
    let e = world.spawn(Hp(5));
    world.advance_change_tick(3);
    if through_handle {
        let mut entity = world.entity_mut(e).unwrap();
        entity.insert((Armor(1), Hp(6)));
        entity.insert(Poison);
        entity.get_mut::<Hp>().unwrap().0 += 1;
        entity.remove::<Armor>().unwrap();
        entity.discard::<Poison>().unwrap();
    } else {
        world.insert(e, (Armor(1), Hp(6))).unwrap();
        world.insert(e, Poison).unwrap();
        world.get_mut::<Hp>(e).unwrap().0 += 1;
        world.remove::<Armor>(e).unwrap();
        world.discard::<Poison>(e).unwrap();
    }
    let ticks = world.component_ticks::<Hp>(e).map(|t| (t.added, t.changed));
    let hp = world.query::<&Hp>().map(|hp| hp.0).collect();
    if through_handle {
        world.entity_mut(e).unwrap().despawn().unwrap();
    } else {
        world.despawn(e).unwrap();
    }
    (world.resource::<Log>().0.clone(), ticks, hp)
}

#[test]
fn hooks_and_change_ticks_are_those_of_the_world_methods() {
    let (log, ticks, hp) = script(true);
    assert_eq!(script(false), (log.clone(), ticks, hp.clone()));
    assert_eq!(hp, [7]);
    let e = "0v1";
    let expected: Vec<String> = [
        "add hp",
        "insert hp",
        "replace hp",
        "add armor",
        "insert armor",
        "insert hp",
        "add poison",
        "insert poison",
        "replace armor",
        "remove armor",
        "replace poison",
        "remove poison",
        "despawn hp",
        "replace hp",
        "remove hp",
    ]
    .iter()
    .map(|s| format!("{s} {e}"))
    .collect();
    assert_eq!(log, expected);
    let (added, changed) = ticks.unwrap();
    assert!(changed.get() > added.get(), "the write through get_mut counts as a change");
}

#[test]
fn get_mut_marks_the_value_changed() {
    let mut world = World::new();
    let e = world.spawn(Hp(1));
    let untouched = world.spawn(Hp(2));
    let mut changed = QueryState::<Entity, Changed<Hp>>::new(&mut world);
    assert_eq!(changed.iter(&world).count(), 2);
    assert_eq!(changed.iter(&world).count(), 0);
    world.entity_mut(e).unwrap().get_mut::<Hp>().unwrap().0 = 9;
    assert_eq!(changed.iter(&world).collect::<Vec<_>>(), [e]);
    let _ = untouched;
}

/// A hook that despawns its entity through its commands when `Poison` is
/// written to it.
fn poison_despawns(world: &mut World) {
    log_hooks::<Hp>(world, "hp");
    world.register_component_hooks::<Poison>().on_insert(|w, e| {
        w.resource_mut::<Log>().0.push(format!("poisoned {e}"));
        w.commands().despawn(e);
    });
}

#[test]
fn after_a_hook_despawns_the_entity_the_handle_answers_as_a_stale_one() {
    let mut world = World::new();
    poison_despawns(&mut world);
    let drops = Arc::new(AtomicUsize::new(0));
    let e = world.spawn((Hp(3), Counted(DropCount(drops.clone()))));
    let mut entity = world.entity_mut(e).unwrap();
    entity.insert(Poison);
    assert!(!entity.is_alive());
    assert_eq!(drops.load(Ordering::SeqCst), 1, "the despawn dropped the entity's values");
    assert_eq!(entity.id(), e);
    assert_eq!(entity.get::<Hp>(), None);
    assert!(entity.get_mut::<Hp>().is_none());
    assert!(!entity.has::<Hp>());
    assert!(entity.entity_ref().is_none());
    assert_eq!(entity.remove::<Hp>(), Err(ComponentError::NoSuchEntity(e)));
    assert_eq!(entity.discard::<Hp>().err(), Some(ComponentError::NoSuchEntity(e)));
    let second = DropCount(drops.clone());
    assert_eq!(entity.try_insert(Counted(second)).err(), Some(EntityError::NoSuchEntity(e)));
    assert_eq!(drops.load(Ordering::SeqCst), 2, "the refused bundle is dropped");
    let panic = catch_unwind(AssertUnwindSafe(|| {
        entity.insert(Armor(1));
    }))
    .unwrap_err();
    let message = panic.downcast_ref::<String>().unwrap();
    assert!(message.contains(&format!("entity {e} no longer exists")), "{message}");
    assert!(message.contains("try_insert"), "{message}");
    assert_eq!(entity.despawn(), Err(EntityError::NoSuchEntity(e)));
    assert_eq!(
        world.resource::<Log>().0,
        [
            format!("add hp {e}"),
            format!("insert hp {e}"),
            format!("poisoned {e}"),
            format!("despawn hp {e}"),
            format!("replace hp {e}"),
            format!("remove hp {e}"),
        ]
    );
    assert!(world.is_empty());
    world.check_invariants().unwrap();
    // The slot's next entity is not reached through the stale handle.
    let next = world.spawn(Hp(4));
    assert_eq!(next.index(), e.index());
    assert_eq!(world.entity_mut(e).err(), Some(EntityError::NoSuchEntity(e)));
}

#[test]
fn removed_values_go_to_the_caller_and_discarded_ones_are_dropped_once() {
    let drops = Arc::new(AtomicUsize::new(0));
    let mut world = World::new();
    let e = world.spawn((Hp(1), Counted(DropCount(drops.clone()))));
    let mut entity = world.entity_mut(e).unwrap();
    let taken = entity.remove::<Counted>().unwrap();
    assert_eq!(drops.load(Ordering::SeqCst), 0);
    entity.insert(taken);
    entity.discard::<Counted>().unwrap();
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    entity.insert(Counted(DropCount(drops.clone()))).insert(Counted(DropCount(drops.clone())));
    assert_eq!(drops.load(Ordering::SeqCst), 2, "the overwritten value is dropped");
    drop(world);
    assert_eq!(drops.load(Ordering::SeqCst), 3);
}
