//! The hierarchy workloads: a tree of [`TREE_SIZE`] entities with fan-out
//! [`FAN_OUT`], built, propagated (a 2D transform, parents first) and
//! despawned recursively, on archetable, on bevy_ecs with its own
//! `ChildOf`/`Children`, and on a `Vec`-based tree as the floor. hecs has
//! no hierarchy.

use crate::routine::{Build, Prepared, Refill, Steady};
use crate::Routine;

/// Entities in the tree.
pub const TREE_SIZE: usize = 100_000;
/// Children per inner node.
pub const FAN_OUT: usize = 4;

/// A 2D transform: rotation `angle`, then translation.
#[derive(archetable::Component, bevy_ecs::component::Component, Clone, Copy, Debug, PartialEq)]
pub struct Local {
    /// Translation.
    pub x: f32,
    /// Translation.
    pub y: f32,
    /// Rotation, radians.
    pub angle: f32,
}

/// The world transform, computed by propagation.
#[derive(archetable::Component, bevy_ecs::component::Component, Clone, Copy, Debug, PartialEq, Default)]
pub struct Global {
    /// Translation.
    pub x: f32,
    /// Translation.
    pub y: f32,
    /// Rotation, radians.
    pub angle: f32,
}

/// The local transform of node `i`.
pub fn local(i: usize) -> Local {
    Local { x: 1.0 + (i % 7) as f32, y: (i % 3) as f32, angle: 0.01 * (i % 5) as f32 }
}

/// `parent` applied after `local`.
#[inline(always)]
pub fn compose(parent: Global, local: Local) -> Global {
    let (sin, cos) = parent.angle.sin_cos();
    Global {
        x: parent.x + cos * local.x - sin * local.y,
        y: parent.y + sin * local.x + cos * local.y,
        angle: parent.angle + local.angle,
    }
}

/// The parent of node `i` (node 0 is the root) in breadth-first numbering.
pub fn parent_of(i: usize) -> usize {
    (i - 1) / FAN_OUT
}

/// Sum of every global `x`, to check the engines agree.
pub fn checksum(globals: impl Iterator<Item = Global>) -> f64 {
    globals.map(|g| g.x as f64 + g.y as f64).sum()
}

/// The tree on archetable.
pub mod ours {
    use archetable::{ChildOf, Children, Entity, QueryState, World};

    use super::*;

    /// Builds the tree, breadth first; returns the world and the root.
    pub fn build() -> (World, Entity) {
        let mut world = World::new();
        let mut handles = Vec::with_capacity(TREE_SIZE);
        handles.push(world.spawn((local(0), Global::default())));
        for i in 1..TREE_SIZE {
            let parent = handles[parent_of(i)];
            handles.push(world.spawn((local(i), Global::default(), ChildOf(parent))));
        }
        (world, handles[0])
    }

    /// The tree and its kept query.
    pub struct Tree {
        /// The world.
        pub world: World,
        root: Entity,
        nodes: QueryState<(&'static Local, &'static mut Global, Option<&'static Children>)>,
        /// Nodes to visit, with their parent's global transform.
        stack: Vec<(Entity, Global)>,
    }

    impl Tree {
        /// Builds the tree.
        pub fn new() -> Self {
            let (mut world, root) = build();
            let nodes = QueryState::new(&mut world);
            Tree { world, root, nodes, stack: Vec::new() }
        }

        /// Computes every `Global`, parents first, depth first: one lookup
        /// per node.
        pub fn propagate(&mut self) {
            self.stack.push((self.root, Global::default()));
            while let Some((node, parent)) = self.stack.pop() {
                let (local, mut global, children) = self.nodes.get_mut(&mut self.world, node).expect("a node");
                let here = compose(parent, *local);
                *global = here;
                if let Some(children) = children {
                    self.stack.extend(children.iter().map(|&child| (child, here)));
                }
            }
        }

        /// Sum over every `Global`.
        pub fn checksum(&mut self) -> f64 {
            checksum(self.world.query::<&Global>().copied())
        }
    }

