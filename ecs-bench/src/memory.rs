//! Memory per entity: the growth of the process's peak resident memory
//! (`VmHWM` in `/proc/self/status`, Linux only) and of the bytes the C
//! allocator has handed out (glibc's `mallinfo2`) while one implementation
//! spawns [`ENTITIES`] entities of `(Position, Velocity)`.
//!
//! Each measurement must run in a fresh process, so that one's peak does not
//! hide another's: [`measure_in_child`] re-runs a program with arguments that
//! make it call [`measure`] and print [`Measurement::to_line`].

use std::path::Path;
use std::process::Command;

use crate::raw::RawMovers;
use crate::{mover, Implementation, Position, Velocity};

/// Entities spawned per measurement.
pub const ENTITIES: usize = 1_000_000;

/// How the entities are spawned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scenario {
    /// One `spawn_batch` of all of them (a `Vec::with_capacity` for the
    /// floor): storage is reserved once, at its final size.
    Batch,
    /// One `spawn` call per entity (a `push` for the floor): storage grows
    /// by doubling, so the peak can hold an old and a new buffer at once.
    OneByOne,
}

impl Scenario {
    /// Both scenarios, in report order.
    pub const ALL: [Scenario; 2] = [Scenario::Batch, Scenario::OneByOne];

    /// Name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Scenario::Batch => "batch",
            Scenario::OneByOne => "one-by-one",
        }
    }

    /// The scenario called `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Scenario::ALL.into_iter().find(|s| s.name() == name)
    }
}

/// Bytes of component data per entity: the least any storage needs.
pub fn component_bytes() -> usize {
    size_of::<Position>() + size_of::<Velocity>()
}

/// Peak resident memory, and bytes allocated, before and after the spawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Measurement {
    /// `VmHWM` before the world was made, in bytes.
    pub before: usize,
    /// `VmHWM` with the entities spawned, in bytes.
    pub after: usize,
    /// Bytes allocated before the world was made and with the entities
    /// spawned ([`allocated_bytes`]), where the allocator says.
    pub heap: Option<(usize, usize)>,
}

impl Measurement {
    /// Growth of the peak per entity, in bytes.
    pub fn bytes_per_entity(&self) -> f64 {
        self.after.saturating_sub(self.before) as f64 / ENTITIES as f64
    }

    /// Growth of the bytes allocated per entity: what the world holds.
    pub fn allocated_per_entity(&self) -> Option<f64> {
        self.heap.map(|(before, after)| after.saturating_sub(before) as f64 / ENTITIES as f64)
    }

    /// The line a child prints for its parent.
    pub fn to_line(&self) -> String {
        let mut line = format!("vmhwm before={} after={}", self.before, self.after);
        if let Some((before, after)) = self.heap {
            line += &format!(" heap before={before} after={after}");
        }
        line
    }

    /// Parses [`Measurement::to_line`]'s output.
    pub fn from_line(line: &str) -> Option<Self> {
        let rest = line.trim().strip_prefix("vmhwm before=")?;
        let (before, rest) = rest.split_once(" after=")?;
        let (after, heap) = match rest.split_once(" heap before=") {
            Some((after, heap)) => {
                let (h0, h1) = heap.split_once(" after=")?;
                (after, Some((h0.parse().ok()?, h1.parse().ok()?)))
            }
            None => (rest, None),
        };
        Some(Measurement { before: before.parse().ok()?, after: after.parse().ok()?, heap })
    }
}

/// Bytes the C allocator has handed out and not had back: glibc's
/// `mallinfo2`, the chunks in use in every arena (`uordblks`, headers and
/// rounding included) and the blocks it mapped on their own (`hblkhd`).
/// `None` off glibc.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
pub fn allocated_bytes() -> Option<usize> {
    // SAFETY: `mallinfo2` takes no arguments and only reads the
    // allocator's own statistics.
    let info = unsafe { libc::mallinfo2() };
    Some(info.uordblks + info.hblkhd)
}

/// Bytes the C allocator has handed out: unknown off glibc.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn allocated_bytes() -> Option<usize> {
    None
}

/// The process's peak resident set size, from `VmHWM` (reported in kB).
pub fn peak_resident_bytes() -> Option<usize> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    let kib: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Entities of the warm-up world each measurement first spawns and drops,
/// so that the measurement leaves out what every world costs once (the
/// code pages of the spawn path, the allocator's first arena, registries).
pub const WARM_UP: usize = 1_000;

