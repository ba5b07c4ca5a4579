//! States: a user enum whose current value lives in the world, changed
//! only at the game loop's transition point, with systems that run on
//! entering and leaving each value.

use std::any::{type_name, Any, TypeId};
use std::fmt::Debug;
use std::hash::Hash;
use std::ops::Deref;

use crate::schedule::Condition;
use crate::world::World;

/// A type whose values are the states of a game: the menu, playing, game
/// over. Derive it (`#[derive(States)]`, next to `Clone, PartialEq, Eq,
/// Hash, Debug`) on an enum, then register it with
/// [`GameLoop::add_state`](crate::GameLoop::add_state).
///
/// ```
/// use archetable::States;
///
/// #[derive(States, Clone, Copy, PartialEq, Eq, Hash, Debug)]
/// enum Screen { Menu, Playing, GameOver }
/// ```
pub trait States: Clone + Eq + Hash + Debug + Send + Sync + 'static {}

/// The current value of state `S`: a resource that
/// [`GameLoop::add_state`](crate::GameLoop::add_state) inserts. Read it
/// with `Res<State<S>>`; change it through [`NextState`].
///
/// ```
/// use archetable::prelude::*;
///
/// #[derive(States, Clone, Copy, PartialEq, Eq, Hash, Debug)]
/// enum Screen { Menu, Playing }
///
/// let mut game = GameLoop::new();
/// game.add_state(Screen::Menu);
/// assert_eq!(*game.world().resource::<State<Screen>>().get(), Screen::Menu);
/// assert!(*game.world().resource::<State<Screen>>() == Screen::Menu);
/// ```
///
/// With the `serde` feature, `State<S>` is `Serialize` and `Deserialize`
/// when `S` is (as its value alone): register it for saves with
/// `world.register_serde_state::<S>(name)`, and resume a loaded game with
/// [`GameLoop::resume`](crate::GameLoop::resume).
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(transparent))]
pub struct State<S: States> {
    current: S,
}

impl<S: States> State<S> {
    /// The current state.
    #[inline]
    pub fn get(&self) -> &S {
        &self.current
    }
}

impl<S: States> Deref for State<S> {
    type Target = S;

    fn deref(&self) -> &S {
        &self.current
    }
}

impl<S: States> PartialEq<S> for State<S> {
    fn eq(&self, other: &S) -> bool {
        self.current == *other
    }
}

/// Whether a [`GameLoop`](crate::GameLoop)'s startup ran over this world: a
/// resource the loop inserts (false) and sets at
/// [`startup`](crate::GameLoop::startup). Saves keep it (the serde
/// registry knows it as `"LoopStarted"`), so that
/// [`GameLoop::resume`](crate::GameLoop::resume) tells a save made before
/// the first frame (an autosave at level start), which resumes like that
/// first frame (startup, then the states entered), from one made later.
///
/// ```
/// use archetable::prelude::*;
/// use archetable::LoopStarted;
///
/// let mut game = GameLoop::new();
/// assert!(!game.world().resource::<LoopStarted>().get());
/// game.startup();
/// assert!(game.world().resource::<LoopStarted>().get());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct LoopStarted(pub(crate) bool);

impl LoopStarted {
    /// Whether the loop's startup ran.
    #[inline]
    pub fn get(&self) -> bool {
        self.0
    }
}

/// A request to change state `S`: a resource that
/// [`GameLoop::add_state`](crate::GameLoop::add_state) inserts. Systems
/// call [`set`](NextState::set) through `ResMut<NextState<S>>`; the game
/// loop applies the request at its transition point, right after the
/// `update` stage (see [`GameLoop`](crate::GameLoop)).
///
/// The last request of a frame wins. A request for the state the game is
/// already in does nothing: no `on_exit`, no `on_enter`.
///
/// ```
/// use archetable::prelude::*;
///
/// #[derive(States, Clone, Copy, PartialEq, Eq, Hash, Debug)]
/// enum Screen { Menu, Playing }
///
/// fn start(mut next: ResMut<NextState<Screen>>) {
///     next.set(Screen::Playing);
/// }
///
/// let mut game = GameLoop::new();
/// game.add_state(Screen::Menu);
/// game.add_system(Stage::Update, start);
/// game.advance(std::time::Duration::from_millis(16));
/// assert_eq!(game.state::<Screen>(), Some(&Screen::Playing));
/// ```
///
/// With the `serde` feature, `NextState<S>` is `Serialize` and
/// `Deserialize` when `S` is (as the pending value, or none), so a save
/// keeps a request made after the transition point of its frame.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(transparent))]
pub struct NextState<S: States> {
    next: Option<S>,
}

impl<S: States> Default for NextState<S> {
    fn default() -> Self {
        NextState { next: None }
    }
}

impl<S: States> NextState<S> {
    /// Asks for a change to `state` at the next transition point, replacing
    /// any earlier request.
    pub fn set(&mut self, state: S) {
        self.next = Some(state);
    }

    /// The state asked for, if any.
    pub fn pending(&self) -> Option<&S> {
        self.next.as_ref()
    }

    /// Withdraws the request.
    pub fn reset(&mut self) {
        self.next = None;
    }

    fn take(&mut self) -> Option<S> {
        self.next.take()
    }
}

