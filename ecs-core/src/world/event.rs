//! Events: messages that systems send to each other through the world,
//! kept for two frames in a double buffer.

use std::collections::VecDeque;
use std::marker::PhantomData;

/// A type that can be sent as an event: any `Send + Sync + 'static` type.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be an event",
    label = "not `Send + Sync + 'static`",
    note = "events are read by systems that may run on other threads"
)]
pub trait Event: Send + Sync + 'static {}

impl<T: Send + Sync + 'static> Event for T {}

/// The queue of events of type `E`: a resource, created the first time
/// anything sends or reads an `E` (a [`World::send_event`](crate::World::send_event),
/// an [`EventWriter<E>`](crate::EventWriter) or an
/// [`EventReader<E>`](crate::EventReader) being added to a schedule).
///
/// Events live in two buffers: the ones sent this frame, and the ones sent
/// the frame before. [`Events::update`], which a schedule calls at the end of
/// every run, drops the older buffer and starts a new one. So a reader that
/// runs every frame sees every event exactly once, whether it runs before
/// or after the writer in the frame, and events older than two frames are
/// gone.
///
/// ```
/// use archetable::{EventCursor, Events};
///
/// let mut events = Events::<u32>::default();
/// let mut cursor = EventCursor::default();
/// events.send(1);
/// events.update();
/// events.send(2);
/// assert_eq!(cursor.read(&events).copied().collect::<Vec<_>>(), [1, 2]);
/// assert_eq!(cursor.read(&events).count(), 0);
/// events.update();
/// events.update();
/// assert!(events.is_empty());
/// ```
///
/// # Rewinding
///
/// Rollback (restoring an earlier state of a world and simulating again)
/// needs the queue and its readers' positions as they were. A clone of the
/// queue (`E: Clone`) keeps the events and their numbering;
/// [`Events::rewind_to`] makes the queue such a copy again and sends every
/// [`EventCursor`] reading it back to where it was when the copy was taken,
/// provided the cursors were asked to remember
/// ([`Events::remember_cursors`]). Each cursor catches up at its next read.
///
/// ```
/// use archetable::{EventCursor, Events};
///
/// let mut events = Events::<u32>::default();
/// events.remember_cursors(8);
/// let mut cursor = EventCursor::default();
/// events.send(1);
/// let saved = events.clone();
/// assert_eq!(cursor.read(&events).copied().collect::<Vec<_>>(), [1]);
/// events.update();
/// events.send(2);
/// assert_eq!(cursor.read(&events).copied().collect::<Vec<_>>(), [2]);
/// events.rewind_to(&saved);
/// // Back to before the first read: the cursor sees event 1 again, not 2.
/// assert_eq!(cursor.read(&events).copied().collect::<Vec<_>>(), [1]);
/// ```
#[derive(Debug)]
pub struct Events<E> {
    older: Vec<E>,
    newer: Vec<E>,
    /// The sequence number of `older[0]`.
    older_start: u64,
    /// The sequence number of `newer[0]`.
    newer_start: u64,
    /// How many times `update` ran: the queue's frame count, which cursors
    /// remember their positions by.
    updates: u64,
    /// The rewinds of this queue, which cursors catch up with.
    rewinds: Rewinds,
}

/// How many rewinds a queue keeps the target of: a cursor that missed more
/// rewinds than this in a row goes back to the lowest one kept.
const REWINDS_KEPT: usize = 64;

/// The rewinds of a log that readers follow with a [`Position`] (an event
/// queue, a removal log), for its readers to catch up with; not part of
/// the log's value (a clone starts with none).
#[derive(Debug, Default)]
pub(crate) struct Rewinds {
    /// How many frames' positions each reader remembers (0: none).
    remember: usize,
    /// How many rewinds there were.
    count: u64,
    /// The frame of each of the last rewinds, the latest last.
    frames: VecDeque<u64>,
}

impl Rewinds {
    /// Notes a rewind of the log to the state it had at the start of
    /// `frame`. Allocates once, the first time.
    pub(crate) fn push(&mut self, frame: u64) {
        if self.frames.len() == REWINDS_KEPT {
            self.frames.pop_front();
        }
        if self.frames.capacity() < REWINDS_KEPT {
            self.frames.reserve_exact(REWINDS_KEPT);
        }
        self.frames.push_back(frame);
        self.count += 1;
    }

