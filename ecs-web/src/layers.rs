//! Every layer of the engine once, as a game on the web would use it:
//! saves and loads to and from memory (JSON, RON, binary) of the
//! showcase's world, prefabs, a hierarchy, observers and required
//! components, change tracking, and a schedule with events and commands.
//! Each check panics when the engine answers wrong (a trap in wasm); the
//! digest of what they computed must be the same natively and in wasm.

use archetable::prelude::*;
use serde::{Deserialize, Serialize};

use crate::script;
use crate::sim::{FrameStats, Frozen, Level, Position, Rocket, Shield, Spark, Velocity};

/// A check: its name, and the function that runs it and returns what it
/// computed.
pub type Check = (&'static str, fn() -> u64);

/// The checks, by name.
pub const CHECKS: [Check; 6] = [
    ("saves", saves),
    ("prefabs", prefabs),
    ("hierarchy", hierarchy),
    ("observers", observers),
    ("change_tracking", change_tracking),
    ("schedule", schedule),
];

/// Runs every check and returns the digest of their results.
pub fn digest() -> u64 {
    CHECKS
        .iter()
        .map(|(_, check)| check())
        .fold(0xcbf2_9ce4_8422_2325, |d, part| (d ^ part).wrapping_mul(0x0100_0000_01b3))
}

/// The showcase's world after 120 scripted frames, saved and loaded back
/// in each format: the same handles and positions, bit for bit.
pub fn saves() -> u64 {
    let mut game = script::run(120, true);
    game.game_mut()
        .world_mut()
        .register_serde::<Position>("Position")
        .register_serde::<Velocity>("Velocity")
        .register_serde::<Rocket>("Rocket")
        .register_serde::<Spark>("Spark")
        .register_serde::<Frozen>("Frozen")
        .register_serde::<Shield>("Shield")
        .register_serde_resource::<FrameStats>("FrameStats")
        .register_serde_resource::<Level>("Level");
    let world = game.game().world();
    let registry = world.serde_registry();
    let expected = game.checksum();
    let json = world.save_json().expect("a JSON save");
    let ron = world.save_ron().expect("a RON save");
    let binary = world.save_binary().expect("a binary save");
    let loaded = [
        World::load_json(&registry, &json.data).expect("the JSON save loads"),
        World::load_ron(&registry, &ron.data).expect("the RON save loads"),
        World::load_binary(&registry, &binary.data).expect("the binary save loads"),
    ];
    for copy in &loaded {
        assert_eq!(crate::sim::checksum(copy), expected, "a loaded world differs from the saved one");
        assert_eq!(copy.len(), world.len());
        assert_eq!(copy.resource::<Level>().number, world.resource::<Level>().number);
    }
    expected ^ (json.data.len() as u64) << 1 ^ (binary.data.len() as u64) << 17
}

#[derive(Component, Serialize, Deserialize, Default, Debug, PartialEq)]
struct Move {
    speed: f32,
}

#[derive(Component, Serialize, Deserialize, Default, Debug, PartialEq)]
struct Colour {
    colour: String,
}

/// Prefabs from JSON, with inheritance and overrides.
pub fn prefabs() -> u64 {
    let mut world = World::new();
    world.register_serde::<Move>("Move").register_serde::<Colour>("Colour");
    let prefabs = Prefabs::from_json_str(
        r#"{
        "Zombie":      { "Move": { "speed": 0.5 }, "Colour": { "colour": "grey" } },
        "GreenZombie": { "extends": "Zombie", "Colour": { "colour": "green" } }
    }"#,
    )
    .expect("the prefabs parse");
    let fast = Overrides::new().set("Move", "speed", 2.0);
    let leader = world.spawn_prefab_with(&prefabs, "Zombie", &fast).expect("a zombie");
    let zombie = world.spawn_prefab(&prefabs, "GreenZombie").expect("a green zombie");
    assert!(world.spawn_prefab(&prefabs, "GreenZombi").is_err());
    assert_eq!(world.get::<Move>(leader), Some(&Move { speed: 2.0 }));
    assert_eq!(world.get::<Colour>(zombie).map(|c| c.colour.as_str()), Some("green"));
    leader.to_bits() ^ zombie.to_bits().rotate_left(32) ^ u64::from(world.get::<Move>(zombie).unwrap().speed.to_bits())
}

