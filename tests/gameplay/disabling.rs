//! Disabled entities in the layers above one operation: systems (on one
//! thread and in parallel), observers, hierarchies and saves.
#![cfg(all(feature = "serde", feature = "observers"))]

use std::time::Duration;

use archetable::prelude::*;
use serde::{Deserialize, Serialize};

#[derive(Component, Debug, PartialEq, Clone, Copy, Default, Serialize, Deserialize)]
struct Hp(u32);

#[derive(Component, Debug, PartialEq, Clone, Copy, Default, Serialize, Deserialize)]
struct Speed(u32);

#[derive(Default)]
struct Log(Vec<String>);

fn regen(mut q: Query<&mut Hp>) {
    q.par_for_each_mut(|mut hp| hp.0 += 1);
}

fn slow_disabled(mut q: Query<&mut Speed, With<Disabled>>) {
    for mut speed in q.iter_mut() {
        speed.0 = 0;
    }
}

fn count_visible(q: Query<(Entity, &Hp)>, mut log: ResMut<Log>) {
    let mut seen: Vec<String> = q.iter().map(|(e, hp)| format!("{e}={}", hp.0)).collect();
    seen.sort();
    log.0.push(seen.join(","));
}

/// Each entity's values and whether it is disabled, in handle order.
type Rows = Vec<(Entity, Hp, Speed, bool)>;

/// What sees every entity, disabled or not.
type EveryHp<'w, 's> = Query<'w, 's, &'static Hp, Or<(With<Disabled>, Without<Disabled>)>>;

/// Every third entity disabled, then three frames of systems.
fn run(mut schedule: Schedule) -> (Rows, Vec<String>) {
    let mut world = World::new();
    world.init_resource::<Log>();
    for i in 0..300 {
        let e = world.spawn((Hp(i), Speed(i + 1)));
        if i.is_multiple_of(3) {
            world.disable(e).unwrap();
        }
    }
    schedule.add_system(regen);
    schedule.add_system(slow_disabled);
    schedule.add_system(count_visible);
    for _ in 0..3 {
        schedule.run(&mut world);
    }
    let mut all: Vec<(Entity, Hp, Speed, bool)> = world
        .query::<(Entity, &Hp, &Speed, Has<Disabled>)>()
        .map(|(e, hp, speed, disabled)| (e, *hp, *speed, disabled))
        .collect();
    all.sort_by_key(|row| row.0);
    (all, world.resource::<Log>().0.clone())
}

#[test]
fn systems_skip_disabled_entities_the_same_on_one_thread_and_in_parallel() {
    let (expected, log) = run(Schedule::single_threaded());
    assert_eq!(expected.len(), 300);
    for (i, (_, hp, speed, disabled)) in expected.iter().enumerate() {
        let i = i as u32;
        if i.is_multiple_of(3) {
            assert_eq!((hp.0, speed.0, *disabled), (i, 0, true), "entity {i}");
        } else {
            assert_eq!((hp.0, speed.0, *disabled), (i + 3, i + 1, false), "entity {i}");
        }
    }
    assert_eq!(log.len(), 3);
    assert_eq!(log[0].split(',').count(), 200);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    for attempt in 0..3 {
        let mut schedule = Schedule::new();
        schedule.set_parallel_threshold(Duration::ZERO);
        let (got, got_log) = pool.install(|| run(schedule));
        assert_eq!(got, expected, "run {attempt}");
        assert_eq!(got_log, log, "run {attempt}");
    }
}

