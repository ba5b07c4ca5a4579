//! The arena game the tests and the example play: two ships steered by
//! their players' inputs, bullets spawned every few frames and despawned
//! when they expire or hit, a formation (a parent with wingmen as
//! children, one replaced every few frames), a sparse `Shield` toggled on
//! hits, a phase resource that moves through a small state machine, and
//! drifting rocks to make the world bigger. A hit is an event: the system
//! that finds it sends a `Hit`, one reader later in the frame scores it,
//! another at the start of the next frame knocks the ship back; a reader of
//! `RemovedComponents<Bullet>` counts the bullets gone. `Sprite` is
//! render-only and skipped by rollback.

// The examples include this file too, each using part of it.
#![allow(dead_code)]

use std::hash::Hasher;

use archetable_core::{
    ChildOf, Children, Commands, Entity, EventReader, EventWriter, IntoSystems, Query, RemovedComponents, Res, ResMut,
    Schedule, With, Without, World,
};
use archetable_macros::Component;
use archetable_rollback::{PeerAddress, PlayerInputs, RollbackDriver, RollbackRng, SimTime, StableHasher};
use serde::{Deserialize, Serialize};

/// One player's buttons in one frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Input(pub u8);

pub const UP: u8 = 1;
pub const DOWN: u8 = 2;
pub const LEFT: u8 = 4;
pub const RIGHT: u8 = 8;
pub const FIRE: u8 = 16;

/// The arena's half-width, in fixed-point units (1/256).
pub const HALF: i32 = 100 << 8;

#[derive(Component, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[component(clone)]
pub struct Ship {
    pub player: u8,
    pub cooldown: u8,
}

/// Position in 1/256 units.
#[derive(Component, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[component(clone)]
pub struct Pos {
    pub x: i32,
    pub y: i32,
}

/// Velocity; floats, so hashed by their bits.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
#[component(clone)]
pub struct Vel {
    pub x: f32,
    pub y: f32,
}

#[derive(Component, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[component(clone)]
pub struct Bullet {
    pub owner: u8,
    pub ttl: u16,
}

/// A ship's shield, toggled by hits; sparse storage.
#[derive(Component, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[component(clone, storage = "sparse")]
pub struct Shield(pub u8);

#[derive(Component, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[component(clone)]
pub struct Formation {
    pub spawned: u32,
}

#[derive(Component, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[component(clone)]
pub struct Wingman {
    pub slot: u32,
}

#[derive(Component, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[component(clone)]
pub struct Rock;

/// A name a game would draw; the simulation does not read it, so it is
/// skipped by rollback.
#[derive(Component, Clone, Debug, PartialEq, Eq)]
#[component(clone)]
pub struct Sprite(pub String);

/// The match's phase: a small state machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Phase {
    Warmup { left: u16 },
    Fight { round: u16 },
    Overtime,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Score(pub [u32; 2]);

/// How many bullets are gone (expired or hit), as a reader of their
/// removals counts them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Spent(pub u32);

/// A bullet of player `owner` hit `ship`, whose shield took it if
/// `shielded`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Hit {
    pub owner: u8,
    pub ship: Entity,
    pub shielded: bool,
}

/// The world at frame 0, with `rocks` drifting rocks.
pub fn world(rocks: usize) -> World {
    let mut world = World::new();
    for player in 0..2u8 {
        let x = if player == 0 { -HALF / 2 } else { HALF / 2 };
        world.spawn((
            Ship { player, cooldown: 0 },
            Pos { x, y: 0 },
            Vel { x: 0.0, y: 0.0 },
            Sprite(format!("ship{player}")),
        ));
    }
    let leader = world.spawn((Formation { spawned: 0 }, Pos { x: 0, y: HALF / 2 }, Vel { x: 0.5, y: 0.0 }));
    for slot in 0..4 {
        world.spawn((Wingman { slot }, Pos { x: 0, y: 0 }, ChildOf(leader)));
    }
    let mut rng = RollbackRng::new(99);
    for i in 0..rocks {
        let x = rng.range(2 * HALF as u32) as i32 - HALF;
        let y = rng.range(2 * HALF as u32) as i32 - HALF;
        let vx = rng.unit_f32() * 2.0 - 1.0;
        let vy = rng.unit_f32() * 2.0 - 1.0;
        world.spawn((Rock, Pos { x, y }, Vel { x: vx * 64.0, y: vy * 64.0 }, Sprite(format!("rock{i}"))));
    }
    world.insert_resource(Phase::Warmup { left: 30 });
    world.insert_resource(Score::default());
    world.insert_resource(Spent::default());
    world.insert_resource(RollbackRng::new(7));
    world
}

