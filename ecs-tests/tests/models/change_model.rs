//! Model-based property test of change detection: random sequences of
//! spawns, inserts, removals, despawns, writes, reads, bypassed writes and
//! tick jumps across the `u32` wrap, with three readers (one `Added`, two
//! `Changed` query states) that look at random moments. A naive model keeps,
//! per reader, the set of entities it has not seen an addition or change of
//! yet; every look must return exactly that set.
//!
//! `PROPTEST_CASES=N` sets the number of sequences (default 256).

use std::collections::BTreeSet;

use archetable::prelude::*;
use proptest::prelude::*;

#[derive(Component, Debug, Clone, Copy, PartialEq)]
#[component(track_changes)]
struct Hp(u32);

#[derive(Component, Debug, Clone, Copy, PartialEq)]
struct Tag;

#[derive(Debug, Clone)]
enum Op {
    /// Spawn with `Hp` or with only `Tag`.
    Spawn {
        hp: bool,
    },
    /// Insert an `Hp` into the `n`-th live entity (addition or overwrite).
    Insert(usize),
    Remove(usize),
    Despawn(usize),
    /// Write through `get_mut`.
    Write(usize),
    /// Read through `get_mut` without writing.
    Read(usize),
    /// Write with `bypass_change_detection`.
    Bypass(usize),
    /// Write every `Hp` through a one-off mutable query.
    WriteAll,
    /// Jump the world's tick ahead, then clamp stored ticks.
    Advance(u32),
    /// Reader `r` looks.
    Look(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => any::<bool>().prop_map(|hp| Op::Spawn { hp }),
        4 => (0usize..16).prop_map(Op::Insert),
        3 => (0usize..16).prop_map(Op::Remove),
        3 => (0usize..16).prop_map(Op::Despawn),
        4 => (0usize..16).prop_map(Op::Write),
        2 => (0usize..16).prop_map(Op::Read),
        2 => (0usize..16).prop_map(Op::Bypass),
        1 => Just(Op::WriteAll),
        2 => (1u32..(1 << 24)).prop_map(Op::Advance),
        6 => (0usize..3).prop_map(Op::Look),
    ]
}

/// What each reader has not seen yet.
#[derive(Default)]
struct Model {
    live: Vec<Entity>,
    /// Reader 0 watches additions, readers 1 and 2 changes.
    unseen: [BTreeSet<Entity>; 3],
}

impl Model {
    fn added(&mut self, e: Entity) {
        for set in &mut self.unseen {
            set.insert(e);
        }
    }

    fn changed(&mut self, e: Entity) {
        self.unseen[1].insert(e);
        self.unseen[2].insert(e);
    }

    /// The entity can no longer match: forget it everywhere.
    fn gone(&mut self, e: Entity) {
        for set in &mut self.unseen {
            set.remove(&e);
        }
    }
}

fn run(ops: &[Op]) -> Result<(), TestCaseError> {
    let mut world = World::new();
    // Start close to the wrap, so most sequences cross it.
    world.advance_change_tick(u32::MAX - 64);
    let mut added = QueryState::<Entity, Added<Hp>>::new(&mut world);
    let mut changed = [QueryState::<Entity, Changed<Hp>>::new(&mut world), QueryState::new(&mut world)];
    let mut model = Model::default();
    let pick = |model: &Model, n: usize| (!model.live.is_empty()).then(|| model.live[n % model.live.len()]);
    for (step, op) in ops.iter().enumerate() {
        match *op {
            Op::Spawn { hp } => {
                let e = if hp { world.spawn((Hp(0), Tag)) } else { world.spawn(Tag) };
                model.live.push(e);
                if hp {
                    model.added(e);
                }
            }
            Op::Insert(n) => {
                let Some(e) = pick(&model, n) else { continue };
                let had = world.has::<Hp>(e);
                world.insert(e, Hp(7)).unwrap();
                if had {
                    model.changed(e);
                } else {
                    model.added(e);
                }
            }
            Op::Remove(n) => {
                let Some(e) = pick(&model, n) else { continue };
                if world.remove::<Hp>(e).is_ok() {
                    model.gone(e);
                }
            }
            Op::Despawn(n) => {
                let Some(e) = pick(&model, n) else { continue };
                world.despawn(e).unwrap();
                model.live.retain(|&x| x != e);
                model.gone(e);
            }
            Op::Write(n) => {
                let Some(e) = pick(&model, n) else { continue };
                if let Some(mut hp) = world.get_mut::<Hp>(e) {
                    hp.0 += 1;
                    model.changed(e);
                }
            }
            Op::Read(n) => {
                let Some(e) = pick(&model, n) else { continue };
                if let Some(hp) = world.get_mut::<Hp>(e) {
                    let _ = hp.0;
                }
            }
            Op::Bypass(n) => {
                let Some(e) = pick(&model, n) else { continue };
                if let Some(mut hp) = world.get_mut::<Hp>(e) {
                    hp.bypass_change_detection().0 += 1;
                }
            }
            Op::WriteAll => {
                for mut hp in world.query_mut::<&mut Hp>() {
                    hp.0 += 1;
                }
                let with_hp: Vec<Entity> = model.live.iter().copied().filter(|&e| world.has::<Hp>(e)).collect();
                for e in with_hp {
                    model.changed(e);
                }
            }
            Op::Advance(ticks) => {
                world.advance_change_tick(ticks);
                world.check_change_ticks();
            }
            Op::Look(r) => {
                let seen: BTreeSet<Entity> = match r {
                    0 => added.iter(&world).collect(),
                    _ => changed[r - 1].iter(&world).collect(),
                };
                let expected = std::mem::take(&mut model.unseen[r]);
                prop_assert_eq!(&seen, &expected, "reader {} at step {} ({:?})", r, step, op);
            }
        }
        prop_assert!(world.check_invariants().is_ok(), "{:?}", world.check_invariants());
    }
    // A final look by every reader.
    prop_assert_eq!(added.iter(&world).collect::<BTreeSet<_>>(), std::mem::take(&mut model.unseen[0]));
    for (i, state) in changed.iter_mut().enumerate() {
        prop_assert_eq!(state.iter(&world).collect::<BTreeSet<_>>(), std::mem::take(&mut model.unseen[i + 1]));
    }
    Ok(())
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(256)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn every_reader_sees_exactly_what_it_has_not_seen(ops in prop::collection::vec(op(), 1..120)) {
        run(&ops)?;
    }
}