#[test]
fn observers_of_other_components_do_not_fire_on_disable_and_enable() {
    let mut world = World::new();
    world.init_resource::<Log>();
    world.observe(|t: Trigger<OnInsert<Hp>>, mut log: ResMut<Log>| {
        log.0.push(format!("insert Hp {}", t.target().unwrap()))
    });
    world.observe(|t: Trigger<OnRemove<Hp>>, mut log: ResMut<Log>| {
        log.0.push(format!("remove Hp {}", t.target().unwrap()))
    });
    world.observe(|t: Trigger<OnAdd<Disabled>>, mut log: ResMut<Log>| {
        log.0.push(format!("disabled {}", t.target().unwrap()))
    });
    world.observe(|t: Trigger<OnRemove<Disabled>>, mut log: ResMut<Log>| {
        log.0.push(format!("enabled {}", t.target().unwrap()))
    });
    let e = world.spawn(Hp(1));
    world.resource_mut::<Log>().0.clear();
    world.disable(e).unwrap();
    world.enable(e).unwrap();
    assert_eq!(world.resource::<Log>().0, [format!("disabled {e}"), format!("enabled {e}")]);
    // While disabled, its own operations fire as usual, and events aimed
    // at it reach its observers: handles reach a disabled entity.
    world.disable(e).unwrap();
    world.resource_mut::<Log>().0.clear();
    world.remove::<Hp>(e).unwrap();
    assert_eq!(world.resource::<Log>().0, [format!("remove Hp {e}")]);
}

#[test]
fn an_observer_that_reads_through_a_query_does_not_see_the_disabled_target() {
    struct Ping;
    let mut world = World::new();
    world.init_resource::<Log>();
    world.observe(|t: Trigger<Ping>, hp: Query<&Hp>, all: EveryHp, mut log: ResMut<Log>| {
        let target = t.target().unwrap();
        log.0.push(format!("{} {}", hp.get(target).is_ok(), all.get(target).map(|hp| hp.0).unwrap_or(0)));
    });
    let e = world.spawn(Hp(4));
    world.trigger_targets(Ping, e);
    world.disable(e).unwrap();
    world.trigger_targets(Ping, e);
    assert_eq!(world.resource::<Log>().0, ["true 4", "false 4"]);
}

#[test]
fn disabling_a_parent_leaves_the_children_unless_recursive() {
    let mut world = World::new();
    let root = world.spawn(Hp(0));
    let child = world.spawn((Hp(1), ChildOf(root)));
    let grandchild = world.spawn((Hp(2), ChildOf(child)));
    let other = world.spawn(Hp(3));
    world.disable(root).unwrap();
    assert_eq!(world.query::<&Hp>().count(), 3);
    assert_eq!(world.children(root), [child], "the tree is kept");
    world.enable(root).unwrap();

    assert_eq!(world.disable_recursive(child), Ok(2));
    let mut visible: Vec<Entity> = world.query_filtered::<Entity, With<Hp>>().collect();
    visible.sort();
    assert_eq!(visible, [root, other]);
    assert!(world.is_disabled(grandchild));
    assert_eq!(world.parent(grandchild), Some(child), "links stay");
    assert_eq!(world.enable_recursive(root), Ok(3));
    assert_eq!(world.query::<&Hp>().count(), 4);
    world.despawn(other).unwrap();
    assert_eq!(world.disable_recursive(other), Err(EntityError::NoSuchEntity(other)));
    assert_eq!(world.enable_recursive(other), Err(EntityError::NoSuchEntity(other)));

    // Through commands, and a dead entity is a skipped command.
    let mut schedule = Schedule::single_threaded();
    schedule.add_system(move |mut commands: Commands| {
        commands.entity(root).disable_recursive();
        commands.entity(other).disable_recursive();
    });
    schedule.run(&mut world);
    assert_eq!(schedule.command_report().skipped(), 1);
    assert_eq!(world.query::<&Hp>().count(), 0);
    let mut schedule = Schedule::single_threaded();
    schedule.add_system(move |mut commands: Commands| {
        commands.entity(child).enable_recursive();
    });
    schedule.run(&mut world);
    let mut visible: Vec<Entity> = world.query_filtered::<Entity, With<Hp>>().collect();
    visible.sort();
    assert_eq!(visible, [child, grandchild]);
}

