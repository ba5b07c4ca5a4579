//! System parameters that wrap others (tuples, derived `SystemParam`
//! structs, `ParamSet`, and these nested in one another) forward every
//! deferred step of the `Commands` inside them: in an observer, the
//! commands wait until the observer is back in its place (and, for a
//! lifecycle event, until the world operation ends); in a hook's commands
//! likewise; in a schedule they apply at the end of the run, once; and a
//! panicking observer's commands are dropped.
//!
//! Each wrapper gets the same tests, from `wrapper_tests!`.

#![cfg(feature = "observers")]

use std::panic::{catch_unwind, AssertUnwindSafe};

use archetable::prelude::*;

#[derive(Component, Debug, PartialEq)]
struct Hp(u32);

#[derive(Component)]
struct Spark;

/// An event whose observer triggers it again with one less, down to 0.
struct Echo(u32);

/// An event whose observer despawns its target, then panics if asked.
struct Boom {
    panic: bool,
}

/// What the observers and systems saw, in order.
#[derive(Default)]
struct Log(Vec<u32>);

/// The entities an observer or system despawns.
#[derive(Default)]
struct Mates(Vec<Entity>);

#[derive(SystemParam)]
struct Cmds<'w, 's> {
    commands: Commands<'w, 's>,
    runs: Local<'s, u32>,
}

