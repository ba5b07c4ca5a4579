//! Every method over real HTTP on the loopback address, with its errors.

mod support;

use archetable_core::{ChildOf, Entity};
use archetable_inspect::{codes, Inspector, InspectorConfig};
use serde_json::{json, Value};
use support::*;

fn start() -> (archetable_core::GameLoop, Scene, Inspector) {
    let (game, scene) = game();
    let inspector = Inspector::start(config()).expect("start");
    (game, scene, inspector)
}

fn names(list: &Value, key: &str) -> Vec<String> {
    list.as_array().unwrap().iter().map(|v| v[key].as_str().unwrap().to_owned()).collect()
}

#[test]
fn discover_lists_every_method_with_its_parameters() {
    let (mut game, _, mut inspector) = start();
    let result = drive(&mut game, &mut inspector, |addr| ok(addr, "rpc.discover", json!({})));
    assert_eq!(
        names(&result["methods"], "name"),
        [
            "rpc.discover",
            "world.list_components",
            "world.query",
            "world.get_components",
            "world.insert_components",
            "world.remove_components",
            "world.spawn_entity",
            "world.despawn_entity",
            "world.list_resources",
            "world.get_resource",
            "world.insert_resource",
            "world.list_tables",
            "world.hierarchy",
            "schedule.list",
            "schedule.history",
            "loop.status",
            "loop.pause",
            "loop.resume",
            "loop.step",
            "loop.set_time_scale",
            "watch.start",
            "watch.poll",
            "watch.stop",
        ]
    );
    let query = result["methods"].as_array().unwrap().iter().find(|m| m["name"] == "world.query").unwrap();
    assert_eq!(
        names(&query["params"], "name"),
        ["with", "without", "components", "offset", "limit", "component_names", "name", "name_contains", "page_of"]
    );
    assert_eq!(query["params"][0]["required"], json!(false));
}

#[test]
fn list_components_says_what_serde_can_read() {
    let (mut game, _, mut inspector) = start();
    let result = drive(&mut game, &mut inspector, |addr| ok(addr, "world.list_components", json!({})));
    let list = result["components"].as_array().unwrap();
    let find = |name: &str| {
        list.iter().find(|c| c["name"] == name || c["type_name"].as_str().unwrap().ends_with(name)).unwrap().clone()
    };
    let position = find("Position");
    assert_eq!(
        (&position["size"], &position["serde"], &position["writable"], &position["entities"], &position["storage"]),
        (&json!(8), &json!(true), &json!(true), &json!(4), &json!("table"))
    );
    let secret = find("::Secret");
    assert_eq!(
        (&secret["size"], &secret["serde"], &secret["readable"], &secret["entities"]),
        (&json!(8), &json!(false), &json!(false), &json!(1))
    );
    assert!(secret["name"].as_str().unwrap().ends_with("support::Secret"), "unregistered: by type name");
    assert_eq!(find("ChildOf")["entities"], json!(2));
    assert_eq!(find("Health")["entities"], json!(4));
}

#[test]
fn query_filters_pages_and_returns_values() {
    let (mut game, scene, mut inspector) = start();
    let [a, b, c] = scene.movers;
    let (all, moving, unhurt, page1, page2, secret) = drive(&mut game, &mut inspector, |addr| {
        (
            ok(addr, "world.query", json!({ "with": ["Position"] })),
            ok(addr, "world.query", json!({ "with": ["Velocity"], "components": ["Position", "Health"] })),
            ok(addr, "world.query", json!({ "with": ["Position"], "without": ["Health", "Velocity"] })),
            ok(addr, "world.query", json!({ "with": ["Velocity"], "limit": 2 })),
            ok(addr, "world.query", json!({ "with": ["Velocity"], "offset": 2, "limit": 2 })),
            // The short type name of an unregistered component.
            ok(addr, "world.query", json!({ "with": ["Secret"], "component_names": true })),
        )
    });
    assert_eq!(all["total"], json!(4));
    assert_eq!(all["entities"][0].get("component_names"), None, "only when asked for");
    assert_eq!(handles(&all), [h(a), h(b), h(c), h(scene.still)]);
    assert_eq!(handles(&moving), [h(a), h(b), h(c)]);
    assert_eq!(moving["entities"][0]["components"], json!({ "Position": { "x": 1.0, "y": 2.0 } }));
    assert_eq!(moving["entities"][1]["components"], json!({ "Position": { "x": 3.0, "y": 4.0 }, "Health": 10 }));
    assert_eq!(handles(&unhurt), [h(scene.still)]);
    assert_eq!((handles(&page1), &page1["total"]), (vec![h(a), h(b)], &json!(3)));
    assert_eq!((handles(&page2), &page2["offset"]), (vec![h(c)], &json!(2)));
    assert_eq!(handles(&secret), [h(scene.secret)]);
    let listed = &secret["entities"][0]["component_names"];
    assert_eq!(listed.as_array().unwrap().len(), 1);
    assert!(listed[0].as_str().unwrap().ends_with("support::Secret"), "{listed}");
}

#[test]
fn a_query_turns_to_the_page_of_an_entity() {
    let (mut game, scene, mut inspector) = start();
    let [a, b, c] = scene.movers;
    let (of_c, of_a, unmatched, bad) = {
        let (secret, still) = (h(scene.secret), h(scene.still));
        drive(&mut game, &mut inspector, move |addr| {
            (
                ok(addr, "world.query", json!({ "with": ["Velocity"], "limit": 2, "page_of": h(c) })),
                ok(addr, "world.query", json!({ "with": ["Velocity"], "offset": 2, "limit": 2, "page_of": h(a) })),
                // Not matched: the offset given holds.
                ok(addr, "world.query", json!({ "with": ["Velocity"], "offset": 1, "limit": 2, "page_of": secret })),
                err(addr, "world.query", json!({ "with": ["Velocity"], "page_of": format!("{still}x") })),
            )
        })
    };
    assert_eq!((handles(&of_c), &of_c["offset"]), (vec![h(c)], &json!(2)));
    assert_eq!((handles(&of_a), &of_a["offset"]), (vec![h(a), h(b)], &json!(0)));
    assert_eq!((handles(&unmatched), &unmatched["offset"]), (vec![h(b), h(c)], &json!(1)));
    assert_eq!(bad["code"], json!(codes::INVALID_PARAMS));
}

