//! The archetable compile-time checks; the cases are in `tests/ui/`.
//! Nothing here is published.
