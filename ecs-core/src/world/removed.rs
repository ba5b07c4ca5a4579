//! The record of which entities lost which components, read by
//! [`RemovedComponents`](crate::RemovedComponents).
//!
//! Recording is per component type and starts when the first reader of the
//! type appears, so a world without readers pays one flag test per despawn
//! or removal. A reader appears when a system taking
//! `RemovedComponents<T>` is added to a schedule, before the schedule has
//! met any world: from then on every world of the process records removals
//! of `T` (the list of wanted types is process-wide, and each world catches
//! up with it before its next removal). Like events, a record lives for two
//! frames ([`World::update_events`](crate::World::update_events)): a reader
//! that runs every frame sees each removal exactly once.

use std::any::TypeId;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

use crate::component::{ComponentId, Components};
use crate::entity::Entity;
use crate::world::event::{Position, Rewinds};

/// The component types whose removals some system reads, in any schedule.
static WANTED: Mutex<Vec<TypeId>> = Mutex::new(Vec::new());
/// `WANTED`'s length, read without the lock on every removal.
static WANTED_LEN: AtomicUsize = AtomicUsize::new(0);

/// Asks every world to record removals of the component type `type_id`
/// from its next removal on.
pub(crate) fn want(type_id: TypeId) {
    let mut wanted = WANTED.lock().unwrap_or_else(PoisonError::into_inner);
    if !wanted.contains(&type_id) {
        wanted.push(type_id);
        WANTED_LEN.store(wanted.len(), Ordering::Release);
    }
}

/// The removals of one component type: this frame's and last frame's.
#[derive(Debug, Default)]
pub(crate) struct RemovalLog {
    older: Vec<Entity>,
    newer: Vec<Entity>,
    /// The sequence number of `older[0]`; `newer` continues the numbering.
    older_start: u64,
    /// How many frames ended (`update`): what readers remember their
    /// positions by.
    updates: u64,
    /// Its rewinds ([`World::rewind_removals`](crate::World::rewind_removals)),
    /// for readers to catch up with.
    rewinds: Rewinds,
}

/// Copies the removals and their numbering, not the rewinds; `clone_from`
/// reuses the target's buffers.
impl Clone for RemovalLog {
    fn clone(&self) -> Self {
        RemovalLog {
            older: self.older.clone(),
            newer: self.newer.clone(),
            older_start: self.older_start,
            updates: self.updates,
            rewinds: Rewinds::default(),
        }
    }

    fn clone_from(&mut self, source: &Self) {
        self.older.clone_from(&source.older);
        self.newer.clone_from(&source.newer);
        self.older_start = source.older_start;
        self.updates = source.updates;
    }
}

impl RemovalLog {
    #[inline]
    fn end(&self) -> u64 {
        self.older_start + (self.older.len() + self.newer.len()) as u64
    }

    /// The removals a reader at `cursor` has not seen, and moves the cursor
    /// past them.
    pub fn read(&self, cursor: &mut Position) -> impl Iterator<Item = Entity> + '_ + use<'_> {
        cursor.sync(&self.rewinds, self.updates);
        let unread = self.unread_from(cursor.next);
        cursor.next = self.end();
        let from_older = unread.saturating_sub(self.newer.len());
        let from_newer = unread - from_older;
        self.older[self.older.len() - from_older..].iter().chain(&self.newer[self.newer.len() - from_newer..]).copied()
    }

    /// How many removals a reader at `cursor` has not seen.
    pub fn unread(&self, cursor: &Position) -> usize {
        self.unread_from(cursor.next(&self.rewinds))
    }

    fn unread_from(&self, next: u64) -> usize {
        (self.end() - next.clamp(self.older_start, self.end())) as usize
    }

    /// Every removal still recorded, oldest first.
    pub fn all(&self) -> impl Iterator<Item = Entity> + '_ {
        self.older.iter().chain(&self.newer).copied()
    }

    fn update(&mut self) {
        self.older_start += self.older.len() as u64;
        std::mem::swap(&mut self.older, &mut self.newer);
        self.newer.clear();
        self.updates += 1;
    }
}

/// A copy of a world's removal logs (what
/// [`RemovedComponents`](crate::RemovedComponents) reads), taken with
/// [`World::save_removals`](crate::World::save_removals) and put back
/// with [`World::rewind_removals`](crate::World::rewind_removals), for
/// rollback. Keeps its memory from one save to the next.
#[derive(Debug, Default)]
pub struct RemovalRecord {
    logs: Vec<Option<RemovalLog>>,
}

