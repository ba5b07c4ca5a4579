//! Change tracking: `Added`, `Changed`, `Ref`, `Mut`, `RemovedComponents`,
//! each seen once per reader whatever the system order, opt-in per type, and
//! safe across tick wrap-around.

use std::sync::{Arc, Mutex};

use archetable::prelude::*;
use archetable::{Query as DeriveQuery, ScheduleError};

#[derive(Component, Debug, PartialEq, Clone, Copy)]
#[component(track_changes)]
struct Hp(u32);

#[derive(Component, Debug, PartialEq, Clone, Copy)]
#[component(track_changes)]
struct Armor(u32);

/// Untracked: `RemovedComponents` still works for it.
#[derive(Component, Debug, PartialEq, Clone, Copy)]
struct Tag;

type Frames = Arc<Mutex<Vec<Vec<Entity>>>>;

fn frames() -> Frames {
    Arc::new(Mutex::new(Vec::new()))
}

fn sorted(mut v: Vec<Entity>) -> Vec<Entity> {
    v.sort();
    v
}

fn take(frames: &Frames) -> Vec<Vec<Entity>> {
    std::mem::take(&mut *frames.lock().unwrap())
}

/// A system that records, each run, the entities `Changed<Hp>` passes.
fn changed_recorder(log: &Frames) -> impl FnMut(Query<Entity, Changed<Hp>>) + Send + 'static {
    let log = log.clone();
    move |q: Query<Entity, Changed<Hp>>| log.lock().unwrap().push(sorted(q.iter().collect()))
}

/// A system that records, each run, the entities `Added<Hp>` passes.
fn added_recorder(log: &Frames) -> impl FnMut(Query<Entity, Added<Hp>>) + Send + 'static {
    let log = log.clone();
    move |q: Query<Entity, Added<Hp>>| log.lock().unwrap().push(sorted(q.iter().collect()))
}

#[test]
fn query_state_sees_each_addition_and_change_once() {
    let mut world = World::new();
    let a = world.spawn(Hp(1));
    let b = world.spawn((Hp(2), Armor(1)));
    let c = world.spawn(Armor(5));
    let mut added = QueryState::<Entity, Added<Hp>>::new(&mut world);
    let mut changed = QueryState::<Entity, Changed<Hp>>::new(&mut world);

    // Entities spawned before the state existed are new to it.
    assert_eq!(sorted(added.iter(&world).collect()), [a, b]);
    assert_eq!(sorted(changed.iter(&world).collect()), [a, b]);
    assert_eq!(added.iter(&world).count(), 0);
    assert_eq!(changed.iter(&world).count(), 0);

    // Insert of a missing component is an addition and a change; an
    // overwrite is a change only; a move to another table keeps the ticks.
    world.insert(c, Hp(3)).unwrap();
    world.insert(a, Hp(10)).unwrap();
    world.insert(b, Tag).unwrap();
    assert_eq!(sorted(added.iter(&world).collect()), [c]);
    assert_eq!(sorted(changed.iter(&world).collect()), [a, c]);

    // `get_mut` marks a change only when written through.
    let _ = world.get_mut::<Hp>(b).unwrap().0;
    assert_eq!(changed.iter(&world).count(), 0, "a read through Mut is not a change");
    world.get_mut::<Hp>(b).unwrap().0 += 1;
    assert_eq!(sorted(changed.iter(&world).collect()), [b]);
    assert_eq!(added.iter(&world).count(), 0);

    // Removing and re-adding is a fresh addition.
    world.remove::<Hp>(a).unwrap();
    world.insert(a, Hp(1)).unwrap();
    assert_eq!(sorted(added.iter(&world).collect()), [a]);
}

#[test]
fn mut_marks_changes_only_on_write() {
    let mut world = World::new();
    let entities: Vec<Entity> = (0..6).map(|i| world.spawn(Hp(i))).collect();
    let mut changed = QueryState::<Entity, Changed<Hp>>::new(&mut world);
    changed.iter(&world).for_each(drop);

    for (i, mut hp) in world.query_mut::<&mut Hp>().enumerate() {
        match i {
            0 => hp.0 += 100,                        // written: changed
            1 => assert!(hp.0 < 100),                // read: not changed
            2 => hp.set_changed(),                   // marked without a write
            3 => hp.bypass_change_detection().0 = 7, // written, hidden
            _ => {}
        }
    }
    let hidden = entities.iter().copied().find(|&e| world.get::<Hp>(e) == Some(&Hp(7))).unwrap();
    let seen = sorted(changed.iter(&world).collect());
    assert_eq!(seen.len(), 2);
    assert!(!seen.contains(&hidden));
    assert_eq!(world.get::<Hp>(hidden), Some(&Hp(7)), "the hidden write happened");

    // `Mut::is_changed` / `is_added` through a system's query.
    let log = frames();
    let sink = log.clone();
    let mut schedule = Schedule::single_threaded();
    schedule.add_system(move |mut q: Query<(Entity, &mut Hp)>| {
        let mut out = Vec::new();
        for (e, hp) in q.iter_mut() {
            if hp.is_added() {
                out.push(e);
            }
        }
        sink.lock().unwrap().push(out);
    });
    schedule.run(&mut world);
    schedule.run(&mut world);
    let runs = take(&log);
    assert_eq!(sorted(runs[0].clone()), sorted(entities.clone()), "first run: every Hp is new to the system");
    assert!(runs[1].is_empty(), "second run: nothing was added since");
}

