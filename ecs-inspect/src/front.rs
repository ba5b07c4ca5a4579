//! The HTTP front: hyper's HTTP/1.1 connections on a tokio current-thread
//! runtime, on one thread of the inspector's own. Every read and write a
//! client can stretch has a bound here or in hyper's configuration:
//!
//! - connections: at most [`Limits::max_connections`] open; past that the
//!   next one waits in the listen backlog until one closes;
//! - the request head: read within [`Limits::header_timeout`] (also an idle
//!   keep-alive connection's wait for its next request), at most
//!   [`MAX_HEAD`] bytes and [`MAX_HEADERS`] fields (hyper answers 431, or
//!   414 for a longer target);
//! - the body: see `server::read_body` (its size against `Content-Length`
//!   before anything is read, then while it streams, and a deadline);
//! - writes: a client that takes no byte for [`Limits::write_timeout`] is
//!   dropped ([`Timed`]);
//! - a connection's life: after [`MAX_LIFE`] it is closed once its request
//!   in progress is answered, and dropped [`GRACE`] later if that answer
//!   does not go out;
//! - shutdown: the listener closes at once; the runtime's thread gives
//!   answers in flight [`GRACE`] to go out, then drops every connection,
//!   on its own: the game's thread does not wait for it.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::{mpsc, Arc};
use std::task::{Context, Poll};
use std::thread::JoinHandle;
use std::time::Duration;

use hyper::rt::{Read, ReadBufCursor, Write};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::sync::{watch, Semaphore};

use crate::server::{self, Limits, Sender, Shared};

/// The largest request head (request line and headers), in bytes.
pub const MAX_HEAD: usize = 16 * 1024;
/// The most header fields in a request.
pub const MAX_HEADERS: usize = 64;
/// How long a connection is kept before it is closed between requests.
pub const MAX_LIFE: Duration = Duration::from_secs(120);
/// How long an answer in flight may take to go out once its connection is
/// closing (at the end of its life, or when the inspector stops).
pub const GRACE: Duration = Duration::from_millis(500);

/// The running front: its thread, the switch that stops it, and word that
/// the listener is closed.
pub(crate) struct Front {
    stop: watch::Sender<bool>,
    closed: mpsc::Receiver<()>,
    thread: Option<JoinHandle<()>>,
}

impl Front {
    /// Serves `listener` on a new thread.
    pub fn start(listener: std::net::TcpListener, shared: Arc<Shared>, jobs: Sender) -> io::Result<Front> {
        listener.set_nonblocking(true)?;
        let runtime = tokio::runtime::Builder::new_current_thread().enable_io().enable_time().build()?;
        let (stop, stopped) = watch::channel(false);
        let (closing, closed) = mpsc::channel();
        let thread = std::thread::Builder::new().name("inspector-http".to_owned()).spawn(move || {
            runtime.block_on(accept(listener, shared, jobs, stopped, closing));
            // Whatever is left (none, unless a task outlived its grace) is
            // dropped here, without waiting.
            runtime.shutdown_background();
        })?;
        Ok(Front { stop, closed, thread: Some(thread) })
    }

    /// Stops serving. Waits until the listener is closed (so the port is
    /// free again), which no client can delay; answers in flight get
    /// [`GRACE`] to go out on the server's thread, which then drops every
    /// connection and ends, unwaited for.
    pub fn stop(&mut self) {
        let _ = self.stop.send(true);
        let Some(thread) = self.thread.take() else { return };
        // The runtime's thread only ever waits on sockets and timers: the
        // listener is closed as soon as it sees the switch.
        let _ = self.closed.recv_timeout(Duration::from_secs(1));
        if thread.is_finished() {
            let _ = thread.join();
        }
    }
}

