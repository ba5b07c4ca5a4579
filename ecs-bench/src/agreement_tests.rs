//! The implementations must do the same work: same worlds, same results.
//! Small sizes keep these fast in debug builds; the report runs the full
//! sizes.

use crate::raw::{RawBodies, RawMovers, RawSchedule, RawTables};
use crate::save_load::{self, Direction, Format, HecsLayout};
use crate::{frag, ours, with_bevy, with_hecs, workloads, Implementation, Section};

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-6 * a.abs().max(b.abs()).max(1.0)
}

#[test]
fn iteration_moves_every_entity_alike() {
    let n = 100;
    let mut ours = ours::Movers::new(ours::spawn_bodies(n));
    let mut hecs = with_hecs::spawn_bodies(n);
    let mut bevy = with_bevy::Movers::new(with_bevy::spawn_bodies(n));
    let mut raw = RawBodies::spawn(n);
    for _ in 0..3 {
        ours.step();
        with_hecs::step_movers(&mut hecs);
        bevy.step();
        raw.step();
    }
    let want: f64 = raw.positions.iter().map(|p| p.0.iter().sum::<f32>() as f64).sum();
    assert!(close(ours.position_sum(), want));
    assert!(close(with_hecs::position_sum(&mut hecs), want));
    assert!(close(bevy.position_sum(), want));
    assert_eq!(ours.world.len(), n);
}

#[test]
fn tracked_iteration_moves_every_entity_as_untracked_does() {
    let n = 100;
    let mut tracked = ours::TrackedMovers::new(ours::spawn_tracked_bodies(n));
    let mut untracked = ours::Movers::new(ours::spawn_bodies(n));
    let mut bevy = with_bevy::Movers::new(with_bevy::spawn_bodies(n));
    for _ in 0..3 {
        tracked.step();
        untracked.step();
        bevy.step();
    }
    let want = untracked.position_sum();
    assert!(close(tracked.position_sum(), want));
    assert!(close(bevy.position_sum(), want));
    assert_eq!(tracked.world.len(), n);
    let components = tracked.world.components();
    let id = components.id::<ours::TrackedPosition>().expect("registered");
    assert!(components.info(id).tracks_changes());
    let id = untracked.world.components().id::<crate::Position>().expect("registered");
    assert!(!untracked.world.components().info(id).tracks_changes());
}

#[test]
fn save_and_load_round_trips_restore_the_same_data() {
    use archetable::data::SerdeWorldExt;

    let n = 500;
    let want_sum: f64 = save_load::entities(n).iter().map(|(p, v, h, t)| save_load::field_sum(p, v, h, t)).sum();
    let ours_world = save_load::ours::world(n);
    let hecs_world = save_load::with_hecs::world(n);
    assert_eq!(save_load::ours::checksum(&ours_world), (n, want_sum));
    assert_eq!(save_load::with_hecs::checksum(&hecs_world), (n, want_sum));
    let registry = ours_world.serde_registry();
    for format in Format::ALL {
        let saved = save_load::ours::save(&ours_world, format);
        let loaded = save_load::ours::load(&registry, format, &saved);
        assert_eq!(save_load::ours::checksum(&loaded), (n, want_sum), "archetable, {format:?}");
        assert!(save_load::ours::same(&ours_world, &loaded), "archetable, {format:?}");

        for layout in [HecsLayout::Column, HecsLayout::Row] {
            if layout == HecsLayout::Row && !format.has_hecs_rows() {
                continue;
            }
            let saved = save_load::with_hecs::save(&hecs_world, format, layout);
            let loaded = save_load::with_hecs::load(format, layout, &saved);
            assert_eq!(save_load::with_hecs::checksum(&loaded), (n, want_sum), "hecs, {format:?}, {layout:?}");
            assert_eq!(loaded.len() as usize, n);
            // The handles survive too, and every field.
            assert!(save_load::with_hecs::same(&hecs_world, &loaded), "hecs, {format:?}, {layout:?}");
        }
    }
    // `same` notices a changed field.
    let mut changed = save_load::ours::world(n);
    let first = changed.query::<archetable::Entity>().next().expect("an entity");
    changed.get_mut::<save_load::Name>(first).expect("a name").0.push('x');
    assert!(!save_load::ours::same(&ours_world, &changed));
    let changed = save_load::with_hecs::world(n);
    let first = changed.iter().next().expect("an entity").entity();
    changed.get::<&mut save_load::Name>(first).expect("a name").0.push('x');
    assert!(!save_load::with_hecs::same(&hecs_world, &changed));
}

