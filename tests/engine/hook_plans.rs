//! A world works out once per bundle what the hooks of a spawn, an insert
//! or a removal of it come to (nothing, only the engine's relationship
//! upkeep, or the general path), and works it out again whenever a hook or
//! an observer is registered or removed. These tests spawn, insert and
//! remove a bundle first, then change what watches it, and check that the
//! next operation runs exactly what is registered then.

use archetable::prelude::*;

#[derive(Component, Debug, PartialEq)]
struct Unwatched(u32);
#[derive(Component, Debug, PartialEq)]
struct Watched(u32);
/// Always hooked, so that the world takes the hooked paths from the start.
#[derive(Component, Debug, PartialEq)]
struct Other(u32);
#[derive(Component, Debug, Default, PartialEq)]
struct Needed(u32);
#[derive(Component, Debug, PartialEq)]
#[component(requires(Needed))]
struct Needs(u32);

#[derive(Default, Debug, PartialEq)]
struct Calls(Vec<String>);

fn world() -> World {
    let mut world = World::new();
    world.init_resource::<Calls>();
    world.register_component_hooks::<Other>().on_add(|world, _| world.resource_mut::<Calls>().0.push("Other".into()));
    world
}

fn calls(world: &mut World) -> Vec<String> {
    std::mem::take(&mut world.resource_mut::<Calls>().0)
}

#[test]
fn a_hook_registered_after_a_bundle_was_spawned_runs_on_its_next_spawn_and_insert() {
    let mut world = world();
    let first = world.spawn((Unwatched(1), Watched(1)));
    let bare = world.spawn(Unwatched(0));
    world.insert(bare, Watched(0)).unwrap();
    assert_eq!(calls(&mut world), Vec::<String>::new());

    world.register_component_hooks::<Watched>().on_add(|world, e| {
        let value = world.get::<Watched>(e).unwrap().0;
        world.resource_mut::<Calls>().0.push(format!("add {value}"));
    });
    let second = world.spawn((Unwatched(2), Watched(2)));
    let bare = world.spawn(Unwatched(0));
    world.insert(bare, Watched(3)).unwrap();
    assert_eq!(calls(&mut world), ["add 2", "add 3"]);
    assert_eq!(world.get::<Watched>(first), Some(&Watched(1)));
    assert_eq!(world.get::<Watched>(second), Some(&Watched(2)));
    world.check_invariants().unwrap();
}

#[test]
#[cfg(feature = "observers")]
fn an_observer_added_after_a_bundle_was_spawned_sees_the_next_spawn_and_not_after_it_is_removed() {
    let mut world = world();
    world.spawn(Unwatched(1));
    let observer = world.observe(|t: Trigger<OnAdd<Unwatched>>, mut calls: ResMut<Calls>| {
        calls.0.push(format!("observed {}", t.target().unwrap()));
    });
    let seen = world.spawn(Unwatched(2));
    assert_eq!(calls(&mut world), [format!("observed {seen}")]);
    assert!(world.remove_observer(observer));
    world.spawn(Unwatched(3));
    assert_eq!(calls(&mut world), Vec::<String>::new());
}

#[test]
#[cfg(feature = "observers")]
fn an_observer_of_another_event_leaves_a_bundle_unwatched() {
    struct Ping;
    let mut world = world();
    world.observe(|_: Trigger<Ping>, mut calls: ResMut<Calls>| calls.0.push("ping".into()));
    world.spawn(Unwatched(1));
    world.spawn((Unwatched(2), Other(2)));
    world.trigger(Ping);
    assert_eq!(calls(&mut world), ["Other", "ping"]);
}

#[test]
fn a_hook_on_a_required_component_runs_for_a_bundle_planned_before_it() {
    let mut world = world();
    let before = world.spawn(Needs(1));
    assert_eq!(world.get::<Needed>(before), Some(&Needed(0)));
    world.register_component_hooks::<Needed>().on_insert(|world, e| {
        let needs = world.get::<Needs>(e).map(|n| n.0);
        world.resource_mut::<Calls>().0.push(format!("needed for {needs:?}"));
    });
    world.spawn(Needs(2));
    let later = world.spawn(Unwatched(3));
    world.insert(later, Needs(3)).unwrap();
    assert_eq!(calls(&mut world), ["needed for Some(2)", "needed for Some(3)"]);
}

