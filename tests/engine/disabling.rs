//! Disabled entities: every query path hides them unless the query names
//! `Disabled`; handles still reach them; disabling runs no hook of the
//! entity's other components; other markers can hide entities the same
//! way (a prefab template).

use std::sync::{Arc, Mutex};

use archetable::prelude::*;

#[derive(Component, Debug, PartialEq, Clone)]
#[component(track_changes, clone)]
struct Hp(u32);

#[derive(Component, Debug, PartialEq, Clone)]
#[component(clone)]
struct Speed(u32);

#[derive(Component, Clone)]
#[component(clone)]
struct Template;

#[derive(Component)]
#[component(storage = "sparse")]
struct SparseMark;

/// Three entities with `Hp(1)`, `Hp(2)`, `Hp(3)`; the second disabled.
fn world_with_disabled() -> (World, [Entity; 3]) {
    let mut world = World::new();
    let a = world.spawn((Hp(1), Speed(10)));
    let b = world.spawn((Hp(2), Speed(20)));
    let c = world.spawn(Hp(3));
    world.disable(b).unwrap();
    (world, [a, b, c])
}

fn sorted(mut v: Vec<Entity>) -> Vec<Entity> {
    v.sort();
    v
}

#[test]
fn queries_hide_disabled_entities_unless_they_name_disabled() {
    let (mut world, [a, b, c]) = world_with_disabled();
    assert!(world.is_disabled(b) && !world.is_disabled(a));
    assert_eq!(sorted(world.query::<Entity>().collect()), [a, c]);
    assert_eq!(world.query::<&Hp>().map(|hp| hp.0).sum::<u32>(), 4);
    assert_eq!(world.query::<&Hp>().len(), 2);
    assert_eq!(world.query_filtered::<Entity, With<Speed>>().collect::<Vec<_>>(), [a]);
    assert_eq!(world.query_filtered::<Entity, Without<Speed>>().collect::<Vec<_>>(), [c]);
    // Named: With, Has, Option, &, Or, and a derived query forwarding them.
    assert_eq!(world.query_filtered::<Entity, With<Disabled>>().collect::<Vec<_>>(), [b]);
    let mut has: Vec<(Entity, bool)> = world.query::<(Entity, Has<Disabled>)>().collect();
    has.sort();
    assert_eq!(has, [(a, false), (b, true), (c, false)]);
    let opt: Vec<Entity> = world.query::<(Entity, Option<&Disabled>)>().map(|(e, _)| e).collect();
    assert_eq!(sorted(opt), [a, b, c]);
    assert_eq!(world.query::<(Entity, &Disabled)>().map(|(e, _)| e).collect::<Vec<_>>(), [b]);
    let or: Vec<Entity> = world.query_filtered::<Entity, Or<(With<Disabled>, With<Speed>)>>().collect();
    assert_eq!(sorted(or), [a, b]);
    // `Without<Disabled>` names it too, and keeps it out: the default.
    assert_eq!(sorted(world.query_filtered::<Entity, Without<Disabled>>().collect()), [a, c]);
    // Mutable one-off queries skip it as well.
    for mut hp in world.query_mut::<&mut Hp>() {
        hp.0 += 100;
    }
    assert_eq!(world.get::<Hp>(b), Some(&Hp(2)));
    assert_eq!(world.get::<Hp>(a), Some(&Hp(101)));
}

#[derive(Query)]
struct Visible<'w> {
    entity: Entity,
    disabled: Option<&'w Disabled>,
}

#[derive(QueryFilter)]
struct OnlyDisabled {
    _d: With<Disabled>,
}

#[test]
fn derived_queries_and_filters_name_what_their_fields_name() {
    let (world, [a, b, c]) = world_with_disabled();
    let mut seen: Vec<(Entity, bool)> = world.query::<Visible>().map(|v| (v.entity, v.disabled.is_some())).collect();
    seen.sort();
    assert_eq!(seen, [(a, false), (b, true), (c, false)]);
    assert_eq!(world.query_filtered::<Entity, OnlyDisabled>().collect::<Vec<_>>(), [b]);
}

