//! Memory per entity: spawns 1,000,000 entities of `(Position, Velocity)`
//! with each implementation and reports the growth of the process's peak
//! resident memory (`VmHWM`, Linux only) per entity, each measurement in a
//! fresh process so that one's peak does not hide another's. The report
//! binary prints the same numbers in its memory table.
//!
//! ```text
//! cargo run --release -p archetable-bench --bin memory                   # all, both scenarios
//! cargo run --release -p archetable-bench --bin memory -- archetable batch      # one, in this process
//! ```

use std::process::ExitCode;

use archetable_bench::memory::{self, Scenario};
use archetable_bench::Implementation;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [] => {
            println!("{} entities of (Position, Velocity)", memory::ENTITIES);
            println!("component data: {} bytes per entity", memory::component_bytes());
            let exe = std::env::current_exe().expect("path of this program");
            for which in Implementation::ALL {
                for scenario in Scenario::ALL {
                    match memory::measure_in_child(&exe, &[], which, scenario) {
                        Ok(m) => println!(
                            "{:<9} {:<10} allocated {:>6} bytes/entity, peak RSS {:6.1} bytes/entity, peak {:.1} MiB",
                            which.name(),
                            scenario.name(),
                            m.allocated_per_entity().map_or("-".to_owned(), |b| format!("{b:.1}")),
                            m.bytes_per_entity(),
                            m.after as f64 / (1024.0 * 1024.0)
                        ),
                        Err(why) => {
                            eprintln!("{why}");
                            return ExitCode::FAILURE;
                        }
                    }
                }
            }
            ExitCode::SUCCESS
        }
        [which, scenario] => {
            let (Some(which), Some(scenario)) = (Implementation::from_name(which), Scenario::from_name(scenario))
            else {
                eprintln!("usage: memory [IMPLEMENTATION SCENARIO], with one of archetable, hecs, bevy_ecs, raw and one of batch, one-by-one");
                return ExitCode::FAILURE;
            };
            match memory::measure(which, scenario) {
                Some(m) => {
                    println!("{}", m.to_line());
                    ExitCode::SUCCESS
                }
                None => {
                    eprintln!("no VmHWM in /proc/self/status");
                    ExitCode::FAILURE
                }
            }
        }
        _ => {
            eprintln!("usage: memory [IMPLEMENTATION SCENARIO]");
            ExitCode::FAILURE
        }
    }
}