#[derive(Component)]
struct Name(&'static str);

/// A tree kept by the engine's hooks, walked and despawned.
pub fn hierarchy() -> u64 {
    let mut world = World::new();
    let tank = world.spawn(Name("tank"));
    let turret = world.spawn((Name("turret"), ChildOf(tank)));
    let barrel = world.spawn((Name("barrel"), ChildOf(turret)));
    assert_eq!(world.children(tank), [turret]);
    assert_eq!(world.ancestors(barrel).collect::<Vec<_>>(), [turret, tank]);
    assert_eq!(world.hierarchy_order(), [tank, turret, barrel]);
    assert!(world.set_parent(tank, barrel).is_err());
    assert_eq!(world.get::<Name>(barrel).map(|n| n.0), Some("barrel"));
    assert_eq!(world.despawn_recursive(tank), Ok(3));
    assert!(world.is_empty());
    barrel.to_bits()
}

#[derive(Component, Default, Debug, PartialEq)]
struct Transform(f32);

#[derive(Component, Debug, PartialEq)]
struct Health(u32);

#[derive(Component)]
#[component(requires(Transform, Health = Health(3)))]
struct Crate;

struct Explode {
    damage: u32,
}

#[derive(Default)]
struct Broken(Vec<Entity>);

/// Observers of a triggered event and of a lifecycle event, and required
/// components.
pub fn observers() -> u64 {
    let mut world = World::new();
    world.init_resource::<Broken>();
    world.observe(|t: Trigger<Explode>, mut health: Query<&mut Health>, mut commands: Commands| {
        let target = t.target().expect("a target");
        let mut hp = health.get_mut(target).expect("a crate");
        hp.0 = hp.0.saturating_sub(t.damage);
        if hp.0 == 0 {
            commands.despawn(target);
        }
    });
    world.observe(|t: Trigger<OnRemove<Crate>>, mut broken: ResMut<Broken>| {
        broken.0.push(t.target().expect("a target"));
    });
    let a = world.spawn(Crate);
    assert_eq!(world.get::<Health>(a), Some(&Health(3)));
    assert_eq!(world.get::<Transform>(a), Some(&Transform(0.0)));
    let b = world.spawn((Crate, Health(10)));
    world.trigger_targets(Explode { damage: 5 }, [a, b]);
    assert!(!world.contains(a));
    assert_eq!(world.get::<Health>(b), Some(&Health(5)));
    assert_eq!(world.resource::<Broken>().0, [a]);
    a.to_bits() ^ b.to_bits().rotate_left(7)
}

#[derive(Component)]
#[component(track_changes)]
struct Hp(u32);

#[derive(Default)]
struct Redraws(u32);

/// `Changed<T>` sees each write once.
pub fn change_tracking() -> u64 {
    fn poison(mut q: Query<&mut Hp>) {
        for mut hp in q.iter_mut() {
            if hp.0 > 5 {
                hp.0 -= 1;
            }
        }
    }
    fn redraw(changed: Query<&Hp, Changed<Hp>>, mut redraws: ResMut<Redraws>) {
        redraws.0 += changed.iter().count() as u32;
    }
    let mut world = World::new();
    world.init_resource::<Redraws>();
    world.spawn(Hp(7));
    world.spawn(Hp(3));
    let mut schedule = Schedule::new();
    let bars = schedule.add_system(redraw).id();
    schedule.add_system(poison).before(bars);
    for _ in 0..3 {
        schedule.run(&mut world);
    }
    assert_eq!(world.resource::<Redraws>().0, 3);
    u64::from(world.resource::<Redraws>().0)
}

#[derive(Component)]
struct Body(f32);

struct Scored;

#[derive(Default)]
struct Score(u32);

/// Systems that could run in parallel, events, deferred despawns and
/// `par_for_each`: the results of one thread.
pub fn schedule() -> u64 {
    fn fall(mut bodies: Query<&mut Body>) {
        bodies.par_iter_mut().for_each(|mut b| b.0 -= 1.0);
    }
    fn floor(bodies: Query<(Entity, &Body)>, mut commands: Commands, mut scored: EventWriter<Scored>) {
        for (entity, body) in bodies.iter() {
            if body.0 <= 0.0 {
                commands.despawn(entity);
                scored.send(Scored);
            }
        }
    }
    fn tally(mut scored: EventReader<Scored>, mut score: ResMut<Score>) {
        score.0 += scored.read().count() as u32;
    }
    let mut world = World::new();
    world.init_resource::<Score>();
    world.spawn_batch((0..1_000).map(|i| (Body((i % 10) as f32),))).for_each(drop);
    let mut schedule = Schedule::new();
    let fell = schedule.add_system(fall).id();
    schedule.add_system(floor).after(fell);
    schedule.add_system(tally).after(floor);
    for _ in 0..5 {
        schedule.run(&mut world);
    }
    // Bodies that started at 0..=5 reached the floor in five frames.
    assert_eq!(world.len(), 400);
    let score = world.resource::<Score>().0;
    assert!((500..=600).contains(&score), "score {score}");
    u64::from(score) << 32 | world.len() as u64
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_layer_answers() {
        super::digest();
    }
}