#[test]
fn save_and_load_workloads_cover_every_format_on_ecs_and_hecs() {
    for format in Format::ALL {
        for direction in [Direction::Save, Direction::Load] {
            let section = Section::SaveLoad(format, direction);
            let workload = workloads().into_iter().find(|w| w.section == section).expect("a workload per cell");
            assert_eq!(workload.section.name(), Some("save_load"));
            assert!(workload.name.starts_with("save_load_"));
            assert!((workload.routine)(Implementation::Bevy).is_none());
            assert!((workload.routine)(Implementation::Raw).is_none());
            let rows = workloads().into_iter().find(|w| w.section == Section::SaveLoadHecsRows(format, direction));
            assert_eq!(rows.is_some(), format.has_hecs_rows(), "{format:?}");
            if let Some(rows) = rows {
                assert_eq!(rows.section.name(), Some("save_load"));
                assert!((rows.routine)(Implementation::Ours).is_none());
            }
        }
    }
}

#[test]
fn fragmented_worlds_double_every_data_alike() {
    let mut ours = ours::Frag::new();
    let mut hecs = frag::hecs_world();
    let mut bevy = with_bevy::Frag::new();
    let mut raw = frag::raw();
    let mut raw_for = frag::raw();
    for _ in 0..2 {
        ours.step();
        with_hecs::frag_step(&mut hecs);
        bevy.step();
        crate::raw::frag_step(&mut raw);
        crate::raw::frag_step_for(&mut raw_for);
    }
    assert_eq!(raw_for, raw);
    let want: f64 = raw.iter().flatten().map(|d| d.0 as f64).sum();
    assert_eq!(want, 4.0 * (frag::ARCHETYPES * (0..frag::PER_ARCHETYPE).sum::<usize>()) as f64);
    assert!(close(ours.data_sum(), want));
    assert!(close(with_hecs::data_sum(&mut hecs), want));
    assert!(close(bevy.data_sum(), want));
    assert_eq!(ours.world.archetypes().as_slice().iter().filter(|a| !a.is_empty()).count(), frag::ARCHETYPES);
}

#[test]
fn heavy_compute_gives_the_same_bodies() {
    // More bodies than a batch of 64, so the batched variants split them.
    let n = 300;
    let mut ours = ours::Heavy::new(n);
    let mut hecs = with_hecs::spawn_bodies(n);
    let mut bevy = with_bevy::Heavy::new(n);
    let mut raw = RawBodies::spawn(n);
    let (mut ours_batched, mut bevy_batched) = (ours::Heavy::new(n), with_bevy::Heavy::new(n));
    ours.step();
    ours_batched.step_batched();
    with_hecs::heavy_step(&mut hecs);
    bevy.step();
    bevy_batched.step_batched();
    raw.heavy_step();
    let want: f64 = raw
        .positions
        .iter()
        .zip(&raw.transforms)
        .map(|(p, t)| p.0.iter().sum::<f32>() as f64 + t.0.iter().flatten().sum::<f32>() as f64)
        .sum();
    assert!(close(ours.checksum(), want));
    assert!(close(ours_batched.checksum(), want));
    assert!(close(with_hecs::heavy_checksum(&mut hecs), want));
    assert!(close(bevy.checksum(), want));
    assert!(close(bevy_batched.checksum(), want));
}

#[test]
fn schedules_swap_the_same_values() {
    let n = 10;
    let mut ours = ours::Schedule::new(n);
    let mut hecs = with_hecs::schedule_world(n);
    let mut bevy = with_bevy::Schedule::new(n);
    let mut raw = RawSchedule::new(n);
    assert_eq!(ours.sums(), raw.sums());
    for _ in 0..3 {
        ours.run();
        with_hecs::schedule_run(&mut hecs);
        bevy.run();
        raw.run();
        let want = raw.sums();
        assert_eq!(ours.sums(), want);
        assert_eq!(with_hecs::schedule_sums(&mut hecs), want);
        assert_eq!(bevy.sums(), want);
    }
    // After an odd number of runs, A and B have swapped.
    assert_eq!(raw.sums()[0], 0.0);
}