#[test]
fn query_shows_names_selects_by_name_and_hides_disabled_entities() {
    let (mut game, scene, mut inspector) = start();
    let world = game.world_mut();
    let [a, b, c] = scene.movers;
    world.insert(a, archetable_core::Name::new("Scout")).unwrap();
    world.insert(b, archetable_core::Name::new("scout leader")).unwrap();
    world.insert(c, archetable_core::Name::new("Tank")).unwrap();
    world.disable(c).unwrap();
    let (all, exact, search, none, disabled, both, bad) = drive(&mut game, &mut inspector, |addr| {
        (
            ok(addr, "world.query", json!({ "with": ["Velocity"] })),
            ok(addr, "world.query", json!({ "name": "Scout" })),
            ok(addr, "world.query", json!({ "name_contains": "SCOUT", "with": ["Position"] })),
            ok(addr, "world.query", json!({ "name_contains": "nobody" })),
            ok(addr, "world.query", json!({ "with": ["Disabled"], "components": ["Name", "Disabled"] })),
            ok(addr, "world.query", json!({ "with": ["Velocity"], "components": ["Disabled"] })),
            err(addr, "world.query", json!({ "name": 3 })),
        )
    });
    // Disabled entities are left out unless the query names the marker.
    assert_eq!(handles(&all), [h(a), h(b)]);
    assert_eq!(all["entities"][0]["name"], json!("Scout"));
    assert_eq!(all["entities"][1]["name"], json!("scout leader"));
    assert_eq!(handles(&exact), [h(a)]);
    assert_eq!(handles(&search), [h(a), h(b)]);
    assert_eq!((handles(&none), &none["total"]), (vec![], &json!(0)));
    assert_eq!(handles(&disabled), [h(c)]);
    assert_eq!(disabled["entities"][0]["name"], json!("Tank"));
    assert_eq!(disabled["entities"][0]["components"], json!({ "Name": "Tank", "Disabled": null }));
    assert_eq!(handles(&both), [h(a), h(b), h(c)]);
    // Entities without a name have no `name`.
    assert_eq!(
        drive(&mut game, &mut inspector, |addr| ok(
            addr,
            "world.query",
            json!({ "with": ["Position"], "without": ["Velocity"] })
        ))["entities"][0]
            .get("name"),
        None
    );
    assert_eq!(bad["code"], json!(codes::INVALID_PARAMS));
}

#[test]
fn query_errors_name_the_nearest_component() {
    let (mut game, _, mut inspector) = start();
    let (typo, read_only, limit, not_list) = drive(&mut game, &mut inspector, |addr| {
        (
            err(addr, "world.query", json!({ "with": ["Positon"] })),
            err(addr, "world.query", json!({ "with": ["Secret"], "components": ["Secret"] })),
            err(addr, "world.query", json!({ "limit": 1001 })),
            err(addr, "world.query", json!({ "with": "Position" })),
        )
    });
    assert_eq!(typo["code"], json!(codes::UNKNOWN_COMPONENT));
    assert_eq!(typo["data"], json!({ "name": "Positon", "suggestion": "Position" }));
    assert!(typo["message"].as_str().unwrap().contains("did you mean `Position`?"));
    assert_eq!(read_only["code"], json!(codes::READ_ONLY));
    assert_eq!(limit["code"], json!(codes::INVALID_PARAMS));
    assert_eq!(not_list["code"], json!(codes::INVALID_PARAMS));
}

#[test]
fn get_components_shows_values_and_read_only_ones() {
    let (mut game, scene, mut inspector) = start();
    let (b, secret) = (scene.movers[1], scene.secret);
    let stale = Entity::from_bits((7u64 << 32) | u64::from(b.to_bits() as u32)).unwrap();
    let (mover, hidden, some, gone, bad, missing) = drive(&mut game, &mut inspector, move |addr| {
        (
            ok(addr, "world.get_components", json!({ "entity": h(b) })),
            ok(addr, "world.get_components", json!({ "entity": h(secret) })),
            ok(addr, "world.get_components", json!({ "entity": h(b), "components": ["Health", "Grumpy"] })),
            err(addr, "world.get_components", json!({ "entity": h(stale) })),
            err(addr, "world.get_components", json!({ "entity": "12x" })),
            err(addr, "world.get_components", json!({})),
        )
    });
    assert_eq!(
        mover["components"],
        json!({ "Position": { "x": 3.0, "y": 4.0 }, "Velocity": { "x": 0.0, "y": 1.0 }, "Health": 10 })
    );
    assert_eq!((&mover["read_only"], &mover["missing"]), (&json!([]), &json!([])));
    assert_eq!(hidden["components"], json!({}));
    assert_eq!(hidden["read_only"][0]["size"], json!(8));
    assert!(hidden["read_only"][0]["name"].as_str().unwrap().ends_with("::Secret"));
    assert_eq!((&some["components"], &some["missing"]), (&json!({ "Health": 10 }), &json!(["Grumpy"])));
    assert_eq!(gone["code"], json!(codes::NO_SUCH_ENTITY));
    assert_eq!(gone["data"]["entity"], json!(h(stale)));
    assert_eq!((&bad["code"], &missing["code"]), (&json!(codes::INVALID_PARAMS), &json!(codes::INVALID_PARAMS)));
}

