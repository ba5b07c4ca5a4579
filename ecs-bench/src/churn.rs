//! The bullet churn workload: every run spawns 10,000 bullets, each with a
//! `Trail` whose `Vec` gets a few points, then despawns them all, as a game
//! does with short-lived objects every frame. On archetable the `Trail` is a pooled
//! component (`#[component(pooled)]`): despawned trails are reset and kept,
//! and `spawn_pooled` hands them out again, so the steady state allocates
//! nothing. The unpooled variant spawns and despawns plainly on archetable, as the
//! peers do.

use crate::routine::Steady;
use crate::Routine;

/// Bullets spawned and despawned per run.
pub const BULLETS: usize = 10_000;

/// Points pushed onto each bullet's trail.
pub const TRAIL_POINTS: usize = 4;

/// A bullet's motion.
#[derive(archetable::Component, bevy_ecs::component::Component, Clone, Copy, Debug, Default, PartialEq)]
pub struct Bullet {
    /// Where it is.
    pub position: [f32; 2],
    /// Where it goes per step.
    pub velocity: [f32; 2],
}

/// The points a bullet passed: the heap memory a pool keeps.
#[derive(archetable::Component, bevy_ecs::component::Component, Clone, Debug, Default, PartialEq)]
pub struct Trail {
    /// Past positions.
    pub points: Vec<[f32; 2]>,
}

/// [`Trail`] as a pooled component of ours. A separate type, because
/// `bevy_ecs`' derive reads the same `#[component(..)]` attribute and
/// rejects options it does not know.
#[derive(archetable::Component, Clone, Debug, Default, PartialEq)]
#[component(pooled)]
pub struct PooledTrail(pub Trail);

impl archetable::Reset for PooledTrail {
    fn reset(&mut self) {
        self.0.points.clear();
    }
}

/// Bullet number `i` and the trail it starts with.
#[inline]
pub fn bullet(i: usize) -> (Bullet, Trail) {
    let f = i as f32;
    let mut trail = Trail { points: Vec::new() };
    fill(&mut trail, f);
    (Bullet { position: [f, 0.0], velocity: [1.0, 0.5] }, trail)
}

/// Pushes the trail's points for bullet number `f`.
#[inline]
fn fill(trail: &mut Trail, f: f32) {
    for k in 0..TRAIL_POINTS {
        trail.points.push([f, k as f32]);
    }
}

/// Sum of every pooled trail's length, to check that a run did its work.
pub fn trail_points_ecs(world: &archetable::World) -> usize {
    world.query::<&PooledTrail>().map(|t| t.0.points.len()).sum()
}

/// On archetable, with pools: `spawn_pooled`, then `despawn`.
pub fn ours_pooled() -> Box<dyn Routine> {
    let mut world = archetable::World::new();
    world.set_pool_cap::<PooledTrail>(BULLETS);
    let spawned = Vec::with_capacity(BULLETS);
    Box::new(Steady::new((world, spawned), |(world, spawned): &mut (archetable::World, Vec<archetable::Entity>)| {
        for i in 0..BULLETS {
            let f = i as f32;
            spawned.push(world.spawn_pooled::<(Bullet, PooledTrail)>(|(bullet, trail)| {
                *bullet = Bullet { position: [f, 0.0], velocity: [1.0, 0.5] };
                fill(&mut trail.0, f);
            }));
        }
        for entity in spawned.drain(..) {
            world.despawn(entity).expect("bullet is alive");
        }
    }))
}

/// On archetable, without pools: `spawn`, then `despawn`.
pub fn ours_plain() -> Box<dyn Routine> {
    let world = archetable::World::new();
    let spawned = Vec::with_capacity(BULLETS);
    Box::new(Steady::new((world, spawned), |(world, spawned): &mut (archetable::World, Vec<archetable::Entity>)| {
        spawned.extend((0..BULLETS).map(|i| world.spawn(bullet(i))));
        for entity in spawned.drain(..) {
            world.despawn(entity).expect("bullet is alive");
        }
    }))
}

/// On hecs: `spawn`, then `despawn`.
pub fn hecs() -> Box<dyn Routine> {
    let world = hecs::World::new();
    let spawned = Vec::with_capacity(BULLETS);
    Box::new(Steady::new((world, spawned), |(world, spawned): &mut (hecs::World, Vec<hecs::Entity>)| {
        spawned.extend((0..BULLETS).map(|i| world.spawn(bullet(i))));
        for entity in spawned.drain(..) {
            world.despawn(entity).expect("bullet is alive");
        }
    }))
}

/// On bevy_ecs: `spawn`, then `despawn`.
pub fn bevy() -> Box<dyn Routine> {
    let world = bevy_ecs::world::World::new();
    let spawned = Vec::with_capacity(BULLETS);
    Box::new(Steady::new(
        (world, spawned),
        |(world, spawned): &mut (bevy_ecs::world::World, Vec<bevy_ecs::entity::Entity>)| {
            spawned.extend((0..BULLETS).map(|i| world.spawn(bullet(i)).id()));
            for entity in spawned.drain(..) {
                assert!(world.despawn(entity), "bullet is alive");
            }
        },
    ))
}

/// The floor: a `Vec` of bullets and one of trails, cleared and refilled,
/// the trails' vectors kept (what a hand-written pool does).
pub fn raw() -> Box<dyn Routine> {
    struct Pool {
        bullets: Vec<Bullet>,
        trails: Vec<Trail>,
        live: usize,
    }
    let pool = Pool { bullets: Vec::with_capacity(BULLETS), trails: Vec::with_capacity(BULLETS), live: 0 };
    Box::new(Steady::new(pool, |pool: &mut Pool| {
        for i in 0..BULLETS {
            let f = i as f32;
            pool.bullets.push(Bullet { position: [f, 0.0], velocity: [1.0, 0.5] });
            if pool.trails.len() == i {
                pool.trails.push(Trail::default());
            }
            let trail = &mut pool.trails[i];
            trail.points.clear();
            fill(trail, f);
        }
        pool.live = pool.bullets.len();
        std::hint::black_box(&pool.trails[..pool.live]);
        pool.bullets.clear();
        pool.live = 0;
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_routine_leaves_no_bullet_behind_and_the_pool_keeps_the_trails() {
        for mut routine in [ours_pooled(), ours_plain(), hecs(), bevy(), raw()] {
            crate::routine::time_runs(&mut *routine, 3);
        }
        // The pooled world, driven by hand: after a frame the trails wait in
        // the pool, reset but with their buffers.
        let mut world = archetable::World::new();
        world.set_pool_cap::<PooledTrail>(BULLETS);
        let spawned: Vec<_> = (0..BULLETS)
            .map(|i| world.spawn_pooled::<(Bullet, PooledTrail)>(|(_, trail)| fill(&mut trail.0, i as f32)))
            .collect();
        assert_eq!(trail_points_ecs(&world), BULLETS * TRAIL_POINTS);
        for entity in spawned {
            world.despawn(entity).unwrap();
        }
        assert_eq!((world.len(), world.pool_len::<PooledTrail>()), (0, BULLETS));
        world.spawn_pooled::<(Bullet, PooledTrail)>(|(_, trail)| {
            assert!(trail.0.points.is_empty());
            assert!(trail.0.points.capacity() >= TRAIL_POINTS);
        });
    }
}
