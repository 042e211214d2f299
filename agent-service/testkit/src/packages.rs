//! System programs that tests need (bubblewrap for sandbox tests, a router for routing tests,
//! a browser for UI tests), installed by the tests themselves from Debian's packages.
//!
//! [`ensure_program`] finds the program on `PATH`; when it is missing it runs
//! `apt-get install -y --no-install-recommends <package>` once, and runs `apt-get update` first
//! when the package lists do not know the package yet. One exclusive lock on a file in the
//! system temp directory serialises every install of every package across parallel test
//! processes (dpkg takes one installation at a time, and a second apt-get would fail on its
//! lock rather than wait), and apt itself waits up to five minutes for a dpkg lock held by
//! anything else on the machine. A failure is an error naming the package and the tail of
//! apt's output: tests that need the program fail, they never skip.

use std::ffi::OsStr;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Where `program` is, installing `package` first if it is not on `PATH`.
pub fn ensure_program(program: &str, package: &str) -> Result<PathBuf, String> {
    if let Some(found) = find_on_path(program) {
        return Ok(found);
    }
    let lock_path = std::env::temp_dir().join("openclaw-test-apt.lock");
    let lock = File::create(&lock_path)
        .map_err(|e| format!("cannot create {}: {e}", lock_path.display()))?;
    lock.lock()
        .map_err(|e| format!("cannot lock {}: {e}", lock_path.display()))?;
    // Another process may have installed it while this one waited.
    if let Some(found) = find_on_path(program) {
        return Ok(found);
    }
    if apt_install(package).is_err() {
        run_apt(&["update"])?;
        apt_install(package)?;
    }
    find_on_path(program).ok_or_else(|| {
        format!("installed the Debian package {package}, but {program} is still not on PATH")
    })
}

fn apt_install(package: &str) -> Result<(), String> {
    run_apt(&["install", "-y", "--no-install-recommends", package])
}

/// How long apt waits for a dpkg lock another program holds, instead of failing at once.
const DPKG_LOCK_WAIT: &str = "DPkg::Lock::Timeout=300";

fn run_apt(args: &[&str]) -> Result<(), String> {
    let output = Command::new("apt-get")
        .args(["-o", DPKG_LOCK_WAIT])
        .args(args)
        .env("DEBIAN_FRONTEND", "noninteractive")
        .output()
        .map_err(|e| format!("cannot run apt-get {}: {e}", args.join(" ")))?;
    if output.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    let tail: String = {
        let chars: Vec<char> = stderr.chars().collect();
        chars[chars.len().saturating_sub(2_000)..].iter().collect()
    };
    Err(format!(
        "apt-get {} failed ({}): {tail}",
        args.join(" "),
        output.status
    ))
}

/// The first executable file named `program` in `PATH`.
pub fn find_on_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| is_executable(candidate))
        .or_else(|| {
            // Debian puts some programs in sbin, which a plain user's PATH may lack.
            ["/usr/sbin", "/sbin"]
                .iter()
                .map(|dir| Path::new(dir).join(OsStr::new(program)))
                .find(|candidate| is_executable(candidate))
        })
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}