    /// Has readers remember their positions for the last `frames` frames
    /// they read in (0: not at all).
    pub(crate) fn remember(&mut self, frames: usize) {
        self.remember = frames;
    }
}

/// A reader's position in a log read by sequence number (an event queue, a
/// removal log), which can follow the log's [`Rewinds`]: while the log
/// asks for it, it remembers where it was before its first read in each
/// of the last frames it read in, and goes back there when the log is
/// rewound to such a frame.
#[derive(Debug, Default)]
pub(crate) struct Position {
    /// The sequence number of the next entry to read.
    pub next: u64,
    /// Entries dropped before this reader read them.
    pub missed: u64,
    /// The log's rewinds this position has caught up with.
    rewinds: u64,
    /// `(frame, next, missed)` before the first read in each of the last
    /// frames read in, oldest first.
    history: VecDeque<(u64, u64, u64)>,
}

impl Position {
    /// Where this reader is after the log's rewinds it has not caught up
    /// with: `(next, missed, history entries still valid)`.
    fn rewound(&self, rewinds: &Rewinds) -> (u64, u64, usize) {
        let pending = rewinds.count.wrapping_sub(self.rewinds);
        let kept = &rewinds.frames;
        let recent = kept.len() - (pending.min(kept.len() as u64) as usize);
        // The earliest frame any of those rewinds went back to.
        let Some(frame) = kept.range(recent..).copied().min() else {
            return (self.next, self.missed, self.history.len());
        };
        // The position before the first read at or after that frame is
        // the position at its start; no read since, the present one.
        match self.history.iter().position(|&(f, ..)| f >= frame) {
            Some(at) => (self.history[at].1, self.history[at].2, at),
            None => (self.next, self.missed, self.history.len()),
        }
    }

    /// The next entry to read, as [`Position::sync`] would make it.
    #[inline]
    pub(crate) fn next(&self, rewinds: &Rewinds) -> u64 {
        if self.rewinds == rewinds.count {
            self.next
        } else {
            self.rewound(rewinds).0
        }
    }

    /// Catches up with the log's rewinds, and remembers the position at
    /// the start of `frame` (the log's frame count) if the log asks
    /// readers to. Called before each read.
    #[inline]
    pub(crate) fn sync(&mut self, rewinds: &Rewinds, frame: u64) {
        if self.rewinds != rewinds.count {
            let (next, missed, valid) = self.rewound(rewinds);
            self.next = next;
            self.missed = missed;
            self.history.truncate(valid);
            self.rewinds = rewinds.count;
        }
        let remember = rewinds.remember;
        if remember != 0 && self.history.back().is_none_or(|&(f, ..)| f != frame) {
            if self.history.len() >= remember {
                self.history.pop_front();
            }
            if self.history.capacity() < remember {
                self.history.reserve_exact(remember - self.history.len());
            }
            self.history.push_back((frame, self.next, self.missed));
        }
    }
}

impl<E> Default for Events<E> {
    fn default() -> Self {
        Events {
            older: Vec::new(),
            newer: Vec::new(),
            older_start: 0,
            newer_start: 0,
            updates: 0,
            rewinds: Rewinds::default(),
        }
    }
}

/// Copies the queued events and their numbering (not the rewind
/// bookkeeping of [`Events::remember_cursors`]); `clone_from` reuses the
/// target's buffers.
impl<E: Clone> Clone for Events<E> {
    fn clone(&self) -> Self {
        Events {
            older: self.older.clone(),
            newer: self.newer.clone(),
            older_start: self.older_start,
            newer_start: self.newer_start,
            updates: self.updates,
            rewinds: Rewinds::default(),
        }
    }

    fn clone_from(&mut self, source: &Self) {
        self.older.clone_from(&source.older);
        self.newer.clone_from(&source.newer);
        self.older_start = source.older_start;
        self.newer_start = source.newer_start;
        self.updates = source.updates;
    }
}

