//! The live inspector's cost per frame: `Inspector::update` on a game loop
//! (four stages, a system in each), with no client (what a game pays for
//! leaving the inspector on), and with a client like the page (a watch of
//! the frame figures, and calls). archetable only.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use archetable::{GameLoop, Res, Stage, Time};
use archetable_inspect::{Inspector, InspectorConfig};

use crate::routine::Steady;
use crate::Routine;

fn started() -> (GameLoop, Inspector) {
    let mut game = GameLoop::new();
    for stage in [Stage::FixedUpdate, Stage::Update, Stage::LateUpdate] {
        game.add_system(stage, |time: Res<Time>| {
            std::hint::black_box(time.delta());
        });
    }
    game.startup();
    let inspector = Inspector::start(InspectorConfig::new().port(0)).expect("start the inspector on a free port");
    (game, inspector)
}

/// `Inspector::update` with no client connected.
pub fn update_idle() -> Box<dyn Routine> {
    Box::new(Steady::new(started(), |(game, inspector): &mut (GameLoop, Inspector)| inspector.update(game)))
}

/// A client as the inspector's page is one: it watches the frame figures
/// (a `stats` watch, long-polled), which keeps the inspector awake and
/// recording every frame, and asks for the loop's status between polls.
struct Client {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// One call; the response, or `None` once the server is gone.
fn call(addr: SocketAddr, method: &str, params: serde_json::Value) -> Option<serde_json::Value> {
    let body = serde_json::json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params }).to_string();
    let request = format!(
        "POST / HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nConnection: close\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut stream = TcpStream::connect(addr).ok()?;
    stream.write_all(request.as_bytes()).ok()?;
    let mut reply = Vec::new();
    stream.read_to_end(&mut reply).ok()?;
    let split = reply.windows(4).position(|w| w == b"\r\n\r\n")?;
    serde_json::from_slice::<serde_json::Value>(&reply[split + 4..]).ok()?.get("result").cloned()
}

impl Client {
    fn start(addr: SocketAddr) -> Client {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            let Some(started) = call(addr, "watch.start", serde_json::json!({ "kind": "stats" })) else { return };
            let watch = started["watch"].clone();
            let mut after = 0;
            while !flag.load(Ordering::Relaxed) {
                let params = serde_json::json!({ "watch": watch, "after": after, "timeout_ms": 100 });
                let Some(got) = call(addr, "watch.poll", params) else { break };
                after = got["last"].as_u64().unwrap_or(after);
                if call(addr, "loop.status", serde_json::json!({})).is_none() {
                    break;
                }
            }
        });
        Client { stop, thread: Some(thread) }
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// `Inspector::update` with a client like the page: frame figures
/// recorded and fed to its watch every frame, its calls answered as they
/// come.
pub fn update_with_client() -> Box<dyn Routine> {
    let (mut game, mut inspector) = started();
    let client = Client::start(inspector.addr());
    // Until the watch is open, so that every timed frame has the client.
    while inspector.answered() == 0 {
        inspector.update(&mut game);
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    // The client is dropped before the inspector, which it waits on.
    Box::new(Steady::new((client, game, inspector), |(_, game, inspector): &mut (Client, GameLoop, Inspector)| {
        inspector.update(game)
    }))
}
