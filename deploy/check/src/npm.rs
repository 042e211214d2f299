//! Programs that checks need, installed from npm packages into
//! `.tools/npm/` (git-ignored): the npm counterpart of the Debian installs
//! in [`crate::install`]. Used for the `buf` CLI (`@bufbuild/buf`), which
//! the proto checks run.
//!
//! [`ensure_npm_program`] installs a pinned package version once: a later
//! call finds the program, checks that it runs and prints the version, and
//! returns at once. Parallel test threads and processes are serialized by
//! an exclusive lock on `.tools/npm/<name>-<version>.lock`, and npm installs
//! into a staging folder that is renamed into place only once the program
//! has been verified, so an interrupted install is never mistaken for a
//! good one. A failure is an error naming the package and the tail of
//! npm's output: checks that need the program fail, they never skip.

use std::{
    fs::{self, File},
    path::{Path, PathBuf},
    process::Command,
};

/// How much of a failing command's output goes into an error message.
const OUTPUT_TAIL_CHARS: usize = 2_000;

/// Where `program` of the npm package `package` at `version` is, installing
/// it into `tools_dir/npm/` first if it is not there. `--version` must print
/// `version`.
pub fn ensure_npm_program(
    tools_dir: &Path,
    package: &str,
    version: &str,
    program: &str,
) -> Result<PathBuf, String> {
    let dir = tools_dir.join("npm");
    fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let name = format!(
        "{}-{version}",
        package.trim_start_matches('@').replace('/', "-")
    );
    let lock_path = dir.join(format!("{name}.lock"));
    let lock = File::create(&lock_path)
        .map_err(|e| format!("cannot create {}: {e}", lock_path.display()))?;
    // Held until `lock` is dropped at the end of this function.
    lock.lock()
        .map_err(|e| format!("cannot lock {}: {e}", lock_path.display()))?;
    let root = dir.join(&name);
    if let Ok(found) = verify(&root, program, version) {
        return Ok(found);
    }
    let staging = dir.join(format!("{name}.partial"));
    for stale in [&root, &staging] {
        if stale.exists() {
            fs::remove_dir_all(stale)
                .map_err(|e| format!("cannot remove {}: {e}", stale.display()))?;
        }
    }
    fs::create_dir_all(&staging)
        .map_err(|e| format!("cannot create {}: {e}", staging.display()))?;
    let spec = format!("{package}@{version}");
    let output = Command::new("npm")
        .args([
            "install",
            "--no-save",
            "--no-audit",
            "--no-fund",
            "--prefix",
        ])
        .arg(&staging)
        .arg(&spec)
        .output()
        .map_err(|e| format!("cannot run npm (is Node.js installed?) to install {spec}: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "npm install {spec} failed ({}): {}",
            output.status,
            tail(&output.stderr)
        ));
    }
    verify(&staging, program, version)?;
    fs::rename(&staging, &root)
        .map_err(|e| format!("cannot rename into {}: {e}", root.display()))?;
    verify(&root, program, version)
}

/// The program under `root` if it runs and reports `version`.
fn verify(root: &Path, program: &str, version: &str) -> Result<PathBuf, String> {
    let binary = root.join("node_modules").join(".bin").join(program);
    let output = Command::new(&binary)
        .arg("--version")
        .output()
        .map_err(|e| format!("cannot run {}: {e}", binary.display()))?;
    let printed = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() || printed.trim() != version {
        return Err(format!(
            "{} --version printed {:?} ({}), not {version}: {}",
            binary.display(),
            printed.trim(),
            output.status,
            tail(&output.stderr)
        ));
    }
    Ok(binary)
}

fn tail(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let chars: Vec<char> = text.chars().collect();
    chars[chars.len().saturating_sub(OUTPUT_TAIL_CHARS)..]
        .iter()
        .collect()
}