#[test]
fn insert_components_replaces_values_or_changes_nothing() {
    let (mut game, scene, mut inspector) = start();
    let [a, b, _] = scene.movers;
    let secret = scene.secret;
    let answers = drive(&mut game, &mut inspector, move |addr| {
        let set = |entity: Entity, components: Value| {
            call(addr, "world.insert_components", json!({ "entity": h(entity), "components": components }))
        };
        vec![
            set(a, json!({ "Position": { "x": -1.5, "y": 8.0 }, "Health": 4 })),
            set(b, json!({ "Position": { "x": "far", "y": 0.0 } })),
            // The first value fits, the second does not: neither goes in.
            set(b, json!({ "Health": 99, "Velocity": { "x": 1.0 } })),
            set(b, json!({ "Postion": { "x": 0.0, "y": 0.0 } })),
            set(secret, json!({ "Secret": 1 })),
            set(Entity::from_bits(u64::from(u32::MAX - 1) | (1 << 32)).unwrap(), json!({ "Health": 1 })),
            set(b, json!({ "Position": { "x": 0.0, "y": 0.0, "z": 1.0 } })),
            call(addr, "world.insert_components", json!({ "entity": h(b) })),
        ]
    });
    assert_eq!(answers[0]["result"], Value::Null);
    let code = |i: usize| answers[i]["error"]["code"].clone();
    assert_eq!(code(1), json!(codes::INVALID_VALUE));
    assert_eq!(answers[1]["error"]["data"], json!({ "component": "Position", "field": "x" }));
    assert_eq!(code(2), json!(codes::INVALID_VALUE));
    assert_eq!(answers[2]["error"]["data"]["component"], json!("Velocity"));
    assert_eq!(
        (code(3), &answers[3]["error"]["data"]["suggestion"]),
        (json!(codes::UNKNOWN_COMPONENT), &json!("Position"))
    );
    assert_eq!(code(4), json!(codes::READ_ONLY));
    assert_eq!(code(5), json!(codes::NO_SUCH_ENTITY));
    assert_eq!(code(6), json!(codes::INVALID_VALUE), "unknown fields are refused");
    assert_eq!(code(7), json!(codes::INVALID_PARAMS));
    let world = game.world();
    assert_eq!(position(world, a), Some(Position { x: -1.5, y: 8.0 }));
    assert_eq!(world.get::<Health>(a), Some(&Health(4)));
    assert_eq!(position(world, b), Some(Position { x: 3.0, y: 4.0 }));
    assert_eq!(world.get::<Health>(b), Some(&Health(10)));
    assert_eq!(world.get::<Velocity>(b), Some(&Velocity { x: 0.0, y: 1.0 }));
    assert_eq!(world.get::<Secret>(secret), Some(&Secret(42)));
}

#[test]
fn remove_components_returns_those_the_entity_had() {
    let (mut game, scene, mut inspector) = start();
    let c = scene.movers[2];
    let (first, second, read_only) = drive(&mut game, &mut inspector, move |addr| {
        let params = json!({ "entity": h(c), "components": ["Velocity", "Health"] });
        (
            ok(addr, "world.remove_components", params.clone()),
            ok(addr, "world.remove_components", params),
            err(addr, "world.remove_components", json!({ "entity": h(c), "components": ["Secret"] })),
        )
    });
    assert_eq!((&first["removed"], &second["removed"]), (&json!(["Velocity"]), &json!([])));
    assert_eq!(read_only["code"], json!(codes::READ_ONLY));
    assert!(!game.world().has::<Velocity>(c));
    assert_eq!(position(game.world(), c), Some(Position { x: 5.0, y: 6.0 }));
}

#[test]
fn spawn_and_despawn_entities() {
    let (mut game, scene, mut inspector) = start();
    let before = game.world().len();
    let target = scene.movers[0];
    let (spawned, bad, empty, despawn, again, tree) = drive(&mut game, &mut inspector, move |addr| {
        let spawned = ok(
            addr,
            "world.spawn_entity",
            json!({ "components": { "Position": { "x": 4.0, "y": 2.0 }, "Target": h(target) } }),
        );
        let bad = err(addr, "world.spawn_entity", json!({ "components": { "Position": {}, "Health": "x" } }));
        let empty = ok(addr, "world.spawn_entity", json!({}));
        let despawn = ok(addr, "world.despawn_entity", json!({ "entity": h(scene.still) }));
        let again = err(addr, "world.despawn_entity", json!({ "entity": h(scene.still) }));
        let tree = ok(addr, "world.despawn_entity", json!({ "entity": h(scene.root), "recursive": true }));
        (spawned, bad, empty, despawn, again, tree)
    });
    let entity = Entity::parse(spawned["entity"].as_str().unwrap()).unwrap();
    let world = game.world();
    assert_eq!(position(world, entity), Some(Position { x: 4.0, y: 2.0 }));
    assert_eq!(world.get::<Target>(entity), Some(&Target(target)));
    assert_eq!(bad["code"], json!(codes::INVALID_VALUE));
    assert!(Entity::parse(empty["entity"].as_str().unwrap()).is_some_and(|e| world.contains(e)));
    assert_eq!((&despawn["despawned"], &again["code"]), (&json!(1), &json!(codes::NO_SUCH_ENTITY)));
    assert_eq!(tree["despawned"], json!(3));
    for gone in [scene.still, scene.root, scene.child, scene.grandchild] {
        assert!(!world.contains(gone));
    }
    // Two spawned, four despawned; the refused spawn left nothing behind.
    assert_eq!(world.len(), before + 2 - 4);
}

#[test]
fn resources_are_read_and_replaced_through_the_registry() {
    let (mut game, _, mut inspector) = start();
    let (list, score, set, bad, typo, hidden, hidden_set) = drive(&mut game, &mut inspector, |addr| {
        (
            ok(addr, "world.list_resources", json!({})),
            ok(addr, "world.get_resource", json!({ "resource": "Score" })),
            ok(addr, "world.insert_resource", json!({ "resource": "Score", "value": { "points": 99 } })),
            err(addr, "world.insert_resource", json!({ "resource": "Score", "value": { "points": -1 } })),
            err(addr, "world.get_resource", json!({ "resource": "Scor" })),
            err(addr, "world.get_resource", json!({ "resource": "Hidden" })),
            err(addr, "world.insert_resource", json!({ "resource": "Hidden", "value": 1 })),
        )
    });
    let list = list["resources"].as_array().unwrap();
    let score_entry = list.iter().find(|r| r["name"] == "Score").unwrap();
    assert_eq!(score_entry["serde"], json!(true));
    let hidden_entry = list.iter().find(|r| r["type_name"].as_str().unwrap().ends_with("::Hidden")).unwrap();
    assert_eq!(hidden_entry["serde"], json!(false));
    assert_eq!(score, json!({ "resource": "Score", "value": { "points": 7 } }));
    assert_eq!(set, Value::Null);
    assert_eq!(bad["code"], json!(codes::INVALID_VALUE));
    assert_eq!((&typo["code"], &typo["data"]["suggestion"]), (&json!(codes::UNKNOWN_RESOURCE), &json!("Score")));
    assert_eq!((&hidden["code"], &hidden_set["code"]), (&json!(codes::READ_ONLY), &json!(codes::READ_ONLY)));
    assert_eq!(game.world().resource::<Score>(), &Score { points: 99 });
}

