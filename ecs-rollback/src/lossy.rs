//! A socket wrapper that makes a link worse on purpose: every datagram
//! sent through it is delayed (a base delay plus random jitter), and may be
//! lost, sent twice, or held back longer so that it overtakes nothing and
//! is overtaken (reordering). For tests and demos of rollback over a bad
//! network on one machine; the randomness is seeded, so a run repeats.
//!
//! ```text
//!   send_to ──▶ [lost?] ──▶ queue (due = now + delay ± jitter [+ reorder]) ──▶ inner.send_to when due
//!                        └▶ [duplicate?] second copy, its own due time
//!   receive_all_messages ◀── inner (after sending what is due)
//! ```

use std::time::{Duration, Instant};

use ggrs::{Message, NonBlockingSocket};

use crate::config::PeerAddress;
use crate::sim::RollbackRng;

/// How bad a [`LossySocket`] makes the link, in each direction it sends.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinkConditions {
    /// The one-way delay every datagram gets.
    pub delay: Duration,
    /// Up to this much more or less delay, drawn per datagram (so datagrams
    /// reorder when it is larger than the time between them).
    pub jitter: Duration,
    /// The chance (0 to 1) that a datagram is lost.
    pub loss: f32,
    /// The chance that a datagram is sent twice.
    pub duplicate: f32,
    /// The chance that a datagram is held back an extra `delay`, so later
    /// ones overtake it.
    pub reorder: f32,
    /// The seed of the random draws.
    pub seed: u64,
}

impl Default for LinkConditions {
    /// A perfect link: no delay, loss, duplication or reordering.
    fn default() -> Self {
        LinkConditions {
            delay: Duration::ZERO,
            jitter: Duration::ZERO,
            loss: 0.0,
            duplicate: 0.0,
            reorder: 0.0,
            seed: 0,
        }
    }
}

/// What a [`LossySocket`] did to the datagrams sent through it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkStats {
    /// Datagrams handed to the wrapper.
    pub sent: u64,
    /// Datagrams dropped.
    pub lost: u64,
    /// Extra copies sent.
    pub duplicated: u64,
    /// Datagrams held back to be overtaken.
    pub reordered: u64,
}

/// A [`NonBlockingSocket`] around another that delays, jitters, drops,
/// duplicates and reorders what is sent through it, per
/// [`LinkConditions`]. Wrap each peer's socket for a bad link both ways.
///
/// Datagrams wait in the wrapper until due and go out on the next
/// `send_to` or `receive_all_messages` call (ggrs calls the latter every
/// frame), so the delay is as fine as the frame rate.
pub struct LossySocket<S, A> {
    inner: S,
    conditions: LinkConditions,
    rng: RollbackRng,
    queue: Vec<(Instant, u64, A, Message)>,
    serial: u64,
    stats: LinkStats,
}

impl<S, A: PeerAddress> LossySocket<S, A> {
    /// Wraps `inner`.
    pub fn new(inner: S, conditions: LinkConditions) -> Self {
        LossySocket {
            inner,
            rng: RollbackRng::new(conditions.seed),
            conditions,
            queue: Vec::new(),
            serial: 0,
            stats: LinkStats::default(),
        }
    }

    /// What the wrapper did so far.
    pub fn stats(&self) -> LinkStats {
        self.stats
    }

    /// The wrapped socket.
    pub fn inner(&self) -> &S {
        &self.inner
    }

    fn chance(&mut self, p: f32) -> bool {
        p > 0.0 && self.rng.unit_f32() < p
    }

    fn due(&mut self, now: Instant) -> Instant {
        let c = self.conditions;
        let jitter = c.jitter.as_micros() as u64;
        let mut delay = c.delay;
        if jitter > 0 {
            let offset = u64::from(self.rng.range((2 * jitter).min(u64::from(u32::MAX)) as u32));
            delay = (delay + Duration::from_micros(offset)).saturating_sub(c.jitter);
        }
        if self.chance(c.reorder) {
            self.stats.reordered += 1;
            delay += c.delay.max(Duration::from_millis(1));
        }
        now + delay
    }

    fn enqueue(&mut self, msg: &Message, addr: &A) {
        let now = Instant::now();
        let due = self.due(now);
        self.serial += 1;
        self.queue.push((due, self.serial, addr.clone(), msg.clone()));
    }
}

impl<S: NonBlockingSocket<A>, A: PeerAddress> LossySocket<S, A> {
    /// Sends every datagram whose time has come, earliest first.
    fn flush(&mut self) {
        if self.queue.is_empty() {
            return;
        }
        let now = Instant::now();
        self.queue.sort_unstable_by_key(|&(due, serial, _, _)| (due, serial));
        let ready = self.queue.partition_point(|&(due, _, _, _)| due <= now);
        for (_, _, addr, msg) in self.queue.drain(..ready) {
            self.inner.send_to(&msg, &addr);
        }
    }
}

impl<S: NonBlockingSocket<A>, A: PeerAddress> NonBlockingSocket<A> for LossySocket<S, A> {
    fn send_to(&mut self, msg: &Message, addr: &A) {
        self.stats.sent += 1;
        if self.chance(self.conditions.loss) {
            self.stats.lost += 1;
        } else {
            self.enqueue(msg, addr);
            if self.chance(self.conditions.duplicate) {
                self.stats.duplicated += 1;
                self.enqueue(msg, addr);
            }
        }
        self.flush();
    }

    fn receive_all_messages(&mut self) -> Vec<(A, Message)> {
        self.flush();
        self.inner.receive_all_messages()
    }
}
