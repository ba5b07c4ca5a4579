//! A small game to inspect, a game thread that drives it while clients
//! talk to it, and a minimal HTTP/1.1 client over a loopback socket.

#![allow(dead_code)] // Each test file uses part of it.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use archetable_core::{ChildOf, Commands, Entity, GameLoop, Query, Res, ResMut, Stage, World};
use archetable_inspect::{Inspector, InspectorConfig};
use archetable_macros::Component;
use archetable_serde::SerdeWorldExt;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{json, Value};

#[derive(Component, Serialize, Deserialize, Default, Debug, PartialEq, Clone, Copy)]
pub struct Position {
    pub x: f32,
    pub y: f32,
}

#[derive(Component, Serialize, Deserialize, Default, Debug, PartialEq, Clone, Copy)]
pub struct Velocity {
    pub x: f32,
    pub y: f32,
}

#[derive(Component, Serialize, Deserialize, Default, Debug, PartialEq, Clone, Copy)]
pub struct Health(pub u32);

/// Not registered with serde: listed by name and size, read-only.
#[derive(Component, Debug, PartialEq)]
pub struct Secret(pub u64);

/// Its `Deserialize` panics on 666.
#[derive(Component, Serialize, Default, Debug, PartialEq)]
pub struct Grumpy(pub u32);

impl<'de> Deserialize<'de> for Grumpy {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let n = u32::deserialize(deserializer)?;
        assert!(n != 666, "grumpy refuses 666");
        Ok(Grumpy(n))
    }
}

/// Its `on_insert` hook panics when the value is 13.
#[derive(Component, Serialize, Deserialize, Default, Debug, PartialEq)]
pub struct Fragile(pub u32);

/// Holds a handle: handles are written as "3v1".
#[derive(Component, Serialize, Deserialize, Debug, PartialEq)]
pub struct Target(pub Entity);

#[derive(Serialize, Deserialize, Default, Debug, PartialEq)]
pub struct Score {
    pub points: u32,
}

/// Not registered with serde.
#[derive(Default, Debug)]
pub struct Hidden(pub u32);

/// Counts frames of game time (stops while paused).
#[derive(Serialize, Deserialize, Default, Debug)]
pub struct Ticks(pub u64);

/// Counts every frame (a `.debug()` system: runs while paused too).
#[derive(Serialize, Deserialize, Default, Debug)]
pub struct DebugTicks(pub u64);

/// The handles of the scene.
#[derive(Clone, Copy, Debug)]
pub struct Scene {
    pub movers: [Entity; 3],
    pub still: Entity,
    pub secret: Entity,
    pub root: Entity,
    pub child: Entity,
    pub grandchild: Entity,
}

fn tick(mut ticks: ResMut<Ticks>) {
    ticks.0 += 1;
}

fn debug_tick(mut ticks: ResMut<DebugTicks>) {
    ticks.0 += 1;
}

fn movement(mut q: Query<(&mut Position, &Velocity)>, _score: Res<Score>) {
    for (mut p, v) in q.iter_mut() {
        p.x += v.x * 0.0;
        p.y += v.y * 0.0;
    }
}

fn nothing(_commands: Commands) {}

/// A game loop with: three movers (Position + Velocity, one with Health),
/// a still entity (Position only), one with a Secret, a three-level tree,
/// the resources Score (registered) and Hidden (not), and systems that
/// count frames.
pub fn game() -> (GameLoop, Scene) {
    let mut game = GameLoop::single_threaded();
    let world = game.world_mut();
    world
        .register_serde::<Position>("Position")
        .register_serde::<Velocity>("Velocity")
        .register_serde::<Health>("Health")
        .register_serde::<Grumpy>("Grumpy")
        .register_serde::<Fragile>("Fragile")
        .register_serde_without_default::<Target>("Target")
        .register_serde_resource::<Score>("Score")
        .register_serde_resource::<Ticks>("Ticks")
        .register_serde_resource::<DebugTicks>("DebugTicks");
    world.register_component_hooks::<Fragile>().on_insert(|world, entity| {
        assert!(world.get::<Fragile>(entity).map(|f| f.0) != Some(13), "fragile breaks on 13");
    });
    world.insert_resource(Score { points: 7 });
    world.insert_resource(Hidden(1));
    world.init_resource::<Ticks>();
    world.init_resource::<DebugTicks>();
    let movers = [
        world.spawn((Position { x: 1.0, y: 2.0 }, Velocity { x: 0.5, y: 0.0 })),
        world.spawn((Position { x: 3.0, y: 4.0 }, Velocity { x: 0.0, y: 1.0 }, Health(10))),
        world.spawn((Position { x: 5.0, y: 6.0 }, Velocity { x: 1.0, y: 1.0 })),
    ];
    let still = world.spawn(Position { x: 9.0, y: 9.0 });
    let secret = world.spawn(Secret(42));
    let root = world.spawn(Health(1));
    let child = world.spawn((Health(2), ChildOf(root)));
    let grandchild = world.spawn((Health(3), ChildOf(child)));
    game.add_system(Stage::Update, tick);
    game.add_system(Stage::Update, movement);
    game.add_system(Stage::LateUpdate, debug_tick).debug();
    game.add_system(Stage::FixedUpdate, nothing);
    (game, Scene { movers, still, secret, root, child, grandchild })
}

