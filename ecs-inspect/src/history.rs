//! Per-frame figures of the last frames: real frame time, entities, and
//! each system's time in that frame, taken from the schedules' timings.
//!
//! A frame's sample only copies figures: its head (frame, times, counts)
//! and each system's nanoseconds since the last sample, as integers, into
//! rings allocated once. The microseconds a client reads are worked out
//! when it asks (`schedule.history`, a stats watch's poll).

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

/// One frame's figures other than the systems' times.
#[derive(Clone, Copy, Default)]
struct Head {
    frame: u64,
    real_dt: Duration,
    entities: usize,
    paused: bool,
    scale: f64,
    layout: u64,
    /// How many systems the history knew at the sample: the frame's
    /// times are that many (fewer if systems were added since).
    width: usize,
}

impl Head {
    fn to_json(self, times_ns: &[u64]) -> Value {
        let times_us: Vec<f32> = times_ns.iter().map(|&ns| micros(ns)).collect();
        json!({
            "frame": self.frame,
            "real_dt_us": self.real_dt.as_secs_f64() * 1e6,
            "entities": self.entities,
            "paused": self.paused,
            "scale": self.scale,
            "layout": self.layout,
            "times_us": times_us,
        })
    }
}

/// A duration's nanoseconds as an integer (saturating after 584 years).
#[inline]
fn nanos(d: Duration) -> u64 {
    d.as_secs().saturating_mul(1_000_000_000).saturating_add(u64::from(d.subsec_nanos()))
}

/// Where a stage's systems' times go in a frame's row.
enum Places<'a> {
    /// The columns are in order: the stage's are these.
    Range(std::ops::Range<usize>),
    /// The column of each of its systems.
    Columns(&'a [usize]),
}

/// Writes each system's time since the last sample, from its total now,
/// into its place in `row`, and keeps the total in `last`.
#[inline]
fn spend(totals: impl Iterator<Item = u64>, row: &mut [u64], last: &mut [u64], places: Places) {
    match places {
        Places::Range(range) => {
            for (total, (time, last)) in totals.zip(row[range.clone()].iter_mut().zip(&mut last[range])) {
                *time = total.saturating_sub(*last);
                *last = total;
            }
        }
        Places::Columns(columns) => {
            for (total, &c) in totals.zip(columns) {
                row[c] = total.saturating_sub(last[c]);
                last[c] = total;
            }
        }
    }
}

/// Nanoseconds as the microseconds the protocol reports.
fn micros(ns: u64) -> f32 {
    Duration::from_nanos(ns).as_secs_f64() as f32 * 1e6
}

/// Frames copied out of the history for a stats watch, whose items share
/// it; written as JSON by the poll, on the server's thread.
pub(crate) struct Frames {
    /// Each frame's head, and where its times start in `times_ns`.
    heads: Vec<(Head, usize)>,
    /// Each frame's times, one after the other (`width` each).
    times_ns: Vec<u64>,
}

impl Frames {
    /// How many frames the copy holds.
    pub fn len(&self) -> usize {
        self.heads.len()
    }

    /// The `i`th frame as the protocol writes a frame's figures.
    pub fn to_json(&self, i: usize) -> Value {
        let (head, start) = self.heads[i];
        head.to_json(&self.times_ns[start..start + head.width])
    }
}

/// A stage as the layout was last checked against it.
struct Checked {
    /// The stage's name.
    name: String,
    /// Its schedule's [`Schedule::timings_layout`] stamp.
    stamp: u64,
    /// How many systems it lists: its columns are that many, after the
    /// stages before it.
    width: usize,
    /// Its schedule's [`Schedule::frames`] at the last sample that read
    /// its timings (`u64::MAX` before the first): while the schedule has
    /// not run since, its systems took no time and are not read.
    runs: u64,
}