    impl Default for Tree {
        fn default() -> Self {
            Tree::new()
        }
    }
}

/// The tree on bevy_ecs, with its own `ChildOf` and `Children`.
pub mod bevy {
    use bevy_ecs::entity::Entity;
    use bevy_ecs::hierarchy::{ChildOf, Children};
    use bevy_ecs::query::QueryState;
    use bevy_ecs::world::World;

    use super::*;

    /// Builds the tree, breadth first; returns the world and the root.
    pub fn build() -> (World, Entity) {
        let mut world = World::new();
        let mut handles = Vec::with_capacity(TREE_SIZE);
        handles.push(world.spawn((local(0), Global::default())).id());
        for i in 1..TREE_SIZE {
            let parent = handles[parent_of(i)];
            handles.push(world.spawn((local(i), Global::default(), ChildOf(parent))).id());
        }
        (world, handles[0])
    }

    /// The tree and its kept queries.
    pub struct Tree {
        /// The world.
        pub world: World,
        root: Entity,
        nodes: QueryState<(&'static Local, &'static mut Global, Option<&'static Children>)>,
        stack: Vec<(Entity, Global)>,
    }

    impl Tree {
        /// Builds the tree.
        pub fn new() -> Self {
            let (mut world, root) = build();
            let nodes = world.query();
            Tree { world, root, nodes, stack: Vec::new() }
        }

        /// Computes every `Global`, parents first, depth first: one lookup
        /// per node.
        pub fn propagate(&mut self) {
            self.stack.push((self.root, Global::default()));
            while let Some((node, parent)) = self.stack.pop() {
                let (local, mut global, children) = self.nodes.get_mut(&mut self.world, node).expect("a node");
                let here = compose(parent, *local);
                *global = here;
                if let Some(children) = children {
                    self.stack.extend(children.iter().map(|&child| (child, here)));
                }
            }
        }

        /// Sum over every `Global`.
        pub fn checksum(&mut self) -> f64 {
            let mut globals = self.world.query::<&Global>();
            checksum(globals.iter(&self.world).copied())
        }
    }

    impl Default for Tree {
        fn default() -> Self {
            Tree::new()
        }
    }
}

/// The floor: nodes in a `Vec`, children as index lists.
pub mod raw {
    use super::*;

    /// One node.
    pub struct Node {
        local: Local,
        global: Global,
        children: Vec<u32>,
    }

    /// Builds the tree.
    pub fn build() -> Vec<Node> {
        let mut nodes: Vec<Node> = Vec::with_capacity(TREE_SIZE);
        nodes.push(Node { local: local(0), global: Global::default(), children: Vec::new() });
        for i in 1..TREE_SIZE {
            nodes.push(Node { local: local(i), global: Global::default(), children: Vec::new() });
            nodes[parent_of(i)].children.push(i as u32);
        }
        nodes
    }

    /// Computes every `global`, parents first, depth first.
    pub fn propagate(nodes: &mut [Node], stack: &mut Vec<(u32, Global)>) {
        stack.push((0, Global::default()));
        while let Some((node, parent)) = stack.pop() {
            let node = &mut nodes[node as usize];
            let here = compose(parent, node.local);
            node.global = here;
            stack.extend(node.children.iter().map(|&child| (child, here)));
        }
    }

