//! Benchmarks of `archetable` side by side with the peer crates `hecs` and
//! `bevy_ecs`, and with a raw floor: the same work on plain `Vec`s.
//!
//! The workloads are the Rust ECS community's usual suite (simple insert,
//! simple iteration, fragmented iteration, heavy compute, schedule,
//! add/remove), re-implemented here, plus scale curves (iteration from
//! 10^3 to 10^6 entities, a big spawn, a sparse query, a first query over
//! many archetypes, despawning in random order), the price of change
//! tracking (`tracked_iter` beside `simple_iter`), and saving and loading a
//! world ([`save_load`], archetable and hecs only).
//!
//! Each workload is written once per implementation, in one module each:
//! [`ours`], [`with_hecs`], [`with_bevy`] and [`raw`]. The registry in
//! [`workloads()`] turns them into [`Routine`]s, and both the criterion benches
//! (`cargo bench -p archetable-bench`) and the report binary
//! (`cargo run -p archetable-bench --release --bin report`) time those routines
//! with the same function, [`routine::time_runs`].
//!
//! A *raw floor* does the same work with plain `Vec`s (struct of arrays) and
//! no engine: the fastest a workload can go with this data layout, so `archetable
//! time / floor time` is the price of the engine.

pub mod churn;
pub mod frag;
pub mod game_loop;
pub mod hierarchy;
pub mod inspect;
pub mod memory;
pub mod ours;
pub mod par_sweep;
pub mod raw;
pub mod report;
pub mod rollback;
pub mod routine;
pub mod save_load;
pub mod snapshot;
pub mod systems;
pub mod with_bevy;
pub mod with_hecs;
pub mod workloads;

#[cfg(test)]
mod agreement_tests;

pub use routine::Routine;
pub use workloads::{workloads, Implementation, Section, Workload};

/// Entities of the simple insert, simple iteration and add/remove workloads.
pub const N: usize = 10_000;