#[test]
fn handles_reach_disabled_entities_and_query_lookups_refuse_them() {
    let (mut world, [a, b, _]) = world_with_disabled();
    // World access by handle: read, write, entity views, components.
    assert_eq!(world.get::<Hp>(b), Some(&Hp(2)));
    world.get_mut::<Hp>(b).unwrap().0 = 22;
    assert_eq!(world.entity(b).unwrap().get::<Speed>(), Some(&Speed(20)));
    assert!(world.contains(b));
    assert_eq!(world.len(), 3, "a disabled entity is still in the world");
    // Query lookups by handle behave like iteration: bevy's `Query::get`.
    let mut state = QueryState::<&Hp>::new(&mut world);
    assert!(matches!(state.get(&world, b), Err(QueryEntityError::QueryDoesNotMatch { entity, .. }) if entity == b));
    assert_eq!(state.get(&world, a).unwrap(), &Hp(1));
    assert!(matches!(world.query_one::<&Hp>(b), Err(QueryEntityError::QueryDoesNotMatch { .. })));
    assert!(matches!(world.query_one_mut::<&mut Hp>(b), Err(QueryEntityError::QueryDoesNotMatch { .. })));
    assert!(world.query_many::<&Hp, 2>([a, b]).is_err());
    assert!(state.get_many(&world, [a, b]).is_err());
    assert_eq!(world.query_one::<(&Hp, &Disabled)>(b).unwrap().0, &Hp(22));
    let mut named = QueryState::<&Hp, With<Disabled>>::new(&mut world);
    assert_eq!(named.get(&world, b).unwrap(), &Hp(22));
    assert!(named.get(&world, a).is_err());
    let listed: Vec<u32> = state.iter_many(&world, [b, a, b]).map(|hp| hp.0).collect();
    assert_eq!(listed, [1]);
}

#[test]
fn a_kept_query_state_follows_disable_and_enable() {
    let mut world = World::new();
    let a = world.spawn(Hp(1));
    let b = world.spawn(Hp(2));
    let mut state = QueryState::<Entity, With<Hp>>::new(&mut world);
    assert_eq!(sorted(state.iter(&world).collect()), [a, b]);
    world.disable(a).unwrap();
    assert_eq!(state.iter(&world).collect::<Vec<_>>(), [b]);
    world.disable(b).unwrap();
    assert_eq!(state.iter(&world).count(), 0);
    world.enable(a).unwrap();
    assert_eq!(state.iter(&world).collect::<Vec<_>>(), [a]);
    // Idempotent both ways, and dead handles are errors.
    world.enable(a).unwrap();
    world.disable(b).unwrap();
    assert_eq!(state.iter(&world).collect::<Vec<_>>(), [a]);
    world.despawn(b).unwrap();
    assert_eq!(world.disable(b), Err(EntityError::NoSuchEntity(b)));
    assert_eq!(world.enable(b), Err(EntityError::NoSuchEntity(b)));
    assert!(!world.is_disabled(b));
}

