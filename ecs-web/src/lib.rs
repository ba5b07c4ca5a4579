//! The fireworks showcase (`examples/game`) in a web page: the same
//! simulation, compiled for `wasm32-unknown-unknown`, drawn into a
//! `<canvas>` and played with the mouse and the keyboard.
//!
//! The page (`page/index.html`) talks to the module through plain
//! `extern "C"` exports (`exports.rs`): numbers in, numbers out, and the
//! picture as RGBA bytes in a buffer the module owns, which the page reads
//! through a pointer into the module's memory. No bindings generator, no
//! imports: the module needs nothing from its host.
//!
//! Everything else compiles natively too: [`Fireworks`] is the game the
//! page drives, [`script`] the scripted input whose checksum the page, Node
//! and the native run must agree on, [`layers`] a pass over every layer
//! of the engine (saves and prefabs included) and [`figures`] the
//! workloads timed in both places.

#[allow(dead_code)] // The native showcase reads figures the page does not show.
#[path = "../../examples/game/sim.rs"]
mod sim;

mod canvas;
#[allow(unsafe_code)] // `#[unsafe(no_mangle)]` on the exports, and nothing else.
mod exports;
pub mod figures;
pub mod layers;
mod play;
pub mod script;

pub use canvas::{HEIGHT, WIDTH};
pub use play::{Fireworks, Key};
