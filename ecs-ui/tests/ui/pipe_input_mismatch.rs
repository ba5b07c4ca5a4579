// The second system of a pipe takes the first one's output as its input.
use archetable::prelude::*;

fn count(all: Query<Entity>) -> usize {
    all.iter().count()
}

fn show(In(text): In<String>) {
    println!("{text}");
}

fn main() {
    let mut world = World::new();
    world.register_system(count.pipe(show));
}