#[derive(DeriveQuery)]
struct Heal<'w> {
    hp: &'w mut Hp,
}

#[test]
fn plain_mutable_references_count_as_changes() {
    let mut world = World::new();
    let a = world.spawn(Hp(1));
    let mut changed = QueryState::<Entity, Changed<Hp>>::new(&mut world);
    changed.iter(&world).for_each(drop);
    // A derived query's `&mut` field cannot observe writes one by one, so
    // fetching it counts.
    for heal in world.query_mut::<Heal>() {
        let _ = heal.hp.0;
    }
    assert_eq!(changed.iter(&world).collect::<Vec<_>>(), [a]);
    // So does turning a `Mut` into the plain reference.
    let _ = world.get_mut::<Hp>(a).unwrap().into_inner();
    assert_eq!(changed.iter(&world).collect::<Vec<_>>(), [a]);
}

#[test]
fn ref_reports_added_and_changed_per_reader() {
    let mut world = World::new();
    let a = world.spawn(Hp(1));
    let b = world.spawn(Hp(2));
    let mut refs = QueryState::<(Entity, Ref<Hp>)>::new(&mut world);
    let flags = |refs: &mut QueryState<(Entity, Ref<Hp>)>, world: &World| {
        let mut v: Vec<(Entity, bool, bool)> =
            refs.iter(world).map(|(e, r)| (e, r.is_added(), r.is_changed())).collect();
        v.sort();
        v
    };
    assert_eq!(flags(&mut refs, &world), [(a, true, true), (b, true, true)]);
    world.get_mut::<Hp>(b).unwrap().0 = 5;
    assert_eq!(flags(&mut refs, &world), [(a, false, false), (b, false, true)]);
    assert_eq!(flags(&mut refs, &world), [(a, false, false), (b, false, false)]);
    let ticks = world.component_ticks::<Hp>(b).unwrap();
    assert!(ticks.changed.get() > ticks.added.get());
    assert_eq!(world.component_ticks::<Tag>(b), None, "untracked types have no ticks");
}

/// A writer changes one entity per frame; readers placed before and after
/// it see every change exactly once: the ones after it in the same frame,
/// the ones before it in the next.
#[test]
fn every_reader_sees_each_change_once_whatever_the_order() {
    every_reader_sees_each_change_once(Schedule::single_threaded());
    // Parallel groups get their ticks handed out in advance: the same sets.
    let mut parallel = Schedule::new();
    parallel.set_parallel_threshold(std::time::Duration::ZERO);
    every_reader_sees_each_change_once(parallel);
}

fn every_reader_sees_each_change_once(mut schedule: Schedule) {
    let mut world = World::new();
    let entities: Vec<Entity> = (0..4).map(|i| world.spawn(Hp(i))).collect();
    let (before, after, added_before, added_after) = (frames(), frames(), frames(), frames());
    let targets = entities.clone();
    let writer = schedule
        .add_system(move |mut q: Query<(Entity, &mut Hp)>, mut frames: Local<usize>, mut commands: Commands| {
            let frame = *frames;
            *frames += 1;
            for (e, mut hp) in q.iter_mut() {
                if e == targets[frame % targets.len()] {
                    hp.0 += 1;
                }
            }
            if frame == 2 {
                commands.spawn(Hp(99));
            }
        })
        .id();
    schedule.add_system(changed_recorder(&before)).before(writer);
    schedule.add_system(changed_recorder(&after)).after(writer);
    schedule.add_system(added_recorder(&added_before)).before(writer);
    schedule.add_system(added_recorder(&added_after)).after(writer);
    for _ in 0..6 {
        schedule.run(&mut world);
    }
    let spawned = world.query::<(Entity, &Hp)>().find(|(_, hp)| hp.0 == 99).unwrap().0;
    let e = &entities;
    // Frame 0: every entity is new to every reader. The writer's change of
    // frame n shows in frame n for the reader after it, n + 1 before it.
    // The entity spawned by a command at the end of frame 2 is new to both
    // readers in frame 3.
    assert_eq!(take(&after), [e.clone(), vec![e[1]], vec![e[2]], sorted(vec![e[3], spawned]), vec![e[0]], vec![e[1]]]);
    assert_eq!(take(&before), [e.clone(), vec![e[0]], vec![e[1]], sorted(vec![e[2], spawned]), vec![e[3]], vec![e[0]]]);
    let frame0 = e.clone();
    assert_eq!(take(&added_after), [frame0.clone(), vec![], vec![], vec![spawned], vec![], vec![]]);
    assert_eq!(take(&added_before), [frame0, vec![], vec![], vec![spawned], vec![], vec![]]);
}

