//! Several clients at once, slow and broken ones among them, and the
//! budget per frame: the game thread answers between frames and no client
//! can stall it.

mod support;

use std::io::Write;
use std::net::TcpStream;
use std::time::Duration;

use archetable_inspect::{codes, Inspector};
use serde_json::json;
use support::*;

#[test]
fn with_no_budget_each_update_answers_one_request() {
    let (mut game, _) = game();
    let mut inspector = Inspector::start(config().budget(Duration::ZERO)).unwrap();
    let addr = inspector.addr();
    let clients: Vec<_> =
        (0..5).map(|_| std::thread::spawn(move || ok(addr, "loop.status", json!({}))["entities"].clone())).collect();
    // No frame runs until all five wait for the game.
    eventually("five waiting requests", || inspector.waiting() == 5);
    for answered in 1..=5 {
        inspector.update(&mut game);
        assert_eq!((inspector.answered(), inspector.waiting()), (answered, 5 - answered));
    }
    for client in clients {
        assert_eq!(client.join().unwrap(), json!(8));
    }
}

#[test]
fn with_no_budget_a_batch_takes_one_call_per_update() {
    let (mut game, _) = game();
    let mut inspector = Inspector::start(config().budget(Duration::ZERO)).unwrap();
    let addr = inspector.addr();
    let client = std::thread::spawn(move || {
        let calls: Vec<_> =
            (0..3).map(|i| json!({ "jsonrpc": "2.0", "id": i, "method": "world.query", "params": {} })).collect();
        post(addr, &json!(calls)).json()
    });
    eventually("the batch waiting", || inspector.waiting() == 1);
    for answered in [0, 0, 1] {
        inspector.update(&mut game);
        assert_eq!((inspector.answered(), inspector.waiting()), (answered, 1 - answered));
    }
    let answers = client.join().unwrap();
    assert_eq!(
        answers.as_array().unwrap().iter().map(|a| a["result"]["total"].clone()).collect::<Vec<_>>(),
        [json!(8), json!(8), json!(8)]
    );
}

#[test]
fn a_game_that_stops_updating_gets_timeouts_not_hangs() {
    let inspector = Inspector::start(config().answer_timeout(Duration::from_millis(200))).unwrap();
    let error = err(inspector.addr(), "loop.status", json!({}));
    assert_eq!(error["code"], json!(codes::NO_ANSWER));
    // Methods that need no world still answer.
    assert_eq!(ok(inspector.addr(), "rpc.discover", json!({}))["methods"][0]["name"], json!("rpc.discover"));
}

#[test]
fn several_clients_and_a_slow_one() {
    let (mut game, scene) = game();
    let mut inspector = Inspector::start(config()).unwrap();
    let addr = inspector.addr();
    // A client that sends its head and part of its body, then stalls
    // until the others are done.
    let (done_send, done_recv) = std::sync::mpsc::channel::<()>();
    let slow = std::thread::spawn(move || {
        let mut stream = TcpStream::connect(addr).unwrap();
        let head =
            format!("POST / HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n");
        stream.write_all(head.as_bytes()).unwrap();
        stream.write_all(br#"{"jsonrpc": "2.0", "#).unwrap();
        let _ = done_recv.recv_timeout(Duration::from_secs(120));
        drop(stream); // Goes away mid-body.
    });
    let a = scene.movers[0];
    let results = drive(&mut game, &mut inspector, move |addr| {
        let workers: Vec<_> = (0..4u32)
            .map(|i| {
                std::thread::spawn(move || {
                    let mut last = json!(null);
                    for j in 0..20u32 {
                        let health = i * 100 + j;
                        ok(
                            addr,
                            "world.insert_components",
                            json!({ "entity": h(a), "components": { "Health": health } }),
                        );
                        last = ok(addr, "world.get_components", json!({ "entity": h(a), "components": ["Health"] }));
                    }
                    last
                })
            })
            .collect();
        let results: Vec<_> = workers.into_iter().map(|w| w.join().unwrap()).collect();
        done_send.send(()).unwrap();
        results
    });
    slow.join().unwrap();
    // Every client's last read is some client's write of round 19 or
    // later writes of others; all 160 calls were answered.
    for result in &results {
        let health = result["components"]["Health"].as_u64().unwrap();
        assert!(health % 100 <= 19 && health / 100 < 4, "{health}");
    }
    let last = game.world().get::<Health>(a).unwrap().0;
    assert_eq!(last % 100, 19, "the last write of whichever client wrote last");
    assert!(inspector.answered() >= 160);
    game.world().check_invariants().unwrap();
}

#[test]
fn garbage_at_any_byte_and_hang_ups_change_nothing() {
    let (mut game, scene) = game();
    let mut inspector = Inspector::start(config()).unwrap();
    let a = scene.movers[0];
    let good = format!(
        "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 87\r\n\r\n{}",
        json!({ "jsonrpc": "2.0", "id": 1, "method": "world.insert_components",
                "params": { "entity": h(a), "components": { "Health": 5 } } })
    );
    let outcome = drive(&mut game, &mut inspector, move |addr| {
        let bytes = good.as_bytes();
        let mut statuses = Vec::new();
        // Every prefix, cut off where the client hangs up...
        for cut in (0..bytes.len()).step_by(7) {
            let mut stream = TcpStream::connect(addr).unwrap();
            let _ = stream.write_all(&bytes[..cut]);
        }
        // ...and each byte replaced by garbage.
        for at in (0..bytes.len()).step_by(5) {
            let mut broken = bytes.to_vec();
            broken[at] = [0xff, b'\n', b'{', 0][at % 4];
            let reply = raw(addr, &broken);
            statuses.push(reply.get(9..12).map(|s| String::from_utf8_lossy(s).into_owned()));
        }
        // A long poll whose client hangs up before the answer.
        let watch = ok(addr, "watch.start", json!({ "kind": "stats" }))["watch"].clone();
        {
            let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "watch.poll",
                               "params": { "watch": watch, "after": 1_000_000, "timeout_ms": 3000 } })
            .to_string();
            let mut stream = TcpStream::connect(addr).unwrap();
            let head = format!(
                "POST / HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
                body.len()
            );
            stream.write_all(head.as_bytes()).unwrap();
            stream.write_all(body.as_bytes()).unwrap();
        }
        let after = ok(addr, "world.get_components", json!({ "entity": h(a), "components": ["Health"] }));
        (statuses, after)
    });
    let (statuses, after) = outcome;
    // Each broken request got an HTTP answer or a closed connection; none
    // took the server down, and the last call was answered.
    assert!(statuses.iter().flatten().all(|s| s.starts_with('2') || s.starts_with('4') || s.starts_with('5')));
    // Whether an edit with a broken byte went in depends on the byte; the
    // world is consistent either way, and Health is 5 or absent.
    let health = game.world().get::<Health>(a).map(|h| h.0);
    assert!(matches!(health, None | Some(5)), "{health:?}");
    assert_eq!(after["components"].get("Health").and_then(|v| v.as_u64()).map(|v| v as u32), health);
    game.world().check_invariants().unwrap();
}

#[test]
fn dropping_the_inspector_answers_the_calls_it_held() {
    let inspector = Inspector::start(config().answer_timeout(Duration::from_secs(600))).unwrap();
    let addr = inspector.addr();
    let client = std::thread::spawn(move || err(addr, "world.list_tables", json!({})));
    eventually("the call waiting", || inspector.waiting() == 1);
    drop(inspector);
    let error = client.join().unwrap();
    assert_eq!(error["code"], json!(codes::NO_ANSWER));
    assert_eq!(error["message"], json!("the inspector stopped before the game answered"));
}
