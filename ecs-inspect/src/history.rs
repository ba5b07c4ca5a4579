//! Per-frame figures of the last frames: real frame time, entities, and
//! each system's time in that frame, taken from the schedules' timings.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use archetable_core::{Schedule, Time, Timings, World};
use serde_json::{json, Value};

/// How many frames the history keeps.
pub(crate) const FRAMES: usize = 600;

/// A stage's name and its systems' timings, copied for the calls of a
/// frame (`schedule.list`).
pub(crate) type StageTimings = (String, Timings);

/// A stage's name and its schedule, whose timings [`History::sample`]
/// reads every frame where the schedule keeps them.
pub(crate) type SampledStage<'a> = (&'a str, &'a Schedule);

/// One frame's figures.
pub(crate) struct FrameRecord {
    pub frame: u64,
    pub real_dt_us: f64,
    pub entities: usize,
    pub paused: bool,
    pub scale: f64,
    /// Each system's time in the frame, in the order of
    /// [`History::systems`] when the record was taken (shorter if systems
    /// were added since).
    pub times_us: Vec<f32>,
    pub layout: u64,
}

impl FrameRecord {
    pub fn to_json(&self) -> Value {
        json!({
            "frame": self.frame,
            "real_dt_us": self.real_dt_us,
            "entities": self.entities,
            "paused": self.paused,
            "scale": self.scale,
            "layout": self.layout,
            "times_us": self.times_us,
        })
    }
}

/// The figures of the last [`FRAMES`] frames.
#[derive(Default)]
pub(crate) struct History {
    /// (stage, system) of each column of `times_us`; only grows.
    systems: Vec<(String, String)>,
    /// Each system's total time at the last sample.
    totals: Vec<Duration>,
    /// The totals of the sample being taken (kept for its buffer).
    next_totals: Vec<Duration>,
    /// Column of each system in the last sample's flat order.
    columns: Vec<usize>,
    /// Bumped when `systems` or `columns` change.
    layout: u64,
    /// The stage names and [`Schedule::timings_layout`] stamps that
    /// `columns` was last checked against: while they stay, a sample
    /// skips matching systems by name.
    checked: Vec<(String, u64)>,
    /// Shared with the stats watches' items, which the server's threads
    /// write out; the oldest record is reused when no watch holds it.
    frames: VecDeque<Arc<FrameRecord>>,
}