#[test]
fn removed_components_are_seen_once_by_every_reader() {
    let mut world = World::new();
    let [a, b, c, d] = [(); 4].map(|_| world.spawn((Hp(1), Tag)));
    let (before, after) = (frames(), frames());
    let mut schedule = Schedule::new();
    let removed_by_writer = frames();
    let writes = removed_by_writer.clone();
    let writer = schedule
        .add_system(move |q: Query<Entity, With<Tag>>, mut frames: Local<u64>, mut commands: Commands| {
            let frame = *frames;
            *frames += 1;
            let mut done = Vec::new();
            if frame == 1 {
                commands.entity(a).despawn();
                done.push(a);
            }
            if frame == 2 {
                commands.entity(b).remove::<Tag>();
                done.push(b);
            }
            let _ = q;
            writes.lock().unwrap().push(done);
        })
        .id();
    for (log, before_writer) in [(&before, true), (&after, false)] {
        let log = log.clone();
        let config = schedule.add_system(move |mut removed: RemovedComponents<Tag>| {
            let seen = sorted(removed.read().collect());
            log.lock().unwrap().push(seen);
        });
        if before_writer {
            config.before(writer);
        } else {
            config.after(writer);
        }
    }
    for _ in 0..5 {
        schedule.run(&mut world);
    }
    // Commands apply at the end of the frame, so both readers see a removal
    // in the next frame; each exactly once.
    assert_eq!(take(&after), [vec![], vec![], vec![a], vec![b], vec![]]);
    assert_eq!(take(&before), [vec![], vec![], vec![a], vec![b], vec![]]);

    // Outside systems: the last two frames' removals, and `clear` counts.
    world.despawn(c).unwrap();
    assert_eq!(world.removed::<Tag>().collect::<Vec<_>>(), [c]);
    world.clear();
    assert_eq!(sorted(world.removed::<Tag>().collect()), sorted(vec![c, d]));
    world.update_events();
    world.update_events();
    assert_eq!(world.removed::<Tag>().count(), 0, "records live two frames");
    assert_eq!(world.removed::<Hp>().count(), 0, "not recorded: nobody reads Hp removals");
}

#[test]
fn a_filter_read_conflicts_with_a_write_of_the_same_component() {
    let mut schedule = Schedule::new();
    let refused =
        schedule.try_add_system(|_: Query<&mut Hp, With<Tag>>, _: Query<Entity, (Changed<Hp>, With<Tag>)>| {});
    let err = match refused {
        Err(err) => err,
        Ok(_) => panic!("a Changed<Hp> filter beside a Query<&mut Hp> must be refused"),
    };
    assert!(matches!(err, ScheduleError::Conflict(_)), "{err:?}");
    assert!(err.to_string().contains("Hp"), "{err}");
    // The same query may filter on what it writes.
    schedule.try_add_system(|_: Query<&mut Hp, Changed<Hp>>| {}).unwrap();
}

/// Several billion ticks of history, through the test hook that advances the
/// world's tick: old changes never come back as new when the `u32` tick
/// wraps, and a reader that was off for a billion ticks still sees what
/// changed meanwhile, once.
#[test]
fn ticks_survive_wrapping_around() {
    let mut world = World::new();
    // Start just before the wrap, so the first frames cross it.
    world.advance_change_tick(u32::MAX - 5);
    let e = world.spawn(Hp(1));
    let (steady, late) = (frames(), frames());
    let mut schedule = Schedule::new();
    schedule.add_system(changed_recorder(&steady));
    let late_id = schedule.add_system(changed_recorder(&late)).id();

    schedule.run(&mut world);
    assert_eq!(take(&steady), [vec![e]]);
    assert_eq!(take(&late), [vec![e]]);
    schedule.disable(late_id);

    const STEP: u32 = 100_000_000;
    for step in 1..=45 {
        world.advance_change_tick(STEP);
        if step == 1 {
            world.get_mut::<Hp>(e).unwrap().0 = 2;
        }
        if step == 10 {
            schedule.enable(late_id);
        }
        schedule.run(&mut world);
        let expected_steady: Vec<Vec<Entity>> = if step == 1 { vec![vec![e]] } else { vec![vec![]] };
        assert_eq!(take(&steady), expected_steady, "step {step}: {} ticks in", u64::from(STEP) * step);
        let late_runs = take(&late);
        match step {
            10 => assert_eq!(late_runs, [vec![e]], "the late reader sees the change of step 1 once"),
            11.. => assert_eq!(late_runs, [Vec::<Entity>::new()]),
            _ => assert!(late_runs.is_empty()),
        }
    }
    // 4.5 billion ticks later, a fresh change is seen once.
    world.get_mut::<Hp>(e).unwrap().0 = 3;
    schedule.run(&mut world);
    schedule.run(&mut world);
    assert_eq!(take(&steady), [vec![e], vec![]]);
}