/// Every component type's removal log, by component id.
#[derive(Debug, Default)]
pub(crate) struct Removals {
    logs: Vec<Option<RemovalLog>>,
    /// Whether any type is recorded: the one test on the despawn path.
    any: bool,
    /// How many wanted types (`WANTED`) and how many registered components
    /// the tracked set reflects.
    synced: (usize, usize),
    /// How many frames' positions readers remember (0: none).
    remember: usize,
}

impl Removals {
    /// Starts recording the types that readers want (see [`want`]) and
    /// that this world has registered, if either list grew.
    #[inline]
    pub fn sync(&mut self, components: &Components) {
        if self.synced != (WANTED_LEN.load(Ordering::Acquire), components.len()) {
            self.sync_slow(components);
        }
    }

    #[cold]
    #[inline(never)]
    fn sync_slow(&mut self, components: &Components) {
        let wanted = WANTED.lock().unwrap_or_else(PoisonError::into_inner);
        for &type_id in wanted.iter() {
            if let Some(id) = components.id_of_type(type_id) {
                self.track(id);
            }
        }
        self.synced = (wanted.len(), components.len());
    }

    /// Starts recording removals of `id`.
    pub fn track(&mut self, id: ComponentId) {
        if self.logs.len() <= id.index() {
            self.logs.resize_with(id.index() + 1, || None);
        }
        let remember = self.remember;
        self.logs[id.index()].get_or_insert_with(|| {
            let mut log = RemovalLog::default();
            log.rewinds.remember(remember);
            log
        });
        self.any = true;
    }

    /// Copies every log into `record`.
    pub fn save(&self, record: &mut RemovalRecord) {
        record.logs.clone_from(&self.logs);
    }

    /// Makes every log that `record` holds a copy of that copy again, and
    /// has its readers go back to where they were then.
    pub fn rewind_to(&mut self, record: &RemovalRecord) {
        for (log, saved) in self.logs.iter_mut().zip(&record.logs) {
            if let (Some(log), Some(saved)) = (log, saved) {
                log.clone_from(saved);
                log.rewinds.push(saved.updates);
            }
        }
    }

    /// Has the readers of every log remember their positions for the last
    /// `frames` frames they read in.
    pub fn remember_readers(&mut self, frames: usize) {
        self.remember = frames;
        for log in self.logs.iter_mut().flatten() {
            log.rewinds.remember(frames);
        }
    }

    #[inline]
    pub fn any(&self) -> bool {
        self.any
    }

    pub fn log(&self, id: ComponentId) -> Option<&RemovalLog> {
        self.logs.get(id.index())?.as_ref()
    }

    /// Records that `entity` lost each of `ids` that is tracked.
    pub fn record(&mut self, ids: &[ComponentId], entity: Entity) {
        for id in ids {
            if let Some(Some(log)) = self.logs.get_mut(id.index()) {
                log.newer.push(entity);
            }
        }
    }

    /// Records that every one of `entities` lost each of `ids` that is
    /// tracked.
    pub fn record_all(&mut self, ids: &[ComponentId], entities: impl Iterator<Item = Entity> + Clone) {
        for id in ids {
            if let Some(Some(log)) = self.logs.get_mut(id.index()) {
                log.newer.extend(entities.clone());
            }
        }
    }

    /// Ends a frame: removals recorded two frames ago are forgotten.
    pub fn update(&mut self) {
        for log in self.logs.iter_mut().flatten() {
            log.update();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(index: u32) -> Entity {
        Entity::new(index, std::num::NonZeroU32::MIN)
    }

    #[test]
    fn readers_see_each_removal_once_within_two_frames() {
        let mut removals = Removals::default();
        let id = ComponentId(0);
        removals.track(id);
        let (mut early, mut late) = (Position::default(), Position::default());
        removals.record(&[id], e(1));
        let log = removals.log(id).unwrap();
        assert_eq!(log.read(&mut early).collect::<Vec<_>>(), [e(1)]);
        removals.update();
        removals.record(&[id, ComponentId(5)], e(2));
        let log = removals.log(id).unwrap();
        assert_eq!(log.read(&mut early).collect::<Vec<_>>(), [e(2)]);
        assert_eq!(log.read(&mut late).collect::<Vec<_>>(), [e(1), e(2)]);
        removals.update();
        removals.update();
        removals.record(&[id], e(3));
        let log = removals.log(id).unwrap();
        assert_eq!(log.unread(&early), 1, "older records are gone, the new one is there");
        assert_eq!(log.read(&mut early).collect::<Vec<_>>(), [e(3)]);
        assert_eq!(log.all().collect::<Vec<_>>(), [e(3)]);
    }
}