impl<E: Clone> Events<E> {
    /// Makes this queue `earlier` again (a clone of it taken before), and
    /// sends each [`EventCursor`] reading it back to its position at the
    /// time of that clone: at its next read, a cursor sees what it saw
    /// after that point the first time, if the frames run again send the
    /// same events. A cursor can go back only as far as it remembers (see
    /// [`Events::remember_cursors`]); one that does not remember keeps its
    /// position. Reuses this queue's buffers.
    pub fn rewind_to(&mut self, earlier: &Events<E>) {
        self.clone_from(earlier);
        self.rewinds.push(earlier.updates);
    }
}

impl<E: Event> Events<E> {
    /// Queues `event`.
    pub fn send(&mut self, event: E) {
        self.newer.push(event);
    }

    /// Queues every event of `events`.
    pub fn send_batch(&mut self, events: impl IntoIterator<Item = E>) {
        self.newer.extend(events);
    }

    /// Ends a frame: drops the events sent two frames ago. Keeps the
    /// buffers' memory.
    pub fn update(&mut self) {
        std::mem::swap(&mut self.older, &mut self.newer);
        self.newer.clear();
        self.older_start = self.newer_start;
        self.newer_start = self.older_start + self.older.len() as u64;
        self.updates += 1;
    }

    /// How many frames [`Events::update`] has ended (a clone keeps the
    /// count, and [`Events::rewind_to`] restores it).
    pub fn frame(&self) -> u64 {
        self.updates
    }

    /// Makes every [`EventCursor`] reading this queue remember its position
    /// at the start of each of the last `frames` frames it read in (kept
    /// with the cursor, in memory allocated once), so that
    /// [`Events::rewind_to`] can send it back up to that many frames of
    /// reads. 0, the default, turns it off.
    pub fn remember_cursors(&mut self, frames: usize) {
        self.rewinds.remember(frames);
    }

    /// Drops every queued event.
    pub fn clear(&mut self) {
        let end = self.end();
        self.older.clear();
        self.newer.clear();
        self.older_start = end;
        self.newer_start = end;
    }

    /// Number of events queued (both frames).
    pub fn len(&self) -> usize {
        self.older.len() + self.newer.len()
    }

    /// Whether no event is queued.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every queued event, oldest first.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &E> {
        self.older.iter().chain(&self.newer)
    }

    /// The sequence number the next event will get.
    fn end(&self) -> u64 {
        self.newer_start + self.newer.len() as u64
    }
}

/// A reader's position in an [`Events`] queue: [`EventCursor::read`]
/// yields the events sent since the last read. [`EventReader`](crate::EventReader)
/// keeps one per system.
#[derive(Debug)]
pub struct EventCursor<E> {
    position: Position,
    _events: PhantomData<fn() -> E>,
}

impl<E> Default for EventCursor<E> {
    fn default() -> Self {
        EventCursor { position: Position::default(), _events: PhantomData }
    }
}

