//! The raw floors: each workload's work done on plain `Vec`s (struct of
//! arrays), with no engine. No ECS can beat a floor with the same data
//! layout; `archetable time / floor time` is the price of the engine.

use rayon::iter::{IndexedParallelIterator, IntoParallelRefIterator, IntoParallelRefMutIterator, ParallelIterator};

use crate::routine::{Build, Steady};
use crate::{body, frag, heavy, mover, step, swap_ab, swap_cd, swap_ce, Routine};
use crate::{Body, Position, Rotation, Transform, Velocity, A, B, C, D, E};

/// The floor of the body workloads: one `Vec` per component type, row `i`
/// holding entity `i`.
#[derive(Debug, Default)]
pub struct RawBodies {
    /// The `Transform` column.
    pub transforms: Vec<Transform>,
    /// The `Position` column.
    pub positions: Vec<Position>,
    /// The `Rotation` column.
    pub rotations: Vec<Rotation>,
    /// The `Velocity` column.
    pub velocities: Vec<Velocity>,
}

impl RawBodies {
    /// Pushes `n` bodies into `Vec`s allocated at their final size, as a
    /// `spawn_batch` allocates its columns.
    pub fn spawn(n: usize) -> Self {
        let mut raw = RawBodies {
            transforms: Vec::with_capacity(n),
            positions: Vec::with_capacity(n),
            rotations: Vec::with_capacity(n),
            velocities: Vec::with_capacity(n),
        };
        for i in 0..n {
            raw.push(body(i));
        }
        raw
    }

    #[inline]
    fn push(&mut self, (transform, position, rotation, velocity): Body) {
        self.transforms.push(transform);
        self.positions.push(position);
        self.rotations.push(rotation);
        self.velocities.push(velocity);
    }

    /// Number of bodies.
    pub fn len(&self) -> usize {
        self.positions.len()
    }

    /// Whether there are no bodies.
    pub fn is_empty(&self) -> bool {
        self.positions.is_empty()
    }

    /// Adds velocity to position for every body.
    #[inline]
    pub fn step(&mut self) {
        step_all(&mut self.positions, &self.velocities);
    }

    /// Inverts every matrix, then steps every body, on rayon's threads.
    pub fn heavy_step(&mut self) {
        self.transforms
            .par_iter_mut()
            .zip(self.positions.par_iter_mut())
            .zip(self.velocities.par_iter())
            .with_min_len(crate::with_hecs::BATCH as usize)
            .for_each(|((transform, position), velocity)| heavy(transform, position, velocity));
    }
}

/// The floor of the scale workloads: `Position` and `Velocity` columns.
#[derive(Debug, Default)]
pub struct RawMovers {
    /// The `Position` column.
    pub positions: Vec<Position>,
    /// The `Velocity` column.
    pub velocities: Vec<Velocity>,
}

impl RawMovers {
    /// `n` movers in `Vec`s allocated at their final size.
    pub fn spawn(n: usize) -> Self {
        let mut raw = RawMovers { positions: Vec::with_capacity(n), velocities: Vec::with_capacity(n) };
        for i in 0..n {
            let (position, velocity) = mover(i);
            raw.positions.push(position);
            raw.velocities.push(velocity);
        }
        raw
    }

    /// Adds velocity to position for every mover.
    #[inline]
    pub fn step(&mut self) {
        step_all(&mut self.positions, &self.velocities);
    }
}

/// [`step`] over two columns zipped.
#[inline]
pub fn step_all(positions: &mut [Position], velocities: &[Velocity]) {
    for (position, velocity) in positions.iter_mut().zip(velocities) {
        step(position, velocity);
    }
}

/// The floor of the schedule workload: the four tables' columns. `C` is
/// split by table, since `cd` and `ce` touch different tables' `C`.
#[derive(Debug, Default)]
pub struct RawSchedule {
    /// `A` of all four tables.
    pub a: Vec<A>,
    /// `B` of all four tables, in step with `a`.
    pub b: Vec<B>,
    /// `C` and `D` of table `(A, B, C, D)`.
    pub cd: (Vec<C>, Vec<D>),
    /// `C` and `E` of table `(A, B, C, E)`.
    pub ce: (Vec<C>, Vec<E>),
    /// `C` of table `(A, B, C)`.
    pub c: Vec<C>,
}

