//! `use archetable::prelude::*;` alone is enough for a game's everyday
//! code: this file imports nothing else from the crate and uses the names
//! the prelude gained (`Has`, `AnyOf`, `EntityBuilder`, ...); and the
//! README's and the examples' code, which `cargo test` compiles (doc tests
//! and example builds), imports nothing from the crate but the prelude.

use archetable::prelude::*;

#[derive(Component, Debug, PartialEq)]
struct Hp(u32);

#[derive(Component, Debug, PartialEq)]
struct Shield(u32);

#[derive(Component)]
struct Boss;

/// `Has` and `AnyOf` as query data.
type UnitData = (Entity, Has<Shield>, AnyOf<(&'static Hp, &'static Shield)>);

/// The query data above, in a derived parameter.
#[derive(SystemParam)]
struct Units<'w, 's> {
    units: Query<'w, 's, UnitData>,
    boss: Query<'w, 's, &'static Hp, With<Boss>>,
}

#[derive(Default)]
struct Seen(Vec<(bool, Option<u32>, Option<u32>)>);

fn look(units: Units, mut seen: ResMut<Seen>) {
    let mut rows: Vec<_> =
        units.units.iter().map(|(e, has, (hp, shield))| (e, has, hp.map(|h| h.0), shield.map(|s| s.0))).collect();
    rows.sort_by_key(|row| row.0);
    seen.0 = rows.into_iter().map(|(_, has, hp, shield)| (has, hp, shield)).collect();
    match units.boss.single() {
        Ok(hp) => seen.0.push((true, Some(hp.0), None)),
        Err(QuerySingleError::NoEntities) => seen.0.push((false, None, None)),
        Err(QuerySingleError::MultipleEntities) => panic!("one boss at most"),
    }
}

/// `Event` and `Resource` name the bounds of generic systems.
fn count_events<E: Event>(mut events: EventReader<E>, mut counted: ResMut<Counted>) {
    counted.0 += events.read().count();
}

fn reset<R: Resource + Default>(mut value: ResMut<R>) {
    *value = R::default();
}

#[derive(Default)]
struct Counted(usize);

struct Ping;

/// `SystemParam` (the trait, beside the derive) names a bound.
fn param_count<P: SystemParam>() -> usize {
    std::mem::size_of::<P::State>()
}

#[test]
fn has_any_of_and_query_single_error_need_only_the_prelude() {
    let mut world = World::new();
    world.init_resource::<Seen>();
    let a = world.spawn((Hp(3), Shield(1)));
    let b = world.spawn(Hp(4));
    let c = world.spawn(Shield(2));
    world.spawn(());
    world.run_system_once(look);
    assert!(a < b && b < c);
    assert_eq!(
        world.resource::<Seen>().0,
        [(true, Some(3), Some(1)), (false, Some(4), None), (true, None, Some(2)), (false, None, None)]
    );
    world.spawn((Hp(9), Boss));
    world.run_system_once(look);
    assert_eq!(world.resource::<Seen>().0[4], (true, Some(9), None));
}

#[test]
fn entity_builder_and_built_bundle_need_only_the_prelude() {
    fn bundle(hp: u32, shielded: bool) -> BuiltBundle {
        let mut builder = EntityBuilder::new();
        builder.add(Hp(hp));
        if shielded {
            builder.add(Shield(1));
        }
        builder.build()
    }
    let mut world = World::new();
    let a = world.spawn(bundle(5, true));
    let b = world.spawn(bundle(6, false));
    assert_eq!((world.get::<Hp>(a), world.get::<Shield>(a)), (Some(&Hp(5)), Some(&Shield(1))));
    assert_eq!((world.get::<Hp>(b), world.has::<Shield>(b)), (Some(&Hp(6)), false));
}

#[test]
fn event_resource_and_system_param_bounds_need_only_the_prelude() {
    let mut world = World::new();
    world.init_resource::<Counted>();
    world.add_event::<Ping>();
    world.send_event(Ping);
    world.send_event(Ping);
    world.run_system_once(count_events::<Ping>);
    assert_eq!(world.resource::<Counted>().0, 2);
    world.run_system_once(reset::<Counted>);
    assert_eq!(world.resource::<Counted>().0, 0);
    assert_eq!(param_count::<Commands>(), std::mem::size_of::<CommandQueue>());
}

#[cfg(feature = "hierarchy")]
#[test]
fn child_spawner_and_the_relationship_traits_need_only_the_prelude() {
    fn wheels(car: &mut ChildSpawner) {
        for i in 0..4 {
            car.spawn(Hp(i));
        }
    }
    let mut world = World::new();
    let mut queue = CommandQueue::default();
    let car = Commands::new(&mut queue, &world).spawn(()).with_children(wheels).id();
    queue.apply(&mut world);
    let children = world.get::<Children>(car).unwrap();
    assert_eq!(children.sources().len(), 4);
    let first = *children.sources().first().unwrap();
    assert_eq!(world.get::<ChildOf>(first).unwrap().target(), car);
}

#[cfg(feature = "serde")]
#[test]
fn the_save_types_need_only_the_prelude() {
    fn save(world: &World) -> Result<String, SaveError> {
        Ok(world.save_json()?.data)
    }
    fn load(registry: &SerdeRegistry, text: &str) -> Result<World, LoadError> {
        World::load_json(registry, text)
    }
    let mut world = World::new();
    world.register_serde::<Position>("Position");
    let e = world.spawn(Position(2.5));
    let loaded = load(&world.serde_registry(), &save(&world).unwrap()).unwrap();
    assert_eq!(loaded.get::<Position>(e), Some(&Position(2.5)));
    assert!(load(&world.serde_registry(), "{").is_err());
}

#[cfg(feature = "serde")]
#[derive(Component, serde::Serialize, serde::Deserialize, Default, Debug, PartialEq)]
struct Position(f32);

/// The Rust code of the README and of every example, which `cargo test`
/// compiles, takes nothing from the crate but the prelude: a name it needs
/// from elsewhere belongs in the prelude (or the code shows an advanced
/// path on purpose, and this list says so).
#[test]
fn the_readme_and_the_examples_import_only_the_prelude() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut sources = vec![root.join("README.md")];
    let mut folders = vec![root.join("examples")];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|ext| ext == "rs") {
                sources.push(path);
            }
        }
    }
    assert!(sources.len() > 10, "{sources:?}");
    let mut others = Vec::new();
    for source in &sources {
        let text = std::fs::read_to_string(source).unwrap();
        for (i, line) in text.lines().enumerate() {
            for (at, _) in line.match_indices("archetable::") {
                let rest = &line[at..];
                if !rest.starts_with("archetable::prelude::*") {
                    others.push(format!("{}:{}: {}", source.strip_prefix(root).unwrap().display(), i + 1, line.trim()));
                }
            }
        }
    }
    // The README names the serde layer's module in prose; the inspector and
    // rollback netcode are layers with paths of their own (the `inspect` and
    // `rollback` features), on purpose.
    others.retain(|line| {
        !line.contains("(`archetable::data`")
            && !line.contains("archetable::inspect")
            && !line.contains("`archetable::rollback`")
    });
    assert!(others.is_empty(), "code that names the crate past the prelude:\n{}", others.join("\n"));
}
