//! Hostile clients over loopback, written by hand on plain sockets: sizes
//! and lengths past every limit, bodies a byte at a time, clients that
//! never read, heads that never end, a drop while clients stall, and a
//! soak of all of them at once. Every loop here is bounded in count and
//! time.

mod support;

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use archetable_inspect::{codes, Inspector, InspectorConfig};
use serde_json::{json, Value};
use support::*;

/// Short timeouts, so that the tests see each one fire.
fn hostile_config() -> InspectorConfig {
    config()
        .header_timeout(Duration::from_secs(1))
        .body_timeout(Duration::from_secs(1))
        .write_timeout(Duration::from_secs(1))
}

/// The head of a JSON POST that declares `length` body bytes.
fn post_head(addr: SocketAddr, length: &str) -> String {
    format!("POST / HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {length}\r\n\r\n")
}

/// The status of a raw response, 0 if none came.
fn status(bytes: &[u8]) -> u16 {
    bytes.get(9..12).and_then(|s| std::str::from_utf8(s).ok()).and_then(|s| s.parse().ok()).unwrap_or(0)
}

/// Reads until the server closes the connection (or resets it), for at
/// most `limit`: the bytes, and whether the connection ended.
fn read_until_closed(stream: &mut TcpStream, limit: Duration) -> (Vec<u8>, bool) {
    let started = Instant::now();
    let mut out = Vec::new();
    let mut buf = [0u8; 64 * 1024];
    while started.elapsed() < limit {
        stream.set_read_timeout(Some(Duration::from_millis(200))).unwrap();
        match stream.read(&mut buf) {
            Ok(0) => return (out, true),
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(_) => return (out, true), // Reset by the server.
        }
    }
    (out, false)
}

/// The body of a response read whole.
fn reply_of(bytes: &[u8]) -> Reply {
    parse_reply(bytes)
}

fn refusal(reply: &Reply) -> (u16, Value, Value) {
    let body = reply.json();
    (reply.status, body["error"]["code"].clone(), body["error"]["message"].clone())
}

mod sizes {
    //! Bodies past the size limit, declared or streamed.

    use super::*;

    /// A `Content-Length` of `u64::MAX` is refused (hyper's parser:
    /// 431, the length does not fit its counter), one just under it by the
    /// inspector (413); no thread dies, and the server answers after eight of
    /// each.
    #[test]
    fn a_content_length_of_u64_max_is_refused_and_the_server_goes_on() {
        let (mut game, _) = game();
        let mut inspector = Inspector::start(hostile_config()).unwrap();
        let (max, near, after) = drive(&mut game, &mut inspector, |addr| {
            let max: Vec<u16> =
                (0..8).map(|_| status(&raw(addr, post_head(addr, "18446744073709551615").as_bytes()))).collect();
            let near: Vec<Reply> =
                (0..8).map(|_| reply_of(&raw(addr, post_head(addr, "18446744073709551613").as_bytes()))).collect();
            (max, near, ok(addr, "loop.status", json!({}))["entities"].clone())
        });
        assert_eq!(max, [431; 8]);
        for reply in &near {
            assert_eq!(refusal(reply), (413, json!(codes::TOO_LARGE), json!("the body is larger than 1048576 bytes")));
            assert_eq!(reply.header("connection"), Some("close"));
        }
        assert_eq!(after, json!(8));
    }

    /// A `Content-Length` of 2^50 is refused before anything is
    /// allocated; the process lives on.
    #[test]
    fn a_content_length_of_two_to_the_fifty_is_refused_without_allocating() {
        let (mut game, _) = game();
        let mut inspector = Inspector::start(hostile_config()).unwrap();
        let (replies, after) = drive(&mut game, &mut inspector, |addr| {
            let replies: Vec<Reply> =
                (0..4).map(|_| reply_of(&raw(addr, post_head(addr, "1125899906842624").as_bytes()))).collect();
            (replies, ok(addr, "loop.status", json!({}))["entities"].clone())
        });
        for reply in &replies {
            assert_eq!(refusal(reply), (413, json!(codes::TOO_LARGE), json!("the body is larger than 1048576 bytes")));
        }
        assert_eq!(after, json!(8));
    }