#[test]
fn tables_list_component_sets_rows_and_bytes() {
    let (mut game, _, mut inspector) = start();
    let tables = drive(&mut game, &mut inspector, |addr| ok(addr, "world.list_tables", json!({})));
    let mut sets: Vec<(Vec<String>, u64)> = tables["tables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let mut names: Vec<String> = t["components"]
                .as_array()
                .unwrap()
                .iter()
                .map(|n| n.as_str().unwrap().rsplit("::").next().unwrap().to_owned())
                .collect();
            names.sort();
            (names, t["rows"].as_u64().unwrap())
        })
        .collect();
    sets.sort();
    let set = |names: &[&str], rows: u64| (names.iter().map(|s| s.to_string()).collect::<Vec<_>>(), rows);
    assert_eq!(
        sets,
        [
            set(&["ChildOf", "Children", "Health"], 1),
            set(&["ChildOf", "Health"], 1),
            set(&["Children", "Health"], 1),
            set(&["Health", "Position", "Velocity"], 1),
            set(&["Position"], 1),
            set(&["Position", "Velocity"], 2),
            set(&["Secret"], 1),
        ]
    );
    assert_eq!(tables["entities"], json!(8));
    assert!(tables["tables"].as_array().unwrap().iter().all(|t| t["bytes"].as_u64().unwrap() > 0));
}

#[test]
fn hierarchy_is_a_tree_of_roots() {
    let (mut game, scene, mut inspector) = start();
    let orphan = game.world_mut().spawn(Health(5));
    game.world_mut().insert(orphan, ChildOf(scene.movers[0])).unwrap();
    let (all, under) = drive(&mut game, &mut inspector, move |addr| {
        (ok(addr, "world.hierarchy", json!({})), ok(addr, "world.hierarchy", json!({ "root": h(scene.child) })))
    });
    let roots = all["roots"].as_array().unwrap();
    assert_eq!(names(&all["roots"], "entity"), [h(scene.movers[0]), h(scene.root)]);
    assert_eq!(roots[1]["children"][0]["entity"], json!(h(scene.child)));
    assert_eq!(roots[1]["children"][0]["children"][0]["entity"], json!(h(scene.grandchild)));
    assert_eq!(roots[1]["children"][0]["components"], json!(["Health"]));
    assert_eq!(roots[0]["children"][0]["entity"], json!(h(orphan)));
    assert_eq!(all["truncated"], json!(false));
    assert_eq!(names(&under["roots"], "entity"), [h(scene.child)]);
    assert_eq!(under["roots"][0]["child_count"], json!(1));
}

/// Nodes in a `world.hierarchy` answer, and its deepest level.
fn count_nodes(nodes: &Value, depth: usize) -> (usize, usize) {
    nodes.as_array().unwrap().iter().fold((0, 0), |(count, deepest), node| {
        let (below, below_deepest) = count_nodes(&node["children"], depth + 1);
        let node_deepest = if node["children"].as_array().unwrap().is_empty() { depth } else { below_deepest };
        (count + 1 + below, deepest.max(node_deepest))
    })
}

#[test]
fn hierarchy_caps_count_roots_and_say_what_they_cut() {
    let (mut game, _, mut inspector) = start();
    let world = game.world_mut();
    // 6,000 roots with one child each: 12,000 nodes, 5,000 listed.
    for _ in 0..6000 {
        let root = world.spawn(Health(0));
        world.spawn((Health(1), ChildOf(root)));
    }
    // A chain 70 levels deep, listed down to level 60.
    let top = world.spawn(Health(2));
    let mut parent = top;
    for _ in 0..70 {
        parent = world.spawn((Health(3), ChildOf(parent)));
    }
    let (all, chain, deep_part) = drive(&mut game, &mut inspector, move |addr| {
        (
            ok(addr, "world.hierarchy", json!({})),
            ok(addr, "world.hierarchy", json!({ "root": h(top) })),
            ok(addr, "world.hierarchy", json!({ "root": h(parent) })),
        )
    });
    assert_eq!((count_nodes(&all["roots"], 0).0, &all["truncated"]), (archetable_inspect::MAX_NODES, &json!(true)));
    assert_eq!(count_nodes(&chain["roots"], 0), (archetable_inspect::MAX_DEPTH + 1, archetable_inspect::MAX_DEPTH));
    assert_eq!(chain["truncated"], json!(true));
    assert_eq!((count_nodes(&deep_part["roots"], 0), &deep_part["truncated"]), ((1, 0), &json!(false)));
}

#[test]
fn refused_parents_are_errors_that_change_nothing() {
    let (mut game, scene, mut inspector) = start();
    let dead = game.world_mut().spawn(Health(9));
    game.world_mut().despawn(dead).unwrap();
    let errors = drive(&mut game, &mut inspector, move |addr| {
        let parent = |entity: Entity, parent: Entity| {
            err(addr, "world.insert_components", json!({ "entity": h(entity), "components": { "ChildOf": h(parent) } }))
        };
        vec![
            parent(scene.child, scene.child),
            parent(scene.root, scene.grandchild),
            parent(scene.child, scene.grandchild),
            parent(scene.movers[0], dead),
            err(addr, "world.spawn_entity", json!({ "components": { "Health": 1, "ChildOf": h(dead) } })),
        ]
    });
    let messages: Vec<_> = errors.iter().map(|e| (e["code"].as_i64().unwrap(), e["message"].clone())).collect();
    let (child, grandchild, root) = (h(scene.child), h(scene.grandchild), h(scene.root));
    assert_eq!(
        messages,
        [
            (codes::INVALID_VALUE, json!(format!("`ChildOf`: {child} cannot be its own parent; nothing changed"))),
            (
                codes::INVALID_VALUE,
                json!(format!(
                    "`ChildOf`: {grandchild} is under {root}: making it the parent would close a cycle; nothing changed"
                ))
            ),
            (
                codes::INVALID_VALUE,
                json!(format!(
                    "`ChildOf`: {grandchild} is under {child}: making it the parent would close a cycle; nothing changed"
                ))
            ),
            (codes::INVALID_VALUE, json!(format!("`ChildOf`: the parent {} is not alive; nothing changed", h(dead)))),
            (codes::INVALID_VALUE, json!(format!("`ChildOf`: the parent {} is not alive; nothing changed", h(dead)))),
        ]
    );
    let world = game.world();
    assert_eq!(world.parent(scene.child), Some(scene.root));
    assert_eq!(world.parent(scene.grandchild), Some(scene.child));
    assert_eq!(world.parent(scene.root), None);
    assert_eq!(world.parent(scene.movers[0]), None);
    assert_eq!(world.len(), 8);
    world.check_invariants().unwrap();
}

