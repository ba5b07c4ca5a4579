//! The showcase (`examples/game`) is deterministic: the same script gives
//! the same world, bit for bit, whether systems run on one thread or many,
//! and it writes every picture it names.

#![cfg(feature = "game-loop")]

#[path = "../../examples/game/main.rs"]
mod game;

#[test]
fn the_showcase_is_deterministic_and_draws_its_run() {
    let dir = std::env::temp_dir().join(format!("archetable-showcase-{}", std::process::id()));
    let one = game::play(&dir.join("one"), false).unwrap();
    let many = game::play(&dir.join("many"), true).unwrap();
    assert_eq!(one.checksum, many.checksum);
    assert_eq!(one.log, many.log);
    assert_eq!(one.log.first().map(String::as_str), Some("level 1: playing"));
    assert!(one.log.iter().any(|l| l.starts_with("level 1: iced over")));
    assert_eq!(one.log.last().map(String::as_str), Some("level 2: playing"));
    assert_eq!((one.steps, one.dropped, one.paused_frames), (600, 20, 8));
    let names: Vec<String> = one.files.iter().map(|f| f.file_name().unwrap().to_string_lossy().into_owned()).collect();
    for name in ["arena.gif", "arena-000.png", "arena-300.png", "strip.png", "figures.svg"] {
        assert!(names.iter().any(|n| n == name), "{name} missing from {names:?}");
    }
    for file in &one.files {
        assert!(std::fs::metadata(file).unwrap().len() > 100, "{} is empty", file.display());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_showcase_orders_every_pair_of_systems_that_conflict() {
    let mut game = game::new_game(true);
    let reports = game.ambiguities().unwrap();
    let stages: Vec<String> = reports.iter().map(|(stage, _)| stage.to_string()).collect();
    assert_eq!(
        stages,
        ["startup", "frame_start", "fixed_update", "update", "late_update", "on_enter(Playing)", "on_exit(Playing)"]
    );
    for (stage, report) in &reports {
        assert!(report.is_empty(), "stage `{stage}`: {report}");
    }
}