/// A run condition that holds while state `S` is `state`: use it with
/// [`SystemConfig::run_if`](crate::SystemConfig::run_if) or
/// [`IntoSystems::run_if`](crate::IntoSystems::run_if). False when the
/// world has no `State<S>`. A [`Condition`]: clone it (or pass `&playing`)
/// to gate many systems, and combine it with
/// [`and`](Condition::and), [`or`](Condition::or) and
/// [`not`](Condition::not).
///
/// ```
/// use archetable::prelude::*;
///
/// #[derive(States, Clone, Copy, PartialEq, Eq, Hash, Debug)]
/// enum Screen { Menu, Playing }
/// #[derive(Default)] struct Ticks(u32);
///
/// let mut game = GameLoop::new();
/// game.add_state(Screen::Menu);
/// game.world_mut().init_resource::<Ticks>();
/// let playing = in_state(Screen::Playing);
/// game.add_system(Stage::Update, |mut t: ResMut<Ticks>| t.0 += 1).run_if(&playing);
/// game.add_system(Stage::Update, |mut t: ResMut<Ticks>| t.0 += 10).run_if(playing.not());
/// game.advance(std::time::Duration::from_millis(16));
/// assert_eq!(game.world().resource::<Ticks>().0, 10);
/// ```
pub fn in_state<S: States>(state: S) -> Condition {
    let name = format!("in_state({state:?})");
    Condition::new(move |world: &World| {
        world.get_resource::<State<S>>().is_some_and(|current| current.current == state)
    })
    .named(name)
}

/// What one state type's transition asks the game loop to run: indices
/// into the loop's state schedules.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Pending {
    pub exit: Option<usize>,
    pub enter: Option<usize>,
}

/// The type-erased transition logic of one state type.
pub(super) trait StateDriver: Send + Sync {
    fn state_type(&self) -> TypeId;

    fn as_any_mut(&mut self) -> &mut dyn Any;

    /// Whether the state's first value was entered (or, for a resumed
    /// game, is taken as entered).
    fn entered(&self) -> bool;

    /// Takes the pending change of state, if any, and says which schedules
    /// to run: the first call enters the current state; later calls apply
    /// a `NextState` request for another state. Call
    /// [`StateDriver::commit`] between the exit and the enter schedule.
    fn begin(&mut self, world: &mut World) -> Option<Pending>;

    /// Makes the state asked for by the last `begin` the current one.
    fn commit(&mut self, world: &mut World);

    /// Its `on_enter` schedules, then its `on_exit` ones, each in the
    /// order first added: a label (`on_enter(Playing)`) and the index.
    fn schedules(&self) -> Vec<(String, usize)>;
}

/// The transitions of state type `S`: its `on_enter` and `on_exit`
/// schedules, by value.
pub(super) struct Driver<S: States> {
    /// Whether the state's first value was entered.
    entered: bool,
    on_enter: Vec<(S, usize)>,
    on_exit: Vec<(S, usize)>,
    /// The state being entered, between `begin` and `commit`.
    next: Option<S>,
}

impl<S: States> Default for Driver<S> {
    fn default() -> Self {
        Driver { entered: false, on_enter: Vec::new(), on_exit: Vec::new(), next: None }
    }
}

/// Which side of a transition a schedule runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Side {
    Enter,
    Exit,
}

impl<S: States> Driver<S> {
    /// Takes the current value as entered: a resumed game is in it already.
    pub fn resume(&mut self) {
        self.entered = true;
    }

    /// The schedule index of (`state`, `side`), if it has one.
    pub fn schedule(&self, state: &S, side: Side) -> Option<usize> {
        let list = match side {
            Side::Enter => &self.on_enter,
            Side::Exit => &self.on_exit,
        };
        list.iter().find(|(s, _)| s == state).map(|&(_, i)| i)
    }

    /// Records that (`state`, `side`) runs schedule `index`.
    pub fn set_schedule(&mut self, state: S, side: Side, index: usize) {
        match side {
            Side::Enter => self.on_enter.push((state, index)),
            Side::Exit => self.on_exit.push((state, index)),
        }
    }
}

impl<S: States> StateDriver for Driver<S> {
    fn state_type(&self) -> TypeId {
        TypeId::of::<S>()
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }

    fn entered(&self) -> bool {
        self.entered
    }

    fn schedules(&self) -> Vec<(String, usize)> {
        let enter = self.on_enter.iter().map(|(state, i)| (format!("on_enter({state:?})"), *i));
        let exit = self.on_exit.iter().map(|(state, i)| (format!("on_exit({state:?})"), *i));
        enter.chain(exit).collect()
    }

    fn begin(&mut self, world: &mut World) -> Option<Pending> {
        let Some(state) = world.get_resource::<State<S>>() else {
            panic!(
                "the game loop has on_enter/on_exit systems for state `{}` but its world has no `State<{0}>`: \
                 call `GameLoop::add_state` with the initial state",
                type_name::<S>()
            );
        };
        let current = state.current.clone();
        if !self.entered {
            self.entered = true;
            return Some(Pending { exit: None, enter: self.schedule(&current, Side::Enter) });
        }
        let next = world.get_resource_mut::<NextState<S>>()?.take()?;
        if next == current {
            return None;
        }
        let pending = Pending { exit: self.schedule(&current, Side::Exit), enter: self.schedule(&next, Side::Enter) };
        self.next = Some(next);
        Some(pending)
    }

    fn commit(&mut self, world: &mut World) {
        let Some(next) = self.next.take() else { return };
        match world.get_resource_mut::<State<S>>() {
            Some(state) => state.current = next,
            None => {
                world.insert_resource(State { current: next });
            }
        }
    }
}

/// `State<S>` holding `state`.
pub(super) fn state<S: States>(state: S) -> State<S> {
    State { current: state }
}
