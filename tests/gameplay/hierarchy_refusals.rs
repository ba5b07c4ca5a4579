//! Inserts the hierarchy refuses, and what they leave: a relationship
//! pointing at its own entity or below it puts back the value it replaced
//! (the source returns to its old place in its old target's list), and a
//! target list inserted by hand is undone (the engine keeps the lists).
//! Each case checks the tree, the lists' order, the warning, and the
//! hooks and observers a user sees, for `ChildOf` and a user pair.

#![cfg(all(feature = "hierarchy", feature = "observers"))]

use archetable::prelude::*;

use crate::logs;

/// A user relationship pair, kept by the same engine hooks as `ChildOf`.
#[derive(Component, Debug, PartialEq, Clone, Copy)]
#[component(relationship(target = Crew))]
struct CrewOf(Entity);

#[derive(Component, Debug)]
#[component(relationship_target(source = CrewOf))]
struct Crew(SourceList);

#[derive(Default)]
struct Log(Vec<String>);

/// Logs every user hook and lifecycle observer of relationship `R` (with
/// the target the source points at when it runs) and every lifecycle
/// observer of its list type `L`.
fn watch<R: Relationship + std::fmt::Debug, L: Component>(world: &mut World) {
    world.init_resource::<Log>();
    let seen = |w: &World, e: Entity| w.get::<R>(e).map(|r| format!("{}", r.target())).unwrap_or("-".into());
    world
        .register_component_hooks::<R>()
        .on_add(move |w, e| {
            let s = seen(w.world(), e);
            w.resource_mut::<Log>().0.push(format!("hook add {s}"))
        })
        .on_insert(move |w, e| {
            let s = seen(w.world(), e);
            w.resource_mut::<Log>().0.push(format!("hook insert {s}"))
        })
        .on_replace(move |w, e| {
            let s = seen(w.world(), e);
            w.resource_mut::<Log>().0.push(format!("hook replace {s}"))
        })
        .on_remove(move |w, e| {
            let s = seen(w.world(), e);
            w.resource_mut::<Log>().0.push(format!("hook remove {s}"))
        });
    fn note<E: Event, R: Relationship>(world: &mut World, what: &'static str) {
        world.observe(move |trigger: Trigger<E>, sources: Query<&R>, mut log: ResMut<Log>| {
            let e = trigger.target().unwrap();
            let s = sources.get(e).map(|r| format!("{}", r.target())).unwrap_or("-".into());
            log.0.push(format!("observer {what} {s}"));
        });
    }
    note::<OnAdd<R>, R>(world, "add");
    note::<OnInsert<R>, R>(world, "insert");
    note::<OnReplace<R>, R>(world, "replace");
    note::<OnRemove<R>, R>(world, "remove");
    world.observe(|_: Trigger<OnAdd<L>>, mut log: ResMut<Log>| log.0.push("list added".into()));
    world.observe(|_: Trigger<OnRemove<L>>, mut log: ResMut<Log>| log.0.push("list removed".into()));
}

fn take_log(world: &mut World) -> Vec<String> {
    std::mem::take(&mut world.resource_mut::<Log>().0)
}

/// What a user sees of a refused insert of a link to `refused` that
/// replaced a link to `old`: the insert's hooks, then, once the world
/// method is over, the insert that puts the old value back.
fn refused_then_put_back(refused: Entity, old: Entity) -> Vec<String> {
    [
        format!("hook replace {old}"),
        format!("observer replace {old}"),
        format!("hook insert {refused}"),
        format!("observer insert {refused}"),
        format!("hook replace {refused}"),
        format!("observer replace {refused}"),
        format!("hook insert {old}"),
        format!("observer insert {old}"),
    ]
    .into()
}

