//! `Single` and `Populated`: query parameters whose system is skipped for
//! a run when the query does not have what it needs (exactly one entity,
//! or at least one).

use std::fmt;
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};

use crate::names::short_type_name;
use crate::query::{QueryData, QueryFilter, QueryState};
use crate::system::access::AccessConflict;
use crate::system::param::{SkippedSystem, SystemMeta, SystemParam};
use crate::system::query::{Query, QuerySingleError};
use crate::world::World;

/// The one entity that matches `D` and passes `F`, fetched directly: the
/// player, the camera, the level's only goal.
///
/// When no entity or more than one matches, the system does not run that
/// time: it is *skipped*, not panicked. A schedule counts each skip
/// ([`Schedule::skipped_systems`](crate::Schedule::skipped_systems),
/// [`SystemTiming::skipped`](crate::SystemTiming::skipped)) and warns the
/// first time a system is skipped for a reason
/// ([`Schedule::set_warn_on_skipped_systems`](crate::Schedule::set_warn_on_skipped_systems)).
/// A skipped run does not count as a run for change detection: the next
/// run still sees the changes since the last one that ran.
///
/// `Option<Single<D, F>>` runs with `None` when nothing matches, and is
/// skipped only when several entities do.
///
/// ```
/// use archetable::prelude::*;
///
/// #[derive(Component)] struct Player;
/// #[derive(Component, Debug, PartialEq)] struct Position(i32);
/// #[derive(Component, Debug, PartialEq)] struct Camera(i32);
///
/// fn follow(player: Single<&Position, With<Player>>, mut camera: Single<&mut Camera>) {
///     camera.0 = player.0;
/// }
///
/// let mut world = World::new();
/// let camera = world.spawn(Camera(0));
/// let mut schedule = Schedule::new();
/// schedule.add_system(follow);
/// schedule.run(&mut world); // no player yet: skipped
/// assert_eq!(schedule.skipped_systems().len(), 1);
///
/// world.spawn((Player, Position(7)));
/// schedule.run(&mut world);
/// assert!(schedule.skipped_systems().is_empty());
/// assert_eq!(world.get::<Camera>(camera), Some(&Camera(7)));
/// ```
///
/// Its access is checked as a [`Query`]'s: `Single<&mut Camera>` beside
/// `Query<&Camera>` in one system is `error[E0002]`.
pub struct Single<'w, D: QueryData, F: QueryFilter = ()> {
    item: D::Item<'w>,
    _filter: PhantomData<fn() -> F>,
}

impl<'w, D: QueryData, F: QueryFilter> Single<'w, D, F> {
    /// The item itself, for the rest of the borrow.
    ///
    /// ```
    /// # use archetable::prelude::*;
    /// # #[derive(Component)] struct Score(u32);
    /// fn read(score: Single<&Score>) {
    ///     let score: &Score = score.into_inner();
    ///     assert_eq!(score.0, 3);
    /// }
    /// # let mut world = World::new();
    /// # world.spawn(Score(3));
    /// # world.run_system_once(read);
    /// ```
    pub fn into_inner(self) -> D::Item<'w> {
        self.item
    }
}

impl<'w, D: QueryData, F: QueryFilter> Deref for Single<'w, D, F> {
    type Target = D::Item<'w>;
    #[inline]
    fn deref(&self) -> &Self::Target {
        &self.item
    }
}

impl<D: QueryData, F: QueryFilter> DerefMut for Single<'_, D, F> {
    #[inline]
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.item
    }
}

impl<'w, D: QueryData, F: QueryFilter> fmt::Debug for Single<'w, D, F>
where
    D::Item<'w>: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Single").field(&self.item).finish()
    }
}

/// Records the query's access under the parameter's own name, as `Query`
/// does.
fn init_query<D: QueryData + 'static, F: QueryFilter + 'static, P>(
    world: &mut World,
    meta: &mut SystemMeta,
) -> Result<QueryState<D, F>, AccessConflict> {
    let state = QueryState::<D, F>::new(world);
    let (access, condition) = state.access(world.components());
    meta.add_query(world.components(), std::any::type_name::<P>(), &access, condition)?;
    Ok(state)
}

