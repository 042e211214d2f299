//! A bound on the connections one listener holds, and an idle timeout for connections that
//! carry nothing.
//!
//! Without them, every accepted TCP connection holds a descriptor for as long as its peer
//! likes: thousands of silent connections exhaust the process's descriptors, and then every
//! session's transcript, journal and command fails ("Too many open files"). Here a listener
//! accepts only while it holds fewer than [`ConnectionLimits::max_connections`]; past the
//! bound new connections wait in the kernel's backlog (and are refused by the kernel when that
//! is full) while the ones it holds are served as before. A connection on which no byte moves
//! either way for [`ConnectionLimits::idle_timeout`] is closed, which frees its place: a peer
//! that never sends a request goes first, a live HTTP/2 client never does (the server's
//! keepalive PING, every [`crate::HTTP2_KEEPALIVE_INTERVAL`], gets an answer).
//!
//! [`incoming`] feeds tonic's `serve_with_incoming_shutdown`; [`LimitedListener`] is an axum
//! listener (the inspector).

use std::{
    io,
    net::SocketAddr,
    pin::Pin,
    sync::Arc,
    task::{Context, Poll},
    time::Duration,
};

use tokio::{
    io::{AsyncRead, AsyncWrite, ReadBuf},
    net::{TcpListener, TcpStream},
    sync::{OwnedSemaphorePermit, Semaphore},
    time::{Instant, Sleep},
};

/// Default of [`ConnectionLimits::max_connections`].
pub const DEFAULT_MAX_CONNECTIONS: usize = 2048;
/// Default of [`ConnectionLimits::idle_timeout`]: longer than the HTTP/2 keepalive interval
/// and its timeout together, so a live client always answers in time.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// The bounds of one listener.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// Connections held at once; past it new ones wait to be accepted.
    pub max_connections: usize,
    /// How long a connection may carry nothing before it is closed.
    pub idle_timeout: Duration,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        Self {
            max_connections: DEFAULT_MAX_CONNECTIONS,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
        }
    }
}

/// An accepted connection that holds its place under the bound until it closes, and fails
/// its reads and writes once it has been idle too long.
#[derive(Debug)]
pub struct LimitedConnection {
    stream: TcpStream,
    _place: OwnedSemaphorePermit,
    idle_timeout: Duration,
    idle: Pin<Box<Sleep>>,
}

impl LimitedConnection {
    fn new(stream: TcpStream, place: OwnedSemaphorePermit, idle_timeout: Duration) -> Self {
        Self {
            stream,
            _place: place,
            idle_timeout,
            idle: Box::pin(tokio::time::sleep(idle_timeout)),
        }
    }

    /// Something moved: the idle clock starts again.
    fn active(&mut self) {
        let at = Instant::now() + self.idle_timeout;
        self.idle.as_mut().reset(at);
    }

    /// A write's outcome, passed on; bytes written count as activity.
    fn wrote(&mut self, written: Poll<io::Result<usize>>) -> Poll<io::Result<usize>> {
        if let Poll::Ready(Ok(n)) = &written
            && *n > 0
        {
            self.active();
        }
        written
    }

    /// The error a read or write gets once the connection has been idle too long.
    fn poll_idle(&mut self, cx: &mut Context<'_>) -> Poll<io::Error> {
        match self.idle.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(io::Error::new(
                io::ErrorKind::TimedOut,
                "connection idle past the idle timeout",
            )),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl AsyncRead for LimitedConnection {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        match Pin::new(&mut this.stream).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                if buf.filled().len() > before {
                    this.active();
                }
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(error)) => Poll::Ready(Err(error)),
            Poll::Pending => this.poll_idle(cx).map(Err),
        }
    }
}

impl AsyncWrite for LimitedConnection {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let written = Pin::new(&mut this.stream).poll_write(cx, buf);
        this.wrote(written)
    }

    /// HTTP/2 writes a frame's header and a large payload as two buffers: through the
    /// socket's own vectored write they leave in one system call, not one each.
    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let written = Pin::new(&mut this.stream).poll_write_vectored(cx, bufs);
        this.wrote(written)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }
}

