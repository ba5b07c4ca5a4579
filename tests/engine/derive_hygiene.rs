//! The derives must not depend on the user's imports or prelude: this file has
//! no implicit prelude and imports only the derive macros (and `Iterator`, for
//! the adapters used on query iterators).

#![cfg(feature = "game-loop")]
#![no_implicit_prelude]

use ::archetable::{Bundle, Component, Query};
use ::std::iter::Iterator;

#[derive(Component)]
struct Pos(f32);

#[derive(Component)]
struct Vel(f32);

#[derive(Component)]
struct Tag;

#[derive(Component)]
struct Generic<T: ::std::marker::Send + ::std::marker::Sync + 'static>(T);

#[derive(Bundle)]
struct Body {
    pos: Pos,
    vel: Vel,
}

#[derive(Bundle)]
struct TaggedBody {
    body: Body,
    tag: Tag,
}

#[derive(Query)]
struct Step<'w> {
    pos: &'w mut Pos,
    vel: &'w Vel,
    tag: ::std::option::Option<&'w Tag>,
    id: ::archetable::Entity,
}

#[derive(Query)]
struct Read<'w> {
    pos: &'w Pos,
}

#[derive(
    ::archetable::States,
    ::std::clone::Clone,
    ::std::cmp::PartialEq,
    ::std::cmp::Eq,
    ::std::hash::Hash,
    ::std::fmt::Debug,
)]
enum Screen {
    Menu,
    Playing,
}

#[derive(
    ::archetable::States,
    ::std::clone::Clone,
    ::std::cmp::PartialEq,
    ::std::cmp::Eq,
    ::std::hash::Hash,
    ::std::fmt::Debug,
)]
enum Phase<
    T: ::std::clone::Clone
        + ::std::cmp::Eq
        + ::std::hash::Hash
        + ::std::fmt::Debug
        + ::std::marker::Send
        + ::std::marker::Sync
        + 'static,
> {
    Wait(T),
}

#[test]
fn derives_work_without_prelude() {
    let mut world = ::archetable::World::new();
    let a = world.spawn(Body { pos: Pos(1.0), vel: Vel(2.0) });
    let b = world.spawn(TaggedBody { body: Body { pos: Pos(10.0), vel: Vel(20.0) }, tag: Tag });
    let _ = world.spawn((Generic(1u8), Pos(0.0)));

    let mut tagged = 0;
    for s in world.query_mut::<Step<'_>>() {
        *s.pos = Pos(s.pos.0 + s.vel.0);
        if s.tag.is_some() {
            ::std::assert_eq!(s.id, b);
            tagged += 1;
        }
    }
    ::std::assert_eq!(tagged, 1);
    ::std::assert_eq!(world.get::<Pos>(a).map(|p| p.0), ::std::option::Option::Some(3.0));
    ::std::assert_eq!(world.get::<Pos>(b).map(|p| p.0), ::std::option::Option::Some(30.0));
    let sum: f32 = world.query::<Read<'_>>().map(|r| r.pos.0).sum();
    ::std::assert_eq!(sum, 33.0);
    ::std::assert!(!world.has::<Generic<u8>>(a));
}

#[test]
fn states_derive_works_without_prelude() {
    let mut game = ::archetable::GameLoop::new();
    game.add_state(Screen::Menu);
    game.add_state(Phase::Wait(1u8));
    game.world_mut().resource_mut::<::archetable::NextState<Screen>>().set(Screen::Playing);
    game.advance(::std::time::Duration::from_millis(1));
    ::std::assert_eq!(game.state::<Screen>(), ::std::option::Option::Some(&Screen::Playing));
    ::std::assert_eq!(game.state::<Phase<u8>>(), ::std::option::Option::Some(&Phase::Wait(1)));
}

#[derive(Component, ::std::default::Default, ::std::fmt::Debug, ::std::cmp::PartialEq)]
struct Mass(u32);

#[derive(Component)]
#[component(requires(Mass, Vel = Vel(0.5)))]
struct Rock;

/// A generic component whose requirement is given by value.
#[derive(Component)]
#[component(requires(Mass = Mass(7)))]
struct Heavy<T: ::std::marker::Send + ::std::marker::Sync + 'static>(T);

#[test]
fn requires_works_without_prelude() {
    let mut world = ::archetable::World::new();
    let rock = world.spawn(Rock);
    ::std::assert_eq!(world.get::<Mass>(rock), ::std::option::Option::Some(&Mass(0)));
    ::std::assert_eq!(world.get::<Vel>(rock).map(|v| v.0), ::std::option::Option::Some(0.5));
    let heavy = world.spawn(Heavy(1u8));
    ::std::assert_eq!(world.get::<Mass>(heavy), ::std::option::Option::Some(&Mass(7)));
}
