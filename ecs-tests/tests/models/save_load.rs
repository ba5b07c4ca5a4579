//! Saving and loading worlds: exact loads into a fresh world (handles and
//! allocator kept), merges into a populated world (handles remapped, the
//! references inside components too), unregistered components, every load
//! and save error with the world left unchanged, and a round-trip property
//! test over random worlds in every format.
//!
//! The property test runs 24 cases per format; set `ECS_PROPTEST_CASES` to
//! run more.

use std::collections::BTreeMap;

use archetable::data::{
    EntityMap, Format, LoadError, SaveError, SerdeRegistry, SkippedComponent, MAX_DEPTH, MAX_RON_DEPTH,
};
use archetable::prelude::*;
use archetable::AllocatorStateError;
use proptest::prelude::*;
use serde::{Deserialize, Serialize};

#[derive(Component, Serialize, Deserialize, Default, Debug, Clone, PartialEq)]
struct Position {
    x: f32,
    y: f32,
}

#[derive(Component, Serialize, Deserialize, Default, Debug, Clone, PartialEq)]
struct Velocity(f64, f64);

#[derive(Component, Serialize, Deserialize, Default, Debug, Clone, PartialEq)]
struct Health(u32);

#[derive(Component, Serialize, Deserialize, Default, Debug, Clone, PartialEq)]
struct Name(String);

#[derive(Component, Serialize, Deserialize, Default, Debug, Clone, PartialEq)]
struct Marker;

#[derive(Component, Serialize, Deserialize, Default, Debug, Clone, PartialEq)]
enum Mood {
    #[default]
    Calm,
    Angry(u8),
    Scared {
        of: String,
        level: i16,
    },
}

#[derive(Component, Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Target(Entity);

#[derive(Component, Serialize, Deserialize, Default, Debug, Clone, PartialEq)]
struct Links {
    leader: Option<Entity>,
    all: Vec<Entity>,
    weights: BTreeMap<Entity, u8>,
}

/// Not registered: saves skip it and say so.
#[derive(Component, Debug, Clone, PartialEq)]
struct Particle(u8);

#[derive(Serialize, Deserialize, Default, Debug, Clone, PartialEq)]
struct Score(u64);

#[derive(Serialize, Deserialize, Default, Debug, Clone, PartialEq)]
struct Level {
    name: String,
    boss: Option<Entity>,
}

fn register(world: &mut World) {
    world
        .register_serde::<Position>("Position")
        .register_serde::<Velocity>("Velocity")
        .register_serde::<Health>("Health")
        .register_serde::<Name>("Name")
        .register_serde::<Marker>("Marker")
        .register_serde::<Mood>("Mood")
        .register_serde_without_default::<Target>("Target")
        .register_serde::<Links>("Links")
        .register_serde_resource::<Score>("Score")
        .register_serde_resource::<Level>("Level");
}

fn registered() -> World {
    let mut world = World::new();
    register(&mut world);
    world
}

fn registry() -> SerdeRegistry {
    registered().serde_registry()
}

/// A small world with references between entities, a despawned slot, an
/// unregistered component and resources.
fn scene() -> (World, Vec<Entity>) {
    let mut world = registered();
    let a = world.spawn((Position { x: 1.0, y: -2.5 }, Health(3), Name("a".into()), Marker));
    let b = world.spawn((Velocity(0.5, 1e-9), Mood::Scared { of: "a".into(), level: -3 }));
    let gone = world.spawn(Health(0));
    let c = world.spawn((Target(a), Particle(7)));
    world.despawn(gone).unwrap();
    let d = world.spawn((
        Links { leader: Some(c), all: vec![a, b, c], weights: [(a, 1), (b, 2)].into_iter().collect() },
        Mood::Angry(9),
    ));
    world.insert_resource(Score(42));
    world.insert_resource(Level { name: "cave".into(), boss: Some(d) });
    (world, vec![a, b, c, d])
}

fn save(world: &World, format: Format) -> Vec<u8> {
    match format {
        Format::Json => world.save_json().unwrap().data.into_bytes(),
        Format::Ron => world.save_ron().unwrap().data.into_bytes(),
        Format::Binary => world.save_binary().unwrap().data,
    }
}

fn load(registry: &SerdeRegistry, format: Format, data: &[u8]) -> Result<World, LoadError> {
    match format {
        Format::Json => World::load_json(registry, std::str::from_utf8(data).unwrap()),
        Format::Ron => World::load_ron(registry, std::str::from_utf8(data).unwrap()),
        Format::Binary => World::load_binary(registry, data),
    }
}

fn load_into(world: &mut World, format: Format, data: &[u8]) -> Result<EntityMap, LoadError> {
    match format {
        Format::Json => world.load_into_json(std::str::from_utf8(data).unwrap()),
        Format::Ron => world.load_into_ron(std::str::from_utf8(data).unwrap()),
        Format::Binary => world.load_into_binary(data),
    }
}

const FORMATS: [Format; 3] = [Format::Json, Format::Ron, Format::Binary];

/// Every registered component of `entity`, with handles passed through
/// `map`, for comparing worlds.
#[derive(Debug, PartialEq)]
struct Snapshot {
    position: Option<Position>,
    velocity: Option<Velocity>,
    health: Option<Health>,
    name: Option<Name>,
    marker: bool,
    mood: Option<Mood>,
    target: Option<Target>,
    links: Option<Links>,
}

