//! `#[component(clone)]` copies values with `Clone`, which the type must
//! implement.
use archetable::Component;

#[derive(Component)]
#[component(clone)]
struct Socket(u32);

fn main() {
    let _ = Socket(1).0;
}
