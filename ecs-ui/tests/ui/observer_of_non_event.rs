// An observer's event must be an event: `Send + Sync + 'static`, since
// triggers can come from commands applied on any thread.
use std::rc::Rc;

use archetable::prelude::*;

fn on_shared(_: Trigger<Rc<u32>>) {}

fn main() {
    World::new().observe(on_shared);
}
