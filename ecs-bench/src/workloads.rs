//! The registry: every workload, and for each implementation the routine
//! that runs it. The criterion benches and the report both read this list.

use crate::par_sweep::HeavyCall;
use crate::save_load::{self, Direction, Format, HecsLayout};
use crate::{churn, game_loop, hierarchy, inspect, ours, par_sweep, raw, systems, with_bevy, with_hecs, Routine};

/// Who does the work.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Implementation {
    /// `archetable`, this workspace's engine.
    Ours,
    /// The `hecs` crate.
    Hecs,
    /// The `bevy_ecs` crate.
    Bevy,
    /// Plain `Vec`s, no engine: the floor.
    Raw,
}

impl Implementation {
    /// Every implementation, in report order.
    pub const ALL: [Implementation; 4] =
        [Implementation::Ours, Implementation::Hecs, Implementation::Bevy, Implementation::Raw];

    /// The peers ours is compared with.
    pub const PEERS: [Implementation; 2] = [Implementation::Hecs, Implementation::Bevy];

    /// Short lowercase name, used in bench ids and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Implementation::Ours => "archetable",
            Implementation::Hecs => "hecs",
            Implementation::Bevy => "bevy_ecs",
            Implementation::Raw => "raw",
        }
    }

    /// The implementation called `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Implementation::ALL.into_iter().find(|i| i.name() == name)
    }
}

/// Where a workload's row goes in the report.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Section {
    /// The main table: archetable beside the peers and the raw floor.
    Suite,
    /// "Save and load": a world saved in, or loaded from, one format
    /// (hecs in its column layout).
    SaveLoad(Format, Direction),
    /// "Save and load", the extra rows: hecs in its row layout only.
    SaveLoadHecsRows(Format, Direction),
    /// "Parallel iteration": the sweep's loop over `entities`, in parallel
    /// or serially.
    Parallel {
        /// Entities the loop visits.
        entities: usize,
        /// Whether the loop is the parallel one.
        parallel: bool,
    },
    /// "Rollback snapshots": one frame's save (with its checksum) or load
    /// of a world, archetable beside `bevy_ggrs`'s way on bevy_ecs and a
    /// copy into kept `Vec`s.
    Rollback(crate::rollback::Step),
    /// "Heavy work": the heavy sweep's loop over `entities`, called as
    /// `call` says (archetable only).
    Heavy {
        /// Entities the loop visits.
        entities: usize,
        /// How the loop is called.
        call: HeavyCall,
    },
}

impl Section {
    /// The name that selects every workload of the section on the report's
    /// command line (`report -- save_load`), if it has one.
    pub fn name(self) -> Option<&'static str> {
        match self {
            Section::Suite => None,
            Section::SaveLoad(..) | Section::SaveLoadHecsRows(..) => Some("save_load"),
            Section::Parallel { .. } => Some("par"),
            Section::Heavy { .. } => Some("heavy"),
            Section::Rollback(..) => Some("rollback"),
        }
    }
}

/// One workload of the suite.
pub struct Workload {
    /// Identifier, as in bench ids and the report.
    pub name: &'static str,
    /// What one run does, in a line.
    pub about: &'static str,
    /// Whether it is an iteration workload, held to the goal of 1.2x the
    /// raw floor.
    pub iteration: bool,
    /// Whether it uses more than one thread where the implementation can.
    pub parallel: bool,
    /// Where the report shows it.
    pub section: Section,
    /// The workload this one is a variant of, if any: the report divides
    /// archetable's time on this one by archetable's time on that one (`tracked_iter` by
    /// `simple_iter`: the price of change tracking).
    pub baseline: Option<&'static str>,
    /// Builds the routine of one implementation: `None` where it has none
    /// (no floor for some workloads).
    pub routine: fn(Implementation) -> Option<Box<dyn Routine>>,
}

impl std::fmt::Debug for Workload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Workload").field("name", &self.name).finish_non_exhaustive()
    }
}

