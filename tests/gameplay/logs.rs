//! The engine's warnings, captured per test thread. The `log` facade takes
//! one logger per process and the tests of this binary run side by side, so
//! the logger installed here keeps a thread's warnings only while that
//! thread asked for them (`capture`), and passes every other record on to
//! standard error as the engine would print it without a logger.

use std::cell::RefCell;
use std::sync::Once;

thread_local! {
    /// This thread's warnings since it called `capture`, or `None`.
    static CAPTURED: RefCell<Option<Vec<String>>> = const { RefCell::new(None) };
}

struct PerThread;

impl log::Log for PerThread {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        metadata.level() <= log::Level::Warn
    }

    fn log(&self, record: &log::Record<'_>) {
        // Errors are kept too, marked as such (systems' errors logged by
        // `ResultSystem::log_errors`).
        let text = match record.level() {
            log::Level::Warn => record.args().to_string(),
            log::Level::Error => format!("error: {}", record.args()),
            _ => return,
        };
        let kept = CAPTURED
            .try_with(|captured| match captured.borrow_mut().as_mut() {
                Some(warnings) => {
                    warnings.push(text.clone());
                    true
                }
                None => false,
            })
            .unwrap_or(false);
        if !kept {
            eprintln!("{}: {}", record.level().as_str().to_lowercase(), record.args());
        }
    }

    fn flush(&self) {}
}

/// Installs the logger (once per process) and starts keeping this thread's
/// warnings, from none.
pub fn capture() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        log::set_logger(&PerThread).expect("no other logger in this test binary");
        log::set_max_level(log::LevelFilter::Warn);
    });
    CAPTURED.with(|captured| *captured.borrow_mut() = Some(Vec::new()));
}

/// The warnings this thread logged since `capture`.
pub fn warnings() -> Vec<String> {
    CAPTURED.with(|captured| captured.borrow().clone().expect("`capture` was called on this thread"))
}

/// The warnings this thread logged since `capture` or the last `take`, and
/// keeps capturing. (Its callers test the game loop.)
#[cfg_attr(not(feature = "game-loop"), allow(dead_code))]
pub fn take() -> Vec<String> {
    CAPTURED
        .with(|captured| std::mem::take(captured.borrow_mut().as_mut().expect("`capture` was called on this thread")))
}