/// Spawns [`ENTITIES`] movers with `which`, and reads the peak resident
/// memory and the bytes allocated around it, after a warm-up world of
/// [`WARM_UP`] entities, made the same way, has come and gone. Meaningful
/// only as the first thing a fresh process does.
pub fn measure(which: Implementation, scenario: Scenario) -> Option<Measurement> {
    assert_eq!(spawn(which, scenario, WARM_UP).0, WARM_UP, "{} spawned every entity", which.name());
    let before = peak_resident_bytes()?;
    let heap_before = allocated_bytes();
    let (len, heap_after) = spawn(which, scenario, ENTITIES);
    let after = peak_resident_bytes()?;
    assert_eq!(len, ENTITIES, "{} spawned every entity", which.name());
    Some(Measurement { before, after, heap: heap_before.zip(heap_after) })
}

/// Spawns `count` movers with `which` and returns how many the world
/// holds, and the bytes allocated while it still lives.
fn spawn(which: Implementation, scenario: Scenario, count: usize) -> (usize, Option<usize>) {
    let batch = scenario == Scenario::Batch;
    match which {
        Implementation::Ours => {
            let mut world = archetable::World::new();
            if batch {
                world.spawn_batch((0..count).map(mover)).for_each(drop);
            } else {
                for i in 0..count {
                    world.spawn(mover(i));
                }
            }
            let world = keep(world);
            (world.len(), allocated_bytes())
        }
        Implementation::Hecs => {
            let mut world = hecs::World::new();
            if batch {
                world.spawn_batch((0..count).map(mover)).for_each(drop);
            } else {
                for i in 0..count {
                    world.spawn(mover(i));
                }
            }
            let world = keep(world);
            (world.len() as usize, allocated_bytes())
        }
        Implementation::Bevy => {
            let mut world = bevy_ecs::world::World::new();
            if batch {
                world.spawn_batch((0..count).map(mover)).for_each(drop);
            } else {
                for i in 0..count {
                    world.spawn(mover(i));
                }
            }
            let mut world = keep(world);
            let heap = allocated_bytes();
            let mut query = world.query::<&Position>();
            (query.iter(&world).count(), heap)
        }
        Implementation::Raw => {
            let raw = if batch {
                RawMovers::spawn(count)
            } else {
                let mut raw = RawMovers::default();
                for i in 0..count {
                    let (position, velocity) = mover(i);
                    raw.positions.push(position);
                    raw.velocities.push(velocity);
                }
                raw
            };
            let raw = keep(raw);
            (raw.positions.len(), allocated_bytes())
        }
    }
}

/// Keeps `value` alive and opaque to the optimizer until the caller is done
/// with it.
fn keep<T>(value: T) -> T {
    std::hint::black_box(value)
}

/// Runs `program args.. IMPLEMENTATION SCENARIO` and reads the
/// [`Measurement`] it prints.
pub fn measure_in_child(
    program: &Path,
    args: &[&str],
    which: Implementation,
    scenario: Scenario,
) -> Result<Measurement, String> {
    let output = Command::new(program)
        .args(args)
        .arg(which.name())
        .arg(scenario.name())
        .output()
        .map_err(|error| format!("cannot run {}: {error}", program.display()))?;
    if !output.status.success() {
        return Err(format!("{} failed: {}", which.name(), String::from_utf8_lossy(&output.stderr)));
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    stdout
        .lines()
        .find_map(Measurement::from_line)
        .ok_or_else(|| format!("{} printed no measurement (is /proc/self/status readable?)", which.name()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_measurement_survives_its_line() {
        let m = Measurement { before: 1 << 20, after: 33 << 20, heap: None };
        assert_eq!(Measurement::from_line(&m.to_line()), Some(m));
        assert_eq!(m.bytes_per_entity(), (32 << 20) as f64 / ENTITIES as f64);
        let m = Measurement { heap: Some((1000, 1000 + 40 * ENTITIES)), ..m };
        assert_eq!(Measurement::from_line(&m.to_line()), Some(m));
        assert_eq!(m.allocated_per_entity(), Some(40.0));
        assert_eq!(Measurement::from_line("something else"), None);
        assert_eq!(Scenario::from_name("one-by-one"), Some(Scenario::OneByOne));
    }
}
