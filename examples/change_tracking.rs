//! Change tracking: `Added`, `Changed`, `Ref` and `RemovedComponents`.
//!
//! A health-bar HUD should redraw only the bars whose health changed, greet
//! only the units that just arrived, and notice when poison wears off. Each
//! system below sees each change once, the first time it runs after it.
//!
//! ```sh
//! cargo run --example change_tracking
//! ```

use archetable::prelude::*;

/// Tracked: the world keeps an added and a changed tick per value, which
/// `Added<Health>`, `Changed<Health>` and `Ref<Health>` read.
#[derive(Component)]
#[component(track_changes)]
struct Health(u32);

/// Not tracked (no ticks stored); `RemovedComponents` works for it anyway.
#[derive(Component)]
struct Poisoned;

#[derive(Component)]
struct Name(&'static str);

/// What the systems reported this frame.
#[derive(Default)]
struct Log(Vec<String>);

/// Poison takes one hit point per frame. Writing through the `Mut` that
/// `iter_mut` yields marks the value changed; a unit at 1 hp is left alone
/// and so is not marked.
fn poison(mut units: Query<&mut Health, With<Poisoned>>) {
    for mut health in units.iter_mut() {
        if health.0 > 1 {
            health.0 -= 1;
        }
    }
}

/// Greets the units that arrived since this system last ran.
fn greet(arrived: Query<&Name, Added<Health>>, mut log: ResMut<Log>) {
    for name in arrived.iter() {
        log.0.push(format!("{} arrives", name.0));
    }
}

/// Redraws the bars whose health changed (an addition counts as a change).
/// `Ref` tells the two apart.
fn redraw_bars(changed: Query<(&Name, Ref<Health>), Changed<Health>>, mut log: ResMut<Log>) {
    for (name, health) in changed.iter() {
        let why = if health.is_added() { "new" } else { "changed" };
        log.0.push(format!("bar of {} redrawn: {} hp ({why})", name.0, health.0));
    }
}

/// Notices units that lost `Poisoned`, by removal or despawn.
fn cured(mut removed: RemovedComponents<Poisoned>, names: Query<&Name>, mut log: ResMut<Log>) {
    for entity in removed.read() {
        let name = names.get(entity).map_or("a despawned unit", |name| name.0);
        log.0.push(format!("{name} is no longer poisoned"));
    }
}

fn main() {
    let mut world = World::new();
    world.init_resource::<Log>();
    let mut schedule = Schedule::new();
    // Each system writes `Log`, so they run one after another, in this order.
    schedule.add_system(poison);
    schedule.add_system(greet);
    schedule.add_system(redraw_bars);
    schedule.add_system(cured);

    // A reader outside the schedule: a `QueryState` also sees each change
    // once, counted from its own previous pass.
    let mut audit = QueryState::<&Name, Changed<Health>>::new(&mut world);

    let knight = world.spawn((Name("knight"), Health(3), Poisoned));
    let orc = world.spawn((Name("orc"), Health(5)));

    let mut frames = Vec::new();
    for frame in 1..=5 {
        match frame {
            3 => {
                world.remove::<Poisoned>(knight).unwrap();
            }
            4 => {
                world.get_mut::<Health>(orc).unwrap().0 = 9; // a write outside systems counts too
                world.spawn((Name("goblin"), Health(2)));
            }
            5 => {
                // Reading through `get_mut` without writing marks nothing,
                // and `bypass_change_detection` writes without marking.
                let mut health = world.get_mut::<Health>(orc).unwrap();
                assert_eq!(health.0, 9);
                health.bypass_change_detection().0 = 8;
            }
            _ => {}
        }
        schedule.run(&mut world);
        let lines = std::mem::take(&mut world.resource_mut::<Log>().0);
        println!("frame {frame}: {}", if lines.is_empty() { "nothing to do".to_string() } else { lines.join("; ") });
        frames.push(lines);
    }

    let mut audited: Vec<&str> = audit.iter(&world).map(|name| name.0).collect();
    audited.sort_unstable();
    println!("audit, first pass: {}", audited.join(", "));
    let again = audit.iter(&world).count();
    println!("audit, second pass: {again} changed");

    assert_eq!(
        frames[0],
        ["knight arrives", "orc arrives", "bar of knight redrawn: 2 hp (new)", "bar of orc redrawn: 5 hp (new)"]
    );
    assert_eq!(frames[1], ["bar of knight redrawn: 1 hp (changed)"]);
    assert_eq!(frames[2], ["knight is no longer poisoned"]);
    assert_eq!(
        frames[3],
        ["goblin arrives", "bar of orc redrawn: 9 hp (changed)", "bar of goblin redrawn: 2 hp (new)"]
    );
    assert!(frames[4].is_empty());
    assert_eq!(audited, ["goblin", "knight", "orc"]);
    assert_eq!(again, 0);
    assert_eq!(world.get::<Health>(orc).unwrap().0, 8);
}
