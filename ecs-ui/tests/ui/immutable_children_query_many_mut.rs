//! The engine keeps `Children`: no `&mut Children` from a query, so two
//! lists cannot be swapped into naming their own owners.
use archetable::prelude::*;

fn main() {
    let mut world = World::new();
    let a = world.spawn(());
    let b = world.spawn(());
    world.spawn(ChildOf(a));
    world.spawn(ChildOf(b));
    let [mut x, mut y] = world.query_many_mut::<&mut Children, 2>([a, b]).unwrap();
    std::mem::swap(&mut *x, &mut *y);
}