/// The workload `$name` that saves (or loads) a world in one format, on archetable
/// and hecs (its column layout); with `rows`, on hecs in its row layout only.
macro_rules! save_load {
    ($name:literal, $format:ident, $direction:ident, $about:literal) => {
        Workload {
            name: $name,
            about: $about,
            iteration: false,
            parallel: false,
            section: Section::SaveLoad(Format::$format, Direction::$direction),
            baseline: None,
            routine: |i| save_load_routine(i, Format::$format, Direction::$direction),
        }
    };
    (rows $name:literal, $format:ident, $direction:ident, $about:literal) => {
        Workload {
            name: $name,
            about: $about,
            iteration: false,
            parallel: false,
            section: Section::SaveLoadHecsRows(Format::$format, Direction::$direction),
            baseline: None,
            routine: |i| {
                (i == Implementation::Hecs)
                    .then(|| save_load::with_hecs::routine(Format::$format, Direction::$direction, HecsLayout::Row))
            },
        }
    };
}

/// The two workloads of entry `$k` of [`par_sweep::COUNTS`]: the parallel
/// loop (whose baseline is the serial one) and the serial loop.
macro_rules! par_sweep {
    ($k:literal) => {
        [
            Workload {
                name: par_sweep::COUNTS[$k].1,
                about: "the parallel sweep (see its section): that many movers stepped with each engine's parallel \
                        iteration",
                iteration: true,
                parallel: true,
                section: Section::Parallel { entities: par_sweep::COUNTS[$k].0, parallel: true },
                baseline: Some(par_sweep::COUNTS[$k].2),
                routine: |i| par_sweep::routine(i, par_sweep::COUNTS[$k].0, true),
            },
            Workload {
                name: par_sweep::COUNTS[$k].2,
                about: "the parallel sweep's loop on the calling thread (`for_each`)",
                iteration: true,
                parallel: false,
                section: Section::Parallel { entities: par_sweep::COUNTS[$k].0, parallel: false },
                baseline: None,
                routine: |i| par_sweep::routine(i, par_sweep::COUNTS[$k].0, false),
            },
        ]
    };
}

/// The three workloads of entry `$k` of [`par_sweep::HEAVY_COUNTS`]: the
/// default parallel call (whose baseline is the serial loop), the serial
/// loop, and `batch_size(64)`.
macro_rules! heavy_sweep {
    ($k:literal) => {
        [
            Workload {
                name: par_sweep::HEAVY_COUNTS[$k].1,
                about: "the heavy sweep (see its section): that many bodies, about a microsecond of work each, with \
                        `par_for_each_mut` and no batch size",
                iteration: true,
                parallel: true,
                section: Section::Heavy { entities: par_sweep::HEAVY_COUNTS[$k].0, call: HeavyCall::Default },
                baseline: Some(par_sweep::HEAVY_COUNTS[$k].2),
                routine: |i| par_sweep::heavy_routine(i, par_sweep::HEAVY_COUNTS[$k].0, HeavyCall::Default),
            },
            Workload {
                name: par_sweep::HEAVY_COUNTS[$k].2,
                about: "the heavy sweep's loop on the calling thread (`for_each_mut`)",
                iteration: true,
                parallel: false,
                section: Section::Heavy { entities: par_sweep::HEAVY_COUNTS[$k].0, call: HeavyCall::Serial },
                baseline: None,
                routine: |i| par_sweep::heavy_routine(i, par_sweep::HEAVY_COUNTS[$k].0, HeavyCall::Serial),
            },
            Workload {
                name: par_sweep::HEAVY_COUNTS[$k].3,
                about: "the heavy sweep's loop with `par_iter_mut().batch_size(64)`",
                iteration: true,
                parallel: true,
                section: Section::Heavy { entities: par_sweep::HEAVY_COUNTS[$k].0, call: HeavyCall::Batched },
                baseline: Some(par_sweep::HEAVY_COUNTS[$k].2),
                routine: |i| par_sweep::heavy_routine(i, par_sweep::HEAVY_COUNTS[$k].0, HeavyCall::Batched),
            },
        ]
    };
}