#[test]
fn schedule_lists_systems_per_stage_and_their_times() {
    let (mut game, _, mut inspector) = start();
    let (list, history) = drive(&mut game, &mut inspector, |addr| {
        let list = ok(addr, "schedule.list", json!({}));
        // Let a few frames be recorded.
        let frame = ok(addr, "loop.status", json!({}))["frame"].as_u64().unwrap();
        eventually("frames", || ok(addr, "loop.status", json!({}))["frame"].as_u64().unwrap() > frame + 5);
        (list, ok(addr, "schedule.history", json!({ "frames": 3 })))
    });
    let stages = list["stages"].as_array().unwrap();
    assert_eq!(names(&list["stages"], "stage"), ["startup", "fixed_update", "update", "late_update"]);
    assert_eq!(names(&stages[2]["systems"], "name"), ["tick", "movement"]);
    assert_eq!(stages[2]["systems"][1]["order"], json!(1));
    assert!(stages[2]["systems"][0]["runs"].as_u64().unwrap() > 0);
    let columns: Vec<String> = history["systems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| format!("{}/{}", s["stage"].as_str().unwrap(), s["name"].as_str().unwrap()))
        .collect();
    assert_eq!(columns, ["fixed_update/nothing", "update/tick", "update/movement", "late_update/debug_tick"]);
    let frames = history["frames"].as_array().unwrap();
    assert_eq!(frames.len(), 3);
    assert_eq!(frames[2]["frame"].as_u64().unwrap(), frames[1]["frame"].as_u64().unwrap() + 1);
    assert_eq!(frames[2]["times_us"].as_array().unwrap().len(), 4);
    assert_eq!(frames[2]["entities"], json!(8));
}

fn resource_number(addr: std::net::SocketAddr, name: &str) -> u64 {
    ok(addr, "world.get_resource", json!({ "resource": name }))["value"].as_u64().unwrap()
}

#[test]
fn pause_step_resume_and_time_scale() {
    let (mut game, _, mut inspector) = start();
    let report = drive(&mut game, &mut inspector, |addr| {
        let paused = ok(addr, "loop.pause", json!({}));
        let ticks = resource_number(addr, "Ticks");
        // Debug systems keep running while paused; the others stand still.
        let debug = resource_number(addr, "DebugTicks");
        eventually("debug frames", || resource_number(addr, "DebugTicks") >= debug + 5);
        let still = resource_number(addr, "Ticks");
        let stepping = ok(addr, "loop.step", json!({ "frames": 2 }));
        eventually("the step", || ok(addr, "loop.status", json!({}))["stepping"] == json!(0));
        let status = ok(addr, "loop.status", json!({}));
        let stepped = resource_number(addr, "Ticks");
        let scaled = ok(addr, "loop.set_time_scale", json!({ "scale": 0.5 }));
        let bad_scale = err(addr, "loop.set_time_scale", json!({ "scale": -1 }));
        let bad_step = err(addr, "loop.step", json!({ "frames": 0 }));
        let resumed = ok(addr, "loop.resume", json!({}));
        eventually("running again", || resource_number(addr, "Ticks") > stepped + 3);
        (paused, ticks, still, stepping, status, stepped, scaled, bad_scale, bad_step, resumed)
    });
    let (paused, ticks, still, stepping, status, stepped, scaled, bad_scale, bad_step, resumed) = report;
    assert_eq!(paused["paused"], json!(true));
    assert_eq!(still, ticks, "no game frame ran while paused");
    assert_eq!(stepping["stepping"], json!(2));
    assert_eq!(status["paused"], json!(true), "paused again after the step");
    assert_eq!(stepped, ticks + 2, "exactly the frames asked for");
    assert_eq!(scaled["scale"], json!(0.5));
    assert_eq!((&bad_scale["code"], &bad_step["code"]), (&json!(codes::INVALID_PARAMS), &json!(codes::INVALID_PARAMS)));
    assert_eq!(resumed["paused"], json!(false));
    assert_eq!(game.world().resource::<archetable_core::Time>().scale(), 0.5);
}

#[test]
fn loop_control_needs_a_clock() {
    let mut world = archetable_core::World::new();
    world.remove_resource::<archetable_core::Time>();
    let mut inspector = Inspector::start(config()).unwrap();
    let addr = inspector.addr();
    let client = std::thread::spawn(move || err(addr, "loop.pause", json!({})));
    for _ in 0..MAX_FRAMES {
        if client.is_finished() {
            break;
        }
        inspector.update_world(&mut world);
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    assert_eq!(client.join().unwrap()["code"], json!(codes::NO_CLOCK));
}

#[test]
fn watches_stream_frame_figures_and_queries() {
    let (mut game, scene, mut inspector) = start();
    let (stats, query, later, stopped, unknown_kind) = drive(&mut game, &mut inspector, move |addr| {
        let stats = ok(addr, "watch.start", json!({ "kind": "stats" }))["watch"].clone();
        let first = ok(addr, "watch.poll", json!({ "watch": stats, "timeout_ms": 5000 }));
        let query =
            ok(addr, "watch.start", json!({ "kind": "query", "with": ["Health"], "every": 2 }))["watch"].clone();
        let got = ok(addr, "watch.poll", json!({ "watch": query, "timeout_ms": 5000 }));
        let last = first["last"].clone();
        let later = ok(addr, "watch.poll", json!({ "watch": stats, "after": last, "timeout_ms": 5000 }));
        ok(addr, "watch.stop", json!({ "watch": stats }));
        let stopped = err(addr, "watch.poll", json!({ "watch": stats }));
        let unknown_kind = err(addr, "watch.start", json!({ "kind": "everything" }));
        (first, got, (later, last), stopped, unknown_kind)
    });
    let items = stats["items"].as_array().unwrap();
    assert!(!items.is_empty());
    assert_eq!(items[0]["data"]["entities"], json!(8));
    let data = &query["items"][0]["data"];
    assert_eq!(data["total"], json!(4));
    assert_eq!(handles(data), [h(scene.movers[1]), h(scene.root), h(scene.child), h(scene.grandchild)]);
    let (later, last) = later;
    assert!(later["items"][0]["seq"].as_u64().unwrap() > last.as_u64().unwrap(), "only items after `after`");
    assert_eq!(stopped["code"], json!(codes::UNKNOWN_WATCH));
    assert_eq!(unknown_kind["code"], json!(codes::INVALID_PARAMS));
}

#[test]
fn envelope_errors() {
    let (mut game, _, mut inspector) = start();
    let replies = drive(&mut game, &mut inspector, |addr| {
        let raw_post = |body: &str| http(addr, "POST", "/", &[("Content-Type", "application/json")], body.as_bytes());
        vec![
            raw_post("{not json"),
            raw_post("[1, 2]"),
            raw_post(r#"{"jsonrpc": "1.0", "id": 3, "method": "loop.status"}"#),
            raw_post(r#"{"jsonrpc": "2.0", "id": 4, "method": "world.qurey"}"#),
            raw_post(r#"{"jsonrpc": "2.0", "id": 5, "method": "loop.status", "params": [1]}"#),
            raw_post("[]"),
            raw_post(
                r#"[{"jsonrpc": "2.0", "id": "a", "method": "loop.status"},
                   {"jsonrpc": "2.0", "method": "loop.status"},
                   {"jsonrpc": "2.0", "id": "c", "method": "nope"}]"#,
            ),
            raw_post(r#"{"jsonrpc": "2.0", "method": "loop.status"}"#),
            raw_post(r#"{"jsonrpc": "2.0", "id": {"x": 1}, "method": "loop.status"}"#),
        ]
    });
    let code = |i: usize| replies[i].json()["error"]["code"].clone();
    assert_eq!(code(0), json!(codes::PARSE_ERROR));
    let batch = replies[1].json();
    assert_eq!(
        (&batch[0]["error"]["code"], &batch[1]["error"]["code"], batch.as_array().unwrap().len()),
        (&json!(codes::INVALID_REQUEST), &json!(codes::INVALID_REQUEST), 2)
    );
    assert_eq!((code(2), &replies[2].json()["id"]), (json!(codes::INVALID_REQUEST), &json!(3)));
    assert_eq!(code(3), json!(codes::METHOD_NOT_FOUND));
    assert!(replies[3].json()["error"]["message"].as_str().unwrap().contains("did you mean `world.query`?"));
    assert_eq!(code(4), json!(codes::INVALID_REQUEST));
    assert_eq!(code(5), json!(codes::INVALID_REQUEST));
    let mixed = replies[6].json();
    let mixed = mixed.as_array().unwrap();
    assert_eq!(mixed.len(), 2, "the notification gets no response");
    assert_eq!((&mixed[0]["id"], mixed[0]["result"]["entities"].as_u64()), (&json!("a"), Some(8)));
    assert_eq!((&mixed[1]["id"], &mixed[1]["error"]["code"]), (&json!("c"), &json!(codes::METHOD_NOT_FOUND)));
    assert_eq!((replies[7].status, replies[7].body.len()), (204, 0));
    assert_eq!(code(8), json!(codes::INVALID_REQUEST));
}

#[test]
fn http_errors_and_the_page() {
    let (mut game, _, mut inspector) = start();
    let replies = drive(&mut game, &mut inspector, |addr| {
        let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "loop.status" }).to_string();
        vec![
            http(addr, "GET", "/", &[], b""),
            http(addr, "POST", "/", &[("Content-Type", "text/plain")], body.as_bytes()),
            http(addr, "POST", "/", &[("Content-Type", "application/json")], &vec![b' '; (1 << 20) + 1]),
            http(addr, "GET", "/nothing", &[], b""),
            http(addr, "PUT", "/", &[], b""),
            raw_reply(addr, "POST / HTTP/1.1\r\nHost: evil.example:80\r\nContent-Type: application/json\r\n", &body),
            http(addr, "POST", "/rpc", &[("Content-Type", "application/json; charset=utf-8")], body.as_bytes()),
        ]
    });
    assert_eq!(replies[0].status, 200);
    assert_eq!(replies[0].header("content-type"), Some("text/html; charset=utf-8"));
    assert!(replies[0].text().contains("<title>archetable inspector</title>"));
    assert!(!replies[0].text().contains("http://") && !replies[0].text().contains("https://"), "nothing fetched");
    assert_eq!(replies[1].status, 415);
    assert_eq!((replies[2].status, &replies[2].json()["error"]["code"]), (413, &json!(codes::TOO_LARGE)));
    assert_eq!(replies[3].status, 404);
    assert_eq!(replies[4].status, 405);
    assert_eq!(replies[5].status, 403);
    assert_eq!(replies[6].json()["result"]["entities"], json!(8));
}

fn raw_reply(addr: std::net::SocketAddr, head: &str, body: &str) -> Reply {
    let request = format!("{head}Connection: close\r\nContent-Length: {}\r\n\r\n{body}", body.len());
    parse_reply(&raw(addr, request.as_bytes()))
}

#[test]
fn panics_in_user_code_are_caught_and_the_game_goes_on() {
    let (mut game, scene, mut inspector) = start();
    let a = scene.movers[0];
    let (grumpy, fragile, after) = drive(&mut game, &mut inspector, move |addr| {
        let grumpy = err(addr, "world.insert_components", json!({ "entity": h(a), "components": { "Grumpy": 666 } }));
        let fragile = err(addr, "world.insert_components", json!({ "entity": h(a), "components": { "Fragile": 13 } }));
        let frame = ok(addr, "loop.status", json!({}))["frame"].as_u64().unwrap();
        eventually("more frames", || ok(addr, "loop.status", json!({}))["frame"].as_u64().unwrap() > frame + 3);
        let after = ok(addr, "world.insert_components", json!({ "entity": h(a), "components": { "Grumpy": 1 } }));
        (grumpy, fragile, after)
    });
    assert_eq!(grumpy["code"], json!(codes::PANICKED));
    assert!(grumpy["message"].as_str().unwrap().contains("grumpy refuses 666"));
    assert_eq!(fragile["code"], json!(codes::PANICKED));
    assert!(fragile["message"].as_str().unwrap().contains("fragile breaks on 13"));
    assert_eq!(after, Value::Null);
    assert_eq!(game.world().get::<Grumpy>(a), Some(&Grumpy(1)));
    game.world().check_invariants().unwrap();
}

#[test]
fn responses_are_capped() {
    let (mut game, _, _) = start();
    let mut inspector = Inspector::start(config().max_response(300)).unwrap();
    let (big, small) = drive(&mut game, &mut inspector, |addr| {
        (
            err(addr, "world.query", json!({ "with": ["Position"], "components": ["Position"] })),
            ok(addr, "world.query", json!({ "with": ["Secret"] })),
        )
    });
    assert_eq!(big["code"], json!(codes::TOO_LARGE));
    assert_eq!(small["total"], json!(1));
}

#[test]
fn a_token_guards_every_request() {
    let (mut game, _, _) = start();
    let mut inspector = Inspector::start(config().token("s3cret")).unwrap();
    let replies = drive(&mut game, &mut inspector, |addr| {
        let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "loop.status" }).to_string();
        let json_type = ("Content-Type", "application/json");
        vec![
            http(addr, "POST", "/", &[json_type], body.as_bytes()),
            http(addr, "POST", "/", &[json_type, ("Authorization", "Bearer wrong")], body.as_bytes()),
            http(addr, "POST", "/", &[json_type, ("Authorization", "Bearer s3cret")], body.as_bytes()),
            http(addr, "GET", "/", &[], b""),
            http(addr, "GET", "/?token=s3cret", &[], b""),
        ]
    });
    assert_eq!((replies[0].status, &replies[0].json()["error"]["code"]), (401, &json!(codes::UNAUTHORIZED)));
    assert_eq!(replies[1].status, 401);
    assert_eq!(replies[2].json()["result"]["entities"], json!(8));
    assert_eq!((replies[3].status, replies[4].status), (401, 200));
}

#[test]
fn other_addresses_need_a_token() {
    // Refused before anything is bound.
    let any: std::net::SocketAddr = "0.0.0.0:0".parse().unwrap();
    let error = Inspector::start(InspectorConfig::new().bind_with_token(any, "")).unwrap_err();
    assert_eq!(error.kind(), std::io::ErrorKind::InvalidInput);
    let loopback: std::net::SocketAddr = "127.0.0.1:0".parse().unwrap();
    let guarded = Inspector::start(InspectorConfig::new().bind_with_token(loopback, "t0ken")).unwrap();
    assert!(guarded.addr().ip().is_loopback());
    assert_ne!(guarded.addr().port(), 0);
}

#[test]
fn empty_tokens_are_refused() {
    let loopback: std::net::SocketAddr = "127.0.0.1:0".parse().unwrap();
    for config in [config().token(""), InspectorConfig::new().bind_with_token(loopback, "")] {
        let error = Inspector::start(config).unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::InvalidInput);
        assert_eq!(error.to_string(), "the inspector's token is empty: give it one");
    }
}

/// What a page of another site sends after rebinding its own name to
/// 127.0.0.1, token or not: refused, and nothing changes.
#[test]
fn host_and_origin_are_checked_with_a_token_too() {
    let (mut game, _) = game();
    let mut inspector = Inspector::start(config().token("s3cret")).unwrap();
    let replies = drive(&mut game, &mut inspector, |addr| {
        let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "world.insert_resource",
                           "params": { "resource": "Score", "value": { "points": 1 } } })
        .to_string();
        let port = addr.port();
        let post = "POST /?token=s3cret HTTP/1.1\r\nContent-Type: application/json\r\n";
        vec![
            raw_reply(addr, &format!("{post}Host: evil.example\r\nOrigin: http://evil.example\r\n"), &body),
            raw_reply(addr, &format!("{post}Host: evil.example:{port}\r\n"), &body),
            raw_reply(addr, &format!("{post}Host: 127.0.0.1:{port}\r\nOrigin: http://evil.example\r\n"), &body),
            raw_reply(addr, &format!("{post}Host: 127.0.0.1:{port}\r\nOrigin: null\r\n"), &body),
            raw_reply(addr, &format!("{post}Host: localhost:{}\r\n", port + 1), &body),
            raw_reply(addr, &format!("{post}Host: 127.0.0.1:{port}\r\nOrigin: http://localhost:{port}\r\n"), &body),
        ]
    });
    let refusals: Vec<_> = replies.iter().map(|r| (r.status, r.json()["error"]["message"].clone())).collect();
    let host = json!("the Host header does not name this server");
    let origin = json!("the request comes from a page of another origin");
    assert_eq!(
        refusals,
        [
            (403, host.clone()),
            (403, host.clone()),
            (403, origin.clone()),
            (403, origin.clone()),
            (403, host),
            (403, origin)
        ]
    );
    assert_eq!(game.world().resource::<Score>(), &Score { points: 7 });
}

