//! Each test starts real sandboxes with the host's bubblewrap (installed from Debian's
//! packages by [`engine`] when missing).

mod hardening;
mod isolation;
mod lifetime;
mod root_service;

use std::ffi::OsStr;
use std::process::Output;

use openclaw_sandbox::{Bubblewrap, Isolation};

/// The host's bubblewrap, installed first when missing; panics with apt's error otherwise.
pub fn engine() -> Bubblewrap {
    let program = agent_testkit::packages::ensure_program("bwrap", "bubblewrap")
        .unwrap_or_else(|e| panic!("bubblewrap is needed for the sandbox tests: {e}"));
    Bubblewrap::detect(program.as_os_str()).unwrap_or_else(|e| panic!("{e}"))
}

/// Runs `bash -c script` in the sandbox, in its workspace.
pub fn bash(isolation: &Isolation, script: &str) -> Output {
    isolation
        .command(
            isolation.workspace(),
            OsStr::new("bash"),
            &[OsStr::new("-c"), OsStr::new(script)],
        )
        .expect("the workspace is handed over")
        .output()
        .expect("bwrap starts")
}

/// Runs `sh -c script` (dash: a failed fork is reported at once, not retried) in the sandbox.
pub fn sh(isolation: &Isolation, script: &str) -> Output {
    isolation
        .command(
            isolation.workspace(),
            OsStr::new("sh"),
            &[OsStr::new("-c"), OsStr::new(script)],
        )
        .expect("the workspace is handed over")
        .output()
        .expect("bwrap starts")
}

pub fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}
