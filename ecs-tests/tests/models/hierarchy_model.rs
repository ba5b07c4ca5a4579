//! Model-based property test of the relationship lists (`ChildOf` /
//! `Children` and a user pair, `CrewOf` / `Crew`) against misbehaving
//! users: random sequences of links, unlinks, despawns, wide parents,
//! `all_or_nothing` rollbacks, links to the entity itself or below it
//! (refused: the value they replaced comes back), target lists inserted by
//! hand (undone), and steps during which one user hook or
//! observer of either relationship panics. A naive model (a map from
//! source to target and a `Vec` per target, in join order) predicts every
//! step that does not panic exactly; after a step that panics, the world
//! must still pass `check_invariants`, may only have lost the entities the
//! step could remove, and each entity that stays points at its old target,
//! its new one, or none; the model then takes the world's state. After
//! every step the model and the world are compared entity by entity.
//!
//! `PROPTEST_CASES=N` sets the number of sequences (default 96 here).

use std::cell::Cell;
use std::collections::{HashMap, HashSet};
use std::panic::{catch_unwind, AssertUnwindSafe};

use archetable::prelude::*;
use proptest::prelude::*;

/// A user relationship, kept by the same engine hooks as `ChildOf`.
#[derive(Component, Debug, PartialEq, Clone, Copy)]
#[component(relationship(target = Crew))]
struct CrewOf(Entity);

/// The list `CrewOf` keeps.
#[derive(Component, Debug)]
#[component(relationship_target(source = CrewOf))]
struct Crew(SourceList);

/// Which user hook or observer panics during a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Trap {
    /// `ChildOf`'s `on_add` hook.
    ChildHookAdd = 1,
    /// `ChildOf`'s `on_remove` hook.
    ChildHookRemove,
    /// An `OnAdd<ChildOf>` observer.
    ChildObserverAdd,
    /// An `OnRemove<ChildOf>` observer.
    ChildObserverRemove,
    /// `CrewOf`'s `on_add` hook.
    CrewHookAdd,
    /// An `OnRemove<CrewOf>` observer.
    CrewObserverRemove,
}

thread_local! {
    /// The trap armed for the current step (0: none); per thread, as the
    /// tests run side by side.
    static ARMED: Cell<u8> = const { Cell::new(0) };
}

fn spring(trap: Trap) {
    if ARMED.get() == trap as u8 {
        panic!("{trap:?} sprung");
    }
}

/// One step inside a rollback; entity picks name entities alive before it.
#[derive(Clone, Debug)]
enum TxOp {
    /// A new child of an old parent.
    SpawnUnder(u8),
    /// An old entity moved under a new parent.
    AdoptUnderNew(u8),
    /// An old entity moved into a new crew.
    CrewUnderNew(u8),
    /// A new entity with no links.
    SpawnNew,
}

#[derive(Clone, Debug)]
enum Op {
    Spawn,
    SpawnChild(u8),
    /// `n` children of one parent, so lists pass the index threshold.
    SpawnWide(u8, u8),
    SetParent(u8, u8),
    RemoveParent(u8),
    Despawn(u8),
    DespawnRecursive(u8),
    JoinCrew(u8, u8),
    LeaveCrew(u8),
    /// `ChildOf` inserted by `World::insert`, with no check first.
    InsertParent(u8, u8),
    /// `ChildOf` pointing at the entity itself or at one of its
    /// descendants (the `n`th, wrapping), always refused.
    InsertParentBelow(u8, u8),
    /// An empty `Children` list inserted by hand.
    HandChildren(u8),
    /// On the first entity, a copy of the second's `Crew` list (or an
    /// empty one), inserted by hand.
    HandCrew(u8, u8),
    /// `all_or_nothing` over the steps, failing at the end (with an error,
    /// or a panic when `panics`).
    Rollback(Vec<TxOp>, bool),
    /// The op with a trap armed.
    Trapped(Trap, Box<Op>),
}

/// One relationship: source to target, and each target's list.
#[derive(Clone, Default, Debug)]
struct Rel {
    up: HashMap<Entity, Entity>,
    lists: HashMap<Entity, Vec<Entity>>,
}

impl Rel {
    fn unlink(&mut self, source: Entity) {
        if let Some(target) = self.up.remove(&source) {
            let list = self.lists.get_mut(&target).unwrap();
            list.retain(|&e| e != source);
            if list.is_empty() {
                self.lists.remove(&target);
            }
        }
    }

