//! The inspector's requests, as the HTTP front (`front.rs`) hands them
//! over: checks (token, host and origin, size, content type), answers to
//! what needs no world (the page, `rpc.discover`, `watch.poll`), and every
//! other call handed to the game thread through a bounded queue, its answer
//! awaited with a timeout. The game thread only ever `try_recv`s that
//! queue, so no client can stall it.

use std::convert::Infallible;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Body, Bytes, Incoming};
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::Value;
use tokio::sync::{oneshot, Notify};

use crate::methods::Answer;
use crate::rpc::{self, codes, Call, Parsed, RpcError};
use crate::watch::{self, Watches};

/// The page, served at `/`.
pub(crate) const PAGE: &str = include_str!("page.html");

/// What the page may load and who may frame it: nothing from elsewhere,
/// no frame around it, no form or base address that leaves it.
pub(crate) const PAGE_POLICY: &str = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; \
     connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// The limits a server keeps.
#[derive(Clone, Debug)]
pub(crate) struct Limits {
    pub max_body: usize,
    pub max_response: usize,
    pub max_connections: usize,
    pub header_timeout: Duration,
    pub body_timeout: Duration,
    pub write_timeout: Duration,
    pub answer_timeout: Duration,
    pub max_watches: usize,
    pub queue: usize,
    pub token: Option<String>,
    /// The server listens on a loopback address: requests must name it
    /// (or `localhost`) as their host.
    pub loopback: bool,
    pub port: u16,
}

/// What the server thread and the game thread share.
pub(crate) struct Shared {
    stop: AtomicBool,
    /// Counts requests, so the game thread can tell cheaply whether a
    /// client is around.
    pub requests: AtomicU64,
    pub watches: Mutex<Watches>,
    pub watch_signal: Notify,
    pub watch_count: AtomicUsize,
    /// Query watches open now (run by the game on their own schedule).
    pub query_watches: AtomicUsize,
    /// A stats watch was polled and waits for the frames since its last
    /// feed.
    pub stats_polled: AtomicBool,
    /// Connections open now.
    pub connections: AtomicUsize,
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
            watch_signal: Notify::new(),
            watch_count: AtomicUsize::new(0),
            query_watches: AtomicUsize::new(0),
            stats_polled: AtomicBool::new(false),
            connections: AtomicUsize::new(0),
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
        self.watch_signal.notify_waiters();
    }
}

/// Calls for the game thread, and where to send their answers.
pub(crate) struct Job {
    pub calls: Vec<Call>,
    pub reply: oneshot::Sender<Vec<Result<Answer, RpcError>>>,
}

/// The game thread's end of the queue.
pub(crate) type Jobs = Receiver<Job>;
/// The server's end of the queue.
pub(crate) type Sender = SyncSender<Job>;

/// The queue between the server and the game thread.
pub(crate) fn queue(limits: &Limits) -> (Sender, Jobs) {
    mpsc::sync_channel(limits.queue)
}

type Reply = Response<Full<Bytes>>;

fn reply(status: StatusCode, content_type: &'static str, body: impl Into<Bytes>) -> Reply {
    let mut response = Response::new(Full::new(body.into()));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    response
}

fn json_reply(status: StatusCode, body: String) -> Reply {
    reply(status, "application/json", body)
}

/// An HTTP-level refusal, as a JSON-RPC error without an id.
fn refuse(status: StatusCode, code: i64, message: &str) -> Reply {
    json_reply(status, rpc::response(Value::Null, Err(RpcError::new(code, message))).to_string())
}

/// A refusal after which the connection is closed: the body that was not
/// read is never read.
fn refuse_and_close(status: StatusCode, code: i64, message: &str) -> Reply {
    let mut response = refuse(status, code, message);
    response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

fn header_str(headers: &HeaderMap, name: header::HeaderName) -> Option<&str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// Whether `given` is `secret`, in a time that depends on the secret's
/// length only (not on where, or whether, the two differ).
pub(crate) fn same_secret(given: &[u8], secret: &[u8]) -> bool {
    let mut diff = u8::from(given.len() != secret.len());
    for (i, s) in secret.iter().enumerate() {
        diff |= s ^ given.get(i).copied().unwrap_or(!s);
    }
    diff == 0
}

/// Decodes one `application/x-www-form-urlencoded` value (`%XX` escapes,
/// `+` for a space), the way the page's `URLSearchParams` reads it.
pub(crate) fn form_decode(text: &str) -> Option<Vec<u8>> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = bytes.get(i + 1..i + 3)?;
                let hex = std::str::from_utf8(hex).ok()?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            byte => {
                out.push(byte);
                i += 1;
            }
        }
    }
    Some(out)
}