/// The figures of the last [`FRAMES`] frames.
#[derive(Default)]
pub(crate) struct History {
    /// (stage, system) of each column of the times; only grows.
    systems: Vec<(String, String)>,
    /// Each system's total time at the last sample, in nanoseconds.
    totals: Vec<u64>,
    /// Column of each system in the last sample's flat order.
    columns: Vec<usize>,
    /// The columns that no schedule lists now.
    unsampled: Vec<usize>,
    /// Whether `columns` is `0, 1, ..` up to the last system: every
    /// column is sampled, in order.
    in_order: bool,
    /// Bumped when `systems` or `columns` change.
    layout: u64,
    /// Each stage as `columns` was last checked against it: while the
    /// names and stamps stay, a sample skips matching systems by name.
    checked: Vec<Checked>,
    /// The stamps of `checked`, side by side, to compare with a copy's.
    stamps: Vec<u64>,
    /// The ring of frame heads: `len` of them, the oldest at `first`.
    heads: Vec<Head>,
    first: usize,
    len: usize,
    /// The ring of the frames' times: `stride` slots per head, in the
    /// head's place; the first `width` of them are the frame's.
    times_ns: Vec<u64>,
    stride: usize,
}

impl History {
    /// Records a frame: copies its figures into the rings. Allocates
    /// nothing once the rings are allocated and the schedules keep their
    /// systems: the layout is checked by its stamps, and the oldest frame's
    /// place is reused. `same_names`: the stages' names are the texts of
    /// the last sample's, in the same order, if they are as many (the
    /// caller keeps them), so only the stamps are compared.
    pub fn sample<'s, I>(&mut self, frame: u64, world: &World, same_names: bool, stages: impl Fn() -> I)
    where
        I: Iterator<Item = SampledStage<'s>>,
    {
        if !self.same_layout(same_names, &stages) {
            self.relayout(&stages);
        }
        if self.stride < self.systems.len() {
            self.restride();
        }
        if self.heads.len() < FRAMES {
            self.allocate_heads();
        }
        let slot = self.next_slot();
        let width = self.systems.len();
        let row = &mut self.times_ns[slot * self.stride..slot * self.stride + width];
        // A schedule that has not run since the last sample (the startup
        // schedule after the first frame, a fixed step that did not come
        // due) is not read: its systems took no time. Only the schedules
        // that ran are walked, so a frame touches little of the engine's
        // memory beyond what it just ran.
        let mut at = 0;
        for ((_, schedule), checked) in stages().zip(self.checked.iter_mut()) {
            let end = at + checked.width;
            let runs = schedule.frames();
            if runs == checked.runs {
                if self.in_order {
                    row[at..end].fill(0);
                } else {
                    for &c in &self.columns[at..end] {
                        row[c] = 0;
                    }
                }
            } else {
                checked.runs = runs;
                let places =
                    if self.in_order { Places::Range(at..end) } else { Places::Columns(&self.columns[at..end]) };
                spend(schedule.system_timings().map(|t| nanos(t.total())), row, &mut self.totals, places);
            }
            at = end;
        }
        if !self.in_order {
            // A column no schedule runs now took no time this frame.
            for &c in &self.unsampled {
                row[c] = 0;
            }
        }
        self.write_head(slot, frame, world);
    }

    /// Records a frame from a copy of every system's total, side by side
    /// ([`GameLoop::system_totals`](archetable_core::GameLoop::system_totals)):
    /// `stamps`, each stage's stamp, and `ns`, the totals. Only when the
    /// copy lists the layout last checked (the same stamps, under stage
    /// names the caller kept), in order: then the frame reads one slice
    /// and none of the schedules. `false`, and nothing recorded, otherwise
    /// (the caller then samples the schedules).
    pub fn sample_copied(&mut self, frame: u64, world: &World, stamps: &[u64], ns: &[u64]) -> bool {
        let width = self.systems.len();
        if !self.in_order || self.stamps != stamps || ns.len() != width || self.heads.len() < FRAMES {
            return false;
        }
        let slot = self.next_slot();
        let row = &mut self.times_ns[slot * self.stride..slot * self.stride + width];
        for ((time, last), &total) in row.iter_mut().zip(&mut self.totals).zip(ns) {
            *time = total.saturating_sub(*last);
            *last = total;
        }
        self.write_head(slot, frame, world);
        true
    }

    /// The place of the next frame in the rings: after the newest, over
    /// the oldest once they are full.
    #[inline]
    fn next_slot(&mut self) -> usize {
        let slot = (self.first + self.len) % FRAMES;
        if self.len == FRAMES {
            self.first = (self.first + 1) % FRAMES;
        } else {
            self.len += 1;
        }
        slot
    }

