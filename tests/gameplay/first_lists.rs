//! A child spawned under a parent that has no list yet, when nothing but
//! the relationship watches the spawn, places the parent's list itself
//! instead of waiting for a command to create it. These tests check that
//! this gives the world the general path gives (a user hook forces it),
//! and that the general path still runs, in its documented order, as soon
//! as a user hook or an observer watches the list, a source already waits
//! for it, or a hook panics.

#![cfg(feature = "hierarchy")]

use std::panic::{catch_unwind, AssertUnwindSafe};

use archetable::prelude::*;

use crate::logs;

#[derive(Component, Debug, PartialEq, Clone, Copy)]
struct Name(u32);
#[derive(Component, Debug, PartialEq, Clone, Copy)]
struct Tag;

/// An item lies in the inventory of the entity it names.
#[derive(Component, Debug, PartialEq)]
#[component(relationship(target = Inventory))]
struct InInventory(Entity);

#[derive(Component, Debug)]
#[component(relationship_target(source = InInventory), track_changes)]
struct Inventory(SourceList);

/// What a test's hooks saw, in order.
type Log = Vec<String>;

/// Builds a tree and an inventory of each inner node, breadth first, every
/// node spawned with its links: most spawns are the first under their
/// parent. Returns the nodes in spawn order.
fn grow(world: &mut World) -> Vec<Entity> {
    let mut nodes = vec![world.spawn(Name(0))];
    for i in 1..40u32 {
        let parent = nodes[((i - 1) / 3) as usize];
        let node = match i % 4 {
            0 => world.spawn((Name(i), ChildOf(parent))),
            1 => world.spawn(ChildOf(parent)),
            2 => world.spawn((Name(i), InInventory(parent))),
            _ => world.spawn((ChildOf(parent), Name(i))),
        };
        nodes.push(node);
    }
    nodes
}

/// A node's parent, children, owner and items.
type Links = (Option<Entity>, Vec<Entity>, Option<Entity>, Vec<Entity>);

/// Each node's [`Links`], as plain lists.
fn links(world: &World, nodes: &[Entity]) -> Vec<Links> {
    nodes
        .iter()
        .map(|&node| {
            let children = world.get::<Children>(node).map_or_else(Vec::new, |list| list.to_vec());
            let items = world.get::<Inventory>(node).map_or_else(Vec::new, |list| list.0.to_vec());
            (world.parent(node), children, world.get::<InInventory>(node).map(|link| link.0), items)
        })
        .collect()
}

#[test]
fn the_quick_first_list_gives_the_world_the_general_path_gives() {
    let mut quick = World::new();
    let mut general = World::new();
    // A user hook on each relationship sends every spawn through the
    // general path, and its lists through commands.
    general.register_component_hooks::<ChildOf>().on_insert(|_, _| {});
    general.register_component_hooks::<InInventory>().on_insert(|_, _| {});
    let mut added = [
        QueryState::<Entity, Added<Inventory>>::new(&mut quick),
        QueryState::<Entity, Added<Inventory>>::new(&mut general),
    ];
    let nodes = grow(&mut quick);
    assert_eq!(grow(&mut general), nodes, "the same handles in both worlds");
    let expected = links(&general, &nodes);
    assert_eq!(links(&quick, &nodes), expected);
    // Spot checks of what the general path built: node 1 is the first
    // child of the root, nodes 1, 3 and 4 in the list, 2 in the inventory.
    assert_eq!(expected[0].1, [nodes[1], nodes[3]]);
    assert_eq!(expected[0].3, [nodes[2]]);
    assert_eq!(expected[1].1, [nodes[4], nodes[5]]);
    let owners: Vec<Entity> = (0..2).map(|i| nodes[i]).collect();
    for (world, added) in [&quick, &general].into_iter().zip(&mut added) {
        let mut with_items = added.iter(world).collect::<Vec<_>>();
        with_items.sort();
        let mut expected_owners: Vec<Entity> =
            nodes.iter().copied().filter(|&node| world.get::<Inventory>(node).is_some()).collect();
        expected_owners.sort();
        assert_eq!(with_items, expected_owners, "each new list is added");
        assert!(owners.iter().all(|owner| with_items.contains(owner)));
        world.check_invariants().unwrap();
    }
    assert_eq!(quick.len(), general.len());
}

#[test]
fn a_first_list_is_there_when_spawn_returns_and_the_next_child_joins_it() {
    let mut world = World::new();
    let parents: Vec<Entity> = (0..5).map(|i| world.spawn(Name(i))).collect();
    for &parent in &parents {
        let first = world.spawn((Tag, ChildOf(parent)));
        assert_eq!(world.children(parent).to_vec(), [first]);
        let second = world.spawn((Tag, ChildOf(parent)));
        assert_eq!(world.children(parent).to_vec(), [first, second]);
    }
    // A parent in the children's own table: placing its list moves it, and
    // the child that filled its row keeps its link.
    let inner = world.spawn((Tag, ChildOf(parents[0])));
    let grandchild = world.spawn((Tag, ChildOf(inner)));
    assert_eq!(world.children(inner).to_vec(), [grandchild]);
    assert_eq!(world.parent(grandchild), Some(inner));
    assert_eq!(world.children(parents[0]).len(), 3);
    world.check_invariants().unwrap();
}

