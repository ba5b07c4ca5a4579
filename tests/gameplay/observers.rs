//! Observers: global and entity observers of user events, the order they
//! run in, when their commands apply, recursion and its limit, panics; and
//! the lifecycle events beside the hooks.

#![cfg(feature = "observers")]

use std::panic::{catch_unwind, AssertUnwindSafe};

use archetable::prelude::*;

#[derive(Default)]
struct Log(Vec<String>);

fn log(world: &World) -> Vec<String> {
    world.resource::<Log>().0.clone()
}

fn world_with_log() -> World {
    let mut world = World::new();
    world.init_resource::<Log>();
    world
}

#[derive(Debug)]
struct Explode {
    power: u32,
}

#[derive(Component, Debug, PartialEq)]
struct Hp(i32);

#[derive(Component, Debug, PartialEq)]
struct Debris;

#[test]
fn a_global_observer_sees_the_event_and_no_target() {
    let mut world = world_with_log();
    world.observe(|t: Trigger<Explode>, mut log: ResMut<Log>| {
        log.0.push(format!("boom {} {:?}", t.event().power, t.target()));
    });
    world.trigger(Explode { power: 3 });
    world.trigger(Explode { power: 5 });
    assert_eq!(log(&world), ["boom 3 None", "boom 5 None"]);
}

#[test]
fn a_trigger_without_observers_does_nothing() {
    let mut world = world_with_log();
    world.trigger(Explode { power: 1 });
    let e = world.spawn(Hp(1));
    world.trigger_targets(Explode { power: 1 }, e);
    assert!(log(&world).is_empty());
    assert_eq!(world.len(), 1);
}

#[test]
fn entity_observers_run_before_global_ones_each_in_registration_order() {
    let mut world = world_with_log();
    let a = world.spawn(Hp(1));
    let b = world.spawn(Hp(2));
    world.observe(|t: Trigger<Explode>, mut log: ResMut<Log>| log.0.push(format!("global1 {:?}", t.target())));
    world.entity_observe(a, |_: Trigger<Explode>, mut log: ResMut<Log>| log.0.push("a1".into())).unwrap();
    world.observe(|_: Trigger<Explode>, mut log: ResMut<Log>| log.0.push("global2".into()));
    world.entity_observe(b, |_: Trigger<Explode>, mut log: ResMut<Log>| log.0.push("b1".into())).unwrap();
    world.entity_observe(a, |_: Trigger<Explode>, mut log: ResMut<Log>| log.0.push("a2".into())).unwrap();

    world.trigger_targets(Explode { power: 1 }, [b, a]);
    assert_eq!(
        log(&world),
        [
            "b1".to_string(),
            format!("global1 Some({b})"),
            "global2".to_string(),
            "a1".to_string(),
            "a2".to_string(),
            format!("global1 Some({a})"),
            "global2".to_string(),
        ]
    );

    // Untargeted: only the global ones.
    world.resource_mut::<Log>().0.clear();
    world.trigger(Explode { power: 1 });
    assert_eq!(log(&world), ["global1 None", "global2"]);
}

#[test]
fn targets_can_be_one_entity_an_array_a_slice_or_a_vec() {
    let mut world = world_with_log();
    world.observe(|t: Trigger<Explode>, mut log: ResMut<Log>| {
        log.0.push(format!("{}", t.target().unwrap()));
    });
    let [a, b, c] = [world.spawn(()), world.spawn(()), world.spawn(())];
    world.trigger_targets(Explode { power: 0 }, a);
    world.trigger_targets(Explode { power: 0 }, [c, b]);
    world.trigger_targets(Explode { power: 0 }, &[b][..]);
    world.trigger_targets(Explode { power: 0 }, vec![a, a]);
    world.trigger_targets(Explode { power: 0 }, Vec::new());
    let want: Vec<String> = [a, c, b, b, a, a].iter().map(|e| e.to_string()).collect();
    assert_eq!(log(&world), want);
}