    fn link(&mut self, source: Entity, target: Entity) {
        self.unlink(source);
        self.up.insert(source, target);
        self.lists.entry(target).or_default().push(source);
    }

    /// Whether walking up from `from` reaches `to`.
    fn reaches(&self, mut from: Entity, to: Entity) -> bool {
        loop {
            if from == to {
                return true;
            }
            match self.up.get(&from) {
                Some(&next) => from = next,
                None => return false,
            }
        }
    }

    /// Forgets `gone` (despawned): its link, and the links to it.
    fn forget(&mut self, gone: Entity) {
        self.unlink(gone);
        for source in self.lists.remove(&gone).unwrap_or_default() {
            self.up.remove(&source);
        }
    }

    fn descendants(&self, entity: Entity, out: &mut Vec<Entity>) {
        for &child in self.lists.get(&entity).map(Vec::as_slice).unwrap_or(&[]) {
            out.push(child);
            self.descendants(child, out);
        }
    }
}

#[derive(Clone, Default, Debug)]
struct Model {
    alive: Vec<Entity>,
    child_of: Rel,
    crew_of: Rel,
}

impl Model {
    fn pick(&self, i: u8) -> Option<Entity> {
        (!self.alive.is_empty()).then(|| self.alive[i as usize % self.alive.len()])
    }

    fn despawn(&mut self, gone: Entity) {
        self.alive.retain(|&e| e != gone);
        self.child_of.forget(gone);
        self.crew_of.forget(gone);
    }

    /// Inserting a relationship: refused when the target is the source or
    /// below it, which leaves the link it replaced (or none) as it was,
    /// the source in its place in its target's list.
    fn insert(rel: &mut Rel, source: Entity, target: Entity) {
        if !rel.reaches(target, source) {
            rel.link(source, target);
        }
    }

    /// The model read back from the world.
    fn of_world(world: &World) -> Model {
        let mut alive: Vec<Entity> = world.query::<Entity>().collect();
        alive.sort_unstable();
        let mut model = Model { alive, ..Model::default() };
        for (e, c) in world.query::<(Entity, &ChildOf)>() {
            model.child_of.up.insert(e, c.0);
        }
        for (e, c) in world.query::<(Entity, &Children)>() {
            model.child_of.lists.insert(e, c.to_vec());
        }
        for (e, c) in world.query::<(Entity, &CrewOf)>() {
            model.crew_of.up.insert(e, c.0);
        }
        for (e, c) in world.query::<(Entity, &Crew)>() {
            model.crew_of.lists.insert(e, c.0.to_vec());
        }
        model
    }
}

fn new_world() -> World {
    let mut world = World::new();
    world.register_component_hooks::<ChildOf>().on_add(|_, _| spring(Trap::ChildHookAdd));
    world.register_component_hooks::<ChildOf>().on_remove(|_, _| spring(Trap::ChildHookRemove));
    world.register_component_hooks::<CrewOf>().on_add(|_, _| spring(Trap::CrewHookAdd));
    world.observe(|_: Trigger<OnAdd<ChildOf>>| spring(Trap::ChildObserverAdd));
    world.observe(|_: Trigger<OnRemove<ChildOf>>| spring(Trap::ChildObserverRemove));
    world.observe(|_: Trigger<OnRemove<CrewOf>>| spring(Trap::CrewObserverRemove));
    world
}

