//! Model-based test: a long deterministic pseudo-random sequence of world
//! operations, mirrored in a plain `BTreeMap` model, with the world checked
//! against the model (values, entity sets, query results, drop counts).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use ecs::prelude::*;

/// A small deterministic generator (SplitMix64), so the test needs no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

#[derive(Component, Debug, Clone, Copy, PartialEq)]
struct A(u32);

/// Heap-owning and drop-counted.
#[derive(Component, Debug)]
struct B {
    text: String,
    drops: Arc<AtomicUsize>,
}

impl Drop for B {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
    }
}

#[derive(Component, Debug, Clone, Copy, PartialEq)]
struct C;

#[derive(Component, Debug, Clone, Copy, PartialEq)]
#[repr(align(32))]
struct D(u64);

#[derive(Debug, Clone, Default, PartialEq)]
struct Row {
    a: Option<u32>,
    b: Option<String>,
    c: bool,
    d: Option<u64>,
}

struct Harness {
    world: World,
    model: BTreeMap<Entity, Row>,
    dead: Vec<Entity>,
    drops: Arc<AtomicUsize>,
    b_created: usize,
    b_outside: usize,
    rng: Rng,
}

impl Harness {
    fn b(&mut self, text: String) -> B {
        self.b_created += 1;
        B { text, drops: Arc::clone(&self.drops) }
    }

    fn random_row(&mut self) -> Row {
        let n = self.rng.next();
        Row {
            a: (n & 1 != 0).then_some((n >> 8) as u32),
            b: (n & 2 != 0).then(|| format!("b{}", n >> 40)),
            c: n & 4 != 0,
            d: (n & 8 != 0).then_some(n >> 20),
        }
    }

    fn pick_alive(&mut self) -> Option<Entity> {
        if self.model.is_empty() {
            return None;
        }
        let k = self.rng.below(self.model.len());
        self.model.keys().nth(k).copied()
    }

    /// Inserts the components present in `row` into `e` (overwriting).
    fn insert_row(&mut self, e: Entity, row: &Row) {
        if let Some(a) = row.a {
            self.world.insert(e, (A(a),)).unwrap();
        }
        if let Some(text) = &row.b {
            let b = self.b(text.clone());
            self.world.insert(e, (b,)).unwrap();
        }
        if row.c {
            self.world.insert(e, (C,)).unwrap();
        }
        if let Some(d) = row.d {
            self.world.insert(e, D(d)).unwrap();
        }
    }

    fn step(&mut self) {
        match self.rng.below(100) {
            0..=29 => {
                let row = self.random_row();
                let e = self.world.spawn(());
                self.insert_row(e, &row);
                self.model.insert(e, row);
            }
            30..=34 => {
                // Spawn a whole tuple at once.
                let a = self.rng.next() as u32;
                let d = self.rng.next();
                let b = self.b(format!("t{a}"));
                let e = self.world.spawn((D(d), b, A(a)));
                self.model.insert(e, Row { a: Some(a), b: Some(format!("t{a}")), c: false, d: Some(d) });
            }
            35..=49 => {
                if let Some(e) = self.pick_alive() {
                    self.world.despawn(e).unwrap();
                    self.model.remove(&e);
                    self.dead.push(e);
                }
            }
            50..=64 => {
                if let Some(e) = self.pick_alive() {
                    let add = self.random_row();
                    self.insert_row(e, &add);
                    let row = self.model.get_mut(&e).unwrap();
                    row.a = add.a.or(row.a);
                    row.b = add.b.or(row.b.take());
                    row.c |= add.c;
                    row.d = add.d.or(row.d);
                }
            }
            65..=79 => {
                if let Some(e) = self.pick_alive() {
                    let row = self.model[&e].clone();
                    match self.rng.below(4) {
                        0 => match self.world.remove::<A>(e) {
                            Ok(a) => assert_eq!(Some(a.0), row.a),
                            Err(err) => {
                                assert!(row.a.is_none());
                                assert!(matches!(
                                    err,
                                    ComponentError::MissingComponent { entity, .. } if entity == e
                                ));
                            }
                        },
                        1 => match self.world.remove::<B>(e) {
                            Ok(b) => {
                                assert_eq!(Some(&b.text), row.b.as_ref());
                                self.b_outside += 1;
                                drop(b);
                            }
                            Err(_) => assert!(row.b.is_none()),
                        },
                        2 => match self.world.remove::<(C, D)>(e) {
                            Ok((_, d)) => {
                                assert!(row.c);
                                assert_eq!(Some(d.0), row.d);
                            }
                            Err(_) => assert!(!row.c || row.d.is_none()),
                        },
                        _ => match self.world.remove::<(B, A)>(e) {
                            Ok((b, a)) => {
                                assert_eq!(Some(&b.text), row.b.as_ref());
                                assert_eq!(Some(a.0), row.a);
                                self.b_outside += 1;
                            }
                            Err(_) => assert!(row.a.is_none() || row.b.is_none()),
                        },
                    }
                    // Re-read what is left from the world into the model.
                    let left = Row {
                        a: self.world.get::<A>(e).map(|a| a.0),
                        b: self.world.get::<B>(e).map(|b| b.text.clone()),
                        c: self.world.has::<C>(e),
                        d: self.world.get::<D>(e).map(|d| d.0),
                    };
                    let m = self.model.get_mut(&e).unwrap();
                    // Only removals happened: every field left must match the old one.
                    if left.a.is_some() {
                        assert_eq!(left.a, m.a);
                    }
                    if left.b.is_some() {
                        assert_eq!(left.b, m.b);
                    }
                    if left.c {
                        assert!(m.c);
                    }
                    if left.d.is_some() {
                        assert_eq!(left.d, m.d);
                    }
                    *m = left;
                }
            }
            80..=89 => {
                // Mutate through a query.
                let k = self.rng.next() as u32;
                for (e, mut a) in self.world.query_filtered_mut::<(Entity, &mut A), With<C>>() {
                    a.0 = a.0.wrapping_add(k);
                    let row = self.model.get_mut(&e).unwrap();
                    row.a = Some(row.a.unwrap().wrapping_add(k));
                }
            }
            90..=95 => {
                if let Some(e) = self.pick_alive() {
                    if let Some(mut d) = self.world.get_mut::<D>(e) {
                        d.0 ^= 0xFF;
                        let row = self.model.get_mut(&e).unwrap();
                        row.d = Some(row.d.unwrap() ^ 0xFF);
                    } else {
                        assert!(self.model[&e].d.is_none());
                    }
                }
            }
            96..=98 => {
                let n = self.rng.below(20);
                let base = self.rng.next() as u32;
                let es: Vec<Entity> =
                    self.world.spawn_batch((0..n as u32).map(|i| (A(base.wrapping_add(i)), C))).collect();
                for (i, e) in es.into_iter().enumerate() {
                    self.model.insert(e, Row { a: Some(base.wrapping_add(i as u32)), c: true, ..Row::default() });
                }
            }
            _ => {
                if self.rng.chance(20) {
                    self.world.clear();
                    self.dead.extend(self.model.keys().copied());
                    self.model.clear();
                }
            }
        }
    }