/// `parent` with children `a`, `c`, `b` (in that order) and `c` with one
/// child `d`.
fn family(world: &mut World) -> [Entity; 5] {
    let parent = world.spawn(());
    let a = world.spawn(ChildOf(parent));
    let c = world.spawn(ChildOf(parent));
    let b = world.spawn(ChildOf(parent));
    let d = world.spawn(ChildOf(c));
    [parent, a, c, b, d]
}

#[test]
fn child_of_itself_is_refused_and_the_old_parent_comes_back_in_its_place() {
    logs::capture();
    let mut world = World::new();
    let [parent, a, c, b, d] = family(&mut world);
    watch::<ChildOf, Children>(&mut world);
    world.insert(c, ChildOf(c)).unwrap();
    assert_eq!(world.parent(c), Some(parent));
    assert_eq!(world.get::<ChildOf>(c), Some(&ChildOf(parent)));
    assert_eq!(world.children(parent), [a, c, b], "back in its place, not at the end");
    assert_eq!(world.children(c), [d]);
    assert_eq!(take_log(&mut world), refused_then_put_back(c, parent));
    assert_eq!(
        logs::warnings(),
        [format!(
            "archetable: {c} cannot point at {c} through `ChildOf`: an entity cannot be its own target; \
             the `ChildOf` it replaced (pointing at {parent}) was put back"
        )]
    );
    world.check_invariants().unwrap();
}

#[test]
fn child_of_its_own_child_is_refused_and_the_old_parent_comes_back_in_its_place() {
    logs::capture();
    let mut world = World::new();
    let [parent, a, c, b, d] = family(&mut world);
    watch::<ChildOf, Children>(&mut world);
    world.insert(c, ChildOf(d)).unwrap();
    assert_eq!(world.parent(c), Some(parent));
    assert_eq!(world.children(parent), [a, c, b]);
    assert_eq!(world.children(c), [d]);
    assert_eq!(world.parent(d), Some(c));
    assert_eq!(take_log(&mut world), refused_then_put_back(d, parent));
    assert_eq!(
        logs::warnings(),
        [format!(
            "archetable: {c} cannot point at {d} through `ChildOf`: the target is a descendant of the source, \
             which would make a cycle; the `ChildOf` it replaced (pointing at {parent}) was put back"
        )]
    );
    world.check_invariants().unwrap();
    // A grandchild is below it too.
    let e = world.spawn(ChildOf(d));
    world.insert(c, ChildOf(e)).unwrap();
    assert_eq!((world.parent(c), world.parent(e)), (Some(parent), Some(d)));
    assert_eq!(world.children(parent), [a, c, b]);
    world.check_invariants().unwrap();
}

#[test]
fn an_only_child_refused_keeps_its_parents_list_without_removing_it() {
    let mut world = World::new();
    let parent = world.spawn(());
    let only = world.spawn(ChildOf(parent));
    watch::<ChildOf, Children>(&mut world);
    world.insert(only, ChildOf(only)).unwrap();
    assert_eq!(world.children(parent), [only]);
    let log = take_log(&mut world);
    assert_eq!(log, refused_then_put_back(only, parent), "no list removed and added again");
    world.check_invariants().unwrap();
}

#[test]
fn a_refused_link_in_a_wide_list_goes_back_between_the_same_siblings() {
    let mut world = World::new();
    let parent = world.spawn(());
    let kids: Vec<Entity> = (0..100).map(|_| world.spawn(ChildOf(parent))).collect();
    // Holes and an index, so the place is found through them.
    for &kid in kids.iter().step_by(7) {
        world.despawn(kid).unwrap();
    }
    let expected: Vec<Entity> = world.children(parent).to_vec();
    for &kid in [kids[50], kids[1], kids[99]].iter() {
        world.insert(kid, ChildOf(kid)).unwrap();
        assert_eq!(world.children(parent), expected);
    }
    let grandchild = world.spawn(ChildOf(kids[50]));
    world.insert(kids[50], ChildOf(grandchild)).unwrap();
    assert_eq!(world.children(parent), expected);
    world.check_invariants().unwrap();
}