/// Runs `op` on the world and the model alike; returns what the step may
/// have despawned had it panicked.
fn apply(world: &mut World, model: &mut Model, op: &Op) -> Vec<Entity> {
    match *op {
        Op::Spawn => {
            model.alive.push(world.spawn(()));
            vec![]
        }
        Op::SpawnChild(p) => {
            let Some(parent) = model.pick(p) else { return vec![] };
            let child = world.spawn(ChildOf(parent));
            model.alive.push(child);
            model.child_of.link(child, parent);
            vec![]
        }
        Op::SpawnWide(p, n) => {
            let Some(parent) = model.pick(p) else { return vec![] };
            for _ in 0..n {
                let child = world.spawn(ChildOf(parent));
                model.alive.push(child);
                model.child_of.link(child, parent);
            }
            vec![]
        }
        Op::SetParent(c, p) => {
            let (Some(child), Some(parent)) = (model.pick(c), model.pick(p)) else { return vec![] };
            let expected = if child == parent {
                Err(HierarchyError::OwnParent(child))
            } else if model.child_of.reaches(parent, child) {
                Err(HierarchyError::Cycle { child, parent })
            } else {
                model.child_of.link(child, parent);
                Ok(())
            };
            assert_eq!(world.set_parent(child, parent), expected);
            vec![]
        }
        Op::RemoveParent(c) => {
            let Some(child) = model.pick(c) else { return vec![] };
            let expected = model.child_of.up.get(&child).copied();
            model.child_of.unlink(child);
            assert_eq!(world.remove_parent(child), Ok(expected));
            vec![]
        }
        Op::Despawn(e) => {
            let Some(gone) = model.pick(e) else { return vec![] };
            model.despawn(gone);
            world.despawn(gone).unwrap();
            vec![gone]
        }
        Op::DespawnRecursive(e) => {
            let Some(top) = model.pick(e) else { return vec![] };
            let mut going = vec![top];
            model.child_of.descendants(top, &mut going);
            for &gone in &going {
                model.despawn(gone);
            }
            assert_eq!(world.despawn_recursive(top), Ok(going.len()));
            going
        }
        Op::JoinCrew(s, t) => {
            let (Some(source), Some(target)) = (model.pick(s), model.pick(t)) else { return vec![] };
            Model::insert(&mut model.crew_of, source, target);
            world.insert(source, CrewOf(target)).unwrap();
            vec![]
        }
        Op::LeaveCrew(s) => {
            let Some(source) = model.pick(s) else { return vec![] };
            let had = model.crew_of.up.get(&source).copied();
            model.crew_of.unlink(source);
            assert_eq!(world.remove::<CrewOf>(source).ok().map(|c| c.0), had);
            vec![]
        }
        Op::InsertParent(c, p) => {
            let (Some(child), Some(parent)) = (model.pick(c), model.pick(p)) else { return vec![] };
            Model::insert(&mut model.child_of, child, parent);
            world.insert(child, ChildOf(parent)).unwrap();
            vec![]
        }
        Op::InsertParentBelow(c, n) => {
            let Some(child) = model.pick(c) else { return vec![] };
            let mut below = vec![child];
            model.child_of.descendants(child, &mut below);
            let target = below[n as usize % below.len()];
            // Refused: the model does not change.
            world.insert(child, ChildOf(target)).unwrap();
            vec![]
        }
        Op::HandChildren(t) => {
            let Some(target) = model.pick(t) else { return vec![] };
            world.insert(target, Children::default()).unwrap();
            vec![]
        }
        Op::HandCrew(t, from) => {
            let (Some(target), Some(from)) = (model.pick(t), model.pick(from)) else { return vec![] };
            let copy = world.get::<Crew>(from).map(|crew| crew.0.clone()).unwrap_or_default();
            world.insert(target, Crew(copy)).unwrap();
            vec![]
        }
        Op::Rollback(ref steps, panics) => {
            let old = model.alive.clone();
            let pick = |i: u8| (!old.is_empty()).then(|| old[i as usize % old.len()]);
            let before = model.clone();
            let run = |world: &mut World| -> Result<(), ()> {
                for step in steps {
                    match *step {
                        TxOp::SpawnUnder(p) => {
                            if let Some(parent) = pick(p) {
                                world.spawn(ChildOf(parent));
                            }
                        }
                        TxOp::AdoptUnderNew(c) => {
                            if let Some(child) = pick(c) {
                                let parent = world.spawn(());
                                world.set_parent(child, parent).unwrap();
                            }
                        }
                        TxOp::CrewUnderNew(c) => {
                            if let Some(source) = pick(c) {
                                let target = world.spawn(());
                                world.insert(source, CrewOf(target)).unwrap();
                            }
                        }
                        TxOp::SpawnNew => {
                            world.spawn(());
                        }
                    }
                }
                if panics {
                    panic!("the step fails");
                }
                Err(())
            };
            let len = world.len();
            if panics {
                assert!(catch_unwind(AssertUnwindSafe(|| world.all_or_nothing(run))).is_err());
            } else {
                assert_eq!(world.all_or_nothing(run), Err(()));
            }
            assert_eq!(world.len(), len, "every new entity taken back, no old one lost");
            // Each old entity moved under a new one is back with its old
            // target, where it was in its list.
            let mut moved: [HashSet<Entity>; 2] = Default::default();
            for step in steps {
                match *step {
                    TxOp::AdoptUnderNew(c) => moved[0].extend(pick(c)),
                    TxOp::CrewUnderNew(c) => moved[1].extend(pick(c)),
                    _ => {}
                }
            }
            let got = Model::of_world(world);
            for (k, (rel, got_rel)) in
                [(&before.child_of, &got.child_of), (&before.crew_of, &got.crew_of)].into_iter().enumerate()
            {
                assert_eq!(rel.up, got_rel.up, "rollback: every old link back");
                for (target, list) in &rel.lists {
                    let got_list = &got_rel.lists[target];
                    assert_eq!(
                        got_list,
                        list,
                        "rollback: every list as it was, order included ({} moved)",
                        moved[k].len()
                    );
                }
                assert_eq!(rel.lists.len(), got_rel.lists.len());
            }
            *model = got;
            vec![]
        }
        Op::Trapped(..) => unreachable!("handled by the caller"),
    }
}