#[derive(Component, Debug, Default, PartialEq)]
#[component(track_changes, pooled)]
struct Trail(Vec<u32>);

impl Reset for Trail {
    fn reset(&mut self) {
        self.0.clear();
    }
}

/// A pooled value that comes back is a fresh addition to every reader, its
/// removal is recorded, and hooks see both.
#[test]
fn pooled_tracked_values_are_added_and_removed_like_any_other() {
    let mut world = World::new();
    let log = Arc::new(Mutex::new(Vec::new()));
    let (on_add, on_remove) = (log.clone(), log.clone());
    world
        .register_component_hooks::<Trail>()
        .on_add(move |_, e| on_add.lock().unwrap().push(("add", e)))
        .on_remove(move |_, e| on_remove.lock().unwrap().push(("remove", e)));
    world.track_removed::<Trail>();
    let mut added = QueryState::<Entity, Added<Trail>>::new(&mut world);
    let mut changed = QueryState::<Entity, Changed<Trail>>::new(&mut world);

    let a = world.spawn_pooled::<Trail>(|t| t.0.push(1));
    assert_eq!(added.iter(&world).collect::<Vec<_>>(), [a]);
    assert_eq!(changed.iter(&world).collect::<Vec<_>>(), [a]);
    world.despawn(a).unwrap();
    assert_eq!(world.pool_len::<Trail>(), 1);
    let b = world.spawn_pooled::<Trail>(|t| {
        assert!(t.0.is_empty() && t.0.capacity() >= 1, "the reset value, memory kept");
        t.0.push(2);
    });
    assert_eq!(added.iter(&world).collect::<Vec<_>>(), [b], "a reused value is a new addition");
    assert_eq!(changed.iter(&world).collect::<Vec<_>>(), [b]);
    world.get_mut::<Trail>(b).unwrap().0.push(3);
    assert_eq!(added.iter(&world).count(), 0);
    assert_eq!(changed.iter(&world).collect::<Vec<_>>(), [b]);
    assert_eq!(world.removed::<Trail>().collect::<Vec<_>>(), [a]);
    assert_eq!(*log.lock().unwrap(), [("add", a), ("remove", a), ("add", b)]);
    world.check_invariants().unwrap();
}

#[test]
fn removed_components_records_from_add_system_not_from_the_first_run() {
    // A type no other test reads removals of: recording of it starts when
    // the system below is added.
    #[derive(Component, Debug, PartialEq)]
    struct Fuse(u32);
    #[derive(Default)]
    struct Burnt(Vec<Entity>);

    let mut world = World::new();
    world.init_resource::<Burnt>();
    let before = world.spawn(Fuse(0));
    world.despawn(before).unwrap();
    let [a, b, c] = [1, 2, 3].map(|i| world.spawn(Fuse(i)));

    let mut schedule = Schedule::new();
    schedule.add_system(|mut removed: RemovedComponents<Fuse>, mut burnt: ResMut<Burnt>| {
        burnt.0.extend(removed.read());
    });
    // Between add_system and the first run: a despawn, a remove, a clear
    // of a second world that saw the type, and a removal in this one.
    world.despawn(a).unwrap();
    assert_eq!(world.remove::<Fuse>(b).unwrap(), Fuse(2));
    let mut other = World::new();
    let o = other.spawn(Fuse(9));
    other.clear();
    assert_eq!(other.removed::<Fuse>().collect::<Vec<_>>(), [o]);
    schedule.run(&mut world);
    assert_eq!(world.resource::<Burnt>().0, [a, b], "the despawn before add_system is not recorded");
    world.despawn(c).unwrap();
    schedule.run(&mut world);
    assert_eq!(world.resource::<Burnt>().0, [a, b, c]);
}
