//! System parameters: queries, resources, locals, events, commands and
//! derived parameter sets, run through a schedule.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use archetable::prelude::*;
use archetable::system::QuerySingleError;
use archetable::SystemParam;

#[derive(Component, Debug, PartialEq, Clone, Copy)]
struct Position(f32);
#[derive(Component, Debug, PartialEq, Clone, Copy)]
struct Velocity(f32);
#[derive(Component, Debug, PartialEq)]
struct Frozen;
#[derive(Component, Debug, PartialEq)]
struct Hp(i32);

#[derive(Debug, Default, PartialEq)]
struct Score(u32);

fn movement(mut q: Query<(&mut Position, &Velocity), Without<Frozen>>, time: Res<Time>) {
    for (mut pos, vel) in q.iter_mut() {
        pos.0 += vel.0 * time.delta_secs();
    }
}

fn one_frame(world: &mut World, schedule: &mut Schedule, secs: f32) {
    world.resource_mut::<Time>().advance(Duration::from_secs_f32(secs));
    schedule.run(world);
}

#[test]
fn a_query_system_moves_only_unfrozen_bodies() {
    let mut world = World::new();
    let a = world.spawn((Position(0.0), Velocity(2.0)));
    let b = world.spawn((Position(0.0), Velocity(2.0), Frozen));
    let mut schedule = Schedule::new();
    schedule.add_system(movement);
    one_frame(&mut world, &mut schedule, 0.5);
    one_frame(&mut world, &mut schedule, 0.5);
    assert_eq!(world.get::<Position>(a), Some(&Position(2.0)));
    assert_eq!(world.get::<Position>(b), Some(&Position(0.0)));
}

#[test]
fn query_methods_get_single_contains_and_par_for_each() {
    let mut world = World::new();
    let a = world.spawn((Position(1.0), Velocity(1.0)));
    let b = world.spawn(Position(5.0));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let out = seen.clone();
    let mut schedule = Schedule::new();
    schedule.add_system(move |positions: Query<&Position>, mut velocities: Query<(Entity, &mut Velocity)>| {
        let mut out = out.lock().unwrap();
        out.push(format!("{:?}", positions.get(a).map(|p| p.0)));
        out.push(format!("{:?}", positions.get(b).map(|p| p.0)));
        out.push(format!("{}", velocities.contains(a)));
        out.push(format!("{}", velocities.contains(b)));
        out.push(format!("{:?}", positions.single().map(|p| p.0)));
        let (e, mut v) = velocities.single_mut().unwrap();
        v.0 = 10.0;
        out.push(format!("{}", e == a));
        out.push(format!("{}", positions.iter().count()));
        positions.par_for_each(|p| assert!(p.0 >= 1.0));
        velocities.par_for_each_mut(|(_, mut v)| v.0 += 1.0);
        out.push(format!("{}", positions.is_empty()));
    });
    schedule.run(&mut world);
    assert_eq!(
        *seen.lock().unwrap(),
        [
            "Ok(1.0)",
            "Ok(5.0)",
            "true",
            "false",
            &format!("{:?}", Err::<f32, _>(QuerySingleError::MultipleEntities)),
            "true",
            "2",
            "false"
        ]
    );
    assert_eq!(world.get::<Velocity>(a), Some(&Velocity(11.0)));
}

#[test]
fn resources_local_and_option_res() {
    let mut world = World::new();
    world.insert_resource(Score(0));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let out = seen.clone();
    let mut schedule = Schedule::new();
    schedule.add_system(|mut score: ResMut<Score>, mut calls: Local<u32>| {
        *calls += 1;
        score.0 += *calls;
    });
    schedule.add_system(move |score: Option<Res<Score>>, missing: Option<Res<String>>| {
        out.lock().unwrap().push((score.map(|s| s.0), missing.is_some()));
    });
    for _ in 0..3 {
        schedule.run(&mut world);
    }
    assert_eq!(world.resource::<Score>(), &Score(1 + 2 + 3));
    assert_eq!(*seen.lock().unwrap(), [(Some(1), false), (Some(3), false), (Some(6), false)]);
    assert_eq!(world.remove_resource::<Score>(), Some(Score(6)));
    assert!(!world.contains_resource::<Score>());
}

#[test]
#[should_panic(expected = "system `needs_score` needs resource `Score`, which is not in the world")]
fn a_missing_resource_panics_naming_system_and_type() {
    fn needs_score(_: Res<Score>) {}
    let mut world = World::new();
    let mut schedule = Schedule::new();
    schedule.add_system(needs_score);
    schedule.run(&mut world);
}

#[test]
#[should_panic(expected = "resource `gameplay::systems::Score` is not in the world")]
fn world_resource_panics_naming_the_type() {
    World::new().resource::<Score>();
}

#[derive(Debug, Clone, PartialEq)]
struct Hit(u32);