impl tonic::transport::server::Connected for LimitedConnection {
    type ConnectInfo = tonic::transport::server::TcpConnectInfo;

    fn connect_info(&self) -> Self::ConnectInfo {
        self.stream.connect_info()
    }
}

/// A listener that accepts only while it holds fewer than the bound.
#[derive(Debug)]
pub struct LimitedListener {
    listener: TcpListener,
    places: Arc<Semaphore>,
    limits: ConnectionLimits,
}

impl LimitedListener {
    /// `listener` under `limits`.
    pub fn new(listener: TcpListener, limits: ConnectionLimits) -> Self {
        Self {
            listener,
            places: Arc::new(Semaphore::new(limits.max_connections.max(1))),
            limits,
        }
    }

    /// The next connection, once there is a place for it. An accept that fails (the process
    /// is out of descriptors, the peer left before it was accepted) is logged and retried
    /// after a moment rather than ending the server.
    pub async fn next(&self) -> (LimitedConnection, SocketAddr) {
        loop {
            // The place first: past the bound, connections wait in the kernel's backlog.
            let place = match Arc::clone(&self.places).acquire_owned().await {
                Ok(place) => place,
                // The semaphore is never closed; if it were, wait as if full.
                Err(_) => return std::future::pending().await,
            };
            match self.listener.accept().await {
                Ok((stream, peer)) => {
                    // Without nodelay a response that ends in a small segment waits for the
                    // client's delayed ACK (about 40 ms on Linux).
                    let _ = stream.set_nodelay(true);
                    let connection =
                        LimitedConnection::new(stream, place, self.limits.idle_timeout);
                    return (connection, peer);
                }
                Err(error) => {
                    tracing::warn!(%error, "accepting a connection failed; retrying shortly");
                    drop(place);
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
        }
    }
}

impl axum::serve::Listener for LimitedListener {
    type Io = LimitedConnection;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        self.next().await
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.listener.local_addr()
    }
}

/// The connections of `listener` under `limits`, as tonic's `serve_with_incoming*` takes
/// them. The accepting task ends when the server stops taking connections.
pub fn incoming(
    listener: TcpListener,
    limits: ConnectionLimits,
) -> tokio_stream::wrappers::ReceiverStream<io::Result<LimitedConnection>> {
    let (tx, rx) = tokio::sync::mpsc::channel(1);
    let listener = LimitedListener::new(listener, limits);
    tokio::spawn(async move {
        loop {
            tokio::select! {
                () = tx.closed() => return,
                (connection, _) = listener.next() => {
                    if tx.send(Ok(connection)).await.is_err() {
                        return;
                    }
                }
            }
        }
    });
    tokio_stream::wrappers::ReceiverStream::new(rx)
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    /// A vectored write reaches the socket as one: every buffer arrives, in order, and the
    /// connection says it writes vectored, so HTTP/2 hands it a frame's pieces together.
    #[tokio::test]
    async fn vectored_writes_go_through_whole() {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let address = listener.local_addr().expect("address");
        let limited = LimitedListener::new(listener, ConnectionLimits::default());
        let (client, accepted) = tokio::join!(TcpStream::connect(address), limited.next());
        let mut client = client.expect("connect");
        let (mut connection, _) = accepted;
        assert!(connection.is_write_vectored());
        let head = [1u8; 9];
        let payload = vec![2u8; 4096];
        let bufs = [io::IoSlice::new(&head), io::IoSlice::new(&payload)];
        let written = connection.write_vectored(&bufs).await.expect("write");
        assert_eq!(written, head.len() + payload.len());
        let mut received = vec![0u8; written];
        client.read_exact(&mut received).await.expect("read");
        assert_eq!(received[..9], head);
        assert!(received[9..].iter().all(|b| *b == 2));
    }
}