#[test]
fn a_user_hook_on_the_list_still_runs_once_the_spawn_is_over() {
    let mut world = World::new();
    world.init_resource::<Log>();
    world.register_component_hooks::<Children>().on_add(|world, parent| {
        let listed = world.get::<Children>(parent).unwrap().len();
        world.resource_mut::<Log>().push(format!("list of {listed}"));
    });
    world.register_component_hooks::<Tag>().on_add(|world, _| {
        world.resource_mut::<Log>().push("tag".into());
    });
    let parent = world.spawn(Name(0));
    let child = world.spawn(ChildOf(parent));
    assert_eq!(*world.resource::<Log>(), ["list of 1"]);
    // With another hook in the bundle: the spawn's own hooks, then the
    // command that creates the list.
    let other = world.spawn(Name(1));
    let tagged = world.spawn((Tag, ChildOf(other)));
    assert_eq!(*world.resource::<Log>(), ["list of 1", "tag", "list of 1"]);
    assert_eq!((world.children(parent).to_vec(), world.children(other).to_vec()), (vec![child], vec![tagged]));
    world.check_invariants().unwrap();
}

#[test]
#[cfg(feature = "observers")]
fn an_observer_of_the_list_sees_it_added() {
    let mut world = World::new();
    world.init_resource::<Vec<(Entity, usize)>>();
    world.observe(|t: Trigger<OnAdd<Inventory>>, mut seen: ResMut<Vec<(Entity, usize)>>, lists: Query<&Inventory>| {
        let owner = t.target().unwrap();
        seen.push((owner, lists.get(owner).unwrap().0.len()));
    });
    let owner = world.spawn(Name(0));
    let sword = world.spawn(InInventory(owner));
    let shield = world.spawn(InInventory(owner));
    assert_eq!(*world.resource::<Vec<(Entity, usize)>>(), [(owner, 1)]);
    assert_eq!(world.get::<Inventory>(owner).unwrap().0, [sword, shield]);
    world.check_invariants().unwrap();
}

#[test]
fn a_user_hook_on_the_list_added_after_quick_first_lists_runs_at_the_next_one() {
    let mut world = World::new();
    world.init_resource::<Log>();
    let first = world.spawn(Name(0));
    let early = world.spawn(ChildOf(first));
    assert_eq!(world.children(first), [early]);
    world.register_component_hooks::<Children>().on_add(|world, parent| {
        let listed = world.get::<Children>(parent).unwrap().len();
        world.resource_mut::<Log>().push(format!("list of {listed}"));
    });
    let second = world.spawn(Name(1));
    let late = world.spawn(ChildOf(second));
    let again = world.spawn(ChildOf(second));
    assert_eq!(*world.resource::<Log>(), ["list of 1"]);
    assert_eq!((world.children(first).to_vec(), world.children(second).to_vec()), (vec![early], vec![late, again]));
    world.check_invariants().unwrap();
}

#[test]
#[cfg(feature = "observers")]
fn an_observer_of_the_list_added_after_quick_first_lists_sees_the_next_one() {
    let mut world = World::new();
    world.init_resource::<Vec<(Entity, usize)>>();
    let first = world.spawn(Name(0));
    let ring = world.spawn(InInventory(first));
    world.observe(|t: Trigger<OnAdd<Inventory>>, mut seen: ResMut<Vec<(Entity, usize)>>, lists: Query<&Inventory>| {
        let owner = t.target().unwrap();
        seen.push((owner, lists.get(owner).unwrap().0.len()));
    });
    let owner = world.spawn(Name(1));
    let sword = world.spawn(InInventory(owner));
    assert_eq!(*world.resource::<Vec<(Entity, usize)>>(), [(owner, 1)]);
    assert_eq!(
        (world.get::<Inventory>(first).unwrap().0.to_vec(), world.get::<Inventory>(owner).unwrap().0.to_vec()),
        (vec![ring], vec![sword])
    );
    world.check_invariants().unwrap();
}

#[test]
fn a_child_spawned_while_an_earlier_source_waits_joins_after_it() {
    let mut world = World::new();
    let parent = world.spawn(Name(0));
    world.insert_resource(parent);
    // `Tag`'s on_replace runs before the write, so the command it queues
    // (a `World::spawn` of a child, whose one hook is the join) comes
    // before the one that creates the list, and applies while the entity
    // that got `ChildOf` still waits for that list.
    world.register_component_hooks::<Tag>().on_replace(|world, _| {
        let parent = *world.resource::<Entity>();
        world.commands().add(move |world: &mut World| {
            world.spawn((Name(9), ChildOf(parent)));
        });
    });
    let waiting = world.spawn((Name(1), Tag));
    world.insert(waiting, (Tag, ChildOf(parent))).unwrap();
    let children = world.children(parent).to_vec();
    assert_eq!(children.len(), 2);
    assert_eq!(children[0], waiting, "the entity that joined first comes first");
    assert_eq!(world.get::<Name>(children[1]), Some(&Name(9)));
    world.check_invariants().unwrap();
}

