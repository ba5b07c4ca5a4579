//! The derives' output must not rely on the user's imports or prelude: no
//! implicit prelude, no `use`, every path fully qualified.
#![no_implicit_prelude]

#[derive(::archetable::Component)]
struct Position(f32);

#[derive(::archetable::Component)]
struct Velocity {
    dx: f32,
}

#[derive(::archetable::Component)]
enum Team {
    Red,
    Blue,
}

#[derive(::archetable::Component)]
struct Marker;

#[derive(::archetable::Component)]
struct Generic<T: ::core::marker::Send + ::core::marker::Sync + 'static>(T);

#[derive(::archetable::Bundle)]
struct Mover {
    pos: Position,
    vel: Velocity,
}

#[derive(::archetable::Bundle)]
struct Unit(Mover, Team);

#[derive(::archetable::Bundle)]
struct Tagged<B: ::archetable::Bundle> {
    inner: B,
    marker: Marker,
}

#[derive(::archetable::Query)]
struct Step<'w> {
    id: ::archetable::Entity,
    pos: &'w mut Position,
    vel: ::archetable::Mut<'w, Velocity>,
    team: ::core::option::Option<&'w Team>,
}

#[derive(::archetable::Query)]
struct Read<'w>(&'w Position, ::core::option::Option<&'w Marker>);

#[derive(::archetable::Query)]
struct Ids {
    id: ::archetable::Entity,
}

struct Counted(usize);

/// A public parameter over this file's private types.
#[derive(::archetable::SystemParam)]
pub struct Reads<'w, 's> {
    read: ::archetable::Query<'w, 's, Read<'static>>,
    counted: ::archetable::ResMut<'w, Counted>,
    runs: ::archetable::Local<'s, usize>,
}

fn count_marked(mut reads: Reads) {
    *reads.runs += 1;
    let marked = ::core::iter::Iterator::count(::core::iter::Iterator::filter(reads.read.iter(), |r| r.1.is_some()));
    reads.counted.0 = marked * 10 + *reads.runs;
}

fn main() {
    let mut world = ::archetable::World::new();
    let a = world.spawn(Unit(Mover { pos: Position(0.0), vel: Velocity { dx: 1.0 } }, Team::Red));
    let b = world.spawn(Tagged { inner: Mover { pos: Position(10.0), vel: Velocity { dx: 2.0 } }, marker: Marker });
    world.spawn((Generic(1_u8), Team::Blue));

    for mut step in world.query_mut::<Step<'_>>() {
        step.pos.0 += step.vel.dx;
        step.vel.dx = 0.0;
        if step.team.is_some() {
            ::std::assert_eq!(step.id, a);
        }
    }
    let mut marked = 0;
    for Read(pos, marker) in world.query::<Read<'_>>() {
        if marker.is_some() {
            ::std::assert_eq!(pos.0, 12.0);
            marked += 1;
        }
    }
    ::std::assert_eq!(marked, 1);
    let mut state = ::archetable::QueryState::<Ids, ::archetable::With<Marker>>::new(&mut world);
    for ids in state.iter(&world) {
        ::std::assert_eq!(ids.id, b);
    }
    ::std::assert_eq!(world.get::<Position>(a).map(|p| p.0), ::core::option::Option::Some(1.0));

    world.insert_resource(Counted(0));
    let mut schedule = ::archetable::Schedule::new();
    schedule.add_system(count_marked);
    schedule.run(&mut world);
    schedule.run(&mut world);
    ::std::assert_eq!(world.resource::<Counted>().0, 12);
}
