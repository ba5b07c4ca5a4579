//! `CommandBuffer`: recording without a world, running later in order.

use archetable::prelude::*;
use archetable::{CommandBuffer, EntityBuilder};

#[derive(Component, Debug, PartialEq, Clone, Copy)]
struct Hp(i32);

#[derive(Component, Debug, PartialEq)]
struct Name(&'static str);

#[test]
fn records_inside_a_mutable_query_loop() {
    let mut world = World::new();
    let dead: Vec<Entity> = (0..3).map(|_| world.spawn(Hp(0))).collect();
    let alive = world.spawn(Hp(5));
    let mut buffer = CommandBuffer::new();
    for (e, mut hp) in world.query_mut::<(Entity, &mut Hp)>() {
        hp.0 -= 1;
        if hp.0 < 0 {
            buffer.despawn(e);
        }
    }
    assert_eq!(buffer.len(), 3);
    let report = buffer.run_on(&mut world);
    assert_eq!((report.applied(), report.skipped()), (3, 0));
    assert!(dead.iter().all(|&e| !world.contains(e)));
    assert_eq!(world.get::<Hp>(alive), Some(&Hp(4)));
    assert_eq!(world.len(), 1);
    assert!(buffer.is_empty());
}

#[test]
fn commands_apply_in_recording_order() {
    let mut world = World::new();
    let e = world.spawn(Hp(1));
    let mut buffer = CommandBuffer::new();
    buffer.insert(e, Hp(2));
    buffer.insert(e, Name("a"));
    buffer.remove::<Hp>(e);
    buffer.insert(e, Hp(3));
    buffer.add(move |world| world.get_mut::<Hp>(e).unwrap().0 *= 10);
    let report = buffer.run_on(&mut world);
    assert_eq!((report.applied(), report.skipped()), (5, 0));
    assert_eq!(world.get::<Hp>(e), Some(&Hp(30)));
    assert_eq!(world.get::<Name>(e), Some(&Name("a")));
}

#[test]
fn spawns_take_handles_when_run_as_world_spawn_would() {
    let mut world = World::new();
    let gone = world.spawn(());
    world.despawn(gone).unwrap();
    let mut twin = World::new();
    let gone_twin = twin.spawn(());
    twin.despawn(gone_twin).unwrap();

    let mut buffer = CommandBuffer::new();
    buffer.spawn(Hp(1));
    buffer.spawn((Hp(2), Name("b")));
    let mut builder = EntityBuilder::new();
    builder.add(Hp(3));
    buffer.spawn(builder.build());
    buffer.run_on(&mut world);

    let expected = [twin.spawn(Hp(1)), twin.spawn((Hp(2), Name("b"))), twin.spawn(Hp(3))];
    for (i, e) in expected.into_iter().enumerate() {
        assert_eq!(world.get::<Hp>(e), Some(&Hp(i as i32 + 1)));
    }
    assert_eq!(world.get::<Name>(expected[1]), Some(&Name("b")));
    assert_eq!(expected[0].index(), gone.index(), "the freed index comes back first");
}

#[test]
fn commands_on_gone_entities_are_skipped_and_reported() {
    let mut world = World::new();
    let e = world.spawn(Hp(1));
    let other = world.spawn(Hp(2));
    let mut buffer = CommandBuffer::new();
    buffer.despawn(e);
    buffer.insert(e, Hp(9));
    buffer.remove::<Name>(other);
    buffer.despawn(e);
    let report = buffer.run_on(&mut world);
    assert_eq!((report.applied(), report.skipped()), (1, 3));
    let kinds: Vec<(&str, Entity, &str)> =
        report.examples().iter().map(|s| (s.command, s.entity, s.reason.as_str())).collect();
    assert_eq!(kinds, [("insert", e, "entity gone"), ("remove", other, "entity gone"), ("despawn", e, "entity gone")]);
    assert_eq!(report.examples()[0].system, "");
    assert_eq!(world.get::<Hp>(other), Some(&Hp(2)));
}

#[test]
fn a_buffer_is_reusable_and_runs_on_any_world() {
    let mut buffer = CommandBuffer::new();
    let mut a = World::new();
    let mut b = World::new();
    buffer.spawn(Hp(1));
    assert_eq!(buffer.run_on(&mut a).applied(), 1);
    buffer.spawn(Hp(2));
    buffer.spawn(Hp(3));
    assert_eq!(buffer.run_on(&mut b).applied(), 2);
    assert_eq!(a.query::<&Hp>().map(|h| h.0).collect::<Vec<_>>(), [1]);
    let mut in_b: Vec<i32> = b.query::<&Hp>().map(|h| h.0).collect();
    in_b.sort();
    assert_eq!(in_b, [2, 3]);
    assert_eq!(buffer.run_on(&mut a).applied(), 0);
}

#[test]
fn clear_drops_commands_unrun_and_drops_their_values() {
    use std::sync::Arc;
    #[derive(Component)]
    struct Held(#[allow(dead_code)] Arc<()>);
    let token = Arc::new(());
    let mut buffer = CommandBuffer::new();
    buffer.spawn(Held(token.clone()));
    assert_eq!(Arc::strong_count(&token), 2);
    buffer.clear();
    assert_eq!(Arc::strong_count(&token), 1);
    let mut world = World::new();
    assert_eq!(buffer.run_on(&mut world).applied(), 0);
    assert!(world.is_empty());
}

#[test]
fn a_buffer_is_send_and_records_on_another_thread() {
    fn assert_send<T: Send>() {}
    assert_send::<CommandBuffer>();
    let mut world = World::new();
    let e = world.spawn(Hp(1));
    let mut buffer = std::thread::spawn(move || {
        let mut buffer = CommandBuffer::new();
        buffer.insert(e, Hp(7));
        buffer
    })
    .join()
    .unwrap();
    buffer.run_on(&mut world);
    assert_eq!(world.get::<Hp>(e), Some(&Hp(7)));
}

#[test]
fn hooks_run_for_buffered_spawns_and_despawns() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static ADDS: AtomicUsize = AtomicUsize::new(0);
    static REMOVES: AtomicUsize = AtomicUsize::new(0);
    #[derive(Component)]
    struct Tracked;
    let mut world = World::new();
    world
        .register_component_hooks::<Tracked>()
        .on_add(|_, _| {
            ADDS.fetch_add(1, Ordering::Relaxed);
        })
        .on_remove(|_, _| {
            REMOVES.fetch_add(1, Ordering::Relaxed);
        });
    let mut buffer = CommandBuffer::new();
    buffer.spawn(Tracked);
    buffer.spawn(Tracked);
    buffer.run_on(&mut world);
    let all: Vec<Entity> = world.query_filtered::<Entity, With<Tracked>>().collect();
    for e in all {
        buffer.despawn(e);
    }
    buffer.run_on(&mut world);
    assert_eq!((ADDS.load(Ordering::Relaxed), REMOVES.load(Ordering::Relaxed)), (2, 2));
}
