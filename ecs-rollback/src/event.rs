//! What a driver reports to the game between updates: desyncs (with the
//! first differing value in debug mode), peers that connect, stall, come
//! back or leave.

use archetable_core::Entity;
use ggrs::Frame;
use serde::{Deserialize, Serialize};

/// The first value two records of one frame disagree on, found in debug
/// mode ([`RollbackDriver::set_debug`](crate::RollbackDriver::set_debug)).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Difference {
    /// The type whose value differs: a component or resource type name, or
    /// `"entities"` when the entity set or its order differs.
    pub type_name: &'static str,
    /// The entity whose component differs (none for a resource or the
    /// entity set).
    pub entity: Option<Entity>,
}

/// An event of a rollback session, drained with
/// [`RollbackDriver::drain_events`](crate::RollbackDriver::drain_events).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RollbackEvent<A> {
    /// The world of `frame` differs from what it should be: another peer
    /// computed another checksum (`remote` and `peer` set), or a sync test
    /// resimulated the frame to another checksum (both unset).
    Desync {
        /// The frame whose checksums differ.
        frame: Frame,
        /// This peer's checksum of the frame, when still known.
        local: Option<u128>,
        /// The other peer's checksum.
        remote: Option<u128>,
        /// The other peer.
        peer: Option<A>,
        /// In debug mode during a sync test: the first value that differs.
        first_difference: Option<Difference>,
    },
    /// A peer finished the handshake.
    Synchronized {
        /// The peer.
        peer: A,
    },
    /// A peer has sent nothing for a while and will be dropped after
    /// `disconnect_in_ms` more.
    NetworkInterrupted {
        /// The peer.
        peer: A,
        /// Milliseconds until the disconnect.
        disconnect_in_ms: u128,
    },
    /// A stalled peer is heard from again.
    NetworkResumed {
        /// The peer.
        peer: A,
    },
    /// A peer left or timed out; the game goes on with its inputs marked
    /// [`InputStatus::Disconnected`](ggrs::InputStatus::Disconnected).
    Disconnected {
        /// The peer.
        peer: A,
    },
}

/// One value's hash in a [`FrameRecord`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordedValue {
    /// Which type: its place in the driver's registrations (the same on
    /// every peer that registers the same types in the same order), or
    /// `u32::MAX` for the entity set.
    pub kind: u32,
    /// The entity holding the value ([`Entity::to_bits`]); none for a
    /// resource or the entity set.
    pub entity: Option<u64>,
    /// The value's hash.
    pub hash: u64,
}

/// Debug mode's record of one saved frame: a hash per entity set, per
/// component value and per resource. Serializable, so that two peers that
/// disagree on a frame can exchange their records (over the game's own
/// channel, or in log files) and have
/// [`RollbackDriver::first_difference`](crate::RollbackDriver::first_difference)
/// name the first value that differs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FrameRecord {
    /// The frame recorded (the world at its start).
    pub frame: Frame,
    /// The hashes, in checksum order.
    pub values: Vec<RecordedValue>,
}
