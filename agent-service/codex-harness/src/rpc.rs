//! The JSON-lines connection to one app-server: requests matched to their
//! responses by id, notifications and server requests routed to the turn
//! that waits on their thread.
//!
//! Codex's dialect of JSON-RPC: no `"jsonrpc"` field, integer or string ids,
//! server requests numbered by their own counter (so pending work is keyed by
//! direction), and an extra top-level `emittedAtMs` on notifications. Every
//! message is read as a loose JSON object: unknown fields and unknown methods
//! are tolerated, never an error.

use std::{
    collections::HashMap,
    sync::{
        Arc, Mutex, MutexGuard, OnceLock, PoisonError,
        atomic::{AtomicBool, AtomicI64, Ordering},
    },
    time::Duration,
};

use serde_json::{Map, Value, json};
use tokio::{
    io::{AsyncBufReadExt, AsyncWriteExt, BufReader},
    process::{ChildStdin, ChildStdout},
    sync::{mpsc, oneshot},
};

use crate::error::HarnessError;

/// JSON-RPC "method not found".
const METHOD_NOT_FOUND: i64 = -32601;

/// A JSON-RPC error object.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RpcFailure {
    pub code: i64,
    pub message: String,
}

/// One message from the server.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Incoming {
    /// The answer to one of our requests.
    Response {
        id: i64,
        outcome: Result<Value, RpcFailure>,
    },
    /// The server asks us something and waits for the answer.
    Request {
        id: Value,
        method: String,
        params: Value,
    },
    /// Something happened.
    Notification { method: String, params: Value },
}

/// Reads one line. Unknown fields are ignored; only the shape decides.
pub(crate) fn classify(line: &str) -> Result<Incoming, String> {
    let value: Value = serde_json::from_str(line).map_err(|e| format!("not JSON: {e}"))?;
    let Value::Object(mut object) = value else {
        return Err("not a JSON object".to_owned());
    };
    let params = object.remove("params").unwrap_or(Value::Null);
    match (object.remove("method"), object.remove("id")) {
        (Some(Value::String(method)), Some(id)) => Ok(Incoming::Request { id, method, params }),
        (Some(Value::String(method)), None) => Ok(Incoming::Notification { method, params }),
        (Some(other), _) => Err(format!("method is not a string: {other}")),
        (None, Some(id)) => {
            // Our ids are integers; a string id cannot be one of ours.
            let id = id
                .as_i64()
                .ok_or_else(|| format!("response to an id we never used: {id}"))?;
            let outcome = match (object.remove("result"), object.remove("error")) {
                (_, Some(error)) => Err(RpcFailure {
                    code: error.get("code").and_then(Value::as_i64).unwrap_or(0),
                    message: error
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("(no message)")
                        .to_owned(),
                }),
                (Some(result), None) => Ok(result),
                (None, None) => Ok(Value::Null),
            };
            Ok(Incoming::Response { id, outcome })
        }
        (None, None) => Err("neither a method nor an id".to_owned()),
    }
}

/// What a turn receives for its thread.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Inbound {
    /// A server notification.
    Notification { method: String, params: Value },
    /// A server request; answer it with [`Connection::respond`].
    Request {
        id: Value,
        method: String,
        params: Value,
    },
    /// The process is gone; nothing else will arrive.
    Closed { detail: String },
}

enum Outgoing {
    Line(String),
    /// Close stdin: the app-server exits on EOF.
    Close,
}

type Pending = HashMap<i64, (String, oneshot::Sender<Result<Value, RpcFailure>>)>;

#[derive(Default)]
struct State {
    pending: Pending,
    /// Thread id → the turn listening on it. Unbounded on purpose: the
    /// reader must never wait on a turn that is itself waiting for a
    /// response only the reader can deliver.
    subscribers: HashMap<String, mpsc::UnboundedSender<Inbound>>,
    closed: Option<String>,
}

/// Why a connection stopped, when it was given up on rather than closed by the process.
const STOPPED_ANSWERING: &str = "the Codex app-server stopped answering";

