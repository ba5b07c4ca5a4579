//! Tree walks over lists no hook would make. Safe code cannot edit a
//! list (and one inserted whole is undone), so the damage is done here
//! through the engine's own unhooked access; every walk must still end,
//! and `check_invariants` must name the damage.

use super::*;

/// `parent` with one child, plus an entity in no tree.
fn family(world: &mut World) -> (Entity, Entity, Entity) {
    let parent = world.spawn(());
    let child = world.spawn(ChildOf(parent));
    let stranger = world.spawn(());
    (parent, child, stranger)
}

/// Adds `extra` to `owner`'s list, behind the hooks' back.
fn smuggle(world: &mut World, owner: Entity, extra: Entity) {
    world.get_mut_changed::<Children>(owner).unwrap().0.push(extra);
}

#[test]
fn a_list_naming_a_stranger_leads_nowhere_and_is_reported() {
    let mut world = World::new();
    let (parent, child, stranger) = family(&mut world);
    smuggle(&mut world, parent, stranger);
    let problem = world.check_invariants().unwrap_err();
    assert!(problem.contains("does not point back"), "{problem}");
    assert_eq!(world.descendants(parent).collect::<Vec<_>>(), [child]);
    assert_eq!(world.hierarchy_order(), [parent, child]);
    assert_eq!(world.despawn_recursive(parent), Ok(2));
    assert!(world.contains(stranger), "a recursive despawn kills only real children");
}

#[test]
fn a_list_naming_its_owner_does_not_loop_and_is_reported() {
    let mut world = World::new();
    let (parent, child, _) = family(&mut world);
    smuggle(&mut world, parent, parent);
    let problem = world.check_invariants().unwrap_err();
    assert!(problem.contains("names its owner"), "{problem}");
    assert_eq!(world.descendants(parent).collect::<Vec<_>>(), [child]);
    assert_eq!(world.hierarchy_order(), [parent, child]);
    assert_eq!(world.despawn_recursive(parent), Ok(2));
    assert_eq!(world.len(), 1);
}

#[test]
fn two_lists_naming_each_other_do_not_loop_and_are_reported() {
    let mut world = World::new();
    let (a, a_child, _) = family(&mut world);
    let (b, b_child, _) = family(&mut world);
    smuggle(&mut world, a, b);
    smuggle(&mut world, b, a);
    assert!(world.check_invariants().is_err());
    assert_eq!(world.descendants(a).collect::<Vec<_>>(), [a_child]);
    assert_eq!(world.hierarchy_order(), [a, a_child, b, b_child]);
    assert_eq!(world.despawn_recursive(a), Ok(2));
    assert!(world.contains(b) && world.contains(b_child));
}

#[test]
fn a_cycle_of_links_does_not_loop_and_is_reported() {
    let mut world = World::new();
    let a = world.spawn(());
    let b = world.spawn(ChildOf(a));
    let c = world.spawn(ChildOf(b));
    // a <- b <- c, then a points at c behind the hooks' back, and c lists a.
    world.insert_unhooked(a, ChildOf(c)).unwrap();
    world.insert_unhooked(c, Children(SourceList::from_vec(vec![a]))).unwrap();
    let problem = world.check_invariants().unwrap_err();
    assert!(problem.contains("cycle"), "{problem}");
    assert_eq!(world.descendants(a).collect::<Vec<_>>(), [b, c]);
    assert_eq!(world.ancestors(a).count(), 3);
    assert_eq!(world.hierarchy_order(), []);
    assert_eq!(world.despawn_recursive(a), Ok(3));
    assert!(world.is_empty());
}