impl<E: Event> EventCursor<E> {
    /// The events sent since the last read, oldest first; moves the cursor
    /// past them.
    pub fn read<'a>(&mut self, events: &'a Events<E>) -> impl DoubleEndedIterator<Item = &'a E> + use<'a, E> {
        let position = &mut self.position;
        position.sync(&events.rewinds, events.updates);
        if position.next < events.older_start {
            position.missed += events.older_start - position.next;
            position.next = events.older_start;
        }
        let skip = (position.next - events.older_start) as usize;
        let (older, newer) = if skip <= events.older.len() {
            (&events.older[skip..], &events.newer[..])
        } else {
            (&events.older[..0], &events.newer[(skip - events.older.len()).min(events.newer.len())..])
        };
        position.next = events.end();
        older.iter().chain(newer)
    }

    /// Number of events not yet read.
    pub fn len(&self, events: &Events<E>) -> usize {
        let next = self.position.next(&events.rewinds);
        events.end().saturating_sub(next.max(events.older_start)) as usize
    }

    /// Whether every queued event has been read.
    pub fn is_empty(&self, events: &Events<E>) -> bool {
        self.len(events) == 0
    }

    /// Events that were dropped before this cursor read them (the reader did
    /// not run for two frames).
    pub fn missed(&self) -> u64 {
        self.position.missed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reader_after_the_writer_sees_each_event_once() {
        let mut events = Events::default();
        let mut cursor = EventCursor::default();
        let mut seen = Vec::new();
        for frame in 0..4u32 {
            events.send(frame);
            seen.extend(cursor.read(&events).copied());
            events.update();
        }
        assert_eq!(seen, [0, 1, 2, 3]);
    }

    #[test]
    fn a_reader_before_the_writer_sees_each_event_once() {
        let mut events = Events::default();
        let mut cursor = EventCursor::default();
        let mut seen = Vec::new();
        for frame in 0..4u32 {
            seen.extend(cursor.read(&events).copied());
            events.send(frame);
            events.update();
        }
        seen.extend(cursor.read(&events).copied());
        assert_eq!(seen, [0, 1, 2, 3]);
    }

    #[test]
    fn events_older_than_two_frames_are_dropped_and_counted_as_missed() {
        let mut events = Events::default();
        let mut cursor = EventCursor::default();
        events.send_batch([1, 2]);
        events.update();
        events.send(3);
        events.update();
        events.update();
        assert_eq!(cursor.len(&events), 0);
        assert_eq!(cursor.read(&events).count(), 0);
        assert_eq!(cursor.missed(), 3);
        events.send(4);
        assert_eq!(cursor.read(&events).copied().collect::<Vec<_>>(), [4]);
    }

    #[test]
    fn clear_keeps_cursors_valid() {
        let mut events = Events::default();
        let mut cursor = EventCursor::default();
        events.send(1);
        events.clear();
        events.send(2);
        assert_eq!(cursor.read(&events).copied().collect::<Vec<_>>(), [2]);
        assert_eq!(cursor.missed(), 1);
    }

    /// One frame of a game: a cursor that reads before the writer, the
    /// writer (frame `f` sends `f % 3` events), a cursor that reads after
    /// it; what each read.
    fn frame(events: &mut Events<u32>, early: &mut EventCursor<u32>, late: &mut EventCursor<u32>) -> Vec<u32> {
        let f = events.frame() as u32;
        let mut seen: Vec<u32> = early.read(events).copied().collect();
        seen.push(u32::MAX);
        events.send_batch((0..f % 3).map(|i| f * 10 + i));
        seen.extend(late.read(events).copied());
        events.update();
        seen
    }

    #[test]
    fn a_rewind_sends_cursors_back_to_where_they_were() {
        let mut events = Events::default();
        events.remember_cursors(8);
        let (mut early, mut late) = (EventCursor::default(), EventCursor::default());
        let mut saves = Vec::new();
        let mut first = Vec::new();
        for _ in 0..20 {
            saves.push(events.clone());
            first.push(frame(&mut events, &mut early, &mut late));
        }
        // Back 1 to 7 frames from the present, and again to the present.
        for depth in 1..=7 {
            let from = 20 - depth;
            events.rewind_to(&saves[from]);
            assert_eq!(events.frame(), from as u64);
            for (f, seen) in first.iter().enumerate().skip(from) {
                assert_eq!(&frame(&mut events, &mut early, &mut late), seen, "depth {depth}, frame {f}");
            }
        }
        assert_eq!(early.missed(), 0);
        assert_eq!(late.missed(), 0);
        // Two rewinds with no read between them: the earlier one counts.
        events.rewind_to(&saves[12]);
        events.rewind_to(&saves[15]);
        assert_eq!(early.len(&events), first[15].iter().position(|&e| e == u32::MAX).unwrap());
        events.rewind_to(&saves[12]);
        for (f, seen) in first.iter().enumerate().skip(12) {
            assert_eq!(&frame(&mut events, &mut early, &mut late), seen, "frame {f}");
        }
    }

    #[test]
    fn without_memory_a_rewind_leaves_cursors_where_they_are() {
        let mut events = Events::default();
        let mut cursor = EventCursor::default();
        events.send(1);
        let saved = events.clone();
        assert_eq!(cursor.read(&events).count(), 1);
        events.rewind_to(&saved);
        assert_eq!(cursor.read(&events).count(), 0);
        events.send(2);
        assert_eq!(cursor.read(&events).copied().collect::<Vec<_>>(), [2]);
    }
}