#[test]
fn schedules_of_for_loops_swap_what_the_others_swap() {
    let n = 10;
    let mut ours = ours::Schedule::new_for(n);
    let mut hecs = with_hecs::schedule_world(n);
    let mut bevy = with_bevy::Schedule::new_for(n);
    let mut raw = RawSchedule::new(n);
    let mut raw_for = RawSchedule::new(n);
    for _ in 0..3 {
        ours.run();
        with_hecs::schedule_run_for(&mut hecs);
        bevy.run();
        raw.run();
        raw_for.run_for();
        let want = raw.sums();
        assert_eq!(raw_for.sums(), want);
        assert_eq!(ours.sums(), want);
        assert_eq!(with_hecs::schedule_sums(&mut hecs), want);
        assert_eq!(bevy.sums(), want);
    }
}

#[test]
fn the_parallel_sweep_moves_every_entity_as_the_serial_loop_does() {
    use crate::par_sweep;
    // Enough work that archetable may share the rows.
    let n = 3000;
    let mut want = RawMovers::spawn(n);
    for _ in 0..2 {
        for (p, v) in want.positions.iter_mut().zip(&want.velocities) {
            par_sweep::drift(p, v);
        }
    }
    let want: f64 = want.positions.iter().map(|p| p.0.iter().sum::<f32>() as f64).sum();
    for parallel in [true, false] {
        let mut ours = par_sweep::ours::Sweep::new(n);
        let mut hecs = par_sweep::with_hecs::world(n);
        let mut bevy = par_sweep::with_bevy::Sweep::new(n);
        for _ in 0..2 {
            if parallel {
                ours.par();
                par_sweep::with_hecs::par(&mut hecs);
                bevy.par();
            } else {
                ours.serial();
                par_sweep::with_hecs::serial(&mut hecs);
                bevy.serial();
            }
        }
        assert!(close(ours.position_sum(), want), "parallel: {parallel}");
        assert!(close(with_hecs::position_sum(&mut hecs), want), "parallel: {parallel}");
        assert!(close(bevy.position_sum(), want), "parallel: {parallel}");
    }
    let sweep: Vec<_> = workloads().into_iter().filter(|w| w.section.name() == Some("par")).collect();
    assert_eq!(sweep.len(), 2 * par_sweep::COUNTS.len());
    for (entities, par, serial) in par_sweep::COUNTS {
        let par = sweep.iter().find(|w| w.name == par).expect("listed");
        assert_eq!(par.section, Section::Parallel { entities, parallel: true });
        assert_eq!(par.baseline, Some(serial));
        assert!((par.routine)(Implementation::Raw).is_none());
    }
}

#[test]
fn the_heavy_sweep_gives_the_same_bodies_however_it_is_called() {
    use crate::par_sweep::{self, heavy::Sweep, HeavyCall};
    // 300 bodies of heavy work: the default call shares them.
    let n = 300;
    let mut sums = Vec::new();
    for call in [HeavyCall::Serial, HeavyCall::Default, HeavyCall::Batched] {
        let mut sweep = Sweep::new(n);
        for _ in 0..2 {
            match call {
                HeavyCall::Default => sweep.par(),
                HeavyCall::Serial => sweep.serial(),
                HeavyCall::Batched => sweep.batched(),
            }
        }
        sums.push(sweep.checksum());
    }
    // Each body's work is the same on any thread: bit for bit.
    assert_eq!(sums[0].to_bits(), sums[1].to_bits());
    assert_eq!(sums[0].to_bits(), sums[2].to_bits());
    let mut raw = RawBodies::spawn(n);
    for _ in 0..2 {
        for ((t, p), v) in raw.transforms.iter_mut().zip(&mut raw.positions).zip(&raw.velocities) {
            par_sweep::heavy_work(t, p, v);
        }
    }
    let want: f64 = raw
        .positions
        .iter()
        .zip(&raw.transforms)
        .map(|(p, t)| p.0.iter().sum::<f32>() as f64 + t.0.iter().flatten().sum::<f32>() as f64)
        .sum();
    assert!(close(sums[0], want), "{} against {want}", sums[0]);

    let heavy: Vec<_> = workloads().into_iter().filter(|w| w.section.name() == Some("heavy")).collect();
    assert_eq!(heavy.len(), 3 * par_sweep::HEAVY_COUNTS.len());
    for (entities, default, serial, batched) in par_sweep::HEAVY_COUNTS {
        for (name, call) in [(default, HeavyCall::Default), (serial, HeavyCall::Serial), (batched, HeavyCall::Batched)]
        {
            let workload = heavy.iter().find(|w| w.name == name).expect("listed");
            assert_eq!(workload.section, Section::Heavy { entities, call });
            assert!((workload.routine)(Implementation::Ours).is_some());
            assert!((workload.routine)(Implementation::Hecs).is_none());
        }
    }
}

