#![doc = include_str!("../README.md")]
#![deny(unsafe_code)]
#![warn(missing_docs)]

mod checked;
mod checksum;
mod config;
mod driver;
mod error;
mod event;
mod lossy;
mod registry;
mod sim;
mod snapshot;

pub use checked::{CheckedSocket, CheckedStats, CheckedStatsHandle};
pub use checksum::StableHasher;
pub use config::{GameInput, PeerAddress, RollbackConfig, Session};
pub use driver::{RollbackDriver, RollbackStats, Update};
pub use error::RollbackError;
pub use event::{Difference, FrameRecord, RecordedValue, RollbackEvent};
pub use lossy::{LinkConditions, LinkStats, LossySocket};
pub use registry::Registry;
pub use sim::{PlayerInputs, RollbackRng, SimTime};

/// The ggrs crate this layer is built on, for its session builder, socket
/// and types.
pub use ggrs;