/// The simulation, one step per frame.
pub fn schedule() -> Schedule {
    let mut schedule = Schedule::new();
    schedule.add_systems((spent, recoil, steer, fire, fly, hit, score, formation, phase).chain());
    schedule
}

/// Registers the arena's types with a driver.
pub fn register<A: PeerAddress>(driver: &mut RollbackDriver<Input, A>) {
    driver
        .component::<Ship>()
        .component::<Pos>()
        .component_with::<Vel>(hash_vel)
        .component::<Bullet>()
        .component::<Shield>()
        .component::<Formation>()
        .component::<Wingman>()
        .component::<Rock>()
        .skip_component::<Sprite>()
        .resource::<Phase>()
        .resource::<Score>()
        .resource::<Spent>()
        .event::<Hit>();
}

fn hash_vel(vel: &Vel, h: &mut StableHasher) {
    h.write_u32(vel.x.to_bits());
    h.write_u32(vel.y.to_bits());
}

/// Player `handle`'s scripted input at `frame`: moves in changing
/// directions, fires in bursts.
pub fn script(handle: usize, frame: i32) -> Input {
    let phase = (frame / 23 + handle as i32 * 3) % 8;
    let mut buttons = [UP, UP | RIGHT, RIGHT, DOWN | RIGHT, DOWN, DOWN | LEFT, LEFT, UP | LEFT][phase as usize];
    if (frame / 7 + handle as i32) % 3 != 0 {
        buttons |= FIRE;
    }
    Input(buttons)
}

/// Ships turn toward their player's direction buttons.
fn steer(mut ships: Query<(&Ship, &mut Vel)>, inputs: Res<PlayerInputs<Input>>) {
    for (ship, mut vel) in ships.iter_mut() {
        let Input(b) = inputs.get(ship.player as usize);
        let (mut dx, mut dy) = (0.0, 0.0);
        if b & UP != 0 {
            dy += 1.0;
        }
        if b & DOWN != 0 {
            dy -= 1.0;
        }
        if b & LEFT != 0 {
            dx -= 1.0;
        }
        if b & RIGHT != 0 {
            dx += 1.0;
        }
        vel.x = (vel.x * 0.9 + dx * 40.0).clamp(-300.0, 300.0);
        vel.y = (vel.y * 0.9 + dy * 40.0).clamp(-300.0, 300.0);
    }
}

fn fire(
    mut ships: Query<(&mut Ship, &Pos, &Vel)>,
    inputs: Res<PlayerInputs<Input>>,
    mut rng: ResMut<RollbackRng>,
    mut commands: Commands,
) {
    for (mut ship, pos, vel) in ships.iter_mut() {
        if ship.cooldown > 0 {
            ship.cooldown -= 1;
            continue;
        }
        if inputs.get(ship.player as usize).0 & FIRE != 0 {
            ship.cooldown = 4;
            let spread = rng.range(64) as f32 - 32.0;
            let dir = if ship.player == 0 { 1.0 } else { -1.0 };
            commands.spawn((
                Bullet { owner: ship.player, ttl: 40 },
                *pos,
                Vel { x: vel.x + dir * 600.0, y: vel.y + spread },
            ));
        }
    }
}

fn fly(mut bodies: Query<(&mut Pos, &Vel)>, mut bullets: Query<(Entity, &mut Bullet)>, mut commands: Commands) {
    for (mut pos, vel) in bodies.iter_mut() {
        pos.x = wrap(pos.x + vel.x as i32);
        pos.y = wrap(pos.y + vel.y as i32);
    }
    for (entity, mut bullet) in bullets.iter_mut() {
        bullet.ttl -= 1;
        if bullet.ttl == 0 {
            commands.despawn(entity);
        }
    }
}

