//! The HTTP side, on threads of its own: `tiny_http` parses requests; our
//! workers check them (token, host, size, content type), answer what needs
//! no world (the page, `rpc.discover`, `watch.poll`), and hand every other
//! call to the game thread through a bounded queue, waiting for its answer
//! with a timeout. The game thread only ever `try_recv`s that queue, so no
//! client can stall it.

use std::io::Read;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use serde_json::Value;
use tiny_http::{Header, Method, Request, Response, Server};

use crate::rpc::{self, codes, Call, Parsed, RpcError};
use crate::watch::{self, Watches};

/// The page, served at `/`.
pub(crate) const PAGE: &str = include_str!("page.html");

/// The limits a server keeps.
#[derive(Clone, Debug)]
pub(crate) struct Limits {
    pub max_body: usize,
    pub max_response: usize,
    pub workers: usize,
    pub answer_timeout: Duration,
    pub max_watches: usize,
    pub queue: usize,
    pub token: Option<String>,
    /// The server listens on a loopback address: requests must name it
    /// (or `localhost`) as their host.
    pub loopback: bool,
    pub port: u16,
}

/// What the server threads and the game thread share.
pub(crate) struct Shared {
    stop: AtomicBool,
    /// Counts requests, so the game thread can tell cheaply whether a
    /// client is around.
    pub requests: AtomicU64,
    pub watches: Mutex<Watches>,
    pub watch_signal: Condvar,
    pub watch_count: AtomicUsize,
    /// Long polls waiting now.
    pub polling: AtomicUsize,
    /// Jobs handed to the game thread, and jobs it answered.
    pub jobs_sent: AtomicU64,
    pub jobs_done: AtomicU64,
    pub limits: Limits,
}

impl Shared {
    pub fn new(limits: Limits) -> Shared {
        Shared {
            stop: AtomicBool::new(false),
            requests: AtomicU64::new(0),
            watches: Mutex::new(Watches::default()),
            watch_signal: Condvar::new(),
            watch_count: AtomicUsize::new(0),
            polling: AtomicUsize::new(0),
            jobs_sent: AtomicU64::new(0),
            jobs_done: AtomicU64::new(0),
            limits,
        }
    }

    pub fn is_stopping(&self) -> bool {
        self.stop.load(Ordering::Acquire)
    }

    pub fn stop(&self) {
        self.stop.store(true, Ordering::Release);
        let _guard = self.watches.lock();
        self.watch_signal.notify_all();
    }
}

/// Calls for the game thread, and where to send their answers.
pub(crate) struct Job {
    pub calls: Vec<Call>,
    pub reply: SyncSender<Vec<Result<Value, RpcError>>>,
}

/// The game thread's end of the queue.
pub(crate) type Jobs = Receiver<Job>;

/// Starts the worker threads.
pub(crate) fn spawn_workers(
    server: Arc<Server>,
    shared: Arc<Shared>,
) -> std::io::Result<(Jobs, Vec<std::thread::JoinHandle<()>>)> {
    let (send, jobs) = mpsc::sync_channel(shared.limits.queue);
    let mut handles = Vec::new();
    for i in 0..shared.limits.workers {
        let server = Arc::clone(&server);
        let shared = Arc::clone(&shared);
        let send = send.clone();
        let handle = std::thread::Builder::new().name(format!("inspector-http-{i}")).spawn(move || {
            while !shared.is_stopping() {
                match server.recv_timeout(Duration::from_millis(100)) {
                    Ok(Some(request)) => handle(request, &shared, &send),
                    Ok(None) => {}
                    Err(_) => break,
                }
            }
        })?;
        handles.push(handle);
    }
    Ok((jobs, handles))
}

fn header(name: &str, value: &str) -> Header {
    Header::from_bytes(name.as_bytes(), value.as_bytes()).expect("a valid header")
}

fn json_response(status: u16, body: String) -> Response<std::io::Cursor<Vec<u8>>> {
    Response::from_data(body.into_bytes())
        .with_status_code(status)
        .with_header(header("Content-Type", "application/json"))
        .with_header(header("Cache-Control", "no-store"))
}

/// An HTTP-level refusal, as a JSON-RPC error without an id.
fn refuse(request: Request, status: u16, code: i64, message: &str) {
    let body = rpc::response(Value::Null, Err(RpcError::new(code, message))).to_string();
    let _ = request.respond(json_response(status, body));
}

