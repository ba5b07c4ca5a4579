//! Saves and loads by hand (`save_now`, `load_frame`): what comes back.

use archetable_core::{ChildOf, Children, Entity, Schedule, World};
use archetable_macros::Component;
use archetable_rollback::{RollbackDriver, RollbackRng};

#[derive(Component, Clone, Debug, PartialEq, Eq, Hash)]
#[component(clone)]
struct Hp(u32);

#[derive(Component, Clone, Debug, PartialEq, Eq, Hash)]
#[component(clone, storage = "sparse")]
struct Marked;

#[derive(Component, Clone, Debug, PartialEq, Eq)]
#[component(clone)]
struct Sprite(String);

fn driver(world: World) -> RollbackDriver<u8> {
    let mut driver = RollbackDriver::new(world, Schedule::new(), 60);
    driver.component::<Hp>().component::<Marked>().skip_component::<Sprite>().resource::<RollbackRng>();
    driver
}

#[test]
fn entities_despawned_and_spawned_after_a_save_come_back_as_they_were() {
    let mut world = World::new();
    let kept: Vec<Entity> = (0..6).map(|i| world.spawn((Hp(i), Sprite(format!("s{i}"))))).collect();
    world.insert(kept[2], Marked).unwrap();
    let parent = world.spawn(Hp(100));
    for &child in &kept[3..] {
        world.insert(child, ChildOf(parent)).unwrap();
    }
    world.insert_resource(RollbackRng::new(3));
    let mut driver = driver(world);
    let saved = driver.save_now().unwrap();
    let order: Vec<Entity> = driver.world().query::<Entity>().collect();

    // Frame 0 goes on: despawns, spawns, edits, a new child, a draw.
    let frame = |world: &mut World| {
        world.despawn(kept[1]).unwrap();
        world.despawn(kept[4]).unwrap();
        world.spawn((Hp(50), ChildOf(parent)))
    };
    let newcomer = frame(driver.world_mut());
    let after = driver.world().query::<Entity>().collect::<Vec<_>>();
    let world = driver.world_mut();
    world.get_mut::<Hp>(kept[0]).unwrap().0 = 99;
    world.remove::<Marked>(kept[2]).unwrap();
    world.insert(kept[5], Marked).unwrap();
    world.get_mut::<Sprite>(kept[0]).unwrap().0 = "drawn later".into();
    world.resource_mut::<RollbackRng>().next_u32();
    assert_ne!(driver.checksum(), saved);

    driver.load_frame(0).unwrap();
    let world = driver.world();
    assert_eq!(driver.checksum(), saved);
    assert_eq!(world.query::<Entity>().collect::<Vec<_>>(), order, "query order");
    for (i, &e) in kept.iter().enumerate() {
        assert_eq!(world.get::<Hp>(e), Some(&Hp(i as u32)));
    }
    assert!(world.has::<Marked>(kept[2]) && !world.has::<Marked>(kept[5]));
    assert!(!world.contains(newcomer));
    let children: Vec<Entity> = world.get::<Children>(parent).unwrap().iter().copied().collect();
    assert_eq!(children, kept[3..].to_vec());
    assert_eq!(world.resource::<RollbackRng>(), &RollbackRng::new(3));
    // Skipped: the present value stays.
    assert_eq!(world.get::<Sprite>(kept[0]), Some(&Sprite("drawn later".into())));
    // The frame simulated again hands out the same handles, in the same order.
    assert_eq!(frame(driver.world_mut()), newcomer);
    assert_eq!(driver.world().query::<Entity>().collect::<Vec<_>>(), after);
}