/// How many matches a parameter accepts: whether none, and whether more
/// than one, let its system run.
#[derive(Clone, Copy)]
struct Accepts {
    none: bool,
    many: bool,
}

/// The check of `validate_param` for a parameter `P` over `state`: brings
/// the state up to date, counts the matches (no further than two), and
/// skips the system when `accepts` refuses the count.
///
/// # Safety
/// As for `SystemParam::validate_param`: the state was built for `world`,
/// and nothing running at the same time conflicts with its access.
#[inline]
unsafe fn check<P, D: QueryData, F: QueryFilter>(
    state: &mut QueryState<D, F>,
    world: &World,
    meta: &SystemMeta,
    accepts: Accepts,
) -> Result<(), SkippedSystem> {
    state.update(world);
    state.set_ticks(meta.ticks());
    // The items are dropped at once and nothing is written through them.
    // SAFETY: updated above; the access is the caller's.
    let matched = unsafe { state.iter_unchecked(world) }.take(2).count();
    match matched {
        0 if !accepts.none => Err(SkippedSystem::new::<P>(meta, QuerySingleError::NoEntities)),
        2 if !accepts.many => Err(SkippedSystem::new::<P>(meta, QuerySingleError::MultipleEntities)),
        _ => Ok(()),
    }
}

/// The single item of `state`, brought up to date, or why there is none.
///
/// # Safety
/// As for `SystemParam::get_param`.
#[inline]
unsafe fn fetch_single<'w, D: QueryData, F: QueryFilter>(
    state: &mut QueryState<D, F>,
    world: &'w World,
    meta: &SystemMeta,
) -> Result<D::Item<'w>, QuerySingleError> {
    state.update(world);
    state.set_ticks(meta.ticks());
    // SAFETY: updated above; the access is the caller's.
    let mut iter = unsafe { state.iter_unchecked(world) };
    let first = iter.next().ok_or(QuerySingleError::NoEntities)?;
    match iter.next() {
        None => Ok(first),
        Some(_) => Err(QuerySingleError::MultipleEntities),
    }
}

#[cold]
#[inline(never)]
fn not_validated(param: &str, system: &str, reason: QuerySingleError) -> ! {
    panic!(
        "`{}` of system `{system}` fetched without its check: {reason} (a runner must call \
         `SystemParam::validate_param` first and skip the system when it says no)",
        short_type_name(param)
    )
}

// SAFETY: the query's reads and writes, and the archetypes it can visit,
// are recorded as for `Query`; both steps borrow only through the query.
unsafe impl<D: QueryData + 'static, F: QueryFilter + 'static> SystemParam for Single<'_, D, F> {
    type State = QueryState<D, F>;
    type Item<'w, 's> = Single<'w, D, F>;

    fn init_state(world: &mut World, meta: &mut SystemMeta) -> Result<Self::State, AccessConflict> {
        init_query::<D, F, Self>(world, meta)
    }

    #[inline]
    unsafe fn validate_param(state: &mut Self::State, world: &World, meta: &SystemMeta) -> Result<(), SkippedSystem> {
        // SAFETY: the caller's.
        unsafe { check::<Self, D, F>(state, world, meta, Accepts { none: false, many: false }) }
    }

    #[inline]
    unsafe fn get_param<'w, 's>(
        state: &'s mut Self::State,
        world: &'w World,
        meta: &'s SystemMeta,
    ) -> Single<'w, D, F> {
        // SAFETY: the caller's.
        match unsafe { fetch_single(state, world, meta) } {
            Ok(item) => Single { item, _filter: PhantomData },
            Err(reason) => not_validated(std::any::type_name::<Self>(), meta.name(), reason),
        }
    }
}

