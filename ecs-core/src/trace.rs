//! Spans for frame profiles: with the `tracing` feature, a span per
//! schedule run, system run, game-loop frame and stage, and observer run,
//! which any `tracing` subscriber (a Chrome trace, Tracy, a log) shows.
//! Without the feature the spans are zero-sized and cost nothing.

/// The guard of an entered span; the span ends when it is dropped.
#[cfg(feature = "tracing")]
pub(crate) type SpanGuard = tracing::span::EnteredSpan;

/// Without the `tracing` feature: nothing.
#[cfg(not(feature = "tracing"))]
pub(crate) struct SpanGuard;

/// Enters a span of kind `$kind` (a literal: `"system"`, `"stage"`, ...)
/// named `$name` (anything `Display`), at the `info` level, until the
/// returned guard drops. Without the `tracing` feature, `$name` is not
/// evaluated.
macro_rules! span {
    ($kind:literal, $name:expr) => {{
        #[cfg(feature = "tracing")]
        let guard: $crate::trace::SpanGuard = ::tracing::info_span!($kind, name = %$name).entered();
        #[cfg(not(feature = "tracing"))]
        let guard = $crate::trace::SpanGuard;
        guard
    }};
}

pub(crate) use span;

#[cfg(all(test, feature = "tracing", feature = "game-loop", feature = "observers"))]
mod tests {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    use tracing::field::{Field, Visit};
    use tracing::span::{Attributes, Id, Record};
    use tracing::{Event, Metadata, Subscriber};

    use crate::{GameLoop, Stage};

    /// Records `kind name` for every span opened.
    #[derive(Clone, Default)]
    struct Spans {
        opened: Arc<Mutex<Vec<String>>>,
        next: Arc<AtomicU64>,
    }

    struct NameField(String);

    impl Visit for NameField {
        fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
            if field.name() == "name" {
                self.0 = format!("{value:?}");
            }
        }
    }

    impl Subscriber for Spans {
        fn enabled(&self, _: &Metadata<'_>) -> bool {
            true
        }
        fn new_span(&self, span: &Attributes<'_>) -> Id {
            let mut name = NameField(String::new());
            span.record(&mut name);
            self.opened.lock().unwrap().push(format!("{} {}", span.metadata().name(), name.0));
            Id::from_u64(self.next.fetch_add(1, Ordering::Relaxed) + 1)
        }
        fn record(&self, _: &Id, _: &Record<'_>) {}
        fn record_follows_from(&self, _: &Id, _: &Id) {}
        fn event(&self, _: &Event<'_>) {}
        fn enter(&self, _: &Id) {}
        fn exit(&self, _: &Id) {}
    }

    fn movement() {}
    fn physics() {}
    struct Ping;
    fn on_ping(_: crate::Trigger<Ping>) {}

    #[test]
    fn a_frame_shows_its_stages_schedules_and_systems() {
        let spans = Spans::default();
        tracing::subscriber::with_default(spans.clone(), || {
            let mut game = GameLoop::single_threaded();
            game.add_system(Stage::Update, movement);
            game.add_system(Stage::FixedUpdate, physics);
            game.set_fixed_step(Duration::from_millis(100));
            game.advance(Duration::from_millis(100));
            game.world_mut().observe(on_ping);
            game.world_mut().trigger(Ping);
        });
        let opened = spans.opened.lock().unwrap().clone();
        let want = [
            "stage startup",
            "schedule run 0",
            "frame 100ms",
            "stage fixed_update",
            "schedule run 0",
            "system physics",
            "stage update",
            "schedule run 0",
            "system movement",
            "stage late_update",
            "schedule run 0",
            "observer on_ping",
        ];
        assert_eq!(opened, want);
    }
}
