//! The ggrs configuration a driver's sessions use: the game's input type,
//! the peers' address type, and the saved state ggrs hands back on a load
//! (only the frame number: the snapshots themselves live in the driver).

use std::fmt::Debug;
use std::hash::Hash;
use std::marker::PhantomData;
use std::net::SocketAddr;

use ggrs::{Frame, P2PSession, PredictRepeatLast, SpectatorSession, SyncTestSession};
use serde::de::DeserializeOwned;
use serde::Serialize;

/// What a game's per-player, per-frame input must be: small, plain,
/// comparable, and serializable for the wire (ggrs sends it with bincode).
pub trait GameInput: Copy + PartialEq + Default + Serialize + DeserializeOwned + Send + Sync + 'static {}

impl<T: Copy + PartialEq + Default + Serialize + DeserializeOwned + Send + Sync + 'static> GameInput for T {}

/// What a peer's address must be (`SocketAddr` for UDP).
pub trait PeerAddress: Clone + PartialEq + Eq + Hash + Debug + Send + Sync + 'static {}

impl<T: Clone + PartialEq + Eq + Hash + Debug + Send + Sync + 'static> PeerAddress for T {}

/// The [`ggrs::Config`] of a driver's sessions: input `I`, addresses `A`.
/// Build sessions with `ggrs::SessionBuilder::<RollbackConfig<I>>::new()`.
pub struct RollbackConfig<I, A = SocketAddr>(PhantomData<fn() -> (I, A)>);

impl<I: GameInput, A: PeerAddress> ggrs::Config for RollbackConfig<I, A> {
    type Input = I;
    type InputPredictor = PredictRepeatLast;
    type State = Frame;
    type Address = A;
}

/// The ggrs session a driver runs: a sync test, a peer-to-peer game, or a
/// spectator of one.
pub enum Session<I: GameInput, A: PeerAddress = SocketAddr> {
    /// Every player local; each frame is rolled back and resimulated
    /// `check_distance` frames, and the checksums compared.
    SyncTest(Box<SyncTestSession<RollbackConfig<I, A>>>),
    /// Players on other machines, inputs exchanged over a socket.
    P2P(Box<P2PSession<RollbackConfig<I, A>>>),
    /// Watching a host's confirmed inputs, never rolling back.
    Spectator(Box<SpectatorSession<RollbackConfig<I, A>>>),
}

impl<I: GameInput, A: PeerAddress> From<SyncTestSession<RollbackConfig<I, A>>> for Session<I, A> {
    fn from(session: SyncTestSession<RollbackConfig<I, A>>) -> Self {
        Session::SyncTest(Box::new(session))
    }
}

impl<I: GameInput, A: PeerAddress> From<P2PSession<RollbackConfig<I, A>>> for Session<I, A> {
    fn from(session: P2PSession<RollbackConfig<I, A>>) -> Self {
        Session::P2P(Box::new(session))
    }
}

impl<I: GameInput, A: PeerAddress> From<SpectatorSession<RollbackConfig<I, A>>> for Session<I, A> {
    fn from(session: SpectatorSession<RollbackConfig<I, A>>) -> Self {
        Session::Spectator(Box::new(session))
    }
}

impl<I: GameInput, A: PeerAddress> Session<I, A> {
    /// How many frames back a snapshot may be asked for.
    pub(crate) fn depth(&self) -> usize {
        match self {
            Session::SyncTest(s) => s.max_prediction().max(s.check_distance()),
            Session::P2P(s) => s.max_prediction(),
            Session::Spectator(_) => 1,
        }
    }
}
