//! A `ParamSet` lends one member at a time: taking a second member while the
//! first one's value is alive is a borrow error.
use archetable::{Component, ParamSet, Query};

#[derive(Component)]
struct Health(u32);

fn both(mut set: ParamSet<(Query<&'static mut Health>, Query<&'static Health>)>) {
    let mut writer = set.p0();
    let reader = set.p1();
    for mut health in writer.iter_mut() {
        health.0 += reader.iter().count() as u32;
    }
}

fn main() {
    let _ = both;
}
