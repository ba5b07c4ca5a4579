//! Parent/child trees and user-defined relationships: the lists the engine
//! keeps stay exact through every path, refusals change nothing, and
//! recursive despawns run every hook.

#![cfg(feature = "hierarchy")]

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use archetable::prelude::*;

#[derive(Component, Debug, PartialEq, Clone, Copy)]
struct Name(&'static str);

fn tree(world: &mut World) -> [Entity; 5] {
    // root ─┬─ a ── a1
    //       └─ b ── b1
    let root = world.spawn(Name("root"));
    let a = world.spawn((Name("a"), ChildOf(root)));
    let b = world.spawn((Name("b"), ChildOf(root)));
    let a1 = world.spawn((Name("a1"), ChildOf(a)));
    let b1 = world.spawn((Name("b1"), ChildOf(b)));
    [root, a, b, a1, b1]
}

#[test]
fn children_follow_every_change_of_child_of() {
    let mut world = World::new();
    let [root, a, b, a1, b1] = tree(&mut world);
    assert_eq!(world.children(root), [a, b]);
    assert_eq!(world.children(a), [a1]);
    assert_eq!(world.parent(b1), Some(b));

    // Overwriting ChildOf moves the child; the emptied list goes away.
    world.insert(a1, ChildOf(b)).unwrap();
    assert_eq!(world.children(b), [b1, a1]);
    assert!(!world.has::<Children>(a));
    // Removing it takes the child out.
    world.remove::<ChildOf>(b1).unwrap();
    assert_eq!(world.children(b), [a1]);
    // A despawned child leaves its parent's list.
    world.despawn(a1).unwrap();
    assert!(!world.has::<Children>(b));
    assert_eq!(world.children(root), [a, b]);
    world.check_invariants().unwrap();
}

#[test]
fn despawning_a_parent_orphans_its_children() {
    let mut world = World::new();
    let [root, a, b, a1, _] = tree(&mut world);
    world.despawn(root).unwrap();
    assert_eq!((world.parent(a), world.parent(b)), (None, None));
    assert_eq!(world.children(a), [a1], "grandchildren keep their own parent");
    assert_eq!(world.len(), 4);
    world.check_invariants().unwrap();
    // Removing a Children list by hand orphans too.
    world.remove::<Children>(a).unwrap();
    assert_eq!(world.parent(a1), None);
    world.check_invariants().unwrap();
}

#[test]
fn set_parent_refuses_without_changing_anything() {
    let mut world = World::new();
    let [root, a, _, a1, _] = tree(&mut world);
    let dead = world.spawn(());
    world.despawn(dead).unwrap();
    assert_eq!(world.set_parent(dead, root), Err(HierarchyError::ChildNotAlive(dead)));
    assert_eq!(world.set_parent(a, dead), Err(HierarchyError::ParentNotAlive(dead)));
    assert_eq!(world.set_parent(a, a), Err(HierarchyError::OwnParent(a)));
    assert_eq!(world.set_parent(root, a1), Err(HierarchyError::Cycle { child: root, parent: a1 }));
    assert_eq!(world.set_parent(a, a1), Err(HierarchyError::Cycle { child: a, parent: a1 }));
    assert_eq!(world.children(root).len(), 2);
    assert_eq!(world.parent(root), None);
    // An entity of a bigger world is not alive in this one.
    let mut other = World::new();
    let far = (0..20).map(|_| other.spawn(())).last().unwrap();
    assert_eq!(world.set_parent(a, far), Err(HierarchyError::ParentNotAlive(far)));

    world.set_parent(a1, root).unwrap();
    assert_eq!(world.children(root).len(), 3);
    assert_eq!(world.remove_parent(a1), Ok(Some(root)));
    assert_eq!(world.remove_parent(a1), Ok(None));
    assert_eq!(world.remove_parent(dead), Err(EntityError::NoSuchEntity(dead)));
    world.check_invariants().unwrap();
}

#[test]
fn inserts_that_would_break_the_forest_are_undone() {
    let mut world = World::new();
    let [root, a, b, a1, b1] = tree(&mut world);
    let ghost = world.spawn(());
    world.despawn(ghost).unwrap();
    world.insert(root, ChildOf(b1)).unwrap();
    assert_eq!(world.parent(root), None, "a cycle");
    assert_eq!(world.children(b1), [], "the would-be parent never listed it");
    let orphan = world.spawn(ChildOf(ghost));
    assert_eq!(world.parent(orphan), None, "a dead parent");
    // Its own parent: the refused value goes, and the one it replaced
    // comes back, at its old place in its parent's list.
    world.insert(a, ChildOf(a)).unwrap();
    assert_eq!(world.parent(a), Some(root), "its own parent");
    assert_eq!(world.children(root), [a, b]);
    assert_eq!(world.children(a), [a1]);
    world.check_invariants().unwrap();
}

#[test]
fn traversal_orders() {
    let mut world = World::new();
    let [root, a, b, a1, b1] = tree(&mut world);
    let lone = world.spawn(());
    let other_root = world.spawn(());
    let c = world.spawn(ChildOf(other_root));
    assert_eq!(world.ancestors(a1).collect::<Vec<_>>(), [a, root]);
    assert_eq!(world.descendants(root).collect::<Vec<_>>(), [a, a1, b, b1]);
    assert_eq!(world.hierarchy_order(), [root, a, a1, b, b1, other_root, c]);
    assert_eq!(world.descendants(lone).count(), 0);
}

#[test]
fn despawn_recursive_runs_every_hook_and_counts() {
    let removed = Arc::new(AtomicUsize::new(0));
    let mut world = World::new();
    let count = removed.clone();
    world.register_component_hooks::<Name>().on_remove(move |_, _| {
        count.fetch_add(1, Ordering::SeqCst);
    });
    let [root, a, _, _, _] = tree(&mut world);
    let keep = world.spawn(Name("keep"));
    assert_eq!(world.despawn_recursive(a), Ok(2));
    assert_eq!(world.children(root).len(), 1);
    assert_eq!(world.despawn_recursive(root), Ok(3));
    assert_eq!(removed.load(Ordering::SeqCst), 5);
    assert_eq!(world.len(), 1);
    assert!(world.contains(keep));
    assert_eq!(world.despawn_recursive(root), Err(EntityError::NoSuchEntity(root)));
    world.check_invariants().unwrap();
}

#[test]
fn a_panicking_hook_midway_through_a_recursive_despawn_leaves_a_consistent_world() {
    let mut world = World::new();
    world.register_component_hooks::<Name>().on_despawn(|world, entity| {
        if world.get::<Name>(entity) == Some(&Name("b")) {
            panic!("b refuses to go");
        }
    });
    let [root, a, b, a1, b1] = tree(&mut world);
    let result = catch_unwind(AssertUnwindSafe(|| world.despawn_recursive(root)));
    assert!(result.is_err());
    world.check_invariants().unwrap();
    // Deepest first: b1 went, b refused, the rest were never reached.
    assert!(!world.contains(b1));
    for e in [root, a, b, a1] {
        assert!(world.contains(e));
    }
    assert_eq!(world.len(), 4);
    assert_eq!(world.children(b), [], "b's emptied list was removed");
    assert!(!world.has::<Children>(b));
    assert_eq!(world.children(root), [a, b]);
}

#[test]
fn commands_build_and_change_trees() {
    let mut world = World::new();
    let mut queue = CommandQueue::default();
    let (car, wheels) = {
        let mut commands = Commands::new(&mut queue, &world);
        let mut wheels = Vec::new();
        let car = commands
            .spawn(Name("car"))
            .with_children(|car| {
                for name in ["fl", "fr"] {
                    let mut wheel = car.spawn(Name(name));
                    wheel.with_children(|wheel| {
                        wheel.spawn(Name("hubcap"));
                    });
                    wheels.push(wheel.id());
                }
            })
            .id();
        (car, wheels)
    };
    queue.apply(&mut world);
    assert_eq!(world.children(car), wheels);
    assert_eq!(world.descendants(car).count(), 4);
    world.check_invariants().unwrap();

    let garage = world.spawn(Name("garage"));
    let mut commands = Commands::new(&mut queue, &world);
    commands.entity(car).set_parent(garage);
    commands.entity(wheels[0]).remove_parent();
    commands.entity(garage).set_parent(wheels[1]);
    let report = queue.apply(&mut world);
    assert_eq!(world.parent(car), Some(garage));
    assert_eq!(world.parent(wheels[0]), None);
    assert_eq!(report.skipped(), 1, "a cycle is refused and reported");
    assert!(report.examples()[0].reason.contains("descendant"), "{}", report.examples()[0]);

    let mut commands = Commands::new(&mut queue, &world);
    commands.entity(garage).despawn_recursive();
    commands.entity(car).set_parent(garage);
    let report = queue.apply(&mut world);
    assert_eq!(report.skipped(), 1, "a command on an entity despawned earlier is skipped and counted");
    assert_eq!(world.len(), 2, "the wheel taken off and its hubcap stay");
    world.check_invariants().unwrap();
}

#[test]
fn reparenting_is_a_change_of_a_tracked_child_of() {
    let mut world = World::new();
    let [root, _, b, a1, _] = tree(&mut world);
    let mut changed = QueryState::<Entity, Changed<ChildOf>>::new(&mut world);
    assert_eq!(changed.iter(&world).count(), 4);
    assert_eq!(changed.iter(&world).count(), 0);
    world.set_parent(a1, b).unwrap();
    assert_eq!(changed.iter(&world).collect::<Vec<_>>(), [a1]);
    let _ = root;
}

/// An item lies in the inventory of the entity it names.
#[derive(Component, Debug, PartialEq)]
#[component(relationship(target = Inventory))]
struct InInventory(Entity);

/// The items of an inventory; they go with it.
#[derive(Component, Debug)]
#[component(relationship_target(source = InInventory, despawn_sources))]
struct Inventory {
    items: SourceList,
}

/// A looser relationship whose sources survive their target.
#[derive(Component, Debug, PartialEq)]
#[component(relationship(target = Followers))]
struct Follows {
    leader: Entity,
}

#[derive(Component, Debug)]
#[component(relationship_target(source = Follows))]
struct Followers(SourceList);

#[test]
fn user_relationships_use_the_same_machinery() {
    let mut world = World::new();
    let hero = world.spawn(Name("hero"));
    let sword = world.spawn((Name("sword"), InInventory(hero)));
    let potion = world.spawn((Name("potion"), InInventory(hero)));
    let dog = world.spawn(Follows { leader: hero });
    assert_eq!(world.get::<Inventory>(hero).unwrap().items, [sword, potion]);
    assert_eq!(world.get::<Followers>(hero).unwrap().0, [dog]);
    world.remove::<InInventory>(sword).unwrap();
    assert_eq!(world.get::<Inventory>(hero).unwrap().items, [potion]);
    world.check_invariants().unwrap();

    world.despawn(hero).unwrap();
    assert!(!world.contains(potion), "despawn_sources: the items go with their owner");
    assert!(world.contains(sword), "an item taken out stays");
    assert!(world.contains(dog) && !world.has::<Follows>(dog), "a follower is orphaned");
    world.check_invariants().unwrap();
}

/// A crew member serves on the ship it names.
#[derive(Component, Debug, PartialEq)]
#[component(relationship(target = Crew))]
struct CrewOf(Entity);

/// A list that keeps change ticks: joining and leaving are changes.
#[derive(Component, Debug)]
#[component(relationship_target(source = CrewOf), track_changes)]
struct Crew(SourceList);

#[test]
fn a_tracked_target_list_reports_joins_and_leaves_as_changes() {
    let mut world = World::new();
    let ship = world.spawn(Name("ship"));
    let boat = world.spawn(Name("boat"));
    let mut changed = QueryState::<Entity, Changed<Crew>>::new(&mut world);
    assert_eq!(changed.iter(&world).count(), 0);
    let cook = world.spawn(CrewOf(ship));
    let mate = world.spawn(CrewOf(ship));
    assert_eq!(changed.iter(&world).collect::<Vec<_>>(), [ship], "the list was added");
    assert_eq!(changed.iter(&world).count(), 0);
    world.insert(mate, CrewOf(boat)).unwrap();
    let mut seen: Vec<Entity> = changed.iter(&world).collect();
    seen.sort();
    let mut want = vec![ship, boat];
    want.sort();
    assert_eq!(seen, want, "the old list lost a member, the new one was added");
    assert_eq!(world.get::<Crew>(ship).unwrap().0, [cook]);
    world.despawn(cook).unwrap();
    assert_eq!(changed.iter(&world).count(), 0, "an emptied list is removed, not changed");
    assert!(!world.has::<Crew>(ship));
    let bosun = world.spawn(CrewOf(boat));
    assert_eq!(changed.iter(&world).collect::<Vec<_>>(), [boat], "a join changes the list");
    assert_eq!(world.get::<Crew>(boat).unwrap().0, [mate, bosun]);
}

#[test]
fn world_copies_keep_trees_and_entity_clones_join_the_same_parent() {
    let mut world = World::new();
    let [root, a, b, a1, b1] = tree(&mut world);
    // `Name` does not opt in to cloning: strip it so the whole tree can be copied.
    for e in [root, a, b, a1, b1] {
        world.remove::<Name>(e).unwrap();
    }
    let copy = world.try_clone().unwrap();
    assert_eq!(copy.children(root), [a, b]);
    assert_eq!(copy.children(a), [a1]);
    assert_eq!(copy.parent(b1), Some(b));
    copy.check_invariants().unwrap();

    let twin = world.clone_entity(a1).unwrap();
    assert_eq!(world.parent(twin), Some(a));
    assert_eq!(world.children(a), [a1, twin], "the clone joined its parent's list");
    let lone = world.clone_entity(b).unwrap();
    assert_eq!(world.parent(lone), Some(root));
    assert_eq!(world.children(lone), [], "a cloned parent has no children: the list stays with the original");
    world.check_invariants().unwrap();
}

#[test]
fn a_recursive_despawn_of_a_plain_tree_leaves_the_rest_exact() {
    let mut world = World::new();
    let top = world.spawn(Name("top"));
    let before = world.spawn((Name("before"), ChildOf(top)));
    let [root, a, b, a1, b1] = tree(&mut world);
    world.insert(root, ChildOf(top)).unwrap();
    let after = world.spawn((Name("after"), ChildOf(top)));
    let kept = world.spawn((Name("kept"), ChildOf(after)));
    assert_eq!(world.despawn_recursive(root), Ok(5));
    for e in [root, a, b, a1, b1] {
        assert!(!world.contains(e));
    }
    assert_eq!(world.children(top), [before, after]);
    assert_eq!(world.children(after), [kept]);
    assert_eq!(world.len(), 4);
    world.check_invariants().unwrap();
    // A root without a parent, and one whose parent then has no children.
    let [root, ..] = tree(&mut world);
    assert_eq!(world.despawn_recursive(root), Ok(5));
    assert_eq!(world.despawn_recursive(after), Ok(2));
    assert_eq!(world.children(top), [before]);
    assert_eq!(world.despawn_recursive(before), Ok(1));
    assert!(!world.has::<Children>(top));
    assert_eq!(world.len(), 1);
    world.check_invariants().unwrap();
}

#[test]
fn a_user_despawn_hook_in_a_tree_sees_each_parent_lose_its_children_one_by_one() {
    let mut world = World::new();
    let [root, a, b, a1, b1] = tree(&mut world);
    type Seen = Vec<(&'static str, Vec<Entity>)>;
    let seen: Arc<std::sync::Mutex<Seen>> = Arc::default();
    let log = seen.clone();
    world.register_component_hooks::<Name>().on_despawn(move |world, e| {
        let world = world.world();
        let siblings = world.parent(e).map(|p| world.children(p).to_vec()).unwrap_or_default();
        log.lock().unwrap().push((world.get::<Name>(e).unwrap().0, siblings));
    });
    assert_eq!(world.despawn_recursive(root), Ok(5));
    // Deepest first: b's subtree, then a's; each leaves its parent's list
    // before the next one goes.
    assert_eq!(
        *seen.lock().unwrap(),
        [("b1", vec![b1]), ("b", vec![a, b]), ("a1", vec![a1]), ("a", vec![a]), ("root", vec![])]
    );
    assert_eq!(world.len(), 0);
    world.check_invariants().unwrap();
}

#[test]
fn a_recursive_despawn_cuts_the_other_relationships_of_the_tree() {
    let mut world = World::new();
    let hero = world.spawn(Name("hero"));
    let dog = world.spawn(Follows { leader: hero });
    let [root, a, _, a1, _] = tree(&mut world);
    world.insert(a1, Follows { leader: hero }).unwrap();
    let cat = world.spawn(Follows { leader: hero });
    // A follower outside the tree whose leader is in it is orphaned.
    let squire = world.spawn(Follows { leader: a });
    assert_eq!(world.get::<Followers>(hero).unwrap().0, [dog, a1, cat]);
    assert_eq!(world.despawn_recursive(root), Ok(5));
    assert_eq!(world.get::<Followers>(hero).unwrap().0, [dog, cat]);
    assert!(world.contains(squire) && !world.has::<Follows>(squire));
    world.check_invariants().unwrap();
}

#[test]
#[cfg(feature = "observers")]
fn a_removal_observer_sees_every_child_of_a_tree_leave() {
    let mut world = World::new();
    let [root, a, b, a1, b1] = tree(&mut world);
    let left: Arc<std::sync::Mutex<Vec<Entity>>> = Arc::default();
    let log = left.clone();
    world.observe(move |t: Trigger<OnRemove<ChildOf>>| log.lock().unwrap().push(t.target().unwrap()));
    assert_eq!(world.despawn_recursive(root), Ok(5));
    assert_eq!(*left.lock().unwrap(), [b1, b, a1, a]);
    world.check_invariants().unwrap();
}

#[test]
fn a_recursive_despawn_inside_a_failed_transaction_leaves_exact_lists() {
    let mut world = World::new();
    let top = world.spawn(Name("top"));
    let before = world.spawn((Name("before"), ChildOf(top)));
    let [root, ..] = tree(&mut world);
    world.insert(root, ChildOf(top)).unwrap();
    let after = world.spawn((Name("after"), ChildOf(top)));
    let result: Result<(), &str> = world.all_or_nothing(|world| {
        // A tree that existed before goes for good; one spawned here, whose
        // root joined `after`, is taken back with the transaction.
        assert_eq!(world.despawn_recursive(root), Ok(5));
        let [new_root, ..] = tree(world);
        world.insert(new_root, ChildOf(after)).unwrap();
        let kept = world.spawn((Name("kept"), ChildOf(new_root)));
        assert_eq!(world.despawn_recursive(kept), Ok(1));
        assert_eq!(world.children(top), [before, after]);
        Err("undo")
    });
    assert_eq!(result, Err("undo"));
    assert!(!world.contains(root));
    assert_eq!(world.children(top), [before, after]);
    assert!(!world.has::<Children>(after));
    assert_eq!(world.len(), 3);
    world.check_invariants().unwrap();
}

/// Code written when `children()` returned `&[Entity]` reads a
/// `SourceList` unchanged: every line here is slice code, on a list with
/// holes and an index and on a short one. (The borrows clippy would take
/// out are what such code has.)
#[test]
#[allow(clippy::needless_borrows_for_generic_args, clippy::op_ref)]
fn a_children_list_reads_as_the_slice_it_was() {
    let mut world = World::new();
    let parent = world.spawn(());
    let kids: Vec<Entity> = (0..40).map(|_| world.spawn(ChildOf(parent))).collect();
    for &kid in kids.iter().step_by(3) {
        world.despawn(kid).unwrap();
    }
    let expected: Vec<Entity> = kids.iter().copied().filter(|k| k.index() % 3 != kids[0].index() % 3).collect();
    let stranger = world.spawn(());
    let short = world.spawn(());
    let (x, y) = (world.spawn(ChildOf(short)), world.spawn(ChildOf(short)));
    for (owner, expected) in [(parent, expected), (short, vec![x, y])] {
        let children = world.children(owner);
        let first = expected[0];
        assert!(children.contains(&first) && children.contains(first));
        assert!(!children.contains(&stranger) && !children.contains(stranger));
        assert_eq!(children.len(), expected.len());
        assert!(!children.is_empty());
        assert_eq!(children.first(), Some(&first));
        assert_eq!(children.first().copied(), expected.first().copied());
        assert_eq!(*children.last().unwrap(), *expected.last().unwrap());
        if let Some(&last) = children.last() {
            assert_eq!(last, expected[expected.len() - 1]);
        }
        assert_eq!(children.iter().copied().collect::<Vec<_>>(), expected);
        assert_eq!(children.iter().rev().count(), expected.len());
        assert!(children.iter().any(|&c| c == first));
        let mut walked = Vec::new();
        for &child in children {
            walked.push(child);
        }
        assert_eq!(walked, expected);
        assert_eq!(children.to_vec(), expected);
        for (i, &child) in expected.iter().enumerate() {
            assert_eq!(children[i], child);
            assert_eq!(children.get(i), Some(&child));
        }
        assert_eq!(children.get(expected.len()), None);
        // `==` either way round, with vectors, slices and arrays.
        assert_eq!(children, expected);
        assert_eq!(expected, children);
        assert_eq!(children, &expected);
        assert_eq!(&expected, children);
        assert_eq!(children, &expected[..]);
        assert_eq!(&expected[..], children);
        assert!(*children == expected[..]);
        assert!(expected[..] == *children);
        assert!(children != &expected[1..] && expected[1..] != *children);
    }
    let short_list = world.children(short);
    assert_eq!(short_list, [x, y]);
    assert_eq!([x, y], short_list);
    assert_eq!(short_list, &[x, y]);
    assert_eq!(&[x, y], short_list);
    assert_ne!(short_list, [y, x]);
}

#[test]
#[should_panic(expected = "index out of bounds: the len is 2 but the index is 2")]
fn indexing_a_children_list_past_its_end_panics_as_a_slice_does() {
    let mut world = World::new();
    let parent = world.spawn(());
    world.spawn(ChildOf(parent));
    world.spawn(ChildOf(parent));
    let _ = world.children(parent)[2];
}

#[test]
fn clear_passes_over_the_engines_upkeep_runs_the_users_hooks_and_the_next_level_starts_clean() {
    let mut world = World::new();
    let [root, a, ..] = tree(&mut world);
    world.clear();
    assert!(world.is_empty());
    assert!(!world.contains(root) && !world.contains(a));
    let [root, a, b, a1, b1] = tree(&mut world);
    assert_eq!(world.children(root), [a, b]);
    assert_eq!(world.children(a), [a1]);
    assert_eq!(world.parent(b1), Some(b));
    world.check_invariants().unwrap();

    // A hook of the user's on the link's removal sees every child go.
    let removed: Arc<std::sync::Mutex<Vec<Entity>>> = Arc::default();
    let log = removed.clone();
    world.register_component_hooks::<ChildOf>().on_remove(move |_, child| log.lock().unwrap().push(child));
    world.clear();
    let seen: std::collections::HashSet<Entity> = removed.lock().unwrap().iter().copied().collect();
    assert_eq!(seen, [a, b, a1, b1].into_iter().collect());
    assert_eq!(removed.lock().unwrap().len(), 4);
    assert!(world.is_empty());
    let [root, a, b, ..] = tree(&mut world);
    assert_eq!(world.children(root), [a, b]);
    world.check_invariants().unwrap();
}

#[test]
#[cfg(feature = "observers")]
fn clear_shows_a_removal_observer_every_child() {
    let mut world = World::new();
    let [_, a, b, a1, b1] = tree(&mut world);
    let left: Arc<std::sync::Mutex<Vec<Entity>>> = Arc::default();
    let log = left.clone();
    world.observe(move |t: Trigger<OnRemove<ChildOf>>| log.lock().unwrap().push(t.target().unwrap()));
    world.clear();
    let seen: std::collections::HashSet<Entity> = left.lock().unwrap().iter().copied().collect();
    assert_eq!(seen, [a, b, a1, b1].into_iter().collect());
    assert_eq!(left.lock().unwrap().len(), 4);
    let [root, a, b, ..] = tree(&mut world);
    assert_eq!(world.children(root), [a, b]);
    world.check_invariants().unwrap();
}
