//! Prefabs: reading JSON and RON, `extends`, defaults, overrides, spawning
//! through the world and through commands, and every error, each with its
//! exact variant and with nothing spawned.

#![cfg(feature = "serde")]

use std::path::Path;

use archetable::data::{Format, PrefabError, PrefabSpawnFailed};
use archetable::prelude::*;
use serde::{Deserialize, Serialize};

#[derive(Component, Serialize, Deserialize, Default, Debug, Clone, PartialEq)]
struct Position {
    x: f32,
    y: f32,
}

#[derive(Component, Serialize, Deserialize, Default, Debug, Clone, PartialEq)]
struct Move {
    speed: f32,
    turn: f32,
}

#[derive(Component, Serialize, Deserialize, Default, Debug, Clone, PartialEq)]
struct Render;

#[derive(Component, Serialize, Deserialize, Default, Debug, Clone, PartialEq)]
struct Color {
    color: String,
}

#[derive(Component, Serialize, Deserialize, Default, Debug, Clone, PartialEq)]
struct Name(String);

#[derive(Component, Serialize, Deserialize, Default, Debug, Clone, PartialEq)]
struct Stats {
    hp: u32,
    armor: Armor,
    tags: Vec<String>,
}

#[derive(Serialize, Deserialize, Default, Debug, Clone, PartialEq)]
struct Armor {
    head: u8,
    body: u8,
}

#[derive(Component, Serialize, Deserialize, Default, Debug, Clone, PartialEq)]
enum Shape {
    #[default]
    Dot,
    Circle {
        r: f32,
        filled: bool,
    },
    Square(f32),
}

/// No `Default`: a prefab must give every field.
#[derive(Component, Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Spawner {
    every: u32,
    what: String,
}

fn world() -> World {
    let mut world = World::new();
    world
        .register_serde::<Position>("Position")
        .register_serde::<Move>("Move")
        .register_serde::<Render>("Render")
        .register_serde::<Color>("Color")
        .register_serde::<Name>("Name")
        .register_serde::<Stats>("Stats")
        .register_serde::<Shape>("Shape")
        .register_serde_without_default::<Spawner>("Spawner");
    world
}

const PREFABS: &str = r#"{
  "Ball": { "Move": {"speed": 2.0}, "Render": {}, "Color": {"color": "red"} },
  "Zombie": {
    "Position": {},
    "Move": {"speed": 0.5, "turn": 1.0},
    "Color": {"color": "grey"},
    "Stats": {"hp": 40, "armor": {"head": 1, "body": 2}, "tags": ["undead"]},
    "Shape": {"Circle": {"r": 1.0, "filled": true}}
  },
  "GreenZombie": { "extends": "Zombie", "Color": {"color": "green"}, "Stats": {"armor": {"body": 5}} },
  "BigGreenZombie": { "extends": "GreenZombie", "Stats": {"hp": 90}, "Shape": {"Circle": {"r": 3.0}} },
  "SquareZombie": { "extends": "Zombie", "Shape": {"Square": 2.0} },
  "Nest": { "Spawner": {"every": 10, "what": "Zombie"} }
}"#;

fn prefabs() -> Prefabs {
    Prefabs::from_json_str(PREFABS).unwrap()
}