#[test]
#[cfg(all(feature = "hierarchy", feature = "observers"))]
fn children_spawned_before_and_after_an_observer_of_child_of_are_listed_in_order() {
    let mut world = world();
    let root = world.spawn(Unwatched(0));
    let early: Vec<Entity> = (0..3).map(|i| world.spawn((Unwatched(i), ChildOf(root)))).collect();
    world.observe(|t: Trigger<OnAdd<ChildOf>>, parents: Query<&ChildOf>, mut calls: ResMut<Calls>| {
        let child = t.target().unwrap();
        // The engine's upkeep ran before the observer: the link is whole.
        let parent = parents.get(child).unwrap().0;
        calls.0.push(format!("{child} under {parent}"));
    });
    let late: Vec<Entity> = (3..5).map(|i| world.spawn((Unwatched(i), ChildOf(root)))).collect();
    assert_eq!(calls(&mut world), late.iter().map(|c| format!("{c} under {root}")).collect::<Vec<_>>());
    let all: Vec<Entity> = early.iter().chain(&late).copied().collect();
    assert_eq!(world.children(root).to_vec(), all);
    world.check_invariants().unwrap();
}

#[test]
#[cfg(feature = "hierarchy")]
fn a_user_hook_on_child_of_added_later_runs_after_the_engine_upkeep() {
    let mut world = world();
    let root = world.spawn(Unwatched(0));
    let first = world.spawn((Unwatched(1), ChildOf(root)));
    world.register_component_hooks::<ChildOf>().on_insert(|world, e| {
        let parent = world.get::<ChildOf>(e).unwrap().0;
        let listed = world.get::<Children>(parent).is_some_and(|c| c.contains(e));
        world.resource_mut::<Calls>().0.push(format!("listed {listed}"));
    });
    let second = world.spawn((Unwatched(2), ChildOf(root)));
    let moved = world.spawn(Unwatched(3));
    world.insert(moved, ChildOf(root)).unwrap();
    assert_eq!(calls(&mut world), ["listed true", "listed true"]);
    assert_eq!(world.children(root).to_vec(), [first, second, moved]);
    world.check_invariants().unwrap();
}

#[test]
#[cfg(feature = "hierarchy")]
fn a_refused_child_spawned_through_the_engine_only_path_is_unlinked() {
    let mut world = world();
    let root = world.spawn(Unwatched(0));
    world.spawn((Unwatched(1), ChildOf(root)));
    world.despawn(root).unwrap();
    let orphan = world.spawn((Unwatched(2), ChildOf(root)));
    assert!(!world.has::<ChildOf>(orphan), "a child of a dead parent loses its link");
    world.check_invariants().unwrap();
}

#[test]
fn a_despawn_hook_registered_after_a_table_was_despawned_from_runs_on_the_next_despawn() {
    let mut world = world();
    let first = world.spawn(Unwatched(1));
    let second = world.spawn(Unwatched(2));
    world.despawn(first).unwrap();
    world.register_component_hooks::<Unwatched>().on_despawn(|world, e| {
        let value = world.get::<Unwatched>(e).unwrap().0;
        world.resource_mut::<Calls>().0.push(format!("despawn {value}"));
    });
    world.despawn(second).unwrap();
    assert_eq!(calls(&mut world), ["despawn 2"]);
    assert_eq!(world.len(), 0);
}

