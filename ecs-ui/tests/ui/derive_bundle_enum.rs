//! A bundle holds all of its components, so it cannot be an enum.
use archetable::{Bundle, Component};

#[derive(Component)]
struct Position(f32);

#[derive(Component)]
struct Velocity(f32);

#[derive(Bundle)]
enum Either {
    Pos(Position),
    Vel(Velocity),
}

fn main() {}