impl RawSchedule {
    /// `n` rows of each table, with the values the engines get.
    pub fn new(n: usize) -> Self {
        let a = (0..4).flat_map(|_| (0..n).map(|i| A(i as f32))).collect();
        RawSchedule {
            a,
            b: vec![B(0.0); 4 * n],
            cd: (vec![C(1.0); n], vec![D(2.0); n]),
            ce: (vec![C(1.0); n], vec![E(3.0); n]),
            c: vec![C(1.0); n],
        }
    }

    /// Runs `ab`, `cd` and `ce`, one after the other.
    pub fn run(&mut self) {
        for (a, b) in self.a.iter_mut().zip(&mut self.b) {
            swap_ab(a, b);
        }
        for (c, d) in self.cd.0.iter_mut().zip(&mut self.cd.1) {
            swap_cd(c, d);
        }
        for (c, e) in self.ce.0.iter_mut().zip(&mut self.ce.1) {
            swap_ce(c, e);
        }
    }

    /// [`RawSchedule::run`] written as engines' `for` loops are: `ab`
    /// walks its four tables as one sequence of rows (each table's rows
    /// of `A` and `B` chained after the previous table's).
    pub fn run_for(&mut self) {
        // `max(1)`: with no rows there are no chunks either.
        let per_table = self.c.len().max(1);
        let tables = self.a.chunks_mut(per_table).zip(self.b.chunks_mut(per_table));
        for (a, b) in tables.flat_map(|(a, b)| a.iter_mut().zip(b)) {
            swap_ab(a, b);
        }
        for (c, d) in self.cd.0.iter_mut().zip(&mut self.cd.1) {
            swap_cd(c, d);
        }
        for (c, e) in self.ce.0.iter_mut().zip(&mut self.ce.1) {
            swap_ce(c, e);
        }
    }

    /// Sums of the values of `A`, `B`, `C`, `D` and `E`.
    pub fn sums(&self) -> [f64; 5] {
        let sum = |values: &mut dyn Iterator<Item = f32>| values.map(f64::from).sum::<f64>();
        [
            sum(&mut self.a.iter().map(|x| x.0)),
            sum(&mut self.b.iter().map(|x| x.0)),
            sum(&mut self.c.iter().chain(&self.cd.0).chain(&self.ce.0).map(|x| x.0)),
            sum(&mut self.cd.1.iter().map(|x| x.0)),
            sum(&mut self.ce.1.iter().map(|x| x.0)),
        ]
    }
}

/// The floor of the add/remove workload, doing by hand what an archetype
/// engine does: two tables, `(A)` and `(A, B)`, each a struct of arrays with
/// the owner of every row, and a location per entity. Adding `B` moves the
/// entity's row from the first table to the second (swap-remove, push) and
/// fixes the location of the row moved into the hole; removing moves it
/// back.
#[derive(Debug)]
pub struct RawTables {
    /// Table `(A)`.
    only_a: RawTable,
    /// Table `(A, B)`; its `b` column is in step with `a`.
    with_b: RawTable,
    /// Per entity: whether it lives in `with_b`, and its row there.
    locations: Vec<(bool, u32)>,
}

#[derive(Debug, Default)]
struct RawTable {
    owners: Vec<u32>,
    a: Vec<A>,
    b: Vec<B>,
}

impl RawTables {
    /// `n` entities of `(A,)`, with the values the engines get.
    pub fn new(n: usize) -> Self {
        let mut only_a = RawTable::default();
        for i in 0..n {
            only_a.owners.push(i as u32);
            only_a.a.push(A(i as f32));
        }
        RawTables { only_a, with_b: RawTable::default(), locations: (0..n as u32).map(|i| (false, i)).collect() }
    }

    /// Number of entities.
    pub fn len(&self) -> usize {
        self.locations.len()
    }

    /// Whether there are no entities.
    pub fn is_empty(&self) -> bool {
        self.locations.is_empty()
    }