    /// While streaming: a chunked body (no `Content-Length`) is cut
    /// off at the limit.
    #[test]
    fn a_chunked_body_past_the_limit_is_cut_off() {
        let inspector = Inspector::start(hostile_config().max_body(1000)).unwrap();
        let addr = inspector.addr();
        let mut request = format!(
            "POST / HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        )
        .into_bytes();
        for _ in 0..3 {
            request.extend_from_slice(b"190\r\n");
            request.extend_from_slice(&[b' '; 0x190]);
            request.extend_from_slice(b"\r\n");
        }
        request.extend_from_slice(b"0\r\n\r\n");
        let reply = reply_of(&raw(addr, &request));
        assert_eq!(refusal(&reply), (413, json!(codes::TOO_LARGE), json!("the body is larger than 1000 bytes")));
        assert_eq!(ok(addr, "rpc.discover", json!({}))["methods"][0]["name"], json!("rpc.discover"));
    }
}

mod slow_clients {
    //! Clients that send slowly or never read.

    use super::*;

    /// Eight clients that send a body a byte at a time hold nothing:
    /// another client is answered meanwhile, and each slow one gets a 408 when
    /// its body timeout passes.
    #[test]
    fn slow_bodies_hold_nothing_and_time_out() {
        let (mut game, _) = game();
        let mut inspector = Inspector::start(hostile_config()).unwrap();
        let (normal, slow) = drive(&mut game, &mut inspector, |addr| {
            let (ready_send, ready) = mpsc::channel();
            let slow: Vec<_> = (0..8)
                .map(|_| {
                    let ready_send = ready_send.clone();
                    std::thread::spawn(move || {
                        let mut stream = TcpStream::connect(addr).unwrap();
                        stream.write_all(post_head(addr, "2048").as_bytes()).unwrap();
                        ready_send.send(()).unwrap();
                        for byte in b"[{\"" {
                            stream.write_all(&[*byte]).unwrap();
                            std::thread::sleep(Duration::from_millis(150));
                        }
                        // Stalls: its body never completes.
                        read_until_closed(&mut stream, Duration::from_secs(60))
                    })
                })
                .collect();
            for _ in 0..8 {
                ready.recv_timeout(Duration::from_secs(30)).unwrap();
            }
            let normal = ok(addr, "loop.status", json!({}))["entities"].clone();
            (normal, slow.into_iter().map(|s| s.join().unwrap()).collect::<Vec<_>>())
        });
        assert_eq!(normal, json!(8));
        for (bytes, closed) in &slow {
            assert!(closed, "the server kept a slow body's connection");
            let reply = reply_of(bytes);
            assert_eq!(
                refusal(&reply),
                (408, json!(codes::INVALID_REQUEST), json!("the body did not arrive within 1s"))
            );
        }
    }

