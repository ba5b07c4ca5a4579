//! Two peers of the arena over a bad loopback link, and a peer that leaves.

use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use std::time::Duration;

use archetable_rollback::ggrs::UdpNonBlockingSocket;
use archetable_rollback::{LinkConditions, RollbackEvent};

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
