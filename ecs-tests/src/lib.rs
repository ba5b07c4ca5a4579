//! The archetable test suites that need heavy test-only dependencies
//! (proptest); the tests are in `tests/`. Nothing here is
//! published.
