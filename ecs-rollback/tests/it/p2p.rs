//! Two peers of the arena over a bad loopback link, a peer that leaves, and
//! a spectator.

use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use std::time::Duration;

use archetable_rollback::ggrs::UdpNonBlockingSocket;
use archetable_rollback::{LinkConditions, RollbackEvent};

use crate::arena::{Pos, Ship};
use crate::net::{self, bad_link, checked_lossy, free_port, local, lossy, run_peer, session};

#[test]
fn two_peers_over_a_lossy_link_agree_at_every_confirmed_frame() {
    let (pa, pb) = (free_port(), free_port());
    let done = Arc::new(AtomicUsize::new(0));
    let frames = 2000;
    let deadline = Duration::from_secs(120);
    let peer = |me: usize, port: u16, other: u16, seed: u64| {
        let done = done.clone();
        std::thread::spawn(move || {
            let session = session(me, local(other), checked_lossy(port, bad_link(seed)));
            run_peer(me, session, frames, done, 2, deadline)
        })
    };
    let a = peer(0, pa, pb, 1);
    let b = peer(1, pb, pa, 2);
    let (a, b) = (a.join().unwrap(), b.join().unwrap());
    let compared = net::compare(&a, &b);
    println!(
        "p2p: compared {compared} confirmed frames; rollbacks {} / {}, deepest {} / {}, resimulated {} / {}, stalls {} / {}",
        a.stats.rollbacks,
        b.stats.rollbacks,
        a.stats.deepest_rollback,
        b.stats.deepest_rollback,
        a.stats.resimulated_steps,
        b.stats.resimulated_steps,
        a.stalls,
        b.stalls
    );
    assert!(compared >= frames as usize, "only {compared} frames compared (a at {}, b at {})", a.frame, b.frame);
    assert!(a.stats.rollbacks > 0 && b.stats.rollbacks > 0);
    for run in [&a, &b] {
        assert!(!run.events.iter().any(|e| matches!(e, RollbackEvent::Desync { .. })), "{:?}", run.events);
        assert!(!run.events.iter().any(|e| matches!(e, RollbackEvent::Disconnected { .. })), "{:?}", run.events);
    }
}