#[test]
fn despawning_a_disabled_parent_recursively_takes_every_child() {
    let mut world = World::new();
    let root = world.spawn(Hp(0));
    let child = world.spawn((Hp(1), ChildOf(root)));
    world.disable_recursive(root).unwrap();
    assert_eq!(world.despawn_recursive(root), Ok(2));
    assert!(!world.contains(child));
    assert!(world.is_empty());
}

#[test]
fn saves_keep_disabled_entities_disabled() {
    let mut world = World::new();
    world.register_serde::<Hp>("Hp").register_serde::<Speed>("Speed");
    let a = world.spawn((Hp(1), Speed(1)));
    let b = world.spawn((Hp(2), Speed(2)));
    let c = world.spawn((Hp(3), ChildOf(b)));
    world.disable_recursive(b).unwrap();
    let registry = world.serde_registry();
    let json = world.save_json().unwrap();
    assert!(json.skipped.is_empty(), "{:?}", json.skipped);
    assert!(json.data.contains("\"Disabled\""), "{}", json.data);
    let ron = world.save_ron().unwrap();
    let binary = world.save_binary().unwrap();
    for loaded in [
        World::load_json(&registry, &json.data).unwrap(),
        World::load_ron(&registry, &ron.data).unwrap(),
        World::load_binary(&registry, &binary.data).unwrap(),
    ] {
        assert_eq!(loaded.query::<Entity>().collect::<Vec<_>>(), [a]);
        assert!(loaded.is_disabled(b) && loaded.is_disabled(c));
        assert_eq!(loaded.get::<Hp>(c), Some(&Hp(3)));
        assert_eq!(loaded.parent(c), Some(b));
    }
    // Merged into a populated world: new handles, still disabled.
    let mut other = World::new();
    other.register_serde::<Hp>("Hp").register_serde::<Speed>("Speed");
    other.spawn(Hp(10));
    let map = other.load_into_json(&json.data).unwrap();
    let (b2, c2) = (map.get(b).unwrap(), map.get(c).unwrap());
    assert!(other.is_disabled(b2) && other.is_disabled(c2));
    assert_eq!(other.query::<&Hp>().map(|hp| hp.0).collect::<Vec<_>>(), [10, 1]);
}

#[test]
fn entity_commands_disable_and_enable_when_the_commands_apply() {
    let mut world = World::new();
    let root = world.spawn(Hp(0));
    let child = world.spawn((Hp(1), ChildOf(root)));
    let gone = world.spawn(Hp(2));
    world.despawn(gone).unwrap();
    let mut queue = CommandQueue::default();
    {
        let mut commands = Commands::new(&mut queue, &world);
        commands.entity(root).disable().insert(Speed(5));
        commands.entity(gone).disable();
    }
    assert!(!world.is_disabled(root), "deferred until applied");
    let report = queue.apply(&mut world);
    let skipped: Vec<String> = report.examples().iter().map(ToString::to_string).collect();
    assert_eq!(skipped, [format!("disable on {gone}: entity gone")]);
    assert_eq!((world.is_disabled(root), world.is_disabled(child)), (true, false), "children stay enabled");
    assert_eq!(world.get::<Speed>(root), Some(&Speed(5)), "commands on a disabled entity apply");
    let visible: Vec<Entity> = world.query_filtered::<Entity, With<Hp>>().collect();
    assert_eq!(visible, [child]);

    // Disabling twice changes nothing; enabling an enabled entity neither.
    let mut queue = CommandQueue::default();
    Commands::new(&mut queue, &world).entity(root).disable().enable().enable();
    Commands::new(&mut queue, &world).entity(child).enable();
    Commands::new(&mut queue, &world).entity(gone).enable();
    let report = queue.apply(&mut world);
    assert_eq!((report.applied(), report.skipped()), (4, 1));
    assert_eq!(report.examples()[0].command, "enable");
    assert!(!world.is_disabled(root) && !world.is_disabled(child));
    assert_eq!(world.query::<&Hp>().count(), 2);
}