#[test]
fn a_panicking_user_hook_leaves_the_first_list_complete() {
    let mut world = World::new();
    world.register_component_hooks::<Tag>().on_add(|_, _| panic!("tag hook"));
    let parent = world.spawn(Name(0));
    let result = catch_unwind(AssertUnwindSafe(|| world.spawn((Tag, ChildOf(parent)))));
    assert!(result.is_err());
    // The engine's join ran before the user's hook: the child is in.
    let children = world.children(parent).to_vec();
    assert_eq!(children.len(), 1);
    assert_eq!(world.parent(children[0]), Some(parent));
    world.check_invariants().unwrap();
    // The next first child, with nothing but the join to run, takes the
    // quick path in the same world.
    let other = world.spawn(Name(1));
    let quick = world.spawn((Name(2), ChildOf(other)));
    assert_eq!(world.children(other).to_vec(), [quick]);
    let again = world.spawn((Name(3), ChildOf(parent)));
    assert_eq!(world.children(parent).to_vec(), [children[0], again]);
    world.check_invariants().unwrap();
}

#[test]
fn a_panicking_hook_on_the_list_still_leaves_it_placed() {
    let mut world = World::new();
    world.register_component_hooks::<Inventory>().on_insert(|_, _| panic!("list hook"));
    let owner = world.spawn(Name(0));
    let result = catch_unwind(AssertUnwindSafe(|| world.spawn(InInventory(owner))));
    assert!(result.is_err());
    let items = world.get::<Inventory>(owner).unwrap().0.to_vec();
    assert_eq!(items.len(), 1);
    assert_eq!(world.get::<InInventory>(items[0]), Some(&InInventory(owner)));
    world.check_invariants().unwrap();
}

#[test]
fn a_first_child_of_a_dead_or_never_made_parent_is_refused() {
    logs::capture();
    let mut world = World::new();
    let dead = world.spawn(Name(0));
    world.despawn(dead).unwrap();
    let orphan = world.spawn((Name(1), ChildOf(dead)));
    assert!(!world.has::<ChildOf>(orphan));
    // A handle no world ever made: index far past the allocator's.
    let stranger = Entity::from_bits((7u64 << 32) | 123_456).unwrap();
    let lost = world.spawn((Name(2), InInventory(stranger)));
    assert!(!world.has::<InInventory>(lost));
    assert_eq!(world.len(), 2);
    let warnings = logs::warnings();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(warnings[0].contains(&orphan.to_string()) && warnings[0].contains(&dead.to_string()), "{warnings:?}");
    assert!(warnings[1].contains(&stranger.to_string()), "{warnings:?}");
    world.check_invariants().unwrap();
}

#[test]
fn a_reserved_parent_gets_its_first_list() {
    let mut world = World::new();
    let reserved = world.reserve_entity();
    let child = world.spawn((Name(1), ChildOf(reserved)));
    assert!(world.contains(reserved));
    assert_eq!(world.children(reserved).to_vec(), [child]);
    world.check_invariants().unwrap();
}

#[test]
fn first_lists_in_two_worlds_whose_parents_share_a_handle_stay_apart() {
    let (mut left, mut right) = (World::new(), World::new());
    let (a, b) = (left.spawn(Name(0)), right.spawn(Tag));
    assert_eq!(a, b);
    let in_left = left.spawn((Name(1), ChildOf(a)));
    let in_right = right.spawn((Tag, InInventory(b)));
    assert_eq!(left.children(a).to_vec(), [in_left]);
    assert!(left.get::<Inventory>(a).is_none());
    assert_eq!(right.get::<Inventory>(b).unwrap().0, [in_right]);
    assert!(right.get::<Children>(b).is_none());
    left.check_invariants().unwrap();
    right.check_invariants().unwrap();
}

#[test]
fn a_first_list_placed_in_a_failed_transaction_goes_with_it() {
    let mut world = World::new();
    let parent = world.spawn(Name(0));
    let result: Result<(), &str> = world.all_or_nothing(|world| {
        let child = world.spawn((Name(1), ChildOf(parent)));
        assert_eq!(world.children(parent).to_vec(), [child]);
        Err("undo")
    });
    assert_eq!(result, Err("undo"));
    assert!(world.get::<Children>(parent).is_none(), "the emptied list goes");
    world.check_invariants().unwrap();
    let next = world.spawn((Name(2), ChildOf(parent)));
    assert_eq!(world.children(parent).to_vec(), [next]);
    world.check_invariants().unwrap();
}
