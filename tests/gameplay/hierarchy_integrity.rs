//! The engine's own bookkeeping against hand-made damage: deep trees that
//! `check_invariants` must check in linear time, and target lists edited
//! into shapes no hook would make, which no tree walk may loop on.

#![cfg(feature = "hierarchy")]

use archetable::prelude::*;

/// A chain `root <- 1 <- 2 <- .. <- n-1`, built leaf first so that no
/// insert walks the chain.
fn chain(world: &mut World, n: usize) -> Vec<Entity> {
    let entities: Vec<Entity> = (0..n).map(|_| world.spawn(())).collect();
    for pair in entities.windows(2).rev() {
        world.insert(pair[1], ChildOf(pair[0])).unwrap();
    }
    entities
}

#[test]
fn check_invariants_is_linear_on_a_chain_of_a_hundred_thousand() {
    let mut world = World::new();
    let entities = chain(&mut world, 100_000);
    assert_eq!(world.check_invariants(), Ok(()));
    assert_eq!(world.descendants(entities[0]).count(), 99_999);
    // Cut near the top: two trees, each walked once.
    world.remove_parent(entities[1]).unwrap();
    assert_eq!(world.check_invariants(), Ok(()));
    assert_eq!(world.hierarchy_order().len(), 99_999);
}

/// A list written by name (what the inspector's `insert` does) is refused:
/// the engine keeps `Children` from the children's `ChildOf`.
#[cfg(feature = "serde")]
#[test]
fn a_children_list_written_by_name_is_refused_and_changes_nothing() {
    use archetable::data::EditError;

    let mut world = World::new();
    let parent = world.spawn(());
    let child = world.spawn(ChildOf(parent));
    let stranger = world.spawn(());
    let registry = world.serde_registry();
    let list = format!("[\"{stranger}\", \"{parent}\"]");
    let refused = registry.insert_components_json(&mut world, parent, &[("Children", &list)]);
    assert_eq!(refused, Err(EditError::EngineKept { name: "Children".into() }));
    assert!(registry.spawn_json(&mut world, &[("Children", &list)]).is_err());
    assert!(registry.remove_component_by_name(&mut world, parent, "Children").is_err());
    assert_eq!(world.children(parent), [child]);
    assert_eq!(world.len(), 3);
    assert_eq!(world.check_invariants(), Ok(()));
    assert_eq!(world.despawn_recursive(parent), Ok(2));
    assert!(world.contains(stranger));
}