/// One app-server connection.
pub(crate) struct Connection {
    out: mpsc::Sender<Outgoing>,
    next_id: AtomicI64,
    state: Mutex<State>,
    timeout: Duration,
    /// Set once a request went unanswered past its limit: the process is hung.
    unresponsive: AtomicBool,
    /// What its owner does to a hung process (kill it), run before anyone hears of it.
    on_hang: OnceLock<Box<dyn Fn() + Send + Sync>>,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("closed", &self.lock().closed)
            .finish_non_exhaustive()
    }
}

impl Connection {
    /// A connection writing to `stdin` (through its own task).
    pub(crate) fn new(stdin: ChildStdin, timeout: Duration) -> Arc<Self> {
        let (out, rx) = mpsc::channel(256);
        tokio::spawn(write_loop(stdin, rx));
        Arc::new(Self {
            out,
            next_id: AtomicI64::new(1),
            state: Mutex::new(State::default()),
            timeout,
            unresponsive: AtomicBool::new(false),
            on_hang: OnceLock::new(),
        })
    }

    /// Sets what is done to the process once a request goes unanswered past its limit (the
    /// first setting stands).
    pub(crate) fn on_hang(&self, action: Box<dyn Fn() + Send + Sync>) {
        let _ = self.on_hang.set(action);
    }

    /// Whether a request went unanswered past its limit.
    pub(crate) fn is_unresponsive(&self) -> bool {
        self.unresponsive.load(Ordering::SeqCst)
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // The state stays consistent between statements, so a panic
        // elsewhere must not take the connection with it.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Why the connection closed, once it has.
    pub(crate) fn closed(&self) -> Option<String> {
        self.lock().closed.clone()
    }

    async fn send(&self, message: Value) -> Result<(), HarnessError> {
        let line = message.to_string();
        self.out
            .send(Outgoing::Line(line))
            .await
            .map_err(|_| HarnessError::ProcessExited {
                detail: self
                    .closed()
                    .unwrap_or_else(|| "its stdin is closed".to_owned()),
            })
    }

    /// Sends a request and waits for its result, at most the connection's request timeout.
    pub(crate) async fn request(&self, method: &str, params: Value) -> Result<Value, HarnessError> {
        self.request_within(method, params, self.timeout).await
    }

    /// Sends a request and waits at most `limit` for its result. No answer in time means the
    /// app-server stopped answering: the connection closes (every waiting request and turn
    /// hears it) and [`Connection::given_up`] wakes its owner, which kills the process.
    pub(crate) async fn request_within(
        &self,
        method: &str,
        params: Value,
        limit: Duration,
    ) -> Result<Value, HarnessError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        {
            let mut state = self.lock();
            if let Some(detail) = &state.closed {
                return Err(HarnessError::ProcessExited {
                    detail: detail.clone(),
                });
            }
            state.pending.insert(id, (method.to_owned(), tx));
        }
        let sent = self
            .send(json!({"id": id, "method": method, "params": params}))
            .await;
        if let Err(error) = sent {
            self.lock().pending.remove(&id);
            return Err(error);
        }
        match tokio::time::timeout(limit, rx).await {
            Ok(Ok(Ok(result))) => Ok(result),
            Ok(Ok(Err(failure))) => Err(HarnessError::Rpc {
                method: method.to_owned(),
                code: failure.code,
                message: failure.message,
            }),
            Ok(Err(_)) => Err(HarnessError::ProcessExited {
                detail: self
                    .closed()
                    .unwrap_or_else(|| "the connection closed".to_owned()),
            }),
            Err(_) => {
                self.lock().pending.remove(&id);
                let seconds = limit.as_secs().max(1);
                // Killed first: whoever hears of the hang finds the process gone.
                self.unresponsive.store(true, Ordering::SeqCst);
                if let Some(action) = self.on_hang.get() {
                    action();
                }
                self.close(format!(
                    "{STOPPED_ANSWERING} ({method} got no answer within {seconds} s); \
                     it was killed, and the next turn starts a new one"
                ));
                Err(HarnessError::Timeout {
                    method: method.to_owned(),
                    seconds,
                })
            }
        }
    }