// SAFETY: as for `Single<D, F>`.
unsafe impl<D: QueryData + 'static, F: QueryFilter + 'static> SystemParam for Option<Single<'_, D, F>> {
    type State = QueryState<D, F>;
    type Item<'w, 's> = Option<Single<'w, D, F>>;

    fn init_state(world: &mut World, meta: &mut SystemMeta) -> Result<Self::State, AccessConflict> {
        init_query::<D, F, Self>(world, meta)
    }

    #[inline]
    unsafe fn validate_param(state: &mut Self::State, world: &World, meta: &SystemMeta) -> Result<(), SkippedSystem> {
        // SAFETY: the caller's.
        unsafe { check::<Self, D, F>(state, world, meta, Accepts { none: true, many: false }) }
    }

    #[inline]
    unsafe fn get_param<'w, 's>(
        state: &'s mut Self::State,
        world: &'w World,
        meta: &'s SystemMeta,
    ) -> Option<Single<'w, D, F>> {
        // SAFETY: the caller's.
        match unsafe { fetch_single(state, world, meta) } {
            Ok(item) => Some(Single { item, _filter: PhantomData }),
            Err(QuerySingleError::NoEntities) => None,
            Err(reason) => not_validated(std::any::type_name::<Self>(), meta.name(), reason),
        }
    }
}

/// A [`Query`] whose system is skipped for a run while it matches no
/// entity: for systems with nothing to do without one (enemies to steer,
/// pickups to collect). Everything else is a `Query`'s: it dereferences to
/// one.
///
/// Skips are counted and warned about as [`Single`]'s are.
///
/// ```
/// use archetable::prelude::*;
///
/// #[derive(Component)] struct Enemy;
/// #[derive(Default)] struct Waves(u32);
///
/// fn next_wave(enemies: Populated<Entity, With<Enemy>>, mut waves: ResMut<Waves>) {
///     waves.0 += enemies.iter().count() as u32;
/// }
///
/// let mut world = World::new();
/// world.init_resource::<Waves>();
/// let mut schedule = Schedule::new();
/// schedule.add_system(next_wave);
/// schedule.run(&mut world); // no enemy: skipped
/// assert_eq!(schedule.skipped_systems()[0].system, "next_wave");
/// world.spawn(Enemy);
/// world.spawn(Enemy);
/// schedule.run(&mut world);
/// assert_eq!(world.resource::<Waves>().0, 2);
/// ```
pub struct Populated<'w, 's, D: QueryData, F: QueryFilter = ()> {
    query: Query<'w, 's, D, F>,
}

impl<'w, 's, D: QueryData, F: QueryFilter> Populated<'w, 's, D, F> {
    /// The query itself.
    pub fn into_inner(self) -> Query<'w, 's, D, F> {
        self.query
    }
}

impl<'w, 's, D: QueryData, F: QueryFilter> Deref for Populated<'w, 's, D, F> {
    type Target = Query<'w, 's, D, F>;
    #[inline]
    fn deref(&self) -> &Self::Target {
        &self.query
    }
}

impl<D: QueryData, F: QueryFilter> DerefMut for Populated<'_, '_, D, F> {
    #[inline]
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.query
    }
}

// SAFETY: exactly a `Query<D, F>`'s access, recorded as `Query` does; the
// check borrows only through the query.
unsafe impl<D: QueryData + 'static, F: QueryFilter + 'static> SystemParam for Populated<'_, '_, D, F> {
    type State = QueryState<D, F>;
    type Item<'w, 's> = Populated<'w, 's, D, F>;

    fn init_state(world: &mut World, meta: &mut SystemMeta) -> Result<Self::State, AccessConflict> {
        init_query::<D, F, Self>(world, meta)
    }

    #[inline]
    unsafe fn validate_param(state: &mut Self::State, world: &World, meta: &SystemMeta) -> Result<(), SkippedSystem> {
        // SAFETY: the caller's.
        unsafe { check::<Self, D, F>(state, world, meta, Accepts { none: false, many: true }) }
    }

    #[inline]
    unsafe fn get_param<'w, 's>(
        state: &'s mut Self::State,
        world: &'w World,
        meta: &'s SystemMeta,
    ) -> Populated<'w, 's, D, F> {
        // SAFETY: the caller's, forwarded.
        Populated { query: unsafe { <Query<'w, 's, D, F> as SystemParam>::get_param(state, world, meta) } }
    }
}
