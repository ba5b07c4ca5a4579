//! Watches: the frame figures or a query, pushed by the game thread into a
//! bounded buffer per watch, and taken by clients with long polls
//! (`watch.poll`) on the server's threads. A query watch runs its query
//! every `every` frames; a stats watch is fed only when it is polled (the
//! frames since its last feed, from the history, at the next frame), so
//! between two polls it costs the game nothing.

use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::history::Frames;
use crate::methods::QuerySpec;
use crate::rpc::{codes, RpcError};
use crate::server::Shared;

/// Items a watch keeps before dropping its oldest.
pub const MAX_ITEMS: usize = 64;
/// A watch not polled for this long is stopped.
pub const EXPIRE: Duration = Duration::from_secs(30);

pub(crate) enum WatchKind {
    Stats,
    Query(QuerySpec),
}

/// A watch's item as the game thread leaves it: a frame's figures, in the
/// frames copied from the history at one feed (shared by that feed's
/// items), are written as JSON by the poll, on the server's thread.
pub(crate) enum Item {
    Frame(Arc<Frames>, usize),
    Json(Value),
}

impl Item {
    fn to_json(&self) -> Value {
        match self {
            Item::Frame(frames, i) => frames.to_json(*i),
            Item::Json(value) => value.clone(),
        }
    }
}

pub(crate) struct Watch {
    pub id: u64,
    pub kind: WatchKind,
    pub every: u64,
    items: VecDeque<(u64, Item)>,
    next_seq: u64,
    dropped: u64,
    last_poll: Instant,
    /// A stats watch: the last frame fed to it.
    pub fed: u64,
}

#[derive(Default)]
pub(crate) struct Watches {
    pub list: Vec<Watch>,
    next_id: u64,
}

impl Watches {
    /// Adds a watch; a stats watch's items start after frame `fed`.
    pub fn add(&mut self, kind: WatchKind, every: u64, max: usize, fed: u64) -> Result<u64, RpcError> {
        let now = Instant::now();
        self.list.retain(|w| now.duration_since(w.last_poll) < EXPIRE);
        if self.list.len() >= max {
            return Err(RpcError::new(
                codes::TOO_MANY_WATCHES,
                format!("the server holds {max} watches, its most; stop one (watch.stop) first"),
            ));
        }
        self.next_id += 1;
        let id = self.next_id;
        self.list.push(Watch {
            id,
            kind,
            every: every.max(1),
            items: VecDeque::new(),
            next_seq: 1,
            dropped: 0,
            last_poll: now,
            fed,
        });
        Ok(id)
    }
}

impl Watch {
    /// Adds an item, dropping the oldest past [`MAX_ITEMS`].
    pub fn push(&mut self, item: Item) {
        if self.items.len() == MAX_ITEMS {
            self.items.pop_front();
            self.dropped += 1;
        }
        self.items.push_back((self.next_seq, item));
        self.next_seq += 1;
    }

    /// Items the watch missed without holding them (frames the history no
    /// longer had, or past [`MAX_ITEMS`] at once): counted as dropped, and
    /// numbered as if they had been pushed.
    pub fn skip(&mut self, count: u64) {
        self.dropped += count;
        self.next_seq += count;
    }
}

/// Stops expired watches; called by the game thread while it holds the
/// lock.
pub(crate) fn expire(watches: &mut Watches, shared: &Shared) {
    let now = Instant::now();
    watches.list.retain(|w| now.duration_since(w.last_poll) < EXPIRE);
    count(watches, shared);
}

/// Tells the game thread how many watches are open, and how many of them
/// are query watches (which it runs on their own schedule); called with
/// the lock held.
pub(crate) fn count(watches: &Watches, shared: &Shared) {
    let queries = watches.list.iter().filter(|w| matches!(w.kind, WatchKind::Query(_))).count();
    shared.query_watches.store(queries, Ordering::Release);
    shared.watch_count.store(watches.list.len(), Ordering::Release);
}

/// `watch.poll`, on the server's thread: waits until the watch has items
/// after `after` or `timeout_ms` passed since `start`, the moment its
/// request arrived: the polls of a batch wait together, as long as the
/// longest of them, never the sum.
pub(crate) async fn poll(shared: &Shared, params: &Value, start: Instant) -> Result<Value, RpcError> {
    use crate::rpc::params;
    let id = params::uint(params, "watch", 0, u64::MAX)?;
    let after = params::uint(params, "after", 0, u64::MAX)?;
    let timeout = Duration::from_millis(params::uint(params, "timeout_ms", 1000, 10_000)?);
    let deadline = start + timeout;
    loop {
        // Listening before looking, so that an item pushed in between
        // still wakes this poll.
        let signal = shared.watch_signal.notified();
        tokio::pin!(signal);
        signal.as_mut().enable();
        {
            let mut watches = shared.watches.lock().unwrap_or_else(|e| e.into_inner());
            let Some(watch) = watches.list.iter_mut().find(|w| w.id == id) else {
                return Err(RpcError::new(
                    codes::UNKNOWN_WATCH,
                    format!("no watch {id} (stopped, or expired unpolled)"),
                ));
            };
            let now = Instant::now();
            watch.last_poll = now;
            while watch.items.front().is_some_and(|(seq, _)| *seq <= after) {
                watch.items.pop_front();
            }
            if !watch.items.is_empty() || now >= deadline || shared.is_stopping() {
                let items: Vec<Value> =
                    watch.items.iter().map(|(seq, item)| json!({ "seq": seq, "data": item.to_json() })).collect();
                let last = watch.next_seq - 1;
                return Ok(json!({ "watch": id, "items": items, "last": last, "dropped": watch.dropped }));
            }
            if matches!(watch.kind, WatchKind::Stats) {
                // The game feeds it the frames since its last feed at its
                // next frame, and then wakes this poll.
                shared.stats_polled.store(true, Ordering::Release);
            }
        }
        let _ = tokio::time::timeout_at(deadline.into(), signal).await;
    }
}

/// `watch.stop`, on a server thread.
pub(crate) fn stop(shared: &Shared, params: &Value) -> Result<Value, RpcError> {
    let id = crate::rpc::params::uint(params, "watch", 0, u64::MAX)?;
    let mut watches = shared.watches.lock().unwrap_or_else(|e| e.into_inner());
    let before = watches.list.len();
    watches.list.retain(|w| w.id != id);
    count(&watches, shared);
    if watches.list.len() == before {
        return Err(RpcError::new(codes::UNKNOWN_WATCH, format!("no watch {id}")));
    }
    Ok(Value::Null)
}
