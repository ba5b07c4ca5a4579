//! Status effects that come and go every turn, kept in sparse storage:
//! adding or removing one moves no table row and creates no archetype,
//! however many combinations of effects the units end up with.
//!
//! Run with `cargo run --example sparse`.

use archetable::prelude::*;

#[derive(Component, Debug)]
struct Hp(i32);

/// Loses `per_turn` hit points each turn while it lasts.
#[derive(Component)]
#[component(storage = "sparse")]
struct Poisoned {
    per_turn: i32,
    turns_left: u32,
}

/// Skips the next attack.
#[derive(Component)]
#[component(storage = "sparse")]
struct Stunned;

fn main() {
    let mut world = World::new();
    let units: Vec<Entity> = world.spawn_batch((0..8).map(|i| Hp(20 + i))).collect();
    let tables = world.archetypes().len();

    let mut damage = 0;
    for turn in 0..6u32 {
        // Effects land on some units: every combination of them, and none
        // of it makes a new table.
        for (i, &unit) in units.iter().enumerate() {
            if (i as u32 + turn).is_multiple_of(3) {
                world.insert(unit, Poisoned { per_turn: 2, turns_left: 2 }).unwrap();
            }
            if (i as u32 * turn) % 4 == 1 {
                world.insert(unit, Stunned).unwrap();
            }
        }
        // Poison ticks down, and wears off.
        let mut cured = Vec::new();
        for (unit, mut hp, mut poison) in world.query_mut::<(Entity, &mut Hp, &mut Poisoned)>() {
            hp.0 -= poison.per_turn;
            damage += poison.per_turn;
            poison.turns_left -= 1;
            if poison.turns_left == 0 {
                cured.push(unit);
            }
        }
        for unit in cured {
            world.remove::<Poisoned>(unit).unwrap();
        }
        // Stunned units skip this turn's attack, then recover.
        let attacking = world.query_filtered::<&Hp, Without<Stunned>>().count();
        let stunned: Vec<Entity> = world.query_filtered::<Entity, With<Stunned>>().collect();
        for unit in &stunned {
            world.remove::<Stunned>(*unit).unwrap();
        }
        let poisoned = world.query::<&Poisoned>().count();
        println!("turn {turn}: {attacking} attack, {} stunned, {poisoned} still poisoned", stunned.len());
    }

    let total: i32 = world.query::<&Hp>().map(|hp| hp.0).sum();
    println!("hit points left: {total}; tables: {} before, {} after", tables, world.archetypes().len());
    assert_eq!(world.archetypes().len(), tables, "sparse effects made no table");
    assert_eq!((total, damage), (130, 58));
    assert_eq!(total, (20..28).sum::<i32>() - damage, "the poison, and only the poison, took hit points");
    world.check_invariants().unwrap();
}
