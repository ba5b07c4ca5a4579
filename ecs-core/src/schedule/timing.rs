//! Per-system timings, for the "why is this frame slow" question.

use std::fmt;
use std::time::Duration;

/// How long one system took: its last run, and the mean over all runs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SystemTiming {
    pub(crate) name: String,
    pub(crate) runs: u64,
    pub(crate) skipped: u64,
    pub(crate) last: Duration,
    pub(crate) total: Duration,
}

impl SystemTiming {
    pub(crate) fn new(name: &str) -> Self {
        SystemTiming { name: name.to_string(), ..Default::default() }
    }

    pub(crate) fn record(&mut self, elapsed: Duration) {
        self.runs += 1;
        self.last = elapsed;
        self.total += elapsed;
    }

    /// The system's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// How many times the system was started, skipped runs included.
    pub fn runs(&self) -> u64 {
        self.runs
    }

    /// How many of those runs were skipped: a [`Single`](crate::Single)
    /// found no entity or several, a [`Populated`](crate::Populated) none
    /// (see [`Schedule::skipped_systems`](crate::Schedule::skipped_systems)).
    pub fn skipped(&self) -> u64 {
        self.skipped
    }

    /// The duration of its last run.
    pub fn last(&self) -> Duration {
        self.last
    }

    /// The mean duration of its runs (zero before the first).
    pub fn mean(&self) -> Duration {
        match u32::try_from(self.runs) {
            Ok(0) => Duration::ZERO,
            Ok(runs) => self.total / runs,
            Err(_) => Duration::from_secs_f64(self.total.as_secs_f64() / self.runs as f64),
        }
    }

    /// The total time spent in it.
    pub fn total(&self) -> Duration {
        self.total
    }
}

/// The timings of a schedule's systems in run order, printable as a table.
#[derive(Clone, Debug, Default)]
pub struct Timings(pub(crate) Vec<SystemTiming>);

impl Timings {
    /// The systems' timings, in run order.
    pub fn iter(&self) -> impl Iterator<Item = &SystemTiming> {
        self.0.iter()
    }

    /// The timing of the system called `name`.
    pub fn get(&self, name: &str) -> Option<&SystemTiming> {
        self.0.iter().find(|t| t.name == name)
    }
}

impl fmt::Display for Timings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let width = self.0.iter().map(|t| t.name.len()).max().unwrap_or(0).max("system".len());
        writeln!(f, "{:<width$}  {:>8}  {:>12}  {:>12}", "system", "runs", "last", "mean")?;
        for t in &self.0 {
            writeln!(
                f,
                "{:<width$}  {:>8}  {:>12}  {:>12}",
                t.name,
                t.runs,
                format!("{:.1?}", t.last),
                format!("{:.1?}", t.mean())
            )?;
        }
        Ok(())
    }
}