/// The entities a step touches (and their old and new targets).
fn touched(model: &Model, op: &Op) -> Vec<Entity> {
    let picks: Vec<u8> = match *op {
        Op::SetParent(a, b) | Op::JoinCrew(a, b) | Op::InsertParent(a, b) | Op::HandCrew(a, b) => vec![a, b],
        Op::RemoveParent(a)
        | Op::Despawn(a)
        | Op::DespawnRecursive(a)
        | Op::LeaveCrew(a)
        | Op::InsertParentBelow(a, _)
        | Op::HandChildren(a) => vec![a],
        _ => vec![],
    };
    picks.into_iter().filter_map(|i| model.pick(i)).collect()
}

fn compare(world: &World, model: &Model, step: usize) {
    world.check_invariants().unwrap_or_else(|problem| panic!("step {step}: {problem}"));
    let got = Model::of_world(world);
    let mut alive = model.alive.clone();
    alive.sort_unstable();
    assert_eq!(got.alive, alive, "step {step}: the live entities");
    assert_eq!(got.child_of.up, model.child_of.up, "step {step}: ChildOf");
    assert_eq!(got.child_of.lists, model.child_of.lists, "step {step}: Children");
    assert_eq!(got.crew_of.up, model.crew_of.up, "step {step}: CrewOf");
    assert_eq!(got.crew_of.lists, model.crew_of.lists, "step {step}: Crew");
    for &e in &model.alive {
        assert_eq!(world.children(e), model.child_of.lists.get(&e).cloned().unwrap_or_default(), "step {step}");
        assert_eq!(world.parent(e), model.child_of.up.get(&e).copied(), "step {step}");
    }
}

fn run(ops: &[Op]) {
    let mut world = new_world();
    let mut model = Model::default();
    for (step, op) in ops.iter().enumerate() {
        match op {
            Op::Trapped(trap, inner) => {
                let before = model.clone();
                let mut predicted = model.clone();
                ARMED.set(*trap as u8);
                let outcome = catch_unwind(AssertUnwindSafe(|| apply(&mut world, &mut predicted, inner)));
                ARMED.set(0);
                match outcome {
                    Ok(_) => model = predicted,
                    Err(_) => {
                        // The world is whole; what it kept is the step done,
                        // not done, or (for links) cut.
                        world.check_invariants().unwrap_or_else(|problem| panic!("step {step}: {problem}"));
                        let got = Model::of_world(&world);
                        let mut may_go: HashSet<Entity> = before.alive.iter().copied().collect();
                        may_go.retain(|e| !predicted.alive.contains(e));
                        for e in &before.alive {
                            assert!(got.alive.binary_search(e).is_ok() || may_go.contains(e), "step {step}: {e} lost");
                        }
                        for e in touched(&before, inner) {
                            if got.alive.binary_search(&e).is_err() {
                                continue;
                            }
                            for (was, will, now) in [
                                (&before.child_of, &predicted.child_of, &got.child_of),
                                (&before.crew_of, &predicted.crew_of, &got.crew_of),
                            ] {
                                let now = now.up.get(&e);
                                assert!(
                                    now.is_none() || now == was.up.get(&e) || now == will.up.get(&e),
                                    "step {step}: {e} points at {now:?}"
                                );
                            }
                        }
                        model = got;
                    }
                }
            }
            _ => {
                apply(&mut world, &mut model, op);
            }
        }
        compare(&world, &model, step);
    }
}

