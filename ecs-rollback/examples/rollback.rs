//! Two peers of the arena game in one process, each on its own thread with
//! its own UDP socket on 127.0.0.1, talking through a bad link (80 ms one
//! way, 20 ms of jitter, 5% loss, duplicates and reordering) on scripted
//! inputs. Each peer predicts the other's inputs, and rolls back and
//! resimulates when the real ones arrive.
//!
//! At a few confirmed frames each peer draws its world as saved at that
//! frame; the pictures are printed side by side and must be identical. At
//! the end: frames, rollbacks, the deepest rollback, resimulation speed,
//! and both peers' checksums of the last frame both confirmed.
//!
//! Run with `cargo run --release -p archetable-rollback --example rollback`.
//! Across two machines, run the same game with each peer's address (see
//! the crate's README).

#[path = "../tests/it/arena.rs"]
mod arena;

use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use archetable_core::{Entity, World};
use archetable_rollback::ggrs::{DesyncDetection, Frame, PlayerType, SessionBuilder, UdpNonBlockingSocket};
use archetable_rollback::{
    CheckedSocket, LinkConditions, LossySocket, RollbackConfig, RollbackDriver, RollbackEvent, RollbackStats,
};

use arena::{Bullet, Formation, Input, Pos, Rock, Ship, Wingman};

const FRAMES: Frame = 1200;
const FPS: u32 = 100;
/// The confirmed frames both peers draw.
const PICTURES: [Frame; 3] = [300, 700, 1100];

struct Run {
    pictures: Vec<(Frame, Vec<String>)>,
    stats: RollbackStats,
    frames: Frame,
    confirmed: Vec<(Frame, u128)>,
    desyncs: usize,
}

fn main() {
    let ports = [free_port(), free_port()];
    let done = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let peers: Vec<_> = (0..2)
        .map(|me| {
            let done = done.clone();
            std::thread::spawn(move || play(me, ports[me], ports[1 - me], done))
        })
        .collect();
    let runs: Vec<Run> = peers.into_iter().map(|p| p.join().expect("a peer panicked")).collect();
    let wall = started.elapsed();

    for &frame in &PICTURES {
        let a = &runs[0].pictures.iter().find(|(f, _)| *f == frame).expect("peer 0 drew it").1;
        let b = &runs[1].pictures.iter().find(|(f, _)| *f == frame).expect("peer 1 drew it").1;
        println!("confirmed frame {frame}");
        println!("  {:<width$}  peer 1", "peer 0", width = a[0].chars().count());
        for (left, right) in a.iter().zip(b) {
            println!("  {left}  {right}");
        }
        assert_eq!(a, b, "the peers see different worlds at confirmed frame {frame}");
        println!("  identical on both peers");
    }

    println!();
    for (me, run) in runs.iter().enumerate() {
        let s = run.stats;
        let rate = s.resimulated_steps as f64 / s.resimulation_time.as_secs_f64().max(1e-9);
        println!(
            "peer {me}: {} frames, {} steps, {} rollbacks, deepest {} frames, {} resimulated steps at {:.0} frames/s, \
             {} desyncs",
            run.frames, s.steps, s.rollbacks, s.deepest_rollback, s.resimulated_steps, rate, run.desyncs
        );
    }
    // The last frame both confirmed, and its checksum on each side.
    let last = runs[0]
        .confirmed
        .iter()
        .rev()
        .find_map(|&(frame, a)| runs[1].confirmed.iter().find(|(f, _)| *f == frame).map(|&(_, b)| (frame, a, b)));
    let (frame, a, b) = last.expect("a frame both confirmed");
    println!("checksums at confirmed frame {frame}: peer 0 {a:032x}, peer 1 {b:032x}");
    println!("wall time {:.1} s", wall.as_secs_f64());
    assert_eq!(a, b, "the peers disagree");
    assert!(runs.iter().all(|run| run.desyncs == 0));
}

fn free_port() -> u16 {
    UdpSocket::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn local(port: u16) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], port))
}

