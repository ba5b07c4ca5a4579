//! Events: messages that systems send to each other through the world,
//! kept for two frames in a double buffer.

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
#[derive(Debug)]
pub struct Events<E> {
    older: Vec<E>,
    newer: Vec<E>,
    /// The sequence number of `older[0]`.
    older_start: u64,
    /// The sequence number of `newer[0]`.
    newer_start: u64,
}

impl<E> Default for Events<E> {
    fn default() -> Self {
        Events { older: Vec::new(), newer: Vec::new(), older_start: 0, newer_start: 0 }
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
    next: u64,
    missed: u64,
    _events: PhantomData<fn() -> E>,
}

impl<E> Default for EventCursor<E> {
    fn default() -> Self {
        EventCursor { next: 0, missed: 0, _events: PhantomData }
    }
}

impl<E: Event> EventCursor<E> {
    /// The events sent since the last read, oldest first; moves the cursor
    /// past them.
    pub fn read<'a>(&mut self, events: &'a Events<E>) -> impl DoubleEndedIterator<Item = &'a E> + use<'a, E> {
        if self.next < events.older_start {
            self.missed += events.older_start - self.next;
            self.next = events.older_start;
        }
        let skip = (self.next - events.older_start) as usize;
        let (older, newer) = if skip <= events.older.len() {
            (&events.older[skip..], &events.newer[..])
        } else {
            (&events.older[..0], &events.newer[(skip - events.older.len()).min(events.newer.len())..])
        };
        self.next = events.end();
        older.iter().chain(newer)
    }

    /// Number of events not yet read.
    pub fn len(&self, events: &Events<E>) -> usize {
        (events.end() - self.next.max(events.older_start)) as usize
    }

    /// Whether every queued event has been read.
    pub fn is_empty(&self, events: &Events<E>) -> bool {
        self.len(events) == 0
    }

    /// Events that were dropped before this cursor read them (the reader did
    /// not run for two frames).
    pub fn missed(&self) -> u64 {
        self.missed
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
}
