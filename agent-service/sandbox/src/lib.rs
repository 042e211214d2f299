//! `openclaw-sandbox`: real isolation for the commands of sandboxed sessions.
//!
//! What it is for: starting `exec` and `process` commands of a session that
//! `agents.defaults.sandbox` covers inside [bubblewrap] namespaces, so that what the prompt's
//! Sandbox section tells the model is what the kernel enforces:
//!
//! - an empty root: only the system directories (`/usr`, `/bin`, `/lib*`, `/opt`) and a short
//!   list of `/etc` files programs need are mounted, read-only; no home directory, no state
//!   dir, no config, no other session's files;
//! - the session workspace is the only writable path (plus a private `/tmp`); the agent
//!   workspace is absent, read-only or read-write per `workspaceAccess`; everything is
//!   mounted at its host path, so paths mean the same to the file tools and to commands;
//! - no network (a private network namespace with nothing in it) unless the config allows it;
//! - fresh PID, IPC, UTS and user namespaces, every capability dropped, a new session (no
//!   controlling terminal to inject keystrokes into, [`new_session`]), an empty environment
//!   but for `PATH`, `HOME` and a few harmless variables, and the whole sandbox killed with its
//!   process group or its parent.
//!
//! [`Bubblewrap::detect`] finds the `bwrap` program and proves it works on this host by
//! starting a sandbox with the same namespaces; when it cannot, the reason is kept and
//! sandboxed runs are refused with it, never run unsandboxed. [`Isolation`] is the sandbox of
//! one session; [`Isolation::command`] wraps a program in it.
//!
//! What it is not for: deciding which sessions are sandboxed or which commands may run (the
//! runtime and exec approvals decide), file tools (they are confined by
//! `openclaw-workspace`), resource limits beyond the size of `/tmp`.
//!
//! [bubblewrap]: https://github.com/containers/bubblewrap

mod engine;
mod isolation;

pub use engine::{Bubblewrap, Unusable};
pub use isolation::{Access, Isolation, Mount, Network, new_session};
