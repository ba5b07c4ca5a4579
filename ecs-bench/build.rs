//! Records what the report prints about its own build: the compiler's
//! version and the locked versions of the peer crates.

use std::process::Command;

fn main() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_owned());
    let version = Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .and_then(|out| String::from_utf8(out.stdout).ok())
        .map(|v| v.trim().to_owned())
        .unwrap_or_else(|| "unknown".to_owned());
    println!("cargo:rustc-env=ECS_BENCH_RUSTC={version}");

    let manifest_dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let lock_path = std::path::Path::new(&manifest_dir).join("../Cargo.lock");
    println!("cargo:rerun-if-changed={}", lock_path.display());
    let lock = std::fs::read_to_string(&lock_path).unwrap_or_default();
    for (krate, var) in [("hecs", "ECS_BENCH_HECS"), ("bevy_ecs", "ECS_BENCH_BEVY_ECS")] {
        println!("cargo:rustc-env={var}={}", locked_version(&lock, krate).unwrap_or("unknown"));
    }
}

/// The version of the first `[[package]]` named `name` in a lock file.
fn locked_version<'a>(lock: &'a str, name: &str) -> Option<&'a str> {
    let wanted = format!("name = \"{name}\"");
    let mut lines = lock.lines();
    lines.find(|line| line.trim() == wanted)?;
    let version = lines.next()?.trim().strip_prefix("version = \"")?;
    version.strip_suffix('"')
}