    /// Eight clients that ask for much and never read hold nothing:
    /// another client is answered meanwhile, and each is dropped once it has
    /// taken no byte for the write timeout.
    #[test]
    fn clients_that_never_read_are_dropped() {
        let inspector = Inspector::start(hostile_config()).unwrap();
        let addr = inspector.addr();
        // 2,000 pipelined requests for the page: about 43 MB of answers each,
        // more than any socket buffers hold.
        let requests = format!("GET / HTTP/1.1\r\nHost: {addr}\r\n\r\n").repeat(2000);
        let (ready_send, ready) = mpsc::channel();
        let (release_send, release) = mpsc::channel::<()>();
        let release = std::sync::Arc::new(std::sync::Mutex::new(release));
        let clients: Vec<_> = (0..8)
            .map(|_| {
                let requests = requests.clone();
                let ready_send = ready_send.clone();
                let release = std::sync::Arc::clone(&release);
                std::thread::spawn(move || {
                    let mut stream = TcpStream::connect(addr).unwrap();
                    stream.write_all(requests.as_bytes()).unwrap();
                    ready_send.send(()).unwrap();
                    let _ = release.lock().unwrap().recv_timeout(Duration::from_secs(60));
                    read_until_closed(&mut stream, Duration::from_secs(60))
                })
            })
            .collect();
        for _ in 0..8 {
            ready.recv_timeout(Duration::from_secs(30)).unwrap();
        }
        // Answered while all eight hold their connections.
        assert_eq!(ok(addr, "rpc.discover", json!({}))["methods"][0]["name"], json!("rpc.discover"));
        eventually("the never-reading clients dropped", || inspector.connections() == 0);
        for _ in 0..8 {
            release_send.send(()).unwrap();
        }
        for client in clients {
            let (bytes, closed) = client.join().unwrap();
            assert!(closed, "the connection was not closed");
            let answers = bytes.windows(15).filter(|w| w == b"HTTP/1.1 200 OK").count();
            assert!(answers < 2000, "all {answers} answers went out");
            assert_eq!(status(&bytes), 200);
        }
    }
}

mod heads {
    //! Request heads past their size or their time.

    use super::*;

    /// Request heads are bounded: a long target, a long header, many
    /// headers, and a head that never ends are refused with 431, and the
    /// server answers after them.
    #[test]
    fn oversized_request_heads_are_refused() {
        let inspector = Inspector::start(hostile_config()).unwrap();
        let addr = inspector.addr();
        let long_target = format!("GET /{} HTTP/1.1\r\nHost: {addr}\r\n\r\n", "a".repeat(100_000));
        let long_header = format!("GET / HTTP/1.1\r\nHost: {addr}\r\nX-Long: {}\r\n\r\n", "b".repeat(32 * 1024));
        let many: String = (0..100).map(|i| format!("X-Field-{i}: {i}\r\n")).collect();
        let many_headers = format!("GET / HTTP/1.1\r\nHost: {addr}\r\n{many}\r\n");
        let endless = format!("GET / HTTP/1.1\r\nHost: {addr}\r\nX-Endless: {}", "c".repeat(20 * 1024));
        let statuses: Vec<u16> = [long_target, long_header, many_headers, endless]
            .iter()
            .map(|r| status(&raw(addr, r.as_bytes())))
            .collect();
        assert_eq!(statuses, [431, 431, 431, 431]);
        assert_eq!(ok(addr, "rpc.discover", json!({}))["methods"][0]["name"], json!("rpc.discover"));
    }

    /// A head sent a byte now and then is cut off at the header timeout, with
    /// no answer; so is a connection that sends nothing.
    #[test]
    fn slow_and_missing_heads_time_out() {
        let inspector = Inspector::start(hostile_config()).unwrap();
        let addr = inspector.addr();
        let mut silent = TcpStream::connect(addr).unwrap();
        let mut dribbling = TcpStream::connect(addr).unwrap();
        let mut closed_early = false;
        for byte in b"POST / HTTP/1.1\r\nHost: 127.0.0.1".iter().take(8) {
            if dribbling.write_all(&[*byte]).is_err() {
                closed_early = true;
                break;
            }
            std::thread::sleep(Duration::from_millis(300));
        }
        for stream in [&mut silent, &mut dribbling] {
            let (bytes, closed) = read_until_closed(stream, Duration::from_secs(30));
            assert!(closed && bytes.is_empty(), "{closed} {:?}", String::from_utf8_lossy(&bytes));
        }
        let _ = closed_early;
        assert_eq!(inspector.connections(), 0);
    }
}

mod connections {
    //! The connection limit, and dropping the inspector while clients stall.

    use super::*;