/// Picks the routine of `which` among one function per implementation.
macro_rules! per_implementation {
    ($which:expr, $f:ident $(($($arg:expr),*))?) => {
        match $which {
            Implementation::Ours => Some(ours::$f($($($arg),*)?)),
            Implementation::Hecs => Some(with_hecs::$f($($($arg),*)?)),
            Implementation::Bevy => Some(with_bevy::$f($($($arg),*)?)),
            Implementation::Raw => per_implementation!(@raw $f $(($($arg),*))?),
        }
    };
    (@raw first_query_many_archetypes) => { None };
    (@raw despawn_random) => { None };
    (@raw $f:ident $(($($arg:expr),*))?) => { Some(raw::$f($($($arg),*)?)) };
}

/// Every workload, in report order: the community suite, then the scale
/// curves, the schedule workloads, the parallel sweep, the heavy sweep, and
/// saving and loading.
pub fn workloads() -> Vec<Workload> {
    let mut all = suite();
    let sweep = [par_sweep!(0), par_sweep!(1), par_sweep!(2), par_sweep!(3), par_sweep!(4), par_sweep!(5)];
    all.extend(sweep.into_iter().flatten());
    let heavy = [
        heavy_sweep!(0),
        heavy_sweep!(1),
        heavy_sweep!(2),
        heavy_sweep!(3),
        heavy_sweep!(4),
        heavy_sweep!(5),
        heavy_sweep!(6),
    ];
    all.extend(heavy.into_iter().flatten());
    all.extend(save_and_load());
    all.extend(rollback());
    all
}

/// The rollback snapshot workloads.
fn rollback() -> [Workload; 2] {
    use crate::rollback::{routine, Step};
    [
        Workload {
            name: "rollback_save",
            about: "one rollback save of 10,000 entities of four components (two `i32` pairs, a `u32`, a `String`): \
                    a copy into a kept snapshot and the frame's checksum (archetable's driver; bevy_ecs as \
                    `bevy_ggrs` does it; the floor copies into kept `Vec`s and hashes nothing)",
            iteration: false,
            parallel: false,
            section: Section::Rollback(Step::Save),
            baseline: None,
            routine: |i| routine(i, Step::Save),
        },
        Workload {
            name: "rollback_load",
            about: "one rollback load of the same 10,000 entities from a snapshot",
            iteration: false,
            parallel: false,
            section: Section::Rollback(Step::Load),
            baseline: None,
            routine: |i| routine(i, Step::Load),
        },
    ]
}