/// Runs `record`'s commands on `world`.
fn with_commands(world: &mut World, record: impl FnOnce(&mut Commands)) {
    let mut queue = CommandQueue::default();
    record(&mut Commands::new(&mut queue, world));
    queue.apply(world);
}

/// Marks an entity whose `on_add` hook queues commands.
#[derive(Component)]
struct Trip;

#[test]
fn refused_links_through_commands_and_hooks_are_undone_too() {
    let mut world = World::new();
    let [parent, a, c, b, d] = family(&mut world);
    with_commands(&mut world, |commands| {
        commands.entity(c).insert(ChildOf(d));
        commands.entity(a).insert(ChildOf(a));
    });
    assert_eq!((world.parent(a), world.parent(c)), (Some(parent), Some(parent)));
    assert_eq!(world.children(parent), [a, c, b]);
    world.check_invariants().unwrap();

    // A hook's commands, applied inside the operation that ran the hook.
    world.register_component_hooks::<Trip>().on_add(move |w, e| {
        w.commands().entity(e).insert(ChildOf(e));
        w.commands().entity(c).insert(ChildOf(d));
    });
    world.insert(b, Trip).unwrap();
    assert_eq!(world.children(parent), [a, c, b]);
    assert_eq!((world.parent(b), world.parent(c)), (Some(parent), Some(parent)));
    world.check_invariants().unwrap();
}

#[test]
fn a_link_removed_then_refused_in_one_operation_stays_removed() {
    // The removal forgets where the source was: the refused insert that
    // follows replaced nothing, so it is removed.
    let mut world = World::new();
    let [parent, a, c, b, _] = family(&mut world);
    world.register_component_hooks::<Trip>().on_add(move |w, _| {
        w.commands().entity(c).remove::<ChildOf>();
        w.commands().entity(c).insert(ChildOf(c));
    });
    world.spawn(Trip);
    assert_eq!(world.parent(c), None);
    assert_eq!(world.children(parent), [a, b]);
    world.check_invariants().unwrap();
}

#[test]
fn a_refused_link_whose_old_target_dies_meanwhile_is_removed() {
    // The hook's command despawns the old parent before the refusal is
    // undone: nothing to go back to.
    let mut world = World::new();
    let [parent, _, c, _, _] = family(&mut world);
    world.register_component_hooks::<ChildOf>().on_insert(move |w, e| {
        if w.get::<ChildOf>(e) == Some(&ChildOf(e)) {
            w.commands().entity(parent).despawn();
        }
    });
    world.insert(c, ChildOf(c)).unwrap();
    assert!(!world.contains(parent));
    assert_eq!(world.parent(c), None);
    world.check_invariants().unwrap();
}

#[test]
fn a_user_relationship_refused_puts_back_the_value_it_replaced() {
    logs::capture();
    let mut world = World::new();
    let ship = world.spawn(());
    let [first, mate, last] = [(); 3].map(|_| world.spawn(CrewOf(ship)));
    let cabin_boy = world.spawn(CrewOf(mate));
    watch::<CrewOf, Crew>(&mut world);
    world.insert(mate, CrewOf(mate)).unwrap();
    assert_eq!(take_log(&mut world), refused_then_put_back(mate, ship));
    world.insert(mate, CrewOf(cabin_boy)).unwrap();
    assert_eq!(take_log(&mut world), refused_then_put_back(cabin_boy, ship));
    assert_eq!(world.get::<CrewOf>(mate), Some(&CrewOf(ship)));
    assert_eq!(world.get::<Crew>(ship).unwrap().0, [first, mate, last]);
    assert_eq!(world.get::<Crew>(mate).unwrap().0, [cabin_boy]);
    let warnings = logs::warnings();
    assert_eq!(warnings.len(), 2);
    assert!(
        warnings[1].ends_with(&format!("the `CrewOf` it replaced (pointing at {ship}) was put back")),
        "{warnings:?}"
    );
    world.check_invariants().unwrap();
}

