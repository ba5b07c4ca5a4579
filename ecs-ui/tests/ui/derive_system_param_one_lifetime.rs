// A derived parameter set names the world's and the state's lifetimes.
use archetable::prelude::*;
use archetable::SystemParam;

#[derive(Component)]
struct Hp(u32);

#[derive(SystemParam)]
struct Healing<'w> {
    hp: Query<'w, 'w, &'static mut Hp>,
}

fn main() {}