/// The main table's workloads.
fn suite() -> Vec<Workload> {
    vec![
        Workload {
            name: "simple_insert",
            about: "spawn 10,000 (Transform, Position, Rotation, Velocity) into a fresh world",
            iteration: false,
            parallel: false,
            section: Section::Suite,
            baseline: None,
            routine: |i| per_implementation!(i, simple_insert),
        },
        Workload {
            name: "simple_iter",
            about: "10,000 bodies: position += velocity",
            iteration: true,
            parallel: false,
            section: Section::Suite,
            baseline: None,
            routine: |i| per_implementation!(i, simple_iter),
        },
        Workload {
            name: "simple_iter_for",
            about: "simple_iter written as a plain `for` loop over the query (the floor is simple_iter's)",
            iteration: true,
            parallel: false,
            section: Section::Suite,
            baseline: Some("simple_iter"),
            routine: |i| match i {
                Implementation::Ours => Some(ours::simple_iter_for()),
                Implementation::Hecs => Some(with_hecs::simple_iter_for()),
                Implementation::Bevy => Some(with_bevy::simple_iter_for()),
                Implementation::Raw => Some(raw::simple_iter()),
            },
        },
        Workload {
            name: "tracked_iter",
            about: "simple_iter with Position and Velocity tracking changes (`#[component(track_changes)]`) on archetable; \
                    bevy_ecs always tracks, so its cell is its simple_iter; hecs does not track",
            iteration: true,
            parallel: false,
            section: Section::Suite,
            baseline: Some("simple_iter"),
            routine: |i| match i {
                Implementation::Ours => Some(ours::tracked_iter()),
                Implementation::Bevy => Some(with_bevy::simple_iter()),
                Implementation::Raw => Some(raw::simple_iter()),
                Implementation::Hecs => None,
            },
        },
        Workload {
            name: "bullet_churn_unpooled",
            about: "spawn 10,000 bullets with a 4-point Vec trail, then despawn them all",
            iteration: false,
            parallel: false,
            section: Section::Suite,
            baseline: None,
            routine: |i| match i {
                Implementation::Ours => Some(churn::ours_plain()),
                Implementation::Hecs => Some(churn::hecs()),
                Implementation::Bevy => Some(churn::bevy()),
                Implementation::Raw => Some(churn::raw()),
            },
        },
        Workload {
            name: "bullet_churn",
            about: "bullet_churn_unpooled with the trail pooled on archetable (`#[component(pooled)]`, `spawn_pooled`); \
                    the peers have no pools, so their cells are their bullet_churn_unpooled",
            iteration: false,
            parallel: false,
            section: Section::Suite,
            baseline: Some("bullet_churn_unpooled"),
            routine: |i| match i {
                Implementation::Ours => Some(churn::ours_pooled()),
                Implementation::Hecs => Some(churn::hecs()),
                Implementation::Bevy => Some(churn::bevy()),
                Implementation::Raw => Some(churn::raw()),
            },
        },
        Workload {
            name: "frag_iter",
            about: "26 archetypes of 20 entities: double every Data",
            iteration: true,
            parallel: false,
            section: Section::Suite,
            baseline: None,
            routine: |i| per_implementation!(i, frag_iter),
        },
        Workload {
            name: "frag_iter_for",
            about: "frag_iter written as a plain `for` loop over the query; the floor is the same `for` loop over its tables \
                    flattened (`tables.iter_mut().flatten()`), since one loop over many tables cannot be vectorized \
                    the way frag_iter's nested loops are",
            iteration: true,
            parallel: false,
            section: Section::Suite,
            baseline: Some("frag_iter"),
            routine: |i| match i {
                Implementation::Ours => Some(ours::frag_iter_for()),
                Implementation::Hecs => Some(with_hecs::frag_iter_for()),
                Implementation::Bevy => Some(with_bevy::frag_iter_for()),
                Implementation::Raw => Some(raw::frag_iter_for()),
            },
        },
        Workload {
            name: "heavy_compute",
            about: "1,000 bodies, in parallel: invert the matrix 100 times, position += velocity; each engine's \
                    parallel loop with its defaults (archetable and bevy_ecs pick the batches; hecs, which has no \
                    default, and the floor take 64 entities a batch)",
            iteration: true,
            parallel: true,
            section: Section::Suite,
            baseline: None,
            routine: |i| per_implementation!(i, heavy_compute),
        },
        Workload {
            name: "heavy_compute_batch64",
            about: "heavy_compute tuned: archetable with `batch_size(64)`, bevy_ecs with a fixed batch of 64 \
                    (`BatchingStrategy::fixed(64)`); hecs and the floor as in heavy_compute",
            iteration: true,
            parallel: true,
            section: Section::Suite,
            baseline: Some("heavy_compute"),
            routine: |i| match i {
                Implementation::Ours => Some(ours::heavy_compute_batched()),
                Implementation::Hecs => Some(with_hecs::heavy_compute()),
                Implementation::Bevy => Some(with_bevy::heavy_compute_batched()),
                Implementation::Raw => Some(raw::heavy_compute()),
            },
        },
        Workload {
            name: "schedule",
            about: "4 x 10,000 entities: systems ab, cd, ce swap two components each",
            iteration: true,
            parallel: true,
            section: Section::Suite,
            baseline: None,
            routine: |i| per_implementation!(i, schedule),
        },
        Workload {
            name: "schedule_for",
            about: "schedule with each system written as a plain `for` loop over its query; the floor is the same three \
                    loops with `ab`'s four tables walked as one sequence (`flat_map`), as a `for` loop over a query \
                    walks them",
            iteration: true,
            parallel: true,
            section: Section::Suite,
            baseline: Some("schedule"),
            routine: |i| match i {
                Implementation::Ours => Some(ours::schedule_for()),
                Implementation::Hecs => Some(with_hecs::schedule_for()),
                Implementation::Bevy => Some(with_bevy::schedule_for()),
                Implementation::Raw => Some(raw::schedule_for()),
            },
        },
        Workload {
            name: "add_remove",
            about: "10,000 entities of (A): insert B into each, then remove it",
            iteration: false,
            parallel: false,
            section: Section::Suite,
            baseline: None,
            routine: |i| per_implementation!(i, add_remove),
        },
        Workload {
            name: "add_remove_sparse",
            about: "add_remove with B in sparse storage (archetable `storage = \"sparse\"`, bevy_ecs `SparseSet`); \
                    hecs has one storage",
            iteration: false,
            parallel: false,
            section: Section::Suite,
            baseline: Some("add_remove"),
            routine: |i| match i {
                Implementation::Ours => Some(ours::add_remove_sparse()),
                Implementation::Bevy => Some(with_bevy::add_remove_sparse()),
                Implementation::Hecs | Implementation::Raw => None,
            },
        },
        Workload {
            name: "boost_iter",
            about: "10,000 (Position, Velocity), every other one with a Boost: position.x += boost",
            iteration: false,
            parallel: false,
            section: Section::Suite,
            baseline: None,
            routine: |i| match i {
                Implementation::Ours => Some(ours::boost_iter()),
                Implementation::Hecs => Some(with_hecs::boost_iter()),
                Implementation::Bevy => Some(with_bevy::boost_iter()),
                Implementation::Raw => None,
            },
        },
        Workload {
            name: "sparse_boost_iter",
            about: "boost_iter with the Boost in sparse storage (archetable and bevy_ecs; hecs has one storage)",
            iteration: false,
            parallel: false,
            section: Section::Suite,
            baseline: Some("boost_iter"),
            routine: |i| match i {
                Implementation::Ours => Some(ours::sparse_boost_iter()),
                Implementation::Bevy => Some(with_bevy::sparse_boost_iter()),
                Implementation::Hecs | Implementation::Raw => None,
            },
        },
        Workload {
            name: "iter_1k",
            about: "1,000 (Position, Velocity): position += velocity",
            iteration: true,
            parallel: false,
            section: Section::Suite,
            baseline: None,
            routine: |i| per_implementation!(i, iter_movers(1_000)),
        },
        Workload {
            name: "iter_10k",
            about: "10,000 (Position, Velocity): position += velocity",
            iteration: true,
            parallel: false,
            section: Section::Suite,
            baseline: None,
            routine: |i| per_implementation!(i, iter_movers(10_000)),
        },
        Workload {
            name: "iter_100k",
            about: "100,000 (Position, Velocity): position += velocity",
            iteration: true,
            parallel: false,
            section: Section::Suite,
            baseline: None,
            routine: |i| per_implementation!(i, iter_movers(100_000)),
        },
        Workload {
            name: "iter_1m",
            about: "1,000,000 (Position, Velocity): position += velocity",
            iteration: true,
            parallel: false,
            section: Section::Suite,
            baseline: None,
            routine: |i| per_implementation!(i, iter_movers(1_000_000)),
        },
        Workload {
            name: "spawn_1m",
            about: "spawn 1,000,000 (Position, Velocity) into a fresh world",
            iteration: false,
            parallel: false,
            section: Section::Suite,
            baseline: None,
            routine: |i| per_implementation!(i, spawn_big),
        },
        Workload {
            name: "sparse_query",
            about: "kept query matching 1% of 100,000 entities over 1,000 archetypes: position += velocity",
            iteration: true,
            parallel: false,
            section: Section::Suite,
            baseline: None,
            routine: |i| per_implementation!(i, sparse_query),
        },
        Workload {
            name: "first_query_10k_archetypes",
            about: "build a query over 10,000 archetypes (one entity each) and iterate once",
            iteration: false,
            parallel: false,
            section: Section::Suite,
            baseline: None,
            routine: |i| per_implementation!(i, first_query_many_archetypes),
        },
        Workload {
            name: "despawn_100k_random",
            about: "despawn 100,000 (Position, Velocity) in random order",
            iteration: false,
            parallel: false,
            section: Section::Suite,
            baseline: None,
            routine: |i| per_implementation!(i, despawn_random),
        },
        Workload {
            name: "tree_flat_spawn_100k",
            about: "spawn hierarchy_spawn's 100,000 entities, both transforms each, without their parents \
                    (hierarchy_spawn's baseline)",
            iteration: false,
            parallel: false,
            section: Section::Suite,
            baseline: None,
            routine: |i| match i {
                Implementation::Ours => Some(hierarchy::tree_flat_spawn_ours()),
                Implementation::Bevy => Some(hierarchy::tree_flat_spawn_bevy()),
                Implementation::Raw => Some(hierarchy::tree_flat_spawn_raw()),
                Implementation::Hecs => None,
            },
        },
        Workload {
            name: "hierarchy_spawn",
            about: "build a tree of 100,000 entities with fan-out 4, each with a 2D local and global transform",
            iteration: false,
            parallel: false,
            section: Section::Suite,
            baseline: Some("tree_flat_spawn_100k"),
            routine: |i| match i {
                Implementation::Ours => Some(hierarchy::spawn_ours()),
                Implementation::Bevy => Some(hierarchy::spawn_bevy()),
                Implementation::Raw => Some(hierarchy::spawn_raw()),
                Implementation::Hecs => None,
            },
        },
        Workload {
            name: "hierarchy_propagate",
            about: "propagate the 2D transforms through that tree, parents first",
            iteration: false,
            parallel: false,
            section: Section::Suite,
            baseline: None,
            routine: |i| match i {
                Implementation::Ours => Some(hierarchy::propagate_ours()),
                Implementation::Bevy => Some(hierarchy::propagate_bevy()),
                Implementation::Raw => Some(hierarchy::propagate_raw()),
                Implementation::Hecs => None,
            },
        },
        Workload {
            name: "despawn_recursive_100k",
            about: "despawn that tree from its root, every descendant with it",
            iteration: false,
            parallel: false,
            section: Section::Suite,
            baseline: None,
            routine: |i| match i {
                Implementation::Ours => Some(hierarchy::despawn_ours()),
                Implementation::Bevy => Some(hierarchy::despawn_bevy()),
                Implementation::Raw => Some(hierarchy::despawn_raw()),
                Implementation::Hecs => None,
            },
        },
        Workload {
            name: "flat_spawn_100k",
            about: "spawn 100,000 entities with the same 2D local transform and no parent (wide_spawn_100k's baseline)",
            iteration: false,
            parallel: false,
            section: Section::Suite,
            baseline: None,
            routine: |i| match i {
                Implementation::Ours => Some(hierarchy::flat_spawn_ours()),
                Implementation::Bevy => Some(hierarchy::flat_spawn_bevy()),
                Implementation::Raw => Some(hierarchy::flat_spawn_raw()),
                Implementation::Hecs => None,
            },
        },
        Workload {
            name: "wide_spawn_100k",
            about: "spawn 100,000 children of one parent, each with a 2D local transform",
            iteration: false,
            parallel: false,
            section: Section::Suite,
            baseline: Some("flat_spawn_100k"),
            routine: |i| match i {
                Implementation::Ours => Some(hierarchy::wide_spawn_ours()),
                Implementation::Bevy => Some(hierarchy::wide_spawn_bevy()),
                Implementation::Raw => Some(hierarchy::wide_spawn_raw()),
                Implementation::Hecs => None,
            },
        },
        Workload {
            name: "wide_user_spawn_100k",
            about: "spawn 100,000 sources of one target through a relationship the user declares, each with a 2D \
                    local transform",
            iteration: false,
            parallel: false,
            section: Section::Suite,
            baseline: Some("flat_spawn_100k"),
            routine: |i| match i {
                Implementation::Ours => Some(hierarchy::wide_user_spawn_ours()),
                Implementation::Raw => Some(hierarchy::wide_user_spawn_raw()),
                Implementation::Bevy | Implementation::Hecs => None,
            },
        },
        Workload {
            name: "flat_respawn_100k",
            about: "flat_spawn_100k into a world cleared before each run, whose tables keep their memory \
                    (wide_respawn_100k's baseline)",
            iteration: false,
            parallel: false,
            section: Section::Suite,
            baseline: None,
            routine: |i| match i {
                Implementation::Ours => Some(hierarchy::flat_respawn_ours()),
                Implementation::Bevy => Some(hierarchy::flat_respawn_bevy()),
                Implementation::Raw => Some(hierarchy::flat_respawn_raw()),
                Implementation::Hecs => None,
            },
        },
        Workload {
            name: "wide_respawn_100k",
            about: "wide_spawn_100k into a world cleared before each run: a child spawn's own work, without the \
                    allocator's",
            iteration: false,
            parallel: false,
            section: Section::Suite,
            baseline: Some("flat_respawn_100k"),
            routine: |i| match i {
                Implementation::Ours => Some(hierarchy::wide_respawn_ours()),
                Implementation::Bevy => Some(hierarchy::wide_respawn_bevy()),
                Implementation::Raw => Some(hierarchy::wide_respawn_raw()),
                Implementation::Hecs => None,
            },
        },
        Workload {
            name: "wide_clear_100k",
            about: "clear the world of a parent and its 100,000 children, for the next level (archetable keeps \
                    every old handle stale, a write per entity; bevy_ecs's `World::clear_entities` resets its entity \
                    table, so an old handle may name a new entity)",
            iteration: false,
            parallel: false,
            section: Section::Suite,
            baseline: None,
            routine: |i| match i {
                Implementation::Ours => Some(hierarchy::wide_clear_ours()),
                Implementation::Bevy => Some(hierarchy::wide_clear_bevy()),
                Implementation::Raw => Some(hierarchy::wide_clear_raw()),
                Implementation::Hecs => None,
            },
        },
        Workload {
            name: "wide_despawn_recursive_100k",
            about: "despawn that parent with its 100,000 children",
            iteration: false,
            parallel: false,
            section: Section::Suite,
            baseline: None,
            routine: |i| match i {
                Implementation::Ours => Some(hierarchy::wide_despawn_ours()),
                Implementation::Bevy => Some(hierarchy::wide_despawn_bevy()),
                Implementation::Raw => Some(hierarchy::wide_despawn_raw()),
                Implementation::Hecs => None,
            },
        },
        Workload {
            name: "wide_leave_half_10k",
            about: "despawn every other child of a parent with 10,000, one call each, in join order",
            iteration: false,
            parallel: false,
            section: Section::Suite,
            baseline: None,
            routine: |i| match i {
                Implementation::Ours => Some(hierarchy::wide_leave_ours()),
                Implementation::Bevy => Some(hierarchy::wide_leave_bevy()),
                Implementation::Raw => Some(hierarchy::wide_leave_raw()),
                Implementation::Hecs => None,
            },
        },
        Workload {
            name: "tiny_systems_100",
            about: "a frame of 100 tiny systems (each sums a query over 10 entities); hecs has no scheduler",
            iteration: false,
            parallel: true,
            section: Section::Suite,
            baseline: None,
            routine: |i| tiny_systems(i, 100),
        },
        Workload {
            name: "tiny_systems_1000",
            about: "a frame of 1,000 tiny systems",
            iteration: false,
            parallel: true,
            section: Section::Suite,
            baseline: None,
            routine: |i| tiny_systems(i, 1_000),
        },
        Workload {
            name: "tiny_systems_6000",
            about: "a frame of 6,000 tiny systems",
            iteration: false,
            parallel: true,
            section: Section::Suite,
            baseline: None,
            routine: |i| tiny_systems(i, 6_000),
        },
        Workload {
            name: "two_heavy_systems",
            about: "two systems of heavy arithmetic on 10,000 entities each, over different components; \
                    the floor runs both loops on one thread, so archetable / raw is the parallel speed-up",
            iteration: false,
            parallel: true,
            section: Section::Suite,
            baseline: None,
            routine: |i| match i {
                Implementation::Ours => Some(systems::ours::two_heavy_systems()),
                Implementation::Bevy => Some(systems::bevy::two_heavy_systems()),
                Implementation::Raw => Some(systems::raw::two_heavy_systems()),
                Implementation::Hecs => None,
            },
        },
        Workload {
            name: "game_loop_by_hand",
            about: "a frame of three empty schedules (fixed update, update, late update) run by hand after \
                    advancing Time: what the stages themselves cost; archetable only",
            iteration: false,
            parallel: false,
            section: Section::Suite,
            baseline: None,
            routine: |i| (i == Implementation::Ours).then(game_loop::schedules_by_hand),
        },
        Workload {
            name: "game_loop_advance",
            about: "GameLoop::advance over empty stages: a 1/60 s frame with one fixed step; \
                    the goal is under 1 µs a frame; archetable only",
            iteration: false,
            parallel: false,
            section: Section::Suite,
            baseline: Some("game_loop_by_hand"),
            routine: |i| (i == Implementation::Ours).then(game_loop::advance_empty),
        },
        Workload {
            name: "inspect_update_idle",
            about: "Inspector::update once per frame with no client connected (a game loop of three \
                    systems): what leaving the live inspector on costs a frame; the goal is under 1 µs; \
                    archetable only",
            iteration: false,
            parallel: false,
            section: Section::Suite,
            baseline: None,
            routine: |i| (i == Implementation::Ours).then(inspect::update_idle),
        },
        Workload {
            name: "inspect_update_client",
            about: "Inspector::update once per frame with a client like the page: per-system times recorded \
                    and fed to its watch of the frame figures every frame, its calls answered as they come; \
                    archetable only",
            iteration: false,
            parallel: false,
            section: Section::Suite,
            baseline: Some("inspect_update_idle"),
            routine: |i| (i == Implementation::Ours).then(inspect::update_with_client),
        },
    ]
}