/// With a token: `Authorization: Bearer TOKEN` (the scheme in any case),
/// or else `token=TOKEN` in the query, percent-decoded.
fn authorized(headers: &HeaderMap, query: &str, limits: &Limits) -> bool {
    let Some(token) = &limits.token else { return true };
    if let Some(value) = headers.get(header::AUTHORIZATION) {
        // As bytes: a token may hold any UTF-8, which is not a visible
        // ASCII header string.
        let value = value.as_bytes().trim_ascii();
        let split = value.iter().position(|b| *b == b' ').unwrap_or(value.len());
        let (scheme, given) = value.split_at(split);
        return scheme.eq_ignore_ascii_case(b"bearer") && same_secret(given.trim_ascii(), token.as_bytes());
    }
    query
        .split('&')
        .filter_map(|kv| kv.strip_prefix("token="))
        .any(|given| form_decode(given).is_some_and(|given| same_secret(&given, token.as_bytes())))
}

/// The name in a `Host` value, if its port (when it names one) is this
/// server's.
fn host_name(host: &str, port: u16) -> Option<&str> {
    let (name, given_port) = match host.strip_prefix('[') {
        Some(rest) => {
            let end = rest.find(']')? + 2;
            (&host[..end], host[end..].strip_prefix(':'))
        }
        None => match host.rsplit_once(':') {
            Some((name, p)) => (name, Some(p)),
            None => (host, None),
        },
    };
    match given_port {
        Some(p) if p.parse() != Ok(port) => None,
        _ => Some(name),
    }
}

fn loopback_name(name: &str) -> bool {
    matches!(name.to_ascii_lowercase().as_str(), "127.0.0.1" | "localhost" | "[::1]")
}

/// Requests must come from this server's own origin, with or without a
/// token: on a loopback address the `Host` must be a loopback name (a page
/// of another site that rebinds its own name to 127.0.0.1 gets nothing),
/// and an `Origin`, when a browser sends one, must be `http://` and the
/// `Host`.
fn origin_allowed(headers: &HeaderMap, limits: &Limits) -> Result<(), &'static str> {
    let host = header_str(headers, header::HOST);
    if limits.loopback && !host.and_then(|h| host_name(h, limits.port)).is_some_and(loopback_name) {
        return Err("the Host header does not name this server");
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let authority = origin.to_str().ok().and_then(|o| o.strip_prefix("http://"));
        if !authority.zip(host).is_some_and(|(a, h)| a.eq_ignore_ascii_case(h)) {
            return Err("the request comes from a page of another origin");
        }
    }
    Ok(())
}

/// The checks a request's head goes through before anything else, on
/// header values as the client sent them: the token (`Authorization`, or
/// `?token=` in `query`), then the `Host` and `Origin`. For the fuzz
/// target of the HTTP front; `None` when a value is not one `http` accepts
/// in a header.
pub(crate) fn admit(
    host: Option<&[u8]>,
    origin: Option<&[u8]>,
    authorization: Option<&[u8]>,
    query: &str,
    token: Option<&str>,
    loopback: bool,
    port: u16,
) -> Option<Result<(), &'static str>> {
    let mut headers = HeaderMap::new();
    for (name, value) in [(header::HOST, host), (header::ORIGIN, origin), (header::AUTHORIZATION, authorization)] {
        if let Some(value) = value {
            headers.insert(name, HeaderValue::from_bytes(value).ok()?);
        }
    }
    let limits = Limits {
        max_body: 0,
        max_response: 0,
        max_connections: 1,
        header_timeout: Duration::ZERO,
        body_timeout: Duration::ZERO,
        write_timeout: Duration::ZERO,
        answer_timeout: Duration::ZERO,
        max_watches: 0,
        queue: 1,
        token: token.map(str::to_owned),
        loopback,
        port,
    };
    if !authorized(&headers, query, &limits) {
        return Some(Err("unauthorized"));
    }
    Some(origin_allowed(&headers, &limits))
}

