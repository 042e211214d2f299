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
//! - fresh PID, IPC, UTS and user namespaces, every capability dropped, no new privileges
//!   (set-uid programs do not raise them), a new session (no controlling terminal to inject
//!   keystrokes into, [`new_session`]), an empty environment but for `PATH`, `HOME` and a few
//!   harmless variables (bubblewrap itself, the sandbox's pid 1, starts with `PATH` alone, so
//!   `/proc/1/environ` holds nothing of the service's), and the whole sandbox killed with its
//!   process group or its parent;
//! - the kernel's host-wide settings read-only (`/proc/sys`, `/proc/sysrq-trigger` and the
//!   like), no `/sys`;
//! - resource limits on every process ([`Limits`]: processes, address space, file size, CPU
//!   time), applied with util-linux's `prlimit` inside the sandbox's user namespace.
//!
//! When the service runs as root, its sandboxed commands run as the [`SandboxUser`] (host uid
//! and gid 65532 unless configured), never as host uid 0, which the kernel exempts from the
//! process limit and which would reach uid 0's kernel keyrings. bubblewrap still builds the
//! sandbox as root, so a workspace under a directory only root may enter can be mounted; its
//! first program is `setpriv`, which becomes the sandbox user, and `unshare --user` gives the
//! command a user namespace of that user, so each sandbox counts its own processes. The
//! service's files in the workspace are handed to that user before each command
//! ([`Isolation::command`], see the `identity` module for how that stays inside the
//! workspace). Chosen over a pids cgroup per sandbox because it also changes who the command
//! is (files, keyrings, signals), needs no writable cgroup hierarchy (containers rarely have
//! one), and works the same on cgroup v1 and v2 hosts.
//!
//! [`Lifetime`] is the other half: unsandboxed commands, each in a pid namespace of its own
//! that dies with the command's process group and with the service.
//!
//! [`Bubblewrap::detect`] finds the `bwrap` program and proves it works on this host by
//! starting a sandbox with the same namespaces; when it cannot, the reason is kept and
//! sandboxed runs are refused with it, never run unsandboxed. [`Isolation`] is the sandbox of
//! one session; [`Isolation::command`] wraps a program in it.
//!
//! Descriptors: bubblewrap, `setsid`, `setpriv` and `unshare` close none, so every descriptor
//! of the caller that is not close-on-exec is open in the command, inside the sandbox too, and
//! a directory descriptor there reaches the host's tree through `/proc/self/fd/N/..` whatever is
//! mounted. The caller holds none: Rust's standard library and tokio open everything
//! close-on-exec, and agent-service (like `openclaw up` and `demo`) closes what it inherited
//! first thing in `main`.
//!
//! What it is not for: deciding which sessions are sandboxed or which commands may run (the
//! runtime and exec approvals decide), file tools (they are confined by
//! `openclaw-workspace`), memory or CPU shares across sandboxes (no cgroups).
//!
//! [bubblewrap]: https://github.com/containers/bubblewrap

mod engine;
mod identity;
mod isolation;
mod lifetime;

pub use engine::{Bubblewrap, Unusable, locate};
pub use identity::SandboxUser;
pub use isolation::{Access, Isolation, Limits, Mount, Network, SANDBOX_PATH, new_session};
pub use lifetime::{Containment, Lifetime};
