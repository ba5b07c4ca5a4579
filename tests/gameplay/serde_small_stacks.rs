//! Loads on the smallest thread stack the serde layer supports (256 KiB):
//! values nested to the limit load, deeper ones fail cleanly, in every
//! format and through prefabs. The files are written by hand, so the test
//! does not depend on what the saver agrees to write.
//!
//! Not run under sanitizers, whose stack frames are several times larger.

#![cfg(feature = "serde")]

use archetable::data::{Format, LoadError, PrefabError, SerdeRegistry, MAX_DEPTH, MAX_RON_DEPTH};
use archetable::prelude::*;
use serde::{Deserialize, Serialize};

/// A component that contains itself: as deep as the file says.
#[derive(Component, Serialize, Deserialize, Default, Debug, Clone, PartialEq)]
struct Tree(Vec<Tree>);

impl Tree {
    /// The level of the deepest list below this one (0 for an empty list).
    fn depth(&self) -> usize {
        let mut depth = 0;
        let mut at = self;
        while let Some(inner) = at.0.first() {
            depth += 1;
            at = inner;
        }
        depth
    }
}

/// Runs `f` on a thread with a 256 KiB stack.
fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new().stack_size(256 * 1024).spawn(f).unwrap().join().unwrap()
}

fn registry() -> SerdeRegistry {
    let mut world = World::new();
    world.register_serde::<Tree>("Tree");
    world.serde_registry()
}

/// A `Tree` whose innermost list is at level `level`: `level + 1` lists.
fn lists(level: usize) -> String {
    format!("{}{}", "[".repeat(level + 1), "]".repeat(level + 1))
}

fn entity() -> Entity {
    Entity::from_bits(1 << 32).unwrap()
}

const JSON_HEAD: &str = r#"{"format": "ecs-save", "version": 1, "allocator": {"generations": [[1, 1]], "free": []}, "entities": {"0v1": {"Tree": "#;
const RON_HEAD: &str =
    r#"(format: "ecs-save", version: 1, allocator: (generations: [(1, 1)], free: []), entities: {"0v1": {"Tree": "#;

fn json_save(level: usize) -> String {
    format!("{JSON_HEAD}{}}}}}}}", lists(level))
}

fn ron_save(level: usize) -> String {
    format!("{RON_HEAD}{}}}}})", lists(level))
}