    /// Writes the frame's head in place `slot`.
    #[inline]
    fn write_head(&mut self, slot: usize, frame: u64, world: &World) {
        let time = world.get_resource::<Time>();
        self.heads[slot] = Head {
            frame,
            real_dt: time.map_or(Duration::ZERO, Time::real_delta),
            entities: world.len(),
            paused: time.is_some_and(Time::is_paused),
            scale: time.map_or(1.0, Time::scale),
            layout: self.layout,
            width: self.systems.len(),
        };
    }

    /// Whether the schedules' systems are the layout's columns, in order:
    /// by the stamps when they are the last check's, else by name (and the
    /// stamps are then kept for the next frames).
    fn same_layout<'s, I: Iterator<Item = SampledStage<'s>>>(
        &mut self,
        same_names: bool,
        stages: impl Fn() -> I,
    ) -> bool {
        let mut checked = self.checked.iter();
        let stamped = stages().all(|(stage, schedule)| {
            checked.next().is_some_and(|Checked { name, stamp, .. }| {
                *stamp == schedule.timings_layout() && (same_names || name.as_str() == stage)
            })
        }) && checked.next().is_none();
        stamped || self.same_names_and_columns(stages)
    }

    /// Whether the schedules' systems are the layout's columns, in order,
    /// by name; if so, their stamps are kept for the next frames. Off the
    /// per-frame path: only after a stamp changed.
    #[cold]
    #[inline(never)]
    fn same_names_and_columns<'s, I: Iterator<Item = SampledStage<'s>>>(&mut self, stages: impl Fn() -> I) -> bool {
        let mut columns = self.columns.iter();
        for (stage, schedule) in stages() {
            for t in schedule.system_timings() {
                let Some(&c) = columns.next() else { return false };
                let (s, n) = &self.systems[c];
                if s != stage || n != t.name() {
                    return false;
                }
            }
        }
        if columns.next().is_some() {
            return false;
        }
        self.check(stages);
        true
    }

    /// Keeps each stage's name, stamp and width for the next frames'
    /// checks; each stage's timings are read at the next sample.
    fn check<'s, I: Iterator<Item = SampledStage<'s>>>(&mut self, stages: impl Fn() -> I) {
        self.checked.clear();
        self.checked.extend(stages().map(|(stage, schedule)| Checked {
            name: stage.to_owned(),
            stamp: schedule.timings_layout(),
            width: schedule.system_timings().count(),
            runs: u64::MAX,
        }));
        self.stamps.clear();
        self.stamps.extend(self.checked.iter().map(|c| c.stamp));
    }

