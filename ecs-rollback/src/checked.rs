//! A socket wrapper that drops messages which would crash ggrs.
//!
//! ggrs 0.13 trusts what arrives from a peer's address more than it
//! should: an input message whose run-length-encoded bytes end inside a
//! number, or claim a huge length, panics inside its decoder (or asks for
//! all of memory), and one whose list of connection states is shorter than
//! the number of players panics on an index. A datagram from a stranger is
//! ignored, but UDP source addresses can be forged. A quality reply that
//! echoes a time long past overflows its round-trip arithmetic, too. [`CheckedSocket`]
//! reads every received message as it was encoded on the wire and passes
//! on only those ggrs can take safely.

use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use ggrs::{Message, NonBlockingSocket};
use serde::Deserialize;

use crate::config::PeerAddress;

/// The largest decoded input block accepted, in bytes: far more than
/// `max_prediction` inputs of any game, far less than a memory bomb.
const MAX_DECODED: usize = 64 * 1024;

/// Round trips longer than this (in milliseconds) are not believed.
const MAX_ROUND_TRIP_MS: u128 = 60_000;

/// Frames beyond this are not a real game's (over 200 days at 60 fps).
const MAX_FRAME: i32 = 1 << 30;

/// ggrs 0.13's message, as bincode writes it: a magic number and a body.
#[derive(Deserialize)]
struct Wire {
    _magic: u16,
    body: WireBody,
}