fn wrap(v: i32) -> i32 {
    if v > HALF {
        v - 2 * HALF
    } else if v < -HALF {
        v + 2 * HALF
    } else {
        v
    }
}

fn hit(
    bullets: Query<(Entity, &Bullet, &Pos)>,
    ships: Query<(Entity, &Ship, &Pos, Option<&Shield>)>,
    mut hits: EventWriter<Hit>,
    mut commands: Commands,
) {
    for (b, bullet, bp) in bullets.iter() {
        if bullet.ttl == 0 {
            continue;
        }
        for (s, ship, sp, shield) in ships.iter() {
            let near = (bp.x - sp.x).abs() < (12 << 8) && (bp.y - sp.y).abs() < (12 << 8);
            if ship.player != bullet.owner && near {
                commands.despawn(b);
                match shield {
                    Some(_) => {
                        commands.entity(s).remove::<Shield>();
                    }
                    None => {
                        commands.entity(s).insert(Shield(3));
                    }
                }
                hits.send(Hit { owner: bullet.owner, ship: s, shielded: shield.is_some() });
                break;
            }
        }
    }
}

/// Counts the bullets despawned last frame (by commands, applied at the
/// end of the frame).
fn spent(mut removed: RemovedComponents<Bullet>, mut spent: ResMut<Spent>) {
    spent.0 += removed.read().count() as u32;
}

/// Scores this frame's hits (it runs after `hit`).
fn score(mut hits: EventReader<Hit>, mut score: ResMut<Score>) {
    for hit in hits.read() {
        if !hit.shielded {
            score.0[hit.owner as usize] += 1;
        }
    }
}

/// Knocks back the ships hit in the last frame (it runs before `hit`, so
/// it reads the events of the frame before).
fn recoil(mut hits: EventReader<Hit>, mut ships: Query<&mut Vel, With<Ship>>) {
    for hit in hits.read() {
        if let Ok(mut vel) = ships.get_mut(hit.ship) {
            let push = if hit.owner == 0 { 90.0 } else { -90.0 };
            vel.x = (vel.x + push).clamp(-300.0, 300.0);
        }
    }
}

fn formation(
    mut leaders: Query<(Entity, &mut Formation, &Pos, &Children)>,
    mut wingmen: Query<(&Wingman, &mut Pos), Without<Formation>>,
    time: Res<SimTime>,
    mut commands: Commands,
) {
    for (leader, mut formation, lp, children) in leaders.iter_mut() {
        let lp = *lp;
        for (i, child) in children.iter().enumerate() {
            if let Ok((_, mut pos)) = wingmen.get_mut(*child) {
                pos.x = lp.x + (i as i32 - 2) * (10 << 8);
                pos.y = lp.y - (8 << 8);
            }
        }
        // Every 13 frames the first wingman leaves and a new one joins.
        if time.frame % 13 == 12 {
            if let Some(&first) = children.first() {
                commands.despawn(first);
            }
            formation.spawned += 1;
            commands.spawn((Wingman { slot: 4 + formation.spawned }, lp, ChildOf(leader)));
        }
    }
}

fn phase(mut phase: ResMut<Phase>, score: Res<Score>, ships: Query<&Ship, With<Shield>>) {
    *phase = match *phase {
        Phase::Warmup { left: 0 } => Phase::Fight { round: 1 },
        Phase::Warmup { left } => Phase::Warmup { left: left - 1 },
        Phase::Fight { round } if score.0[0] + score.0[1] > 20 * u32::from(round) => {
            if round >= 3 {
                Phase::Overtime
            } else {
                Phase::Fight { round: round + 1 }
            }
        }
        Phase::Overtime if ships.iter().count() == 0 && score.0[0] == score.0[1] => Phase::Warmup { left: 10 },
        other => other,
    };
}

/// A system that breaks the rules: it writes the wall clock into the
/// score, so a resimulated frame differs from the first run.
pub fn wall_clock(mut score: ResMut<Score>) {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    score.0[0] = score.0[0].wrapping_add(nanos % 7);
}