#[test]
fn an_observers_commands_apply_before_the_next_observer_runs() {
    let mut world = world_with_log();
    world.observe(|_: Trigger<Explode>, debris: Query<&Debris>, mut commands: Commands, mut log: ResMut<Log>| {
        log.0.push(format!("first sees {}", debris.iter().count()));
        commands.spawn(Debris);
        commands.spawn(Debris);
    });
    world.observe(|_: Trigger<Explode>, debris: Query<&Debris>, mut log: ResMut<Log>| {
        log.0.push(format!("second sees {}", debris.iter().count()));
    });
    world.trigger(Explode { power: 1 });
    world.trigger(Explode { power: 1 });
    assert_eq!(log(&world), ["first sees 0", "second sees 2", "first sees 2", "second sees 4"]);
    assert_eq!(world.query::<&Debris>().count(), 4);
}

#[test]
fn observers_take_the_parameters_of_systems() {
    #[derive(Default)]
    struct Scale(i32);
    let mut world = World::new();
    world.insert_resource(Scale(2));
    world.observe(|t: Trigger<Explode>, scale: Res<Scale>, mut hp: Query<&mut Hp>, mut runs: Local<u32>| {
        *runs += 1;
        for mut hp in hp.iter_mut() {
            hp.0 -= t.power as i32 * scale.0 * *runs as i32;
        }
    });
    let e = world.spawn(Hp(100));
    world.trigger(Explode { power: 1 }); // 100 - 2
    world.trigger(Explode { power: 1 }); // 98 - 4
    world.trigger(Explode { power: 3 }); // 94 - 18
    assert_eq!(world.get::<Hp>(e), Some(&Hp(76)));
}

#[test]
fn commands_trigger_when_they_apply_in_a_schedule() {
    let mut world = world_with_log();
    world.observe(|t: Trigger<Explode>, mut log: ResMut<Log>| {
        log.0.push(format!("observer {} {:?}", t.power, t.target().is_some()));
    });
    let target = world.spawn(Hp(1));
    let mut schedule = Schedule::single_threaded();
    schedule.add_system(move |mut commands: Commands, mut log: ResMut<Log>| {
        commands.trigger(Explode { power: 1 });
        commands.trigger_targets(Explode { power: 2 }, target);
        log.0.push("system ran".into());
    });
    schedule.run(&mut world);
    assert_eq!(log(&world), ["system ran", "observer 1 false", "observer 2 true"]);
}

#[test]
fn an_entity_observer_goes_away_with_its_entity() {
    let mut world = world_with_log();
    let a = world.spawn(Hp(1));
    let b = world.spawn(Hp(2));
    let on_a = world.entity_observe(a, |_: Trigger<Explode>, mut log: ResMut<Log>| log.0.push("a".into())).unwrap();
    let on_b = world.entity_observe(b, |_: Trigger<Explode>, mut log: ResMut<Log>| log.0.push("b".into())).unwrap();
    world.despawn(a).unwrap();
    assert!(!world.contains_observer(on_a));
    assert!(world.contains_observer(on_b));
    world.trigger_targets(Explode { power: 0 }, [a, b]);
    assert_eq!(log(&world), ["b"]);

    // A new entity in `a`'s slot does not inherit its observers.
    let c = world.spawn(Hp(3));
    world.trigger_targets(Explode { power: 0 }, c);
    assert_eq!(log(&world), ["b"]);

    world.clear();
    assert!(!world.contains_observer(on_b));
    assert_eq!(world.entity_observe(b, |_: Trigger<Explode>| {}), Err(EntityError::NoSuchEntity(b)));
}

#[test]
fn entity_commands_attach_an_observer() {
    let mut world = world_with_log();
    let mut schedule = Schedule::single_threaded();
    schedule.add_system(|mut commands: Commands| {
        commands.spawn(Hp(5)).observe(|t: Trigger<Explode>, hp: Query<&Hp>, mut log: ResMut<Log>| {
            log.0.push(format!("hp {}", hp.get(t.target().unwrap()).unwrap().0));
        });
    });
    schedule.run(&mut world);
    let e = world.query::<(Entity, &Hp)>().next().unwrap().0;
    world.trigger_targets(Explode { power: 0 }, e);
    world.trigger(Explode { power: 0 });
    assert_eq!(log(&world), ["hp 5"]);
}

#[test]
fn removed_observers_stop_running() {
    let mut world = world_with_log();
    let first = world.observe(|_: Trigger<Explode>, mut log: ResMut<Log>| log.0.push("first".into()));
    world.observe(|_: Trigger<Explode>, mut log: ResMut<Log>| log.0.push("second".into()));
    world.trigger(Explode { power: 0 });
    assert!(world.remove_observer(first));
    assert!(!world.remove_observer(first));
    world.trigger(Explode { power: 0 });
    assert_eq!(log(&world), ["first", "second", "second"]);
}

