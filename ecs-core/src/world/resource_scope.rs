//! `World::resource_scope`: a resource taken out of the world for the
//! length of a closure, so the closure can have both the resource and the
//! rest of the world mutably.

use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

use crate::component::change::{ChangeMark, Mut, RunTicks};
use crate::storage::resource::Resource;
use crate::world::resources::missing_resource;
use crate::world::World;

impl World {
    /// Takes the `R` resource out, calls `f` with the rest of the world and
    /// the resource, then puts the resource back, and returns what `f`
    /// returned. A write through the [`Mut`] marks the resource changed,
    /// as a write through [`ResMut`](crate::ResMut) does.
    ///
    /// While `f` runs the world has no `R`
    /// ([`World::contains_resource`] is false); if `f` inserts one, the
    /// scoped value replaces it at the end and the inserted one is dropped.
    /// If `f` panics, the resource is put back before the panic goes on.
    ///
    /// ```
    /// use archetable::prelude::*;
    ///
    /// #[derive(Component)] struct Hp(u32);
    /// struct Spawned(Vec<Entity>);
    ///
    /// let mut world = World::new();
    /// world.insert_resource(Spawned(Vec::new()));
    /// world.resource_scope(|world, mut spawned: Mut<Spawned>| {
    ///     for hp in 1..=3 {
    ///         spawned.0.push(world.spawn(Hp(hp)));
    ///     }
    /// });
    /// assert_eq!(world.resource::<Spawned>().0.len(), 3);
    /// ```
    ///
    /// # Panics
    /// If the world has no `R`; [`World::try_resource_scope`] returns
    /// `None` instead.
    #[track_caller]
    pub fn resource_scope<R: Resource, U>(&mut self, f: impl FnOnce(&mut World, Mut<'_, R>) -> U) -> U {
        if !self.contains_resource::<R>() {
            missing_resource::<R>();
        }
        self.try_resource_scope(f).unwrap_or_else(|| unreachable!("checked above"))
    }

    /// [`World::resource_scope`], or `None` without calling `f` if the
    /// world has no `R`.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// struct Score(u32);
    /// let mut world = World::new();
    /// assert_eq!(world.try_resource_scope(|_, score: Mut<Score>| score.0), None);
    /// world.insert_resource(Score(7));
    /// assert_eq!(world.try_resource_scope(|_, score: Mut<Score>| score.0), Some(7));
    /// ```
    pub fn try_resource_scope<R: Resource, U>(&mut self, f: impl FnOnce(&mut World, Mut<'_, R>) -> U) -> Option<U> {
        let (mut value, mut ticks) = self.resources_mut().remove_boxed::<R>()?;
        // A one-off reader: writes are stamped now.
        let run = RunTicks { last_run: self.one_off_ticks().last_run, this_run: self.change_tick() };
        let result = catch_unwind(AssertUnwindSafe(|| {
            let mark = ChangeMark::new(Some(&mut ticks.changed), ticks.added, run);
            f(self, Mut::new(&mut *value, mark))
        }));
        self.resources_mut().insert_boxed(value, ticks);
        match result {
            Ok(out) => Some(out),
            Err(payload) => resume_unwind(payload),
        }
    }
}