    /// Sum over every `global`.
    pub fn checksum(nodes: &[Node]) -> f64 {
        super::checksum(nodes.iter().map(|n| n.global))
    }
}

/// `hierarchy_spawn` on archetable.
pub fn spawn_ours() -> Box<dyn Routine> {
    Box::new(Build::new(ours::build))
}

/// `hierarchy_spawn` on bevy_ecs.
pub fn spawn_bevy() -> Box<dyn Routine> {
    Box::new(Build::new(bevy::build))
}

/// `hierarchy_spawn` on the floor.
pub fn spawn_raw() -> Box<dyn Routine> {
    Box::new(Build::new(raw::build))
}

/// `hierarchy_propagate` on archetable.
pub fn propagate_ours() -> Box<dyn Routine> {
    Box::new(Steady::new(ours::Tree::new(), ours::Tree::propagate))
}

/// `hierarchy_propagate` on bevy_ecs.
pub fn propagate_bevy() -> Box<dyn Routine> {
    Box::new(Steady::new(bevy::Tree::new(), bevy::Tree::propagate))
}

/// `hierarchy_propagate` on the floor.
pub fn propagate_raw() -> Box<dyn Routine> {
    Box::new(Steady::new((raw::build(), Vec::new()), |(nodes, stack)| raw::propagate(nodes, stack)))
}

/// `despawn_recursive_100k` on archetable.
pub fn despawn_ours() -> Box<dyn Routine> {
    Box::new(Prepared::new(ours::build, |(world, root)| {
        world.despawn_recursive(*root).expect("the root is alive");
    }))
}

/// `despawn_recursive_100k` on bevy_ecs (its despawn takes the children
/// along).
pub fn despawn_bevy() -> Box<dyn Routine> {
    Box::new(Prepared::new(bevy::build, |(world, root)| {
        world.entity_mut(*root).despawn();
    }))
}

/// `despawn_recursive_100k` on the floor: every node's list freed.
pub fn despawn_raw() -> Box<dyn Routine> {
    Box::new(Prepared::new(raw::build, |nodes| nodes.clear()))
}

/// Children under the one parent of the wide rows.
pub const WIDE: usize = 100_000;
/// Children under the parent of `wide_leave_half`, which removes every
/// other one, one by one.
pub const WIDE_LEAVE: usize = 10_000;

/// `flat_spawn_100k` on archetable: [`WIDE`] entities beside the root of
/// `wide_spawn_100k`, with the same locals and no parent: what
/// `wide_spawn_100k` costs over a plain spawn.
pub fn flat_spawn_ours() -> Box<dyn Routine> {
    Box::new(Build::new(|| {
        let mut world = archetable::World::new();
        let root = world.spawn(local(0));
        for i in 0..WIDE {
            world.spawn(local(i));
        }
        (world, root)
    }))
}

/// `flat_spawn_100k` on bevy_ecs.
pub fn flat_spawn_bevy() -> Box<dyn Routine> {
    Box::new(Build::new(|| {
        let mut world = bevy_ecs::world::World::new();
        let root = world.spawn(local(0)).id();
        for i in 0..WIDE {
            world.spawn(local(i));
        }
        (world, root)
    }))
}

/// `flat_spawn_100k` on the floor: the locals.
pub fn flat_spawn_raw() -> Box<dyn Routine> {
    Box::new(Build::new(|| (0..WIDE).map(local).collect::<Vec<Local>>()))
}

/// `wide_spawn_100k` on archetable: [`WIDE`] children of one root.
pub fn wide_spawn_ours() -> Box<dyn Routine> {
    Box::new(Build::new(|| {
        let mut world = archetable::World::new();
        let root = world.spawn(local(0));
        for i in 0..WIDE {
            world.spawn((local(i), archetable::ChildOf(root)));
        }
        (world, root)
    }))
}

/// `wide_spawn_100k` on bevy_ecs.
pub fn wide_spawn_bevy() -> Box<dyn Routine> {
    Box::new(Build::new(|| {
        let mut world = bevy_ecs::world::World::new();
        let root = world.spawn(local(0)).id();
        for i in 0..WIDE {
            world.spawn((local(i), bevy_ecs::hierarchy::ChildOf(root)));
        }
        (world, root)
    }))
}

/// A handle on the floor: 8 bytes, as an entity handle is in every engine
/// measured here.
type Handle = u64;

/// `wide_spawn_100k` on the floor: what a child spawn stores beyond
/// `flat_spawn_100k`'s locals, in plain `Vec`s at their final size: each
/// child's parent, the added and changed ticks of that parent (`ChildOf`
/// tracks changes), and the parent's list of children.
pub fn wide_spawn_raw() -> Box<dyn Routine> {
    Box::new(Build::new(wide_floor))
}

/// The floor's stores of a child spawn: locals, parents, the parents'
/// ticks and the parent's list.
type WideFloor = (Vec<Local>, Vec<Handle>, Vec<[u32; 2]>, Vec<Handle>);

/// [`WIDE`] children's stores on the floor, each `Vec` at its final size.
fn wide_floor() -> WideFloor {
    let parent: Handle = WIDE as Handle;
    let locals: Vec<Local> = (0..WIDE).map(local).collect();
    let parents: Vec<Handle> = vec![parent; WIDE];
    let ticks: Vec<[u32; 2]> = vec![[1, 1]; WIDE];
    let children: Vec<Handle> = (0..WIDE as Handle).collect();
    (locals, parents, ticks, children)
}

/// Empties the floor's stores, keeping their memory.
fn empty_wide_floor((locals, parents, ticks, children): &mut WideFloor) {
    locals.clear();
    parents.clear();
    ticks.clear();
    children.clear();
}

/// `wide_user_spawn_100k` on the floor: `wide_spawn_raw` without the
/// ticks (the user's relationship does not track changes).
pub fn wide_user_spawn_raw() -> Box<dyn Routine> {
    Box::new(Build::new(|| {
        let target: Handle = WIDE as Handle;
        let locals: Vec<Local> = (0..WIDE).map(local).collect();
        let targets: Vec<Handle> = vec![target; WIDE];
        let sources: Vec<Handle> = (0..WIDE as Handle).collect();
        (locals, targets, sources)
    }))
}

/// Spawns a root and `n` entities beside it, with the locals of
/// `flat_spawn_100k`; returns the root.
pub fn flat_fill_ours(world: &mut archetable::World, n: usize) -> archetable::Entity {
    let root = world.spawn(local(0));
    for i in 0..n {
        world.spawn(local(i));
    }
    root
}

/// [`flat_fill_ours`] on bevy_ecs.
pub fn flat_fill_bevy(world: &mut bevy_ecs::world::World, n: usize) -> bevy_ecs::entity::Entity {
    let root = world.spawn(local(0)).id();
    for i in 0..n {
        world.spawn(local(i));
    }
    root
}

/// Spawns a root and `n` children of it, with the locals of
/// `wide_spawn_100k`; returns the root.
pub fn wide_fill_ours(world: &mut archetable::World, n: usize) -> archetable::Entity {
    let root = world.spawn(local(0));
    for i in 0..n {
        world.spawn((local(i), archetable::ChildOf(root)));
    }
    root
}

/// [`wide_fill_ours`] on bevy_ecs.
pub fn wide_fill_bevy(world: &mut bevy_ecs::world::World, n: usize) -> bevy_ecs::entity::Entity {
    let root = world.spawn(local(0)).id();
    for i in 0..n {
        world.spawn((local(i), bevy_ecs::hierarchy::ChildOf(root)));
    }
    root
}

/// `flat_respawn_100k` on archetable: `flat_spawn_100k` into a world
/// cleared before each run (outside the timing), whose tables keep their
/// memory: the spawns' own work, without the allocator's.
pub fn flat_respawn_ours() -> Box<dyn Routine> {
    Box::new(Refill::new(archetable::World::new(), archetable::World::clear, |world| {
        flat_fill_ours(world, WIDE);
    }))
}

/// `flat_respawn_100k` on bevy_ecs (`World::clear_entities`).
pub fn flat_respawn_bevy() -> Box<dyn Routine> {
    Box::new(Refill::new(bevy_ecs::world::World::new(), bevy_ecs::world::World::clear_entities, |world| {
        flat_fill_bevy(world, WIDE);
    }))
}

/// `flat_respawn_100k` on the floor: the locals, pushed into a `Vec` that
/// keeps its capacity.
pub fn flat_respawn_raw() -> Box<dyn Routine> {
    Box::new(Refill::new(Vec::new(), Vec::clear, |locals: &mut Vec<Local>| {
        locals.extend((0..WIDE).map(local));
    }))
}

/// `wide_respawn_100k` on archetable: `wide_spawn_100k` into a world
/// cleared before each run, as [`flat_respawn_ours`].
pub fn wide_respawn_ours() -> Box<dyn Routine> {
    Box::new(Refill::new(archetable::World::new(), archetable::World::clear, |world| {
        wide_fill_ours(world, WIDE);
    }))
}

/// `wide_respawn_100k` on bevy_ecs.
pub fn wide_respawn_bevy() -> Box<dyn Routine> {
    Box::new(Refill::new(bevy_ecs::world::World::new(), bevy_ecs::world::World::clear_entities, |world| {
        wide_fill_bevy(world, WIDE);
    }))
}

/// `wide_clear_100k` on archetable: `World::clear` of a parent and its
/// [`WIDE`] children, built before each run (outside the timing).
pub fn wide_clear_ours() -> Box<dyn Routine> {
    let build = || {
        let mut world = archetable::World::new();
        wide_fill_ours(&mut world, WIDE);
        world
    };
    Box::new(Prepared::new(build, archetable::World::clear))
}

/// `wide_clear_100k` on bevy_ecs (`World::clear_entities`).
pub fn wide_clear_bevy() -> Box<dyn Routine> {
    let build = || {
        let mut world = bevy_ecs::world::World::new();
        wide_fill_bevy(&mut world, WIDE);
        world
    };
    Box::new(Prepared::new(build, bevy_ecs::world::World::clear_entities))
}

/// `wide_clear_100k` on the floor: [`wide_spawn_raw`]'s stores emptied,
/// keeping their memory.
pub fn wide_clear_raw() -> Box<dyn Routine> {
    Box::new(Prepared::new(wide_floor, empty_wide_floor))
}

/// `wide_respawn_100k` on the floor: [`wide_spawn_raw`]'s stores, pushed
/// into `Vec`s that keep their capacity.
pub fn wide_respawn_raw() -> Box<dyn Routine> {
    Box::new(Refill::new(WideFloor::default(), empty_wide_floor, |(locals, parents, ticks, children)| {
        let parent: Handle = WIDE as Handle;
        for i in 0..WIDE {
            locals.push(local(i));
            parents.push(parent);
            ticks.push([1, 1]);
            children.push(i as Handle);
        }
    }))
}

/// A relationship declared the way a user declares one: the entity is
/// docked at the one it names (`wide_user_spawn_100k`).
#[derive(archetable::Component, Debug, PartialEq)]
#[component(relationship(target = Docked))]
pub struct DockedAt(pub archetable::Entity);

/// The entities docked at an entity, kept by the engine from their
/// [`DockedAt`].
#[derive(archetable::Component, Debug)]
#[component(relationship_target(source = DockedAt))]
pub struct Docked(pub archetable::SourceList);

/// A target with `n` sources docked at it through [`DockedAt`], each with
/// the local of `wide_spawn_100k`'s children; returns the world and the
/// target.
pub fn wide_user_ours(n: usize) -> (archetable::World, archetable::Entity) {
    let mut world = archetable::World::new();
    let target = world.spawn(local(0));
    for i in 0..n {
        world.spawn((local(i), DockedAt(target)));
    }
    (world, target)
}

/// `wide_user_spawn_100k` on archetable: [`WIDE`] sources of one target
/// through a relationship of the user's.
pub fn wide_user_spawn_ours() -> Box<dyn Routine> {
    Box::new(Build::new(|| wide_user_ours(WIDE)))
}

/// The entities of `hierarchy_spawn`'s tree (both transforms, spawned in
/// the same order, handles kept) without their `ChildOf`: what a spawn
/// costs in the tree without the hierarchy.
pub fn tree_flat_ours() -> (archetable::World, Vec<archetable::Entity>) {
    let mut world = archetable::World::new();
    let mut handles = Vec::with_capacity(TREE_SIZE);
    for i in 0..TREE_SIZE {
        handles.push(world.spawn((local(i), Global::default())));
    }
    (world, handles)
}

/// `tree_flat_spawn_100k` on archetable.
pub fn tree_flat_spawn_ours() -> Box<dyn Routine> {
    Box::new(Build::new(tree_flat_ours))
}

/// `tree_flat_spawn_100k` on bevy_ecs.
pub fn tree_flat_spawn_bevy() -> Box<dyn Routine> {
    Box::new(Build::new(|| {
        let mut world = bevy_ecs::world::World::new();
        let mut handles = Vec::with_capacity(TREE_SIZE);
        for i in 0..TREE_SIZE {
            handles.push(world.spawn((local(i), Global::default())).id());
        }
        (world, handles)
    }))
}

/// `tree_flat_spawn_100k` on the floor: both transforms of every node.
pub fn tree_flat_spawn_raw() -> Box<dyn Routine> {
    Box::new(Build::new(|| (0..TREE_SIZE).map(|i| (local(i), Global::default())).collect::<Vec<_>>()))
}

/// A root with `n` children on archetable.
fn wide_ours(n: usize) -> (archetable::World, archetable::Entity, Vec<archetable::Entity>) {
    let mut world = archetable::World::new();
    let root = world.spawn(local(0));
    let children = (0..n).map(|i| world.spawn((local(i), archetable::ChildOf(root)))).collect();
    (world, root, children)
}

/// A root with `n` children on bevy_ecs.
fn wide_bevy(n: usize) -> (bevy_ecs::world::World, bevy_ecs::entity::Entity, Vec<bevy_ecs::entity::Entity>) {
    let mut world = bevy_ecs::world::World::new();
    let root = world.spawn(local(0)).id();
    let children = (0..n).map(|i| world.spawn((local(i), bevy_ecs::hierarchy::ChildOf(root))).id()).collect();
    (world, root, children)
}

/// `wide_despawn_recursive_100k` on archetable: the root of [`WIDE`]
/// children, despawned with them.
pub fn wide_despawn_ours() -> Box<dyn Routine> {
    Box::new(Prepared::new(
        || wide_ours(WIDE),
        |(world, root, _)| {
            world.despawn_recursive(*root).expect("the root is alive");
        },
    ))
}

/// `wide_despawn_recursive_100k` on bevy_ecs.
pub fn wide_despawn_bevy() -> Box<dyn Routine> {
    Box::new(Prepared::new(
        || wide_bevy(WIDE),
        |(world, root, _)| {
            world.entity_mut(*root).despawn();
        },
    ))
}

/// `wide_despawn_recursive_100k` on the floor: the list freed.
pub fn wide_despawn_raw() -> Box<dyn Routine> {
    Box::new(Prepared::new(|| (0..WIDE as u32).collect::<Vec<u32>>(), |children| children.clear()))
}

/// `wide_leave_half_10k` on archetable: every other child of a
/// [`WIDE_LEAVE`]-wide parent despawned, one call each, in join order.
pub fn wide_leave_ours() -> Box<dyn Routine> {
    Box::new(Prepared::new(
        || wide_ours(WIDE_LEAVE),
        |(world, _, children)| {
            for &child in children.iter().step_by(2) {
                world.despawn(child).expect("a child");
            }
        },
    ))
}

/// `wide_leave_half_10k` on bevy_ecs.
pub fn wide_leave_bevy() -> Box<dyn Routine> {
    Box::new(Prepared::new(
        || wide_bevy(WIDE_LEAVE),
        |(world, _, children)| {
            for &child in children.iter().step_by(2) {
                world.despawn(child);
            }
        },
    ))
}

/// `wide_leave_half_10k` on the floor: the same removals from an ordered
/// `Vec` (search and shift).
pub fn wide_leave_raw() -> Box<dyn Routine> {
    Box::new(Prepared::new(
        || (0..WIDE_LEAVE as u32).collect::<Vec<u32>>(),
        |children| {
            for child in (0..WIDE_LEAVE as u32).step_by(2) {
                let at = children.iter().position(|&c| c == child).expect("a child");
                children.remove(at);
            }
        },
    ))
}
