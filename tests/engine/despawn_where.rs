//! `World::despawn_where` and `World::retain`: despawning by filter or by
//! predicate, with the despawn hooks of each entity and an exact count.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use archetable::prelude::*;

#[derive(Component, Debug, PartialEq)]
struct Hp(i32);

#[derive(Component)]
struct Dead;

#[derive(Component)]
struct Boss;

#[derive(Component)]
struct Link(Entity);

#[derive(Component)]
struct Counted(#[allow(dead_code)] DropCount);

struct DropCount(Arc<AtomicUsize>);

impl Drop for DropCount {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[derive(Default)]
struct Log(Vec<String>);

fn sorted(mut v: Vec<Entity>) -> Vec<Entity> {
    v.sort();
    v
}

#[test]
fn despawn_where_takes_exactly_the_filtered_entities() {
    let drops = Arc::new(AtomicUsize::new(0));
    let mut world = World::new();
    let a = world.spawn((Hp(1), Dead, Counted(DropCount(drops.clone()))));
    let b = world.spawn((Hp(2), Dead, Boss));
    let c = world.spawn(Hp(3));
    let d = world.spawn((Dead, Counted(DropCount(drops.clone()))));
    assert_eq!(world.despawn_where::<(With<Dead>, Without<Boss>)>(), 2);
    assert_eq!(sorted(world.query::<Entity>().collect()), sorted(vec![b, c]));
    assert!(!world.contains(a) && !world.contains(d));
    assert_eq!(drops.load(Ordering::SeqCst), 2);
    assert_eq!(world.despawn_where::<With<Dead>>(), 1);
    assert_eq!(world.despawn_where::<With<Dead>>(), 0);
    assert_eq!(world.despawn_where::<()>(), 1);
    assert!(world.is_empty());
    world.check_invariants().unwrap();
}

#[test]
fn retain_keeps_what_the_predicate_accepts() {
    let mut world = World::new();
    let handles: Vec<Entity> = (-3..4).map(|hp| world.spawn(Hp(hp))).collect();
    let bare = world.spawn(());
    let mut seen = Vec::new();
    let despawned = world.retain(|entity| {
        seen.push(entity.id());
        entity.get::<Hp>().is_some_and(|hp| hp.0 > 0)
    });
    assert_eq!(despawned, 5);
    assert_eq!(sorted(seen), sorted(handles.iter().copied().chain([bare]).collect()));
    assert_eq!(sorted(world.query::<Entity>().collect()), handles[4..].to_vec());
    assert_eq!(world.retain(|_| true), 0);
    world.check_invariants().unwrap();
}

#[test]
fn hooks_run_and_entities_their_commands_despawn_are_not_counted() {
    let mut world = World::new();
    world.init_resource::<Log>();
    world.register_component_hooks::<Hp>().on_despawn(|w, e| w.resource_mut::<Log>().0.push(format!("despawn {e}")));
    // A dying entity takes its linked partner with it.
    world.register_component_hooks::<Link>().on_despawn(|w, e| {
        let partner = w.get::<Link>(e).unwrap().0;
        w.commands().despawn(partner);
    });
    // `a`'s table comes first, so `a` is despawned first.
    let nobody = Entity::from_bits(u64::MAX).unwrap();
    let a = world.spawn((Hp(0), Dead, Link(nobody)));
    let b = world.spawn((Hp(0), Dead));
    world.insert(a, Link(b)).unwrap();
    let c = world.spawn(Hp(5));
    let removed = world.despawn_where::<With<Dead>>();
    assert_eq!(removed, 1, "b went with a, through a's hook");
    assert_eq!(world.resource::<Log>().0, [format!("despawn {a}"), format!("despawn {b}")]);
    assert_eq!(world.query::<Entity>().collect::<Vec<_>>(), [c]);

    world.resource_mut::<Log>().0.clear();
    let d = world.spawn(Hp(-1));
    assert_eq!(world.retain(|entity| entity.get::<Hp>().unwrap().0 > 0), 1);
    assert_eq!(world.resource::<Log>().0, [format!("despawn {d}")]);
    world.check_invariants().unwrap();
}