    /// Connections past the limit wait to be accepted until one closes.
    #[test]
    fn connections_past_the_limit_wait_their_turn() {
        let inspector = Inspector::start(config().max_connections(4).header_timeout(Duration::from_secs(60))).unwrap();
        let addr = inspector.addr();
        let idle: Vec<TcpStream> = (0..4).map(|_| TcpStream::connect(addr).unwrap()).collect();
        eventually("four connections", || inspector.connections() == 4);
        let fifth = std::thread::spawn(move || {
            let request = json!({ "jsonrpc": "2.0", "id": 1, "method": "rpc.discover" }).to_string();
            let head = post_head(addr, &request.len().to_string()).replace("\r\n\r\n", "\r\nConnection: close\r\n\r\n");
            let mut stream = TcpStream::connect(addr).unwrap();
            stream.write_all(format!("{head}{request}").as_bytes()).unwrap();
            read_until_closed(&mut stream, Duration::from_secs(30))
        });
        // The fifth is not taken while four are open.
        std::thread::sleep(Duration::from_millis(500));
        assert_eq!(inspector.connections(), 4);
        assert!(!fifth.is_finished());
        drop(idle);
        let (bytes, _) = fifth.join().unwrap();
        assert_eq!(status(&bytes), 200);
    }

    /// Dropping the inspector does not wait for clients that stall
    /// mid-body, mid-head, or never read; their connections are closed.
    #[test]
    fn dropping_the_inspector_never_waits_on_a_client() {
        let inspector = Inspector::start(config()).unwrap();
        let addr = inspector.addr();
        let mut mid_body = TcpStream::connect(addr).unwrap();
        mid_body.write_all(post_head(addr, "100").as_bytes()).unwrap();
        mid_body.write_all(b"[{\"jsonrpc\"").unwrap();
        let mut mid_head = TcpStream::connect(addr).unwrap();
        mid_head.write_all(b"POST / HTTP/1.1\r\nHost: 127.").unwrap();
        let mut never_reads = TcpStream::connect(addr).unwrap();
        never_reads.write_all(format!("GET / HTTP/1.1\r\nHost: {addr}\r\n\r\n").repeat(400).as_bytes()).unwrap();
        eventually("three connections", || inspector.connections() == 3);
        let (dropped_send, dropped) = mpsc::channel();
        let dropping = std::thread::spawn(move || {
            drop(inspector);
            dropped_send.send(()).unwrap();
        });
        // The clients still hold their sockets here.
        let in_time = dropped.recv_timeout(Duration::from_secs(30));
        for stream in [&mut mid_body, &mut mid_head] {
            let (bytes, closed) = read_until_closed(stream, Duration::from_secs(30));
            assert!(closed && bytes.is_empty(), "{closed} {}", String::from_utf8_lossy(&bytes));
        }
        let (_, closed) = read_until_closed(&mut never_reads, Duration::from_secs(60));
        assert!(closed);
        drop((mid_body, mid_head, never_reads));
        dropping.join().unwrap();
        assert!(in_time.is_ok(), "dropping the inspector waited for its clients");
        // Its port is free again.
        let again = Inspector::start(config().port(addr.port())).unwrap();
        assert_eq!(again.addr(), addr);
    }
}

mod polls {
    //! Long polls.

    use super::*;