    /// Maps the systems sampled now to columns, adding new ones; a system
    /// met for the first time counts from its current total.
    #[cold]
    #[inline(never)]
    fn relayout<'s, I: Iterator<Item = SampledStage<'s>>>(&mut self, stages: impl Fn() -> I) {
        self.columns.clear();
        for (stage, schedule) in stages() {
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
                        self.systems.push((stage.to_owned(), t.name().to_owned()));
                        self.totals.push(nanos(t.total()));
                        self.systems.len() - 1
                    }
                };
                self.columns.push(column);
            }
        }
        self.check(stages);
        self.unsampled = (0..self.systems.len()).filter(|c| !self.columns.contains(c)).collect();
        self.in_order =
            self.columns.len() == self.systems.len() && self.columns.iter().enumerate().all(|(i, &c)| i == c);
        self.layout += 1;
    }

    /// Allocates the ring of frame heads, at the first sample.
    #[cold]
    #[inline(never)]
    fn allocate_heads(&mut self) {
        self.heads.resize(FRAMES, Head::default());
    }

    /// Widens the times' ring to hold every system, keeping the frames.
    #[cold]
    #[inline(never)]
    fn restride(&mut self) {
        let stride = self.systems.len().next_multiple_of(8);
        let mut times = vec![0; FRAMES * stride];
        if self.stride > 0 {
            for (slot, old) in self.times_ns.chunks_exact(self.stride).enumerate() {
                times[slot * stride..slot * stride + self.stride].copy_from_slice(old);
            }
        }
        self.times_ns = times;
        self.stride = stride;
    }

    /// The places of the frames after `frame`, oldest first.
    fn slots_after(&self, frame: u64) -> impl Iterator<Item = usize> + '_ {
        let newer = (0..self.len).rev().take_while(|&i| self.heads[(self.first + i) % FRAMES].frame > frame).count();
        (self.len - newer..self.len).map(|i| (self.first + i) % FRAMES)
    }

    /// The frames after `frame` whose number is a multiple of `every`,
    /// oldest first, copied out for a stats watch.
    pub fn after(&self, frame: u64, every: u64) -> Frames {
        let count = self.slots_after(frame).filter(|&slot| self.heads[slot].frame.is_multiple_of(every)).count();
        let mut frames =
            Frames { heads: Vec::with_capacity(count), times_ns: Vec::with_capacity(count * self.systems.len()) };
        for slot in self.slots_after(frame) {
            let head = self.heads[slot];
            if head.frame.is_multiple_of(every) {
                frames.heads.push((head, frames.times_ns.len()));
                frames.times_ns.extend_from_slice(self.times(slot));
            }
        }
        frames
    }

    /// The times of the frame in place `slot`.
    fn times(&self, slot: usize) -> &[u64] {
        let start = slot * self.stride;
        &self.times_ns[start..start + self.heads[slot].width]
    }

    /// The columns and the last `n` frames.
    pub fn to_json(&self, n: usize) -> Value {
        let systems: Vec<Value> =
            self.systems.iter().map(|(stage, name)| json!({ "stage": stage, "name": name })).collect();
        let frames: Vec<Value> = (self.len.saturating_sub(n)..self.len)
            .map(|i| {
                let slot = (self.first + i) % FRAMES;
                self.heads[slot].to_json(self.times(slot))
            })
            .collect();
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
        history.sample(1, &world, false, || [("update", &first)].into_iter());
        assert_eq!(names(&history), ["update/a", "update/b"]);
        let layout = history.layout;

        // The same stamp: the same columns, no new layout.
        first.run(&mut world);
        history.sample(2, &world, false, || [("update", &first)].into_iter());
        assert_eq!((names(&history), history.layout), (vec!["update/a".into(), "update/b".into()], layout));

        // Another schedule with the same names in another order: its stamp
        // differs, so the names are matched again.
        let mut second = Schedule::new();
        second.add_systems((b, a, c));
        second.run(&mut world);
        history.sample(3, &world, false, || [("update", &second)].into_iter());
        assert_eq!(names(&history), ["update/b", "update/a", "update/c"]);
        assert_eq!(history.heads[history.len - 1].width, 3);

        // The same schedule under another stage name: matched again too.
        history.sample(4, &world, false, || [("late_update", &second)].into_iter());
        assert_eq!(names(&history), ["late_update/b", "late_update/a", "late_update/c"]);
        assert_eq!(history.systems.len(), 6);
    }

    fn totals(schedule: &Schedule) -> Vec<Duration> {
        schedule.system_timings().map(|t| t.total()).collect()
    }

    /// The microseconds between two totals, worked out as durations.
    fn spent(before: &[Duration], after: &[Duration]) -> Vec<Value> {
        before.iter().zip(after).map(|(b, a)| json!(a.saturating_sub(*b).as_secs_f64() as f32 * 1e6)).collect()
    }

    fn frame_numbers(frames: &Value) -> Vec<u64> {
        frames.as_array().unwrap().iter().map(|f| f["frame"].as_u64().unwrap()).collect()
    }

    #[test]
    fn a_schedule_that_did_not_run_since_the_last_sample_took_no_time_and_keeps_its_total() {
        let mut world = World::new();
        let mut history = History::default();
        let mut startup = Schedule::new();
        startup.add_systems((a,));
        startup.run(&mut world);
        let mut update = Schedule::new();
        update.add_systems((b, c));
        let mut fixed = Schedule::new();
        fixed.add_systems((a, b));
        fixed.run(&mut world);
        let zeros = |n: usize| vec![json!(0.0); n];
        let mut last = (totals(&update), totals(&fixed));
        for frame in 1..=7 {
            update.run(&mut world);
            // The fixed step comes due twice at frame 3 and once at 6.
            let fixed_runs = [0, 0, 2, 0, 0, 1, 0][frame - 1];
            for _ in 0..fixed_runs {
                fixed.run(&mut world);
            }
            history.sample(frame as u64, &world, false, || {
                [("startup", &startup), ("update", &update), ("fixed", &fixed)].into_iter()
            });
            let now = (totals(&update), totals(&fixed));
            let times = &history.to_json(1)["frames"][0]["times_us"];
            if frame == 1 {
                // Systems met for the first time count from their totals.
                assert_eq!(*times, Value::Array(zeros(5)));
            } else {
                let mut expected = zeros(1);
                expected.extend(spent(&last.0, &now.0));
                expected.extend(if fixed_runs > 0 { spent(&last.1, &now.1) } else { zeros(2) });
                assert_eq!(*times, Value::Array(expected), "frame {frame}");
            }
            if fixed_runs > 0 {
                // Its times are its runs since its last read, not since
                // the last frame.
                assert!(spent(&last.1, &now.1).iter().all(|t| t.as_f64().unwrap() > 0.0), "frame {frame}");
            }
            last = now;
        }

        // Another order (columns out of order): a stage that did not run
        // still writes zeros into its own columns, wherever they are.
        for frame in 8..=10 {
            update.run(&mut world);
            if frame == 10 {
                fixed.run(&mut world);
            }
            history.sample(frame, &world, false, || [("fixed", &fixed), ("update", &update)].into_iter());
            assert!(!history.in_order);
            let now = (totals(&update), totals(&fixed));
            let mut expected = zeros(1);
            expected.extend(spent(&last.0, &now.0));
            expected.extend(if frame == 10 { spent(&last.1, &now.1) } else { zeros(2) });
            let times = &history.to_json(1)["frames"][0]["times_us"];
            assert_eq!(*times, Value::Array(expected), "frame {frame}");
            last = now;
        }

        // A system added after its schedule ran: a new layout, where the
        // new one counts from its total and the others did not run.
        fn d() {}
        fixed.add_systems((d,));
        let before: Vec<(String, Duration)> = [("update", &update), ("fixed", &fixed)]
            .iter()
            .flat_map(|(stage, s)| s.system_timings().map(move |t| (format!("{stage}/{}", t.name()), t.total())))
            .collect();
        history.sample(11, &world, false, || [("fixed", &fixed), ("update", &update)].into_iter());
        let json = history.to_json(1);
        assert_eq!(json["frames"][0]["times_us"], Value::Array(zeros(6)));
        // Then both run: each system's time by its name.
        update.run(&mut world);
        fixed.run(&mut world);
        history.sample(12, &world, false, || [("fixed", &fixed), ("update", &update)].into_iter());
        let json = history.to_json(1);
        let mut got: Vec<(String, Value)> = json["systems"]
            .as_array()
            .unwrap()
            .iter()
            .zip(json["frames"][0]["times_us"].as_array().unwrap())
            .map(|(s, t)| (format!("{}/{}", s["stage"].as_str().unwrap(), s["name"].as_str().unwrap()), t.clone()))
            .collect();
        let mut expected: Vec<(String, Value)> = [("update", &update), ("fixed", &fixed)]
            .iter()
            .flat_map(|(stage, s)| s.system_timings().map(move |t| (format!("{stage}/{}", t.name()), t.total())))
            .map(|(name, now)| {
                let was = before.iter().find(|(n, _)| *n == name).map_or(Duration::ZERO, |(_, t)| *t);
                let time = spent(&[was], &[now]).remove(0);
                (name, time)
            })
            .collect();
        expected.push(("startup/a".into(), json!(0.0)));
        got.sort_by(|a, b| a.0.cmp(&b.0));
        expected.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(got.len(), 6);
        assert_eq!(got, expected);
    }

    #[test]
    fn a_frame_read_from_the_loops_copy_of_the_totals_is_the_frame_read_from_the_schedules() {
        use archetable_core::{GameLoop, Stage};
        let mut game = GameLoop::new();
        game.add_systems(Stage::Update, (a, b));
        game.add_systems(Stage::LateUpdate, (c,));
        game.keep_system_totals(true);
        let mut history = History::default();
        let names: Vec<String> = game.schedules().map(|(stage, _)| stage.to_string()).collect();
        let each = |game: &GameLoop| -> Vec<Duration> {
            game.schedules().flat_map(|(_, s)| s.system_timings().map(|t| t.total())).collect()
        };
        game.advance(Duration::from_millis(20));
        // The first frame (a fixed step too, so every schedule has its
        // plan) checks the layout on the schedules.
        let (stamps, ns) = game.system_totals().unwrap();
        assert!(!history.sample_copied(1, game.world(), stamps, ns));
        history.sample(1, game.world(), true, || names.iter().zip(game.schedules()).map(|(n, (_, s))| (n.as_str(), s)));
        for frame in 2..=4 {
            let before = each(&game);
            game.advance(Duration::from_millis(20));
            let (stamps, ns) = game.system_totals().unwrap();
            assert!(history.sample_copied(frame, game.world(), stamps, ns), "frame {frame}");
            let got = history.to_json(1);
            assert_eq!(got["frames"][0]["frame"], json!(frame));
            assert_eq!(got["frames"][0]["times_us"], Value::Array(spent(&before, &each(&game))), "frame {frame}");
        }
        // A system added: the copy lists another layout, which the
        // schedules are read for.
        game.add_systems(Stage::Update, (c,));
        game.advance(Duration::from_millis(20));
        let (stamps, ns) = game.system_totals().unwrap();
        assert_eq!(ns.len(), 4);
        assert!(!history.sample_copied(5, game.world(), stamps, ns));
        assert_eq!(history.to_json(1)["frames"][0]["frame"], json!(4));
    }

    #[test]
    fn a_frame_holds_each_systems_time_since_the_last_sample_and_the_ring_the_last_frames() {
        let mut world = World::new();
        let mut history = History::default();
        let mut schedule = Schedule::new();
        schedule.add_systems((a, b));
        schedule.run(&mut world);
        // A system met for the first time counts from its current total.
        history.sample(1, &world, false, || [("update", &schedule)].into_iter());
        let first = history.to_json(FRAMES);
        assert_eq!(first["frames"][0]["times_us"], json!([0.0, 0.0]));
        assert_eq!(first["frames"][0]["entities"], json!(0));

        // Two runs between samples (a frame the inspector slept through):
        // the next frame holds both.
        let before = totals(&schedule);
        schedule.run(&mut world);
        schedule.run(&mut world);
        world.spawn(());
        history.sample(3, &world, false, || [("update", &schedule)].into_iter());
        let after = totals(&schedule);
        let json = history.to_json(FRAMES);
        assert_eq!(frame_numbers(&json["frames"]), [1, 3]);
        assert_eq!(json["frames"][1]["times_us"], Value::Array(spent(&before, &after)));
        assert_eq!(json["frames"][1]["entities"], json!(1));

        // Eleven systems under three stages: the ring widens and keeps the
        // frames it held.
        let mut wide = Schedule::new();
        wide.add_systems((a, b, c));
        let mut last = (totals(&schedule), totals(&wide));
        for frame in 4..4 + FRAMES as u64 + 5 {
            schedule.run(&mut world);
            wide.run(&mut world);
            history.sample(frame, &world, false, || {
                [("update", &schedule), ("one", &wide), ("two", &wide), ("three", &wide)].into_iter()
            });
            let now = (totals(&schedule), totals(&wide));
            if frame > 4 {
                let mut expected = spent(&last.0, &now.0);
                for _ in 0..3 {
                    expected.extend(spent(&last.1, &now.1));
                }
                let got = history.to_json(1);
                assert_eq!(got["frames"][0]["times_us"], Value::Array(expected), "frame {frame}");
            }
            if frame == 4 {
                // The first sample of the wide layout still holds frame 3.
                assert_eq!(history.to_json(2)["frames"][0], json["frames"][1]);
                assert_eq!(history.to_json(1)["frames"][0]["times_us"].as_array().unwrap().len(), 11);
            }
            last = now;
        }
        let all = history.to_json(FRAMES);
        let numbers = frame_numbers(&all["frames"]);
        assert_eq!((numbers.len(), numbers[0], *numbers.last().unwrap()), (FRAMES, 9, FRAMES as u64 + 8));
        assert_eq!(all["systems"].as_array().unwrap().len(), 11);

        // A watch's copy: the frames after 590 that are multiples of 4,
        // written as `schedule.history` writes them.
        let copy = history.after(590, 4);
        let written: Vec<Value> = (0..copy.len()).map(|i| copy.to_json(i)).collect();
        let expected: Vec<Value> = all["frames"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["frame"].as_u64().is_some_and(|n| n > 590 && n % 4 == 0))
            .cloned()
            .collect();
        assert_eq!(frame_numbers(&Value::Array(written.clone())), [592, 596, 600, 604, 608]);
        assert_eq!(written, expected);
    }
}
