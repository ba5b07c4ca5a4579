//! A child spawned right after another under the same parent joins the
//! parent's list through the places the previous join found. These tests
//! change what those places hold between two spawns (the parent moves
//! tables or rows, dies and its slot is reused, the relationship or the
//! bundle changes, a hook or an observer starts watching, a transaction
//! fails) and check the lists after each step.

#![cfg(feature = "hierarchy")]

use archetable::prelude::*;

#[derive(Component, Debug, PartialEq, Clone, Copy)]
struct Name(&'static str);
#[derive(Component, Debug, PartialEq, Clone, Copy)]
struct Tag;
#[derive(Component, Debug, PartialEq, Clone, Copy)]
struct Big([u64; 4]);

/// An item lies in the inventory of the entity it names.
#[derive(Component, Debug, PartialEq)]
#[component(relationship(target = Inventory))]
struct InInventory(Entity);

#[derive(Component, Debug)]
#[component(relationship_target(source = InInventory))]
struct Inventory(SourceList);

/// A list that keeps change ticks.
#[derive(Component, Debug, PartialEq)]
#[component(relationship(target = Crew))]
struct CrewOf(Entity);

#[derive(Component, Debug)]
#[component(relationship_target(source = CrewOf), track_changes)]
struct Crew(SourceList);

fn items(world: &World, owner: Entity) -> Vec<Entity> {
    world.get::<Inventory>(owner).map_or_else(Vec::new, |list| list.0.to_vec())
}

#[test]
fn a_parent_that_moves_between_spawns_still_gets_each_child() {
    let mut world = World::new();
    let other = world.spawn(Name("other"));
    let root = world.spawn(Name("root"));
    let mut expected = vec![world.spawn((Name("c0"), ChildOf(root)))];
    // Another parent in the root's table, before it: despawning it moves
    // the root to its row.
    let before = world.spawn((Name("before"), ChildOf(other)));
    let neighbour = world.spawn(Name("neighbour"));
    world.insert(neighbour, ChildOf(other)).unwrap();
    let lodger = world.spawn((Name("lodger"), ChildOf(neighbour)));
    expected.push(world.spawn((Name("c1"), ChildOf(root))));
    world.despawn(other).unwrap();
    expected.push(world.spawn((Name("c2"), ChildOf(root))));
    // The root changes tables, and back.
    world.insert(root, Tag).unwrap();
    expected.push(world.spawn((Name("c3"), ChildOf(root))));
    world.remove::<Tag>(root).unwrap();
    expected.push(world.spawn((Name("c4"), ChildOf(root))));
    // The table of the root loses the entity before it in row order.
    world.despawn(neighbour).unwrap();
    expected.push(world.spawn((Name("c5"), ChildOf(root))));
    assert_eq!(world.children(root).to_vec(), expected);
    assert_eq!(world.parent(before), None);
    assert_eq!(world.parent(lodger), None);
    for &child in &expected {
        assert_eq!(world.parent(child), Some(root));
    }
    world.check_invariants().unwrap();
}

#[test]
fn children_of_alternating_parents_and_bundles_land_in_their_own_lists() {
    let mut world = World::new();
    let a = world.spawn(Name("a"));
    let b = world.spawn(Name("b"));
    let (mut of_a, mut of_b) = (Vec::new(), Vec::new());
    for i in 0..12 {
        let parent = if i % 3 == 1 { b } else { a };
        let child = match i % 4 {
            0 => world.spawn((Name("plain"), ChildOf(parent))),
            1 => world.spawn(ChildOf(parent)),
            2 => world.spawn((Big([i; 4]), Tag, ChildOf(parent))),
            _ => world.spawn((ChildOf(parent), Name("first"))),
        };
        if parent == a {
            of_a.push(child)
        } else {
            of_b.push(child)
        }
    }
    assert_eq!(world.children(a).to_vec(), of_a);
    assert_eq!(world.children(b).to_vec(), of_b);
    world.check_invariants().unwrap();
}

#[test]
fn two_relationships_spawned_in_turn_keep_apart() {
    let mut world = World::new();
    let hero = world.spawn(Name("hero"));
    let chest = world.spawn(Name("chest"));
    let (mut children, mut in_chest) = (Vec::new(), Vec::new());
    for i in 0..6 {
        if i % 2 == 0 {
            children.push(world.spawn((Name("child"), ChildOf(hero))));
        } else {
            in_chest.push(world.spawn((Name("item"), InInventory(chest))));
        }
    }
    // One bundle with both: one entry in each list.
    let both = world.spawn((Name("both"), ChildOf(hero), InInventory(chest)));
    children.push(both);
    in_chest.push(both);
    let swapped = world.spawn((Name("swapped"), InInventory(hero), ChildOf(chest)));
    assert_eq!(world.children(hero).to_vec(), children);
    assert_eq!(items(&world, chest), in_chest);
    assert_eq!(world.children(chest).to_vec(), [swapped]);
    assert_eq!(items(&world, hero), [swapped]);
    world.check_invariants().unwrap();
}

#[test]
fn a_dead_parent_whose_slot_is_reused_in_its_place_gets_no_child() {
    let mut world = World::new();
    let parent = world.spawn(Name("parent"));
    let first = world.spawn((Name("first"), ChildOf(parent)));
    let second = world.spawn((Name("second"), ChildOf(parent)));
    world.despawn(parent).unwrap();
    assert_eq!((world.parent(first), world.parent(second)), (None, None));
    // A new entity takes the parent's slot (with a new generation) and,
    // once it has a list, its table and row.
    let heir = world.spawn(Name("heir"));
    assert_eq!(heir.index(), parent.index());
    let adopted = world.spawn(Name("adopted"));
    world.insert(adopted, ChildOf(heir)).unwrap();
    let orphan = world.spawn((Name("orphan"), ChildOf(parent)));
    assert_eq!(world.children(heir).to_vec(), [adopted]);
    assert!(!world.has::<ChildOf>(orphan), "a link to a dead parent is refused");
    world.check_invariants().unwrap();
}

#[test]
fn a_list_removed_by_hand_is_created_again_for_the_next_child() {
    let mut world = World::new();
    let root = world.spawn(Name("root"));
    let first = world.spawn((Name("first"), ChildOf(root)));
    world.remove::<Children>(root).unwrap();
    assert_eq!(world.parent(first), None);
    let second = world.spawn((Name("second"), ChildOf(root)));
    let third = world.spawn((Name("third"), ChildOf(root)));
    assert_eq!(world.children(root).to_vec(), [second, third]);
    world.check_invariants().unwrap();
}

#[test]
fn a_hook_added_after_some_children_runs_for_the_next() {
    let mut world = World::new();
    world.init_resource::<Vec<(Entity, bool)>>();
    let root = world.spawn(Name("root"));
    let early = world.spawn((Name("early"), ChildOf(root)));
    let also_early = world.spawn((Name("also early"), ChildOf(root)));
    world.register_component_hooks::<ChildOf>().on_insert(|world, child| {
        let parent = world.get::<ChildOf>(child).unwrap().0;
        let listed = world.get::<Children>(parent).is_some_and(|list| list.contains(child));
        world.resource_mut::<Vec<(Entity, bool)>>().push((child, listed));
    });
    let late = world.spawn((Name("late"), ChildOf(root)));
    let also_late = world.spawn((Name("also late"), ChildOf(root)));
    assert_eq!(*world.resource::<Vec<(Entity, bool)>>(), [(late, true), (also_late, true)]);
    assert_eq!(world.children(root).to_vec(), [early, also_early, late, also_late]);
    world.check_invariants().unwrap();
}

#[test]
#[cfg(feature = "observers")]
fn an_observer_added_after_some_children_sees_the_next() {
    let mut world = World::new();
    world.init_resource::<Vec<Entity>>();
    let root = world.spawn(Name("root"));
    let early = world.spawn((Name("early"), ChildOf(root)));
    let again = world.spawn((Name("again"), ChildOf(root)));
    world.observe(|t: Trigger<OnAdd<ChildOf>>, mut seen: ResMut<Vec<Entity>>| seen.push(t.target().unwrap()));
    let late = world.spawn((Name("late"), ChildOf(root)));
    let last = world.spawn((Name("last"), ChildOf(root)));
    assert_eq!(*world.resource::<Vec<Entity>>(), [late, last]);
    assert_eq!(world.children(root).to_vec(), [early, again, late, last]);
    world.check_invariants().unwrap();
}

#[test]
fn children_spawned_in_a_failed_transaction_leave_the_list_as_it_was() {
    let mut world = World::new();
    let root = world.spawn(Name("root"));
    let kept: Vec<Entity> = (0..3).map(|_| world.spawn((Name("kept"), ChildOf(root)))).collect();
    let result: Result<(), &str> = world.all_or_nothing(|world| {
        let taken: Vec<Entity> = (0..3).map(|_| world.spawn((Name("taken"), ChildOf(root)))).collect();
        assert_eq!(world.children(root).len(), 6);
        assert_eq!(world.children(root).to_vec()[3..], taken);
        Err("undo")
    });
    assert_eq!(result, Err("undo"));
    assert_eq!(world.children(root).to_vec(), kept);
    world.check_invariants().unwrap();
    // The next child joins after the ones kept.
    let next = world.spawn((Name("next"), ChildOf(root)));
    assert_eq!(world.children(root).to_vec(), [kept[0], kept[1], kept[2], next]);
    world.check_invariants().unwrap();
}

#[test]
fn every_join_marks_a_tracked_list_changed() {
    let mut world = World::new();
    let ship = world.spawn(Name("ship"));
    let mut changed = QueryState::<Entity, Changed<Crew>>::new(&mut world);
    world.spawn(CrewOf(ship));
    assert_eq!(changed.iter(&world).collect::<Vec<_>>(), [ship]);
    for _ in 0..3 {
        world.spawn(CrewOf(ship));
        assert_eq!(changed.iter(&world).collect::<Vec<_>>(), [ship], "each join is a change");
    }
    assert_eq!(world.get::<Crew>(ship).unwrap().0.len(), 4);
    world.check_invariants().unwrap();
}

#[test]
fn children_spawned_in_turn_into_two_worlds_stay_in_their_own() {
    // Both roots get the same handle: each world keeps its own places.
    let (mut left, mut right) = (World::new(), World::new());
    let (left_root, right_root) = (left.spawn(Name("left")), right.spawn(Big([0; 4])));
    assert_eq!(left_root, right_root);
    let (mut in_left, mut in_right) = (Vec::new(), Vec::new());
    for _ in 0..4 {
        in_left.push(left.spawn((Name("l"), ChildOf(left_root))));
        in_right.push(right.spawn((Tag, ChildOf(right_root))));
    }
    assert_eq!(left.children(left_root).to_vec(), in_left);
    assert_eq!(right.children(right_root).to_vec(), in_right);
    left.check_invariants().unwrap();
    right.check_invariants().unwrap();
}

#[test]
fn a_hook_that_despawns_the_parent_between_two_children_leaves_the_second_unlinked() {
    let mut world = World::new();
    let root = world.spawn(Name("root"));
    world.insert_resource(root);
    world.register_component_hooks::<Tag>().on_add(|world, _| {
        let root = *world.resource::<Entity>();
        world.commands().entity(root).despawn();
    });
    let first = world.spawn((Name("first"), ChildOf(root)));
    let second = world.spawn((Name("second"), ChildOf(root)));
    world.spawn(Tag);
    assert!(!world.contains(root));
    let late = world.spawn((Name("late"), ChildOf(root)));
    assert_eq!((world.parent(first), world.parent(second)), (None, None));
    assert!(!world.has::<ChildOf>(late), "a link to the despawned parent is refused");
    world.check_invariants().unwrap();
}

#[test]
fn a_tree_spawned_breadth_first_with_items_between_gets_every_list() {
    let mut world = World::new();
    let mut nodes = vec![world.spawn(Name("root"))];
    let (mut children, mut held): (Vec<Vec<Entity>>, Vec<Vec<Entity>>) = (vec![Vec::new()], vec![Vec::new()]);
    for i in 1..40 {
        // Every node but the root shares one table with its parent: each
        // parent's first child is spawned where the previous parent's
        // children were, under another parent.
        let parent = (i - 1) / 3;
        let node = world.spawn((Name("node"), ChildOf(nodes[parent])));
        nodes.push(node);
        children.push(Vec::new());
        held.push(Vec::new());
        children[parent].push(node);
        if i % 4 == 0 {
            // Another relationship joins between two children.
            let item = world.spawn((Name("item"), InInventory(nodes[parent])));
            held[parent].push(item);
        }
        if i % 5 == 0 {
            // A node that holds an item of its own: its table gains a list
            // of another type than the children's.
            let item = world.spawn((Name("item"), InInventory(node)));
            held[i].push(item);
        }
    }
    for (i, &node) in nodes.iter().enumerate() {
        assert_eq!(world.children(node).to_vec(), children[i], "children of node {i}");
        assert_eq!(items(&world, node), held[i], "items of node {i}");
    }
    assert_eq!(world.children(nodes[0]).len(), 3);
    assert_eq!(nodes.iter().filter(|&&node| world.get::<Inventory>(node).is_some()).count(), 14);
    world.check_invariants().unwrap();
}

#[test]
fn first_lists_placed_out_of_one_table_never_cover_a_list_already_there() {
    // Every target starts in one table ({Name}). The first list a spawned
    // child places there takes its target to {Name, Children}; the next
    // target found in {Name} gets its list without a lookup. In between:
    // children of targets that have a list already (in the list's table,
    // and in tables the other relationship's list took them to), and first
    // items, whose lists leave {Name} for another table. No list may be
    // placed over one that is there: every child and item stays listed.
    let mut world = World::new();
    let targets: Vec<Entity> = (0..12).map(|_| world.spawn(Name("target"))).collect();
    let (mut children, mut held) = (vec![Vec::new(); 12], vec![Vec::new(); 12]);
    for round in 0..3 {
        for i in 0..12 {
            if i % 3 == 0 && round == 0 {
                // An item first: this target leaves {Name} for
                // {Name, Inventory}, and gets its first child there.
                held[i].push(world.spawn((Name("item"), InInventory(targets[i]))));
            }
            children[i].push(world.spawn((Name("child"), ChildOf(targets[i]))));
            // A target with a list already, between two first lists.
            let j = (i + 5) % 12;
            if round > 0 || j < i {
                children[j].push(world.spawn((Name("child"), ChildOf(targets[j]))));
            }
            if i % 4 == 1 {
                // An item on a target that has children: {Name, Children}
                // to {Name, Children, Inventory}.
                held[i].push(world.spawn((Name("item"), InInventory(targets[i]))));
            }
        }
    }
    for (i, &target) in targets.iter().enumerate() {
        assert_eq!(world.children(target).to_vec(), children[i], "children of target {i}");
        assert_eq!(items(&world, target), held[i], "items of target {i}");
    }
    let counts: Vec<usize> = children.iter().map(Vec::len).collect();
    assert_eq!(counts, [6, 6, 6, 6, 6, 5, 5, 5, 5, 5, 5, 5]);
    assert_eq!(held.iter().map(Vec::len).collect::<Vec<_>>(), [1, 3, 0, 1, 0, 3, 1, 0, 0, 4, 0, 0]);
    world.check_invariants().unwrap();
}