#[test]
fn readers_see_each_event_once_on_either_side_of_the_writer() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let (before, after) = (log.clone(), log.clone());
    let mut world = World::new();
    let mut schedule = Schedule::single_threaded();
    schedule.add_system(move |mut hits: EventReader<Hit>| {
        before.lock().unwrap().extend(hits.read().map(|h| ("before", h.0)));
    });
    schedule.add_system(|mut hits: EventWriter<Hit>, mut frame: Local<u32>| {
        *frame += 1;
        hits.send(Hit(*frame));
    });
    schedule.add_system(move |mut hits: EventReader<Hit>| {
        after.lock().unwrap().extend(hits.read().map(|h| ("after", h.0)));
    });
    for _ in 0..3 {
        schedule.run(&mut world);
    }
    let log = log.lock().unwrap();
    let before: Vec<u32> = log.iter().filter(|e| e.0 == "before").map(|e| e.1).collect();
    let after: Vec<u32> = log.iter().filter(|e| e.0 == "after").map(|e| e.1).collect();
    assert_eq!(before, [1, 2], "the reader before the writer sees frame N's event in frame N+1");
    assert_eq!(after, [1, 2, 3]);
    // Events older than two frames are gone.
    assert_eq!(world.resource::<Events<Hit>>().iter().cloned().collect::<Vec<_>>(), [Hit(3)]);
}

#[test]
fn events_registered_on_first_send_and_aged_by_update() {
    let mut world = World::new();
    assert!(!world.contains_resource::<Events<Hit>>());
    world.send_event(Hit(1));
    assert_eq!(world.resource::<Events<Hit>>().len(), 1);
    world.update_events();
    assert_eq!(world.resource::<Events<Hit>>().len(), 1);
    world.update_events();
    assert!(world.resource::<Events<Hit>>().is_empty());
}

#[test]
fn commands_spawn_insert_remove_despawn_apply_at_the_end_of_the_frame() {
    let mut world = World::new();
    let target = world.spawn((Hp(3), Position(0.0)));
    let spawned = Arc::new(Mutex::new(None));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (spawned_out, seen_out) = (spawned.clone(), seen.clone());
    let mut schedule = Schedule::single_threaded();
    schedule.add_system(move |mut commands: Commands, mut frame: Local<u32>| {
        *frame += 1;
        if *frame == 1 {
            let e = commands.spawn((Hp(7), Velocity(1.0))).id();
            *spawned_out.lock().unwrap() = Some(e);
            commands.entity(target).insert(Frozen).remove::<Position>();
            commands.insert_resource(Score(9));
        }
    });
    schedule.add_system(move |q: Query<(Entity, &Hp)>| {
        let mut v: Vec<i32> = q.iter().map(|(_, hp)| hp.0).collect();
        v.sort();
        seen_out.lock().unwrap().push(v);
    });
    schedule.run(&mut world);
    let e = spawned.lock().unwrap().unwrap();
    assert_eq!(world.get::<Hp>(e), Some(&Hp(7)));
    assert!(world.has::<Frozen>(target) && !world.has::<Position>(target));
    assert_eq!(world.resource::<Score>(), &Score(9));
    schedule.run(&mut world);
    assert_eq!(*seen.lock().unwrap(), [vec![3], vec![3, 7]], "the spawn shows from the next frame on");
    assert_eq!(schedule.command_report().applied(), 0);
    world.check_invariants().unwrap();
}

#[test]
fn a_despawned_entity_stays_visible_to_later_systems_of_the_frame() {
    let mut world = World::new();
    let e = world.spawn(Hp(0));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let out = seen.clone();
    let mut schedule = Schedule::new();
    let reap = schedule
        .add_system(|q: Query<(Entity, &Hp)>, mut commands: Commands| {
            for (entity, hp) in q.iter() {
                if hp.0 <= 0 {
                    commands.despawn(entity);
                }
            }
        })
        .id();
    schedule.add_system(move |q: Query<Entity, With<Hp>>| out.lock().unwrap().push(q.iter().count())).after(reap);
    schedule.run(&mut world);
    assert!(!world.contains(e));
    schedule.run(&mut world);
    assert_eq!(*seen.lock().unwrap(), [1, 0]);
}

#[test]
fn commands_on_gone_entities_are_skipped_and_counted() {
    let mut world = World::new();
    let e = world.spawn(Hp(1));
    let mut schedule = Schedule::single_threaded();
    fn first(q: Query<Entity, With<Hp>>, mut commands: Commands) {
        for e in q.iter() {
            commands.despawn(e);
        }
    }
    fn second(q: Query<Entity, With<Hp>>, mut commands: Commands) {
        for e in q.iter() {
            commands.entity(e).insert(Frozen);
            commands.despawn(e);
        }
    }
    schedule.add_system(first);
    schedule.add_system(second);
    schedule.run(&mut world);
    let report = schedule.command_report();
    assert_eq!((report.applied(), report.skipped()), (1, 2));
    let examples: Vec<String> = report.examples().iter().map(|s| s.to_string()).collect();
    assert_eq!(
        examples,
        [
            format!("insert on {e} from system `second`: entity gone"),
            format!("despawn on {e} from system `second`: entity gone")
        ]
    );
    assert_eq!(report.examples()[0].command, "insert");
    world.check_invariants().unwrap();
}