    /// Sends a notification (no params when `params` is null).
    pub(crate) async fn notify(&self, method: &str, params: Value) -> Result<(), HarnessError> {
        let mut message = Map::new();
        message.insert("method".to_owned(), Value::String(method.to_owned()));
        if !params.is_null() {
            message.insert("params".to_owned(), params);
        }
        self.send(Value::Object(message)).await
    }

    /// Answers a server request.
    pub(crate) async fn respond(&self, id: Value, result: Value) -> Result<(), HarnessError> {
        self.send(json!({"id": id, "result": result})).await
    }

    /// Answers a server request with an error.
    pub(crate) async fn respond_error(
        &self,
        id: Value,
        code: i64,
        message: &str,
    ) -> Result<(), HarnessError> {
        self.send(json!({"id": id, "error": {"code": code, "message": message}}))
            .await
    }

    /// Starts receiving everything about `thread_id` until the subscription drops.
    pub(crate) fn subscribe(
        self: &Arc<Self>,
        thread_id: &str,
    ) -> Result<Subscription, HarnessError> {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut state = self.lock();
        if let Some(detail) = &state.closed {
            return Err(HarnessError::ProcessExited {
                detail: detail.clone(),
            });
        }
        if state.subscribers.contains_key(thread_id) {
            return Err(HarnessError::TurnActive {
                thread_id: thread_id.to_owned(),
            });
        }
        state.subscribers.insert(thread_id.to_owned(), tx);
        Ok(Subscription {
            rx,
            conn: Arc::clone(self),
            thread_id: thread_id.to_owned(),
        })
    }

    /// Closes stdin; the app-server exits on EOF.
    pub(crate) async fn close_stdin(&self) {
        // A writer that is already gone has closed stdin itself.
        let _ = self.out.send(Outgoing::Close).await;
    }

    /// Closes stdin without waiting (for `Drop`).
    pub(crate) fn try_close_stdin(&self) {
        let _ = self.out.try_send(Outgoing::Close);
    }

    /// Marks the connection closed: pending requests fail and every
    /// subscriber gets [`Inbound::Closed`].
    pub(crate) fn close(&self, detail: String) {
        let (pending, subscribers) = {
            let mut state = self.lock();
            if state.closed.is_some() {
                // The first reason stands (a hung process given up on, then killed).
                return;
            }
            state.closed = Some(detail.clone());
            (
                std::mem::take(&mut state.pending),
                state.subscribers.values().cloned().collect::<Vec<_>>(),
            )
        };
        // Dropping the senders makes each waiting request fail with the
        // recorded detail.
        drop(pending);
        for subscriber in subscribers {
            let _ = subscriber.send(Inbound::Closed {
                detail: detail.clone(),
            });
        }
    }

    /// Handles one line from stdout.
    async fn dispatch(&self, line: &str) {
        let message = match classify(line) {
            Ok(message) => message,
            Err(reason) => {
                tracing::warn!(%reason, "ignored a line from the Codex app-server");
                return;
            }
        };
        match message {
            Incoming::Response { id, outcome } => {
                let waiter = self.lock().pending.remove(&id);
                match waiter {
                    Some((_, tx)) => {
                        let _ = tx.send(outcome);
                    }
                    None => tracing::debug!(id, "response to a request nobody waits for"),
                }
            }
            Incoming::Notification { method, params } => {
                if let Some(tx) = self.route(&params) {
                    let _ = tx.send(Inbound::Notification { method, params });
                } else {
                    tracing::trace!(%method, "Codex notification outside any turn");
                }
            }
            Incoming::Request { id, method, params } => {
                if let Some(tx) = self.route(&params) {
                    let request = Inbound::Request { id, method, params };
                    if let Err(unsent) = tx.send(request)
                        && let Inbound::Request { id, method, .. } = unsent.0
                    {
                        self.refuse(id, &method).await;
                    }
                } else {
                    self.refuse(id, &method).await;
                }
            }
        }
    }