fn header_value<'r>(request: &'r Request, name: &'static str) -> Option<&'r str> {
    request.headers().iter().find(|h| h.field.equiv(name)).map(|h| h.value.as_str())
}

/// Compares in time independent of where the strings differ.
fn same_secret(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn authorized(request: &Request, query: &str, limits: &Limits) -> bool {
    let Some(token) = &limits.token else { return true };
    if let Some(bearer) = header_value(request, "Authorization").and_then(|v| v.strip_prefix("Bearer ")) {
        return same_secret(bearer.trim(), token);
    }
    query.split('&').filter_map(|kv| kv.strip_prefix("token=")).any(|given| same_secret(given, token))
}

/// On a loopback address, the `Host` must be a loopback name: a page of
/// another site that rebinds its own name to 127.0.0.1 gets nothing.
fn host_allowed(request: &Request, limits: &Limits) -> bool {
    if !limits.loopback || limits.token.is_some() {
        return true;
    }
    let Some(host) = header_value(request, "Host") else { return false };
    let name = match host.rsplit_once(':') {
        Some((name, port)) if port.parse() == Ok(limits.port) => name,
        Some((_, _)) if host.ends_with(']') => host,
        Some(_) => return false,
        None => host,
    };
    matches!(name, "127.0.0.1" | "localhost" | "[::1]")
}

fn handle(mut request: Request, shared: &Shared, jobs: &SyncSender<Job>) {
    shared.requests.fetch_add(1, Ordering::AcqRel);
    let url = request.url().to_owned();
    let (path, query) = url.split_once('?').unwrap_or((&url, ""));
    if !authorized(&request, query, &shared.limits) {
        return refuse(request, 401, codes::UNAUTHORIZED, "this server needs its token: `Authorization: Bearer TOKEN`");
    }
    if !host_allowed(&request, &shared.limits) {
        return refuse(request, 403, codes::UNAUTHORIZED, "the Host header does not name this server");
    }
    match (request.method(), path) {
        (Method::Get | Method::Head, "/" | "/index.html") => {
            let response = Response::from_data(PAGE.as_bytes().to_vec())
                .with_header(header("Content-Type", "text/html; charset=utf-8"))
                .with_header(header("Cache-Control", "no-store"));
            let _ = request.respond(response);
        }
        (Method::Post, "/" | "/rpc") => {
            let json_body = header_value(&request, "Content-Type")
                .is_some_and(|v| v.trim_start().to_ascii_lowercase().starts_with("application/json"));
            if !json_body {
                return refuse(
                    request,
                    415,
                    codes::INVALID_REQUEST,
                    "send the request as Content-Type: application/json",
                );
            }
            let max = shared.limits.max_body;
            if request.body_length().is_some_and(|n| n > max) {
                return refuse(request, 413, codes::TOO_LARGE, &format!("the body is larger than {max} bytes"));
            }
            let mut body = Vec::new();
            let read = request.as_reader().take(max as u64 + 1).read_to_end(&mut body);
            if read.is_err() {
                return; // The client went away.
            }
            if body.len() > max {
                return refuse(request, 413, codes::TOO_LARGE, &format!("the body is larger than {max} bytes"));
            }
            match answer(&body, shared, jobs) {
                Some(text) => {
                    let _ = request.respond(json_response(200, text));
                }
                None => {
                    let _ = request.respond(Response::empty(204));
                }
            }
        }
        (_, "/" | "/index.html" | "/rpc") => {
            let _ = request.respond(Response::empty(405).with_header(header("Allow", "GET, POST")));
        }
        _ => {
            let _ = request.respond(Response::from_string("not found").with_status_code(404));
        }
    }
}

/// The whole JSON-RPC exchange for one body: the response text, or `None`
/// when the body held only notifications. Public to the crate for the
/// fuzz entry point.
pub(crate) fn answer(body: &[u8], shared: &Shared, jobs: &SyncSender<Job>) -> Option<String> {
    let (entries, batch) = match rpc::parse(body) {
        Ok(Parsed::Single(entry)) => (vec![entry], false),
        Ok(Parsed::Batch(entries)) => (entries, true),
        Err(error) => return Some(rpc::response(Value::Null, Err(error)).to_string()),
    };
    // Each entry's answer, or its place in the game's job.
    let mut results: Vec<Option<Result<Value, RpcError>>> = Vec::with_capacity(entries.len());
    let mut ids: Vec<Option<Value>> = Vec::with_capacity(entries.len());
    let mut game_calls = Vec::new();
    let mut game_slots = Vec::new();
    for entry in entries {
        match entry {
            Err((id, error)) => {
                ids.push(Some(id));
                results.push(Some(Err(error)));
            }
            Ok(call) => {
                ids.push(call.id.clone());
                match call.method.as_str() {
                    "rpc.discover" => results.push(Some(Ok(rpc::discover()))),
                    "watch.poll" => results.push(Some(watch::poll(shared, &call.params))),
                    "watch.stop" => results.push(Some(watch::stop(shared, &call.params))),
                    _ => {
                        game_slots.push(results.len());
                        results.push(None);
                        game_calls.push(call);
                    }
                }
            }
        }
    }
    if !game_calls.is_empty() {
        let answers = ask_game(game_calls, shared, jobs);
        for (slot, answer) in game_slots.into_iter().zip(answers) {
            results[slot] = Some(answer);
        }
    }
    // Notifications get no response.
    let mut out = Vec::new();
    let mut size = 2;
    let max = shared.limits.max_response;
    for (id, result) in ids.into_iter().zip(results) {
        let (Some(id), Some(result)) = (id, result) else { continue };
        let mut text = rpc::response(id.clone(), result).to_string();
        if size + text.len() + 1 > max {
            let error = RpcError::new(
                codes::TOO_LARGE,
                format!("the response would be larger than {max} bytes: ask for less (a smaller `limit`)"),
            );
            text = rpc::response(id, Err(error)).to_string();
        }
        size += text.len() + 1;
        out.push(text);
    }
    if out.is_empty() {
        None
    } else if batch {
        Some(format!("[{}]", out.join(",")))
    } else {
        out.pop()
    }
}

fn ask_game(calls: Vec<Call>, shared: &Shared, jobs: &SyncSender<Job>) -> Vec<Result<Value, RpcError>> {
    let n = calls.len();
    let all = |error: RpcError| vec![Err(error); n];
    let (reply, answers) = mpsc::sync_channel(1);
    // Counted before it can be answered, uncounted if it cannot be sent.
    shared.jobs_sent.fetch_add(1, Ordering::AcqRel);
    let sent = jobs.try_send(Job { calls, reply });
    if sent.is_err() {
        shared.jobs_sent.fetch_sub(1, Ordering::AcqRel);
    }
    match sent {
        Ok(()) => {}
        Err(TrySendError::Full(_)) => {
            return all(RpcError::new(codes::BUSY, "too many requests are waiting for the game; try again"));
        }
        Err(TrySendError::Disconnected(_)) => return all(RpcError::new(codes::NO_ANSWER, "the inspector stopped")),
    }
    match answers.recv_timeout(shared.limits.answer_timeout) {
        Ok(answers) if answers.len() == n => answers,
        Ok(_) => all(RpcError::new(codes::INTERNAL_ERROR, "the game answered another number of calls")),
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            all(RpcError::new(codes::NO_ANSWER, "the inspector stopped before the game answered"))
        }
        Err(mpsc::RecvTimeoutError::Timeout) => all(RpcError::new(
            codes::NO_ANSWER,
            format!(
                "the game did not answer within {:?} (is it calling Inspector::update each frame?)",
                shared.limits.answer_timeout
            ),
        )),
    }
}