    /// The polls of a batch wait together, as long as the longest one
    /// (1 s here), not one after the other (32 s).
    #[test]
    fn a_batch_of_long_polls_waits_as_long_as_its_longest_poll() {
        let (mut game, _) = game();
        let mut inspector = Inspector::start(hostile_config()).unwrap();
        let (answers, waited) = drive(&mut game, &mut inspector, |addr| {
            let watch = ok(addr, "watch.start", json!({ "kind": "stats" }))["watch"].clone();
            let polls: Vec<Value> = (0..32)
                .map(|i| {
                    json!({ "jsonrpc": "2.0", "id": i, "method": "watch.poll",
                            "params": { "watch": watch, "after": 1_000_000_000u64, "timeout_ms": 1000 } })
                })
                .collect();
            let started = Instant::now();
            let reply = post(addr, &json!(polls));
            (reply.json(), started.elapsed())
        });
        let answers = answers.as_array().unwrap();
        assert_eq!(answers.len(), 32);
        assert!(answers.iter().all(|a| a["result"]["items"] == json!([])), "{answers:?}");
        assert!(waited < Duration::from_secs(10), "the batch waited {waited:?}");
    }
}

mod soak {
    //! 64 clients at once for a bounded time (30 s, or
    //! `INSPECTOR_SOAK_SECS`): slow bodies, huge lengths, garbage, clients
    //! that never read, long polls and normal calls, while the game thread
    //! runs frames. Every normal call must be answered within
    //! [`NORMAL_BOUND`]; 999 `update`s in 1,000 must end within their budget
    //! plus [`UPDATE_MARGIN`], and none may take [`UPDATE_STALL`]. (The
    //! slowest single `update` measures the machine as much as the
    //! inspector: on a shared 2-core machine the game thread can lose its
    //! core for tens of milliseconds. A client that held the game thread
    //! would hold it for a timeout, seconds.)

    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    /// The longest a normal call may wait for its answer.
    const NORMAL_BOUND: Duration = Duration::from_secs(2);
    /// How far past its budget an `update` may run (a debug build on a
    /// shared 2-core machine, where the thread can be preempted).
    const UPDATE_MARGIN: Duration = Duration::from_millis(30);
    const BUDGET: Duration = Duration::from_millis(2);
    /// What no `update` may take: a stall, far past any preemption, far
    /// short of the server's shortest timeout (5 s).
    const UPDATE_STALL: Duration = Duration::from_millis(500);