impl Drop for Front {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Accepts connections until stopped, at most `max_connections` at once.
async fn accept(
    listener: std::net::TcpListener,
    shared: Arc<Shared>,
    jobs: Sender,
    mut stopped: watch::Receiver<bool>,
    closing: mpsc::Sender<()>,
) {
    let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
        let _ = closing.send(());
        return;
    };
    let max = shared.limits.max_connections;
    let slots = Arc::new(Semaphore::new(max));
    loop {
        let slot = tokio::select! {
            slot = Arc::clone(&slots).acquire_owned() => slot,
            _ = stopped.changed() => break,
        };
        let Ok(slot) = slot else { break };
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = stopped.changed() => break,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(_) => {
                // Out of file descriptors, or a connection reset before it
                // was taken: try again shortly.
                drop(slot);
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        // Counted until the task ends, or is dropped unfinished (or even
        // unstarted) by the runtime.
        let open = Open::new(&shared);
        let jobs = jobs.clone();
        let stopped = stopped.clone();
        tokio::spawn(async move {
            connection(stream, &open.0, jobs, stopped).await;
            drop((open, slot));
        });
    }
    drop(listener);
    let _ = closing.send(());
    // Answers in flight get their grace; then the runtime drops the rest.
    let _ = tokio::time::timeout(GRACE, slots.acquire_many(max as u32)).await;
}

/// Counts a connection as open while it lives.
struct Open(Arc<Shared>);

impl Open {
    fn new(shared: &Arc<Shared>) -> Open {
        shared.connections.fetch_add(1, Ordering::AcqRel);
        Open(Arc::clone(shared))
    }
}

impl Drop for Open {
    fn drop(&mut self) {
        self.0.connections.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Serves one connection until it closes, breaks a bound, or the inspector
/// stops.
async fn connection(
    stream: tokio::net::TcpStream,
    shared: &Arc<Shared>,
    jobs: Sender,
    mut stopped: watch::Receiver<bool>,
) {
    let limits: &Limits = &shared.limits;
    let io = Timed::new(TokioIo::new(stream), limits.write_timeout);
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .max_buf_size(MAX_HEAD)
        .max_headers(MAX_HEADERS)
        .keep_alive(true)
        // A client may shut its side once the request is sent (curl -T, raw
        // clients): it still gets its answer.
        .half_close(true);
    let service = {
        let shared = Arc::clone(shared);
        service_fn(move |request| server::handle(request, Arc::clone(&shared), jobs.clone()))
    };
    let conn = builder.serve_connection(io, service);
    tokio::pin!(conn);
    tokio::select! {
        _ = conn.as_mut() => return,
        _ = tokio::time::sleep(MAX_LIFE) => {}
        _ = stopped.wait_for(|stop| *stop) => {}
    }
    conn.as_mut().graceful_shutdown();
    let _ = tokio::time::timeout(GRACE, conn).await;
}

/// A connection's socket whose writes fail once the client has taken no
/// byte for the write timeout: a client that never reads is dropped.
pub(crate) struct Timed<T> {
    io: T,
    timeout: Duration,
    stalled: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl<T> Timed<T> {
    pub fn new(io: T, timeout: Duration) -> Timed<T> {
        Timed { io, timeout, stalled: None }
    }

    /// After a write that could not go on: fails once it has been stuck
    /// for the timeout.
    fn stuck<R>(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<R>> {
        let timeout = self.timeout;
        let sleep = self.stalled.get_or_insert_with(|| Box::pin(tokio::time::sleep(timeout)));
        match sleep.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the client took nothing within the write timeout",
            ))),
            Poll::Pending => Poll::Pending,
        }
    }

    fn progress<R>(&mut self, result: Poll<io::Result<R>>, cx: &mut Context<'_>) -> Poll<io::Result<R>> {
        match result {
            Poll::Pending => self.stuck(cx),
            ready => {
                self.stalled = None;
                ready
            }
        }
    }
}

impl<T: Read + Unpin> Read for Timed<T> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: ReadBufCursor<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_read(cx, buf)
    }
}

impl<T: Write + Unpin> Write for Timed<T> {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let result = Pin::new(&mut this.io).poll_write(cx, buf);
        this.progress(result, cx)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let result = Pin::new(&mut this.io).poll_write_vectored(cx, bufs);
        this.progress(result, cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let result = Pin::new(&mut this.io).poll_flush(cx);
        this.progress(result, cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let result = Pin::new(&mut this.io).poll_shutdown(cx);
        this.progress(result, cx)
    }
}