pub fn config() -> InspectorConfig {
    InspectorConfig::new().port(0)
}

/// The most frames a test runs: a safety net, never reached when the
/// test passes.
pub const MAX_FRAMES: u64 = 200_000;

/// Runs `client` on its own thread against `inspector` while this thread
/// runs the game's frames (a millisecond apart), until the client is done;
/// returns what it returned.
pub fn drive<R: Send + 'static>(
    game: &mut GameLoop,
    inspector: &mut Inspector,
    client: impl FnOnce(SocketAddr) -> R + Send + 'static,
) -> R {
    let addr = inspector.addr();
    let handle = std::thread::spawn(move || client(addr));
    let mut frames = 0;
    while !handle.is_finished() {
        game.advance(Duration::from_millis(16));
        inspector.update(game);
        std::thread::sleep(Duration::from_millis(1));
        frames += 1;
        assert!(frames < MAX_FRAMES, "the client did not finish");
    }
    handle.join().expect("the client thread panicked")
}

/// An HTTP response: status, headers (lower-case names), body.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.text()))
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

/// Sends raw bytes, reads until the server closes the connection.
pub fn raw(addr: SocketAddr, bytes: &[u8]) -> Vec<u8> {
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    stream.write_all(bytes).expect("write");
    // Nothing more comes: a request cut short ends here for the server too.
    let _ = stream.shutdown(std::net::Shutdown::Write);
    let mut out = Vec::new();
    let _ = stream.read_to_end(&mut out);
    out
}

/// One HTTP/1.1 request with `Connection: close`.
pub fn http(addr: SocketAddr, method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Reply {
    let mut request = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    let mut bytes = request.into_bytes();
    bytes.extend_from_slice(body);
    parse_reply(&raw(addr, &bytes))
}

pub fn parse_reply(bytes: &[u8]) -> Reply {
    let split = bytes.windows(4).position(|w| w == b"\r\n\r\n").expect("a complete head");
    let head = String::from_utf8_lossy(&bytes[..split]).into_owned();
    let mut lines = head.split("\r\n");
    let status = lines.next().unwrap().split(' ').nth(1).unwrap().parse().unwrap();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let mut body = bytes[split + 4..].to_vec();
    if headers.iter().any(|(n, v)| n == "transfer-encoding" && v == "chunked") {
        body = unchunk(&body);
    }
    Reply { status, headers, body }
}

fn unchunk(mut data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let end = data.windows(2).position(|w| w == b"\r\n").unwrap();
        let size = usize::from_str_radix(std::str::from_utf8(&data[..end]).unwrap().trim(), 16).unwrap();
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&data[end + 2..end + 2 + size]);
        data = &data[end + 4 + size..];
    }
}

/// POSTs a JSON body.
pub fn post(addr: SocketAddr, body: &Value) -> Reply {
    http(addr, "POST", "/", &[("Content-Type", "application/json")], body.to_string().as_bytes())
}

/// One call: the whole response object.
pub fn call(addr: SocketAddr, method: &str, params: Value) -> Value {
    let reply = post(addr, &json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params }));
    assert_eq!(reply.status, 200, "{}", reply.text());
    reply.json()
}

/// One call that must succeed: its result.
pub fn ok(addr: SocketAddr, method: &str, params: Value) -> Value {
    let response = call(addr, method, params);
    assert!(response.get("error").is_none(), "{method} failed: {response}");
    response["result"].clone()
}

/// One call that must fail: its error object.
pub fn err(addr: SocketAddr, method: &str, params: Value) -> Value {
    let response = call(addr, method, params);
    assert!(response.get("result").is_none(), "{method} should have failed: {response}");
    response["error"].clone()
}

/// Waits (a bounded number of short sleeps) until `f` holds.
pub fn eventually(what: &str, mut f: impl FnMut() -> bool) {
    let start = Instant::now();
    while !f() {
        assert!(start.elapsed() < Duration::from_secs(60), "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The entity handles of a query result, in order.
pub fn handles(result: &Value) -> Vec<String> {
    result["entities"].as_array().unwrap().iter().map(|e| e["entity"].as_str().unwrap().to_owned()).collect()
}

pub fn h(entity: Entity) -> String {
    entity.to_string()
}

/// A world's `Position` of `entity`.
pub fn position(world: &World, entity: Entity) -> Option<Position> {
    world.get::<Position>(entity).copied()
}
