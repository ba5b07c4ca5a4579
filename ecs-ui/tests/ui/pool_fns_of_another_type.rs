// A component's pool functions reset values of that component and no other:
// handing the engine another type's reset (which would write past a small
// value) does not compile.
use archetable::{Component, Reset};

struct Small(u8);

struct Big([u8; 4096]);

impl Reset for Big {
    fn reset(&mut self) {
        self.0 = [0; 4096];
    }
}

impl Component for Small {
    const POOL: Option<archetable::__private::PoolFns<Self>> = Some(archetable::__private::PoolFns::<Big>::of());
}

fn main() {
    let _ = Small(1);
}
