//! A scripted HTTP server on a real socket that answers byte for byte as told: an exact
//! response (a stream with broken tool arguments, an HTML page, a 429 with its hint), or
//! nothing at all, or response headers and a first chunk and then nothing. It records each
//! request body and reports when the client closed a connection it held open, so tests can
//! check that a call that gave up also let go of its connection.

use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

/// What the server does with one request.
#[derive(Debug, Clone)]
pub enum Act {
    /// Writes these bytes (a whole HTTP/1.1 response) and closes the connection.
    Respond(Vec<u8>),
    /// Writes these bytes (headers and maybe some of the body), then waits, silent, until the
    /// client closes the connection.
    Hold(Vec<u8>),
    /// Writes the first bytes, then the second ones again and again, `every` apart, until the
    /// client closes the connection: a stream that never goes quiet and never ends.
    Drip(Vec<u8>, Vec<u8>, std::time::Duration),
}

/// Something the server saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seen {
    /// A request arrived (its number, from 1).
    Request(usize),
    /// The client closed a connection the server was holding (the request's number).
    Closed(usize),
}

/// The running server.
pub struct RawServer {
    /// `http://127.0.0.1:<port>`.
    pub base_url: String,
    bodies: Arc<Mutex<Vec<Value>>>,
    /// What the server saw, in order.
    pub seen: mpsc::UnboundedReceiver<Seen>,
}

impl RawServer {
    /// Starts a server that answers request `i` with `acts[i]` (the last act repeats).
    pub async fn start(acts: Vec<Act>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base_url = format!("http://{}", listener.local_addr().unwrap());
        let bodies = Arc::new(Mutex::new(Vec::new()));
        let (tell, seen) = mpsc::unbounded_channel();
        let recorded = Arc::clone(&bodies);
        tokio::spawn(async move {
            let mut served = 0;
            while let Ok((socket, _)) = listener.accept().await {
                let act = acts[served.min(acts.len() - 1)].clone();
                served += 1;
                tokio::spawn(serve(
                    socket,
                    act,
                    served,
                    Arc::clone(&recorded),
                    tell.clone(),
                ));
            }
        });
        Self {
            base_url,
            bodies,
            seen,
        }
    }

    /// The JSON bodies of the requests so far.
    pub fn bodies(&self) -> Vec<Value> {
        self.bodies.lock().unwrap().clone()
    }

    /// Waits for the next thing the server sees.
    pub async fn next_seen(&mut self) -> Seen {
        self.seen.recv().await.unwrap()
    }
}

async fn serve(
    mut socket: TcpStream,
    act: Act,
    number: usize,
    bodies: Arc<Mutex<Vec<Value>>>,
    tell: mpsc::UnboundedSender<Seen>,
) {
    let Some(body) = read_request(&mut socket).await else {
        return;
    };
    bodies
        .lock()
        .unwrap()
        .push(serde_json::from_slice(&body).unwrap_or(Value::Null));
    let _ = tell.send(Seen::Request(number));
    match act {
        Act::Respond(bytes) => {
            let _ = socket.write_all(&bytes).await;
            let _ = socket.shutdown().await;
        }
        Act::Hold(bytes) => {
            let _ = socket.write_all(&bytes).await;
            let _ = socket.flush().await;
            // Silent from here on; a read of 0 bytes (or an error) is the client closing.
            let mut scratch = [0u8; 1024];
            while matches!(socket.read(&mut scratch).await, Ok(n) if n > 0) {}
            let _ = tell.send(Seen::Closed(number));
        }
        Act::Drip(head, drop, every) => {
            let _ = socket.write_all(&head).await;
            let (mut reader, mut writer) = socket.into_split();
            let mut scratch = [0u8; 1024];
            let closed =
                async { while matches!(reader.read(&mut scratch).await, Ok(n) if n > 0) {} };
            let drip = async {
                loop {
                    tokio::time::sleep(every).await;
                    if writer.write_all(&drop).await.is_err() {
                        break;
                    }
                }
            };
            tokio::select! {
                () = closed => {}
                () = drip => {}
            }
            let _ = tell.send(Seen::Closed(number));
        }
    }
}

/// Reads one request: headers, then a body of `content-length` bytes.
async fn read_request(socket: &mut TcpStream) -> Option<Vec<u8>> {
    let mut data = Vec::new();
    let mut buffer = [0u8; 8192];
    let header_end = loop {
        let n = socket.read(&mut buffer).await.ok()?;
        if n == 0 {
            return None;
        }
        data.extend_from_slice(&buffer[..n]);
        if let Some(at) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
    };
    let head = String::from_utf8_lossy(&data[..header_end]).to_ascii_lowercase();
    let length: usize = head
        .lines()
        .find_map(|line| line.strip_prefix("content-length:"))
        .and_then(|value| value.trim().parse().ok())
        .unwrap_or(0);
    while data.len() < header_end + length {
        let n = socket.read(&mut buffer).await.ok()?;
        if n == 0 {
            return None;
        }
        data.extend_from_slice(&buffer[..n]);
    }
    Some(data[header_end..header_end + length].to_vec())
}

/// A 200 event-stream response whose body is `events` (each `(event name, JSON data)`, the
/// name left out when empty), ending when the connection closes.
pub fn sse(events: &[(&str, Value)]) -> Vec<u8> {
    let mut out = sse_head();
    for (name, data) in events {
        if !name.is_empty() {
            out.extend_from_slice(format!("event: {name}\n").as_bytes());
        }
        out.extend_from_slice(format!("data: {data}\n\n").as_bytes());
    }
    out
}

/// The status line and headers of a 200 event stream read until the connection closes.
pub fn sse_head() -> Vec<u8> {
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n"
        .to_vec()
}

/// A whole response with this status line, extra headers and body.
pub fn response(status: &str, headers: &[(&str, &str)], body: &str) -> Vec<u8> {
    let mut out = format!("HTTP/1.1 {status}\r\nconnection: close\r\n");
    for (name, value) in headers {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    out.push_str(&format!("content-length: {}\r\n\r\n{body}", body.len()));
    out.into_bytes()
}