/// The save and load workloads.
fn save_and_load() -> [Workload; 10] {
    [
        save_load!(
            "save_load_json_save",
            Json,
            Save,
            "save 100,000 entities of 4 components (positions, velocities, health, an 8-letter name) as JSON"
        ),
        save_load!("save_load_json_load", Json, Load, "load that JSON save into a fresh world"),
        save_load!("save_load_ron_save", Ron, Save, "save the same world as RON"),
        save_load!("save_load_ron_load", Ron, Load, "load that RON save into a fresh world"),
        save_load!("save_load_binary_save", Binary, Save, "save the same world in binary (postcard)"),
        save_load!("save_load_binary_load", Binary, Load, "load that binary save into a fresh world"),
        save_load!(rows "save_load_json_save_hecs_rows", Json, Save, "save the same world as JSON, hecs's row layout"),
        save_load!(rows "save_load_json_load_hecs_rows", Json, Load, "load that row-layout JSON save (hecs)"),
        save_load!(rows "save_load_ron_save_hecs_rows", Ron, Save, "save the same world as RON, hecs's row layout"),
        save_load!(rows "save_load_ron_load_hecs_rows", Ron, Load, "load that row-layout RON save (hecs)"),
    ]
}

/// The save and load routines: archetable and hecs only (bevy_ecs needs
/// bevy_scene and reflection to save a world; there is no floor).
fn save_load_routine(which: Implementation, format: Format, direction: Direction) -> Option<Box<dyn Routine>> {
    match which {
        Implementation::Ours => Some(save_load::ours::routine(format, direction)),
        Implementation::Hecs => Some(save_load::with_hecs::routine(format, direction, HecsLayout::Column)),
        Implementation::Bevy | Implementation::Raw => None,
    }
}

/// The tiny-systems workload of `n` systems, for the engines with a
/// scheduler.
fn tiny_systems(which: Implementation, n: usize) -> Option<Box<dyn Routine>> {
    match which {
        Implementation::Ours => Some(systems::ours::tiny_systems(n)),
        Implementation::Bevy => Some(systems::bevy::tiny_systems(n)),
        Implementation::Hecs | Implementation::Raw => None,
    }
}