/// Appends `n` as a postcard varint.
fn varint(out: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

/// A binary save (layout 2) of entity 0v1 with one `Tree` column: typed
/// (each list its length, then its elements) or as `Value` trees (each
/// list the tag `Seq`, 11, then its length and elements).
fn binary_save(level: usize, trees: bool) -> Vec<u8> {
    let mut column = Vec::new();
    for _ in 0..level {
        if trees {
            column.push(11);
        }
        column.push(1);
    }
    if trees {
        column.push(11);
    }
    column.push(0);
    let mut out = vec![8];
    out.extend_from_slice(b"ecs-save");
    out.push(2); // layout version
    out.extend_from_slice(&[1, 1, 1, 0]); // allocator: one slot of generation 1, none free
    out.extend_from_slice(&[1, 4]);
    out.extend_from_slice(b"Tree");
    out.extend_from_slice(&[1, 1, 0, 1, 1]); // one table, one entity: index 0, generation 1; one column
    out.extend_from_slice(&[0, u8::from(trees)]); // component 0, typed or trees
    varint(&mut out, column.len() as u64);
    out.extend_from_slice(&column);
    out.extend_from_slice(&[0, 0]); // no resources, nothing skipped
    out
}

#[test]
fn saves_nested_to_the_limit_load_on_a_small_stack() {
    let depths = on_small_stack(|| {
        let registry = registry();
        let tree = |world: World| world.get::<Tree>(entity()).unwrap().depth();
        let mut depths = vec![
            tree(World::load_json(&registry, &json_save(MAX_DEPTH)).unwrap()),
            tree(World::load_ron(&registry, &ron_save(MAX_RON_DEPTH)).unwrap()),
            tree(World::load_binary(&registry, &binary_save(MAX_DEPTH, false)).unwrap()),
            tree(World::load_binary(&registry, &binary_save(MAX_DEPTH, true)).unwrap()),
        ];
        let mut world = World::new();
        world.insert_resource(registry);
        let map = world.load_into_json(&json_save(MAX_DEPTH)).unwrap();
        depths.push(world.get::<Tree>(map.get(entity()).unwrap()).unwrap().depth());
        let map = world.load_into_binary(&binary_save(MAX_DEPTH, false)).unwrap();
        depths.push(world.get::<Tree>(map.get(entity()).unwrap()).unwrap().depth());
        depths
    });
    assert_eq!(depths, [MAX_DEPTH, MAX_RON_DEPTH, MAX_DEPTH, MAX_DEPTH, MAX_DEPTH, MAX_DEPTH]);
}

#[test]
fn saves_nested_past_the_limit_fail_cleanly_on_a_small_stack() {
    let errors = on_small_stack(|| {
        let registry = registry();
        let mut errors = Vec::new();
        for level in [MAX_DEPTH + 1, 100_000] {
            errors.push(World::load_json(&registry, &json_save(level)).unwrap_err());
            errors.push(World::load_binary(&registry, &binary_save(level, false)).unwrap_err());
            errors.push(World::load_binary(&registry, &binary_save(level, true)).unwrap_err());
            let mut world = World::new();
            world.insert_resource(registry.clone());
            errors.push(world.load_into_json(&json_save(level)).unwrap_err());
            errors.push(world.load_into_binary(&binary_save(level, false)).unwrap_err());
            assert!(world.is_empty());
        }
        for level in [MAX_RON_DEPTH + 1, 100_000] {
            errors.push(World::load_ron(&registry, &ron_save(level)).unwrap_err());
        }
        errors
    });
    // The text formats stop on the list that would go past the limit (its
    // `[` is the last character read).
    let json = LoadError::Syntax {
        format: Format::Json,
        line: 1,
        column: JSON_HEAD.len() + MAX_DEPTH + 1,
        message: format!("data nested deeper than {MAX_DEPTH} levels"),
    };
    let component = LoadError::Component {
        entity: entity(),
        component: "Tree".into(),
        field: String::new(),
        message: format!("data nested deeper than {MAX_DEPTH} levels"),
    };
    let ron = LoadError::Syntax {
        format: Format::Ron,
        line: 1,
        column: RON_HEAD.len() + MAX_RON_DEPTH + 2,
        message: format!("data nested deeper than {MAX_RON_DEPTH} levels"),
    };
    let each = [json.clone(), component.clone(), component.clone(), json, component];
    let expected: Vec<LoadError> = each.iter().chain(&each).cloned().chain([ron.clone(), ron]).collect();
    assert_eq!(errors, expected);
}

const PREFAB_JSON_HEAD: &str = r#"{"Deep": {"Tree": "#;
const PREFAB_RON_HEAD: &str = r#"{"Deep": {"Tree": "#;

#[test]
fn prefabs_nested_to_the_limit_spawn_on_a_small_stack() {
    let results = on_small_stack(|| {
        let mut world = World::new();
        world.register_serde::<Tree>("Tree");
        let mut spawn = |prefabs: Result<Prefabs, PrefabError>| {
            let entity = world.spawn_prefab(&prefabs?, "Deep")?;
            Ok::<usize, PrefabError>(world.get::<Tree>(entity).unwrap().depth())
        };
        let json = |level| Prefabs::from_json_str(&format!("{PREFAB_JSON_HEAD}{}}}}}", lists(level)));
        let ron = |level| Prefabs::from_ron_str(&format!("{PREFAB_RON_HEAD}{}}}}}", lists(level)));
        let overrides = |level| Overrides::from_json_str(&format!(r#"{{"Tree": {}}}"#, lists(level)));
        let mut results = vec![
            spawn(json(MAX_DEPTH)),
            spawn(ron(MAX_RON_DEPTH)),
            spawn(json(MAX_DEPTH + 1)),
            spawn(ron(MAX_RON_DEPTH + 1)),
            spawn(json(100_000)),
            spawn(ron(100_000)),
        ];
        let base = Prefabs::from_json_str(r#"{"Deep": {"Tree": []}}"#).unwrap();
        for level in [MAX_DEPTH, MAX_DEPTH + 1] {
            results.push(
                overrides(level)
                    .and_then(|o| world.spawn_prefab_with(&base, "Deep", &o))
                    .map(|e| world.get::<Tree>(e).unwrap().depth()),
            );
        }
        results
    });
    let syntax = |format, column, limit| {
        Err(PrefabError::Syntax { format, line: 1, column, message: format!("data nested deeper than {limit} levels") })
    };
    let json = syntax(Format::Json, PREFAB_JSON_HEAD.len() + MAX_DEPTH + 1, MAX_DEPTH);
    let ron = syntax(Format::Ron, PREFAB_RON_HEAD.len() + MAX_RON_DEPTH + 2, MAX_RON_DEPTH);
    let overrides = syntax(Format::Json, r#"{"Tree": "#.len() + MAX_DEPTH + 1, MAX_DEPTH);
    assert_eq!(
        results,
        [Ok(MAX_DEPTH), Ok(MAX_RON_DEPTH), json.clone(), ron.clone(), json, ron, Ok(MAX_DEPTH), overrides]
    );
}

#[test]
fn deep_unknown_fields_fail_cleanly_on_a_small_stack() {
    let errors = on_small_stack(|| {
        let registry = registry();
        let deep = lists(100_000);
        [
            World::load_json(&registry, &format!(r#"{{"format": "ecs-save", "version": 1, "x": {deep}}}"#)),
            World::load_ron(&registry, &format!(r#"(format: "ecs-save", version: 1, x: {deep})"#)),
            World::load_json(
                &registry,
                &format!(r#"{{"format": "ecs-save", "version": 1, "skipped": [{{"x": {deep}}}]}}"#),
            ),
            World::load_ron(&registry, &format!(r#"(format: "ecs-save", version: 1, allocator: (x: {deep}))"#)),
        ]
        .map(|result| result.map(|_| ()).unwrap_err())
    });
    let fields = "`format`, `version`, `allocator`, `components`, `entities`, `tables`, `resources`, `skipped`";
    assert_eq!(
        errors,
        [
            LoadError::Syntax {
                format: Format::Json,
                line: 1,
                column: 40,
                message: format!("unknown field `x`, expected one of {fields}"),
            },
            LoadError::Syntax {
                format: Format::Ron,
                line: 1,
                column: 34,
                message: format!(
                    "Unexpected field named `x` in `Document`, expected one of {} instead",
                    fields.replace("`skipped`", "or `skipped`")
                ),
            },
            LoadError::Syntax {
                format: Format::Json,
                line: 1,
                column: 53,
                message: "unknown field `x`, expected `component` or `entities`".into(),
            },
            LoadError::Syntax {
                format: Format::Ron,
                line: 1,
                column: 46,
                message: "Unexpected field named `x` in `Allocator`, expected either `generations` or `free` instead"
                    .into(),
            },
        ]
    );
}
