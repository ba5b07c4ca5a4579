//! Finds the path through which derive output names the engine: `::archetable` for
//! users, a renamed dependency's name if `archetable` was renamed, `::archetable_core`
//! inside the engine crate itself.

use proc_macro2::{Span, TokenStream};
use quote::quote;

/// The path of the crate that defines the engine's traits, as seen from the
/// crate being compiled.
pub fn engine() -> TokenStream {
    let name = crate_name();
    let ident = syn::Ident::new(&name, Span::call_site());
    quote!(::#ident)
}

fn crate_name() -> String {
    match std::env::var("CARGO_PKG_NAME").as_deref() {
        Ok("archetable-core") => return "archetable_core".into(),
        Ok("archetable") => return "archetable".into(),
        _ => {}
    }
    let manifest = std::env::var("CARGO_MANIFEST_DIR")
        .ok()
        .and_then(|dir| std::fs::read_to_string(std::path::Path::new(&dir).join("Cargo.toml")).ok());
    manifest.as_deref().and_then(find_dependency).unwrap_or_else(|| "archetable".into())
}

/// Looks through a manifest's dependency tables for `archetable` (possibly renamed
/// with `package = "archetable"`), then for `archetable-core`. A line-based reading is
/// enough for the two forms cargo accepts for a dependency: `name = ...`
/// inside a `[*dependencies]` table, and a `[*dependencies.name]` table.
fn find_dependency(manifest: &str) -> Option<String> {
    let mut in_deps = false;
    let mut table_dep: Option<String> = None;
    let mut found_core = false;
    for line in manifest.lines() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.starts_with('[') {
            let header = line.trim_matches(|c| c == '[' || c == ']').trim();
            table_dep = None;
            in_deps = header.ends_with("dependencies");
            if let Some((table, dep)) = header.rsplit_once('.') {
                if table.ends_with("dependencies") {
                    let dep = dep.trim_matches('"').to_string();
                    if dep == "archetable" {
                        return Some("archetable".into());
                    }
                    found_core |= dep == "archetable-core";
                    table_dep = Some(dep);
                }
            }
            continue;
        }
        let Some((key, value)) = line.split_once('=') else { continue };
        let (key, value) = (key.trim().trim_matches('"'), value.trim());
        if let Some(dep) = &table_dep {
            if key == "package" && value.trim_matches('"') == "archetable" {
                return Some(dep.replace('-', "_"));
            }
        } else if in_deps {
            if key == "archetable" || names_package(value, "archetable") {
                return Some(key.replace('-', "_"));
            }
            found_core |= key == "archetable-core" || names_package(value, "archetable-core");
        }
    }
    found_core.then(|| "archetable_core".into())
}

/// Whether an inline dependency table renames the package `package`.
fn names_package(value: &str, package: &str) -> bool {
    value.split(',').any(|part| {
        part.trim_matches(|c| c == '{' || c == '}' || c == ' ')
            .split_once('=')
            .is_some_and(|(k, v)| k.trim() == "package" && v.trim().trim_matches('"') == package)
    })
}

#[cfg(test)]
mod tests {
    use super::find_dependency;

    #[test]
    fn plain_dependency() {
        let manifest = "[package]\nname = \"game\"\n\n[dependencies]\narchetable = \"0.1\"\n";
        assert_eq!(find_dependency(manifest).as_deref(), Some("archetable"));
    }

    #[test]
    fn renamed_dependency_inline_and_as_table() {
        let inline = "[dependencies]\nmy-archetable = { version = \"0.1\", package = \"archetable\" }\n";
        assert_eq!(find_dependency(inline).as_deref(), Some("my_archetable"));
        let table = "[dependencies.engine]\npackage = \"archetable\"\nversion = \"0.1\"\n";
        assert_eq!(find_dependency(table).as_deref(), Some("engine"));
    }

    #[test]
    fn core_only_and_none() {
        let core = "[dev-dependencies]\narchetable-core = { path = \"../archetable-core\" }\n";
        assert_eq!(find_dependency(core).as_deref(), Some("archetable_core"));
        assert_eq!(find_dependency("[dependencies]\nserde = \"1\"\n"), None);
    }
}