#[test]
#[cfg(feature = "observers")]
fn a_despawn_observer_added_later_runs_and_one_attached_to_the_entity_goes_with_it() {
    let mut world = world();
    let first = world.spawn(Unwatched(1));
    world.despawn(first).unwrap();
    let watched = world.spawn(Unwatched(2));
    let observer = world.observe(|t: Trigger<OnDespawn<Unwatched>>, mut calls: ResMut<Calls>| {
        calls.0.push(format!("gone {}", t.target().unwrap()));
    });
    world.despawn(watched).unwrap();
    assert_eq!(calls(&mut world), [format!("gone {watched}")]);
    assert!(world.remove_observer(observer));

    struct Poke;
    let target = world.spawn(Unwatched(3));
    let attached = world.entity_observe(target, |_: Trigger<Poke>| {}).unwrap();
    world.despawn(target).unwrap();
    assert!(!world.contains_observer(attached), "an entity's observers go with it");
    assert_eq!(calls(&mut world), Vec::<String>::new());
}

#[test]
fn a_replace_hook_registered_after_an_insert_runs_on_the_next_overwrite_only() {
    let mut world = world();
    let e = world.spawn(Unwatched(0));
    world.insert(e, Watched(1)).unwrap();
    world.insert(e, Watched(2)).unwrap();
    assert_eq!(calls(&mut world), Vec::<String>::new());

    world.register_component_hooks::<Watched>().on_replace(|world, e| {
        let value = world.get::<Watched>(e).unwrap().0;
        world.resource_mut::<Calls>().0.push(format!("replace {value}"));
    });
    world.insert(e, Watched(3)).unwrap();
    // An entity without the component has nothing to replace.
    let fresh = world.spawn(Unwatched(0));
    world.insert(fresh, Watched(4)).unwrap();
    assert_eq!(calls(&mut world), ["replace 2"]);
    assert_eq!((world.get::<Watched>(e), world.get::<Watched>(fresh)), (Some(&Watched(3)), Some(&Watched(4))));
}

#[test]
fn a_remove_hook_registered_after_a_removal_runs_on_the_next_removal() {
    let mut world = world();
    let a = world.spawn((Unwatched(1), Watched(1)));
    let b = world.spawn((Unwatched(2), Watched(2)));
    assert_eq!(world.remove::<Watched>(a), Ok(Watched(1)));
    assert_eq!(calls(&mut world), Vec::<String>::new());

    world.register_component_hooks::<Watched>().on_remove(|world, e| {
        let value = world.get::<Watched>(e).unwrap().0;
        world.resource_mut::<Calls>().0.push(format!("remove {value}"));
    });
    assert_eq!(world.remove::<Watched>(b), Ok(Watched(2)));
    assert_eq!(calls(&mut world), ["remove 2"]);
    // A removal the entity cannot give runs nothing.
    assert!(world.remove::<Watched>(b).is_err());
    assert_eq!(calls(&mut world), Vec::<String>::new());
    world.check_invariants().unwrap();
}

#[test]
#[cfg(feature = "observers")]
fn replace_and_remove_observers_added_later_see_the_next_insert_and_removal() {
    let mut world = world();
    let e = world.spawn((Unwatched(1), Watched(1)));
    world.insert(e, Watched(2)).unwrap();
    assert_eq!(world.remove::<Unwatched>(e), Ok(Unwatched(1)));
    world.insert(e, Unwatched(3)).unwrap();
    let replaced = world.observe(|t: Trigger<OnReplace<Watched>>, mut calls: ResMut<Calls>| {
        calls.0.push(format!("replace {}", t.target().unwrap()));
    });
    let removed = world.observe(|t: Trigger<OnRemove<Unwatched>>, mut calls: ResMut<Calls>| {
        calls.0.push(format!("remove {}", t.target().unwrap()));
    });
    world.insert(e, Watched(3)).unwrap();
    assert_eq!(world.remove::<Unwatched>(e), Ok(Unwatched(3)));
    assert_eq!(calls(&mut world), [format!("replace {e}"), format!("remove {e}")]);
    assert!(world.remove_observer(replaced) && world.remove_observer(removed));
    world.insert(e, (Watched(4), Unwatched(4))).unwrap();
    assert_eq!(world.remove::<Unwatched>(e), Ok(Unwatched(4)));
    assert_eq!(calls(&mut world), Vec::<String>::new());
}