#[test]
fn add_remove_leaves_every_entity_as_it_was() {
    let n = 50;
    let (mut world, entities) = ours::add_remove_world(n);
    ours::add_remove_all(&mut world, &entities);
    world.check_invariants().unwrap();
    for (i, &entity) in entities.iter().enumerate() {
        assert_eq!(world.get::<crate::A>(entity), Some(&crate::A(i as f32)));
        assert!(!world.has::<crate::B>(entity));
    }

    let (mut hecs, entities) = with_hecs::add_remove_world(n);
    with_hecs::add_remove_all(&mut hecs, &entities);
    assert!(entities.iter().all(|&e| hecs.satisfies::<&crate::A>(e) && !hecs.satisfies::<&crate::B>(e)));

    let (mut bevy, entities) = with_bevy::add_remove_world(n);
    with_bevy::add_remove_all(&mut bevy, &entities);
    assert!(entities.iter().all(|&e| bevy.entity(e).contains::<crate::A>() && !bevy.entity(e).contains::<crate::B>()));

    let mut raw = RawTables::new(n);
    raw.add_remove_all();
    assert_eq!(raw.len(), n);
}

/// Archetypes of a bevy world that hold `Position`: all of them, and the
/// populated ones. (A bevy world keeps entities of its own, in archetypes of
/// their own.)
fn bevy_archetypes_with_position(world: &bevy_ecs::world::World) -> (usize, usize) {
    let id = world.component_id::<crate::Position>().expect("registered");
    let with: Vec<_> = world.archetypes().iter().filter(|a| a.contains(id)).collect();
    (with.len(), with.iter().filter(|a| !a.is_empty()).count())
}

#[test]
fn sparse_worlds_have_the_same_archetypes_and_matches() {
    let mut ours = ours::Movers::new(ours::sparse_world());
    let mut hecs = with_hecs::sparse_world();
    let mut bevy = with_bevy::Movers::new(with_bevy::sparse_world());
    let populated = crate::SPARSE_ARCHETYPES;
    assert_eq!(ours.world.archetypes().as_slice().iter().filter(|a| !a.is_empty()).count(), populated);
    assert_eq!(hecs.archetypes().filter(|a| !a.is_empty()).count(), populated);
    assert_eq!(bevy_archetypes_with_position(&bevy.world), (populated, populated));
    // Building by inserts made no archetype beyond the final ones.
    assert!(ours.world.archetypes().len() <= populated + 1);

    let matched = crate::SPARSE_ENTITIES / crate::SPARSE_EVERY;
    assert_eq!(ours.world.query::<(&crate::Position, &crate::Velocity)>().count(), matched);
    assert_eq!(hecs.query_mut::<(&crate::Position, &crate::Velocity)>().into_iter().count(), matched);
    ours.step();
    with_hecs::step_movers(&mut hecs);
    bevy.step();
    let mut raw = crate::raw::sparse_tables();
    raw.iter_mut().for_each(RawMovers::step);
    let want: f64 = raw.iter().flat_map(|t| &t.positions).map(|p| p.0.iter().sum::<f32>() as f64).sum();
    assert!(close(ours.position_sum(), want));
    assert!(close(with_hecs::position_sum(&mut hecs), want));
    assert!(close(bevy.position_sum(), want));
}

#[test]
fn many_archetype_worlds_have_one_archetype_per_entity() {
    let n = 300;
    let mut ours = ours::many_archetypes_world(n);
    let mut hecs = with_hecs::many_archetypes_world(n);
    let mut bevy = with_bevy::many_archetypes_world(n);
    assert_eq!(ours.archetypes().as_slice().iter().filter(|a| !a.is_empty()).count(), n);
    assert!(ours.archetypes().len() <= n + 1);
    assert_eq!(hecs.archetypes().filter(|a| !a.is_empty()).count(), n);
    assert_eq!(bevy_archetypes_with_position(&bevy), (n, n));
    ours::first_query(&mut ours);
    with_hecs::step_movers(&mut hecs);
    with_bevy::first_query(&mut bevy);
    let want: f64 = (0..n).map(|k| 3.0 * k as f64 + 1.75).sum();
    assert!(close(ours::Movers::new(ours).position_sum(), want));
    assert!(close(with_hecs::position_sum(&mut hecs), want));
    assert!(close(with_bevy::Movers::new(bevy).position_sum(), want));
}