/// A chain reaction: each explosion sets off the next, weaker one, from the
/// observer's commands.
struct Chain(u32);

#[test]
fn an_observer_that_triggers_again_recurses_depth_first() {
    let mut world = world_with_log();
    world.observe(|t: Trigger<Chain>, mut commands: Commands, mut log: ResMut<Log>| {
        log.0.push(format!("enter {}", t.0));
        if t.0 > 0 {
            commands.trigger(Chain(t.0 - 1));
        }
    });
    world.observe(|t: Trigger<Chain>, mut log: ResMut<Log>| log.0.push(format!("after {}", t.0)));
    world.trigger(Chain(2));
    // The first observer's commands (the nested trigger) apply before the
    // second observer runs.
    assert_eq!(log(&world), ["enter 2", "enter 1", "enter 0", "after 0", "after 1", "after 2"]);
}

#[test]
fn recursion_stops_at_the_depth_limit_with_a_panic_naming_the_event() {
    #[derive(Default)]
    struct Runs(u32);
    let mut world = World::new();
    world.init_resource::<Runs>();
    world.observe(|t: Trigger<Chain>, mut commands: Commands, mut runs: ResMut<Runs>| {
        runs.0 += 1;
        if t.0 > 0 {
            commands.trigger(Chain(t.0 - 1));
        }
    });

    // 64 nested triggers are fine.
    world.trigger(Chain(World::MAX_TRIGGER_DEPTH - 1));
    assert_eq!(world.resource::<Runs>().0, 64);

    // The 65th panics, naming the event type.
    world.resource_mut::<Runs>().0 = 0;
    let panic = catch_unwind(AssertUnwindSafe(|| world.trigger(Chain(u32::MAX)))).unwrap_err();
    let message = panic.downcast_ref::<String>().cloned().unwrap_or_default();
    assert_eq!(
        message,
        "triggering `Chain` nested 64 triggers deep: an observer keeps triggering events (its own, or one whose \
         observers trigger it back); World::MAX_TRIGGER_DEPTH is 64"
    );
    assert_eq!(world.resource::<Runs>().0, 64);

    // The world is consistent and the observer still registered: the next
    // trigger starts from depth zero again.
    world.resource_mut::<Runs>().0 = 0;
    world.trigger(Chain(3));
    assert_eq!(world.resource::<Runs>().0, 4);
    world.check_invariants().unwrap();
}

#[test]
fn an_observer_whose_parameters_alias_is_refused_at_registration() {
    let mut world = World::new();
    let conflict = world.try_observe(|_: Trigger<Explode>, _: Query<&mut Hp>, _: Query<&Hp>| {}).unwrap_err();
    assert_eq!(conflict.item, "component `Hp`");
    assert!(conflict.to_string().starts_with("error[E0002]: system `"), "{conflict}");
    let panic = catch_unwind(AssertUnwindSafe(|| {
        world.observe(|_: Trigger<Explode>, _: ResMut<Log>, _: Res<Log>| {});
    }))
    .unwrap_err();
    let message = panic.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(message.contains("writes resource `Log`"), "{message}");

    // Disjoint queries are fine, as for systems.
    world.observe(|_: Trigger<Explode>, _: Query<&mut Hp, With<Debris>>, _: Query<&Hp, Without<Debris>>| {});
}

#[test]
fn a_panicking_observer_leaves_the_world_consistent() {
    let mut world = world_with_log();
    world.observe(|_: Trigger<Explode>, mut commands: Commands, mut log: ResMut<Log>| {
        log.0.push("before".into());
        commands.spawn(Debris);
    });
    world.observe(|t: Trigger<Explode>, mut commands: Commands| {
        commands.spawn(Hp(-1));
        if t.power > 9 {
            panic!("too strong");
        }
    });
    world.observe(|_: Trigger<Explode>, mut log: ResMut<Log>| log.0.push("after".into()));

    let panic = catch_unwind(AssertUnwindSafe(|| world.trigger(Explode { power: 10 }))).unwrap_err();
    assert_eq!(panic.downcast_ref::<&str>(), Some(&"too strong"));
    // The first observer's work stays; the panicking one's commands are
    // dropped; the third did not run.
    assert_eq!(log(&world), ["before"]);
    assert_eq!(world.query::<&Debris>().count(), 1);
    assert_eq!(world.query::<&Hp>().count(), 0);
    world.check_invariants().unwrap();

    // All three still run on the next trigger, and the dropped command does
    // not come back.
    world.trigger(Explode { power: 1 });
    assert_eq!(log(&world), ["before", "before", "after"]);
    assert_eq!(world.query::<&Hp>().map(|hp| hp.0).collect::<Vec<_>>(), [-1]);
    assert_eq!(world.query::<&Debris>().count(), 2);
}