/// Declares `f32`-tuple components that all three engines accept: ours and
/// `bevy_ecs` need their derive, `hecs` takes any `Send + Sync + 'static`
/// type. One set of types keeps the data layout identical for every
/// implementation.
macro_rules! components {
    ($($(#[$attr:meta])* $name:ident($ty:ty);)*) => {
        $(
            $(#[$attr])*
            #[derive(archetable::Component, bevy_ecs::component::Component, Clone, Copy, Debug, PartialEq)]
            pub struct $name(pub $ty);
        )*
    };
}

components! {
    /// A 4x4 matrix: the bulky component of the body workloads (64 bytes).
    Transform([[f32; 4]; 4]);
    /// A point in space (12 bytes).
    Position([f32; 3]);
    /// An orientation as three angles (12 bytes).
    Rotation([f32; 3]);
    /// Displacement per step (12 bytes).
    Velocity([f32; 3]);
    /// Component of the schedule and add/remove workloads.
    A(f32);
    /// Component of the schedule workload, and the one the add/remove
    /// workload inserts and removes.
    B(f32);
    /// Component of the schedule workload.
    C(f32);
    /// Component of the schedule workload.
    D(f32);
    /// Component of the schedule workload.
    E(f32);
}

/// The four components of one entity of the body workloads (simple insert,
/// simple iteration, heavy compute).
pub type Body = (Transform, Position, Rotation, Velocity);

/// The identity matrix.
pub const IDENTITY: [[f32; 4]; 4] =
    [[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]];

/// The components of entity number `i`: distinct, deterministic values.
#[inline]
pub fn body(i: usize) -> Body {
    let f = i as f32;
    (Transform(IDENTITY), Position([f, f + 1.0, f + 2.0]), Rotation([0.0, 0.0, f]), Velocity([1.0, 0.5, 0.25]))
}

/// The two components of entity number `i` of the scale workloads.
#[inline]
pub fn mover(i: usize) -> (Position, Velocity) {
    let f = i as f32;
    (Position([f, f, f]), Velocity([1.0, 0.5, 0.25]))
}

/// Adds `velocity` to `position`, component-wise: the iteration workloads'
/// work per entity.
#[inline(always)]
pub fn step(position: &mut Position, velocity: &Velocity) {
    for (p, v) in position.0.iter_mut().zip(velocity.0) {
        *p += v;
    }
}

/// How many times the heavy compute workload inverts each matrix.
pub const INVERSIONS: usize = 100;

/// The heavy compute workload's work per entity: inverts the matrix
/// [`INVERSIONS`] times, then [`step`]s.
#[inline]
pub fn heavy(transform: &mut Transform, position: &mut Position, velocity: &Velocity) {
    for _ in 0..INVERSIONS {
        transform.0 = invert(&transform.0);
    }
    step(position, velocity);
}

/// The inverse of a 4x4 matrix by cofactors, or the matrix itself when it is
/// singular.
pub fn invert(m: &[[f32; 4]; 4]) -> [[f32; 4]; 4] {
    // 2x2 minors of the top two rows (s) and the bottom two rows (c).
    let s0 = m[0][0] * m[1][1] - m[1][0] * m[0][1];
    let s1 = m[0][0] * m[1][2] - m[1][0] * m[0][2];
    let s2 = m[0][0] * m[1][3] - m[1][0] * m[0][3];
    let s3 = m[0][1] * m[1][2] - m[1][1] * m[0][2];
    let s4 = m[0][1] * m[1][3] - m[1][1] * m[0][3];
    let s5 = m[0][2] * m[1][3] - m[1][2] * m[0][3];
    let c5 = m[2][2] * m[3][3] - m[3][2] * m[2][3];
    let c4 = m[2][1] * m[3][3] - m[3][1] * m[2][3];
    let c3 = m[2][1] * m[3][2] - m[3][1] * m[2][2];
    let c2 = m[2][0] * m[3][3] - m[3][0] * m[2][3];
    let c1 = m[2][0] * m[3][2] - m[3][0] * m[2][2];
    let c0 = m[2][0] * m[3][1] - m[3][0] * m[2][1];
    let det = s0 * c5 - s1 * c4 + s2 * c3 + s3 * c2 - s4 * c1 + s5 * c0;
    if det == 0.0 {
        return *m;
    }
    let d = 1.0 / det;
    [
        [
            (m[1][1] * c5 - m[1][2] * c4 + m[1][3] * c3) * d,
            (-m[0][1] * c5 + m[0][2] * c4 - m[0][3] * c3) * d,
            (m[3][1] * s5 - m[3][2] * s4 + m[3][3] * s3) * d,
            (-m[2][1] * s5 + m[2][2] * s4 - m[2][3] * s3) * d,
        ],
        [
            (-m[1][0] * c5 + m[1][2] * c2 - m[1][3] * c1) * d,
            (m[0][0] * c5 - m[0][2] * c2 + m[0][3] * c1) * d,
            (-m[3][0] * s5 + m[3][2] * s2 - m[3][3] * s1) * d,
            (m[2][0] * s5 - m[2][2] * s2 + m[2][3] * s1) * d,
        ],
        [
            (m[1][0] * c4 - m[1][1] * c2 + m[1][3] * c0) * d,
            (-m[0][0] * c4 + m[0][1] * c2 - m[0][3] * c0) * d,
            (m[3][0] * s4 - m[3][1] * s2 + m[3][3] * s0) * d,
            (-m[2][0] * s4 + m[2][1] * s2 - m[2][3] * s0) * d,
        ],
        [
            (-m[1][0] * c3 + m[1][1] * c1 - m[1][2] * c0) * d,
            (m[0][0] * c3 - m[0][1] * c1 + m[0][2] * c0) * d,
            (-m[3][0] * s3 + m[3][1] * s1 - m[3][2] * s0) * d,
            (m[2][0] * s3 - m[2][1] * s1 + m[2][2] * s0) * d,
        ],
    ]
}

/// The schedule workload's system `ab`: swaps the values of `A` and `B`.
#[inline(always)]
pub fn swap_ab(a: &mut A, b: &mut B) {
    std::mem::swap(&mut a.0, &mut b.0);
}

/// The schedule workload's system `cd`: swaps the values of `C` and `D`.
#[inline(always)]
pub fn swap_cd(c: &mut C, d: &mut D) {
    std::mem::swap(&mut c.0, &mut d.0);
}

/// The schedule workload's system `ce`: swaps the values of `C` and `E`.
#[inline(always)]
pub fn swap_ce(c: &mut C, e: &mut E) {
    std::mem::swap(&mut c.0, &mut e.0);
}

/// Entities per archetype of the schedule workload; its four archetypes are
/// `(A, B)`, `(A, B, C)`, `(A, B, C, D)` and `(A, B, C, E)`.
pub const SCHEDULE_PER_ARCHETYPE: usize = 10_000;

/// Entities of the heavy compute workload.
pub const HEAVY: usize = 1_000;

/// Entities of the big spawn workload.
pub const SPAWN_BIG: usize = 1_000_000;

/// Entities of the random-order despawn workload.
pub const DESPAWN: usize = 100_000;

/// The sparse query workload: [`SPARSE_ENTITIES`] entities with `Position`
/// spread evenly over [`SPARSE_ARCHETYPES`] archetypes told apart by
/// markers; one archetype in [`SPARSE_EVERY`] also has `Velocity`, so the
/// query `(&mut Position, &Velocity)` matches 1% of the entities.
pub const SPARSE_ENTITIES: usize = 100_000;
/// See [`SPARSE_ENTITIES`].
pub const SPARSE_ARCHETYPES: usize = 1_000;
/// See [`SPARSE_ENTITIES`].
pub const SPARSE_EVERY: usize = 100;

/// The archetypes of the sparse query workload in the order they are
/// created: per archetype, whether its entities have `Velocity` (the ones the
/// query matches), and its number, whose set bits name its markers.
///
/// The matching archetypes are numbered `0..10` and the others `0..990`, so
/// every prefix of an archetype's markers (lowest bit first, the order in
/// which ours and `bevy_ecs` insert them) is an archetype of the same kind
/// already made: building the world creates exactly these 1,000 archetypes in
/// every engine. The matching ones are spread evenly among the others.
pub fn sparse_layout() -> Vec<(bool, usize)> {
    let matching = SPARSE_ARCHETYPES / SPARSE_EVERY;
    let (mut hits, mut misses) = (0, 0);
    (0..SPARSE_ARCHETYPES)
        .map(|g| {
            if g % SPARSE_EVERY == 0 && hits < matching {
                hits += 1;
                (true, hits - 1)
            } else {
                misses += 1;
                (false, misses - 1)
            }
        })
        .collect()
}

/// Archetypes (and entities, one each) of the first-query workload. Entity
/// `k` has `(Position, Velocity)` and the markers of `k`'s bits.
pub const MANY_ARCHETYPES: usize = 10_000;

/// Zero-sized marker components that spread entities over many archetypes:
/// an entity gets marker `Mk` for each bit `k` set in its archetype number.
pub mod markers {
    /// A marker type every engine accepts.
    pub trait Marker: archetable::Component + bevy_ecs::component::Component + Default {}

    /// Receives the markers of one archetype number, one call per marker.
    pub trait MarkerSink {
        /// Adds `marker` to the entity being built.
        fn add<M: Marker>(&mut self, marker: M);
    }

    macro_rules! markers {
        ($($bit:literal $name:ident)*) => {
            $(
                #[doc = concat!("Marker for bit ", stringify!($bit), " of an archetype number.")]
                #[derive(archetable::Component, bevy_ecs::component::Component, Clone, Copy, Debug, Default, PartialEq)]
                pub struct $name;
                impl Marker for $name {}
            )*

            /// Number of marker types: up to `2^BITS` archetypes.
            pub const BITS: usize = [$($bit),*].len();

            /// Calls `sink.add` with the marker of each bit set in
            /// `archetype`, lowest bit first.
            ///
            /// # Panics
            /// If `archetype` needs more than [`BITS`] bits.
            pub fn add_markers(archetype: usize, sink: &mut impl MarkerSink) {
                assert!(archetype < 1 << BITS, "archetype number {archetype} needs more than {BITS} markers");
                $(
                    if archetype & (1 << $bit) != 0 {
                        sink.add($name);
                    }
                )*
            }
        };
    }

    markers!(0 M0 1 M1 2 M2 3 M3 4 M4 5 M5 6 M6 7 M7 8 M8 9 M9 10 M10 11 M11 12 M12 13 M13);
}

/// A fixed permutation of `0..n`, the same on every run: the random
/// despawn order.
pub fn shuffled(n: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    for i in (1..n).rev() {
        // xorshift64*
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        let r = state.wrapping_mul(0x2545_F491_4F6C_DD1D);
        order.swap(i, (r % (i as u64 + 1)) as usize);
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invert_undoes_a_matrix() {
        let m = [[2.0, 0.0, 0.0, 1.0], [0.0, 3.0, 0.0, 0.0], [0.0, 1.0, 4.0, 0.0], [0.0, 0.0, 0.0, 1.0]];
        let inv = invert(&m);
        for (i, row) in m.iter().enumerate() {
            for j in 0..4 {
                let dot: f32 = row.iter().zip(&inv).map(|(a, inv_row)| a * inv_row[j]).sum();
                let want = if i == j { 1.0 } else { 0.0 };
                assert!((dot - want).abs() < 1e-6, "({i}, {j}): {dot}");
            }
        }
        assert_eq!(invert(&IDENTITY), IDENTITY);
        assert_eq!(invert(&[[0.0; 4]; 4]), [[0.0; 4]; 4]);
    }

    #[test]
    fn shuffled_is_a_permutation() {
        let mut order = shuffled(1000);
        assert_ne!(order, (0..1000).collect::<Vec<_>>());
        order.sort_unstable();
        assert_eq!(order, (0..1000).collect::<Vec<_>>());
    }

    #[test]
    fn sparse_layout_matches_one_archetype_in_a_hundred() {
        let layout = sparse_layout();
        assert_eq!(layout.len(), SPARSE_ARCHETYPES);
        let hits: Vec<usize> = layout.iter().filter(|(hit, _)| *hit).map(|&(_, k)| k).collect();
        assert_eq!(hits, (0..10).collect::<Vec<_>>());
        let misses: Vec<usize> = layout.iter().filter(|(hit, _)| !*hit).map(|&(_, k)| k).collect();
        assert_eq!(misses, (0..990).collect::<Vec<_>>());
    }

    #[test]
    fn markers_follow_the_bits() {
        struct Count(usize);
        impl markers::MarkerSink for Count {
            fn add<M: markers::Marker>(&mut self, _: M) {
                self.0 += 1;
            }
        }
        let mut count = Count(0);
        markers::add_markers(0b1011, &mut count);
        assert_eq!(count.0, 3);
    }
}

/// `B` and a boost kept in sparse storage where the engine has it (both
/// derives read `storage = "SparseSet"`), for the workloads that compare it
/// with table storage.
pub mod sparse_types {
    /// [`crate::B`] in sparse storage.
    #[derive(archetable::Component, bevy_ecs::component::Component, Clone, Copy, Debug, PartialEq)]
    #[component(storage = "SparseSet")]
    pub struct SparseB(pub f32);

    /// A speed-up some movers have, in sparse storage.
    #[derive(archetable::Component, bevy_ecs::component::Component, Clone, Copy, Debug, PartialEq)]
    #[component(storage = "SparseSet")]
    pub struct SparseBoost(pub f32);

    /// The same boost in table storage.
    #[derive(archetable::Component, bevy_ecs::component::Component, Clone, Copy, Debug, PartialEq)]
    pub struct Boost(pub f32);
}