#[test]
fn the_issue_example_spawns_with_defaults_for_missing_fields() {
    let mut world = world();
    let prefabs =
        Prefabs::from_json_str(r#"{ "Ball": { "Move": {"speed": 2.0}, "Render": {}, "Color": {"color": "red"} } }"#)
            .unwrap();
    let ball = world.spawn_prefab(&prefabs, "Ball").unwrap();
    assert_eq!(world.get::<Move>(ball), Some(&Move { speed: 2.0, turn: 0.0 }));
    assert!(world.has::<Render>(ball));
    assert_eq!(world.get::<Color>(ball).unwrap().color, "red");
    assert!(!world.has::<Position>(ball));
}

#[test]
fn extends_takes_fields_from_the_parent_then_from_default() {
    let mut world = world();
    let prefabs = prefabs();
    let green = world.spawn_prefab(&prefabs, "GreenZombie").unwrap();
    assert_eq!(world.get::<Color>(green).unwrap().color, "green");
    assert_eq!(world.get::<Move>(green), Some(&Move { speed: 0.5, turn: 1.0 }));
    assert_eq!(world.get::<Position>(green), Some(&Position::default()));
    assert_eq!(
        world.get::<Stats>(green),
        Some(&Stats { hp: 40, armor: Armor { head: 1, body: 5 }, tags: vec!["undead".into()] })
    );

    let big = world.spawn_prefab(&prefabs, "BigGreenZombie").unwrap();
    assert_eq!(world.get::<Stats>(big).unwrap().hp, 90);
    assert_eq!(world.get::<Stats>(big).unwrap().armor, Armor { head: 1, body: 5 });
    assert_eq!(world.get::<Color>(big).unwrap().color, "green");
    // Same variant: its fields merge.
    assert_eq!(world.get::<Shape>(big), Some(&Shape::Circle { r: 3.0, filled: true }));
    // Another variant: replaced whole.
    let square = world.spawn_prefab(&prefabs, "SquareZombie").unwrap();
    assert_eq!(world.get::<Shape>(square), Some(&Shape::Square(2.0)));
}

#[test]
fn ron_prefabs_match_json_ones() {
    let ron = r#"{
        "Zombie": {
            "Position": (),
            "Move": (speed: 0.5, turn: 1.0),
            "Color": (color: "grey"),
            "Stats": (hp: 40, armor: (head: 1, body: 2), tags: ["undead"]),
            "Shape": {"Circle": (r: 1.0, filled: true)},
        },
        "GreenZombie": { "extends": "Zombie", "Color": (color: "green"), "Stats": (armor: (body: 5)) },
    }"#;
    let from_ron = Prefabs::from_ron_str(ron).unwrap();
    let mut a = world();
    let mut b = world();
    let x = a.spawn_prefab(&from_ron, "GreenZombie").unwrap();
    let y = b.spawn_prefab(&prefabs(), "GreenZombie").unwrap();
    assert_eq!(a.get::<Stats>(x), b.get::<Stats>(y));
    assert_eq!(a.get::<Color>(x), b.get::<Color>(y));
    assert_eq!(a.get::<Shape>(x), b.get::<Shape>(y));
    assert_eq!(a.get::<Move>(x), b.get::<Move>(y));
}

#[test]
fn the_example_assets_load_in_both_formats() {
    let assets = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/assets");
    let json = Prefabs::load(assets.join("prefabs.json")).unwrap();
    let ron = Prefabs::load(assets.join("prefabs.ron")).unwrap();
    assert_eq!(json.names().collect::<Vec<_>>(), ron.names().collect::<Vec<_>>());
    assert!(json.contains("GreenZombie") && !json.is_empty());
    assert_eq!(json.len(), 4);
}

