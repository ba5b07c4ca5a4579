//! The model-based harness shared by the property test (`tests/model.rs`)
//! and the fuzz target (`fuzz/fuzz_targets/model.rs`, which includes this
//! file with `#[path]`).
//!
//! A test is a sequence of [`Op`]s. [`run`] applies each to a `World` and to
//! a naive model (a map from entity handle to a map from component kind to
//! value, the parent of each child and the ordered children of each parent,
//! plus a model of the entity allocator), and after every step checks that
//! the two agree: every component of every entity, every entity's parent and
//! children (in order), ancestors, descendants and the parents-first order,
//! every stale handle, whole-world and filtered queries, cached query
//! states, the allocator's slot count, `World::check_invariants`, and the
//! number of live values of each component type, counted by their
//! constructors and destructors. The model's own trees are checked to be a
//! forest of live entities.
//!
//! Ops that make the world panic (a destructor that panics, a panic inside a
//! query loop or inside a bundle's construction mid-`spawn_batch`, index
//! exhaustion) are predicted by the model: the panic is caught, its message
//! checked, and the world must then agree with the model as usual.
//!
//! Every component value carries a serial number handed out by the harness,
//! so a value moved to the wrong row or entity shows up as a wrong serial.
//!
//! `components.rs` holds the component types and the counters of live
//! values, `ops.rs` the operations and the fuzzer's decoder.

#![allow(dead_code)]

use std::any::type_name;
use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, BTreeSet};
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

use archetable::prelude::*;

#[path = "components.rs"]
mod components;
#[path = "ops.rs"]
mod ops;

use components::{live_counts, EXPECTING_PANIC, FAULTS, LEDGER, NEXT_SERIAL};
use components::{with_kind, Aligned, Big, Bomb, Comp, Ghost, Heap, Marker, Odd, Pair, Small, Tracked};
pub use components::{Kind, BOMB, CONSTRUCTION, EXHAUSTED, KINDS, QUERY_LOOP};
pub use ops::{decode, Filter, Op, Shape, Target, MAX_BUNDLE, PARTNERS};

/// Runs `$body` with `$T` naming the component type of `$kind`, one of
/// [`PARTNERS`].
macro_rules! with_partner {
    ($kind:expr, $T:ident => $body:expr) => {
        match $kind {
            Kind::Marker => {
                type $T = Marker;
                $body
            }
            Kind::Ghost => {
                type $T = Ghost;
                $body
            }
            Kind::Big => {
                type $T = Big;
                $body
            }
            other => panic!("{other:?} is not one of the filter partners {PARTNERS:?}"),
        }
    };
}

/// Runs `$body` with `$F` naming the `QueryFilter` type of `$filter`.
macro_rules! with_filter {
    ($filter:expr, $F:ident => $body:expr) => {
        match $filter {
            Filter::All => {
                type $F = ();
                $body
            }
            Filter::With(k) => with_kind!(k, K => {
                type $F = With<K>;
                $body
            }),
            Filter::Without(k) => with_kind!(k, K => {
                type $F = Without<K>;
                $body
            }),
            Filter::Or(a, b) => with_kind!(a, A => with_partner!(b, B => {
                type $F = Or<(With<A>, With<B>)>;
                $body
            })),
            Filter::WithWithout(a, b) => with_kind!(a, A => with_partner!(b, B => {
                type $F = (With<A>, Without<B>);
                $body
            })),
        }
    };
}

// ---------------------------------------------------------------- expected panics

/// Installs, once, a panic hook that stays quiet while a predicted panic
/// may happen and otherwise defers to the hook it replaced (the default,
/// or the fuzzer's, which aborts).
fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if !EXPECTING_PANIC.try_with(Cell::get).unwrap_or(false) {
                previous(info);
            }
        }));
    });
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

/// Runs `f`, which panics with a message containing `expect` if it is
/// `Some`, and must not panic otherwise. Returns `None` if it panicked.
fn guarded<R>(step: usize, expect: Option<&'static str>, f: impl FnOnce() -> R) -> Option<R> {
    let mut f = Some(f);
    let mut out = None;
    run_guarded(step, expect, &mut || out = Some((f.take().unwrap())()));
    out
}

/// The part of [`guarded`] that is the same for every closure.
fn run_guarded(step: usize, expect: Option<&'static str>, f: &mut dyn FnMut()) {
    EXPECTING_PANIC.set(expect.is_some());
    let result = panic::catch_unwind(AssertUnwindSafe(f));
    EXPECTING_PANIC.set(false);
    match (result, expect) {
        (Ok(()), None) => {}
        (Ok(()), Some(expect)) => panic!("step {step}: expected a panic ({expect}), none happened"),
        (Err(payload), Some(expect)) => {
            let message = panic_message(&*payload);
            assert!(message.contains(expect), "step {step}: expected a panic with `{expect}`, got `{message}`");
        }
        (Err(payload), None) => panic::resume_unwind(payload),
    }
}

// ---------------------------------------------------------------- building bundles

/// Hands out serials and records the values a bundle source makes.
struct Ctx {
    next: Cell<u64>,
    made: RefCell<Vec<(Kind, u64)>>,
    /// When `Some(n)`, the source panics before making its `n+1`-th
    /// component (or after the bundle, if it has only `n`).
    fuse: Cell<Option<u8>>,
}

impl Ctx {
    fn serial(&self) -> u64 {
        let s = self.next.get();
        self.next.set(s + 1);
        s
    }

    fn take_made(&self) -> Vec<(Kind, u64)> {
        std::mem::take(&mut *self.made.borrow_mut())
    }
}

fn make<T: Comp>(ctx: &Ctx) -> T {
    if let Some(left) = ctx.fuse.get() {
        if left == 0 {
            ctx.fuse.set(None);
            panic!("{CONSTRUCTION}");
        }
        ctx.fuse.set(Some(left - 1));
    }
    let serial = ctx.serial();
    ctx.made.borrow_mut().push((T::KIND, serial));
    T::make(serial)
}

/// The kinds and values of a bundle built by the chain below.
pub trait Walk {
    /// The bundle's kinds, in order.
    fn kinds(out: &mut Vec<Kind>);
    /// The bundle's kinds and values, in order.
    fn walk(&self, out: &mut Vec<(Kind, Option<u64>)>);
}