// ---------------------------------------------------------------------
// Lifecycle events

#[derive(Component, Debug, PartialEq)]
struct A(u32);

#[derive(Component, Debug, PartialEq)]
struct B(u32);

#[derive(Component, Debug, PartialEq)]
struct C;

/// Logs every hook and every lifecycle observer of `T` under `name`.
fn watch<T: Component>(world: &mut World, name: &'static str) {
    world
        .register_component_hooks::<T>()
        .on_add(move |w, _| w.resource_mut::<Log>().0.push(format!("hook add {name}")))
        .on_insert(move |w, _| w.resource_mut::<Log>().0.push(format!("hook insert {name}")))
        .on_replace(move |w, _| w.resource_mut::<Log>().0.push(format!("hook replace {name}")))
        .on_remove(move |w, _| w.resource_mut::<Log>().0.push(format!("hook remove {name}")))
        .on_despawn(move |w, _| w.resource_mut::<Log>().0.push(format!("hook despawn {name}")));
    world.observe(move |_: Trigger<OnAdd<T>>, mut log: ResMut<Log>| log.0.push(format!("observer add {name}")));
    world.observe(move |_: Trigger<OnInsert<T>>, mut log: ResMut<Log>| log.0.push(format!("observer insert {name}")));
    world.observe(move |_: Trigger<OnReplace<T>>, mut log: ResMut<Log>| log.0.push(format!("observer replace {name}")));
    world.observe(move |_: Trigger<OnRemove<T>>, mut log: ResMut<Log>| log.0.push(format!("observer remove {name}")));
    world.observe(move |_: Trigger<OnDespawn<T>>, mut log: ResMut<Log>| log.0.push(format!("observer despawn {name}")));
}

fn take_log(world: &mut World) -> Vec<String> {
    std::mem::take(&mut world.resource_mut::<Log>().0)
}

#[test]
fn lifecycle_observers_run_after_the_hooks_of_each_component() {
    let mut world = world_with_log();
    watch::<A>(&mut world, "A");
    watch::<B>(&mut world, "B");
    watch::<C>(&mut world, "C");

    let e = world.spawn((A(1), B(1)));
    assert_eq!(
        take_log(&mut world),
        [
            "hook add A",
            "observer add A",
            "hook add B",
            "observer add B",
            "hook insert A",
            "observer insert A",
            "hook insert B",
            "observer insert B",
        ]
    );

    world.insert(e, (A(2), C)).unwrap();
    assert_eq!(
        take_log(&mut world),
        [
            "hook replace A",
            "observer replace A",
            "hook add C",
            "observer add C",
            "hook insert A",
            "observer insert A",
            "hook insert C",
            "observer insert C",
        ]
    );

    world.remove::<(C, B)>(e).unwrap();
    assert_eq!(
        take_log(&mut world),
        [
            "hook replace C",
            "observer replace C",
            "hook replace B",
            "observer replace B",
            "hook remove C",
            "observer remove C",
            "hook remove B",
            "observer remove B"
        ]
    );

    world.insert(e, B(3)).unwrap();
    take_log(&mut world);
    world.despawn(e).unwrap();
    assert_eq!(
        take_log(&mut world),
        [
            "hook despawn A",
            "observer despawn A",
            "hook despawn B",
            "observer despawn B",
            "hook replace A",
            "observer replace A",
            "hook replace B",
            "observer replace B",
            "hook remove A",
            "observer remove A",
            "hook remove B",
            "observer remove B",
        ]
    );
}