#[test]
fn a_peer_that_leaves_is_reported_and_the_other_goes_on() {
    let (pa, pb) = (free_port(), free_port());
    let link = LinkConditions { delay: Duration::from_millis(20), ..LinkConditions::default() };
    let stay = std::thread::spawn(move || {
        let mut driver = crate::net::driver();
        driver.start(session(0, local(pb), lossy(pa, link))).unwrap();
        let start = std::time::Instant::now();
        let mut left_at = None;
        while start.elapsed() < Duration::from_secs(60) {
            let frame = driver.frame();
            driver.update(|handle, _| crate::arena::script(handle, frame)).unwrap();
            let now = driver.frame();
            for event in driver.drain_events() {
                if let RollbackEvent::Disconnected { peer } = event {
                    assert_eq!(peer, local(pb));
                    left_at = Some(now);
                }
            }
            if left_at.is_some_and(|at| driver.frame() >= at + 100) {
                return (left_at, driver.frame());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        (left_at, driver.frame())
    });
    let leave = std::thread::spawn(move || {
        let mut driver = crate::net::driver();
        driver.start(session(1, local(pa), UdpNonBlockingSocket::bind_to_port(pb).unwrap())).unwrap();
        let start = std::time::Instant::now();
        while driver.frame() < 150 && start.elapsed() < Duration::from_secs(30) {
            let frame = driver.frame();
            driver.update(|handle, _| crate::arena::script(handle, frame)).unwrap();
            std::thread::sleep(Duration::from_millis(10));
        }
        driver.frame()
    });
    let left = leave.join().unwrap();
    let (left_at, end) = stay.join().unwrap();
    assert!(left >= 150);
    let left_at = left_at.expect("the disconnect is reported");
    assert!(end >= left_at + 100, "the staying peer went on: left at {left_at}, now {end}");
}

/// A host with both players local broadcasts its confirmed inputs to a
/// spectator, which simulates the same frames without ever rolling back.
#[test]
fn a_spectator_sees_the_hosts_game() {
    use archetable_rollback::ggrs::{PlayerType, SessionBuilder};
    use archetable_rollback::{CheckedSocket, Update};

    let (ph, ps) = (free_port(), free_port());
    let frames = 300;
    let link = LinkConditions { delay: Duration::from_millis(20), ..LinkConditions::default() };
    let host = std::thread::spawn(move || {
        let session = SessionBuilder::<net::Config>::new()
            .with_num_players(2)
            .unwrap()
            .with_fps(100)
            .unwrap()
            .add_player(PlayerType::Local, 0)
            .unwrap()
            .add_player(PlayerType::Local, 1)
            .unwrap()
            .add_player(PlayerType::Spectator(local(ps)), 2)
            .unwrap()
            .start_p2p_session(net::checked_lossy(ph, link))
            .unwrap();
        let mut driver = net::driver();
        driver.keep_confirmed_checksums(true);
        driver.start(session).unwrap();
        let start = std::time::Instant::now();
        // A little past the spectator's last frame, so it gets every input.
        while driver.frame() < frames + 60 && start.elapsed() < Duration::from_secs(60) {
            let frame = driver.frame();
            driver.update(|handle, _| crate::arena::script(handle, frame)).unwrap();
            std::thread::sleep(Duration::from_millis(10));
        }
        driver.confirmed_checksums().to_vec()
    });
    let spectator = std::thread::spawn(move || {
        let session = SessionBuilder::<net::Config>::new()
            .with_num_players(2)
            .unwrap()
            .with_fps(100)
            .unwrap()
            .start_spectator_session(local(ph), CheckedSocket::new(UdpNonBlockingSocket::bind_to_port(ps).unwrap(), 2));
        let mut driver = net::driver();
        driver.start(session).unwrap();
        let mut seen = Vec::new();
        let start = std::time::Instant::now();
        while driver.frame() < frames && start.elapsed() < Duration::from_secs(60) {
            if driver.update(|_, _| unreachable!("a spectator has no local player")).unwrap() == Update::Advanced {
                seen.push((driver.frame(), driver.checksum()));
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        (seen, driver.stats())
    });
    let hosted = host.join().unwrap();
    let (seen, stats) = spectator.join().unwrap();
    assert_eq!(stats.rollbacks, 0);
    assert!(seen.len() >= frames as usize - 1, "the spectator saw {} frames", seen.len());
    let mut compared = 0;
    for (frame, checksum) in &seen {
        if let Some((_, hosted)) = hosted.iter().find(|(f, _)| f == frame) {
            assert_eq!(checksum, hosted, "frame {frame}");
            compared += 1;
        }
    }
    assert!(compared >= frames as usize - 10, "compared {compared} frames");
}

/// Peer 1's extra rule: ship 0 moves a little at frame 120, on that peer
/// only.
fn nudge(
    time: archetable_core::Res<archetable_rollback::SimTime>,
    mut ships: archetable_core::Query<(&Ship, &mut Pos)>,
) {
    if time.frame == 120 {
        for (ship, mut pos) in ships.iter_mut() {
            if ship.player == 0 {
                pos.x += 1;
            }
        }
    }
}

/// Two peers whose simulations differ: both report the desync, and their
/// debug records of that frame name the component and the entity.
#[test]
fn a_desync_between_peers_is_named_from_their_records() {
    let (pa, pb) = (free_port(), free_port());
    let link = LinkConditions { delay: Duration::from_millis(20), ..LinkConditions::default() };
    let peer = move |me: usize| {
        let (port, other) = if me == 0 { (pa, pb) } else { (pb, pa) };
        std::thread::spawn(move || {
            let mut driver = net::driver();
            driver.set_debug(true);
            if me == 1 {
                driver.schedule_mut().add_system(nudge);
            }
            driver.start(session(me, local(other), checked_lossy(port, link))).unwrap();
            let mut records = Vec::new();
            let start = std::time::Instant::now();
            while driver.frame() < 400 && start.elapsed() < Duration::from_secs(120) {
                let frame = driver.frame();
                driver.update(|handle, _| crate::arena::script(handle, frame)).unwrap();
                let desyncs: Vec<_> = driver
                    .drain_events()
                    .filter_map(|e| match e {
                        RollbackEvent::Desync { frame, .. } => Some(frame),
                        _ => None,
                    })
                    .collect();
                records.extend(desyncs.into_iter().filter_map(|frame| driver.frame_record(frame)));
                std::thread::sleep(Duration::from_millis(10));
            }
            records
        })
    };
    let (a, b) = (peer(0), peer(1));
    let (a, b) = (a.join().unwrap(), b.join().unwrap());
    assert!(!a.is_empty() && !b.is_empty(), "both peers report the desync");
    let (mine, theirs) = a
        .iter()
        .find_map(|ra| b.iter().find(|rb| rb.frame == ra.frame).map(|rb| (ra, rb)))
        .expect("a frame both recorded");
    // Records travel as bytes between peers; any serde format does.
    let theirs: archetable_rollback::FrameRecord = bincode::deserialize(&bincode::serialize(theirs).unwrap()).unwrap();
    let namer = net::driver();
    let ship0 = namer.world().query::<(archetable_core::Entity, &Ship)>().find(|(_, s)| s.player == 0).unwrap().0;
    let difference = namer.first_difference(mine, &theirs).expect("the records differ");
    assert!(difference.type_name.ends_with("::Pos"), "{difference:?}");
    assert_eq!(difference.entity, Some(ship0));
    assert!(mine.frame > 120);
}
