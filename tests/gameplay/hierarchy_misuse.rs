//! Parent/child links against misbehaving user code: cycles made through
//! deferred paths, user hooks and observers that panic in the middle of the
//! engine's own upkeep, rollbacks over links that cross the transaction,
//! and wide parents. After every step the lists are checked
//! (`check_invariants` checks every relationship and refuses a cycle).

#![cfg(all(feature = "hierarchy", feature = "observers"))]

use std::panic::{catch_unwind, AssertUnwindSafe};

use archetable::prelude::*;

#[derive(Component, Debug, PartialEq, Clone, Copy)]
struct Link;

#[derive(Component, Debug, PartialEq, Clone, Copy)]
struct Name(&'static str);

/// A user relationship pair, kept by the same engine hooks as `ChildOf`.
#[derive(Component, Debug, PartialEq)]
#[component(relationship(target = Crew))]
struct CrewOf(Entity);

#[derive(Component, Debug)]
#[component(relationship_target(source = CrewOf))]
struct Crew(SourceList);

fn quiet() {
    // The refusals warn through `log`; nothing to print in tests.
}

/// No entity is its own ancestor: walking up from each stops.
fn assert_forest(world: &World) {
    world.check_invariants().unwrap();
    for e in world.query::<Entity>() {
        assert!(world.ancestors(e).take(world.len() + 1).count() <= world.len(), "{e} is on a cycle");
    }
}

#[test]
fn two_links_queued_by_a_hook_cannot_make_a_cycle() {
    quiet();
    let mut world = World::new();
    let (a, b) = (world.spawn(Name("a")), world.spawn(Name("b")));
    world.register_component_hooks::<Link>().on_add(move |world, _| {
        world.commands().entity(a).insert(ChildOf(b));
        world.commands().entity(b).insert(ChildOf(a));
    });
    world.spawn(Link);
    assert_forest(&world);
    assert_eq!((world.parent(a), world.parent(b)), (Some(b), None), "the first link stands, the second is refused");
    assert_eq!(world.children(b), [a]);
    assert_eq!(world.despawn_recursive(b), Ok(2));
    assert_eq!(world.len(), 1);
}

#[test]
fn two_links_queued_by_an_observer_cannot_make_a_cycle() {
    let mut world = World::new();
    let (a, b) = (world.spawn(Name("a")), world.spawn(Name("b")));
    world.observe(move |_: Trigger<OnAdd<Link>>, mut commands: Commands| {
        commands.entity(a).insert(ChildOf(b));
        commands.entity(b).insert(ChildOf(a));
    });
    world.spawn(Link);
    assert_forest(&world);
    assert_eq!((world.parent(a), world.parent(b)), (Some(b), None));
}

#[test]
fn an_insert_batch_in_a_hooks_command_cannot_make_a_cycle() {
    let mut world = World::new();
    let (a, b) = (world.spawn(Name("a")), world.spawn(Name("b")));
    world.register_component_hooks::<Link>().on_add(move |world, _| {
        world.commands().add(move |world| world.insert_batch([(a, ChildOf(b)), (b, ChildOf(a))]).unwrap());
    });
    world.spawn(Link);
    assert_forest(&world);
    assert_eq!((world.parent(a), world.parent(b)), (Some(b), None));
}

#[test]
fn a_ring_of_three_queued_by_a_hook_is_cut_at_its_last_link() {
    let mut world = World::new();
    let (a, b, c) = (world.spawn(Name("a")), world.spawn(Name("b")), world.spawn(Name("c")));
    world.register_component_hooks::<Link>().on_add(move |world, _| {
        world.commands().entity(a).insert(ChildOf(b));
        world.commands().entity(b).insert(ChildOf(c));
        world.commands().entity(c).insert(ChildOf(a));
    });
    world.spawn(Link);
    assert_forest(&world);
    assert_eq!((world.parent(a), world.parent(b), world.parent(c)), (Some(b), Some(c), None));
    assert_eq!(world.descendants(c).collect::<Vec<_>>(), [b, a]);
}

#[test]
fn a_user_relationship_refuses_a_deferred_cycle_too() {
    let mut world = World::new();
    let (a, b) = (world.spawn(Name("a")), world.spawn(Name("b")));
    world.register_component_hooks::<Link>().on_add(move |world, _| {
        world.commands().entity(a).insert(CrewOf(b));
        world.commands().entity(b).insert(CrewOf(a));
    });
    world.spawn(Link);
    world.check_invariants().unwrap();
    assert!(world.get::<CrewOf>(a).is_some() != world.get::<CrewOf>(b).is_some(), "exactly one link stands");
}

#[test]
fn a_panicking_on_add_hook_does_not_stop_the_engines_upkeep() {
    let mut world = World::new();
    let parent = world.spawn(Name("parent"));
    world.register_component_hooks::<ChildOf>().on_add(|_, _| panic!("user hook"));
    let spawned = catch_unwind(AssertUnwindSafe(|| world.spawn(ChildOf(parent))));
    assert!(spawned.is_err());
    assert_forest(&world);
    let child = world.query_filtered::<Entity, With<ChildOf>>().next().expect("the spawn completed");
    assert_eq!(world.children(parent), [child]);

    // A link to a dead parent is still refused and removed.
    let dead = world.spawn(());
    world.despawn(dead).unwrap();
    let _ = catch_unwind(AssertUnwindSafe(|| world.spawn((Name("stray"), ChildOf(dead)))));
    assert_forest(&world);
    assert!(world.query::<&ChildOf>().all(|c| world.contains(c.0)));
}

#[test]
fn a_panicking_on_add_observer_does_not_stop_the_engines_upkeep() {
    let mut world = World::new();
    let parent = world.spawn(Name("parent"));
    world.observe(|_: Trigger<OnAdd<ChildOf>>| panic!("user observer"));
    let (first, second) = (world.spawn(Name("first")), world.spawn(Name("second")));
    assert!(catch_unwind(AssertUnwindSafe(|| world.insert(first, ChildOf(parent)))).is_err());
    assert!(catch_unwind(AssertUnwindSafe(|| world.insert(second, ChildOf(parent)))).is_err());
    assert_forest(&world);
    assert_eq!(world.children(parent), [first, second]);
}

#[test]
fn a_panicking_on_remove_observer_stops_a_despawn_before_the_lists_change() {
    let mut world = World::new();
    let parent = world.spawn(Name("parent"));
    let (a, b) = (world.spawn((Name("a"), ChildOf(parent))), world.spawn((Name("b"), ChildOf(parent))));
    world.observe(|_: Trigger<OnRemove<ChildOf>>| panic!("user observer"));
    assert!(catch_unwind(AssertUnwindSafe(|| world.despawn(a))).is_err());
    assert_forest(&world);
    assert!(world.contains(a));
    assert_eq!(world.children(parent), [a, b], "a did not go, so it stays listed");
    assert!(catch_unwind(AssertUnwindSafe(|| world.remove::<ChildOf>(b))).is_err());
    assert_forest(&world);
    assert_eq!(world.parent(b), Some(parent));
    assert_eq!(world.children(parent), [a, b]);
    assert!(catch_unwind(AssertUnwindSafe(|| world.clear())).is_err());
    assert_forest(&world);
    assert_eq!(world.children(parent), [a, b]);
}

#[test]
fn a_panicking_on_replace_hook_stops_a_reparenting_before_the_lists_change() {
    let mut world = World::new();
    let (old, new) = (world.spawn(Name("old")), world.spawn(Name("new")));
    let child = world.spawn((Name("child"), CrewOf(old)));
    world.register_component_hooks::<CrewOf>().on_replace(|_, _| panic!("user hook"));
    assert!(catch_unwind(AssertUnwindSafe(|| world.insert(child, CrewOf(new)))).is_err());
    world.check_invariants().unwrap();
    assert_eq!(world.get::<CrewOf>(child), Some(&CrewOf(old)));
    assert_eq!(world.get::<Crew>(old).unwrap().0, [child]);
    assert!(world.get::<Crew>(new).is_none());
}

#[test]
fn a_panicking_command_after_a_link_does_not_lose_the_new_list() {
    let mut world = World::new();
    let (parent, child) = (world.spawn(Name("parent")), world.spawn(Name("child")));
    world.register_component_hooks::<Link>().on_add(move |world, _| {
        world.commands().entity(child).insert(ChildOf(parent));
        world.commands().add(|_| panic!("a user command"));
    });
    assert!(catch_unwind(AssertUnwindSafe(|| world.spawn(Link))).is_err());
    assert_forest(&world);
    assert_eq!(world.children(parent), [child], "the list waiting for its command was created all the same");
}

#[test]
fn a_rollback_takes_a_new_child_out_of_its_parents_list() {
    let mut world = World::new();
    let parent = world.spawn(Name("parent"));
    let failed: Result<(), &str> = world.all_or_nothing(|world| {
        world.spawn((Name("new"), ChildOf(parent)));
        Err("fails")
    });
    assert!(failed.is_err());
    assert_forest(&world);
    assert!(!world.has::<Children>(parent), "the list the rollback emptied is gone");

    let kept = world.spawn((Name("kept"), ChildOf(parent)));
    let _ = world.all_or_nothing(|world| -> Result<(), ()> {
        world.spawn((Name("new"), ChildOf(parent)));
        world.spawn((Name("new too"), ChildOf(parent)));
        Err(())
    });
    assert_forest(&world);
    assert_eq!(world.children(parent), [kept]);
}

#[test]
fn a_rollback_gives_an_old_entity_moved_under_a_new_parent_its_old_parent_back() {
    let mut world = World::new();
    let old_parent = world.spawn(Name("old parent"));
    let child = world.spawn((Name("child"), ChildOf(old_parent)));
    let stays = world.spawn((Name("stays"), ChildOf(old_parent)));
    let result = catch_unwind(AssertUnwindSafe(|| {
        world.all_or_nothing(|world| -> Result<(), ()> {
            let new_parent = world.spawn(Name("new parent"));
            world.set_parent(child, new_parent).unwrap();
            panic!("the level is broken")
        })
    }));
    assert!(result.is_err());
    assert_forest(&world);
    assert_eq!(world.parent(child), Some(old_parent), "the new parent was taken back: the old one is back");
    assert_eq!(world.children(old_parent), [child, stays], "back where it was in the old parent's list");
    assert_eq!(world.len(), 3);

    // An entity that had no parent before is orphaned instead.
    let lone = world.spawn(Name("lone"));
    let _ = world.all_or_nothing(|world| -> Result<(), ()> {
        let new_parent = world.spawn(Name("new parent"));
        world.set_parent(lone, new_parent).unwrap();
        Err(())
    });
    assert_forest(&world);
    assert_eq!(world.parent(lone), None);
    assert_eq!(world.len(), 4);
}

#[test]
fn a_rollback_brings_back_the_last_parent_that_stays() {
    let mut world = World::new();
    let first = world.spawn(Name("first"));
    let second = world.spawn(Name("second"));
    let child = world.spawn((Name("child"), ChildOf(first)));
    let _ = world.all_or_nothing(|world| -> Result<(), ()> {
        let a = world.spawn(Name("new a"));
        let b = world.spawn(Name("new b"));
        world.set_parent(child, a).unwrap();
        world.set_parent(child, second).unwrap();
        world.set_parent(child, b).unwrap();
        Err(())
    });
    assert_forest(&world);
    assert_eq!(world.parent(child), Some(second), "what f did to old entities stays, but for links to new ones");
    assert_eq!(world.children(second), [child]);
    assert!(!world.has::<Children>(first));

    // Two new parents in a row: back to the one before them.
    let _ = world.all_or_nothing(|world| -> Result<(), ()> {
        let a = world.spawn(Name("new a"));
        let b = world.spawn(ChildOf(a));
        world.set_parent(child, a).unwrap();
        world.set_parent(child, b).unwrap();
        Err(())
    });
    assert_forest(&world);
    assert_eq!(world.parent(child), Some(second));

    // The old parent was despawned meanwhile: orphaned.
    let _ = world.all_or_nothing(|world| -> Result<(), ()> {
        let a = world.spawn(Name("new a"));
        world.set_parent(child, a).unwrap();
        world.despawn(second).unwrap();
        Err(())
    });
    assert_forest(&world);
    assert_eq!(world.parent(child), None);
}

#[test]
fn a_rollback_of_an_inner_step_keeps_what_the_outer_step_did() {
    let mut world = World::new();
    let old = world.spawn(Name("old"));
    let child = world.spawn((Name("child"), ChildOf(old)));
    let mut outer_parent = None;
    let done: Result<(), ()> = world.all_or_nothing(|world| {
        let outer = world.spawn(Name("outer"));
        outer_parent = Some(outer);
        world.set_parent(child, outer).unwrap();
        let inner: Result<(), ()> = world.all_or_nothing(|world| {
            let inner = world.spawn(Name("inner"));
            world.set_parent(child, inner).unwrap();
            Err(())
        });
        assert!(inner.is_err());
        assert_eq!(world.parent(child), Some(outer), "the inner rollback goes back to the outer step's parent");
        world.check_invariants().unwrap();
        Err(())
    });
    assert!(done.is_err());
    assert_forest(&world);
    assert!(!world.contains(outer_parent.unwrap()));
    assert_eq!(world.parent(child), Some(old), "the outer rollback goes back to the parent from before");
    assert_eq!(world.children(old), [child]);
}

#[test]
fn a_rollback_gives_a_user_relationship_its_old_target_back() {
    let mut world = World::new();
    let ship = world.spawn(Name("ship"));
    let sailor = world.spawn((Name("sailor"), CrewOf(ship)));
    let cook = world.spawn((Name("cook"), CrewOf(ship)));
    let _ = world.all_or_nothing(|world| -> Result<(), ()> {
        let raft = world.spawn(Name("raft"));
        world.insert(sailor, CrewOf(raft)).unwrap();
        Err(())
    });
    assert_forest(&world);
    assert_eq!(world.get::<CrewOf>(sailor), Some(&CrewOf(ship)));
    assert_eq!(world.get::<Crew>(ship).unwrap().0, [sailor, cook], "back where it was");
}

#[test]
fn a_rollback_puts_many_moved_children_back_in_their_places() {
    // A wide parent (its list keeps an index and holes) and a short one
    // (its list shifts); children leave both in mixed order, some twice.
    let mut world = World::new();
    let wide = world.spawn(Name("wide"));
    let short = world.spawn(Name("short"));
    let kids: Vec<Entity> = (0..40).map(|_| world.spawn((Name("kid"), ChildOf(wide)))).collect();
    let few: Vec<Entity> = (0..4).map(|_| world.spawn((Name("few"), ChildOf(short)))).collect();
    let before = (world.children(wide).to_vec(), world.children(short).to_vec());
    let result = world.all_or_nothing(|world| -> Result<(), ()> {
        let raft = world.spawn(Name("raft"));
        let boat = world.spawn(Name("boat"));
        for &i in &[7, 0, 39, 8, 20, 6, 21] {
            world.set_parent(kids[i], raft).unwrap();
        }
        world.set_parent(kids[20], boat).unwrap();
        for &i in &[3, 0, 1] {
            world.set_parent(few[i], boat).unwrap();
        }
        // One that stays moves too, to another parent that stays: not undone.
        world.set_parent(kids[10], short).unwrap();
        Err(())
    });
    assert_eq!(result, Err(()));
    assert_forest(&world);
    let mut wide_now = before.0.clone();
    wide_now.retain(|&k| k != kids[10]);
    assert_eq!(world.children(wide).to_vec(), wide_now, "every moved child back in its place");
    let mut short_now = before.1.clone();
    short_now.push(kids[10]);
    assert_eq!(world.children(short).to_vec(), short_now, "every moved child back in its place");
    world.check_invariants().unwrap();
}

#[test]
fn a_rollback_orphans_rather_than_despawns_old_sources_of_a_new_target() {
    #[derive(Component, Debug)]
    #[component(relationship(target = Cargo))]
    struct LoadedOn(Entity);
    #[derive(Component, Debug)]
    #[component(relationship_target(source = LoadedOn, despawn_sources))]
    struct Cargo(SourceList);

    let mut world = World::new();
    let crate_ = world.spawn(Name("crate"));
    let _ = world.all_or_nothing(|world| -> Result<(), ()> {
        let ship = world.spawn(Name("ship"));
        world.insert(crate_, LoadedOn(ship)).unwrap();
        Err(())
    });
    world.check_invariants().unwrap();
    assert!(world.contains(crate_), "what existed before the step stays");
    assert!(world.get::<LoadedOn>(crate_).is_none());
    assert_eq!(world.len(), 1);
}

#[test]
fn wide_parents_keep_their_order_through_joins_and_leaves() {
    let mut world = World::new();
    let root = world.spawn(Name("root"));
    let children: Vec<Entity> = (0..1000).map(|_| world.spawn(ChildOf(root))).collect();
    assert_eq!(world.children(root), children.as_slice());
    for &c in children.iter().step_by(2) {
        world.despawn(c).unwrap();
    }
    let odd: Vec<Entity> = children.iter().copied().skip(1).step_by(2).collect();
    assert_eq!(world.children(root), odd.as_slice());
    for &c in odd.iter().take(100) {
        world.remove_parent(c).unwrap();
    }
    assert_eq!(world.children(root), &odd[100..]);
    assert_forest(&world);
    assert_eq!(world.despawn_recursive(root), Ok(1 + odd.len() - 100));
    assert_eq!(world.len(), 100);
    world.check_invariants().unwrap();
}

#[test]
fn a_chain_built_leaf_first_refuses_only_real_cycles() {
    let mut world = World::new();
    let mut last = world.spawn(Name("top"));
    let top = last;
    for _ in 0..200 {
        let next = world.spawn(());
        world.set_parent(next, last).unwrap();
        last = next;
    }
    assert_eq!(world.ancestors(last).count(), 200);
    assert_eq!(world.set_parent(top, last), Err(HierarchyError::Cycle { child: top, parent: last }));
    world.check_invariants().unwrap();
}

/// Loads and prefab spawns go through the same rollback.
#[cfg(feature = "serde")]
mod loads_and_prefabs {
    use std::panic::{catch_unwind, AssertUnwindSafe};

    use archetable::data::Prefabs;
    use archetable::prelude::*;
    use serde::{Deserialize, Serialize};

    #[derive(Component, Serialize, Deserialize, Default, Debug, PartialEq, Clone, Copy)]
    struct Hp(u32);

    #[derive(Component, Serialize, Deserialize, Default, Debug, PartialEq, Clone, Copy)]
    struct Cursed;

    /// A world where a new `Hp` adopts `old_child` (through its hook's
    /// commands) and a `Cursed` panics after everything is in place.
    fn world_with_traps() -> (World, Entity, Entity) {
        let mut world = World::new();
        world.register_serde::<Hp>("Hp");
        world.register_serde::<Cursed>("Cursed");
        let old_parent = world.spawn(());
        let old_child = world.spawn(ChildOf(old_parent));
        world.register_component_hooks::<Hp>().on_add(move |world, entity| {
            world.commands().entity(old_child).insert(ChildOf(entity));
        });
        world.register_component_hooks::<Cursed>().on_insert(|world, _| {
            world.commands().add(|_| panic!("cursed"));
        });
        (world, old_parent, old_child)
    }

    fn assert_restored(world: &World, old_parent: Entity, old_child: Entity) {
        world.check_invariants().unwrap();
        assert_eq!(world.len(), 2);
        assert_eq!(world.parent(old_child), Some(old_parent), "the new parent was taken back: the old one is back");
        assert_eq!(world.children(old_parent), [old_child]);
    }

    #[test]
    fn a_failed_prefab_spawn_gives_back_the_old_parent() {
        let (mut world, old_parent, old_child) = world_with_traps();
        let prefabs = Prefabs::from_json_str(r#"{ "Lich": { "Hp": 9, "Cursed": null } }"#).unwrap();
        assert!(catch_unwind(AssertUnwindSafe(|| world.spawn_prefab(&prefabs, "Lich"))).is_err());
        assert_restored(&world, old_parent, old_child);
    }

    #[test]
    fn a_failed_merge_load_gives_back_the_old_parent_and_the_lists_it_touched() {
        let mut source = World::new();
        source.register_serde::<Hp>("Hp");
        source.register_serde::<Cursed>("Cursed");
        let root = source.spawn(Hp(1));
        source.spawn((Hp(2), ChildOf(root)));
        source.spawn(Cursed);
        let text = source.save_json().unwrap().data;
        let (mut world, old_parent, old_child) = world_with_traps();
        assert!(catch_unwind(AssertUnwindSafe(|| world.load_into_json(&text))).is_err());
        assert_restored(&world, old_parent, old_child);
    }
}

// Found by the relationship model (ecs-tests/tests/models/hierarchy_model.rs).

#[test]
fn a_refused_link_goes_even_when_an_on_remove_observer_panics() {
    let mut world = World::new();
    let lone = world.spawn(Name("lone"));
    world.observe(|_: Trigger<OnRemove<CrewOf>>| panic!("user observer"));
    assert!(catch_unwind(AssertUnwindSafe(|| world.insert(lone, CrewOf(lone)))).is_err());
    assert_forest(&world);
    assert_eq!(world.get::<CrewOf>(lone), None, "the refused link is cut without hooks");
}

#[test]
fn a_despawned_target_orphans_every_source_even_when_an_on_remove_observer_panics() {
    let mut world = World::new();
    let parent = world.spawn(Name("parent"));
    let child = world.spawn((Name("child"), ChildOf(parent)));
    let sailor = world.spawn((Name("sailor"), CrewOf(parent)));
    world.observe(|_: Trigger<OnRemove<ChildOf>>| panic!("user observer"));
    assert!(catch_unwind(AssertUnwindSafe(|| world.despawn(parent))).is_err());
    assert_forest(&world);
    assert!(!world.contains(parent));
    assert_eq!(world.parent(child), None, "its removal panicked: cut without hooks");
    assert_eq!(world.get::<CrewOf>(sailor), None, "the other relationship's cut is not lost to the panic");
}

#[test]
fn a_rollback_cuts_every_relationship_even_when_a_removal_hook_panics() {
    let mut world = World::new();
    let old = world.spawn(Name("old"));
    world.register_component_hooks::<ChildOf>().on_remove(|_, _| panic!("user hook"));
    let failed: Result<(), ()> = world.all_or_nothing(|world| {
        let (raft, camp) = (world.spawn(Name("raft")), world.spawn(Name("camp")));
        world.insert(old, CrewOf(raft)).unwrap();
        world.set_parent(old, camp).unwrap();
        Err(())
    });
    assert_eq!(failed, Err(()), "the error of the step, not the panic of the hook during the rollback");
    assert_forest(&world);
    assert_eq!(world.len(), 1);
    assert_eq!((world.parent(old), world.get::<CrewOf>(old)), (None, None));
}

#[test]
fn a_rollback_puts_thousands_of_moved_children_of_one_parent_back_in_order() {
    let mut world = World::new();
    let wide = world.spawn(Name("wide"));
    let kids: Vec<Entity> = (0..20_000).map(|_| world.spawn((Name("kid"), ChildOf(wide)))).collect();
    let result = world.all_or_nothing(|world| -> Result<(), ()> {
        let raft = world.spawn(Name("raft"));
        // A run from the front, then every third one from the back.
        for &kid in &kids[..50] {
            world.set_parent(kid, raft).unwrap();
        }
        for &kid in kids[50..].iter().rev().step_by(3) {
            world.set_parent(kid, raft).unwrap();
        }
        Err(())
    });
    assert_eq!(result, Err(()));
    assert_eq!(world.children(wide).to_vec(), kids, "every child back in its place");
    world.check_invariants().unwrap();
}

#[test]
fn a_panicking_cut_after_a_list_emptied_does_not_leave_the_empty_list() {
    // Found by the hierarchy model: despawning a parent whose children go
    // first (emptying its list) and which has a link of its own whose
    // removal a user observer stops. The cut of that link panicked in the
    // commands after the operation and took the list's removal with it.
    let mut world = World::new();
    let parent = world.spawn(Name("parent"));
    world.spawn((Name("a"), ChildOf(parent)));
    let b = world.spawn((Name("b"), ChildOf(parent)));
    world.insert(parent, CrewOf(b)).unwrap();
    world.observe(|_: Trigger<OnRemove<CrewOf>>| panic!("the observer panics"));
    let result = catch_unwind(AssertUnwindSafe(|| world.despawn_recursive(parent)));
    assert!(result.is_err());
    assert_forest(&world);
    world.check_invariants().unwrap();
    if world.contains(parent) {
        assert!(world.get::<Children>(parent).is_none(), "no empty list left behind");
    }
}