#[test]
fn despawning_in_random_order_empties_every_world() {
    let n = 500;
    let (mut world, order) = ours::despawn_world(n);
    ours::despawn_all(&mut world, &order);
    assert!(world.is_empty());
    let (mut hecs, order) = with_hecs::despawn_world(n);
    with_hecs::despawn_all(&mut hecs, &order);
    assert!(hecs.is_empty());
    let (mut bevy, order) = with_bevy::despawn_world(n);
    with_bevy::despawn_all(&mut bevy, &order);
    assert_eq!(bevy.query::<&crate::Position>().iter(&bevy).count(), 0);
}

#[test]
fn every_small_routine_runs_with_its_set_up() {
    // The large workloads (10^5 and more entities, 10^4 archetypes) take
    // too long in a debug build; their worlds are checked at smaller sizes
    // above.
    let small = [
        "simple_insert",
        "simple_iter",
        "frag_iter",
        "schedule",
        "schedule_for",
        "add_remove",
        "iter_1k",
        "iter_10k",
        "par_10",
        "par_1k_serial",
        "heavy_10",
        "heavy_30_batch64",
        "heavy_compute_batch64",
    ];
    for workload in workloads().into_iter().filter(|w| small.contains(&w.name)) {
        // The parallel sweep has no floor; the heavy sweep is archetable's
        // alone.
        let sweep = workload.section.name() == Some("par");
        let heavy = workload.section.name() == Some("heavy");
        let present = |i: Implementation| match i {
            Implementation::Ours => true,
            Implementation::Raw => !sweep && !heavy,
            _ => !heavy,
        };
        for which in Implementation::ALL.into_iter().filter(|&i| present(i)) {
            let mut routine = (workload.routine)(which).unwrap_or_else(|| panic!("{} has {:?}", workload.name, which));
            crate::routine::time_runs(routine.as_mut(), 2);
        }
    }
    let tracked = workloads().into_iter().find(|w| w.name == "tracked_iter").expect("listed");
    assert_eq!(tracked.baseline, Some("simple_iter"));
    assert!((tracked.routine)(Implementation::Hecs).is_none(), "hecs does not track changes");
    for which in [Implementation::Ours, Implementation::Bevy, Implementation::Raw] {
        crate::routine::time_runs((tracked.routine)(which).expect("present").as_mut(), 2);
    }
    let names: Vec<_> = workloads().iter().map(|w| w.name).collect();
    for name in ["first_query_10k_archetypes", "despawn_100k_random"] {
        let workload = workloads().into_iter().find(|w| w.name == name).unwrap();
        assert!((workload.routine)(Implementation::Raw).is_none(), "{name} has no floor");
        assert!(names.contains(&name));
    }
}

#[test]
fn the_user_relationship_lists_every_source_and_the_flat_tree_has_no_parents() {
    use crate::hierarchy::{self, Docked, DockedAt, TREE_SIZE};
    let (mut world, target) = hierarchy::wide_user_ours(1_000);
    let sources: Vec<archetable::Entity> =
        world.query::<(archetable::Entity, &DockedAt)>().map(|(entity, _)| entity).collect();
    assert_eq!(sources.len(), 1_000);
    assert_eq!(world.get::<Docked>(target).expect("the target's list").0, sources);
    assert_eq!(world.len(), 1_001);
    world.despawn(sources[0]).expect("a source");
    assert_eq!(world.get::<Docked>(target).expect("the target's list").0, sources[1..].to_vec());

    let (world, handles) = hierarchy::tree_flat_ours();
    assert_eq!((world.len(), handles.len()), (TREE_SIZE, TREE_SIZE));
    assert!(handles.iter().all(|&e| world.parent(e).is_none() && world.has::<hierarchy::Global>(e)));
}

