//! Mutation fuzzing on the stable toolchain: takes saves of the fuzz
//! fixture's world (binary, and JSON and RON both compact and pretty),
//! damages copies of them (bit flips, byte sets, cuts, splices, duplicated
//! runs, random words) and loads each into a fresh world and merged into a
//! populated one. A load may fail; it must not panic, and the world must
//! stay consistent (unchanged on failure). Failing inputs are written to
//! `mutate-crash-N.bin` in the current folder.
//!
//! ```sh
//! cargo run --release -p archetable-serde --example mutate_saves [SECONDS] [SEED]
//! ```
//!
//! `ecs-serde/fuzz` holds the coverage-guided fuzzer (cargo-fuzz, nightly).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Instant;

use archetable::prelude::*;

#[path = "../fuzz/src/fixture.rs"]
mod fixture;

/// xorshift64: deterministic for a given seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Applies one random damage to `data` (which is not empty).
fn mutate(data: &mut Vec<u8>, rng: &mut Rng) {
    let i = rng.below(data.len());
    match rng.below(6) {
        0 => data[i] ^= 1 << rng.below(8),
        1 => data[i] = [0, 1, 0x7f, 0x80, 0xff][rng.below(5)],
        2 => data.truncate(i),
        3 => {
            let n = rng.below(16).min(data.len() - i);
            data.drain(i..i + n);
        }
        4 => {
            let j = rng.below(data.len());
            let n = rng.below(32).min(data.len() - j);
            let run = data[j..j + n].to_vec();
            data.splice(i..i, run);
        }
        _ => {
            let word = rng.next().to_le_bytes();
            for (k, &b) in word.iter().enumerate().take(rng.below(8) + 1) {
                if let Some(slot) = data.get_mut(i + k) {
                    *slot = b;
                }
            }
        }
    }
}

/// Loads `data` both ways, as binary and (if it is text) as JSON and RON;
/// panics on any broken promise.
fn check(registry: &archetable::data::SerdeRegistry, data: &[u8]) {
    if let Ok(world) = World::load_binary(registry, data) {
        world.check_invariants().unwrap();
    }
    let mut target = fixture::populated_world();
    let before = target.len();
    match target.load_into_binary(data) {
        Ok(map) => assert_eq!(target.len(), before + map.len()),
        Err(_) => assert_eq!(target.len(), before, "a failed merge changed the world"),
    }
    target.check_invariants().unwrap();
    let Ok(text) = std::str::from_utf8(data) else { return };
    for load in [World::load_json, World::load_ron] {
        if let Ok(world) = load(registry, text) {
            world.check_invariants().unwrap();
        }
    }
    for load in [World::load_into_json, World::load_into_ron] {
        let mut target = fixture::populated_world();
        match load(&mut target, text) {
            Ok(map) => assert_eq!(target.len(), before + map.len()),
            Err(_) => assert_eq!(target.len(), before, "a failed merge changed the world"),
        }
        target.check_invariants().unwrap();
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let seconds: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(60);
    let seed: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(0x9E37_79B9_7F4A_7C15);
    let world = fixture::populated_world();
    let originals = [
        world.save_binary().expect("the fixture saves").data,
        world.save_json().expect("the fixture saves").data.into_bytes(),
        world.save_json_pretty().expect("the fixture saves").data.into_bytes(),
        world.save_ron().expect("the fixture saves").data.into_bytes(),
        world.save_ron_pretty().expect("the fixture saves").data.into_bytes(),
    ];
    let registry = fixture::registered_world().serde_registry();
    let mut rng = Rng(seed.max(1));
    std::panic::set_hook(Box::new(|_| {}));
    let start = Instant::now();
    let (mut runs, mut crashes) = (0u64, 0u64);
    while start.elapsed().as_secs() < seconds {
        let mut data = originals[rng.below(originals.len())].clone();
        for _ in 0..1 + rng.below(4) {
            if data.is_empty() {
                break;
            }
            mutate(&mut data, &mut rng);
        }
        if catch_unwind(AssertUnwindSafe(|| check(&registry, &data))).is_err() {
            let path = format!("mutate-crash-{runs}.bin");
            std::fs::write(&path, &data).expect("write the failing input");
            eprintln!("failure, input written to {path}");
            crashes += 1;
        }
        runs += 1;
    }
    println!("{runs} loads of damaged saves in {seconds} s, {crashes} failures");
    if crashes > 0 {
        std::process::exit(1);
    }
}