impl Walk for () {
    fn kinds(_: &mut Vec<Kind>) {}
    fn walk(&self, _: &mut Vec<(Kind, Option<u64>)>) {}
}

impl<A: Walk, T: Comp> Walk for (A, T) {
    fn kinds(out: &mut Vec<Kind>) {
        A::kinds(out);
        out.push(T::KIND);
    }

    fn walk(&self, out: &mut Vec<(Kind, Option<u64>)>) {
        self.0.walk(out);
        out.push((T::KIND, self.1.value()));
    }
}

/// What to do with the bundle type a shape selects.
#[derive(Clone, Copy)]
enum Act {
    Spawn,
    Insert(Entity),
    Remove(Entity),
    Batch { count: u8, exact: bool, panic_at: Option<(u8, u8)> },
}

// Step `sK_C` decides whether kind `K` is in the shape, with `C` kinds taken
// so far, and extends the bundle source with it: a shape becomes a bundle of
// nested pairs in kind order, `(((), Small), Heap)`. The steps are spelled
// out per count so that only shapes of at most `MAX_BUNDLE` kinds are
// instantiated.
macro_rules! chain {
    ($($step:ident($T:ty) -> $add:ident | $skip:ident;)*) => {$(
        fn $step<B: Bundle + Walk, F: Fn(&Ctx) -> B>(h: &mut Harness, shape: Shape, source: F, act: Act) {
            if shape.has(<$T as Comp>::KIND) {
                $add(h, shape, move |ctx: &Ctx| (source(ctx), make::<$T>(ctx)), act)
            } else {
                $skip(h, shape, source, act)
            }
        }
    )*};
}

chain! {
    s0_0(Marker) -> s1_1 | s1_0;
    s1_0(Ghost) -> s2_1 | s2_0;
    s2_0(Bomb) -> s3_1 | s3_0;
    s3_0(Small) -> s4_1 | s4_0;
    s4_0(Odd) -> s5_1 | s5_0;
    s5_0(Pair) -> s6_1 | s6_0;
    s6_0(Heap) -> s7_1 | s7_0;
    s7_0(Tracked) -> s8_1 | s8_0;
    s8_0(Aligned) -> s9_1 | s9_0;
    s9_0(Big) -> act_on | act_on;
    s1_1(Ghost) -> s2_2 | s2_1;
    s2_1(Bomb) -> s3_2 | s3_1;
    s3_1(Small) -> s4_2 | s4_1;
    s4_1(Odd) -> s5_2 | s5_1;
    s5_1(Pair) -> s6_2 | s6_1;
    s6_1(Heap) -> s7_2 | s7_1;
    s7_1(Tracked) -> s8_2 | s8_1;
    s8_1(Aligned) -> s9_2 | s9_1;
    s9_1(Big) -> act_on | act_on;
    s2_2(Bomb) -> act_on | s3_2;
    s3_2(Small) -> act_on | s4_2;
    s4_2(Odd) -> act_on | s5_2;
    s5_2(Pair) -> act_on | s6_2;
    s6_2(Heap) -> act_on | s7_2;
    s7_2(Tracked) -> act_on | s8_2;
    s8_2(Aligned) -> act_on | s9_2;
    s9_2(Big) -> act_on | act_on;
}

/// Builds the bundle type of `shape` and applies `act` with it.
fn with_bundle(h: &mut Harness, shape: Shape, act: Act) {
    assert!(shape.kinds().count() <= MAX_BUNDLE, "shape {shape:?} has more than {MAX_BUNDLE} kinds");
    s0_0(h, shape, |_: &Ctx| (), act);
}

/// The bundle source of `spawn_batch`: bundle `i` from `make(i)`, with an
/// exact size hint or none, as `exact` says.
struct Batch<G> {
    next: u8,
    count: u8,
    exact: bool,
    make: G,
}

impl<B, G: FnMut(u8) -> B> Iterator for Batch<G> {
    type Item = B;