#[test]
fn overrides_merge_field_by_field_and_may_add_components() {
    let mut world = world();
    let prefabs = prefabs();
    // The red ball named Chet.
    let chet = Overrides::new().set("Color", "color", "red").component("Name", "Chet");
    let ball = world.spawn_prefab_with(&prefabs, "Ball", &chet).unwrap();
    assert_eq!(world.get::<Name>(ball), Some(&Name("Chet".into())));
    assert_eq!(world.get::<Move>(ball).unwrap().speed, 2.0);

    let nested = Overrides::new().set("Stats", "armor.head", 7).set("Stats", "hp", 1);
    let z = world.spawn_prefab_with(&prefabs, "GreenZombie", &nested).unwrap();
    assert_eq!(world.get::<Stats>(z).unwrap().armor, Armor { head: 7, body: 5 });
    assert_eq!(world.get::<Stats>(z).unwrap().hp, 1);

    let json = Overrides::from_json_str(r#"{"Position": {"y": 3.5}, "Name": "Zed"}"#).unwrap();
    let z = world.spawn_prefab_with(&prefabs, "Zombie", &json).unwrap();
    assert_eq!(world.get::<Position>(z), Some(&Position { x: 0.0, y: 3.5 }));
    let ron = Overrides::from_ron_str(r#"{"Position": (x: 1.5)}"#).unwrap();
    let z = world.spawn_prefab_with(&prefabs, "Zombie", &ron).unwrap();
    assert_eq!(world.get::<Position>(z), Some(&Position { x: 1.5, y: 0.0 }));

    let typed = Overrides::new().component("Move", Move { speed: 9.0, turn: 9.0 });
    let z = world.spawn_prefab_with(&prefabs, "Zombie", &typed).unwrap();
    assert_eq!(world.get::<Move>(z), Some(&Move { speed: 9.0, turn: 9.0 }));
}

#[test]
fn types_without_default_need_every_field() {
    let mut world = world();
    let nest = world.spawn_prefab(&prefabs(), "Nest").unwrap();
    assert_eq!(world.get::<Spawner>(nest), Some(&Spawner { every: 10, what: "Zombie".into() }));
    let partial = Prefabs::from_json_str(r#"{"Nest": {"Spawner": {"every": 3}}}"#).unwrap();
    assert_eq!(
        world.spawn_prefab(&partial, "Nest"),
        Err(PrefabError::Field {
            prefab: "Nest".into(),
            component: "Spawner".into(),
            field: String::new(),
            message: "missing field `what`".into(),
        })
    );
}

#[test]
fn commands_spawn_prefabs_when_applied() {
    let mut world = world();
    let prefabs = prefabs();
    let mut queue = CommandQueue::default();
    let (ball, named) = {
        let mut commands = Commands::new(&mut queue, &world);
        let ball = commands.spawn_prefab(&prefabs, "Ball").id();
        let named = commands
            .spawn_prefab_with(&prefabs, "Zombie", Overrides::new().component("Name", "Zed"))
            .insert(Render)
            .id();
        (ball, named)
    };
    assert!(!world.contains(ball));
    queue.apply(&mut world);
    assert_eq!(world.get::<Color>(ball).unwrap().color, "red");
    assert_eq!(world.get::<Name>(named).unwrap().0, "Zed");
    assert!(world.has::<Render>(named));
}

#[test]
fn a_failed_command_spawn_leaves_nothing_and_sends_an_event() {
    let mut world = world();
    let prefabs = prefabs();
    let mut queue = CommandQueue::default();
    let entity = Commands::new(&mut queue, &world).spawn_prefab(&prefabs, "Bal").id();
    queue.apply(&mut world);
    assert!(!world.contains(entity));
    assert!(world.is_empty());
    let failed: Vec<PrefabSpawnFailed> = world.resource::<Events<PrefabSpawnFailed>>().iter().cloned().collect();
    assert_eq!(
        failed,
        [PrefabSpawnFailed {
            entity,
            prefab: "Bal".into(),
            error: PrefabError::UnknownPrefab { prefab: "Bal".into(), suggestion: Some("Ball".into()) },
        }]
    );
}

#[test]
fn check_validates_every_prefab_against_the_registry() {
    let world = world();
    assert_eq!(prefabs().check(&world.serde_registry()), Ok(()));
    let bad = Prefabs::from_json_str(r#"{"A": {"Move": {}}, "B": {"Colour": {}}}"#).unwrap();
    assert_eq!(
        bad.check(&world.serde_registry()),
        Err(PrefabError::UnknownComponent {
            prefab: "B".into(),
            component: "Colour".into(),
            suggestion: Some("Color".into())
        })
    );
}

// ---------------------------------------------------------------------------
// Errors: each variant, and nothing spawned.

/// Spawns `name` from `text`, asserting that a failure spawned nothing.
fn spawn_error(text: &str, name: &str) -> PrefabError {
    let mut world = world();
    world.spawn(Position::default());
    let prefabs = Prefabs::from_json_str(text).unwrap();
    let error = world.spawn_prefab(&prefabs, name).unwrap_err();
    assert_eq!(world.len(), 1, "a failed spawn must not leave an entity behind");
    world.check_invariants().unwrap();
    error
}

#[test]
fn unknown_prefab_suggests_the_nearest_name() {
    assert_eq!(
        spawn_error(PREFABS, "GreenZombi"),
        PrefabError::UnknownPrefab { prefab: "GreenZombi".into(), suggestion: Some("GreenZombie".into()) }
    );
    assert_eq!(
        spawn_error(PREFABS, "Dragon"),
        PrefabError::UnknownPrefab { prefab: "Dragon".into(), suggestion: None }
    );
}

#[test]
fn unknown_component_suggests_the_nearest_registered_name() {
    let error = spawn_error(r#"{"Ball": {"Move": {"speed": 1.0}, "Postion": {}}}"#, "Ball");
    assert_eq!(
        error,
        PrefabError::UnknownComponent {
            prefab: "Ball".into(),
            component: "Postion".into(),
            suggestion: Some("Position".into())
        }
    );
    assert_eq!(error.to_string(), "prefab `Ball`: no component registered as `Postion` (did you mean `Position`?)");
    // Named by the prefab that holds the typo, even when spawning a child.
    let error = spawn_error(r#"{"A": {"Sprite": {}}, "B": {"extends": "A"}}"#, "B");
    assert_eq!(
        error,
        PrefabError::UnknownComponent { prefab: "A".into(), component: "Sprite".into(), suggestion: None }
    );
}

#[test]
fn a_field_of_the_wrong_type_is_named() {
    // The first component is fine; the second fails: nothing is spawned.
    let error = spawn_error(r#"{"Ball": {"Color": {"color": "red"}, "Move": {"speed": "fast"}}}"#, "Ball");
    assert_eq!(
        error,
        PrefabError::Field {
            prefab: "Ball".into(),
            component: "Move".into(),
            field: "speed".into(),
            message: "invalid type: string \"fast\", expected f32".into(),
        }
    );
    assert_eq!(
        error.to_string(),
        "prefab `Ball`, component `Move`, field `speed`: invalid type: string \"fast\", expected f32"
    );
    let nested = spawn_error(r#"{"Z": {"Stats": {"armor": {"head": 300}, "tags": ["a", 2]}}}"#, "Z");
    assert_eq!(
        nested,
        PrefabError::Field {
            prefab: "Z".into(),
            component: "Stats".into(),
            field: "armor.head".into(),
            message: "invalid value: integer `300`, expected u8".into(),
        }
    );
    let in_list = spawn_error(r#"{"Z": {"Stats": {"tags": ["a", 2]}}}"#, "Z");
    assert_eq!(
        in_list,
        PrefabError::Field {
            prefab: "Z".into(),
            component: "Stats".into(),
            field: "tags[1]".into(),
            message: "invalid type: integer `2`, expected a string".into(),
        }
    );
}

#[test]
fn numbers_too_large_for_an_f32_are_refused() {
    let out_of_range = |prefab: &str, component: &str, field: &str, number: &str| PrefabError::Field {
        prefab: prefab.into(),
        component: component.into(),
        field: field.into(),
        message: format!("the number {number} is out of range for f32"),
    };
    assert_eq!(
        spawn_error(r#"{"Ball": {"Position": {"x": 1e39}}}"#, "Ball"),
        out_of_range("Ball", "Position", "x", "1e39")
    );
    assert_eq!(
        spawn_error(r#"{"Ball": {"Shape": {"Square": -1e39}}}"#, "Ball"),
        out_of_range("Ball", "Shape", "Square", "-1e39")
    );
    let mut world = world();
    let prefabs = Prefabs::from_ron_str(r#"{"Ball": {"Move": (speed: 1e39)}, "Fast": {"extends": "Ball"}}"#).unwrap();
    assert_eq!(world.spawn_prefab(&prefabs, "Fast").unwrap_err(), out_of_range("Fast", "Move", "speed", "1e39"));
    // Through overrides, from a file or from code.
    let prefabs = Prefabs::from_json_str(r#"{"Ball": {"Move": {"speed": 1.0}}}"#).unwrap();
    let from_file = Overrides::from_json_str(r#"{"Move": {"turn": 4e38}}"#).unwrap();
    assert_eq!(
        world.spawn_prefab_with(&prefabs, "Ball", &from_file).unwrap_err(),
        out_of_range("Ball", "Move", "turn", "4e38")
    );
    let from_code = Overrides::new().set("Move", "turn", 1e300);
    assert_eq!(
        world.spawn_prefab_with(&prefabs, "Ball", &from_code).unwrap_err(),
        out_of_range("Ball", "Move", "turn", "1e300")
    );
    assert!(world.is_empty());
    // In range: as before.
    let e = world.spawn_prefab_with(&prefabs, "Ball", &Overrides::new().set("Move", "turn", 3e38)).unwrap();
    assert_eq!(world.get::<Move>(e), Some(&Move { speed: 1.0, turn: 3e38 }));
}

#[test]
fn unknown_fields_and_variants_are_refused_with_a_suggestion() {
    assert_eq!(
        spawn_error(r#"{"Ball": {"Move": {"sped": 2.0}}}"#, "Ball"),
        PrefabError::Field {
            prefab: "Ball".into(),
            component: "Move".into(),
            field: "sped".into(),
            message: "unknown field `sped`, did you mean `speed`?".into(),
        }
    );
    assert_eq!(
        spawn_error(r#"{"Ball": {"Shape": {"Circel": {"r": 1.0}}}}"#, "Ball"),
        PrefabError::Field {
            prefab: "Ball".into(),
            component: "Shape".into(),
            field: String::new(),
            message: "unknown variant `Circel`, did you mean `Circle`?".into(),
        }
    );
}

#[test]
fn a_cycle_of_extends_is_refused_when_read() {
    let error =
        Prefabs::from_json_str(r#"{"A": {"extends": "B"}, "B": {"extends": "C"}, "C": {"extends": "A"}}"#).unwrap_err();
    assert_eq!(error, PrefabError::ExtendsCycle { cycle: vec!["A".into(), "B".into(), "C".into()] });
    assert_eq!(error.to_string(), "prefabs extend each other in a circle: A -> B -> C -> A");
}

#[test]
fn extending_a_missing_prefab_is_refused_when_read() {
    assert_eq!(
        Prefabs::from_json_str(r#"{"Zombie": {}, "Green": {"extends": "Zombi"}}"#).unwrap_err(),
        PrefabError::UnknownParent {
            prefab: "Green".into(),
            parent: "Zombi".into(),
            suggestion: Some("Zombie".into())
        }
    );
}

#[test]
fn malformed_json_reports_line_and_column() {
    let error = Prefabs::from_json_str("{\n  \"Ball\": {\n    \"Move\": {\"speed\": 2.0,}\n  }\n}").unwrap_err();
    assert_eq!(
        error,
        PrefabError::Syntax { format: Format::Json, line: 3, column: 27, message: "trailing comma".into() }
    );
    assert_eq!(error.to_string(), "JSON syntax error at line 3, column 27: trailing comma");
}

#[test]
fn malformed_ron_reports_line_and_column() {
    let error = Prefabs::from_ron_str("{\n  \"Ball\": {\n    \"Move\": (speed: 2.0\n}").unwrap_err();
    let PrefabError::Syntax { format: Format::Ron, line, column, .. } = error else {
        panic!("expected a RON syntax error, got {error:?}");
    };
    assert_eq!((line, column), (4, 1));
}

#[test]
fn the_shape_of_the_file_is_checked() {
    assert_eq!(
        Prefabs::from_json_str("[1, 2]").unwrap_err(),
        PrefabError::Malformed {
            prefab: None,
            message: "the top level must be a map from prefab names to prefabs".into()
        }
    );
    assert_eq!(
        Prefabs::from_json_str(r#"{"Ball": 3}"#).unwrap_err(),
        PrefabError::Malformed {
            prefab: Some("Ball".into()),
            message: "a prefab must be a map from component names to values".into()
        }
    );
    assert_eq!(
        Prefabs::from_json_str(r#"{"Ball": {"extends": 3}}"#).unwrap_err(),
        PrefabError::Malformed {
            prefab: Some("Ball".into()),
            message: "`extends` must be the name of a prefab".into()
        }
    );
    assert_eq!(
        Prefabs::from_json_str(r#"{"Ball": {}, "Ball": {}}"#).unwrap_err(),
        PrefabError::DuplicatePrefab { prefab: "Ball".into() }
    );
    assert_eq!(
        Prefabs::from_json_str(r#"{"Ball": {"Move": {}, "Move": {}}}"#).unwrap_err(),
        PrefabError::DuplicateComponent { prefab: "Ball".into(), component: "Move".into() }
    );
}

#[test]
fn files_are_checked_by_extension_and_existence() {
    let assets = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/assets");
    assert_eq!(
        Prefabs::load(assets.join("prefabs.yaml")).unwrap_err(),
        PrefabError::UnsupportedFile { path: assets.join("prefabs.yaml") }
    );
    let missing = assets.join("missing.json");
    assert!(matches!(Prefabs::load(&missing).unwrap_err(), PrefabError::Io { path, .. } if path == missing));
}

#[test]
#[should_panic(expected = "component name `Move` is already registered for another type")]
fn a_name_taken_by_another_type_panics() {
    world().register_serde::<Position>("Move");
}

#[test]
#[should_panic(expected = "is already registered as `Move`, not `Motion`")]
fn a_type_under_two_names_panics() {
    world().register_serde::<Move>("Motion");
}

#[test]
fn registering_the_same_pair_again_is_harmless() {
    let mut world = world();
    world.register_serde::<Move>("Move");
    assert_eq!(world.serde_registry().component_name::<Move>(), Some("Move"));
    assert_eq!(
        world.serde_registry().component_names().count(),
        8 + 4,
        "the test's and ChildOf, Children, Disabled, Name"
    );
}

// ---------------------------------------------------------------------------
// Hostile sizes: each of these would take minutes if the work grew with the
// square of the input, as it once did.

/// A megabyte of `a`, then `end`.
fn megabyte_name(end: &str) -> String {
    format!("{}{end}", "a".repeat(1 << 20))
}

/// Asserts `actual == expected` without printing megabytes when it fails.
fn assert_same(actual: PrefabError, expected: PrefabError) {
    if actual != expected {
        let short = |e: &PrefabError| e.to_string().replace(&"a".repeat(1 << 20), "<a megabyte of a>");
        panic!("expected {}\n     got {}", short(&expected), short(&actual));
    }
}

#[test]
fn megabyte_names_are_refused_without_a_suggestion() {
    let mut world = world();
    // A prefab with a megabyte name, and one asked for that differs from it
    // in one letter.
    let text = format!(r#"{{"{}": {{"Render": {{}}}}, "Ball": {{"Render": {{}}}}}}"#, megabyte_name("x"));
    let prefabs = Prefabs::from_json_str(&text).unwrap();
    assert_same(
        world.spawn_prefab(&prefabs, &megabyte_name("y")).unwrap_err(),
        PrefabError::UnknownPrefab { prefab: megabyte_name("y"), suggestion: None },
    );
    assert_eq!(world.len(), 0);
    // Extending a missing megabyte name beside an existing one.
    let text = format!(r#"{{"{}": {{}}, "Child": {{"extends": "{}"}}}}"#, megabyte_name("x"), megabyte_name("y"));
    assert_same(
        Prefabs::from_json_str(&text).unwrap_err(),
        PrefabError::UnknownParent { prefab: "Child".into(), parent: megabyte_name("y"), suggestion: None },
    );
    // Megabyte component and field names.
    let text = format!(r#"{{"Ball": {{"{}": {{}}}}}}"#, megabyte_name("Move"));
    assert_same(
        world.spawn_prefab(&Prefabs::from_json_str(&text).unwrap(), "Ball").unwrap_err(),
        PrefabError::UnknownComponent { prefab: "Ball".into(), component: megabyte_name("Move"), suggestion: None },
    );
    let text = format!(r#"{{"Ball": {{"Move": {{"{}": 1.0}}}}}}"#, megabyte_name("speed"));
    assert_same(
        world.spawn_prefab(&Prefabs::from_json_str(&text).unwrap(), "Ball").unwrap_err(),
        PrefabError::Field {
            prefab: "Ball".into(),
            component: "Move".into(),
            field: megabyte_name("speed"),
            message: format!("unknown field `{}`, expected one of `speed`, `turn`", megabyte_name("speed")),
        },
    );
    // Short names still get suggestions.
    assert_eq!(
        world.spawn_prefab(&prefabs, "Bal").unwrap_err(),
        PrefabError::UnknownPrefab { prefab: "Bal".into(), suggestion: Some("Ball".into()) }
    );
}

/// Prefabs `P0` to `P{n-1}`, each extending the one before.
fn chain(n: usize, body: impl Fn(usize) -> String) -> String {
    let mut text = String::from("{");
    for i in 0..n {
        let extends = if i == 0 { String::new() } else { format!(r#""extends": "P{}", "#, i - 1) };
        let separator = if i + 1 == n { "" } else { ",\n" };
        text.push_str(&format!(r#""P{i}": {{{extends}{}}}{separator}"#, body(i)));
    }
    text.push('}');
    text
}

#[test]
fn a_twenty_thousand_deep_extends_chain_spawns() {
    const N: usize = 20_000;
    let mut world = world();
    // The root renders; then each prefab changes one component in turn;
    // the last one adds a colour.
    let prefabs = Prefabs::from_json_str(&chain(N, |i| match (i, i % 3) {
        (0, _) => r#""Render": {}, "Position": {"y": -1.0}"#.into(),
        (i, _) if i == N - 1 => r#""Color": {"color": "last"}, "Name": "last""#.into(),
        (i, 0) => format!(r#""Position": {{"x": {i}.0}}"#),
        (i, 1) => format!(r#""Name": "n{i}""#),
        (i, _) => format!(r#""Move": {{"speed": {i}.0}}"#),
    }))
    .unwrap();
    assert_eq!(prefabs.len(), N);
    let e = world.spawn_prefab(&prefabs, &format!("P{}", N - 1)).unwrap();
    assert_eq!(world.get::<Position>(e), Some(&Position { x: 19_998.0, y: -1.0 }));
    assert_eq!(world.get::<Move>(e), Some(&Move { speed: 19_997.0, turn: 0.0 }));
    assert_eq!(world.get::<Name>(e), Some(&Name("last".into())));
    assert_eq!(world.get::<Color>(e), Some(&Color { color: "last".into() }));
    assert!(world.has::<Render>(e));
    assert!(!world.has::<Stats>(e) && !world.has::<Shape>(e) && !world.has::<Spawner>(e));
}

#[test]
fn a_twenty_thousand_deep_chain_of_unknown_components_is_refused() {
    const N: usize = 20_000;
    let mut world = world();
    // Each prefab names six components of its own: 120,000 names, each of
    // which was once compared with all the names before it.
    let name = |i: usize, j: usize| format!("Unknown{i}.{j}");
    let body = |i| (0..6).map(|j| format!(r#""{}": {{}}"#, name(i, j))).collect::<Vec<_>>().join(", ");
    let prefabs = Prefabs::from_json_str(&chain(N, body)).unwrap();
    assert_eq!(
        world.spawn_prefab(&prefabs, &format!("P{}", N - 1)).unwrap_err(),
        PrefabError::UnknownComponent { prefab: "P0".into(), component: name(0, 0), suggestion: None }
    );
    assert_eq!(world.len(), 0);
}

#[test]
fn maps_with_many_keys_merge_in_linear_time() {
    #[derive(Component, Serialize, Deserialize, Default, Debug, PartialEq)]
    struct Scores(std::collections::BTreeMap<String, u32>);
    const N: u32 = 50_000;
    let mut world = world();
    world.register_serde::<Scores>("Scores");
    let keys = |range: std::ops::Range<u32>, value: u32| {
        range.map(|i| format!(r#""k{i}": {value}"#)).collect::<Vec<_>>().join(", ")
    };
    // A map of N keys, and an override giving half of them and N others.
    let prefabs = Prefabs::from_json_str(&format!(r#"{{"P": {{"Scores": {{{}}}}}}}"#, keys(0..N, 1))).unwrap();
    let overrides = Overrides::from_json_str(&format!(r#"{{"Scores": {{{}}}}}"#, keys(N / 2..N + N, 2))).unwrap();
    let e = world.spawn_prefab_with(&prefabs, "P", &overrides).unwrap();
    let scores = &world.get::<Scores>(e).unwrap().0;
    assert_eq!(scores.len(), 2 * N as usize);
    assert_eq!(scores.values().filter(|&&v| v == 1).count(), N as usize / 2);
    assert_eq!((scores["k0"], scores[&format!("k{}", N / 2)], scores[&format!("k{}", 2 * N - 1)]), (1, 2, 2));
}

#[test]
fn override_files_with_many_components_merge_in_linear_time() {
    const N: u32 = 100_000;
    let mut world = world();
    let many = (0..N).map(|i| format!(r#""C{i}": {{}}"#)).collect::<Vec<_>>().join(", ");
    let overrides = Overrides::from_json_str(&format!("{{{many}}}")).unwrap();
    let empty = Prefabs::from_json_str(r#"{"P": {}}"#).unwrap();
    assert_eq!(
        world.spawn_prefab_with(&empty, "P", &overrides).unwrap_err(),
        PrefabError::UnknownComponent { prefab: "P".into(), component: "C0".into(), suggestion: None }
    );
}