#[test]
fn tokens_are_read_the_way_browsers_and_clients_send_them() {
    let (mut game, _) = game();
    let mut inspector = Inspector::start(config().token("s3 cr+t%é")).unwrap();
    let statuses = drive(&mut game, &mut inspector, |addr| {
        let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "loop.status" }).to_string();
        let json_type = ("Content-Type", "application/json");
        let with = |auth: &str| http(addr, "POST", "/", &[json_type, ("Authorization", auth)], body.as_bytes()).status;
        vec![
            // The page's address, as URLSearchParams reads it.
            http(addr, "GET", "/?token=s3+cr%2Bt%25%C3%A9", &[], b"").status,
            http(addr, "GET", "/?with=A&token=s3%20cr%2bt%25%c3%a9", &[], b"").status,
            http(addr, "GET", "/?token=s3+cr+t%25%C3%A9", &[], b"").status,
            http(addr, "GET", "/?token=s3+cr%2Bt%25%C3%A", &[], b"").status,
            with("Bearer s3 cr+t%é"),
            with("bearer s3 cr+t%é"),
            with("BEARER s3 cr+t%é"),
            with("Basic s3 cr+t%é"),
            with("Bearer s3 cr+t%e"),
            with("Bearer s3 cr+t%é "),
            with("Bearer"),
        ]
    });
    assert_eq!(statuses, [200, 200, 401, 401, 200, 200, 200, 401, 401, 200, 401]);
}