#[test]
fn change_detection_par_iteration_and_combinations_hide_disabled_entities() {
    let mut world = World::new();
    let entities: Vec<Entity> = (0..40).map(|i| world.spawn(Hp(i))).collect();
    let mut added = QueryState::<Entity, Added<Hp>>::new(&mut world);
    let mut changed = QueryState::<Entity, Changed<Hp>>::new(&mut world);
    for &e in entities.iter().step_by(2) {
        world.disable(e).unwrap();
    }
    let odd: Vec<Entity> = entities.iter().copied().skip(1).step_by(2).collect();
    assert_eq!(sorted(added.iter(&world).collect()), odd);
    assert_eq!(sorted(changed.iter(&world).collect()), odd);
    for &e in &entities {
        world.get_mut::<Hp>(e).unwrap().0 += 1;
    }
    assert_eq!(sorted(changed.iter(&world).collect()), odd, "writes by handle to disabled ones stay hidden");

    // Parallel iteration: the same entities as a serial pass.
    let mut state = QueryState::<(Entity, &mut Hp)>::new(&mut world);
    let touched = Mutex::new(Vec::new());
    state.par_iter_mut(&mut world).for_each(|(e, mut hp)| {
        hp.0 = 1000;
        touched.lock().unwrap().push(e);
    });
    assert_eq!(sorted(touched.into_inner().unwrap()), odd);
    assert_eq!(world.get::<Hp>(entities[0]), Some(&Hp(1)));
    let mut serial = QueryState::<Entity, With<Hp>>::new(&mut world);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    serial.par_for_each(&world, move |e| sink.lock().unwrap().push(e));
    assert_eq!(sorted(seen.lock().unwrap().clone()), odd);

    // Combinations pair only visible entities.
    let mut pairs = QueryState::<Entity, With<Hp>>::new(&mut world);
    let count = pairs.iter_combinations::<2>(&world).count();
    assert_eq!(count, 20 * 19 / 2);
    assert!(pairs.iter_combinations::<2>(&world).all(|[x, y]| !world.is_disabled(x) && !world.is_disabled(y)));
}

#[derive(Default)]
struct Fired(Vec<String>);

#[test]
fn disabling_runs_no_hook_of_the_other_components_and_disabled_hooks_run() {
    let mut world = World::new();
    world.init_resource::<Fired>();
    world
        .register_component_hooks::<Hp>()
        .on_add(|w, _| w.resource_mut::<Fired>().0.push("Hp add".into()))
        .on_insert(|w, _| w.resource_mut::<Fired>().0.push("Hp insert".into()))
        .on_replace(|w, _| w.resource_mut::<Fired>().0.push("Hp replace".into()))
        .on_remove(|w, _| w.resource_mut::<Fired>().0.push("Hp remove".into()));
    world
        .register_component_hooks::<Disabled>()
        .on_add(|w, _| w.resource_mut::<Fired>().0.push("Disabled add".into()))
        .on_remove(|w, _| w.resource_mut::<Fired>().0.push("Disabled remove".into()));
    let e = world.spawn(Hp(1));
    world.resource_mut::<Fired>().0.clear();
    world.disable(e).unwrap();
    world.disable(e).unwrap(); // already disabled: nothing runs
    world.enable(e).unwrap();
    world.enable(e).unwrap();
    assert_eq!(world.resource::<Fired>().0, ["Disabled add", "Disabled remove"]);
    // Through a plain insert too.
    world.insert(e, Disabled).unwrap();
    assert_eq!(world.resource::<Fired>().0.len(), 3);
    // Operations on the disabled entity run its hooks as usual.
    world.insert(e, Hp(5)).unwrap();
    assert_eq!(world.resource::<Fired>().0[3..], ["Hp replace", "Hp insert"]);
}

#[test]
fn a_hook_on_disabled_that_despawns_leaves_the_world_consistent() {
    let mut world = World::new();
    world.register_component_hooks::<Disabled>().on_add(|w, e| {
        w.commands().entity(e).despawn();
    });
    let e = world.spawn(Hp(1));
    let keep = world.spawn(Hp(2));
    world.disable(e).unwrap();
    assert!(!world.contains(e));
    assert_eq!(world.query::<Entity>().collect::<Vec<_>>(), [keep]);
    world.check_invariants().unwrap();
}

#[test]
fn despawn_where_skips_disabled_and_retain_sees_them() {
    let (mut world, [a, b, c]) = world_with_disabled();
    assert_eq!(world.despawn_where::<With<Hp>>(), 2);
    assert_eq!(world.query_filtered::<Entity, With<Disabled>>().collect::<Vec<_>>(), [b]);
    assert!(!world.contains(a) && !world.contains(c));
    assert_eq!(world.retain(|_| false), 1);
    assert!(world.is_empty());
}