/// The status a JSON-RPC answer is sent with, for tests.
#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn secrets_compare_whole() {
        assert!(same_secret("abc", "abc"));
        assert!(!same_secret("abc", "abd"));
        assert!(!same_secret("abc", "abcd"));
        assert!(!same_secret("", "a"));
    }

    #[test]
    fn a_body_of_notifications_gets_no_response() {
        let shared = Shared::new(Limits {
            max_body: 1024,
            max_response: 1024,
            workers: 2,
            answer_timeout: Duration::from_millis(10),
            max_watches: 1,
            queue: 1,
            token: None,
            loopback: true,
            port: 1,
        });
        let (send, _jobs) = mpsc::sync_channel(1);
        assert_eq!(answer(br#"{"jsonrpc":"2.0","method":"rpc.discover"}"#, &shared, &send), None);
        let text = answer(
            br#"[{"jsonrpc":"2.0","method":"rpc.discover"},{"jsonrpc":"2.0","id":7,"method":"nope.x"}]"#,
            &shared,
            &send,
        )
        .unwrap();
        let value: Value = serde_json::from_str(&text).unwrap();
        // The unknown method goes to the game, which does not answer here.
        assert_eq!(value[0]["id"], json!(7));
        assert_eq!(value[0]["error"]["code"], json!(codes::NO_ANSWER));
    }
}