    fn route(&self, params: &Value) -> Option<mpsc::UnboundedSender<Inbound>> {
        let thread = params.get("threadId").and_then(Value::as_str)?;
        self.lock().subscribers.get(thread).cloned()
    }

    /// Answers a server request no turn is waiting for: the safe "no".
    async fn refuse(&self, id: Value, method: &str) {
        tracing::warn!(%method, "refused a Codex request outside any turn");
        let sent = match method {
            "item/commandExecution/requestApproval" | "item/fileChange/requestApproval" => {
                self.respond(id, json!({"decision": "decline"})).await
            }
            "item/tool/call" => {
                let text = "no OpenClaw turn is waiting for this tool call";
                self.respond(
                    id,
                    json!({"contentItems": [{"type": "inputText", "text": text}], "success": false}),
                )
                .await
            }
            _ => {
                self.respond_error(id, METHOD_NOT_FOUND, "not handled by OpenClaw")
                    .await
            }
        };
        if let Err(error) = sent {
            tracing::debug!(%error, "could not answer a Codex request");
        }
    }
}

/// A turn's view of its thread's traffic.
pub(crate) struct Subscription {
    pub rx: mpsc::UnboundedReceiver<Inbound>,
    conn: Arc<Connection>,
    thread_id: String,
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.conn.lock().subscribers.remove(&self.thread_id);
    }
}

async fn write_loop(mut stdin: ChildStdin, mut rx: mpsc::Receiver<Outgoing>) {
    while let Some(message) = rx.recv().await {
        let Outgoing::Line(mut line) = message else {
            break;
        };
        line.push('\n');
        let written = async {
            stdin.write_all(line.as_bytes()).await?;
            stdin.flush().await
        }
        .await;
        if let Err(error) = written {
            tracing::debug!(%error, "writing to the Codex app-server failed");
            break;
        }
    }
    // Dropping stdin here is the EOF the app-server exits on.
}

/// Reads stdout until EOF, dispatching every line.
pub(crate) async fn read_loop(conn: &Connection, stdout: ChildStdout) {
    let mut lines = BufReader::new(stdout).lines();
    loop {
        match lines.next_line().await {
            Ok(Some(line)) if line.trim().is_empty() => {}
            Ok(Some(line)) => conn.dispatch(&line).await,
            Ok(None) => break,
            Err(error) => {
                tracing::warn!(%error, "reading from the Codex app-server failed");
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_told_apart_by_shape_and_extra_fields_are_ignored() {
        let note = r#"{"method":"item/agentMessage/delta","params":{"threadId":"t","delta":"hi"},"emittedAtMs":1765000000000,"somethingNew":true}"#;
        assert_eq!(
            classify(note),
            Ok(Incoming::Notification {
                method: "item/agentMessage/delta".to_owned(),
                params: json!({"threadId": "t", "delta": "hi"}),
            })
        );
        let request = r#"{"id":0,"method":"item/tool/call","params":{"threadId":"t"}}"#;
        assert!(matches!(
            classify(request),
            Ok(Incoming::Request { id, .. }) if id == json!(0)
        ));
        assert_eq!(
            classify(r#"{"id":7,"result":{"userAgent":"x"},"extra":1}"#),
            Ok(Incoming::Response {
                id: 7,
                outcome: Ok(json!({"userAgent": "x"})),
            })
        );
        assert_eq!(
            classify(r#"{"id":8,"error":{"code":-32600,"message":"Not initialized"}}"#),
            Ok(Incoming::Response {
                id: 8,
                outcome: Err(RpcFailure {
                    code: -32600,
                    message: "Not initialized".to_owned(),
                }),
            })
        );
        assert!(classify("[1]").is_err());
        assert!(classify("{").is_err());
        assert!(classify(r#"{"id":"abc","result":{}}"#).is_err());
        assert!(classify(r#"{"jsonrpc":"2.0"}"#).is_err());
    }
}