#[test]
fn the_page_forbids_framing_sniffing_and_code_from_elsewhere() {
    let (mut game, _, mut inspector) = start();
    let (page, answer) = drive(&mut game, &mut inspector, |addr| {
        (http(addr, "GET", "/", &[], b""), post(addr, &json!({ "jsonrpc": "2.0", "id": 1, "method": "loop.status" })))
    });
    assert_eq!(
        page.header("content-security-policy"),
        Some(
            "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; \
             img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
        )
    );
    assert_eq!(page.header("x-frame-options"), Some("DENY"));
    assert_eq!(page.header("x-content-type-options"), Some("nosniff"));
    assert_eq!(page.header("referrer-policy"), Some("no-referrer"));
    assert_eq!(answer.header("x-content-type-options"), Some("nosniff"));
    assert_eq!(answer.header("content-type"), Some("application/json"));
}

#[test]
fn a_stats_watch_polled_late_gets_its_last_frames_and_counts_the_rest_dropped() {
    let (mut game, _, mut inspector) = start();
    let watch =
        drive(&mut game, &mut inspector, |addr| ok(addr, "watch.start", json!({ "kind": "stats" }))["watch"].clone());
    // Frames no one polls for: the watch is fed their records only when
    // it is polled, at most its 64 last.
    for _ in 0..100 {
        game.advance(std::time::Duration::from_millis(16));
        inspector.update(&mut game);
    }
    let (first, second) = drive(&mut game, &mut inspector, move |addr| {
        let first = ok(addr, "watch.poll", json!({ "watch": watch, "after": 0, "timeout_ms": 5000 }));
        let after = first["last"].clone();
        let second = ok(addr, "watch.poll", json!({ "watch": watch, "after": after, "timeout_ms": 5000 }));
        (first, second)
    });
    let frames = |got: &Value| -> Vec<u64> {
        got["items"].as_array().unwrap().iter().map(|item| item["data"]["frame"].as_u64().unwrap()).collect()
    };
    let (one, two) = (frames(&first), frames(&second));
    assert_eq!(one.len(), archetable_inspect::WATCH_MAX_ITEMS);
    assert!(one.windows(2).all(|w| w[1] == w[0] + 1), "consecutive frames: {one:?}");
    let dropped = first["dropped"].as_u64().unwrap();
    assert!(dropped >= 100 - 64, "{dropped} dropped");
    assert_eq!(first["last"].as_u64().unwrap(), dropped + 64, "every frame since the start, held or dropped");
    // The next poll goes on from the frame after, and drops nothing more.
    assert_eq!(two[0], one[63] + 1);
    assert!(two.windows(2).all(|w| w[1] == w[0] + 1), "consecutive frames: {two:?}");
    assert_eq!(second["items"][0]["seq"].as_u64().unwrap(), first["last"].as_u64().unwrap() + 1);
    assert_eq!(second["dropped"].as_u64().unwrap(), dropped);
}

