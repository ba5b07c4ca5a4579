//! Two peers of the arena on threads, over UDP on 127.0.0.1: the pieces the
//! `p2p` and `hostile` tests share.

use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use archetable_rollback::ggrs::{
    DesyncDetection, Frame, NonBlockingSocket, P2PSession, PlayerType, SessionBuilder, UdpNonBlockingSocket,
};
use archetable_rollback::{
    CheckedSocket, LinkConditions, LossySocket, RollbackConfig, RollbackDriver, RollbackEvent, RollbackStats, Update,
};

use crate::arena::{self, Input};

pub type Config = RollbackConfig<Input>;

/// A free UDP port on this machine (bound and released; the peers bind it
/// right after).
pub fn free_port() -> u16 {
    UdpSocket::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

pub fn local(port: u16) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], port))
}

/// The conditions the issue names: 80 ms one way, 20 ms of jitter, 5%
/// loss, some duplication and reordering.
pub fn bad_link(seed: u64) -> LinkConditions {
    LinkConditions {
        delay: Duration::from_millis(80),
        jitter: Duration::from_millis(20),
        loss: 0.05,
        duplicate: 0.02,
        reorder: 0.05,
        seed,
    }
}

/// A P2P session for player `me` (0 or 1) over `socket`, the other player at `other`.
pub fn session<S: NonBlockingSocket<SocketAddr> + 'static>(
    me: usize,
    other: SocketAddr,
    socket: S,
) -> P2PSession<Config> {
    SessionBuilder::<Config>::new()
        .with_num_players(2)
        .unwrap()
        .with_fps(100)
        .unwrap()
        .with_max_prediction_window(16)
        .with_input_delay(2)
        .with_desync_detection_mode(DesyncDetection::On { interval: 1 })
        // Long enough that a peer starved by a loaded machine is not dropped.
        .with_disconnect_timeout(Duration::from_millis(3000))
        .with_disconnect_notify_delay(Duration::from_millis(1000))
        .add_player(PlayerType::Local, me)
        .unwrap()
        .add_player(PlayerType::Remote(other), 1 - me)
        .unwrap()
        .start_p2p_session(socket)
        .unwrap()
}

/// A UDP socket on `port` behind the lossy wrapper.
pub fn lossy(port: u16, conditions: LinkConditions) -> LossySocket<UdpNonBlockingSocket, SocketAddr> {
    LossySocket::new(UdpNonBlockingSocket::bind_to_port(port).unwrap(), conditions)
}

/// The same, checked.
pub fn checked_lossy(
    port: u16,
    conditions: LinkConditions,
) -> CheckedSocket<LossySocket<UdpNonBlockingSocket, SocketAddr>> {
    CheckedSocket::new(lossy(port, conditions), 2)
}

/// What one peer saw.
#[derive(Debug)]
pub struct PeerRun {
    pub confirmed: Vec<(Frame, u128)>,
    pub events: Vec<RollbackEvent<SocketAddr>>,
    pub stats: RollbackStats,
    pub frame: Frame,
    pub stalls: u32,
    /// Whether this peer confirmed every frame asked for.
    pub finished: bool,
}

/// Runs player `me`'s driver at 100 frames per second until `done` says
/// every peer confirmed `frames` frames (or `deadline` passes), keeping
/// the confirmed checksums.
pub fn run_peer(
    me: usize,
    session: P2PSession<Config>,
    frames: Frame,
    done: Arc<AtomicUsize>,
    peers: usize,
    deadline: Duration,
) -> PeerRun {
    let mut driver: RollbackDriver<Input> = RollbackDriver::new(arena::world(10), arena::schedule(), 100);
    arena::register(&mut driver);
    driver.keep_confirmed_checksums(true);
    driver.start(session).unwrap();
    let start = Instant::now();
    let mut next = start;
    let mut counted = false;
    let mut events = Vec::new();
    let mut stalls = 0;
    while start.elapsed() < deadline {
        let frame = driver.frame();
        match driver.update(|handle, _| arena::script(handle, frame)).unwrap() {
            Update::Stalled => stalls += 1,
            Update::Advanced | Update::Synchronizing | Update::Waiting => {}
        }
        events.extend(driver.drain_events());
        if !counted && driver.confirmed_frame() >= frames {
            counted = true;
            done.fetch_add(1, Ordering::SeqCst);
        }
        if done.load(Ordering::SeqCst) >= peers {
            break;
        }
        next += Duration::from_millis(10);
        if let Some(wait) = next.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
    }
    let _ = me;
    PeerRun {
        confirmed: driver.confirmed_checksums().to_vec(),
        events,
        stats: driver.stats(),
        frame: driver.frame(),
        stalls,
        finished: counted,
    }
}

/// Checks that two peers' confirmed checksums agree at every frame both
/// confirmed; how many frames were compared.
pub fn compare(a: &PeerRun, b: &PeerRun) -> usize {
    let mut compared = 0;
    let mut j = 0;
    for &(frame, checksum) in &a.confirmed {
        while j < b.confirmed.len() && b.confirmed[j].0 < frame {
            j += 1;
        }
        if let Some(&(other_frame, other)) = b.confirmed.get(j)
            && other_frame == frame
        {
            assert_eq!(checksum, other, "confirmed frame {frame} differs between the peers");
            compared += 1;
        }
    }
    compared
}

/// A driver of the arena, set up but not started.
pub fn driver() -> RollbackDriver<Input> {
    let mut driver: RollbackDriver<Input> = RollbackDriver::new(arena::world(10), arena::schedule(), 100);
    arena::register(&mut driver);
    driver
}