#[test]
fn exclusive_systems_take_the_whole_world() {
    let mut world = World::new();
    let mut schedule = Schedule::new();
    schedule.add_system(|world: &mut World| {
        world.spawn(Hp(1));
    });
    schedule.add_system(|q: Query<&Hp>, mut score: ResMut<Score>| score.0 = q.iter().count() as u32);
    world.insert_resource(Score(0));
    schedule.run(&mut world);
    schedule.run(&mut world);
    assert_eq!(world.resource::<Score>(), &Score(2));
}

#[derive(SystemParam)]
struct Physics<'w, 's> {
    bodies: Query<'w, 's, (&'static mut Position, &'static Velocity)>,
    time: Res<'w, Time>,
    steps: Local<'s, u32>,
    commands: Commands<'w, 's>,
}

#[test]
fn derived_system_params_group_parameters() {
    fn step(mut physics: Physics, mut score: ResMut<Score>) {
        *physics.steps += 1;
        let dt = physics.time.delta_secs();
        for (mut pos, vel) in physics.bodies.iter_mut() {
            pos.0 += vel.0 * dt;
        }
        score.0 = *physics.steps;
        physics.commands.spawn(Frozen);
    }
    let mut world = World::new();
    world.insert_resource(Score(0));
    let e = world.spawn((Position(0.0), Velocity(4.0)));
    let mut schedule = Schedule::new();
    schedule.add_system(step);
    one_frame(&mut world, &mut schedule, 0.25);
    one_frame(&mut world, &mut schedule, 0.25);
    assert_eq!(world.get::<Position>(e), Some(&Position(2.0)));
    assert_eq!(world.resource::<Score>(), &Score(2));
    assert_eq!(world.query::<&Frozen>().count(), 2);
}

#[allow(dead_code)]
#[derive(SystemParam)]
struct Aliasing<'w, 's> {
    writer: Query<'w, 's, &'static mut Hp>,
    reader: Query<'w, 's, &'static Hp>,
}

#[test]
fn conflicts_inside_a_derived_param_are_found() {
    fn system(_: Aliasing) {}
    let err = Schedule::new().try_add_system(system).map(|_| ()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "error[E0002]: system `system` cannot run: parameter #0 `Aliasing` (its `Query<&mut Hp>`) writes component \
         `Hp` while parameter #0 `Aliasing` (its `Query<&Hp>`) also borrows it; make the two queries disjoint with \
         `With`/`Without` filters, merge them into one parameter, or split the system"
    );
}

#[test]
fn commands_apply_in_recording_order_system_by_system() {
    let mut world = World::new();
    let e = world.spawn(Hp(0));
    let mut schedule = Schedule::new();
    // Neither system borrows anything the other does, so they may run at
    // the same time; their commands still apply in run order.
    let first = schedule
        .add_system(move |mut commands: Commands| {
            commands.entity(e).insert(Hp(1));
            commands.entity(e).insert(Hp(2)).remove::<Hp>();
            commands.entity(e).insert(Hp(3));
        })
        .id();
    schedule.add_system(move |mut commands: Commands| {
        commands.entity(e).insert(Hp(4));
    });
    schedule.run(&mut world);
    assert_eq!(world.get::<Hp>(e), Some(&Hp(4)));
    schedule.disable(first);
    world.insert(e, Hp(0)).unwrap();
    schedule.run(&mut world);
    assert_eq!(world.get::<Hp>(e), Some(&Hp(4)));
    assert_eq!(schedule.command_report().applied(), 1);
}

#[test]
fn a_command_queue_applies_only_to_the_world_it_was_recorded_against() {
    let mut a = World::new();
    let mut b = World::new();
    let existing = b.spawn(Position(1.0));
    let mut queue = CommandQueue::default();
    let spawned = {
        let mut commands = Commands::new(&mut queue, &a);
        let spawned = commands.spawn(Position(2.0)).id();
        commands.entity(spawned).insert(Velocity(3.0));
        spawned
    };
    assert_eq!(spawned.index(), existing.index(), "handles of two worlds can be equal");

    let error = queue.try_apply(&mut b).unwrap_err();
    assert_eq!(error, archetable::ForeignQueueError { recorded: a.id(), applied: b.id() });
    assert!(error.to_string().contains("apply it there"), "{error}");
    assert_eq!(b.len(), 1);
    assert_eq!(b.get::<Position>(existing), Some(&Position(1.0)));
    assert_eq!(b.get::<Velocity>(existing), None);
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| queue.apply(&mut b)));
    assert!(panicked.is_err());
    assert_eq!(b.len(), 1);
    b.check_invariants().unwrap();

    // The queue kept its commands: applied where they belong, they spawn.
    let report = queue.try_apply(&mut a).unwrap();
    assert_eq!(report.applied(), 2);
    assert_eq!(a.len(), 1);
    assert_eq!(a.get::<Position>(spawned), Some(&Position(2.0)));
    assert_eq!(a.get::<Velocity>(spawned), Some(&Velocity(3.0)));
    a.check_invariants().unwrap();
}