    /// Inserts `B` into every entity, then removes it from each, in entity
    /// order as the engines do.
    pub fn add_remove_all(&mut self) {
        for entity in 0..self.locations.len() {
            let (in_b, row) = self.locations[entity];
            debug_assert!(!in_b);
            let a = self.only_a.a.swap_remove(row as usize);
            self.only_a.owners.swap_remove(row as usize);
            if let Some(&moved) = self.only_a.owners.get(row as usize) {
                self.locations[moved as usize] = (false, row);
            }
            self.locations[entity] = (true, self.with_b.owners.len() as u32);
            self.with_b.owners.push(entity as u32);
            self.with_b.a.push(a);
            self.with_b.b.push(B(1.0));
        }
        for entity in 0..self.locations.len() {
            let (in_b, row) = self.locations[entity];
            debug_assert!(in_b);
            let a = self.with_b.a.swap_remove(row as usize);
            self.with_b.b.swap_remove(row as usize);
            self.with_b.owners.swap_remove(row as usize);
            if let Some(&moved) = self.with_b.owners.get(row as usize) {
                self.locations[moved as usize] = (true, row);
            }
            self.locations[entity] = (false, self.only_a.owners.len() as u32);
            self.only_a.owners.push(entity as u32);
            self.only_a.a.push(a);
        }
    }
}

/// Doubles every `Data` of the fragmented floor.
#[inline]
pub fn frag_step(tables: &mut [Vec<frag::Data>]) {
    for table in tables {
        for data in table {
            data.0 *= 2.0;
        }
    }
}

/// [`frag_step`] as one `for` loop over the tables' rows in sequence.
#[inline]
pub fn frag_step_for(tables: &mut [Vec<frag::Data>]) {
    for data in tables.iter_mut().flatten() {
        data.0 *= 2.0;
    }
}

/// The floor of the sparse query: only the matching tables, since a floor
/// knows where its data is.
pub fn sparse_tables() -> Vec<RawMovers> {
    let per_archetype = crate::SPARSE_ENTITIES / crate::SPARSE_ARCHETYPES;
    let matching = crate::sparse_layout().iter().filter(|(hit, _)| *hit).count();
    (0..matching).map(|_| RawMovers::spawn(per_archetype)).collect()
}

/// Spawns 10,000 bodies into fresh `Vec`s.
pub fn simple_insert() -> Box<dyn Routine> {
    Box::new(Build::new(|| RawBodies::spawn(crate::N)))
}

/// Steps 10,000 bodies.
pub fn simple_iter() -> Box<dyn Routine> {
    Box::new(Steady::new(RawBodies::spawn(crate::N), RawBodies::step))
}

/// Doubles `Data` over 26 small tables.
pub fn frag_iter() -> Box<dyn Routine> {
    Box::new(Steady::new(frag::raw(), |tables| frag_step(tables)))
}

/// Doubles `Data` over 26 small tables in one `for` loop over the flattened tables.
pub fn frag_iter_for() -> Box<dyn Routine> {
    Box::new(Steady::new(frag::raw(), |tables| frag_step_for(tables)))
}

/// Inverts matrices of 1,000 bodies.
pub fn heavy_compute() -> Box<dyn Routine> {
    Box::new(Steady::new(RawBodies::spawn(crate::HEAVY), RawBodies::heavy_step))
}

/// Runs the three swaps.
pub fn schedule() -> Box<dyn Routine> {
    Box::new(Steady::new(RawSchedule::new(crate::SCHEDULE_PER_ARCHETYPE), RawSchedule::run))
}

/// Runs the three swaps as one `for` loop each, `ab` over its four tables
/// in one sequence.
pub fn schedule_for() -> Box<dyn Routine> {
    Box::new(Steady::new(RawSchedule::new(crate::SCHEDULE_PER_ARCHETYPE), RawSchedule::run_for))
}

/// Moves 10,000 rows to the `(A, B)` table and back.
pub fn add_remove() -> Box<dyn Routine> {
    Box::new(Steady::new(RawTables::new(crate::N), RawTables::add_remove_all))
}

/// Steps `n` movers.
pub fn iter_movers(n: usize) -> Box<dyn Routine> {
    Box::new(Steady::new(RawMovers::spawn(n), RawMovers::step))
}

/// Pushes a million movers into fresh `Vec`s.
pub fn spawn_big() -> Box<dyn Routine> {
    Box::new(Build::new(|| RawMovers::spawn(crate::SPAWN_BIG)))
}

/// Steps the 1,000 movers of the matching tables.
pub fn sparse_query() -> Box<dyn Routine> {
    Box::new(Steady::new(sparse_tables(), |tables| tables.iter_mut().for_each(RawMovers::step)))
}
