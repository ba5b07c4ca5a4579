//! Writes the starting corpus: saves of the fixture world in every format
//! (compact text saves in the columnar layout, version 3; pretty ones entity
//! by entity), saves of the earlier layouts (the files the crate's
//! `old_saves` test loads), and prefab files.

use archetable::prelude::*;

mod fixture;

fn main() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/loaders");
    std::fs::create_dir_all(&dir).unwrap();
    let world = fixture::populated_world();
    std::fs::write(dir.join("save.json"), world.save_json().unwrap().data).unwrap();
    std::fs::write(dir.join("save.ron"), world.save_ron().unwrap().data).unwrap();
    std::fs::write(dir.join("save-pretty.json"), world.save_json_pretty().unwrap().data).unwrap();
    std::fs::write(dir.join("save-pretty.ron"), world.save_ron_pretty().unwrap().data).unwrap();
    std::fs::write(dir.join("save.bin"), world.save_binary().unwrap().data).unwrap();
    // The layouts older saves use: entity by entity (JSON version 1, RON
    // versions 1 and 2).
    let old = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/saves");
    for name in ["compact.json", "pretty.json", "compact.ron", "pretty.ron", "binary.bin"] {
        std::fs::copy(old.join(name), dir.join(format!("old-{name}"))).unwrap();
    }
    let prefabs = r#"{
  "Ball": { "Position": {"x": 1.0}, "Shape": {"Circle": {"r": 2.0}}, "Marker": {} },
  "Red": { "extends": "Ball", "Name": "red", "Inventory": {"items": [["a", 1]], "gold": 3} }
}"#;
    std::fs::write(dir.join("prefabs.json"), prefabs).unwrap();
    let ron = r#"{ "Ball": { "Position": (x: 1.0), "Shape": {"Square": 2.0}, "Marker": () } }"#;
    std::fs::write(dir.join("prefabs.ron"), ron).unwrap();
    std::fs::write(dir.join("overrides.json"), r#"{"Position": {"y": 4.0}, "Name": "chet"}"#).unwrap();
}