#[test]
fn a_refused_link_that_replaced_nothing_is_removed() {
    let mut world = World::new();
    let lone = world.spawn(());
    world.init_resource::<Log>();
    watch::<ChildOf, Children>(&mut world);
    world.insert(lone, ChildOf(lone)).unwrap();
    assert_eq!(world.parent(lone), None);
    assert_eq!(
        take_log(&mut world),
        [
            format!("hook add {lone}"),
            format!("observer add {lone}"),
            format!("hook insert {lone}"),
            format!("observer insert {lone}"),
            format!("hook replace {lone}"),
            format!("observer replace {lone}"),
            format!("hook remove {lone}"),
            format!("observer remove {lone}"),
        ]
    );
    world.check_invariants().unwrap();
}

// ---------------------------------------------------------------------
// Target lists inserted by hand

#[test]
fn a_children_list_inserted_by_hand_is_undone_and_the_children_stay() {
    logs::capture();
    let mut world = World::new();
    let [parent, a, c, b, d] = family(&mut world);
    let stranger = world.spawn(());
    watch::<ChildOf, Children>(&mut world);
    world.insert(parent, Children::default()).unwrap();
    assert_eq!(world.children(parent), [a, c, b], "the old list, in its order");
    assert_eq!(world.children(c), [d]);
    assert!([a, c, b].iter().all(|&e| world.parent(e) == Some(parent)));
    assert_eq!(world.parent(stranger), None);
    assert_eq!(take_log(&mut world), Vec::<String>::new(), "no child lost or gained its link");
    assert_eq!(
        logs::warnings(),
        [format!(
            "archetable: a `Children` list was inserted on {parent} by hand; the engine keeps it from its \
             sources' `ChildOf`, so the insert was undone"
        )]
    );
    world.check_invariants().unwrap();
}

#[test]
fn a_list_inserted_by_hand_where_there_was_none_goes() {
    let mut world = World::new();
    let [_, a, ..] = family(&mut world);
    let lone = world.spawn(());
    world.insert(lone, Children::default()).unwrap();
    assert!(!world.has::<Children>(lone));
    // Spawned with one, through commands, on a leaf child.
    let spawned = world.spawn(Children::default());
    assert!(!world.has::<Children>(spawned));
    with_commands(&mut world, |commands| {
        commands.entity(a).insert(Children::default());
    });
    assert!(!world.has::<Children>(a));
    world.check_invariants().unwrap();
}

#[test]
fn a_user_list_copied_by_hand_onto_another_target_is_undone() {
    let mut world = World::new();
    let (ship, boat) = (world.spawn(()), world.spawn(()));
    let crew: Vec<Entity> = (0..40).map(|_| world.spawn(CrewOf(ship))).collect();
    let rowers: Vec<Entity> = (0..3).map(|_| world.spawn(CrewOf(boat))).collect();
    watch::<CrewOf, Crew>(&mut world);
    // The ship's list on the boat, and an empty one on the ship.
    let copy = world.get::<Crew>(ship).unwrap().0.clone();
    world.insert(boat, Crew(copy)).unwrap();
    world.insert(ship, Crew(SourceList::default())).unwrap();
    assert_eq!(world.get::<Crew>(ship).unwrap().0, crew);
    assert_eq!(world.get::<Crew>(boat).unwrap().0, rowers);
    assert!(crew.iter().all(|&e| world.get::<CrewOf>(e) == Some(&CrewOf(ship))));
    assert_eq!(take_log(&mut world), Vec::<String>::new());
    world.check_invariants().unwrap();
    // Removing a list by hand still orphans its sources.
    world.remove::<Crew>(boat).unwrap();
    assert!(rowers.iter().all(|&e| world.get::<CrewOf>(e).is_none()));
    world.check_invariants().unwrap();
}
