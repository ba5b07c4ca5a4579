//! Exclusive systems (`&mut World`) and `run_if` conditions.
//!
//! An exclusive system takes the whole world: it can spawn and despawn
//! directly, with no deferred commands, and the systems after it see the
//! result in the same frame. It runs alone, so use it for the few jobs that
//! need it. `run_if` skips a system in frames where a condition on the
//! world does not hold.
//!
//! ```sh
//! cargo run --example exclusive_and_run_if
//! ```

use archetable::prelude::*;

#[derive(Component)]
struct Enemy {
    hp: u32,
}

/// The frame number, counted by the first system.
#[derive(Default)]
struct Frame(u32);

/// Switched by the game between frames.
struct Rules {
    waves: bool,
}

/// What happened this frame.
#[derive(Default)]
struct Log(Vec<String>);

/// Exclusive: spawns straight into the world. Runs only in odd frames while
/// waves are on (see its `run_if` in `main`).
fn wave(world: &mut World) {
    world.spawn_batch((0..3).map(|_| Enemy { hp: 3 })).for_each(drop);
    world.resource_mut::<Log>().0.push("a wave of 3 arrives".into());
}

/// An ordinary system after `wave`: the new enemies are already there.
fn census(enemies: Query<&Enemy>, mut log: ResMut<Log>) {
    log.0.push(format!("{} enemies", enemies.iter().count()));
}

/// Runs only when the field is crowded. Its condition is checked after the
/// exclusive systems before it have run, so it sees this frame's wave.
fn alarm(mut log: ResMut<Log>) {
    log.0.push("alarm!".into());
}

fn attack(mut enemies: Query<&mut Enemy>) {
    for mut enemy in enemies.iter_mut() {
        enemy.hp -= 1;
    }
}

/// Exclusive: despawns the dead at once, so `world.len()` is right before
/// the frame ends.
fn reap(world: &mut World) {
    let dead: Vec<Entity> = world.query::<(Entity, &Enemy)>().filter(|(_, e)| e.hp == 0).map(|(id, _)| id).collect();
    for &entity in &dead {
        world.despawn(entity).unwrap();
    }
    if !dead.is_empty() {
        let left = world.len();
        world.resource_mut::<Log>().0.push(format!("{} fall, {left} left", dead.len()));
    }
}

fn main() {
    let mut world = World::new();
    world.init_resource::<Frame>();
    world.init_resource::<Log>();
    world.insert_resource(Rules { waves: true });

    let mut schedule = Schedule::new();
    // A closure taking `&mut World` is an exclusive system too.
    let counted = schedule.add_system(|world: &mut World| world.resource_mut::<Frame>().0 += 1).id();
    let waved = schedule
        .add_system(wave)
        .after(counted)
        .run_if(|world: &World| world.resource::<Rules>().waves && world.resource::<Frame>().0 % 2 == 1)
        .id();
    let counted_enemies = schedule.add_system(census).after(waved).id();
    schedule.add_system(alarm).after(counted_enemies).run_if(|world: &World| world.query::<&Enemy>().count() >= 5);
    let attacked = schedule.add_system(attack).after(counted_enemies).after(alarm).id();
    schedule.add_system(reap).after(attacked);

    let mut lines = Vec::new();
    for frame in 1..=6 {
        if frame == 5 {
            world.resource_mut::<Rules>().waves = false;
        }
        schedule.run(&mut world);
        let line = format!("frame {frame}: {}", std::mem::take(&mut world.resource_mut::<Log>().0).join(", "));
        println!("{line}");
        lines.push(line);
    }

    assert_eq!(world.resource::<Frame>().0, 6);
    assert_eq!(lines[0], "frame 1: a wave of 3 arrives, 3 enemies");
    assert_eq!(lines[2], "frame 3: a wave of 3 arrives, 6 enemies, alarm!, 3 fall, 3 left");
    assert_eq!(lines[4], "frame 5: 3 enemies, 3 fall, 0 left");
    assert_eq!(lines[5], "frame 6: 0 enemies");
    assert!(world.is_empty());
}