/// Reads a body of at most `max` bytes: refused from its `Content-Length`
/// before anything is read, cut off when it streams past `max`, and given
/// up when it has not all arrived within the body timeout.
async fn read_body(body: Incoming, limits: &Limits) -> Result<Bytes, Reply> {
    let max = limits.max_body;
    let too_large = || {
        refuse_and_close(
            StatusCode::PAYLOAD_TOO_LARGE,
            codes::TOO_LARGE,
            &format!("the body is larger than {max} bytes"),
        )
    };
    if body.size_hint().lower() > max as u64 {
        return Err(too_large());
    }
    match tokio::time::timeout(limits.body_timeout, Limited::new(body, max).collect()).await {
        Ok(Ok(collected)) => Ok(collected.to_bytes()),
        Ok(Err(error)) if error.is::<http_body_util::LengthLimitError>() => Err(too_large()),
        // The client went away or sent a broken chunk: this answer will
        // likely not reach it.
        Ok(Err(_)) => {
            Err(refuse_and_close(StatusCode::BAD_REQUEST, codes::INVALID_REQUEST, "the body could not be read"))
        }
        Err(_) => Err(refuse_and_close(
            StatusCode::REQUEST_TIMEOUT,
            codes::INVALID_REQUEST,
            &format!("the body did not arrive within {:?}", limits.body_timeout),
        )),
    }
}

/// Answers one request.
pub(crate) async fn handle(request: Request<Incoming>, shared: Arc<Shared>, jobs: Sender) -> Result<Reply, Infallible> {
    shared.requests.fetch_add(1, Ordering::AcqRel);
    let limits = &shared.limits;
    let (parts, body) = request.into_parts();
    let path = parts.uri.path();
    let query = parts.uri.query().unwrap_or("");
    if !authorized(&parts.headers, query, limits) {
        return Ok(refuse_and_close(
            StatusCode::UNAUTHORIZED,
            codes::UNAUTHORIZED,
            "this server needs its token: `Authorization: Bearer TOKEN`",
        ));
    }
    if let Err(why) = origin_allowed(&parts.headers, limits) {
        return Ok(refuse_and_close(StatusCode::FORBIDDEN, codes::UNAUTHORIZED, why));
    }
    Ok(match (&parts.method, path) {
        (&Method::GET | &Method::HEAD, "/" | "/index.html") => {
            let mut response = reply(StatusCode::OK, "text/html; charset=utf-8", PAGE);
            let headers = response.headers_mut();
            headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(PAGE_POLICY));
            headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
            headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
            response
        }
        (&Method::POST, "/" | "/rpc") => {
            let json_body = header_str(&parts.headers, header::CONTENT_TYPE)
                .is_some_and(|v| v.trim_start().to_ascii_lowercase().starts_with("application/json"));
            if !json_body {
                return Ok(refuse_and_close(
                    StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    codes::INVALID_REQUEST,
                    "send the request as Content-Type: application/json",
                ));
            }
            let body = match read_body(body, limits).await {
                Ok(body) => body,
                Err(refusal) => return Ok(refusal),
            };
            match answer(&body, &shared, &jobs).await {
                Some(text) => json_reply(StatusCode::OK, text),
                None => {
                    let mut response = Response::new(Full::new(Bytes::new()));
                    *response.status_mut() = StatusCode::NO_CONTENT;
                    response
                }
            }
        }
        (_, "/" | "/index.html" | "/rpc") => {
            let mut response = reply(StatusCode::METHOD_NOT_ALLOWED, "text/plain; charset=utf-8", "method not allowed");
            response.headers_mut().insert(header::ALLOW, HeaderValue::from_static("GET, HEAD, POST"));
            response
        }
        _ => reply(StatusCode::NOT_FOUND, "text/plain; charset=utf-8", "not found"),
    })
}

