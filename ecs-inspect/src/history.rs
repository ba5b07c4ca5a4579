//! Per-frame figures of the last frames: real frame time, entities, and
//! each system's time in that frame, taken from the schedules' timings.

use std::collections::VecDeque;
use std::time::Duration;

use archetable_core::{SystemTiming, Time, Timings, World};
use serde_json::{json, Value};

/// How many frames the history keeps.
pub(crate) const FRAMES: usize = 600;

/// A stage's name and its systems' timings, copied for the calls of a
/// frame (`schedule.list`).
pub(crate) type StageTimings = (String, Timings);

/// A stage's name and its systems' timings where the schedule keeps them,
/// read by [`History::sample`] every frame without copying.
pub(crate) type SampledStage<'a> = (String, Vec<&'a SystemTiming>);

/// One frame's figures.
#[derive(Clone)]
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
    /// Column of each system in the last sample's flat order.
    columns: Vec<usize>,
    /// Bumped when `systems` or `columns` change.
    layout: u64,
    frames: VecDeque<FrameRecord>,
}

impl History {
    /// Records a frame.
    pub fn sample(&mut self, frame: u64, world: &World, stages: &[SampledStage<'_>]) {
        let flat: Vec<(&String, &SystemTiming)> =
            stages.iter().flat_map(|(stage, timings)| timings.iter().map(move |t| (stage, *t))).collect();
        let same = flat.len() == self.columns.len()
            && flat.iter().zip(&self.columns).all(|((stage, t), &c)| {
                let (s, n) = &self.systems[c];
                s == *stage && n == t.name()
            });
        if !same {
            self.relayout(stages);
        }
        let mut times_us = vec![0.0f32; self.systems.len()];
        for ((_, t), &c) in flat.iter().zip(&self.columns) {
            let spent = t.total().saturating_sub(self.totals[c]);
            self.totals[c] = t.total();
            times_us[c] = spent.as_secs_f64() as f32 * 1e6;
        }
        let time = world.get_resource::<Time>();
        if self.frames.len() == FRAMES {
            self.frames.pop_front();
        }
        self.frames.push_back(FrameRecord {
            frame,
            real_dt_us: time.map_or(0.0, |t| t.real_delta().as_secs_f64() * 1e6),
            entities: world.len(),
            paused: time.is_some_and(Time::is_paused),
            scale: time.map_or(1.0, Time::scale),
            times_us,
            layout: self.layout,
        });
    }

    /// Maps the systems sampled now to columns, adding new ones; a system
    /// met for the first time counts from its current total.
    fn relayout(&mut self, stages: &[SampledStage<'_>]) {
        self.columns.clear();
        for (stage, timings) in stages {
            for t in timings.iter() {
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
                        self.systems.push((stage.clone(), t.name().to_owned()));
                        self.totals.push(t.total());
                        self.systems.len() - 1
                    }
                };
                self.columns.push(column);
            }
        }
        self.layout += 1;
    }

    /// The last record.
    pub fn last(&self) -> Option<&FrameRecord> {
        self.frames.back()
    }

    /// The columns and the last `n` frames.
    pub fn to_json(&self, n: usize) -> Value {
        let systems: Vec<Value> =
            self.systems.iter().map(|(stage, name)| json!({ "stage": stage, "name": name })).collect();
        let skip = self.frames.len().saturating_sub(n);
        let frames: Vec<Value> = self.frames.iter().skip(skip).map(FrameRecord::to_json).collect();
        json!({ "layout": self.layout, "systems": systems, "frames": frames })
    }
}
