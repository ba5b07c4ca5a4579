//! Snapshot and restore of a world in memory (`World::try_clone`, and
//! `World::clone_from` into a world that keeps its memory, as rollback
//! snapshots are made) beside a binary save and load round trip (`archetable-serde`, postcard), on the
//! save/load workload's world of [`ENTITIES`]
//! entities with four components. Run with
//! `cargo run -p archetable-bench --release --bin snapshot`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use archetable::data::SerdeWorldExt;
use archetable::World;

use crate::save_load::ours::{checksum, load, save, world};
use crate::save_load::{Format, ENTITIES};

/// Median times of one snapshot workload, over several runs.
#[derive(Clone, Copy, Debug)]
pub struct Figures {
    /// Entities in the world.
    pub entities: usize,
    /// `world.try_clone()`.
    pub snapshot: Duration,
    /// `world = snapshot.try_clone()`: the copy replaces a changed world,
    /// whose drop is included.
    pub restore: Duration,
    /// `saved.clone_from(&world)` into a world that holds an earlier copy.
    pub snapshot_in_place: Duration,
    /// `world.clone_from(&saved)` over a changed world.
    pub restore_in_place: Duration,
    /// The two in place, with the four types registered with
    /// `World::register_clone_from` (whole columns; the `Copy` ones in
    /// bulk).
    pub snapshot_in_place_typed: Duration,
    /// See `snapshot_in_place_typed`.
    pub restore_in_place_typed: Duration,
    /// `save_binary`.
    pub save: Duration,
    /// `load_binary`.
    pub load: Duration,
    /// Size of the binary save, in bytes.
    pub save_bytes: usize,
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

/// Times each step `runs` times on a world of `n` entities and keeps the
/// medians.
///
/// # Panics
/// If a copy or a loaded save differs from the world.
pub fn measure(n: usize, runs: usize) -> Figures {
    // The save registry is a resource, which copies leave behind: saves
    // are made from the world as built.
    let source = world(n);
    let mut live = source.try_clone().expect("every component is cloneable");
    let expected = checksum(&live);
    let registry = source.serde_registry();
    let (mut snapshot, mut restore, mut saves, mut loads) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut save_bytes = 0;
    let mut in_place: [Vec<Duration>; 4] = Default::default();
    for typed in [false, true] {
        let mut live = source.try_clone().expect("every component is cloneable");
        if typed {
            live.register_clone_from::<crate::save_load::Position>();
            live.register_clone_from::<crate::save_load::Velocity>();
            live.register_clone_from::<crate::save_load::Health>();
            live.register_clone_from::<crate::save_load::Name>();
        }
        let mut saved = World::new();
        saved.clone_from(&live).expect("every component is cloneable");
        let (snapshots, restores) = in_place.split_at_mut(2);
        let (snapshots, restores) =
            if typed { (&mut snapshots[1], &mut restores[1]) } else { (&mut snapshots[0], &mut restores[0]) };
        for _ in 0..runs {
            let start = Instant::now();
            saved.clone_from(&live).expect("every component is cloneable");
            snapshots.push(start.elapsed());
            assert_eq!(checksum(&saved), expected);
            live.query_mut::<&mut crate::save_load::Health>().for_each(|mut h| h.0 = 0);
            let start = Instant::now();
            live.clone_from(&saved).expect("every component is cloneable");
            restores.push(start.elapsed());
            assert_eq!(checksum(&live), expected);
        }
    }
    let [snapshot_in_place, snapshot_in_place_typed, restore_in_place, restore_in_place_typed] = in_place.map(median);
    for _ in 0..runs {
        let start = Instant::now();
        let copy = live.try_clone().expect("every component is cloneable");
        snapshot.push(start.elapsed());
        assert_eq!(checksum(&copy), expected);

        // Change the live world, then put the snapshot back.
        live.query_mut::<&mut crate::save_load::Health>().for_each(|mut h| h.0 = 0);
        let start = Instant::now();
        live = copy.try_clone().expect("every component is cloneable");
        restore.push(start.elapsed());
        assert_eq!(checksum(&live), expected);
        drop(copy);

        let start = Instant::now();
        let data = save(&source, Format::Binary);
        saves.push(start.elapsed());
        save_bytes = data.len();
        let start = Instant::now();
        let loaded: World = load(&registry, Format::Binary, &data);
        loads.push(start.elapsed());
        assert_eq!(checksum(&loaded), expected);
        black_box(loaded);
    }
    Figures {
        entities: n,
        snapshot: median(snapshot),
        restore: median(restore),
        snapshot_in_place,
        restore_in_place,
        snapshot_in_place_typed,
        restore_in_place_typed,
        save: median(saves),
        load: median(loads),
        save_bytes,
    }
}

/// The figures as a Markdown table.
pub fn table(figures: &Figures) -> String {
    let ms = |d: Duration| format!("{:.2} ms", d.as_secs_f64() * 1e3);
    format!(
        "| {} entities | time |\n|---|---|\n| snapshot (`try_clone`) | {} |\n| restore (`world = snapshot.try_clone()`) | {} \
         |\n| snapshot in place (`saved.clone_from(&world)`) | {} |\n| restore in place (`world.clone_from(&saved)`) | {} \
         |\n| snapshot in place, types registered with `register_clone_from` | {} |\n| restore in place, types registered \
         | {} |\n| binary save (postcard, {} bytes) | {} |\n| binary load | {} |\n| binary round trip | {} |\n",
        figures.entities,
        ms(figures.snapshot),
        ms(figures.restore),
        ms(figures.snapshot_in_place),
        ms(figures.restore_in_place),
        ms(figures.snapshot_in_place_typed),
        ms(figures.restore_in_place_typed),
        figures.save_bytes,
        ms(figures.save),
        ms(figures.load),
        ms(figures.save + figures.load),
    )
}

/// The default workload: [`ENTITIES`] entities, 15 runs.
pub fn default_figures() -> Figures {
    measure(ENTITIES, 15)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_small_snapshot_round_trips() {
        let figures = super::measure(100, 1);
        assert_eq!(figures.entities, 100);
        assert!(super::table(&figures).contains("snapshot"));
    }
}