#[test]
fn disable_and_enable_commands_from_systems_match_the_world_calls() {
    // The same frame on one thread and in parallel: systems disable what
    // is hurt and enable what is healed, and a later frame sees the result.
    fn hide_hurt(q: Query<(Entity, &Hp)>, mut commands: Commands) {
        for (e, hp) in q.iter() {
            if hp.0 < 5 {
                commands.entity(e).disable();
            }
        }
    }
    fn show_healed(q: Query<(Entity, &Speed), With<Disabled>>, mut commands: Commands) {
        for (e, speed) in q.iter() {
            if speed.0 > 7 {
                commands.entity(e).enable();
            }
        }
    }
    let frame = |mut schedule: Schedule| {
        let mut world = World::new();
        let all: Vec<Entity> = (0..10).map(|i| world.spawn((Hp(i), Speed(i)))).collect();
        world.disable(all[9]).unwrap();
        schedule.add_system(hide_hurt);
        schedule.add_system(show_healed);
        schedule.run(&mut world);
        let mut disabled: Vec<Entity> = world.query_filtered::<Entity, With<Disabled>>().collect();
        disabled.sort();
        let mut by_hand = World::new();
        let again: Vec<Entity> = (0..10).map(|i| by_hand.spawn((Hp(i), Speed(i)))).collect();
        for &e in &again[..5] {
            by_hand.entity_mut(e).unwrap().disable().unwrap();
        }
        let mut expected: Vec<Entity> = by_hand.query_filtered::<Entity, With<Disabled>>().collect();
        expected.sort();
        assert_eq!(disabled, expected);
        assert_eq!(disabled, all[..5]);
        disabled
    };
    assert_eq!(frame(Schedule::single_threaded()), frame(Schedule::new()));
}

#[derive(Component, Clone)]
#[component(clone)]
struct Template;

#[test]
fn hierarchy_reads_list_disabled_and_hidden_members_of_a_tree() {
    let mut world = World::new();
    world.register_disabling_component::<Template>();
    let root = world.spawn(Hp(0));
    let a = world.spawn((Hp(1), ChildOf(root)));
    let a1 = world.spawn((Hp(2), ChildOf(a)));
    let b = world.spawn((Hp(3), ChildOf(root)));
    let other_root = world.spawn((Hp(4), Template));
    let other_child = world.spawn((Hp(5), ChildOf(other_root)));
    let enabled_order = world.hierarchy_order();
    assert_eq!(enabled_order, [root, a, a1, b, other_root, other_child], "a hidden root is a root");

    world.disable(root).unwrap();
    world.disable(a).unwrap();
    assert_eq!(world.parent(a1), Some(a));
    assert_eq!(world.parent(a), Some(root));
    assert_eq!(world.children(root), [a, b]);
    assert_eq!(world.children(a), [a1]);
    assert_eq!(world.ancestors(a1).collect::<Vec<_>>(), [a, root]);
    assert_eq!(world.descendants(root).collect::<Vec<_>>(), [a, a1, b]);
    assert_eq!(world.descendants(a).collect::<Vec<_>>(), [a1]);
    assert_eq!(world.hierarchy_order(), enabled_order, "disabling changes no tree");
    // Queries still refuse them: only the enabled members are seen.
    let mut seen: Vec<Entity> = world.query_filtered::<Entity, With<Hp>>().collect();
    seen.sort();
    assert_eq!(seen, [a1, b, other_child]);
    // What a walk that should pass over disabled members does.
    let active: Vec<Entity> = world.descendants(root).filter(|&e| !world.is_disabled(e)).collect();
    assert_eq!(active, [a1, b]);

    // Recursive despawn of a disabled root takes the whole tree.
    assert_eq!(world.despawn_recursive(root), Ok(4));
    assert_eq!(world.hierarchy_order(), [other_root, other_child]);
}
