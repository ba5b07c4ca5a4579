//! Holds the core to its layers: a folder of `src/` imports only the
//! folders below it, except for the few arrows listed here with the reason
//! each is needed. A new upward import fails this test; so does an arrow
//! listed here that the code no longer has, so the list stays exact.
//!
//! The check reads the sources as text: every `crate::name` path outside
//! comments, `#[cfg(test)] mod tests` and `pub use` statements (which keep
//! public paths of items that moved up), with names the crate root
//! re-exports (`crate::World`) traced to the folder that defines them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The layers, lowest first. Files at the root of `src/` other than
/// `lib.rs` are utilities that import none of them.
const LAYERS: &[&str] =
    &["entity", "component", "storage", "world", "query", "system", "schedule", "observer", "hierarchy", "game_loop"];

/// The upward arrows that stay: (file, the higher layer it imports, why).
const UPWARD: &[(&str, &str, &str)] = &[
    (
        "component/registry.rs",
        "world",
        "the `Component` trait's contract: `Component::ENGINE_HOOKS` is a `fn(&mut World)` that installs the engine's own hooks",
    ),
    (
        "component/registry.rs",
        "observer",
        "`ComponentInfo` keeps, per type, the function that fires the typed lifecycle events (`OnAdd<T>` ...): \
         type-erased code cannot name `T` later, and only the observer layer knows those event types",
    ),
    (
        "world/mod.rs",
        "query",
        "`World::query`, `query_one`, `query_many` and `despawn_where`: in `World`'s own module, so that compiler \
         notes name them `World::query` (an impl block in another module is named `<impl World>` by its path)",
    ),
    (
        "world/hooks/plan.rs",
        "hierarchy",
        "with the `hierarchy` feature, the hook plans know the hierarchy's own components (`ChildOf`, `Children`): \
         a recursive despawn whose tables run nothing but their upkeep skips it for the lists that go too",
    ),
    (
        "world/hooks/registry.rs",
        "observer",
        "the world keeps its observers beside its hooks (`Hooks::observers`): every structural change fires the \
         lifecycle observers right after the hooks, and entity observers go with their entity; without the \
         `observers` feature a stub answers that there are none",
    ),
];

/// The layer of a file (its first folder), or `None` for the crate root's files.
fn layer_of(file: &str) -> Option<&str> {
    file.split_once('/').map(|(folder, _)| folder)
}

/// Where the source's `mod tests` starts, if it is compiled for tests only:
/// `#[cfg(test)]`, or `#[cfg(all(test, ..))]` for tests that need features.
fn tests_start(source: &str) -> Option<usize> {
    let at = source.find("\nmod tests {")?;
    let line = source[..at].rfind('\n').map_or(0, |end| end + 1);
    let attribute = &source[line..at];
    (attribute == "#[cfg(test)]" || attribute.starts_with("#[cfg(all(test,")).then_some(line)
}