    fn check(&self) {
        let world = &self.world;
        if let Err(e) = world.check_invariants() {
            panic!("world invariants broken: {e}");
        }
        assert_eq!(world.len(), self.model.len());
        assert_eq!(world.is_empty(), self.model.is_empty());

        // Every live entity reads back exactly.
        for (&e, row) in &self.model {
            assert!(world.contains(e));
            assert_eq!(world.get::<A>(e).map(|a| a.0), row.a, "{e}");
            assert_eq!(world.get::<B>(e).map(|b| b.text.clone()), row.b, "{e}");
            assert_eq!(world.has::<C>(e), row.c, "{e}");
            assert_eq!(world.get::<D>(e).map(|d| d.0), row.d, "{e}");
            if let Some(d) = world.get::<D>(e) {
                assert_eq!(d as *const D as usize % 32, 0);
            }
            let n = world.entity(e).unwrap().component_names().count();
            let want = row.a.is_some() as usize + row.b.is_some() as usize + row.c as usize + row.d.is_some() as usize;
            assert_eq!(n, want);
        }
        // Every dead handle is dead.
        for &e in &self.dead {
            assert!(!world.contains(e));
            assert!(world.get::<A>(e).is_none());
            assert!(world.entity(e).is_none());
        }

        // A full query reproduces the model.
        let got: BTreeMap<Entity, Row> = world
            .query::<(Entity, Option<&A>, Option<&B>, Option<&C>, Option<&D>)>()
            .map(|(e, a, b, c, d)| {
                (e, Row { a: a.map(|a| a.0), b: b.map(|b| b.text.clone()), c: c.is_some(), d: d.map(|d| d.0) })
            })
            .collect();
        assert_eq!(got, self.model);

        // Filtered queries give exact sets.
        let with_a_without_c: BTreeSet<Entity> = world.query_filtered::<Entity, (With<A>, Without<C>)>().collect();
        let want: BTreeSet<Entity> =
            self.model.iter().filter(|(_, r)| r.a.is_some() && !r.c).map(|(e, _)| *e).collect();
        assert_eq!(with_a_without_c, want);
        let b_or_d: BTreeSet<Entity> = world.query_filtered::<Entity, Or<(With<B>, With<D>)>>().collect();
        let want: BTreeSet<Entity> =
            self.model.iter().filter(|(_, r)| r.b.is_some() || r.d.is_some()).map(|(e, _)| *e).collect();
        assert_eq!(b_or_d, want);
        let sum_fold = world.query::<&A>().fold(0u64, |s, a| s + u64::from(a.0));
        let sum_model: u64 = self.model.values().filter_map(|r| r.a).map(u64::from).sum();
        assert_eq!(sum_fold, sum_model);
        assert_eq!(
            world.query::<(&B, &A)>().count(),
            self.model.values().filter(|r| r.a.is_some() && r.b.is_some()).count()
        );

        // Every B value ever created is either alive in the world or dropped once.
        let alive_b = self.model.values().filter(|r| r.b.is_some()).count();
        assert_eq!(
            self.drops.load(Ordering::SeqCst),
            self.b_created - alive_b,
            "B values dropped (created {}, alive {alive_b}, returned by remove {})",
            self.b_created,
            self.b_outside
        );
    }
}

fn run(seed: u64, steps: usize) {
    let drops = Arc::new(AtomicUsize::new(0));
    let mut h = Harness {
        world: World::new(),
        model: BTreeMap::new(),
        dead: Vec::new(),
        drops: Arc::clone(&drops),
        b_created: 0,
        b_outside: 0,
        rng: Rng(seed),
    };
    for i in 0..steps {
        h.step();
        if i % 25 == 0 {
            h.check();
        }
    }
    h.check();
    let created = h.b_created;
    drop(h);
    assert_eq!(drops.load(Ordering::SeqCst), created, "seed {seed}");
}

#[test]
fn random_operations_match_model_seed_1() {
    run(1, 2_000);
}

#[test]
fn random_operations_match_model_seed_2() {
    run(0xDEAD_BEEF, 2_000);
}

#[test]
fn random_operations_match_model_seed_3() {
    run(42, 2_000);
}