#[test]
fn query_pages_cover_the_sorted_matches_without_gaps() {
    let (mut game, _, mut inspector) = start();
    let (all, pages, turned) = drive(&mut game, &mut inspector, |addr| {
        let all = handles(&ok(addr, "world.query", json!({ "limit": 1000 })));
        let mut pages = Vec::new();
        for offset in (0..all.len() + 3).step_by(3) {
            pages.push(handles(&ok(addr, "world.query", json!({ "offset": offset, "limit": 3 }))));
        }
        let turned: Vec<u64> = all
            .iter()
            .map(|e| ok(addr, "world.query", json!({ "limit": 3, "page_of": e }))["offset"].as_u64().unwrap())
            .collect();
        (all, pages, turned)
    });
    let mut sorted = all.clone();
    sorted.sort_by_key(|handle| Entity::parse(handle).unwrap());
    assert_eq!(all, sorted, "the whole list is in entity order");
    assert_eq!(all.len(), 8);
    assert_eq!(pages.concat(), all);
    assert_eq!(pages.iter().map(Vec::len).collect::<Vec<_>>(), [3, 3, 2, 0]);
    assert_eq!(turned, [0, 0, 0, 3, 3, 3, 6, 6], "each entity's page starts at a multiple of the limit");
}

#[test]
fn schedule_list_answers_in_full_behind_calls_that_need_no_timings() {
    // Two clients at once: one asks for the status, the other for the
    // schedules. The timings are copied only for a job that lists them;
    // one queued behind another job in the same frame waits for its copy.
    let (mut game, _, mut inspector) = start();
    let lists = drive(&mut game, &mut inspector, |addr| {
        let status = std::thread::spawn(move || {
            for _ in 0..40 {
                ok(addr, "loop.status", json!({}));
            }
        });
        let lists: Vec<Value> = (0..40).map(|_| ok(addr, "schedule.list", json!({}))).collect();
        status.join().unwrap();
        lists
    });
    for list in &lists {
        assert_eq!(names(&list["stages"], "stage"), ["startup", "fixed_update", "update", "late_update"]);
        assert_eq!(names(&list["stages"][2]["systems"], "name"), ["tick", "movement"]);
    }
}