/// The whole JSON-RPC exchange for one body: the response text, or `None`
/// when the body held only notifications. Its long polls wait together,
/// from the moment it arrived.
pub(crate) async fn answer(body: &[u8], shared: &Shared, jobs: &Sender) -> Option<String> {
    let start = Instant::now();
    let (entries, batch) = match rpc::parse(body) {
        Ok(Parsed::Single(entry)) => (vec![entry], false),
        Ok(Parsed::Batch(entries)) => (entries, true),
        Err(error) => return Some(rpc::response(Value::Null, Err(error)).to_string()),
    };
    // Each entry's answer, or its place in the game's job.
    let mut results: Vec<Option<Result<Answer, RpcError>>> = Vec::with_capacity(entries.len());
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
                    "rpc.discover" => results.push(Some(Ok(Answer::Value(rpc::discover())))),
                    "watch.poll" => {
                        results.push(Some(watch::poll(shared, &call.params, start).await.map(Answer::Value)))
                    }
                    "watch.stop" => results.push(Some(watch::stop(shared, &call.params).map(Answer::Value))),
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
        let answers = ask_game(game_calls, shared, jobs).await;
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
        let mut text = rpc::response_text(id.clone(), result);
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

async fn ask_game(calls: Vec<Call>, shared: &Shared, jobs: &Sender) -> Vec<Result<Answer, RpcError>> {
    let n = calls.len();
    let all = |error: RpcError| vec![Err(error); n];
    let (reply, answers) = oneshot::channel();
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
    match tokio::time::timeout(shared.limits.answer_timeout, answers).await {
        Ok(Ok(answers)) if answers.len() == n => answers,
        Ok(Ok(_)) => all(RpcError::new(codes::INTERNAL_ERROR, "the game answered another number of calls")),
        Ok(Err(_)) => all(RpcError::new(codes::NO_ANSWER, "the inspector stopped before the game answered")),
        Err(_) => all(RpcError::new(
            codes::NO_ANSWER,
            format!(
                "the game did not answer within {:?} (is it calling Inspector::update each frame?)",
                shared.limits.answer_timeout
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn secrets_compare_whole() {
        assert!(same_secret(b"abc", b"abc"));
        assert!(!same_secret(b"abd", b"abc"));
        assert!(!same_secret(b"abcd", b"abc"));
        assert!(!same_secret(b"ab", b"abc"));
        assert!(!same_secret(b"", b"a"));
        assert!(!same_secret(b"a", b""));
    }

    #[test]
    fn form_values_are_decoded() {
        assert_eq!(form_decode("a%2Bb+c%25").as_deref(), Some(&b"a+b c%"[..]));
        assert_eq!(form_decode("%zz"), None);
        assert_eq!(form_decode("%2"), None);
    }

    #[test]
    fn host_names_and_ports() {
        assert_eq!(host_name("127.0.0.1:80", 80), Some("127.0.0.1"));
        assert_eq!(host_name("127.0.0.1:81", 80), None);
        assert_eq!(host_name("localhost", 80), Some("localhost"));
        assert_eq!(host_name("[::1]:80", 80), Some("[::1]"));
        assert_eq!(host_name("[::1]", 80), Some("[::1]"));
        assert_eq!(host_name("[::1]:8", 80), None);
    }

    #[test]
    fn a_body_of_notifications_gets_no_response() {
        let shared = Shared::new(Limits {
            max_body: 1024,
            max_response: 1024,
            max_connections: 2,
            header_timeout: Duration::from_secs(1),
            body_timeout: Duration::from_secs(1),
            write_timeout: Duration::from_secs(1),
            answer_timeout: Duration::from_millis(10),
            max_watches: 1,
            queue: 1,
            token: None,
            loopback: true,
            port: 1,
        });
        let (send, _jobs) = mpsc::sync_channel(1);
        let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
        let notifications = br#"{"jsonrpc":"2.0","method":"rpc.discover"}"#;
        assert_eq!(runtime.block_on(answer(notifications, &shared, &send)), None);
        let text = runtime
            .block_on(answer(
                br#"[{"jsonrpc":"2.0","method":"rpc.discover"},{"jsonrpc":"2.0","id":7,"method":"nope.x"}]"#,
                &shared,
                &send,
            ))
            .unwrap();
        let value: Value = serde_json::from_str(&text).unwrap();
        // The unknown method goes to the game, which does not answer here.
        assert_eq!(value[0]["id"], json!(7));
        assert_eq!(value[0]["error"]["code"], json!(codes::NO_ANSWER));
    }
}
