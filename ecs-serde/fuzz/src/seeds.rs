//! Writes the starting corpus: saves of the fixture world in every format,
//! and a prefab file.

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
    let prefabs = r#"{
  "Ball": { "Position": {"x": 1.0}, "Shape": {"Circle": {"r": 2.0}}, "Marker": {} },
  "Red": { "extends": "Ball", "Name": "red", "Inventory": {"items": [["a", 1]], "gold": 3} }
}"#;
    std::fs::write(dir.join("prefabs.json"), prefabs).unwrap();
    let ron = r#"{ "Ball": { "Position": (x: 1.0), "Shape": {"Square": 2.0}, "Marker": () } }"#;
    std::fs::write(dir.join("prefabs.ron"), ron).unwrap();
    std::fs::write(dir.join("overrides.json"), r#"{"Position": {"y": 4.0}, "Name": "chet"}"#).unwrap();
}