#[test]
fn a_cleared_world_takes_the_same_children_again() {
    use crate::hierarchy::{flat_fill_bevy, flat_fill_ours, wide_fill_bevy, wide_fill_ours};
    let mut world = archetable::World::new();
    for _ in 0..2 {
        world.clear();
        let root = wide_fill_ours(&mut world, 1_000);
        assert_eq!(world.len(), 1_001);
        assert_eq!(world.children(root).len(), 1_000);
        let children: Vec<archetable::Entity> = world.children(root).iter().copied().collect();
        assert!(children.iter().all(|&child| world.parent(child) == Some(root)));
        world.clear();
        let root = flat_fill_ours(&mut world, 1_000);
        assert_eq!(world.len(), 1_001);
        assert!(world.children(root).is_empty());
    }
    let mut world = bevy_ecs::world::World::new();
    for _ in 0..2 {
        world.clear_entities();
        let root = wide_fill_bevy(&mut world, 1_000);
        assert_eq!(world.query::<&crate::hierarchy::Local>().iter(&world).count(), 1_001);
        let children = world.get::<bevy_ecs::hierarchy::Children>(root).expect("a parent");
        assert_eq!(children.len(), 1_000);
        world.clear_entities();
        let root = flat_fill_bevy(&mut world, 1_000);
        assert_eq!(world.query::<&crate::hierarchy::Local>().iter(&world).count(), 1_001);
        assert!(world.get::<bevy_ecs::hierarchy::Children>(root).is_none());
    }
}

#[test]
fn hierarchy_propagation_agrees_and_despawn_takes_the_whole_tree() {
    use crate::hierarchy::{self, TREE_SIZE};
    let mut ours = hierarchy::ours::Tree::new();
    let mut bevy = hierarchy::bevy::Tree::new();
    let mut raw = hierarchy::raw::build();
    ours.propagate();
    bevy.propagate();
    hierarchy::raw::propagate(&mut raw, &mut Vec::new());
    let want = hierarchy::raw::checksum(&raw);
    assert!(want != 0.0);
    assert!(close(ours.checksum(), want), "{} against {want}", ours.checksum());
    assert!(close(bevy.checksum(), want), "{} against {want}", bevy.checksum());
    assert_eq!(ours.world.len(), TREE_SIZE);

    let (mut world, root) = hierarchy::ours::build();
    assert_eq!(world.descendants(root).count(), TREE_SIZE - 1);
    assert_eq!(world.despawn_recursive(root), Ok(TREE_SIZE));
    assert!(world.is_empty());
    let (mut world, root) = hierarchy::bevy::build();
    world.entity_mut(root).despawn();
    assert_eq!(world.query::<&hierarchy::Local>().iter(&world).count(), 0);
}

#[test]
fn sparse_add_remove_and_boosts_agree() {
    let n = 50;
    let (mut world, entities) = ours::add_remove_world(n);
    ours::add_remove_sparse_all(&mut world, &entities);
    world.check_invariants().unwrap();
    assert!(entities.iter().all(|&e| !world.has::<crate::sparse_types::SparseB>(e)));
    let (mut bevy, entities) = with_bevy::add_remove_world(n);
    with_bevy::add_remove_sparse_all(&mut bevy, &entities);
    assert!(entities.iter().all(|&e| !bevy.entity(e).contains::<crate::sparse_types::SparseB>()));

    // One boost step: every other mover's x grows by its boost, on both
    // storages and in both engines.
    let sum_ours = |sparse: bool| {
        let mut world = ours::boosted_world(n, sparse);
        let mut table = archetable::QueryState::new(&mut world);
        let mut set = archetable::QueryState::new(&mut world);
        if sparse {
            ours::boost_sparse_step(&mut world, &mut set);
        } else {
            ours::boost_table_step(&mut world, &mut table);
        }
        world.query::<&crate::Position>().map(|p| p.0[0] as f64).sum::<f64>()
    };
    let sum_bevy = |sparse: bool| {
        let mut world = with_bevy::boosted_world(n, sparse);
        if sparse {
            let mut q = world.query::<(&mut crate::Position, &crate::sparse_types::SparseBoost)>();
            q.iter_mut(&mut world).for_each(|(mut p, b)| p.0[0] += b.0);
        } else {
            let mut q = world.query::<(&mut crate::Position, &crate::sparse_types::Boost)>();
            q.iter_mut(&mut world).for_each(|(mut p, b)| p.0[0] += b.0);
        }
        let mut q = world.query::<&crate::Position>();
        q.iter(&world).map(|p| p.0[0] as f64).sum::<f64>()
    };
    let unboosted: f64 = (0..n).map(|i| i as f64).sum();
    let boosts: f64 = (0..n).filter(|i| i % 2 == 0).map(|i| 1.0 + (i % 7) as f64).sum();
    for sparse in [false, true] {
        assert!(close(sum_ours(sparse), unboosted + boosts), "ours, sparse: {sparse}");
        assert!(close(sum_bevy(sparse), unboosted + boosts), "bevy, sparse: {sparse}");
    }
}
