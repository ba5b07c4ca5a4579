//! Parent/child trees: a small scene of a tank (hull, turret, barrel) and a
//! cart with two wheels, each part placed relative to its parent. One pass
//! over `World::hierarchy_order` (every parent before its children) turns
//! the local transforms into global ones; then the turret turns, the cart
//! drives off with one wheel knocked loose, and the pass runs again.
//!
//! Run with `cargo run --example hierarchy`.

use archetable::prelude::*;

/// A 2D transform: rotate by `angle` (radians), then move by `(x, y)`.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Transform {
    x: f32,
    y: f32,
    angle: f32,
}

impl Transform {
    const IDENTITY: Transform = Transform { x: 0.0, y: 0.0, angle: 0.0 };

    fn at(x: f32, y: f32) -> Transform {
        Transform { x, y, angle: 0.0 }
    }

    /// `self` applied after `local`: a child's global transform from its
    /// parent's global one.
    fn then(self, local: Transform) -> Transform {
        let (sin, cos) = self.angle.sin_cos();
        Transform {
            x: self.x + cos * local.x - sin * local.y,
            y: self.y + sin * local.x + cos * local.y,
            angle: self.angle + local.angle,
        }
    }
}

/// Where a part sits relative to its parent (or the world, for a root).
#[derive(Component, Clone, Copy, Debug)]
struct Local(Transform);

/// Where a part sits in the world; written by `propagate`.
#[derive(Component, Clone, Copy, Debug)]
struct Global(Transform);

#[derive(Component)]
struct Name(&'static str);

/// Computes every `Global` from the `Local`s, parents first. Entities in no
/// tree are their own roots.
fn propagate(world: &mut World) {
    for (local, mut global) in world.query_filtered_mut::<(&Local, &mut Global), Without<ChildOf>>() {
        global.0 = local.0;
    }
    for entity in world.hierarchy_order() {
        let Some(parent) = world.parent(entity) else { continue };
        let parent_global = world.get::<Global>(parent).expect("every part has a Global").0;
        let local = world.get::<Local>(entity).expect("every part has a Local").0;
        world.get_mut::<Global>(entity).expect("every part has a Global").0 = parent_global.then(local);
    }
}

fn part(name: &'static str, local: Transform) -> (Name, Local, Global) {
    (Name(name), Local(local), Global(Transform::IDENTITY))
}

fn print(world: &World, title: &str) {
    println!("{title}");
    for entity in world.hierarchy_order() {
        let depth = world.ancestors(entity).count();
        let (name, global) = world.query_one::<(&Name, &Global)>(entity).expect("a part");
        let g = global.0;
        println!(
            "  {:indent$}{:<8} at ({:6.2}, {:6.2}) facing {:5.1}°",
            "",
            name.0,
            g.x,
            g.y,
            g.angle.to_degrees(),
            indent = depth * 2
        );
    }
}

fn main() {
    let mut world = World::new();
    let hull = world.spawn(part("hull", Transform::at(10.0, 0.0)));
    let turret = world.spawn((part("turret", Transform::at(0.0, 1.0)), ChildOf(hull)));
    let barrel = world.spawn((part("barrel", Transform::at(2.0, 0.0)), ChildOf(turret)));
    let cart = world.spawn(part("cart", Transform::at(-5.0, 0.0)));
    let wheels: Vec<Entity> =
        [-1.0, 1.0].into_iter().map(|x| world.spawn((part("wheel", Transform::at(x, -0.5)), ChildOf(cart)))).collect();

    propagate(&mut world);
    print(&world, "the scene:");
    let tip = world.get::<Global>(barrel).unwrap().0;
    assert_eq!((tip.x, tip.y), (12.0, 1.0));

    // The turret turns a quarter circle; the cart drives 3 units and loses
    // its front wheel, which stays where it fell.
    world.get_mut::<Local>(turret).unwrap().0.angle = std::f32::consts::FRAC_PI_2;
    world.get_mut::<Local>(cart).unwrap().0.x += 3.0;
    let fallen = world.get::<Global>(wheels[1]).unwrap().0;
    world.remove_parent(wheels[1]).unwrap();
    world.get_mut::<Local>(wheels[1]).unwrap().0 = fallen;
    propagate(&mut world);
    print(&world, "after the turret turned and the cart drove off:");
    let loose = world.get::<Global>(wheels[1]).unwrap().0;
    println!("  the loose wheel lies at ({:.2}, {:.2}), in no tree", loose.x, loose.y);

    let tip = world.get::<Global>(barrel).unwrap().0;
    assert!((tip.x - 10.0).abs() < 1e-5 && (tip.y - 3.0).abs() < 1e-5, "{tip:?}");
    assert_eq!(world.get::<Global>(wheels[0]).unwrap().0, Transform::at(-3.0, -0.5));
    assert_eq!(world.get::<Global>(wheels[1]).unwrap().0, Transform::at(-4.0, -0.5));
    assert_eq!(world.children(cart), [wheels[0]]);
    assert_eq!(world.despawn_recursive(hull), Ok(3));
    println!("the tank is gone with its turret and barrel: {} parts left", world.len());
}