/// One peer: player `me` on `port`, the other player on `other`.
fn play(me: usize, port: u16, other: u16, done: Arc<AtomicUsize>) -> Run {
    let link = LinkConditions {
        delay: Duration::from_millis(80),
        jitter: Duration::from_millis(20),
        loss: 0.05,
        duplicate: 0.02,
        reorder: 0.05,
        seed: me as u64 + 1,
    };
    let socket = UdpNonBlockingSocket::bind_to_port(port).expect("bind a UDP port");
    let socket = CheckedSocket::new(LossySocket::new(socket, link), 2);
    let session = SessionBuilder::<RollbackConfig<Input>>::new()
        .with_num_players(2)
        .unwrap()
        .with_fps(FPS as usize)
        .unwrap()
        .with_max_prediction_window(16)
        .with_input_delay(2)
        .with_desync_detection_mode(DesyncDetection::On { interval: 10 })
        .add_player(PlayerType::Local, me)
        .unwrap()
        .add_player(PlayerType::Remote(local(other)), 1 - me)
        .unwrap()
        .start_p2p_session(socket)
        .unwrap();

    let mut driver: RollbackDriver<Input> = RollbackDriver::new(arena::world(200), arena::schedule(), FPS);
    arena::register(&mut driver);
    driver.keep_confirmed_checksums(true);
    driver.start(session).expect("every type rolls back or is skipped");

    let mut pictures = Vec::new();
    let mut desyncs = 0;
    let mut finished = false;
    let start = Instant::now();
    let mut next = start;
    while start.elapsed() < Duration::from_secs(120) {
        let frame = driver.frame();
        driver.update(|handle, _| arena::script(handle, frame)).expect("the session goes on");
        desyncs += driver.drain_events().filter(|e| matches!(e, RollbackEvent::Desync { .. })).count();
        for &at in &PICTURES {
            let drawn = pictures.iter().any(|(f, _)| *f == at);
            if !drawn && driver.confirmed_frame() >= at {
                let world = driver.saved_world(at).expect("a frame just confirmed is still kept");
                pictures.push((at, draw(world)));
            }
        }
        if !finished && driver.confirmed_frame() >= FRAMES {
            finished = true;
            done.fetch_add(1, Ordering::SeqCst);
        }
        if done.load(Ordering::SeqCst) == 2 {
            break;
        }
        next += Duration::from_secs(1) / FPS;
        if let Some(wait) = next.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
    }
    Run {
        pictures,
        stats: driver.stats(),
        frames: driver.frame(),
        confirmed: driver.confirmed_checksums().to_vec(),
        desyncs,
    }
}

/// The arena as text: ships `A` and `B`, bullets `.`, the formation `F`
/// with its wingmen `w`, rocks `o`.
fn draw(world: &World) -> Vec<String> {
    const W: usize = 40;
    const H: usize = 14;
    let mut grid = vec![vec![' '; W]; H];
    let mut put = |pos: &Pos, c: char| {
        let x = ((pos.x + arena::HALF) as i64 * W as i64 / (2 * arena::HALF as i64 + 1)) as usize;
        let y = ((arena::HALF - pos.y) as i64 * H as i64 / (2 * arena::HALF as i64 + 1)) as usize;
        let cell = &mut grid[y.min(H - 1)][x.min(W - 1)];
        if *cell == ' ' || *cell == 'o' || *cell == '.' {
            *cell = c;
        }
    };
    for (pos, _) in world.query::<(&Pos, &Rock)>() {
        put(pos, 'o');
    }
    for (pos, _) in world.query::<(&Pos, &Bullet)>() {
        put(pos, '.');
    }
    for (pos, _) in world.query::<(&Pos, &Wingman)>() {
        put(pos, 'w');
    }
    for (pos, _) in world.query::<(&Pos, &Formation)>() {
        put(pos, 'F');
    }
    for (pos, ship) in world.query::<(&Pos, &Ship)>() {
        put(pos, if ship.player == 0 { 'A' } else { 'B' });
    }
    let count = format!(" {} entities ", world.query::<Entity>().count());
    let mut lines = vec![format!("+{}+", "-".repeat(W))];
    lines.extend(grid.into_iter().map(|row| format!("|{}|", row.into_iter().collect::<String>())));
    lines.push(format!("+{count}{}+", "-".repeat(W - count.len())));
    lines
}