fn snapshot(world: &World, entity: Entity, map: &dyn Fn(Entity) -> Entity) -> Snapshot {
    Snapshot {
        position: world.get::<Position>(entity).cloned(),
        velocity: world.get::<Velocity>(entity).cloned(),
        health: world.get::<Health>(entity).cloned(),
        name: world.get::<Name>(entity).cloned(),
        marker: world.has::<Marker>(entity),
        mood: world.get::<Mood>(entity).cloned(),
        target: world.get::<Target>(entity).map(|t| Target(map(t.0))),
        links: world.get::<Links>(entity).map(|l| Links {
            leader: l.leader.map(map),
            all: l.all.iter().map(|&e| map(e)).collect(),
            weights: l.weights.iter().map(|(&e, &w)| (map(e), w)).collect(),
        }),
    }
}

fn live(world: &World) -> Vec<Entity> {
    let mut entities: Vec<Entity> = world.query::<Entity>().collect();
    entities.sort();
    entities
}

/// `copy` holds exactly `original`'s entities, handles and allocator.
fn assert_exact_copy(original: &World, copy: &World) {
    copy.check_invariants().unwrap();
    assert_eq!(live(copy), live(original));
    assert_eq!(copy.allocator_state(), original.allocator_state());
    for e in live(original) {
        assert_eq!(snapshot(copy, e, &|e| e), snapshot(original, e, &|e| e), "entity {e}");
        assert!(!copy.has::<Particle>(e));
    }
    assert_eq!(copy.get_resource::<Score>(), original.get_resource::<Score>());
    assert_eq!(copy.get_resource::<Level>(), original.get_resource::<Level>());
}

#[test]
fn exact_load_keeps_every_handle_in_every_format() {
    let (world, _) = scene();
    for format in FORMATS {
        let copy = load(&registry(), format, &save(&world, format)).unwrap();
        assert_exact_copy(&world, &copy);
    }
}

#[test]
fn exact_load_replays_the_same_later_spawns() {
    let (mut world, handles) = scene();
    for format in FORMATS {
        let mut copy = load(&registry(), format, &save(&world, format)).unwrap();
        copy.despawn(handles[1]).unwrap();
        let mut original = load(&registry(), format, &save(&world, format)).unwrap();
        original.despawn(handles[1]).unwrap();
        for _ in 0..4 {
            assert_eq!(copy.spawn(Health(1)), original.spawn(Health(1)));
        }
    }
    // And against the live original.
    let mut copy = load(&registry(), Format::Binary, &save(&world, Format::Binary)).unwrap();
    assert_eq!(copy.spawn(Health(1)), world.spawn(Health(1)));
    assert_eq!(copy.spawn(Health(1)), world.spawn(Health(1)));
}

#[test]
fn merge_remaps_handles_and_the_references_inside_components() {
    let (world, handles) = scene();
    for format in FORMATS {
        let data = save(&world, format);
        let mut target = registered();
        let own = target.spawn((Health(100), Name("own".into())));
        let own_snapshot = snapshot(&target, own, &|e| e);
        let map = load_into(&mut target, format, &data).unwrap();
        target.check_invariants().unwrap();
        assert_eq!(map.len(), 4);
        assert_eq!(target.len(), 5);
        assert_eq!(snapshot(&target, own, &|e| e), own_snapshot, "the world's own entities are untouched");
        for &saved in &handles {
            let new = map.get(saved).unwrap();
            assert!(target.contains(new));
            let remapped = snapshot(&world, saved, &|e| map.get(e).unwrap_or(EntityMap::DANGLING));
            assert_eq!(snapshot(&target, new, &|e| e), remapped, "{format}: entity {saved}");
        }
        let d = map.get(handles[3]).unwrap();
        let links = target.get::<Links>(d).unwrap();
        assert_eq!(links.all, handles[..3].iter().map(|&e| map.get(e).unwrap()).collect::<Vec<_>>());
        assert_eq!(target.resource::<Level>().boss, Some(d), "resources are remapped too");
        assert_eq!(target.resource::<Score>(), &Score(42));
    }
}

#[test]
fn merging_twice_makes_two_copies() {
    let (world, handles) = scene();
    let data = world.save_json().unwrap().data;
    let mut target = registered();
    let first = target.load_into_json(&data).unwrap();
    let second = target.load_into_json(&data).unwrap();
    assert_eq!(target.len(), 8);
    let (c1, c2) = (first.get(handles[2]).unwrap(), second.get(handles[2]).unwrap());
    assert_eq!(target.get::<Target>(c1), Some(&Target(first.get(handles[0]).unwrap())));
    assert_eq!(target.get::<Target>(c2), Some(&Target(second.get(handles[0]).unwrap())));
}

#[test]
fn stale_references_stay_stale() {
    let mut world = registered();
    let gone = world.spawn(Health(1));
    world.despawn(gone).unwrap();
    let holder = world.spawn(Target(gone));
    let data = world.save_json().unwrap().data;

    let exact = World::load_json(&registry(), &data).unwrap();
    assert_eq!(exact.get::<Target>(holder), Some(&Target(gone)));
    assert!(!exact.contains(gone));

    let mut target = registered();
    target.spawn(Health(5)); // takes index 0, as `gone` had
    let map = target.load_into_json(&data).unwrap();
    let new = map.get(holder).unwrap();
    assert_eq!(target.get::<Target>(new), Some(&Target(EntityMap::DANGLING)));
    assert!(!target.contains(EntityMap::DANGLING));
}