#[test]
fn lifecycle_observers_see_the_entity_and_its_values() {
    let mut world = world_with_log();
    world.observe(|t: Trigger<OnAdd<A>>, a: Query<&A>, mut log: ResMut<Log>| {
        let e = t.target().unwrap();
        log.0.push(format!("add {e} {}", a.get(e).unwrap().0));
    });
    world.observe(|t: Trigger<OnRemove<A>>, a: Query<&A>, mut log: ResMut<Log>| {
        let e = t.target().unwrap();
        log.0.push(format!("remove {e} {}", a.get(e).unwrap().0));
    });
    let e = world.spawn(A(7));
    world.insert(e, A(8)).unwrap();
    let f = world.spawn((B(0), A(9)));
    world.clear();
    assert_eq!(
        take_log(&mut world),
        [format!("add {e} 7"), format!("add {f} 9"), format!("remove {e} 8"), format!("remove {f} 9")]
    );
}

#[test]
fn a_lifecycle_observers_commands_apply_right_after_the_operation() {
    let mut world = world_with_log();
    world.observe(|t: Trigger<OnAdd<A>>, b: Query<&B>, mut commands: Commands, mut log: ResMut<Log>| {
        let e = t.target().unwrap();
        log.0.push(format!("has B during the spawn: {}", b.contains(e)));
        commands.entity(e).insert(C);
    });
    world.observe(|_: Trigger<OnAdd<C>>, mut log: ResMut<Log>| log.0.push("C added".into()));
    let e = world.spawn((A(1), B(1)));
    assert!(world.has::<C>(e));
    assert_eq!(take_log(&mut world), ["has B during the spawn: true", "C added"]);
}

#[test]
fn an_entity_observer_sees_its_own_entitys_lifecycle_events() {
    let mut world = world_with_log();
    let e = world.spawn(A(1));
    let other = world.spawn(A(2));
    let id = world
        .entity_observe(e, |t: Trigger<OnRemove<A>>, mut log: ResMut<Log>| {
            log.0.push(format!("own remove {}", t.target().unwrap()))
        })
        .unwrap();
    world.observe(|t: Trigger<OnRemove<A>>, mut log: ResMut<Log>| {
        log.0.push(format!("global remove {}", t.target().unwrap()))
    });
    world.despawn(other).unwrap();
    world.despawn(e).unwrap();
    assert_eq!(
        take_log(&mut world),
        [format!("global remove {other}"), format!("own remove {e}"), format!("global remove {e}")]
    );
    assert!(!world.contains_observer(id));
}

#[test]
fn a_lifecycle_observer_of_one_type_ignores_the_others() {
    #[derive(Default)]
    struct Count(u32);
    let mut world = World::new();
    world.init_resource::<Count>();
    world.observe(|_: Trigger<OnAdd<B>>, mut n: ResMut<Count>| n.0 += 1);
    world.spawn(A(0));
    world.spawn((A(0), C));
    let e = world.spawn(B(0));
    world.insert(e, B(1)).unwrap();
    world.spawn_batch((0..3).map(B)).for_each(drop);
    assert_eq!(world.resource::<Count>().0, 4);
}

#[test]
fn an_observer_registered_during_a_trigger_first_runs_on_the_next_one() {
    let mut world = world_with_log();
    world.observe(|_: Trigger<Explode>, mut commands: Commands, mut log: ResMut<Log>, mut done: Local<bool>| {
        log.0.push("first".into());
        if !std::mem::replace(&mut *done, true) {
            commands.add(|world: &mut World| {
                world.observe(|_: Trigger<Explode>, mut log: ResMut<Log>| log.0.push("late".into()));
            });
        }
    });
    world.trigger(Explode { power: 0 });
    assert_eq!(take_log(&mut world), ["first"]);
    world.trigger(Explode { power: 0 });
    assert_eq!(take_log(&mut world), ["first", "late"]);
}

#[test]
fn an_entity_observer_that_despawns_its_entity_finishes_and_goes() {
    let mut world = world_with_log();
    let e = world.spawn(Hp(1));
    let own = world
        .entity_observe(e, |t: Trigger<Explode>, mut commands: Commands, mut log: ResMut<Log>| {
            log.0.push("own".into());
            commands.despawn(t.target().unwrap());
        })
        .unwrap();
    world.observe(|t: Trigger<Explode>, hp: Query<&Hp>, mut log: ResMut<Log>| {
        log.0.push(format!("global sees it alive: {}", hp.contains(t.target().unwrap())));
    });
    world.trigger_targets(Explode { power: 0 }, [e, e]);
    assert_eq!(take_log(&mut world), ["own", "global sees it alive: false", "global sees it alive: false"]);
    assert!(!world.contains_observer(own));
}