/// The source without comments and without its `#[cfg(test)] mod tests`.
fn code_of(source: &str) -> String {
    let source = match tests_start(source) {
        Some(at) => &source[..at],
        None => source,
    };
    source.lines().map(|line| line.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n")
}

/// `code` without its `pub use` statements: a public re-export that keeps
/// an item at the path it had before it moved up a layer
/// (`archetable::system::IntoObserver`) is a name, not a dependency.
fn without_public_reexports(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(at) = rest.find("pub use ") {
        let at_line_start = rest[..at].chars().rev().take_while(|c| *c != '\n').all(char::is_whitespace);
        let end = if at_line_start { rest[at..].find(';').map_or(rest.len(), |e| at + e + 1) } else { at + 8 };
        out.push_str(&rest[..if at_line_start { at } else { end }]);
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// Every `crate::name` in `code`: the first segment after `crate::`.
fn crate_paths(code: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        let before = rest[..at].chars().next_back();
        rest = &rest[at + "crate::".len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue; // `archetable_core::` and the like
        }
        let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        if !name.is_empty() {
            names.insert(name);
        }
    }
    names
}

/// The folder each name that `lib.rs` re-exports comes from (`World` -> `world`).
fn root_reexports(lib: &str) -> BTreeMap<String, String> {
    let mut map = BTreeMap::new();
    for statement in code_of(lib).split(';') {
        // A re-export behind a feature (`#[cfg(feature = "hierarchy")]`) names its folder all the same.
        let mut statement = statement.trim();
        while let Some(attribute) = statement.strip_prefix("#[") {
            statement = attribute.split_once(']').map_or("", |(_, rest)| rest).trim_start();
        }
        let Some(path) = statement.strip_prefix("pub use ") else { continue };
        let folder = path.split("::").next().unwrap_or("").trim().to_string();
        let names = match (path.find('{'), path.rfind('}')) {
            (Some(open), Some(close)) => path[open + 1..close].to_string(),
            _ => path.rsplit("::").next().unwrap_or("").to_string(),
        };
        for name in names.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            map.insert(name.to_string(), folder.clone());
        }
    }
    map
}

fn rust_files(dir: &Path, root: &Path, out: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).expect("the source folder is readable") {
        let path = entry.expect("a folder entry").path();
        if path.is_dir() {
            rust_files(&path, root, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let relative = path.strip_prefix(root).expect("below src");
            out.push(relative.to_string_lossy().replace('\\', "/"));
        }
    }
}

/// The (file, higher layer) pairs the sources have.
fn upward_imports(src: &Path) -> BTreeSet<(String, String)> {
    let lib = std::fs::read_to_string(src.join("lib.rs")).expect("lib.rs");
    let reexports = root_reexports(&lib);
    let mut files = Vec::new();
    rust_files(src, src, &mut files);
    let rank = |layer: &str| LAYERS.iter().position(|l| *l == layer);
    let mut found = BTreeSet::new();
    for file in files {
        if file == "lib.rs" || file == "layer_rules.rs" {
            continue;
        }
        let code =
            without_public_reexports(&code_of(&std::fs::read_to_string(src.join(&file)).expect("a source file")));
        for name in crate_paths(&code) {
            let target = reexports.get(&name).cloned().unwrap_or(name);
            match (layer_of(&file), rank(&target)) {
                (Some(from), Some(to)) => {
                    let from = rank(from).unwrap_or_else(|| panic!("{file}: folder not in LAYERS"));
                    if to > from {
                        found.insert((file.clone(), target));
                    }
                }
                (None, Some(_)) => panic!("{file}: a utility at the crate root imports the layer `{target}`"),
                _ => {}
            }
        }
    }
    found
}

#[test]
fn layers_import_only_downward_except_the_listed_arrows() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let found = upward_imports(&src);
    let listed: BTreeSet<(String, String)> =
        UPWARD.iter().map(|(file, layer, _)| (file.to_string(), layer.to_string())).collect();
    let new: Vec<_> = found.difference(&listed).collect();
    let stale: Vec<_> = listed.difference(&found).collect();
    assert!(new.is_empty(), "upward imports not in UPWARD (move the code down, or list it with its reason): {new:?}");
    assert!(stale.is_empty(), "arrows in UPWARD that the code no longer has (remove them): {stale:?}");
}

#[test]
fn the_checker_sees_paths_and_reexports() {
    let code = code_of("use crate::world::World; // crate::query\nfn f() -> crate::Entity { archetable_core::x() }");
    assert_eq!(crate_paths(&code), BTreeSet::from(["world".to_string(), "Entity".to_string()]));
    let map = root_reexports(
        "pub use world::{SpawnBatch, World};\npub use entity::error::SpawnAtError;\n#[cfg(feature = \"hierarchy\")]\npub use hierarchy::{ChildOf, Children};\n",
    );
    assert_eq!(map.get("World").map(String::as_str), Some("world"));
    assert_eq!(map.get("SpawnAtError").map(String::as_str), Some("entity"));
    assert_eq!(map.get("Children").map(String::as_str), Some("hierarchy"));
    let code = code_of(
        "use crate::world::World;\n#[cfg(all(test, feature = \"tracing\"))]\nmod tests {\n use crate::Trigger;\n}",
    );
    assert_eq!(crate_paths(&code), BTreeSet::from(["world".to_string()]));
    assert_eq!(layer_of("world/hooks.rs"), Some("world"));
    assert_eq!(layer_of("names.rs"), None);
    let code = "pub use crate::observer::Trigger;\n    pub use crate::hierarchy::{\n A,\n B};\nuse crate::query::Q;\nfn f() { crate::pub_use_x(); }";
    assert_eq!(
        crate_paths(&without_public_reexports(code)),
        BTreeSet::from(["query".to_string(), "pub_use_x".to_string()])
    );
}