#[test]
fn unregistered_components_are_skipped_and_listed() {
    let (world, handles) = scene();
    let saved = world.save_json().unwrap();
    assert_eq!(
        saved.skipped,
        [SkippedComponent { type_name: std::any::type_name::<Particle>().to_owned(), entities: 1 }]
    );
    assert!(saved.data.contains(r#""component":"models::save_load::Particle""#), "the save lists it too");
    let pretty = world.save_json_pretty().unwrap();
    assert!(pretty.data.contains(r#""component": "models::save_load::Particle""#));
    assert_eq!(pretty.skipped, saved.skipped);
    assert_eq!(
        saved.skipped[0].to_string(),
        "component `models::save_load::Particle` is not registered for saving; 1 entities were saved without it"
    );
    let copy = World::load_json(&registry(), &saved.data).unwrap();
    assert_eq!(copy.get::<Target>(handles[2]), Some(&Target(handles[0])), "the rest of the entity is saved");
    assert!(world.save_binary().unwrap().skipped.len() == 1 && world.save_ron().unwrap().skipped.len() == 1);
}

#[test]
fn an_empty_world_round_trips() {
    let world = registered();
    for format in FORMATS {
        let copy = load(&registry(), format, &save(&world, format)).unwrap();
        assert!(copy.is_empty());
        assert_eq!(copy.allocator_state(), world.allocator_state());
    }
}

#[test]
fn entities_without_components_are_kept() {
    let mut world = registered();
    let empty = world.spawn(());
    let only_unregistered = world.spawn(Particle(1));
    let copy = World::load_ron(&registry(), &world.save_ron().unwrap().data).unwrap();
    assert!(copy.contains(empty) && copy.contains(only_unregistered));
}

#[test]
fn non_finite_numbers_fail_a_json_save_but_not_the_others() {
    let mut world = registered();
    let e = world.spawn(Position { x: 0.0, y: f32::NAN });
    assert_eq!(
        world.save_json().unwrap_err(),
        SaveError::Component {
            entity: e,
            component: "Position".into(),
            field: "y".into(),
            message: "JSON cannot hold NaN or infinite numbers; save as RON or binary".into(),
        }
    );
    world.get_mut::<Position>(e).unwrap().y = f32::INFINITY;
    for format in [Format::Ron, Format::Binary] {
        let copy = load(&registry(), format, &save(&world, format)).unwrap();
        assert_eq!(copy.get::<Position>(e).unwrap().y, f32::INFINITY);
    }
    world.insert_resource(Level { name: "x".into(), boss: None });
    world.get_mut::<Position>(e).unwrap().y = 0.0;
    world.insert(e, Velocity(f64::NEG_INFINITY, 0.0)).unwrap();
    assert_eq!(
        world.save_json().unwrap_err(),
        SaveError::Component {
            entity: e,
            component: "Velocity".into(),
            field: "[0]".into(),
            message: "JSON cannot hold NaN or infinite numbers; save as RON or binary".into(),
        }
    );
}

#[test]
fn numbers_too_large_for_an_f32_are_refused_at_load() {
    let zero = Entity::from_bits(1 << 32).unwrap();
    let out_of_range = |field: &str, number: &str| LoadError::Component {
        entity: zero,
        component: "Position".into(),
        field: field.into(),
        message: format!("the number {number} is out of range for f32"),
    };
    // JSON reads 1e39 as an f64; as an f32 it would be infinite, which a
    // JSON save refuses to write.
    assert_eq!(load_error(&doc(1, r#""0v1": {"Position": {"x": 1e39, "y": 0}}"#, "")), out_of_range("x", "1e39"));
    assert_eq!(load_error(&doc(1, r#""0v1": {"Position": {"x": 0, "y": -3.5e38}}"#, "")), out_of_range("y", "-3.5e38"));
    let ron = |position: &str| {
        format!(
            r#"(format: "ecs-save", version: 1, allocator: (generations: [(1, 1)], free: []),
                entities: {{"0v1": {{"Position": {position}}}}})"#
        )
    };
    assert_eq!(World::load_ron(&registry(), &ron("(x: 1e39, y: 0.0)")).unwrap_err(), out_of_range("x", "1e39"));
    // Numbers that round to a finite f32 load as they always did.
    let world =
        World::load_json(&registry(), &doc(1, r#""0v1": {"Position": {"x": 3.4028235e38, "y": 1e-50}}"#, "")).unwrap();
    assert_eq!(world.get::<Position>(zero), Some(&Position { x: f32::MAX, y: 0.0 }));
    // RON writes infinities and NaN (JSON cannot), so RON loads them as
    // written.
    let world = World::load_ron(&registry(), &ron("(x: -inf, y: NaN)")).unwrap();
    let position = world.get::<Position>(zero).unwrap();
    assert!(position.x == f32::NEG_INFINITY && position.y.is_nan());
    // An f64 field: JSON refuses numbers past its range.
    assert_eq!(
        load_error(&doc(1, r#""0v1": {"Velocity": [1e400, 0]}"#, "")),
        LoadError::Syntax { format: Format::Json, line: 2, column: 51, message: "number out of range".into() }
    );
}

/// A component whose `Serialize` impl fails.
#[derive(Component, Deserialize, Default, Debug)]
struct Broken;

impl Serialize for Broken {
    fn serialize<S: serde::Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
        Err(serde::ser::Error::custom("cannot write a Broken"))
    }
}

#[derive(Deserialize, Default, Debug)]
struct BrokenResource;

impl Serialize for BrokenResource {
    fn serialize<S: serde::Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
        Err(serde::ser::Error::custom("cannot write a BrokenResource"))
    }
}

#[test]
fn a_failing_serialize_names_the_entity_and_component() {
    let mut world = registered();
    world.register_serde::<Broken>("Broken");
    world.spawn(Health(1));
    let e = world.spawn(Broken);
    let expected = SaveError::Component {
        entity: e,
        component: "Broken".into(),
        field: String::new(),
        message: "cannot write a Broken".into(),
    };
    assert_eq!(world.save_json().unwrap_err(), expected);
    assert_eq!(world.save_ron().unwrap_err(), expected);
    assert_eq!(world.save_binary().unwrap_err(), expected);
    world.despawn(e).unwrap();
    world.register_serde_resource::<BrokenResource>("BrokenResource");
    world.insert_resource(BrokenResource);
    assert_eq!(
        world.save_binary().unwrap_err(),
        SaveError::Resource {
            resource: "BrokenResource".into(),
            field: String::new(),
            message: "cannot write a BrokenResource".into()
        }
    );
}

// ---------------------------------------------------------------------------
// Load errors: each variant, in both modes, and the world unchanged.

/// A JSON save with the given entities and resources; the allocator says
/// `slots` slots of generation 1.
fn doc(slots: u32, entities: &str, resources: &str) -> String {
    format!(
        r#"{{"format": "ecs-save", "version": 1, "allocator": {{"generations": [[{slots}, 1]], "free": []}},
            "entities": {{{entities}}}, "resources": {{{resources}}}, "skipped": []}}"#
    )
}

/// Loads `text` both ways; both must fail with the same error, and the
/// populated world must be exactly as it was.
fn load_error(text: &str) -> LoadError {
    let (mut world, _) = scene();
    let before = world.save_json().unwrap().data;
    let allocator = world.allocator_state();
    let merged = world.load_into_json(text).unwrap_err();
    assert_eq!(world.save_json().unwrap().data, before, "a failed load changed the world");
    assert_eq!(world.allocator_state(), allocator, "a failed load changed the allocator");
    world.check_invariants().unwrap();
    let fresh = World::load_json(&registry(), text).unwrap_err();
    assert_eq!(fresh, merged);
    fresh
}

#[test]
fn a_bad_field_names_entity_component_and_field() {
    let text = doc(
        2,
        r#""0v1": {"Health": 3, "Position": {"x": 1.0, "y": 2.0}},
           "1v1": {"Health": 4, "Links": {"leader": null, "all": ["0v1", "banana"], "weights": {}}}"#,
        "",
    );
    let error = load_error(&text);
    assert_eq!(
        error,
        LoadError::Component {
            entity: Entity::from_bits((1 << 32) | 1).unwrap(),
            component: "Links".into(),
            field: "all[1]".into(),
            message: "invalid value: string \"banana\", expected an entity handle such as \"3v1\"".into(),
        }
    );
    assert_eq!(
        error.to_string(),
        "entity 1v1, component `Links`, field `all[1]`: invalid value: string \"banana\", expected an entity \
         handle such as \"3v1\""
    );
    assert_eq!(
        load_error(&doc(1, r#""0v1": {"Position": {"x": true}}"#, "")),
        LoadError::Component {
            entity: Entity::from_bits(1 << 32).unwrap(),
            component: "Position".into(),
            field: "x".into(),
            message: "invalid type: boolean `true`, expected f32".into(),
        }
    );
    assert_eq!(
        load_error(&doc(1, r#""0v1": {"Mood": {"Scared": {"of": "x", "levl": 1}}}"#, "")),
        LoadError::Component {
            entity: Entity::from_bits(1 << 32).unwrap(),
            component: "Mood".into(),
            field: "Scared.levl".into(),
            message: "unknown field `levl`, did you mean `level`?".into(),
        }
    );
}

#[test]
fn unknown_and_duplicate_names_are_refused() {
    assert_eq!(
        load_error(&doc(1, r#""0v1": {"Helth": 3}"#, "")),
        LoadError::UnknownComponent {
            entity: Entity::from_bits(1 << 32).unwrap(),
            component: "Helth".into(),
            suggestion: Some("Health".into()),
        }
    );
    assert_eq!(
        load_error(&doc(1, r#""0v1": {"Health": 3, "Health": 4}"#, "")),
        LoadError::DuplicateComponent { entity: Entity::from_bits(1 << 32).unwrap(), component: "Health".into() }
    );
    assert_eq!(
        load_error(&doc(1, r#""0v1": {}, "0v1": {}"#, "")),
        LoadError::DuplicateEntity { entity: Entity::from_bits(1 << 32).unwrap() }
    );
    assert_eq!(
        load_error(&doc(0, "", r#""Scor": 1"#)),
        LoadError::UnknownResource { resource: "Scor".into(), suggestion: Some("Score".into()) }
    );
    assert_eq!(
        load_error(&doc(0, "", r#""Score": 1, "Score": 2"#)),
        LoadError::DuplicateResource { resource: "Score".into() }
    );
    assert_eq!(
        load_error(&doc(0, "", r#""Level": {"name": 5}"#)),
        LoadError::Resource {
            resource: "Level".into(),
            field: "name".into(),
            message: "invalid type: integer `5`, expected a string".into()
        }
    );
}

#[test]
fn syntax_errors_give_line_and_column() {
    assert_eq!(
        load_error("{\n  \"format\": \"ecs-save\",\n  \"version\": 1,\n  \"allocator\": {,\n}"),
        LoadError::Syntax { format: Format::Json, line: 4, column: 17, message: "key must be a string".into() }
    );
    let (mut world, _) = scene();
    let before = world.save_ron().unwrap().data;
    let error = world.load_into_ron("(\n  format: \"ecs-save\",\n  version: 1,\n  allocator: [\n)").unwrap_err();
    assert!(matches!(error, LoadError::Syntax { format: Format::Ron, line: 4, column: 14, .. }), "{error:?}");
    assert_eq!(world.save_ron().unwrap().data, before);
    let error = World::load_json(&registry(), "{\"format\": \"ecs-save\", \"version\": \u{0}}").unwrap_err();
    assert!(matches!(error, LoadError::Syntax { format: Format::Json, line: 1, .. }), "{error:?}");
    // An entity key that is not a handle.
    let error = load_error(&doc(1, r#""zero": {}"#, ""));
    assert!(matches!(&error, LoadError::Syntax { message, .. } if message.contains("entity handle")), "{error:?}");
}

#[test]
fn bad_binary_is_refused() {
    let (mut world, _) = scene();
    let mut data = world.save_binary().unwrap().data;
    data.truncate(data.len() / 2);
    let before = world.save_binary().unwrap().data;
    assert!(matches!(world.load_into_binary(&data).unwrap_err(), LoadError::Binary { .. }));
    assert!(matches!(World::load_binary(&registry(), &data).unwrap_err(), LoadError::Binary { .. }));
    assert!(matches!(World::load_binary(&registry(), &[]).unwrap_err(), LoadError::Binary { .. }));
    assert_eq!(world.save_binary().unwrap().data, before);
}

#[test]
fn foreign_and_newer_files_are_named_as_such() {
    assert_eq!(
        load_error(r#"{"format": "tiled-map", "version": 1}"#),
        LoadError::NotASave { found: "tiled-map".into() }
    );
    assert_eq!(
        load_error(r#"{"format": "ecs-save", "version": 9, "something": "new"}"#),
        LoadError::UnsupportedVersion { found: 9, supported: 3 }
    );
    let mut binary = registered().save_binary().unwrap().data;
    // The tag's length prefix, then the tag, then the version: binary
    // saves have their own layout version.
    assert_eq!(binary[1 + "ecs-save".len()], 2);
    binary[1 + "ecs-save".len()] = 3;
    assert_eq!(
        World::load_binary(&registry(), &binary).unwrap_err(),
        LoadError::UnsupportedVersion { found: 3, supported: 2 }
    );
}

/// Skips a field when it is empty: postcard alone would misread the rest.
#[derive(Component, Serialize, Deserialize, Default, Debug, Clone, PartialEq)]
struct Sparse {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    note: Option<String>,
    id: u8,
    friend: Option<Entity>,
}

/// Needs a self-describing format to be read back.
#[derive(Component, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(untagged)]
enum Loose {
    Number(u32),
    Named(String),
}

/// Flattened: written as a map of unknown length.
#[derive(Component, Serialize, Deserialize, Default, Debug, Clone, PartialEq)]
struct Stretched {
    id: u8,
    #[serde(flatten)]
    extra: BTreeMap<String, u8>,
}

/// Internally tagged: read through `deserialize_any`, written as a struct.
#[derive(Component, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(tag = "kind")]
enum Kind {
    Small { size: u8 },
    Big { size: u32, label: String },
}

/// A field never written, read as its default: the writer leaves it out
/// without telling the serializer.
#[derive(Component, Serialize, Deserialize, Default, Debug, Clone, PartialEq)]
struct Cached {
    #[serde(skip_serializing, default)]
    cache: u32,
    id: u8,
}

#[test]
fn binary_saves_keep_types_postcard_cannot_read_back_alone() {
    let mut world = registered();
    world
        .register_serde::<Sparse>("Sparse")
        .register_serde_without_default::<Loose>("Loose")
        .register_serde::<Stretched>("Stretched")
        .register_serde_without_default::<Kind>("Kind")
        .register_serde::<Cached>("Cached");
    let a = world.spawn((Health(1), Sparse { note: None, id: 1, friend: None }));
    let b = world.spawn((Health(2), Sparse { note: Some("b".into()), id: 2, friend: Some(a) }, Loose::Number(7)));
    let c = world.spawn(Loose::Named("c".into()));
    let d = world.spawn((Stretched { id: 4, extra: [("x".into(), 1)].into() }, Kind::Small { size: 3 }));
    let e = world.spawn((Kind::Big { size: 9, label: "e".into() }, Cached { cache: 0, id: 5 }));
    let data = world.save_binary().unwrap().data;
    let registry = world.serde_registry();
    let copy = World::load_binary(&registry, &data).unwrap();
    for e in [a, b, c, d, e] {
        assert_eq!(copy.get::<Sparse>(e), world.get::<Sparse>(e));
        assert_eq!(copy.get::<Loose>(e), world.get::<Loose>(e));
        assert_eq!(copy.get::<Health>(e), world.get::<Health>(e));
        assert_eq!(copy.get::<Stretched>(e), world.get::<Stretched>(e));
        assert_eq!(copy.get::<Kind>(e), world.get::<Kind>(e));
        assert_eq!(copy.get::<Cached>(e), world.get::<Cached>(e));
    }
    // The field never written comes back as its default, in every format.
    world.get_mut::<Cached>(e).unwrap().cache = 77;
    for format in FORMATS {
        let copy = load(&registry, format, &save(&world, format)).unwrap();
        assert_eq!(copy.get::<Cached>(e), Some(&Cached { cache: 0, id: 5 }), "{format}");
    }
    let mut target = World::new();
    target.insert_resource(registry);
    target.spawn(Health(100));
    let map = target.load_into_binary(&data).unwrap();
    let new_b = map.get(b).unwrap();
    assert_eq!(target.get::<Sparse>(new_b).unwrap().friend, Some(map.get(a).unwrap()), "handles in trees follow");
    assert_eq!(target.get::<Loose>(map.get(c).unwrap()), Some(&Loose::Named("c".into())));
}

/// As deep as its values say.
#[derive(Component, Serialize, Deserialize, Default, Debug, Clone, PartialEq)]
struct Nest(Vec<Nest>);

/// Lists nested so that the innermost is at `level`.
fn nest(level: usize) -> Nest {
    (0..level).fold(Nest(vec![]), |inner, _| Nest(vec![inner]))
}

/// As deep as its values say, saved as trees (an empty list is skipped).
#[derive(Component, Serialize, Deserialize, Default, Debug, Clone, PartialEq)]
struct Twig {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    twigs: Vec<Twig>,
}

#[test]
fn saves_refuse_values_nested_deeper_than_loads_allow() {
    let mut world = registered();
    world.register_serde::<Nest>("Nest").register_serde::<Twig>("Twig");
    let e = world.spawn(());
    let registry = world.serde_registry();
    let too_deep = |field: String, message: &str| SaveError::Component {
        entity: e,
        component: "Nest".into(),
        field,
        message: message.into(),
    };
    let ron_message = "data nested deeper than 12 levels, more than RON loads allow; save as JSON or binary (up to 64)";
    let message = "data nested deeper than 64 levels, more than loads allow";
    // At each format's limit: saved and loaded back.
    for (level, formats) in [(MAX_RON_DEPTH, &FORMATS[..]), (MAX_DEPTH, &[Format::Json, Format::Binary][..])] {
        world.insert(e, nest(level)).unwrap();
        for &format in formats {
            let copy = load(&registry, format, &save(&world, format)).unwrap();
            assert_eq!(copy.get::<Nest>(e), Some(&nest(level)), "{format}");
        }
    }
    // One level more: refused, naming the first value too deep.
    world.insert(e, nest(MAX_RON_DEPTH + 1)).unwrap();
    assert_eq!(world.save_ron().unwrap_err(), too_deep("[0]".repeat(MAX_RON_DEPTH + 1), ron_message));
    world.insert(e, nest(MAX_DEPTH + 1)).unwrap();
    let deepest = "[0]".repeat(MAX_DEPTH + 1);
    assert_eq!(world.save_json().unwrap_err(), too_deep(deepest.clone(), message));
    assert_eq!(world.save_binary().unwrap_err(), too_deep(deepest, message));
    // Trees, in binary saves: a struct and its list make two levels.
    world.remove::<Nest>(e).unwrap();
    let twig = |twigs: usize| (0..twigs).fold(Twig::default(), |inner, _| Twig { twigs: vec![inner] });
    world.insert(e, twig(MAX_DEPTH / 2)).unwrap();
    let copy = World::load_binary(&registry, &world.save_binary().unwrap().data).unwrap();
    assert_eq!(copy.get::<Twig>(e), Some(&twig(MAX_DEPTH / 2)));
    world.insert(e, twig(MAX_DEPTH / 2 + 1)).unwrap();
    assert_eq!(
        world.save_binary().unwrap_err(),
        SaveError::Component {
            entity: e,
            component: "Twig".into(),
            field: format!("{}twigs", "twigs[0].".repeat(MAX_DEPTH / 2)),
            message: message.into(),
        }
    );
}

/// Panics when read: saves must not read components back.
#[derive(Component, Serialize, Default, Debug, Clone, PartialEq)]
struct Fragile(u32);

impl<'de> Deserialize<'de> for Fragile {
    fn deserialize<D: serde::Deserializer<'de>>(_: D) -> Result<Self, D::Error> {
        panic!("Fragile cannot be read back")
    }
}

/// Reads what `Fragile` writes.
#[derive(Component, Serialize, Deserialize, Default, Debug, Clone, PartialEq)]
struct Sturdy(u32);

#[test]
fn saves_never_read_components_back() {
    // Registering runs `Fragile`'s reader once on made-up input, to learn
    // how to save it; the panic is caught, and its values are saved as trees.
    let mut world = registered();
    world.register_serde::<Fragile>("Fragile");
    let a = world.spawn((Fragile(7), Health(1)));
    let b = world.spawn(Fragile(8));
    assert_eq!((a.to_string(), b.to_string()), ("0v1".into(), "1v1".into()));
    let json = world.save_json_pretty().unwrap().data;
    let entities = r#""entities": {
    "0v1": {
      "Health": 1,
      "Fragile": 7
    },
    "1v1": {
      "Fragile": 8
    }
  },"#;
    assert!(json.contains(entities), "{json}");
    let compact_json = world.save_json().unwrap().data;
    let tables = r#""tables":[{"entities":[0],"columns":{"Health":[1],"Fragile":[7]}},{"entities":[1],"columns":{"Fragile":[8]}}],"#;
    assert!(compact_json.contains(tables), "{compact_json}");
    let compact_ron = world.save_ron().unwrap().data;
    let tables =
        r#"tables:[(entities:[0],columns:{"Health":[1],"Fragile":[7]}),(entities:[1],columns:{"Fragile":[8]})],"#;
    assert!(compact_ron.contains(tables), "{compact_ron}");
    let ron = world.save_ron_pretty().unwrap().data;
    let entities = r#"entities: {
        "0v1": {
            "Health": 1,
            "Fragile": 7,
        },
        "1v1": {
            "Fragile": 8,
        },
    },"#;
    assert!(ron.contains(entities), "{ron}");
    let binary = world.save_binary().unwrap().data;
    // What was written reads back through a type that can read.
    let mut reader = registered();
    reader.register_serde::<Sturdy>("Fragile");
    let registry = reader.serde_registry();
    for copy in [
        World::load_json(&registry, &json).unwrap(),
        World::load_json(&registry, &compact_json).unwrap(),
        World::load_ron(&registry, &ron).unwrap(),
        World::load_ron(&registry, &compact_ron).unwrap(),
        World::load_binary(&registry, &binary).unwrap(),
    ] {
        assert_eq!((copy.get::<Sturdy>(a), copy.get::<Health>(a)), (Some(&Sturdy(7)), Some(&Health(1))));
        assert_eq!(copy.get::<Sturdy>(b), Some(&Sturdy(8)));
    }
}

/// Binary saves of the scene and of many plain components: their sizes
/// are those of typed columns (trees would take a tag byte per value and
/// field).
#[test]
fn plain_types_are_saved_typed() {
    let (scene, _) = scene();
    let mut many = registered();
    for i in 0..1000u32 {
        many.spawn((Position { x: i as f32, y: 0.5 }, Velocity(1.0, -1.0), Health(i), Mood::Angry(i as u8)));
        many.spawn((Name(format!("n{i}")), Marker, Mood::Scared { of: "x".into(), level: -1 }));
    }
    let sizes = [scene.save_binary().unwrap().data.len(), many.save_binary().unwrap().data.len()];
    // 44 bytes of each are the `Time` resource, which every world has and
    // every registry saves; the scene's save also names its one skipped
    // component by its type name (`models::save_load::Particle`, 27 bytes).
    assert_eq!(sizes, [223 + 27 + 44, 40_856 + 44]);
}

#[test]
fn an_inconsistent_allocator_is_refused_by_exact_loads() {
    let one = Entity::from_bits(1 << 32).unwrap();
    // Entity 0v1 in a slot whose saved generation is 2.
    let text = r#"{"format": "ecs-save", "version": 1, "allocator": {"generations": [[1, 2]], "free": []},
                   "entities": {"0v1": {"Health": 1}}, "resources": {}, "skipped": []}"#;
    assert_eq!(
        World::load_json(&registry(), text).unwrap_err(),
        LoadError::Allocator(AllocatorStateError::GenerationMismatch { entity: one, slot_generation: 2 })
    );
    // Merging ignores the saved allocator.
    assert_eq!(registered().load_into_json(text).unwrap().len(), 1);
    let free_and_live = r#"{"format": "ecs-save", "version": 1, "allocator": {"generations": [[1, 1]], "free": [0]},
                   "entities": {"0v1": {}}, "resources": {}, "skipped": []}"#;
    assert_eq!(
        World::load_json(&registry(), free_and_live).unwrap_err(),
        LoadError::Allocator(AllocatorStateError::LiveEntityIsFree(one))
    );
    // Slot 1 is not live, not free and not retired: its index would be lost.
    let lost = r#"{"format": "ecs-save", "version": 1, "allocator": {"generations": [[2, 1]], "free": []},
                   "entities": {"0v1": {}}, "resources": {}, "skipped": []}"#;
    assert_eq!(
        World::load_json(&registry(), lost).unwrap_err(),
        LoadError::Allocator(AllocatorStateError::LostIndex(1))
    );
    let huge = r#"{"format": "ecs-save", "version": 1, "allocator": {"generations": [[4000000000, 7]], "free": []},
                   "entities": {}, "resources": {}, "skipped": []}"#;
    assert_eq!(
        World::load_json(&registry(), huge).unwrap_err(),
        LoadError::TooManySlots { slots: 4_000_000_000, limit: archetable::data::MAX_RETIRED_SLOTS }
    );
}

// ---------------------------------------------------------------------------
// Round trips of random worlds.

fn finite_f32() -> impl Strategy<Value = f32> {
    any::<f32>().prop_filter("finite", |x| x.is_finite())
}

fn finite_f64() -> impl Strategy<Value = f64> {
    any::<f64>().prop_filter("finite", |x| x.is_finite())
}

fn mood() -> impl Strategy<Value = Mood> {
    prop_oneof![
        Just(Mood::Calm),
        any::<u8>().prop_map(Mood::Angry),
        (".{0,8}", any::<i16>()).prop_map(|(of, level)| Mood::Scared { of, level }),
    ]
}

/// One entity to spawn: which components it has. Handles are picked later,
/// by index into the entities spawned so far (possibly despawned ones).
#[derive(Clone, Debug)]
struct Plan {
    position: Option<(f32, f32)>,
    velocity: Option<(f64, f64)>,
    health: Option<u32>,
    name: Option<String>,
    marker: bool,
    mood: Option<Mood>,
    target: Option<usize>,
    links: Option<(Option<usize>, Vec<usize>)>,
    particle: bool,
    /// Despawn the entity spawned this many steps ago, if any.
    despawn: Option<usize>,
}

fn plan() -> impl Strategy<Value = Plan> {
    (
        (
            prop::option::of((finite_f32(), finite_f32())),
            prop::option::of((finite_f64(), finite_f64())),
            prop::option::of(any::<u32>()),
            prop::option::of("\\PC{0,12}"),
            any::<bool>(),
        ),
        (
            prop::option::of(mood()),
            prop::option::of(any::<usize>()),
            prop::option::of((prop::option::of(any::<usize>()), prop::collection::vec(any::<usize>(), 0..4))),
            any::<bool>(),
            prop::option::of(0usize..6),
        ),
    )
        .prop_map(|((position, velocity, health, name, marker), (mood, target, links, particle, despawn))| Plan {
            position,
            velocity,
            health,
            name,
            marker,
            mood,
            target,
            links,
            particle,
            despawn,
        })
}

fn build(plans: &[Plan]) -> World {
    let mut world = registered();
    let mut spawned: Vec<Entity> = Vec::new();
    for plan in plans {
        let e = world.spawn(());
        let pick = |i: usize| spawned.get(i % spawned.len().max(1)).copied().unwrap_or(e);
        if let Some((x, y)) = plan.position {
            world.insert(e, Position { x, y }).unwrap();
        }
        if let Some((a, b)) = plan.velocity {
            world.insert(e, Velocity(a, b)).unwrap();
        }
        if let Some(h) = plan.health {
            world.insert(e, Health(h)).unwrap();
        }
        if let Some(name) = &plan.name {
            world.insert(e, Name(name.clone())).unwrap();
        }
        if plan.marker {
            world.insert(e, Marker).unwrap();
        }
        if let Some(mood) = &plan.mood {
            world.insert(e, mood.clone()).unwrap();
        }
        if let Some(t) = plan.target {
            world.insert(e, Target(pick(t))).unwrap();
        }
        if let Some((leader, all)) = &plan.links {
            let all: Vec<Entity> = all.iter().map(|&i| pick(i)).collect();
            let weights = all.iter().enumerate().map(|(i, &e)| (e, i as u8)).collect();
            world.insert(e, Links { leader: leader.map(pick), all, weights }).unwrap();
        }
        if plan.particle {
            world.insert(e, Particle(1)).unwrap();
        }
        spawned.push(e);
        if let Some(back) = plan.despawn {
            if let Some(&victim) = spawned.len().checked_sub(back + 1).and_then(|i| spawned.get(i)) {
                let _ = world.despawn(victim);
            }
        }
    }
    world.insert_resource(Score(plans.len() as u64));
    world.insert_resource(Level { name: "random".into(), boss: spawned.last().copied() });
    world
}

fn cases() -> u32 {
    std::env::var("ECS_PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(24)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn random_worlds_round_trip_exactly(plans in prop::collection::vec(plan(), 0..24)) {
        let world = build(&plans);
        for format in FORMATS {
            let copy = load(&registry(), format, &save(&world, format)).unwrap();
            assert_exact_copy(&world, &copy);
            // And again, from the copy.
            assert_exact_copy(&copy, &load(&registry(), format, &save(&copy, format)).unwrap());
        }
        // Pretty text loads to the same world as compact text.
        let pretty_json = world.save_json_pretty().unwrap().data;
        assert_exact_copy(&world, &World::load_json(&registry(), &pretty_json).unwrap());
        let pretty_ron = world.save_ron_pretty().unwrap().data;
        assert_exact_copy(&world, &World::load_ron(&registry(), &pretty_ron).unwrap());
    }

    #[test]
    fn random_worlds_merge_with_remapped_handles(plans in prop::collection::vec(plan(), 0..16)) {
        let world = build(&plans);
        for format in FORMATS {
            let mut target = build(&plans[..plans.len() / 2]);
            let before = target.len();
            let map = load_into(&mut target, format, &save(&world, format)).unwrap();
            target.check_invariants().unwrap();
            prop_assert_eq!(target.len(), before + world.len());
            for e in live(&world) {
                let new = map.get(e).unwrap();
                let expected = snapshot(&world, e, &|e| map.get(e).unwrap_or(EntityMap::DANGLING));
                prop_assert_eq!(snapshot(&target, new, &|e| e), expected);
            }
        }
    }
}

#[test]
fn the_clock_is_saved_and_loaded() {
    let mut world = registered();
    world.resource_mut::<Time>().set_scale(0.5);
    world.resource_mut::<Time>().advance(std::time::Duration::from_millis(40));
    world.resource_mut::<Time>().pause();
    let time = world.resource::<Time>().clone();
    for format in [Format::Json, Format::Ron, Format::Binary] {
        let loaded = load(&world.serde_registry(), format, &save(&world, format)).unwrap();
        assert_eq!(*loaded.resource::<Time>(), time, "{format:?}");
        assert_eq!(loaded.resource::<Time>().elapsed(), std::time::Duration::from_millis(20));
        assert!(loaded.resource::<Time>().is_paused());
    }
}
