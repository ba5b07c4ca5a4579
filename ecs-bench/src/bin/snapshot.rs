//! Prints the snapshot/restore figures beside a binary save and load round
//! trip (see `archetable_bench::snapshot`).

fn main() {
    let figures = archetable_bench::snapshot::default_figures();
    print!("{}", archetable_bench::snapshot::table(&figures));
}