    fn seconds() -> u64 {
        std::env::var("INSPECTOR_SOAK_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(30)
    }

    /// One hostile round of kind `kind`; returns at once if `stop` is set.
    fn hostile(addr: SocketAddr, kind: usize, round: u64, stop: &AtomicBool) {
        let Ok(mut stream) = TcpStream::connect(addr) else { return };
        let _ = stream.set_write_timeout(Some(Duration::from_secs(5)));
        match kind {
            // A body a byte now and then.
            0 => {
                let _ = stream.write_all(post_head(addr, "4096").as_bytes());
                for _ in 0..20 {
                    if stop.load(Ordering::Relaxed) || stream.write_all(b" ").is_err() {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(200));
                }
            }
            // Huge lengths, and a real body past the limit.
            1 => {
                let length = ["18446744073709551615", "1125899906842624", "2097152"][round as usize % 3];
                let _ = stream.write_all(post_head(addr, length).as_bytes());
                if length == "2097152" {
                    let chunk = vec![b' '; 64 * 1024];
                    for _ in 0..32 {
                        if stream.write_all(&chunk).is_err() {
                            break;
                        }
                    }
                }
                let _ = read_until_closed(&mut stream, Duration::from_secs(5));
            }
            // Garbage.
            2 => {
                let mut x = round.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let bytes: Vec<u8> = (0..4096)
                    .map(|_| {
                        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                        (x >> 33) as u8
                    })
                    .collect();
                let _ = stream.write_all(&bytes);
                let _ = read_until_closed(&mut stream, Duration::from_secs(5));
            }
            // Asks for much, never reads, holds on for a while.
            3 => {
                let _ = stream.write_all(format!("GET / HTTP/1.1\r\nHost: {addr}\r\n\r\n").repeat(200).as_bytes());
                for _ in 0..20 {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(200));
                }
            }
            // A head that never ends.
            _ => {
                let _ = stream.write_all(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: ");
                for _ in 0..20 {
                    if stop.load(Ordering::Relaxed) || stream.write_all(b"a").is_err() {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(200));
                }
            }
        }
    }

    /// One normal call of kind `round % 4`: how long its answer took.
    fn normal(addr: SocketAddr, round: u64, watch: &Value) -> Duration {
        let started = Instant::now();
        match round % 4 {
            0 => assert_eq!(ok(addr, "loop.status", json!({}))["entities"], json!(8)),
            1 => assert_eq!(ok(addr, "world.query", json!({ "with": ["Position"] }))["total"], json!(4)),
            2 => {
                let reply = http(addr, "GET", "/", &[], b"");
                assert_eq!(reply.status, 200);
            }
            _ => {
                let result = ok(addr, "watch.poll", json!({ "watch": watch, "after": 0, "timeout_ms": 100 }));
                assert_eq!(result["watch"], *watch);
            }
        }
        started.elapsed()
    }

    #[test]
    #[ignore = "a 30 s soak: cargo test -p archetable-inspect --test hostile -- --ignored soak"]
    fn sixty_four_clients_slow_huge_garbage_and_normal() {
        let (mut game, _) = game();
        let config = config()
            .budget(BUDGET)
            .header_timeout(Duration::from_secs(2))
            .body_timeout(Duration::from_secs(2))
            .write_timeout(Duration::from_secs(2));
        let mut inspector = Inspector::start(config).unwrap();
        let addr = inspector.addr();
        let run = Duration::from_secs(seconds());
        let stop = Arc::new(AtomicBool::new(false));
        let watch = {
            let watch =
                std::thread::spawn(move || ok(addr, "watch.start", json!({ "kind": "stats" }))["watch"].clone());
            while !watch.is_finished() {
                inspector.update(&mut game);
                std::thread::sleep(Duration::from_millis(1));
            }
            watch.join().unwrap()
        };
        let clients: Vec<_> = (0..64usize)
            .map(|i| {
                let stop = Arc::clone(&stop);
                let watch = watch.clone();
                std::thread::spawn(move || {
                    let mut times = Vec::new();
                    let mut round = 0u64;
                    while !stop.load(Ordering::Relaxed) && round < 100_000 {
                        // Half the clients are normal, the other half hostile.
                        if i % 2 == 0 {
                            times.push(normal(addr, round, &watch));
                            std::thread::sleep(Duration::from_millis(20));
                        } else {
                            hostile(addr, (i / 2) % 5, round, &stop);
                        }
                        round += 1;
                    }
                    times
                })
            })
            .collect();
        let started = Instant::now();
        let mut updates = Vec::new();
        while started.elapsed() < run {
            game.advance(Duration::from_millis(16));
            let t = Instant::now();
            inspector.update(&mut game);
            updates.push(t.elapsed());
            std::thread::sleep(Duration::from_millis(4));
        }
        stop.store(true, Ordering::Relaxed);
        // The clients finish their last round while the game still runs.
        let mut frames = 0;
        while clients.iter().any(|c| !c.is_finished()) && frames < 20_000 {
            game.advance(Duration::from_millis(16));
            inspector.update(&mut game);
            std::thread::sleep(Duration::from_millis(1));
            frames += 1;
        }
        let mut times: Vec<Duration> = clients.into_iter().flat_map(|c| c.join().unwrap()).collect();
        times.sort();
        updates.sort();
        let pick = |v: &[Duration], q: f64| v[((v.len() - 1) as f64 * q) as usize];
        eprintln!(
            "soak of {run:?}: {} normal calls (median {:?}, p99 {:?}, max {:?}); {} updates (median {:?}, p99 {:?}, p99.9 {:?}, max {:?})",
            times.len(),
            pick(&times, 0.5),
            pick(&times, 0.99),
            pick(&times, 1.0),
            updates.len(),
            pick(&updates, 0.5),
            pick(&updates, 0.99),
            pick(&updates, 0.999),
            pick(&updates, 1.0),
        );
        assert!(times.len() > 100, "only {} normal calls", times.len());
        assert!(pick(&times, 1.0) <= NORMAL_BOUND, "a normal call waited {:?}", pick(&times, 1.0));
        assert!(
            pick(&updates, 0.999) <= BUDGET + UPDATE_MARGIN,
            "one update in a thousand took {:?}",
            pick(&updates, 0.999)
        );
        assert!(pick(&updates, 1.0) < UPDATE_STALL, "an update took {:?}", pick(&updates, 1.0));
        game.world().check_invariants().unwrap();
    }
}
