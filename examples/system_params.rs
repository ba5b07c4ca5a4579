//! `#[derive(SystemParam)]`: a struct of system parameters that a system
//! takes as one argument.
//!
//! Two systems of a small arena fight need the same handful of parameters.
//! Grouping them in a struct keeps the signatures short and gives the
//! group a name; the schedule still sees every field, so the borrow checks
//! between systems (and inside the group) work as if each field were a
//! parameter of its own.
//!
//! ```sh
//! cargo run --example system_params
//! ```

use archetable::prelude::*;

#[derive(Component)]
struct Name(&'static str);

#[derive(Component)]
struct Health(i32);

#[derive(Component)]
struct Attack(i32);

/// Settings, read by the fight.
struct Rules {
    crit_every: u32,
}

/// What happened, written by the fight and read by the report.
#[derive(Default)]
struct BattleLog(Vec<String>);

/// Everything a fighting system needs. The struct has two lifetimes, the
/// world's (`'w`) and the system's own state (`'s`); component types in
/// queries are written `&'static T`.
#[derive(SystemParam)]
struct Arena<'w, 's> {
    fighters: Query<'w, 's, (Entity, &'static Name, &'static Attack)>,
    health: Query<'w, 's, &'static mut Health>,
    rules: Res<'w, Rules>,
    log: ResMut<'w, BattleLog>,
    /// Per system: each system that takes an `Arena` has its own counter.
    round: Local<'s, u32>,
    commands: Commands<'w, 's>,
}

impl Arena<'_, '_> {
    /// Each fighter hits the next one in line, critical hits doubling.
    fn exchange_blows(&mut self) {
        *self.round += 1;
        let crit = self.round.is_multiple_of(self.rules.crit_every);
        let line: Vec<(Entity, &str, i32)> =
            self.fighters.iter().map(|(entity, name, attack)| (entity, name.0, attack.0)).collect();
        for (i, &(_, attacker, attack)) in line.iter().enumerate() {
            let (target, target_name, _) = line[(i + 1) % line.len()];
            let mut health = self.health.get_mut(target).unwrap();
            let damage = if crit { attack * 2 } else { attack };
            health.0 -= damage;
            self.log.0.push(format!("round {}: {attacker} hits {target_name} for {damage}", *self.round));
        }
    }

    /// Despawns the fallen, at the end of the frame.
    fn carry_off_the_fallen(&mut self) {
        for (entity, name, _) in self.fighters.iter() {
            if self.health.get_mut(entity).is_ok_and(|health| health.0 <= 0) {
                self.log.0.push(format!("{} falls", name.0));
                self.commands.despawn(entity);
            }
        }
    }
}

/// A read-only group for the scoreboard.
#[derive(SystemParam)]
struct Scoreboard<'w, 's> {
    standing: Query<'w, 's, (&'static Name, &'static Health)>,
    log: Res<'w, BattleLog>,
}

fn fight(mut arena: Arena) {
    arena.exchange_blows();
    arena.carry_off_the_fallen();
}

/// A derived parameter mixes freely with plain ones.
fn report(board: Scoreboard, mut printed: Local<usize>) {
    for line in &board.log.0[*printed..] {
        println!("{line}");
    }
    *printed = board.log.0.len();
    // The fallen are despawned at the end of the frame, so this system
    // still sees them: leave them out.
    let standing: Vec<String> = board
        .standing
        .iter()
        .filter(|(_, health)| health.0 > 0)
        .map(|(name, health)| format!("{} {}", name.0, health.0))
        .collect();
    println!("  standing: {}", standing.join(", "));
}

fn main() {
    let mut world = World::new();
    world.insert_resource(Rules { crit_every: 3 });
    world.init_resource::<BattleLog>();
    world.spawn((Name("knight"), Health(20), Attack(3)));
    world.spawn((Name("troll"), Health(9), Attack(4)));

    let mut schedule = Schedule::new();
    let fought = schedule.add_system(fight).id();
    schedule.add_system(report).after(fought);
    for _ in 0..3 {
        schedule.run(&mut world);
    }

    let log = &world.resource::<BattleLog>().0;
    assert_eq!(log.len(), 7);
    assert_eq!(log[0], "round 1: knight hits troll for 3");
    assert_eq!(log[5], "round 3: troll hits knight for 8");
    assert_eq!(log[6], "troll falls");
    let survivors: Vec<(&str, i32)> = world.query::<(&Name, &Health)>().map(|(n, h)| (n.0, h.0)).collect();
    assert_eq!(survivors, [("knight", 4)]);
}