    fn next(&mut self) -> Option<B> {
        (self.next < self.count).then(|| {
            self.next += 1;
            (self.make)(self.next - 1)
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = usize::from(self.count - self.next);
        if self.exact {
            (left, Some(left))
        } else {
            (0, None)
        }
    }
}

/// Applies `act` with the bundle type `B` that the chain built.
fn act_on<B: Bundle + Walk, F: Fn(&Ctx) -> B>(h: &mut Harness, _: Shape, source: F, act: Act) {
    let ctx = h.ctx();
    let step = h.step;
    match act {
        Act::Spawn => {
            let bundle = source(&ctx);
            let made = ctx.take_made();
            let expect = (h.alloc.spare() == 0).then_some(EXHAUSTED);
            let world = &mut h.world;
            let spawned = guarded(step, expect, move || world.spawn(bundle));
            if let Some(e) = spawned {
                h.spawned(e, made);
            }
        }
        Act::Insert(e) => {
            let bundle = source(&ctx);
            let made = ctx.take_made();
            let expect = h.drops_armed_bomb(e, made.iter().map(|&(k, _)| k)).then_some(BOMB);
            let world = &mut h.world;
            let result = guarded(step, expect, move || world.insert(e, bundle));
            h.inserted(e, made, result);
        }
        Act::Remove(e) => {
            let mut kinds = Vec::new();
            B::kinds(&mut kinds);
            let removes_all = h.model.get(&e).is_some_and(|c| kinds.iter().all(|k| c.contains_key(k)));
            let expect = (removes_all && h.drops_armed_bomb(e, kinds.iter().copied())).then_some(BOMB);
            let mut values = Vec::new();
            let world = &mut h.world;
            let result = guarded(step, expect, || match world.remove::<B>(e) {
                Ok(bundle) => {
                    bundle.walk(&mut values);
                    drop(bundle);
                    Ok(())
                }
                Err(err) => Err(err),
            });
            h.removed(e, &kinds, result, values);
        }
        Act::Batch { count, exact, panic_at } => {
            let spare = h.alloc.spare();
            let panic_at = panic_at.filter(|&(at, _)| at < count);
            // Bundle `i` is built before its entity is allocated, so the
            // first panic is whichever comes first.
            let expect = match panic_at {
                Some((at, _)) if usize::from(at) <= spare => Some(CONSTRUCTION),
                _ if usize::from(count) > spare => Some(EXHAUSTED),
                _ => None,
            };
            let expected_spawns = match expect {
                Some(CONSTRUCTION) => usize::from(panic_at.unwrap().0),
                Some(_) => spare,
                None => usize::from(count),
            };
            let mut spawned = Vec::new();
            {
                let ctx = &ctx;
                let source = |i: u8| {
                    if let Some((at, after)) = panic_at {
                        if i == at {
                            ctx.fuse.set(Some(after));
                        }
                    }
                    let bundle = source(ctx);
                    if ctx.fuse.take().is_some() {
                        // The bundle had fewer components than `after`: panic
                        // with it fully built.
                        panic!("{CONSTRUCTION}");
                    }
                    bundle
                };
                let world = &mut h.world;
                let spawned = &mut spawned;
                guarded(step, expect, move || {
                    for e in world.spawn_batch(Batch { next: 0, count, exact, make: source }) {
                        spawned.push((e, ctx.take_made()));
                    }
                });
            }
            ctx.take_made();
            ctx.fuse.set(None);
            assert_eq!(spawned.len(), expected_spawns, "step {step}: spawn_batch spawned a wrong number");
            for (e, made) in spawned {
                h.spawned(e, made);
            }
        }
    }
    h.next_serial = ctx.next.get();
}

// ---------------------------------------------------------------- the allocator model

#[derive(Clone, Copy, Debug)]
struct SlotModel {
    /// The generation of the live entity, or of the next one when free.
    generation: u32,
    live: bool,
    /// Generation exhausted: never handed out again.
    retired: bool,
}

/// What the entity allocator must do, without saying which free index it
/// picks.
#[derive(Debug)]
struct AllocModel {
    slots: Vec<SlotModel>,
    max_slots: usize,
}

impl AllocModel {
    fn spare(&self) -> usize {
        self.slots.iter().filter(|s| !s.live && !s.retired).count() + (self.max_slots - self.slots.len())
    }

    /// Checks and records a newly issued handle.
    fn issue(&mut self, e: Entity, step: usize) {
        let i = e.index() as usize;
        if i == self.slots.len() {
            assert!(i < self.max_slots, "step {step}: {e} is past the index space of {} slots", self.max_slots);
            assert_eq!(e.generation(), 1, "step {step}: a new slot starts at generation 1, got {e}");
            self.slots.push(SlotModel { generation: 1, live: true, retired: false });
        } else {
            let slot = self.slots.get_mut(i).unwrap_or_else(|| panic!("step {step}: {e} skips indices"));
            assert!(!slot.live && !slot.retired, "step {step}: {e} reuses a live or retired index ({slot:?})");
            assert_eq!(e.generation(), slot.generation, "step {step}: {e} has the wrong generation");
            slot.live = true;
        }
    }

    fn free(&mut self, e: Entity) {
        let slot = &mut self.slots[e.index() as usize];
        slot.live = false;
        match slot.generation.checked_add(1) {
            Some(next) => slot.generation = next,
            None => slot.retired = true,
        }
    }

    fn age(&mut self, left: u32) {
        let aged = (u32::MAX - left).max(1);
        for slot in self.slots.iter_mut().filter(|s| !s.live && !s.retired) {
            slot.generation = slot.generation.max(aged);
        }
    }
}

// ---------------------------------------------------------------- the harness

/// The components of one entity in the model: kind to serial.
type Components = BTreeMap<Kind, u64>;

type SmallWithoutGhost = QueryState<(Entity, &'static Small, Option<&'static Big>), Without<Ghost>>;
type AlignedMarkerOrBomb = QueryState<(Entity, &'static Aligned), Or<(With<Marker>, With<Bomb>)>>;

/// A world, its model, and the state needed to compare them.
pub struct Harness {
    world: World,
    model: BTreeMap<Entity, Components>,
    /// Every handle the world handed out, oldest first.
    issued: Vec<Entity>,
    issued_set: BTreeSet<Entity>,
    alloc: AllocModel,
    next_serial: u64,
    first_serial: u64,
    /// The serial of the one armed bomb, which is alive in the world. Its
    /// entity is never in a tree (see [`Harness::keep_out_of_trees`]).
    armed: Option<u64>,
    /// The parent of every child.
    parents: BTreeMap<Entity, Entity>,
    /// The children of every parent, in the order they joined; never empty.
    children: BTreeMap<Entity, Vec<Entity>>,
    baseline: [i64; 10],
    /// Query states kept across steps, built before most component types
    /// exist: they must pick up every archetype created later.
    small_without_ghost: SmallWithoutGhost,
    aligned_marker_or_bomb: Option<AlignedMarkerOrBomb>,
    step: usize,
}

impl Harness {
    pub fn new() -> Self {
        install_panic_hook();
        let mut world = World::new();
        let small_without_ghost = QueryState::new(&mut world);
        let first_serial = NEXT_SERIAL.get();
        Harness {
            world,
            model: BTreeMap::new(),
            issued: Vec::new(),
            issued_set: BTreeSet::new(),
            alloc: AllocModel { slots: Vec::new(), max_slots: u32::MAX as usize },
            next_serial: first_serial,
            first_serial,
            armed: None,
            parents: BTreeMap::new(),
            children: BTreeMap::new(),
            baseline: live_counts(),
            small_without_ghost,
            aligned_marker_or_bomb: None,
            step: 0,
        }
    }

    fn ctx(&self) -> Ctx {
        Ctx { next: Cell::new(self.next_serial), made: RefCell::new(Vec::new()), fuse: Cell::new(None) }
    }

    fn serial(&mut self) -> u64 {
        let s = self.next_serial;
        self.next_serial += 1;
        s
    }

    fn resolve(&self, target: Target) -> Entity {
        match target {
            Target::Recent(n) if !self.issued.is_empty() => {
                self.issued[self.issued.len() - 1 - usize::from(n) % self.issued.len()]
            }
            Target::Recent(_) => Entity::from_bits(1 << 32).unwrap(),
            Target::Forged { index, generation } => {
                Entity::from_bits((u64::from(generation) + 1) << 32 | u64::from(index)).unwrap()
            }
            Target::Live(n) => match self.model.len() {
                0 => self.resolve(Target::Recent(n)),
                alive => {
                    let n = usize::from(n) % alive;
                    *self.issued.iter().rev().filter(|e| self.model.contains_key(e)).nth(n).unwrap()
                }
            },
        }
    }

    /// Whether dropping the components `kinds` of `e` drops the armed bomb.
    fn drops_armed_bomb(&self, e: Entity, mut kinds: impl Iterator<Item = Kind>) -> bool {
        let bomb = self.model.get(&e).and_then(|c| c.get(&Kind::Bomb));
        bomb.is_some() && bomb.copied() == self.armed && kinds.any(|k| k == Kind::Bomb)
    }

    /// Forgets the armed bomb if `serial` was it.
    fn disarm_if(&mut self, serial: Option<u64>) {
        if serial.is_some() && serial == self.armed {
            self.armed = None;
        }
    }

    // ------------------------------------------------------------ the trees

    fn in_tree(&self, e: Entity) -> bool {
        self.parents.contains_key(&e) || self.children.contains_key(&e)
    }

    /// The children of `e` in the model, in order.
    fn children_of(&self, e: Entity) -> &[Entity] {
        self.children.get(&e).map_or(&[], Vec::as_slice)
    }

    /// `e` and its descendants, depth first, each parent before its
    /// children, siblings in order.
    fn subtree(&self, e: Entity) -> Vec<Entity> {
        let mut order = Vec::new();
        let mut stack = vec![e];
        while let Some(at) = stack.pop() {
            order.push(at);
            stack.extend(self.children_of(at).iter().rev());
        }
        order
    }

    /// What `set_parent(child, parent)` must return.
    fn predict_set_parent(&self, child: Entity, parent: Entity) -> Result<(), HierarchyError> {
        if !self.model.contains_key(&child) {
            return Err(HierarchyError::ChildNotAlive(child));
        }
        if child == parent {
            return Err(HierarchyError::OwnParent(child));
        }
        if !self.model.contains_key(&parent) {
            return Err(HierarchyError::ParentNotAlive(parent));
        }
        let mut at = Some(parent);
        while let Some(e) = at {
            if e == child {
                return Err(HierarchyError::Cycle { child, parent });
            }
            at = self.parents.get(&e).copied();
        }
        Ok(())
    }

    /// Takes `child` out of its parent's list (dropping an emptied list);
    /// returns the parent it had.
    fn unlink(&mut self, child: Entity) -> Option<Entity> {
        let parent = self.parents.remove(&child)?;
        let list = self.children.get_mut(&parent).expect("a parent in the model has a list");
        list.retain(|&c| c != child);
        if list.is_empty() {
            self.children.remove(&parent);
        }
        Some(parent)
    }

    /// Makes `parent` the parent of `child`, at the end of its list.
    fn link(&mut self, child: Entity, parent: Entity) {
        self.unlink(child);
        self.parents.insert(child, parent);
        self.children.entry(parent).or_default().push(child);
    }

    /// What a plain despawn of `e` does to the trees: it leaves its
    /// parent's list, and its children are orphaned.
    fn forget(&mut self, e: Entity) {
        self.unlink(e);
        for child in self.children.remove(&e).unwrap_or_default() {
            self.parents.remove(&child);
        }
    }

    /// Keeps the armed bomb out of every tree: disarms it if it is on `e`.
    ///
    /// The model does not predict a recursive despawn cut short by a
    /// panicking destructor midway (which entities are gone, which stay),
    /// so an armed bomb never joins a tree: `Arm` leaves entities in trees
    /// alone, and `set_parent` disarms the bomb of the entities it links.
    /// A plain despawn whose destructor panics in a tree is covered by the
    /// `a_panicking_despawn_of_*` tests in `tests/model.rs`.
    fn keep_out_of_trees(&mut self, e: Entity) {
        let step = self.step;
        let bomb = self.model.get(&e).and_then(|c| c.get(&Kind::Bomb)).copied();
        if bomb.is_some() && bomb == self.armed {
            let serial = self.world.get_mut::<Bomb>(e).map(|mut b| {
                b.armed = false;
                b.serial
            });
            assert_eq!(serial, bomb, "step {step}: disarming the bomb of {e}");
            self.armed = None;
        }
    }

    /// Checks that the model's trees are a forest of live entities, with
    /// both sides of every link agreeing.
    fn check_forest(&self) {
        let step = self.step;
        for (&child, &parent) in &self.parents {
            assert!(self.model.contains_key(&child), "step {step}: model: dead child {child}");
            assert!(self.model.contains_key(&parent), "step {step}: model: {child}'s parent {parent} is dead");
            let times = self.children_of(parent).iter().filter(|&&c| c == child).count();
            assert_eq!(times, 1, "step {step}: model: {parent} lists {child} {times} times");
            // Up from the child, a root comes within as many steps as there
            // are links, or there is a cycle.
            let mut at = child;
            for _ in 0..=self.parents.len() {
                match self.parents.get(&at) {
                    Some(&up) => at = up,
                    None => break,
                }
            }
            assert!(!self.parents.contains_key(&at), "step {step}: model: {child} is on a cycle");
        }
        for (&parent, list) in &self.children {
            assert!(!list.is_empty(), "step {step}: model: {parent} keeps an empty list");
            for child in list {
                assert_eq!(self.parents.get(child), Some(&parent), "step {step}: model: {parent} lists {child}");
            }
        }
        let listed: usize = self.children.values().map(Vec::len).sum();
        assert_eq!(listed, self.parents.len(), "step {step}: model: children listed vs parents");
    }

    fn spawned(&mut self, e: Entity, made: Vec<(Kind, u64)>) {
        let step = self.step;
        assert!(self.issued_set.insert(e), "step {step}: handle {e} handed out twice");
        self.issued.push(e);
        self.alloc.issue(e, step);
        self.model.insert(e, made.into_iter().collect());
    }

    fn inserted(&mut self, e: Entity, made: Vec<(Kind, u64)>, result: Option<Result<(), EntityError>>) {
        let step = self.step;
        match (self.model.get_mut(&e), result) {
            (Some(components), Some(Ok(())) | None) => {
                let mut old_bomb = None;
                for (k, v) in made {
                    let old = components.insert(k, v);
                    if k == Kind::Bomb {
                        old_bomb = old;
                    }
                }
                self.disarm_if(old_bomb);
            }
            (None, Some(Err(EntityError::NoSuchEntity(x)))) => assert_eq!(x, e, "step {step}"),
            (alive, result) => panic!("step {step}: insert into {e} (alive: {}) gave {result:?}", alive.is_some()),
        }
    }

    fn removed(
        &mut self,
        e: Entity,
        kinds: &[Kind],
        result: Option<Result<(), ComponentError>>,
        values: Vec<(Kind, Option<u64>)>,
    ) {
        let step = self.step;
        let Some(components) = self.model.get_mut(&e) else {
            assert_eq!(result, Some(Err(ComponentError::NoSuchEntity(e))), "step {step}: remove from stale {e}");
            return;
        };
        match kinds.iter().find(|k| !components.contains_key(k)) {
            Some(missing) => {
                let want = ComponentError::MissingComponent { entity: e, component: missing.type_name() };
                assert_eq!(result, Some(Err(want)), "step {step}: remove {kinds:?} from {e}");
            }
            None => {
                assert!(matches!(result, Some(Ok(())) | None), "step {step}: remove {kinds:?} from {e}: {result:?}");
                let want: Vec<(Kind, Option<u64>)> =
                    kinds.iter().map(|k| (*k, components.remove(k).filter(|_| !k.is_zero_sized()))).collect();
                assert_eq!(values, want, "step {step}: values removed from {e}");
                if let Some(&(_, serial)) = want.iter().find(|(k, _)| *k == Kind::Bomb) {
                    self.disarm_if(serial);
                }
            }
        }
    }

    /// Applies one op to the world and the model.
    pub fn apply(&mut self, op: &Op) {
        let step = self.step;
        match *op {
            Op::Spawn(shape) => with_bundle(self, shape, Act::Spawn),
            Op::Insert(target, shape) => {
                let e = self.resolve(target);
                with_bundle(self, shape, Act::Insert(e));
            }
            Op::Remove(target, shape) => {
                let e = self.resolve(target);
                with_bundle(self, shape, Act::Remove(e));
            }
            Op::SpawnBatch { shape, count, exact } => {
                with_bundle(self, shape, Act::Batch { count, exact, panic_at: None });
            }
            Op::SpawnBatchPanic { shape, count, at, after } => {
                with_bundle(self, shape, Act::Batch { count, exact: true, panic_at: Some((at, after)) });
            }
            Op::Despawn(target) => {
                let e = self.resolve(target);
                let all = KINDS.into_iter();
                let expect = self.drops_armed_bomb(e, all).then_some(BOMB);
                let world = &mut self.world;
                let result = guarded(step, expect, || world.despawn(e));
                match (self.model.remove(&e), result) {
                    (Some(components), Some(Ok(())) | None) => {
                        self.alloc.free(e);
                        self.forget(e);
                        self.disarm_if(components.get(&Kind::Bomb).copied());
                    }
                    (None, Some(Err(EntityError::NoSuchEntity(x)))) => assert_eq!(x, e, "step {step}"),
                    (alive, result) => panic!("step {step}: despawn {e} (alive: {}) gave {result:?}", alive.is_some()),
                }
            }
            Op::Replace(target, kind) => {
                let e = self.resolve(target);
                with_kind!(kind, T => self.replace::<T>(e));
            }
            Op::Mutate(target, kind) => {
                let e = self.resolve(target);
                with_kind!(kind, T => self.mutate::<T>(e));
            }
            Op::Arm(target) => {
                let e = self.resolve(target);
                let has = self.model.get(&e).and_then(|c| c.get(&Kind::Bomb)).copied();
                // One armed bomb at a time, and never in a tree (see
                // `keep_out_of_trees`).
                if self.armed.is_some() || self.in_tree(e) {
                    assert_eq!(self.world.get::<Bomb>(e).map(|b| b.serial), has, "step {step}: bomb of {e}");
                } else if has.is_some() {
                    let bomb = self.world.get_mut::<Bomb>(e).map(|mut b| {
                        b.armed = true;
                        b.serial
                    });
                    assert_eq!(bomb, has, "step {step}: arming the bomb of {e}");
                    self.armed = bomb;
                } else if self.model.contains_key(&e) {
                    // No bomb yet: insert an armed one.
                    let serial = self.serial();
                    let mut bomb = Bomb::make(serial);
                    bomb.armed = true;
                    let result = self.world.insert(e, bomb);
                    assert_eq!(result, Ok(()), "step {step}: inserting an armed bomb into {e}");
                    self.model.get_mut(&e).unwrap().insert(Kind::Bomb, serial);
                    self.armed = Some(serial);
                } else {
                    assert!(self.world.get_mut::<Bomb>(e).is_none(), "step {step}: bomb of stale {e}");
                }
            }
            Op::QueryWrite(filter) => with_filter!(filter, F => self.query_write::<F>(filter)),
            Op::QueryPanic { after } => {
                let with_small = self.model.values().filter(|c| c.contains_key(&Kind::Small)).count();
                let expect = (with_small > usize::from(after)).then_some(QUERY_LOOP);
                let mut writes = Vec::new();
                let mut serial = self.next_serial;
                let world = &mut self.world;
                guarded(step, expect, || {
                    for (e, mut small) in world.query_mut::<(Entity, &mut Small)>() {
                        if writes.len() == usize::from(after) {
                            panic!("{QUERY_LOOP}");
                        }
                        small.set(serial);
                        writes.push((e, serial));
                        serial += 1;
                    }
                });
                self.next_serial = serial;
                assert_eq!(writes.len(), with_small.min(usize::from(after)), "step {step}: rows visited");
                for (e, s) in writes {
                    let slot = self.model.get_mut(&e).and_then(|c| c.get_mut(&Kind::Small));
                    *slot.unwrap_or_else(|| panic!("step {step}: query visited {e}, which has no Small")) = s;
                }
            }
            Op::QueryCheck(filter) => with_filter!(filter, F => self.query_check::<F>(filter)),
            Op::Clear => {
                let expect = self.armed.is_some().then_some(BOMB);
                let world = &mut self.world;
                guarded(step, expect, || world.clear());
                for (e, _) in std::mem::take(&mut self.model) {
                    self.alloc.free(e);
                }
                self.parents.clear();
                self.children.clear();
                self.armed = None;
            }
            Op::AgeFreeSlots(left) => {
                self.world.entity_allocator_hooks().age_free_slots(u32::from(left));
                self.alloc.age(u32::from(left));
            }
            Op::LimitSlots(extra) => {
                let max = (self.alloc.slots.len() + usize::from(extra)).min(u32::MAX as usize);
                self.world.entity_allocator_hooks().limit_slots(max as u32);
                self.alloc.max_slots = max;
            }
            Op::SetParent(child, parent) => {
                let (child, parent) = (self.resolve(child), self.resolve(parent));
                let want = self.predict_set_parent(child, parent);
                if want.is_ok() {
                    self.keep_out_of_trees(child);
                    self.keep_out_of_trees(parent);
                }
                let got = self.world.set_parent(child, parent);
                assert_eq!(got, want, "step {step}: set_parent({child}, {parent})");
                if got.is_ok() {
                    self.link(child, parent);
                }
            }
            Op::RemoveParent(target) => {
                let e = self.resolve(target);
                let want = match self.model.contains_key(&e) {
                    true => Ok(self.parents.get(&e).copied()),
                    false => Err(EntityError::NoSuchEntity(e)),
                };
                assert_eq!(self.world.remove_parent(e), want, "step {step}: remove_parent({e})");
                self.unlink(e);
            }
            Op::DespawnRecursive(target) => self.despawn_recursive(self.resolve(target)),
        }
        if step == 0 {
            self.aligned_marker_or_bomb = Some(QueryState::new(&mut self.world));
        }
    }

    fn despawn_recursive(&mut self, e: Entity) {
        let step = self.step;
        if !self.model.contains_key(&e) {
            let got = self.world.despawn_recursive(e);
            assert_eq!(got, Err(EntityError::NoSuchEntity(e)), "step {step}: despawn_recursive({e}) of a stale handle");
            return;
        }
        let all = self.subtree(e);
        let expect = self.drops_armed_bomb(e, KINDS.into_iter()).then_some(BOMB);
        // The armed bomb is in no tree: if `e` has it, `e` is alone.
        assert!(expect.is_none() || all.len() == 1, "step {step}: the armed bomb of {e} is in a tree");
        let world = &mut self.world;
        let got = guarded(step, expect, || world.despawn_recursive(e));
        if let Some(got) = got {
            assert_eq!(got, Ok(all.len()), "step {step}: despawn_recursive({e}) of {all:?}");
        }
        self.unlink(e);
        for x in all {
            let components = self.model.remove(&x).expect("the subtree is alive in the model");
            self.alloc.free(x);
            self.parents.remove(&x);
            self.children.remove(&x);
            self.disarm_if(components.get(&Kind::Bomb).copied());
        }
    }

    fn replace<T: Comp>(&mut self, e: Entity) {
        let step = self.step;
        let old = self.model.get(&e).and_then(|c| c.get(&T::KIND)).copied();
        let serial = self.serial();
        let expect = (T::KIND == Kind::Bomb && old.is_some() && old == self.armed).then_some(BOMB);
        let world = &mut self.world;
        let found = guarded(step, expect, || match world.get_mut::<T>(e) {
            Some(mut value) => {
                let previous = std::mem::replace(&mut *value, T::make(serial));
                drop(previous);
                true
            }
            None => false,
        });
        assert_eq!(found.unwrap_or(true), old.is_some(), "step {step}: get_mut::<{}>({e})", type_name::<T>());
        if old.is_some() {
            self.model.get_mut(&e).unwrap().insert(T::KIND, serial);
            if T::KIND == Kind::Bomb {
                self.disarm_if(old);
            }
        }
    }

    fn mutate<T: Comp>(&mut self, e: Entity) {
        let step = self.step;
        let old = self.model.get(&e).and_then(|c| c.get(&T::KIND)).copied();
        let serial = self.serial();
        match self.world.query_one_mut::<&mut T>(e) {
            Ok(mut value) => {
                assert!(old.is_some(), "step {step}: query_one_mut::<&mut {}>({e}) found a value", type_name::<T>());
                value.set(serial);
                self.model.get_mut(&e).unwrap().insert(T::KIND, serial);
                if old == self.armed && T::KIND == Kind::Bomb {
                    self.armed = Some(serial);
                }
            }
            Err(QueryEntityError::NoSuchEntity(x)) => {
                assert!(x == e && !self.model.contains_key(&e), "step {step}: {e} reported missing")
            }
            Err(QueryEntityError::QueryDoesNotMatch { entity, .. }) => {
                assert!(
                    entity == e && self.model.contains_key(&e) && old.is_none(),
                    "step {step}: {e} reported no match"
                )
            }
            Err(error @ QueryEntityError::AliasedMutability(_)) => {
                panic!("step {step}: a one-entity fetch reported {error}")
            }
        }
    }

    fn query_write<F: archetable::QueryFilter>(&mut self, filter: Filter) {
        let step = self.step;
        let mut visited = BTreeSet::new();
        let mut serial = self.next_serial;
        for (e, mut small, odd) in self.world.query_filtered_mut::<(Entity, &mut Small, Option<&mut Odd>), F>() {
            let components = self.model.get_mut(&e).unwrap_or_else(|| panic!("step {step}: query yielded dead {e}"));
            assert!(visited.insert(e), "step {step}: query yielded {e} twice");
            assert_eq!(small.value(), components.get(&Kind::Small).copied(), "step {step}: Small of {e}");
            small.set(serial);
            components.insert(Kind::Small, serial);
            serial += 1;
            assert_eq!(odd.is_some(), components.contains_key(&Kind::Odd), "step {step}: Odd of {e}");
            if let Some(mut odd) = odd {
                odd.set(serial);
                components.insert(Kind::Odd, serial);
                serial += 1;
            }
        }
        self.next_serial = serial;
        let want: BTreeSet<Entity> = self
            .model
            .iter()
            .filter(|(_, c)| c.contains_key(&Kind::Small) && filter.passes(c))
            .map(|(e, _)| *e)
            .collect();
        assert_eq!(visited, want, "step {step}: entities visited by a mutable query with {filter:?}");
    }

    fn query_check<F: archetable::QueryFilter>(&mut self, filter: Filter) {
        let step = self.step;
        let passing: BTreeMap<Entity, &Components> =
            self.model.iter().filter(|(_, c)| filter.passes(c)).map(|(e, c)| (*e, c)).collect();
        let world = &self.world;

        let entities: BTreeSet<Entity> = world.query_filtered::<Entity, F>().collect();
        assert_eq!(entities, passing.keys().copied().collect(), "step {step}: entities passing {filter:?}");
        assert_eq!(world.query_filtered::<Entity, F>().count(), passing.len(), "step {step}: count");
        let (lower, upper) = world.query_filtered::<Entity, F>().size_hint();
        assert!(lower <= passing.len() && upper.is_none_or(|u| u >= passing.len()), "step {step}: size_hint");

        let model_sum: u64 = passing.values().filter_map(|c| c.get(&Kind::Small)).sum();
        let fold_sum = world.query_filtered::<&Small, F>().fold(0, |s, v| s + u64::from(v.0));
        let mut loop_sum = 0;
        for small in world.query_filtered::<&Small, F>() {
            loop_sum += u64::from(small.0);
        }
        assert_eq!((fold_sum, loop_sum), (model_sum, model_sum), "step {step}: sums of Small passing {filter:?}");

        let mut state = QueryState::<(Entity, Option<&Heap>, &Aligned), F>::new(&mut self.world);
        let mut got = BTreeMap::new();
        state.for_each(&self.world, |(e, heap, aligned)| {
            got.insert(e, (heap.and_then(Comp::value), aligned.value()));
        });
        let want: BTreeMap<Entity, (Option<u64>, Option<u64>)> = self
            .model
            .iter()
            .filter(|(_, c)| filter.passes(c) && c.contains_key(&Kind::Aligned))
            .map(|(e, c)| (*e, (c.get(&Kind::Heap).copied(), c.get(&Kind::Aligned).copied())))
            .collect();
        assert_eq!(got, want, "step {step}: fresh QueryState with {filter:?}");
        for &e in self.issued.iter().rev().take(8) {
            let want = want.contains_key(&e);
            match state.get(&self.world, e) {
                Ok((x, _, _)) => assert!(want && x == e, "step {step}: QueryState::get({e})"),
                Err(QueryEntityError::NoSuchEntity(x)) => {
                    assert!(x == e && !self.model.contains_key(&e), "step {step}: QueryState::get({e}) missing")
                }
                Err(QueryEntityError::QueryDoesNotMatch { entity, .. }) => {
                    assert!(entity == e && !want && self.model.contains_key(&e), "step {step}: QueryState::get({e})")
                }
                Err(error @ QueryEntityError::AliasedMutability(_)) => {
                    panic!("step {step}: QueryState::get({e}) reported {error}")
                }
            }
        }
    }

    fn check_one<T: Comp>(&self, e: Entity, want: Option<u64>) {
        let step = self.step;
        let got = self.world.get::<T>(e);
        if let Some(value) = got {
            let address = value as *const T as usize;
            assert_eq!(address % std::mem::align_of::<T>(), 0, "step {step}: misaligned {}", type_name::<T>());
        }
        let want_value = want.filter(|_| !T::KIND.is_zero_sized());
        assert_eq!(got.map(|v| v.value()), want.map(|_| want_value), "step {step}: {} of {e}", type_name::<T>());
        assert_eq!(self.world.has::<T>(e), want.is_some(), "step {step}: has::<{}>({e})", type_name::<T>());
    }

    /// Compares the world with the model.
    pub fn check(&mut self) {
        let step = self.step;
        if let Err(problem) = self.world.check_invariants() {
            panic!("step {step}: world invariants broken: {problem}");
        }
        let faults = FAULTS.with(|f| std::mem::take(&mut *f.borrow_mut()));
        assert!(faults.is_empty(), "step {step}: destructors saw {faults:?}");

        let world = &self.world;
        assert_eq!(world.len(), self.model.len(), "step {step}: len");
        assert_eq!(world.is_empty(), self.model.is_empty(), "step {step}: is_empty");

        // Every live entity, component by component.
        for (&e, components) in &self.model {
            assert!(world.contains(e), "step {step}: {e} should be alive");
            for kind in KINDS {
                with_kind!(kind, T => self.check_one::<T>(e, components.get(&kind).copied()));
            }
            let view = world.entity(e).unwrap_or_else(|| panic!("step {step}: no EntityRef for {e}"));
            assert_eq!(view.id(), e);
            let mut names: Vec<&str> = view.component_names().collect();
            let mut want: Vec<&str> = components.keys().map(|k| k.type_name()).collect();
            if self.parents.contains_key(&e) {
                want.push(type_name::<ChildOf>());
            }
            if self.children.contains_key(&e) {
                want.push(type_name::<Children>());
            }
            names.sort_unstable();
            want.sort_unstable();
            assert_eq!(names, want, "step {step}: component names of {e}");
        }

        // Every stale handle, everywhere.
        for &e in self.issued.iter().filter(|e| !self.model.contains_key(e)) {
            assert!(!world.contains(e), "step {step}: stale {e} reported alive");
            assert!(world.entity(e).is_none(), "step {step}: EntityRef for stale {e}");
            for kind in KINDS {
                with_kind!(kind, T => self.check_one::<T>(e, None));
            }
            assert_eq!(
                world.query_one::<Entity>(e).err(),
                Some(QueryEntityError::NoSuchEntity(e)),
                "step {step}: query_one on stale {e}"
            );
            assert_eq!(world.parent(e), None, "step {step}: parent of stale {e}");
            assert_eq!(world.children(e), [], "step {step}: children of stale {e}");
        }

        // The trees: a forest in the model, and the same in the world.
        self.check_forest();
        for &e in self.model.keys() {
            let parent = self.parents.get(&e).copied();
            assert_eq!(world.parent(e), parent, "step {step}: parent of {e}");
            assert_eq!(world.children(e), self.children_of(e), "step {step}: children of {e}");
            if self.in_tree(e) {
                let want: Vec<Entity> = std::iter::successors(parent, |at| self.parents.get(at).copied()).collect();
                assert_eq!(world.ancestors(e).collect::<Vec<_>>(), want, "step {step}: ancestors of {e}");
                let want = &self.subtree(e)[1..];
                assert_eq!(world.descendants(e).collect::<Vec<_>>(), want, "step {step}: descendants of {e}");
            }
        }
        let roots = self.children.keys().filter(|e| !self.parents.contains_key(e));
        let order: Vec<Entity> = roots.flat_map(|&root| self.subtree(root)).collect();
        assert_eq!(world.hierarchy_order(), order, "step {step}: hierarchy_order");

        // One query over everything reproduces the model.
        type All = (
            Entity,
            Option<&'static Marker>,
            Option<&'static Ghost>,
            Option<&'static Small>,
            Option<&'static Odd>,
            Option<&'static Pair>,
            Option<&'static Heap>,
            Option<&'static Tracked>,
            Option<&'static Aligned>,
            Option<&'static Big>,
            Option<&'static Bomb>,
        );
        let mut seen = BTreeMap::new();
        for (e, marker, ghost, small, odd, pair, heap, tracked, aligned, big, bomb) in world.query::<All>() {
            let mut c = BTreeMap::new();
            let mut put = |k: Kind, v: Option<Option<u64>>| {
                if let Some(v) = v {
                    c.insert(k, v);
                }
            };
            put(Kind::Marker, marker.map(Comp::value));
            put(Kind::Ghost, ghost.map(Comp::value));
            put(Kind::Small, small.map(Comp::value));
            put(Kind::Odd, odd.map(Comp::value));
            put(Kind::Pair, pair.map(Comp::value));
            put(Kind::Heap, heap.map(Comp::value));
            put(Kind::Tracked, tracked.map(Comp::value));
            put(Kind::Aligned, aligned.map(Comp::value));
            put(Kind::Big, big.map(Comp::value));
            put(Kind::Bomb, bomb.map(Comp::value));
            assert!(seen.insert(e, c).is_none(), "step {step}: the query yielded {e} twice");
        }
        let want: BTreeMap<Entity, BTreeMap<Kind, Option<u64>>> = self
            .model
            .iter()
            .map(|(&e, c)| (e, c.iter().map(|(&k, &v)| (k, (!k.is_zero_sized()).then_some(v))).collect()))
            .collect();
        assert_eq!(seen, want, "step {step}: a query over every component");

        // The query states built at the start see every new archetype.
        let got: BTreeMap<Entity, (Option<u64>, Option<Option<u64>>)> = self
            .small_without_ghost
            .iter(world)
            .map(|(e, small, big)| (e, (small.value(), big.map(Comp::value))))
            .collect();
        let want: BTreeMap<Entity, (Option<u64>, Option<Option<u64>>)> = self
            .model
            .iter()
            .filter(|(_, c)| c.contains_key(&Kind::Small) && !c.contains_key(&Kind::Ghost))
            .map(|(&e, c)| (e, (c.get(&Kind::Small).copied(), c.get(&Kind::Big).map(|&v| Some(v)))))
            .collect();
        assert_eq!(got, want, "step {step}: kept QueryState<(Entity, &Small, Option<&Big>), Without<Ghost>>");
        if let Some(state) = &mut self.aligned_marker_or_bomb {
            let got: BTreeMap<Entity, Option<u64>> = state.iter(world).map(|(e, a)| (e, a.value())).collect();
            let want: BTreeMap<Entity, Option<u64>> = self
                .model
                .iter()
                .filter(|(_, c)| {
                    c.contains_key(&Kind::Aligned) && (c.contains_key(&Kind::Marker) || c.contains_key(&Kind::Bomb))
                })
                .map(|(&e, c)| (e, c.get(&Kind::Aligned).copied()))
                .collect();
            assert_eq!(got, want, "step {step}: kept QueryState<(Entity, &Aligned), Or<(With<Marker>, With<Bomb>)>>");
        }

        // Every value ever made is alive in the world or dropped exactly once.
        let live = live_counts();
        for kind in KINDS {
            if kind == Kind::Marker || kind == Kind::Small || kind == Kind::Odd {
                continue; // no destructor to count with
            }
            let in_model = self.model.values().filter(|c| c.contains_key(&kind)).count() as i64;
            let i = kind as usize;
            assert_eq!(live[i] - self.baseline[i], in_model, "step {step}: live {kind:?} values");
        }
        let ledger: BTreeSet<u64> = LEDGER.with(|l| l.borrow().range(self.first_serial..).copied().collect());
        let want: BTreeSet<u64> = self.model.values().filter_map(|c| c.get(&Kind::Tracked).copied()).collect();
        assert_eq!(ledger, want, "step {step}: live Tracked values");

        // The allocator: slots in use and room left.
        let hooks = self.world.entity_allocator_hooks();
        assert_eq!(hooks.slots(), self.alloc.slots.len(), "step {step}: entity slots");
        assert_eq!(hooks.spare(), self.alloc.spare(), "step {step}: spare entity slots");
    }

    /// Drops the world (which may set off the armed bomb) and checks that
    /// every value was dropped exactly once.
    pub fn finish(mut self) {
        let step = self.step;
        let world = std::mem::take(&mut self.world);
        let expect = self.armed.is_some().then_some(BOMB);
        guarded(step, expect, move || drop(world));
        self.model.clear();
        let faults = FAULTS.with(|f| std::mem::take(&mut *f.borrow_mut()));
        assert!(faults.is_empty(), "after dropping the world: destructors saw {faults:?}");
        let live = live_counts();
        assert_eq!(live, self.baseline, "after dropping the world: live values per kind (leak or double drop)");
        let ledger: Vec<u64> = LEDGER.with(|l| l.borrow().range(self.first_serial..).copied().collect());
        assert!(ledger.is_empty(), "after dropping the world: Tracked values never dropped: {ledger:?}");
        NEXT_SERIAL.set(self.next_serial);
    }
}

impl Default for Harness {
    fn default() -> Self {
        Harness::new()
    }
}

/// Runs `ops` on a new world and its model, checking them against each
/// other after every step, then drops the world and checks that every
/// value was dropped exactly once. Panics at the first disagreement, with
/// the step number in the message.
pub fn run(ops: &[Op]) {
    let mut harness = Harness::new();
    harness.check();
    for op in ops {
        harness.apply(op);
        harness.check();
        harness.step += 1;
    }
    harness.finish();
}