/// ggrs 0.13's message bodies, in its order (bincode writes the variant's
/// index), with the fields the checks read.
#[derive(Deserialize)]
enum WireBody {
    SyncRequest(#[allow(dead_code)] u32),
    SyncReply(#[allow(dead_code)] u32),
    Input(WireInput),
    InputAck(i32),
    QualityReport(#[allow(dead_code)] i16, #[allow(dead_code)] u128),
    /// The echo of a time this peer sent, in milliseconds since 1970.
    QualityReply(u128),
    ChecksumReport(#[allow(dead_code)] u128, i32),
    KeepAlive,
}

#[derive(Deserialize)]
struct WireInput {
    peer_connect_status: Vec<WireStatus>,
    _disconnect_requested: bool,
    start_frame: i32,
    ack_frame: i32,
    bytes: Vec<u8>,
}

#[derive(Deserialize)]
struct WireStatus {
    _disconnected: bool,
    last_frame: i32,
}

/// What a [`CheckedSocket`] let through and dropped.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CheckedStats {
    /// Messages received.
    pub received: u64,
    /// Input messages among them.
    pub inputs: u64,
    /// Messages dropped as unsafe for ggrs.
    pub dropped: u64,
}

/// A [`NonBlockingSocket`] around another that drops every received
/// message ggrs 0.13 would panic on (see the module's notes). Wrap the
/// socket of every P2P session that faces a network:
///
/// ```no_run
/// use archetable_rollback::CheckedSocket;
/// use archetable_rollback::ggrs::UdpNonBlockingSocket;
///
/// let socket = CheckedSocket::new(UdpNonBlockingSocket::bind_to_port(7000).unwrap(), 2);
/// ```
pub struct CheckedSocket<S> {
    inner: S,
    players: usize,
    stats: CheckedStats,
    shared: Arc<Mutex<CheckedStats>>,
    scratch: Vec<u8>,
}

/// A handle on a [`CheckedSocket`]'s counters that stays readable after
/// the socket has moved into a session.
#[derive(Clone, Debug, Default)]
pub struct CheckedStatsHandle(Arc<Mutex<CheckedStats>>);

impl CheckedStatsHandle {
    /// The counters as of the socket's last receive.
    pub fn get(&self) -> CheckedStats {
        *self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl<S> CheckedSocket<S> {
    /// Wraps `inner`, for a session of `players` players.
    pub fn new(inner: S, players: usize) -> Self {
        CheckedSocket { inner, players, stats: CheckedStats::default(), shared: Arc::default(), scratch: Vec::new() }
    }

    /// What was let through and dropped so far.
    pub fn stats(&self) -> CheckedStats {
        self.stats
    }

    /// A handle on the counters, to read them after the socket has moved
    /// into a session.
    pub fn stats_handle(&self) -> CheckedStatsHandle {
        CheckedStatsHandle(self.shared.clone())
    }

    /// Whether ggrs can take `msg` safely.
    fn safe(&mut self, msg: &Message) -> bool {
        self.scratch.clear();
        if bincode::serialize_into(&mut self.scratch, msg).is_err() {
            return false;
        }
        let Ok(wire) = bincode::deserialize::<Wire>(&self.scratch) else {
            // Not the layout this check knows: a ggrs other than 0.13.
            return false;
        };
        let frame_ok = |frame: i32| (ggrs::NULL_FRAME..MAX_FRAME).contains(&frame);
        match wire.body {
            WireBody::Input(input) => {
                self.stats.inputs += 1;
                input.peer_connect_status.len() == self.players
                    && input.peer_connect_status.iter().all(|status| frame_ok(status.last_frame))
                    && frame_ok(input.start_frame)
                    && frame_ok(input.ack_frame)
                    && rle_is_safe(&input.bytes)
            }
            WireBody::InputAck(frame) | WireBody::ChecksumReport(_, frame) => frame_ok(frame),
            // ggrs turns the echo into a round-trip time and multiplies it by
            // the frame rate in 32 bits: an old or future time overflows.
            WireBody::QualityReply(pong) => {
                let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis());
                pong <= now && now - pong <= MAX_ROUND_TRIP_MS
            }
            WireBody::SyncRequest(_) | WireBody::SyncReply(_) | WireBody::QualityReport(..) | WireBody::KeepAlive => {
                true
            }
        }
    }
}

/// Whether ggrs's run-length decoder (the `bitfield-rle` crate) gets
/// through `buf` without reading past its end, overflowing, or making a
/// block larger than [`MAX_DECODED`]. Mirrors its decoding loop: each run
/// starts with a little-endian base-128 number whose low bit says "repeat"
/// (the next bit is the repeated bit's value, the rest the length) or
/// "literal" (the rest is the count of bytes that follow).
fn rle_is_safe(buf: &[u8]) -> bool {
    let mut offset = 0usize;
    let mut total = 0usize;
    while offset < buf.len() {
        let mut value = 0u64;
        let mut digits = 0;
        loop {
            let Some(&byte) = buf.get(offset) else { return false };
            offset += 1;
            // Nine digits hold 63 bits; the decoder's arithmetic overflows
            // past that.
            if digits == 9 {
                return false;
            }
            value |= u64::from(byte & 127) << (7 * digits);
            digits += 1;
            if byte & 128 == 0 {
                break;
            }
        }
        let repeat = value & 1 == 1;
        let len = if repeat { value >> 2 } else { value >> 1 };
        let Ok(len) = usize::try_from(len) else { return false };
        total = match total.checked_add(len) {
            Some(total) if total <= MAX_DECODED => total,
            _ => return false,
        };
        if !repeat {
            offset = match offset.checked_add(len) {
                Some(end) if end <= buf.len() => end,
                _ => return false,
            };
        }
    }
    true
}

impl<S: NonBlockingSocket<A>, A: PeerAddress> NonBlockingSocket<A> for CheckedSocket<S> {
    fn send_to(&mut self, msg: &Message, addr: &A) {
        self.inner.send_to(msg, addr);
    }

    fn receive_all_messages(&mut self) -> Vec<(A, Message)> {
        let mut messages = self.inner.receive_all_messages();
        self.stats.received += messages.len() as u64;
        messages.retain(|(_, msg)| {
            let safe = self.safe(msg);
            if !safe {
                self.stats.dropped += 1;
            }
            safe
        });
        if let Ok(mut shared) = self.shared.lock() {
            *shared = self.stats;
        }
        messages
    }
}

#[cfg(test)]
mod tests {
    use super::rle_is_safe;

    #[test]
    fn runs_that_end_inside_a_number_or_past_the_buffer_are_refused() {
        assert!(rle_is_safe(&[]));
        // A literal of 2 bytes, then the 2 bytes.
        assert!(rle_is_safe(&[2 << 1, 7, 9]));
        // The literal claims 3 bytes, 2 follow.
        assert!(!rle_is_safe(&[3 << 1, 7, 9]));
        // A number that never ends.
        assert!(!rle_is_safe(&[0x80]));
        assert!(!rle_is_safe(&[0xff; 12]));
        // A repeat of 2^20 bits' worth of bytes: a memory bomb.
        assert!(!rle_is_safe(&[0x81, 0x80, 0x80, 0x02]));
        // A short repeat.
        assert!(rle_is_safe(&[(4 << 2) | 1]));
    }
}
