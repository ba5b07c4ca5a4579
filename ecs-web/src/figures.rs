//! The workloads timed natively and in wasm: a query over 10,000
//! entities, and a schedule of three systems over them, run as a game
//! runs them (a `QueryState` kept across frames; a `Schedule` run once a
//! frame). The caller times them: `Instant` natively, `performance.now()`
//! around the exports in Node and in the browser.

use std::time::Duration;

use archetable::prelude::*;

/// Entities in the figures' world.
pub const ENTITIES: u32 = 10_000;

#[derive(Component, Clone, Copy)]
struct Pos(f32, f32);

#[derive(Component, Clone, Copy)]
struct Vel(f32, f32);

#[derive(Component)]
struct Tag;

/// The world and the two workloads.
pub struct Workloads {
    world: World,
    query: QueryState<(&'static Pos, &'static Vel)>,
    schedule: Schedule,
}

fn movement(mut bodies: Query<(&mut Pos, &Vel)>, time: Res<Time>) {
    let dt = time.delta_secs();
    for (mut p, v) in bodies.iter_mut() {
        p.0 += v.0 * dt;
        p.1 += v.1 * dt;
    }
}

fn bounce(mut bodies: Query<(&Pos, &mut Vel)>) {
    for (p, mut v) in bodies.iter_mut() {
        if !(0.0..=100.0).contains(&p.0) {
            v.0 = -v.0;
        }
        if !(0.0..=100.0).contains(&p.1) {
            v.1 = -v.1;
        }
    }
}

fn tagged(bodies: Query<&Pos, With<Tag>>, mut sum: ResMut<TaggedSum>) {
    sum.0 = bodies.iter().map(|p| p.0 + p.1).sum();
}

#[derive(Default)]
struct TaggedSum(f32);

impl Workloads {
    /// [`ENTITIES`] bodies, a quarter of them tagged (two tables).
    pub fn new() -> Workloads {
        let mut world = World::new();
        world.init_resource::<TaggedSum>();
        for i in 0..ENTITIES {
            let body = (Pos((i % 100) as f32, (i / 100) as f32), Vel(1.0 + (i % 7) as f32, 2.0 - (i % 5) as f32));
            if i % 4 == 0 {
                world.spawn((body.0, body.1, Tag));
            } else {
                world.spawn(body);
            }
        }
        let query = QueryState::new(&mut world);
        let mut schedule = Schedule::new();
        let moved = schedule.add_system(movement).id();
        schedule.add_system(bounce).after(moved);
        schedule.add_system(tagged).after(moved);
        Workloads { world, query, schedule }
    }

    /// Runs the schedule's systems one after the other on the calling
    /// thread, as they run in wasm.
    pub fn set_single_threaded(&mut self) {
        self.schedule.set_single_threaded(true);
    }

    /// One pass of the query: the sum of every position moved by its
    /// velocity.
    pub fn query(&mut self) -> f32 {
        let mut sum = 0.0;
        self.query.for_each(&self.world, |(p, v)| sum += p.0 + v.0 + p.1 + v.1);
        sum
    }

    /// One run of the schedule, a frame of 1/60 s.
    pub fn schedule(&mut self) -> f32 {
        self.world.resource_mut::<Time>().advance(Duration::from_micros(16_667));
        self.schedule.run(&mut self.world);
        self.world.resource::<TaggedSum>().0
    }
}

impl Default for Workloads {
    fn default() -> Workloads {
        Workloads::new()
    }
}
