//! Component lifecycle hooks: which hooks run for each operation, in which
//! order, what they can see, the commands they queue, indices kept in sync
//! by them, and a world that stays consistent when one panics.

use std::collections::{BTreeMap, BTreeSet};
use std::panic::{catch_unwind, AssertUnwindSafe};

use archetable::prelude::*;
use archetable::EventCursor;

#[derive(Component, Debug, PartialEq)]
struct A(u32);
#[derive(Component, Debug, PartialEq)]
struct B(u32);
/// Never hooked.
#[derive(Component, Debug, PartialEq)]
struct Plain(u32);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Add,
    Insert,
    Replace,
    Remove,
    Despawn,
}
use Kind::*;

/// One hook call: its kind, its entity, the component, and the component's
/// value as the hook read it.
type Event = (Kind, Entity, &'static str, Option<u32>);

#[derive(Default)]
struct Log(Vec<Event>);

trait Value: Component {
    const NAME: &'static str;
    fn value(&self) -> u32;
}

impl Value for A {
    const NAME: &'static str = "A";
    fn value(&self) -> u32 {
        self.0
    }
}

impl Value for B {
    const NAME: &'static str = "B";
    fn value(&self) -> u32 {
        self.0
    }
}

/// Registers a hook of every kind on `T` that records the call in `Log`.
fn record<T: Value>(world: &mut World) {
    fn log<T: Value>(kind: Kind) -> impl Fn(&mut HookWorld<'_>, Entity) + Send + Sync + 'static {
        move |world, entity| {
            let value = world.get::<T>(entity).map(T::value);
            world.resource_mut::<Log>().0.push((kind, entity, T::NAME, value));
        }
    }
    world.init_resource::<Log>();
    world
        .register_component_hooks::<T>()
        .on_add(log::<T>(Add))
        .on_insert(log::<T>(Insert))
        .on_replace(log::<T>(Replace))
        .on_remove(log::<T>(Remove))
        .on_despawn(log::<T>(Despawn));
}

/// A world recording the hooks of `A` (registered first, so the lower
/// component id) and `B`.
fn recording_world() -> World {
    let mut world = World::new();
    record::<A>(&mut world);
    record::<B>(&mut world);
    world
}

fn take_log(world: &mut World) -> Vec<Event> {
    std::mem::take(&mut world.resource_mut::<Log>().0)
}

#[test]
fn spawn_runs_on_add_for_each_component_then_on_insert_in_bundle_order() {
    let mut world = recording_world();
    let e = world.spawn((B(2), Plain(0), A(1)));
    assert_eq!(
        take_log(&mut world),
        [(Add, e, "B", Some(2)), (Add, e, "A", Some(1)), (Insert, e, "B", Some(2)), (Insert, e, "A", Some(1))]
    );
    world.spawn(Plain(1));
    assert_eq!(take_log(&mut world), [], "no hook for a component without hooks");
    world.check_invariants().unwrap();
}

#[test]
fn insert_runs_on_replace_then_writes_then_on_add_for_new_then_on_insert_for_all() {
    let mut world = recording_world();
    let e = world.spawn(A(1));
    take_log(&mut world);
    world.insert(e, (B(2), A(3))).unwrap();
    assert_eq!(
        take_log(&mut world),
        [
            (Replace, e, "A", Some(1)), // the old value, still readable
            (Add, e, "B", Some(2)),
            (Insert, e, "B", Some(2)),
            (Insert, e, "A", Some(3)),
        ]
    );
    // Overwriting in place (no table move): no on_add.
    world.insert(e, B(4)).unwrap();
    assert_eq!(take_log(&mut world), [(Replace, e, "B", Some(2)), (Insert, e, "B", Some(4))]);
    // Onto a dead entity: an error and no hook.
    world.despawn(e).unwrap();
    take_log(&mut world);
    assert!(world.insert(e, A(5)).is_err());
    assert_eq!(take_log(&mut world), []);
}

#[test]
fn remove_runs_on_replace_then_on_remove_with_the_values_still_readable() {
    let mut world = recording_world();
    let e = world.spawn((A(1), B(2), Plain(3)));
    take_log(&mut world);
    let (b, a) = world.remove::<(B, A)>(e).unwrap();
    assert_eq!((a, b), (A(1), B(2)));
    assert_eq!(
        take_log(&mut world),
        [(Replace, e, "B", Some(2)), (Replace, e, "A", Some(1)), (Remove, e, "B", Some(2)), (Remove, e, "A", Some(1))]
    );
    // A removal that fails (the entity lacks `A`) runs no hook.
    assert!(world.remove::<A>(e).is_err());
    assert!(world.remove::<(Plain, A)>(e).is_err());
    assert_eq!(take_log(&mut world), []);
    assert_eq!(world.get::<Plain>(e), Some(&Plain(3)));
    world.check_invariants().unwrap();
}

#[test]
fn despawn_runs_on_despawn_then_on_replace_then_on_remove_in_component_id_order() {
    let mut world = recording_world();
    let e = world.spawn((B(2), A(1)));
    take_log(&mut world);
    world.despawn(e).unwrap();
    assert_eq!(
        take_log(&mut world),
        [
            (Despawn, e, "A", Some(1)),
            (Despawn, e, "B", Some(2)),
            (Replace, e, "A", Some(1)),
            (Replace, e, "B", Some(2)),
            (Remove, e, "A", Some(1)),
            (Remove, e, "B", Some(2)),
        ]
    );
    assert!(!world.contains(e));
    assert!(world.despawn(e).is_err());
    assert_eq!(take_log(&mut world), []);
}

#[test]
fn clear_runs_the_despawn_hooks_of_every_entity_table_by_table_then_clears() {
    let mut world = recording_world();
    let e1 = world.spawn(A(1));
    let e2 = world.spawn((A(2), B(3)));
    let e3 = world.spawn(A(4));
    world.spawn(Plain(5));
    take_log(&mut world);
    world.clear();
    assert_eq!(
        take_log(&mut world),
        [
            (Despawn, e1, "A", Some(1)),
            (Replace, e1, "A", Some(1)),
            (Remove, e1, "A", Some(1)),
            (Despawn, e3, "A", Some(4)),
            (Replace, e3, "A", Some(4)),
            (Remove, e3, "A", Some(4)),
            (Despawn, e2, "A", Some(2)),
            (Despawn, e2, "B", Some(3)),
            (Replace, e2, "A", Some(2)),
            (Replace, e2, "B", Some(3)),
            (Remove, e2, "A", Some(2)),
            (Remove, e2, "B", Some(3)),
        ]
    );
    assert!(world.is_empty());
    world.check_invariants().unwrap();
}

#[test]
fn spawn_batch_runs_each_entitys_hooks_before_the_next_spawn() {
    let mut world = recording_world();
    let spawned: Vec<Entity> = world.spawn_batch((1..=3).map(A)).collect();
    let expected: Vec<Event> =
        spawned.iter().zip(1..).flat_map(|(&e, v)| [(Add, e, "A", Some(v)), (Insert, e, "A", Some(v))]).collect();
    assert_eq!(take_log(&mut world), expected);
    world.check_invariants().unwrap();
}

#[test]
fn a_second_hook_of_a_kind_runs_after_the_first() {
    let mut world = World::new();
    world.init_resource::<Log>();
    world
        .register_component_hooks::<A>()
        .on_add(|world, e| world.resource_mut::<Log>().0.push((Add, e, "first", None)));
    world
        .register_component_hooks::<A>()
        .on_add(|world, e| world.resource_mut::<Log>().0.push((Add, e, "second", None)));
    let e = world.spawn(A(0));
    assert_eq!(take_log(&mut world), [(Add, e, "first", None), (Add, e, "second", None)]);
}

#[derive(Component, Debug, PartialEq)]
struct Marker;

#[test]
fn commands_queued_by_a_hook_apply_before_the_operation_returns_and_fire_their_own_hooks() {
    let mut world = recording_world();
    world.register_component_hooks::<A>().on_add(|world, e| {
        world.commands().entity(e).insert(B(10));
    });
    let e = world.spawn(A(1));
    assert!(world.has::<B>(e), "the command applied before spawn returned");
    assert_eq!(
        take_log(&mut world),
        [(Add, e, "A", Some(1)), (Insert, e, "A", Some(1)), (Add, e, "B", Some(10)), (Insert, e, "B", Some(10))]
    );
    world.check_invariants().unwrap();
}

#[derive(Component)]
struct Parent;
#[derive(Component, Debug, PartialEq)]
struct ChildOf(Entity);

#[test]
fn an_on_add_hook_spawns_a_child_through_its_commands() {
    let mut world = World::new();
    world.register_component_hooks::<Parent>().on_add(|world, parent| {
        world.commands().spawn(ChildOf(parent));
    });
    let parent = world.spawn(Parent);
    let children: Vec<(Entity, &ChildOf)> = world.query::<(Entity, &ChildOf)>().collect();
    assert_eq!(children.len(), 1);
    assert_eq!(children[0].1, &ChildOf(parent));
    // Also in a batch: each parent's child exists before the next parent.
    let parents: Vec<Entity> = world.spawn_batch((0..3).map(|_| Parent)).collect();
    let mut owners: Vec<Entity> = world.query::<&ChildOf>().map(|c| c.0).collect();
    owners.sort();
    let mut expected = parents.clone();
    expected.push(parent);
    expected.sort();
    assert_eq!(owners, expected);
    assert_eq!(world.len(), 8);
    world.check_invariants().unwrap();
}

/// Despawning an entity despawns the one it links to.
#[derive(Component)]
struct Link(Entity);

fn despawn_linked(world: &mut World) {
    world.register_component_hooks::<Link>().on_despawn(|world, entity| {
        let next = world.get::<Link>(entity).unwrap().0;
        world.commands().despawn(next);
    });
}

#[test]
fn an_on_despawn_hook_despawns_the_linked_entity_right_after() {
    let mut world = World::new();
    despawn_linked(&mut world);
    let c = world.spawn(Plain(3));
    let b = world.spawn((Plain(2), Link(c)));
    let a = world.spawn((Plain(1), Link(b)));
    let other = world.spawn(Plain(4));
    world.despawn(a).unwrap();
    assert!(!world.contains(a) && !world.contains(b) && !world.contains(c));
    assert!(world.contains(other));
    world.check_invariants().unwrap();
}

#[test]
fn a_long_chain_of_hook_commands_applies_without_deep_recursion() {
    let mut world = World::new();
    despawn_linked(&mut world);
    let mut next = world.spawn(Plain(0));
    for i in 1..20_000 {
        next = world.spawn((Plain(i), Link(next)));
    }
    world.spawn(Plain(u32::MAX));
    world.despawn(next).unwrap();
    assert_eq!(world.len(), 1);
    world.check_invariants().unwrap();
}

#[derive(Default)]
struct Despawned(u32);

#[test]
fn commands_queued_by_clear_hooks_apply_after_the_clear_and_leave_it_empty() {
    let mut world = World::new();
    despawn_linked(&mut world);
    world.init_resource::<Despawned>();
    world.register_component_hooks::<A>().on_despawn(|world, _| {
        world.commands().add(|world: &mut World| world.resource_mut::<Despawned>().0 += 1);
        world.commands().spawn(Plain(0));
    });
    let c = world.spawn(Plain(3));
    world.spawn((A(1), Link(c)));
    world.spawn(A(2));
    world.clear();
    assert_eq!(world.resource::<Despawned>().0, 2);
    assert!(world.is_empty(), "the spawns of clear hooks are cleared too");
    world.check_invariants().unwrap();
    // The world works as before afterwards.
    world.spawn(A(3));
    world.clear();
    assert_eq!(world.resource::<Despawned>().0, 3);
    assert!(world.is_empty());
}

#[derive(Component, serde::Serialize, serde::Deserialize, Default)]
struct Name(String);

#[derive(Default)]
struct ByName(BTreeMap<String, Entity>);

fn name_index(world: &mut World) {
    world.init_resource::<ByName>();
    world
        .register_component_hooks::<Name>()
        .on_insert(|world, entity| {
            let name = world.get::<Name>(entity).unwrap().0.clone();
            world.resource_mut::<ByName>().0.insert(name, entity);
        })
        .on_replace(|world, entity| {
            let name = world.get::<Name>(entity).unwrap().0.clone();
            world.resource_mut::<ByName>().0.remove(&name);
        });
}

fn names(world: &World) -> Vec<(&str, Entity)> {
    world.resource::<ByName>().0.iter().map(|(name, &e)| (name.as_str(), e)).collect()
}

#[test]
fn a_name_index_stays_in_sync_through_spawn_rename_remove_despawn_and_clear() {
    let mut world = World::new();
    name_index(&mut world);
    let orc = world.spawn((Name("orc".into()), Plain(1)));
    let elf = world.spawn(Name("elf".into()));
    assert_eq!(names(&world), [("elf", elf), ("orc", orc)]);

    world.insert(orc, Name("troll".into())).unwrap();
    assert_eq!(names(&world), [("elf", elf), ("troll", orc)]);

    let removed = world.remove::<Name>(elf).unwrap();
    assert_eq!(removed.0, "elf");
    assert_eq!(names(&world), [("troll", orc)]);

    world.insert(elf, (Plain(2), Name("elf".into()))).unwrap();
    assert_eq!(names(&world), [("elf", elf), ("troll", orc)]);

    world.despawn(orc).unwrap();
    assert_eq!(names(&world), [("elf", elf)]);

    let imps: Vec<Entity> = world.spawn_batch((0..2).map(|i| Name(format!("imp{i}")))).collect();
    assert_eq!(names(&world), [("elf", elf), ("imp0", imps[0]), ("imp1", imps[1])]);

    // Through deferred commands too.
    let mut queue = CommandQueue::default();
    let mut commands = Commands::new(&mut queue, &world);
    let goblin = commands.spawn(Name("goblin".into())).id();
    commands.entity(imps[0]).insert(Name("imp2".into()));
    commands.entity(imps[1]).remove::<Name>();
    queue.apply(&mut world);
    assert_eq!(names(&world), [("elf", elf), ("goblin", goblin), ("imp2", imps[0])]);

    world.clear();
    assert_eq!(names(&world), []);
    world.check_invariants().unwrap();
}

#[test]
#[cfg(feature = "serde")]
fn loading_a_save_game_runs_the_hooks_of_the_loaded_components() {
    let mut saved = World::new();
    saved.register_serde::<Name>("Name");
    saved.spawn(Name("orc".into()));
    saved.spawn((Name("elf".into()), Plain(0)));
    let json = saved.save_json().unwrap().data;

    let mut world = World::new();
    world.register_serde::<Name>("Name");
    name_index(&mut world);
    let kept = world.spawn(Name("imp".into()));
    world.load_into_json(&json).unwrap();
    let index = names(&world);
    assert_eq!(index.iter().map(|&(name, _)| name).collect::<Vec<_>>(), ["elf", "imp", "orc"]);
    for (name, entity) in index {
        assert_eq!(world.get::<Name>(entity).map(|n| n.0.as_str()), Some(name));
    }
    assert!(names(&world).contains(&("imp", kept)));
}

/// A position on a grid of 10 × 10 cells.
#[derive(Component, Clone, Copy)]
struct Pos(i32, i32);

impl Pos {
    fn cell(self) -> (i32, i32) {
        (self.0.div_euclid(10), self.1.div_euclid(10))
    }
}

#[derive(Default)]
struct Grid(BTreeMap<(i32, i32), BTreeSet<Entity>>);

fn grid_index(world: &mut World) {
    world.init_resource::<Grid>();
    world
        .register_component_hooks::<Pos>()
        .on_insert(|world, entity| {
            let cell = world.get::<Pos>(entity).unwrap().cell();
            world.resource_mut::<Grid>().0.entry(cell).or_default().insert(entity);
        })
        .on_replace(|world, entity| {
            let cell = world.get::<Pos>(entity).unwrap().cell();
            let grid = &mut world.resource_mut::<Grid>().0;
            let set = grid.get_mut(&cell).unwrap();
            assert!(set.remove(&entity), "the entity was in its cell");
            if set.is_empty() {
                grid.remove(&cell);
            }
        });
}

/// The grid recomputed from scratch, to compare with the one the hooks keep.
fn grid_by_query(world: &World) -> BTreeMap<(i32, i32), BTreeSet<Entity>> {
    let mut grid: BTreeMap<_, BTreeSet<_>> = BTreeMap::new();
    for (entity, pos) in world.query::<(Entity, &Pos)>() {
        grid.entry(pos.cell()).or_default().insert(entity);
    }
    grid
}

#[test]
fn a_spatial_grid_kept_by_hooks_matches_the_positions() {
    let mut world = World::new();
    grid_index(&mut world);
    let a = world.spawn(Pos(1, 1));
    let b = world.spawn((Pos(15, 3), Plain(0)));
    let c = world.spawn(Pos(-5, 2));
    let cells = |world: &World| world.resource::<Grid>().0.clone();
    assert_eq!(
        cells(&world),
        BTreeMap::from([((0, 0), BTreeSet::from([a])), ((1, 0), BTreeSet::from([b])), ((-1, 0), BTreeSet::from([c]))])
    );
    world.insert(a, Pos(12, 8)).unwrap(); // moves into b's cell
    world.insert(c, Pos(-4, 2)).unwrap(); // stays in its cell
    assert_eq!(cells(&world), BTreeMap::from([((1, 0), BTreeSet::from([a, b])), ((-1, 0), BTreeSet::from([c]))]));
    world.remove::<Pos>(b).unwrap();
    world.despawn(c).unwrap();
    assert_eq!(cells(&world), BTreeMap::from([((1, 0), BTreeSet::from([a]))]));

    // Many moves, checked against a recomputation.
    let many: Vec<Entity> = world.spawn_batch((0..200).map(|i| Pos(i * 7 % 100, i * 13 % 100))).collect();
    for (i, &e) in many.iter().enumerate() {
        let i = i as i32;
        match i % 4 {
            0 => world.insert(e, Pos(i * 3 % 50, -i)).unwrap(),
            1 => world.despawn(e).unwrap(),
            2 => drop(world.remove::<Pos>(e).unwrap()),
            _ => {}
        }
    }
    assert_eq!(cells(&world), grid_by_query(&world));
    world.clear();
    assert!(cells(&world).is_empty());
}

/// A hook that panics when the resource says so.
#[derive(Default)]
struct Armed(Option<Kind>);

fn bomb(world: &mut World) {
    fn trap(kind: Kind) -> impl Fn(&mut HookWorld<'_>, Entity) + Send + Sync + 'static {
        move |world, entity| {
            // Queue a command first: it must be dropped with the panic.
            world.commands().spawn(Marker);
            if world.resource::<Armed>().0 == Some(kind) {
                panic!("{kind:?} hook of {entity} goes off");
            }
        }
    }
    world.init_resource::<Armed>();
    world
        .register_component_hooks::<A>()
        .on_add(trap(Add))
        .on_insert(trap(Insert))
        .on_replace(trap(Replace))
        .on_remove(trap(Remove))
        .on_despawn(trap(Despawn));
}

fn arm(world: &mut World, kind: Option<Kind>) {
    world.resource_mut::<Armed>().0 = kind;
}

fn markers(world: &World) -> usize {
    world.query::<&Marker>().count()
}

#[test]
fn a_panicking_hook_leaves_the_world_consistent() {
    let mut world = World::new();
    bomb(&mut world);
    let keep = world.spawn((A(0), B(0)));
    let base = markers(&world);

    // After the write: the entity is spawned; the command of the hook that
    // finished (on_add) applies, the panicking hook's (on_insert) is dropped.
    arm(&mut world, Some(Insert));
    let before = world.len();
    assert!(catch_unwind(AssertUnwindSafe(|| world.spawn((A(1), B(1))))).is_err());
    world.check_invariants().unwrap();
    // The entity (spawned before on_insert), on_add's Marker, and the entity
    // the dropped command had reserved, live and empty after the flush.
    assert_eq!(world.len(), before + 3);
    assert_eq!(markers(&world), base + 1, "only the panicking hook's command was dropped");

    arm(&mut world, Some(Add));
    assert!(catch_unwind(AssertUnwindSafe(|| world.spawn_batch((0..5).map(A)).count())).is_err());
    world.check_invariants().unwrap();

    // Before the change: nothing happens.
    arm(&mut world, Some(Replace));
    assert!(catch_unwind(AssertUnwindSafe(|| world.insert(keep, A(9)))).is_err());
    world.check_invariants().unwrap();
    assert_eq!(world.get::<A>(keep), Some(&A(0)));
    assert!(catch_unwind(AssertUnwindSafe(|| world.remove::<A>(keep))).is_err());
    world.check_invariants().unwrap();
    assert_eq!(world.get::<A>(keep), Some(&A(0)));

    arm(&mut world, Some(Despawn));
    assert!(catch_unwind(AssertUnwindSafe(|| world.despawn(keep))).is_err());
    world.check_invariants().unwrap();
    assert!(world.contains(keep));
    // The dropped spawn commands left reserved handles: they become live,
    // empty entities at the next flush, as with any dropped command queue.
    world.flush();
    let len = world.len();
    assert!(catch_unwind(AssertUnwindSafe(|| world.clear())).is_err());
    world.check_invariants().unwrap();
    // Nothing was cleared; the panicking hook's dropped command had reserved
    // an entity, live and empty after the operation's flush.
    assert_eq!(world.len(), len + 1, "nothing was cleared");

    // A hook run by a hook's command panics: the queue is reset, and the
    // next operation's commands apply as usual.
    arm(&mut world, Some(Remove));
    world.register_component_hooks::<B>().on_add(|world, entity| {
        world.commands().entity(entity).remove::<A>();
    });
    assert!(catch_unwind(AssertUnwindSafe(|| world.spawn((A(2), B(2))))).is_err());
    world.check_invariants().unwrap();
    arm(&mut world, None);
    let e = world.spawn((A(3), B(3)));
    assert!(!world.has::<A>(e), "the command of on_add applied");
    world.check_invariants().unwrap();

    arm(&mut world, None);
    world.clear();
    assert!(world.is_empty());
    world.check_invariants().unwrap();
}

#[derive(Debug, PartialEq)]
struct Spotted(Entity, usize);

#[test]
fn hooks_read_resources_run_queries_and_send_events() {
    let mut world = World::new();
    world.add_event::<Spotted>();
    world.register_component_hooks::<A>().on_add(|world, entity| {
        let count = world.query_filtered::<Entity, With<A>>().count();
        assert!(world.query_one::<&A>(entity).is_ok());
        assert!(world.entity(entity).unwrap().has::<A>());
        world.send_event(Spotted(entity, count));
    });
    let a = world.spawn(A(1));
    let b = world.spawn(A(2));
    let mut cursor = EventCursor::<Spotted>::default();
    let seen: Vec<&Spotted> = cursor.read(world.resource::<Events<Spotted>>()).collect();
    assert_eq!(seen, [&Spotted(a, 1), &Spotted(b, 2)]);
}

#[test]
fn hooks_fire_for_commands_applied_by_a_schedule() {
    let mut world = recording_world();
    let doomed = world.spawn(A(1));
    let keep = world.spawn(A(2));
    take_log(&mut world);
    let mut schedule = Schedule::new();
    schedule.add_system(move |mut commands: Commands| {
        commands.despawn(doomed);
        commands.entity(keep).insert(B(3));
    });
    schedule.run(&mut world);
    assert_eq!(
        take_log(&mut world),
        [
            (Despawn, doomed, "A", Some(1)),
            (Replace, doomed, "A", Some(1)),
            (Remove, doomed, "A", Some(1)),
            (Add, keep, "B", Some(3)),
            (Insert, keep, "B", Some(3)),
        ]
    );
    assert!(!world.contains(doomed));
    world.check_invariants().unwrap();
}

#[test]
fn a_world_with_hooks_is_still_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>(_: &T) {}
    let world = recording_world();
    assert_send_sync(&world);
}