fn trap() -> impl Strategy<Value = Trap> {
    prop_oneof![
        Just(Trap::ChildHookAdd),
        Just(Trap::ChildHookRemove),
        Just(Trap::ChildObserverAdd),
        Just(Trap::ChildObserverRemove),
        Just(Trap::CrewHookAdd),
        Just(Trap::CrewObserverRemove),
    ]
}

fn tx_op() -> impl Strategy<Value = TxOp> {
    prop_oneof![
        any::<u8>().prop_map(TxOp::SpawnUnder),
        any::<u8>().prop_map(TxOp::AdoptUnderNew),
        any::<u8>().prop_map(TxOp::CrewUnderNew),
        Just(TxOp::SpawnNew),
    ]
}

fn plain_op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => Just(Op::Spawn),
        6 => any::<u8>().prop_map(Op::SpawnChild),
        1 => (any::<u8>(), 20u8..80).prop_map(|(p, n)| Op::SpawnWide(p, n)),
        6 => (any::<u8>(), any::<u8>()).prop_map(|(c, p)| Op::SetParent(c, p)),
        2 => any::<u8>().prop_map(Op::RemoveParent),
        4 => any::<u8>().prop_map(Op::Despawn),
        2 => any::<u8>().prop_map(Op::DespawnRecursive),
        3 => (any::<u8>(), any::<u8>()).prop_map(|(s, t)| Op::JoinCrew(s, t)),
        1 => any::<u8>().prop_map(Op::LeaveCrew),
        3 => (any::<u8>(), any::<u8>()).prop_map(|(c, p)| Op::InsertParent(c, p)),
        2 => (any::<u8>(), any::<u8>()).prop_map(|(c, n)| Op::InsertParentBelow(c, n)),
        1 => any::<u8>().prop_map(Op::HandChildren),
        1 => (any::<u8>(), any::<u8>()).prop_map(|(t, from)| Op::HandCrew(t, from)),
        2 => (prop::collection::vec(tx_op(), 1..6), any::<bool>()).prop_map(|(steps, panics)| Op::Rollback(steps, panics)),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => plain_op(),
        1 => (trap(), plain_op()).prop_map(|(trap, op)| Op::Trapped(trap, Box::new(op))),
    ]
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(96)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn relationship_lists_match_the_model(ops in prop::collection::vec(op(), 1..48)) {
        run(&ops);
    }
}

/// Every kind of step once, with each trap, so a broken harness shows even
/// if the random cases miss one.
#[test]
fn every_step_and_trap_once() {
    let base = vec![
        Op::Spawn,
        Op::Spawn,
        Op::SpawnWide(0, 40),
        Op::SpawnChild(1),
        Op::SetParent(3, 1),
        Op::JoinCrew(4, 0),
        Op::JoinCrew(5, 0),
        Op::Rollback(vec![TxOp::SpawnUnder(0), TxOp::AdoptUnderNew(3), TxOp::CrewUnderNew(4), TxOp::SpawnNew], false),
        Op::Rollback(vec![TxOp::AdoptUnderNew(5), TxOp::AdoptUnderNew(6)], true),
        Op::RemoveParent(7),
        Op::Despawn(9),
        Op::LeaveCrew(5),
        Op::InsertParent(3, 1),
        Op::InsertParent(1, 3),
        Op::InsertParentBelow(1, 0),
        Op::InsertParentBelow(0, 7),
        Op::HandChildren(0),
        Op::HandChildren(9),
        Op::HandCrew(0, 0),
        Op::HandCrew(9, 0),
        Op::DespawnRecursive(1),
    ];
    let mut ops = base.clone();
    for trap in [
        Trap::ChildHookAdd,
        Trap::ChildHookRemove,
        Trap::ChildObserverAdd,
        Trap::ChildObserverRemove,
        Trap::CrewHookAdd,
        Trap::CrewObserverRemove,
    ] {
        for op in &base {
            ops.push(Op::Trapped(trap, Box::new(op.clone())));
        }
    }
    run(&ops);
}
