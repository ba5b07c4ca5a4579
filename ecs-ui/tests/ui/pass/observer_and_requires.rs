// Observers of user and lifecycle events, and required components with and
// without a value, compile as the documentation writes them.
use archetable::prelude::*;

#[derive(Component, Default)]
struct Transform(f32);

#[derive(Component)]
struct Velocity(f32);

#[derive(Component)]
#[component(requires(Transform, Velocity = Velocity(1.0)))]
struct Ship;

struct Explode {
    radius: f32,
}

fn on_explode(trigger: Trigger<Explode>, ships: Query<Entity, With<Ship>>, mut commands: Commands) {
    if trigger.radius > 1.0 {
        for ship in ships.iter() {
            commands.despawn(ship);
        }
    }
}

fn main() {
    let mut world = World::new();
    world.observe(on_explode);
    world.observe(|t: Trigger<OnAdd<Ship>>, q: Query<&Velocity>| {
        let _ = q.get(t.target().unwrap()).unwrap().0;
    });
    let ship = world.spawn(Ship);
    world.entity_observe(ship, |_: Trigger<Explode>| {}).unwrap();
    world.trigger(Explode { radius: 2.0 });
    world.trigger_targets(Explode { radius: 0.0 }, ship);
}