impl History {
    /// Records a frame. Allocates nothing once the history is full and
    /// the schedules keep their systems: the layout is checked in place,
    /// and the oldest record is reused.
    pub fn sample(&mut self, frame: u64, world: &World, stages: &[SampledStage<'_>]) {
        let oldest = if self.frames.len() == FRAMES { self.frames.pop_front() } else { None };
        let reused = oldest.and_then(Arc::into_inner);
        let mut times_us = reused.map(|r| r.times_us).unwrap_or_default();
        if !self.fill(stages, &mut times_us) {
            self.relayout(stages);
            let filled = self.fill(stages, &mut times_us);
            debug_assert!(filled, "a fresh layout matches");
        }
        let time = world.get_resource::<Time>();
        self.frames.push_back(Arc::new(FrameRecord {
            frame,
            real_dt_us: time.map_or(0.0, |t| t.real_delta().as_secs_f64() * 1e6),
            entities: world.len(),
            paused: time.is_some_and(Time::is_paused),
            scale: time.map_or(1.0, Time::scale),
            times_us,
            layout: self.layout,
        }));
    }

    /// Writes each system's time since the last sample into `times_us`, in
    /// the layout's columns, in one pass over the timings; `false`, with
    /// the totals left as they were, when the systems are not the
    /// layout's (then [`History::relayout`] and fill again).
    fn fill(&mut self, stages: &[SampledStage<'_>], times_us: &mut Vec<f32>) -> bool {
        times_us.clear();
        times_us.resize(self.systems.len(), 0.0);
        self.next_totals.clear();
        self.next_totals.extend_from_slice(&self.totals);
        // The same stamps as the last check: the same systems in the same
        // order, so no name needs comparing.
        let checked = self.checked.len() == stages.len()
            && self
                .checked
                .iter()
                .zip(stages)
                .all(|((name, stamp), (stage, schedule))| *stamp == schedule.timings_layout() && name == stage);
        let mut i = 0;
        for (stage, schedule) in stages {
            for t in schedule.system_timings() {
                let Some(&c) = self.columns.get(i) else { return false };
                if !checked {
                    let (s, n) = &self.systems[c];
                    if s != stage || n != t.name() {
                        return false;
                    }
                }
                times_us[c] = t.total().saturating_sub(self.totals[c]).as_secs_f64() as f32 * 1e6;
                self.next_totals[c] = t.total();
                i += 1;
            }
        }
        if i != self.columns.len() {
            return false;
        }
        if !checked {
            self.checked.clear();
            self.checked
                .extend(stages.iter().map(|(stage, schedule)| ((*stage).to_owned(), schedule.timings_layout())));
        }
        std::mem::swap(&mut self.totals, &mut self.next_totals);
        true
    }

    /// Maps the systems sampled now to columns, adding new ones; a system
    /// met for the first time counts from its current total.
    fn relayout(&mut self, stages: &[SampledStage<'_>]) {
        self.columns.clear();
        self.checked.clear();
        for (stage, schedule) in stages {
            for t in schedule.system_timings() {
                // The first column of that stage and name not taken yet:
                // two systems of one name keep their own columns.
                let column = self
                    .systems
                    .iter()
                    .enumerate()
                    .filter(|(c, (s, n))| s == stage && n == t.name() && !self.columns.contains(c))
                    .map(|(c, _)| c)
                    .nth(0);
                let column = match column {
                    Some(c) => c,
                    None => {
                        self.systems.push(((*stage).to_owned(), t.name().to_owned()));
                        self.totals.push(t.total());
                        self.systems.len() - 1
                    }
                };
                self.columns.push(column);
            }
        }
        self.layout += 1;
    }

    /// The records of the frames after `frame`, oldest first.
    pub fn after(&self, frame: u64) -> impl Iterator<Item = &Arc<FrameRecord>> {
        let newer = self.frames.iter().rev().take_while(|r| r.frame > frame).count();
        self.frames.iter().skip(self.frames.len() - newer)
    }

    /// The columns and the last `n` frames.
    pub fn to_json(&self, n: usize) -> Value {
        let systems: Vec<Value> =
            self.systems.iter().map(|(stage, name)| json!({ "stage": stage, "name": name })).collect();
        let skip = self.frames.len().saturating_sub(n);
        let frames: Vec<Value> = self.frames.iter().skip(skip).map(|r| r.to_json()).collect();
        json!({ "layout": self.layout, "systems": systems, "frames": frames })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a() {}
    fn b() {}
    fn c() {}

    fn names(history: &History) -> Vec<String> {
        history.columns.iter().map(|&c| format!("{}/{}", history.systems[c].0, history.systems[c].1)).collect()
    }

    #[test]
    fn columns_follow_the_schedules_while_stamps_skip_the_names() {
        let mut world = World::new();
        let mut history = History::default();
        let mut first = Schedule::new();
        first.add_systems((a, b));
        first.run(&mut world);
        history.sample(1, &world, &[("update", &first)]);
        assert_eq!(names(&history), ["update/a", "update/b"]);
        let layout = history.layout;

        // The same stamp: the same columns, no new layout.
        first.run(&mut world);
        history.sample(2, &world, &[("update", &first)]);
        assert_eq!((names(&history), history.layout), (vec!["update/a".into(), "update/b".into()], layout));

        // Another schedule with the same names in another order: its stamp
        // differs, so the names are matched again.
        let mut second = Schedule::new();
        second.add_systems((b, a, c));
        second.run(&mut world);
        history.sample(3, &world, &[("update", &second)]);
        assert_eq!(names(&history), ["update/b", "update/a", "update/c"]);
        assert_eq!(history.frames.back().unwrap().times_us.len(), 3);

        // The same schedule under another stage name: matched again too.
        history.sample(4, &world, &[("late_update", &second)]);
        assert_eq!(names(&history), ["late_update/b", "late_update/a", "late_update/c"]);
        assert_eq!(history.systems.len(), 6);
    }
}
