//! `ChildOf` changes only through an insert (so its parent's list
//! follows): a system cannot ask for `&mut ChildOf`.
use archetable::prelude::*;

fn reparent(mut children: Query<&mut ChildOf>) {
    for mut child_of in children.iter_mut() {
        *child_of = ChildOf(child_of.0);
    }
}

fn main() {
    let mut world = World::new();
    world.run_system_once(reparent);
}
