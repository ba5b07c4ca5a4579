//! Garbage sent to a peer's socket: random bytes, real packets cut short
//! or with flipped bits, and old packets replayed, some of them made to
//! look as if they came from the other peer. Nothing panics and both peers
//! go on.

use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use archetable_rollback::ggrs::{Message, NonBlockingSocket, UdpNonBlockingSocket};
use archetable_rollback::{CheckedSocket, LinkConditions, RollbackEvent, RollbackRng};

use crate::net::{self, free_port, local, lossy, run_peer, session};

/// Keeps a copy of every message sent through it, for the attacker.
struct Tap<S> {
    inner: S,
    sent: Arc<Mutex<Vec<Message>>>,
}

impl<S: NonBlockingSocket<SocketAddr>> NonBlockingSocket<SocketAddr> for Tap<S> {
    fn send_to(&mut self, msg: &Message, addr: &SocketAddr) {
        let mut sent = self.sent.lock().unwrap();
        if sent.len() < 4096 {
            sent.push(msg.clone());
        }
        drop(sent);
        self.inner.send_to(msg, addr);
    }

    fn receive_all_messages(&mut self) -> Vec<(SocketAddr, Message)> {
        self.inner.receive_all_messages()
    }
}

/// Hands what arrives from `attacker` to the session as if the other peer
/// had sent it: UDP on loopback cannot forge a source address, so this
/// stands in for an attacker that can.
struct Spoofed<S> {
    inner: S,
    attacker: SocketAddr,
    peer: SocketAddr,
    received: Arc<AtomicUsize>,
}

impl<S: NonBlockingSocket<SocketAddr>> NonBlockingSocket<SocketAddr> for Spoofed<S> {
    fn send_to(&mut self, msg: &Message, addr: &SocketAddr) {
        self.inner.send_to(msg, addr);
    }

    fn receive_all_messages(&mut self) -> Vec<(SocketAddr, Message)> {
        let mut messages = self.inner.receive_all_messages();
        for (from, _) in &mut messages {
            if *from == self.attacker {
                *from = self.peer;
                self.received.fetch_add(1, Ordering::Relaxed);
            }
        }
        messages
    }
}

fn attack(targets: [SocketAddr; 2], socket: UdpSocket, sent: Arc<Mutex<Vec<Message>>>, stop: Arc<AtomicBool>) -> u64 {
    let mut rng = RollbackRng::new(1234);
    let mut count = 0u64;
    while !stop.load(Ordering::Relaxed) {
        let target = targets[rng.range(2) as usize];
        let kind = rng.range(5);
        let packet: Vec<u8> = {
            let real = {
                let sent = sent.lock().unwrap();
                (!sent.is_empty()).then(|| bincode::serialize(&sent[rng.range(sent.len() as u32) as usize]).unwrap())
            };
            match (kind, real) {
                // A real packet replayed as it was.
                (0, Some(real)) => real,
                // Cut short.
                (1, Some(real)) => real[..rng.range(real.len() as u32) as usize].to_vec(),
                // A few bits flipped.
                (2, Some(mut real)) => {
                    for _ in 0..1 + rng.range(4) {
                        let i = rng.range(real.len() as u32) as usize;
                        real[i] ^= 1 << rng.range(8);
                    }
                    real
                }
                // Random bytes, up to a full datagram.
                _ => {
                    let len = if rng.range(8) == 0 { 4096 } else { rng.range(600) as usize };
                    (0..len).map(|_| rng.next_u32() as u8).collect()
                }
            }
        };
        let _ = socket.send_to(&packet, target);
        count += 1;
        if count.is_multiple_of(16) {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    count
}

#[test]
fn garbage_from_a_stranger_changes_nothing() {
    let (a, b, _) = play_under_attack(false);
    assert!(net::compare(&a, &b) >= 600);
    // A loaded machine may stall a peer long enough for a network
    // interruption to be reported (and resumed); nothing worse may happen.
    for run in [&a, &b] {
        let bad =
            |e: &&RollbackEvent<_>| matches!(e, RollbackEvent::Desync { .. } | RollbackEvent::Disconnected { .. });
        assert!(!run.events.iter().any(|e| bad(&e)), "{:?}", run.events);
    }
}

/// A forged source address gets past ggrs's only filter: forged inputs and
/// checksum reports can then fake desyncs and disconnects (ggrs does not
/// authenticate peers), but nothing panics and both peers go on.
#[test]
fn garbage_in_the_name_of_the_other_peer_panics_nothing() {
    let (a, b, dropped) = play_under_attack(true);
    assert!(dropped > 0, "the checked socket dropped nothing");
    assert!(a.finished && b.finished);
}

/// Plays the arena between two peers for 600 confirmed frames while an
/// attacker sends garbage to both; with `spoof`, what reaches peer a from
/// the attacker is handed to its session as if peer b had sent it. The
/// two runs and the count of messages peer a's checked socket dropped.
fn play_under_attack(spoof: bool) -> (net::PeerRun, net::PeerRun, u64) {
    let (pa, pb) = (free_port(), free_port());
    let attacker = UdpSocket::bind("127.0.0.1:0").unwrap();
    let attacker_addr = attacker.local_addr().unwrap();
    let sent = Arc::new(Mutex::new(Vec::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let spoofed = Arc::new(AtomicUsize::new(0));
    let done = Arc::new(AtomicUsize::new(0));
    let frames = 600;
    let deadline = Duration::from_secs(60);
    let link = LinkConditions { delay: Duration::from_millis(30), ..net::bad_link(5) };

    let a = {
        let (done, spoofed) = (done.clone(), spoofed.clone());
        std::thread::spawn(move || {
            let peer = if spoof { local(pb) } else { attacker_addr };
            let spoofed = Spoofed { inner: lossy(pa, link), attacker: attacker_addr, peer, received: spoofed };
            let socket = CheckedSocket::new(spoofed, 2);
            let stats = socket.stats_handle();
            let run = run_peer(0, session(0, local(pb), socket), frames, done, 2, deadline);
            (run, stats)
        })
    };
    let b = {
        let (done, sent) = (done.clone(), sent.clone());
        std::thread::spawn(move || {
            let socket = CheckedSocket::new(Tap { inner: UdpNonBlockingSocket::bind_to_port(pb).unwrap(), sent }, 2);
            run_peer(1, session(1, local(pa), socket), frames, done, 2, deadline)
        })
    };
    let attacker = {
        let (sent, stop) = (sent.clone(), stop.clone());
        std::thread::spawn(move || attack([local(pa), local(pb)], attacker, sent, stop))
    };
    let start = Instant::now();
    let (a, b) = (a.join(), b.join());
    stop.store(true, Ordering::Relaxed);
    let packets = attacker.join().unwrap();
    let ((a, checked), b) = (a.expect("peer a panicked"), b.expect("peer b panicked"));
    let checked = checked.get();
    println!(
        "hostile (spoof {spoof}): {packets} packets sent, {} reached peer a's session as the peer's, {checked:?}, in {:?}; \
         frames {} / {}; events {:?}",
        spoofed.load(Ordering::Relaxed),
        start.elapsed(),
        a.frame,
        b.frame,
        a.events.iter().chain(&b.events).filter(|e| !matches!(e, RollbackEvent::Synchronized { .. })).collect::<Vec<_>>()
    );
    assert!(packets > 1000, "the attacker sent {packets} packets");
    assert!(spoofed.load(Ordering::Relaxed) > 100);
    assert!(a.finished && b.finished, "the game stopped: {} / {}", a.frame, b.frame);
    (a, b, checked.dropped)
}