#[derive(SystemParam)]
struct SetInside<'w, 's> {
    set: ParamSet<'w, 's, (Query<'w, 's, &'static Hp>, Commands<'w, 's>)>,
}

/// Lends out the `Commands` a wrapper holds.
trait WithCommands {
    fn with(&mut self, f: impl FnOnce(&mut Commands));
}

impl WithCommands for (Commands<'_, '_>, Local<'_, u32>) {
    fn with(&mut self, f: impl FnOnce(&mut Commands)) {
        *self.1 += 1;
        f(&mut self.0)
    }
}

impl WithCommands for (Local<'_, u32>, (Commands<'_, '_>,)) {
    fn with(&mut self, f: impl FnOnce(&mut Commands)) {
        f(&mut (self.1).0)
    }
}

impl WithCommands for Cmds<'_, '_> {
    fn with(&mut self, f: impl FnOnce(&mut Commands)) {
        *self.runs += 1;
        f(&mut self.commands)
    }
}

impl WithCommands for ParamSet<'_, '_, (Commands<'_, '_>, Query<'_, '_, &'static Hp>)> {
    fn with(&mut self, f: impl FnOnce(&mut Commands)) {
        let _ = self.p1().iter().count();
        f(&mut self.p0())
    }
}

impl WithCommands for ParamSet<'_, '_, (Query<'_, '_, &'static Hp>, Res<'_, Mates>, Commands<'_, '_>)> {
    fn with(&mut self, f: impl FnOnce(&mut Commands)) {
        let _ = self.p0().iter().count();
        f(&mut self.p2())
    }
}

impl WithCommands for ParamSet<'_, '_, (Query<'_, '_, &'static Hp>, Cmds<'_, '_>)> {
    fn with(&mut self, f: impl FnOnce(&mut Commands)) {
        let _ = self.p0().iter().count();
        self.p1().with(f)
    }
}

impl WithCommands for SetInside<'_, '_> {
    fn with(&mut self, f: impl FnOnce(&mut Commands)) {
        let _ = self.set.p0().iter().count();
        f(&mut self.set.p1())
    }
}

impl WithCommands for ParamSet<'_, '_, (ParamSet<'_, '_, (Commands<'_, '_>, Local<'_, u32>)>, Local<'_, u32>)> {
    fn with(&mut self, f: impl FnOnce(&mut Commands)) {
        f(&mut self.p0().p0())
    }
}

fn world_with(n: usize) -> (World, Vec<Entity>) {
    let mut world = World::new();
    world.init_resource::<Log>();
    let mates: Vec<Entity> = (0..n).map(|i| world.spawn(Hp(i as u32))).collect();
    world.insert_resource(Mates(mates.clone()));
    (world, mates)
}

macro_rules! wrapper_tests {
    ($module:ident, $param:ty) => {
        mod $module {
            use super::*;

            fn echo(t: Trigger<Echo>, mut log: ResMut<Log>, mut p: $param) {
                log.0.push(t.0);
                if t.0 > 0 {
                    p.with(|c| c.trigger(Echo(t.0 - 1)));
                }
                log.0.push(100 + t.0);
            }

            #[test]
            fn an_observer_that_triggers_its_own_event_runs_again_after_it_returns() {
                let (mut world, _) = world_with(0);
                world.observe(echo);
                world.trigger(Echo(3));
                assert_eq!(world.resource::<Log>().0, [3, 103, 2, 102, 1, 101, 0, 100]);
            }

            #[test]
            fn a_hooks_command_that_triggers_runs_the_observer_to_the_end() {
                let (mut world, _) = world_with(0);
                world.observe(echo);
                world.register_component_hooks::<Spark>().on_add(|world, _| world.commands().trigger(Echo(2)));
                world.spawn(Spark);
                assert_eq!(world.resource::<Log>().0, [2, 102, 1, 101, 0, 100]);
            }

            #[test]
            fn a_despawn_observer_that_despawns_its_target_waits_for_the_despawn() {
                let (mut world, mates) = world_with(3);
                fn despawn_target(t: Trigger<OnDespawn<Hp>>, mut log: ResMut<Log>, mut p: $param) {
                    let target = t.target().unwrap();
                    log.0.push(target.index());
                    p.with(|c| c.despawn(target));
                }
                world.observe(despawn_target);
                assert_eq!(world.despawn(mates[1]), Ok(()));
                assert_eq!(world.resource::<Log>().0, [mates[1].index()]);
                assert_eq!(
                    (world.contains(mates[0]), world.contains(mates[1]), world.contains(mates[2])),
                    (true, false, true)
                );
                world.check_invariants().unwrap();
            }

            #[test]
            fn a_despawn_observer_that_despawns_table_mates_during_clear_and_despawn() {
                fn despawn_mates(t: Trigger<OnDespawn<Hp>>, mates: Res<Mates>, mut log: ResMut<Log>, mut p: $param) {
                    let target = t.target().unwrap();
                    log.0.push(target.index());
                    p.with(|c| {
                        for &mate in mates.0.iter().filter(|&&m| m != target) {
                            c.despawn(mate);
                        }
                    });
                }
                let (mut world, mates) = world_with(4);
                world.observe(despawn_mates);
                world.clear();
                assert!(world.is_empty());
                let mut seen = world.resource::<Log>().0.clone();
                seen.sort();
                assert_eq!(seen, mates.iter().map(|e| e.index()).collect::<Vec<_>>());
                world.check_invariants().unwrap();

                let (mut world, mates2) = world_with(4);
                world.observe(despawn_mates);
                assert_eq!(world.despawn(mates2[2]), Ok(()));
                assert!(world.is_empty());
                let mut seen = world.resource::<Log>().0.clone();
                assert_eq!(seen[0], mates2[2].index());
                seen.sort();
                assert_eq!(seen, mates2.iter().map(|e| e.index()).collect::<Vec<_>>());
                world.check_invariants().unwrap();
            }

            #[test]
            fn a_lifecycle_observer_set_off_by_a_hooks_command_despawns_after_that_insert() {
                let (mut world, _) = world_with(0);
                world.register_component_hooks::<Spark>().on_add(|world, e| {
                    world.commands().entity(e).insert(Hp(7));
                });
                fn despawn_target(t: Trigger<OnInsert<Hp>>, mut log: ResMut<Log>, mut p: $param) {
                    let target = t.target().unwrap();
                    log.0.push(target.index());
                    p.with(|c| c.despawn(target));
                }
                world.observe(despawn_target);
                let keep = world.spawn(());
                let e = world.spawn(Spark);
                assert_eq!(world.resource::<Log>().0, [e.index()]);
                assert_eq!((world.contains(e), world.contains(keep), world.len()), (false, true, 1));
                world.check_invariants().unwrap();
            }

            #[test]
            fn a_panicking_observer_drops_its_commands() {
                let (mut world, mates) = world_with(2);
                fn boom(t: Trigger<Boom>, mut p: $param) {
                    let target = t.target().unwrap();
                    p.with(|c| c.despawn(target));
                    if t.panic {
                        panic!("boom");
                    }
                }
                world.observe(boom);
                let caught = catch_unwind(AssertUnwindSafe(|| world.trigger_targets(Boom { panic: true }, mates[0])));
                assert!(caught.is_err());
                world.trigger_targets(Boom { panic: false }, mates[1]);
                assert_eq!((world.contains(mates[0]), world.contains(mates[1])), (true, false));
                world.check_invariants().unwrap();
            }

            #[test]
            fn a_schedule_applies_the_commands_once_at_the_end_of_the_run() {
                let (mut world, mates) = world_with(3);
                let mut schedule = Schedule::new();
                fn despawn_all(mates: Res<Mates>, mut p: $param) {
                    p.with(|c| {
                        for &mate in &mates.0 {
                            c.despawn(mate);
                        }
                    })
                }
                let despawn = schedule.add_system(despawn_all).id();
                schedule
                    .add_system(|hp: Query<&Hp>, mut log: ResMut<Log>| log.0.push(hp.iter().count() as u32))
                    .after(despawn);
                schedule.run(&mut world);
                assert_eq!(world.resource::<Log>().0, [3]);
                assert_eq!((schedule.command_report().applied(), schedule.command_report().skipped()), (3, 0));
                assert!(mates.iter().all(|&m| !world.contains(m)));
                schedule.run(&mut world);
                assert_eq!(world.resource::<Log>().0, [3, 0]);
                assert_eq!((schedule.command_report().applied(), schedule.command_report().skipped()), (0, 3));
            }
        }
    };
}

wrapper_tests!(tuple, (Commands, Local<u32>));
wrapper_tests!(nested_tuple, (Local<u32>, (Commands,)));
wrapper_tests!(derived, Cmds);
wrapper_tests!(param_set, ParamSet<(Commands, Query<&'static Hp>)>);
wrapper_tests!(param_set_last_member, ParamSet<(Query<&'static Hp>, Res<Mates>, Commands)>);
wrapper_tests!(derived_in_param_set, ParamSet<(Query<&'static Hp>, Cmds)>);
wrapper_tests!(param_set_in_derived, SetInside);
type InnerSet<'w, 's> = ParamSet<'w, 's, (Commands<'w, 's>, Local<'s, u32>)>;
wrapper_tests!(param_set_in_param_set, ParamSet<(InnerSet, Local<u32>)>);