#[test]
fn a_second_world_hides_its_own_disabled_entities_only() {
    let (mut one, [_, b, _]) = world_with_disabled();
    let mut two = World::new();
    let x = two.spawn(Hp(9));
    two.spawn(Hp(8));
    two.disable(x).unwrap();
    assert_eq!(two.query::<&Hp>().map(|hp| hp.0).collect::<Vec<_>>(), [8]);
    assert_eq!(one.query::<&Hp>().count(), 2);
    // A clone of the world keeps the marker and the hiding.
    let copy = one.try_clone().unwrap();
    assert_eq!(copy.query::<&Hp>().count(), 2);
    assert!(copy.is_disabled(b));
    // A cloned entity keeps it as well.
    let twin = one.clone_entity(b).unwrap();
    assert!(one.is_disabled(twin));
    assert_eq!(one.query::<&Hp>().count(), 2);
}

#[test]
fn commands_work_on_disabled_entities() {
    let (mut world, [_, b, _]) = world_with_disabled();
    let mut buffer = CommandBuffer::new();
    buffer.insert(b, Speed(99));
    buffer.remove::<Disabled>(b);
    assert_eq!(buffer.run_on(&mut world).skipped(), 0);
    assert_eq!(world.query::<(Entity, &Speed)>().filter(|(e, _)| *e == b).count(), 1);
    assert_eq!(world.get::<Speed>(b), Some(&Speed(99)));
    let mut buffer = CommandBuffer::new();
    buffer.insert(b, Disabled);
    buffer.despawn(b);
    assert_eq!(buffer.run_on(&mut world).skipped(), 0);
    assert!(!world.contains(b));
}

#[test]
fn registered_markers_hide_like_disabled_a_prefab_template() {
    let mut world = World::new();
    world.register_disabling_component::<Template>().register_disabling_component::<Template>();
    let goblin = world.spawn((Template, Hp(7), Speed(1)));
    let live = world.spawn((Hp(1), Speed(1)));
    assert_eq!(world.query::<Entity>().collect::<Vec<_>>(), [live]);
    assert_eq!(world.query_filtered::<Entity, With<Template>>().collect::<Vec<_>>(), [goblin]);
    // Naming one hiding marker does not un-hide the other.
    world.disable(goblin).unwrap();
    assert_eq!(world.query_filtered::<Entity, With<Template>>().count(), 0);
    assert_eq!(world.query_filtered::<Entity, (With<Template>, With<Disabled>)>().collect::<Vec<_>>(), [goblin]);
    world.enable(goblin).unwrap();
    // Spawn from the template: a copy without the marker is a goblin.
    let copy = world.clone_entity(goblin).unwrap();
    world.remove::<Template>(copy).unwrap();
    assert_eq!(sorted(world.query_filtered::<Entity, With<Hp>>().collect()), sorted(vec![live, copy]));
    assert!(world.components().info(world.components().id::<Template>().unwrap()).hides_entities());
    assert!(world.components().info(world.components().id::<Disabled>().unwrap()).hides_entities());
    assert!(!world.components().info(world.components().id::<Hp>().unwrap()).hides_entities());
}

#[test]
#[should_panic(expected = "`Template` cannot become a disabling component now")]
fn registering_a_marker_entities_already_held_panics() {
    let mut world = World::new();
    let e = world.spawn(Template);
    world.despawn(e).unwrap();
    world.register_disabling_component::<Template>();
}

#[test]
#[should_panic(expected = "`SparseMark` cannot hide entities: it is in sparse storage")]
fn a_sparse_marker_is_refused() {
    World::new().register_disabling_component::<SparseMark>();
}

#[test]
fn a_refused_registration_changes_nothing() {
    let mut world = World::new();
    let e = world.spawn((Template, Hp(1)));
    let refused = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        world.register_disabling_component::<Template>();
    }));
    assert!(refused.is_err());
    assert_eq!(world.query::<Entity>().collect::<Vec<_>>(), [e]);
    assert!(!world.components().info(world.components().id::<Template>().unwrap()).hides_entities());
}
