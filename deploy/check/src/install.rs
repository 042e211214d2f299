//! HAProxy for the router test, installed from Debian packages into
//! `.tools/haproxy/` (git-ignored) without touching the system: `apt-get
//! download` fetches the `haproxy` package and the shared libraries it needs
//! that the system lacks, `dpkg-deb -x` unpacks them, and the binary runs
//! with `LD_LIBRARY_PATH` pointing at the unpacked libraries. No service is
//! started, nothing is registered with dpkg, root is not needed (except for
//! an `apt-get update` when the package lists are missing).
//!
//! The install is cached: a later run finds the binary, checks that it runs
//! and returns at once. Parallel test threads and processes are serialized
//! by an exclusive lock on `.tools/haproxy.lock`, and the packages are
//! unpacked into a staging folder that is renamed into place only once the
//! binary runs, so an interrupted install is never mistaken for a good one.

use std::{
    collections::BTreeSet,
    fs::{self, File},
    path::{Path, PathBuf},
    process::{Command, Output},
};

/// The Debian package.
pub const PACKAGE: &str = "haproxy";

/// An unpacked HAProxy that runs.
#[derive(Debug, Clone)]
pub struct Haproxy {
    /// The binary.
    pub binary: PathBuf,
    /// `LD_LIBRARY_PATH` for it.
    pub library_path: String,
    /// What `haproxy -v` printed first (`HAProxy version 2.6.12-1+deb12u3 ...`).
    pub version: String,
}

/// Why HAProxy could not be installed.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    /// A file operation failed.
    #[error("{action} {}: {source}", path.display())]
    Io {
        /// What was being done.
        action: &'static str,
        /// On what.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A tool failed.
    #[error("{command} failed ({status}): {stderr}")]
    Command {
        /// The command line.
        command: String,
        /// Its exit status, or why it did not start.
        status: String,
        /// The end of its stderr.
        stderr: String,
    },
    /// The unpacked binary does not run.
    #[error("unpacked {} does not run: {detail}", binary.display())]
    Broken {
        /// The binary.
        binary: PathBuf,
        /// What failed (missing libraries, its stderr).
        detail: String,
    },
}

fn io<'a>(
    action: &'static str,
    path: &'a Path,
) -> impl FnOnce(std::io::Error) -> InstallError + 'a {
    move |source| InstallError::Io {
        action,
        path: path.to_path_buf(),
        source,
    }
}

/// `<workspace root>/.tools`.
pub fn default_tools_dir() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = manifest
        .ancestors()
        .find(|dir| dir.join("Cargo.lock").is_file())
        .unwrap_or(manifest);
    root.join(".tools")
}

impl Haproxy {
    /// Installs HAProxy into [`default_tools_dir`] unless it is there, and
    /// returns it.
    pub fn ensure() -> Result<Self, InstallError> {
        Self::ensure_in(&default_tools_dir())
    }

    /// Installs HAProxy into `tools_dir/haproxy` unless it is there. Blocks
    /// while another thread or process holds the install lock.
    pub fn ensure_in(tools_dir: &Path) -> Result<Self, InstallError> {
        fs::create_dir_all(tools_dir).map_err(io("create", tools_dir))?;
        let lock_path = tools_dir.join("haproxy.lock");
        let lock = File::create(&lock_path).map_err(io("open", &lock_path))?;
        // Held until `lock` is dropped at the end of this function.
        lock.lock().map_err(io("lock", &lock_path))?;
        let root = tools_dir.join("haproxy");
        if let Ok(found) = Self::verify(&root) {
            return Ok(found);
        }
        let staging = tools_dir.join("haproxy.partial");
        for stale in [&root, &staging] {
            if stale.exists() {
                fs::remove_dir_all(stale).map_err(io("remove", stale))?;
            }
        }
        let debs = staging.join("debs");
        fs::create_dir_all(&debs).map_err(io("create", &debs))?;
        let packages = needed_packages()?;
        download(&packages, &debs)?;
        let unpacked = staging.join("root");
        for entry in fs::read_dir(&debs).map_err(io("list", &debs))? {
            let deb = entry.map_err(io("list", &debs))?.path();
            run(Command::new("dpkg-deb").arg("-x").arg(&deb).arg(&unpacked))?;
        }
        Self::verify(&staging)?;
        fs::rename(&staging, &root).map_err(io("rename into", &root))?;
        Self::verify(&root)
    }

    fn verify(root: &Path) -> Result<Self, InstallError> {
        let unpacked = root.join("root");
        let binary = unpacked.join("usr/sbin/haproxy");
        if !binary.is_file() {
            return Err(InstallError::Broken {
                binary,
                detail: "not there".into(),
            });
        }
        let triple = format!("{}-linux-gnu", std::env::consts::ARCH);
        let library_path = [format!("usr/lib/{triple}"), format!("lib/{triple}")]
            .iter()
            .map(|d| unpacked.join(d).display().to_string())
            .collect::<Vec<_>>()
            .join(":");
        let ldd = Command::new("ldd")
            .arg(&binary)
            .env("LD_LIBRARY_PATH", &library_path)
            .output();
        if let Ok(ldd) = ldd {
            let missing: Vec<String> = String::from_utf8_lossy(&ldd.stdout)
                .lines()
                .filter(|l| l.contains("not found"))
                .map(|l| l.trim().to_owned())
                .collect();
            if !missing.is_empty() {
                return Err(InstallError::Broken {
                    binary,
                    detail: format!("missing libraries: {}", missing.join(", ")),
                });
            }
        }
        let output = Command::new(&binary)
            .arg("-v")
            .env("LD_LIBRARY_PATH", &library_path)
            .output()
            .map_err(io("run", &binary))?;
        if !output.status.success() {
            return Err(InstallError::Broken {
                binary,
                detail: tail(&output.stderr),
            });
        }
        let version = String::from_utf8_lossy(&output.stdout)
            .lines()
            .next()
            .unwrap_or_default()
            .to_owned();
        Ok(Self {
            binary,
            library_path,
            version,
        })
    }
}

/// `haproxy` and, transitively, the shared-library packages it depends on
/// that are not installed (the first choice of each dependency; maintainer
/// tools such as adduser are not needed to run the binary).
fn needed_packages() -> Result<Vec<String>, InstallError> {
    let mut needed = vec![PACKAGE.to_owned()];
    let mut seen: BTreeSet<String> = needed.iter().cloned().collect();
    let mut queue = needed.clone();
    while let Some(package) = queue.pop() {
        for dependency in depends(&package)? {
            if !dependency.starts_with("lib") || !seen.insert(dependency.clone()) {
                continue;
            }
            if !installed(&dependency) {
                needed.push(dependency.clone());
                queue.push(dependency);
            }
        }
    }
    Ok(needed)
}

/// The first-choice `Depends` of a package (`apt-cache depends`).
fn depends(package: &str) -> Result<Vec<String>, InstallError> {
    let output = run(Command::new("apt-cache").args([
        "depends",
        "--no-recommends",
        "--no-suggests",
        "--no-conflicts",
        "--no-breaks",
        "--no-replaces",
        "--no-enhances",
        package,
    ]))?;
    let mut found = Vec::new();
    let mut alternative = false;
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        // "  Depends: x", "  |Depends: y" (y or the next line), "    z" (an alternative).
        let trimmed = line.trim_start();
        if let Some(name) = trimmed.strip_prefix("Depends:") {
            if !alternative {
                found.push(name.trim().trim_matches(['<', '>']).to_owned());
            }
            alternative = false;
        } else if let Some(name) = trimmed.strip_prefix("|Depends:") {
            if !alternative {
                found.push(name.trim().trim_matches(['<', '>']).to_owned());
            }
            alternative = true;
        }
    }
    Ok(found)
}

fn installed(package: &str) -> bool {
    Command::new("dpkg-query")
        .args(["-W", "-f=${db:Status-Abbrev}", package])
        .output()
        .is_ok_and(|o| o.status.success() && o.stdout.starts_with(b"ii"))
}

/// `apt-get download` into `dir`; after an `apt-get update` when the
/// package lists lack them.
fn download(packages: &[String], dir: &Path) -> Result<(), InstallError> {
    let attempt = || {
        run(Command::new("apt-get")
            .arg("download")
            .arg("-q")
            .args(packages)
            .current_dir(dir))
    };
    match attempt() {
        Ok(_) => Ok(()),
        Err(_) => {
            run(Command::new("apt-get").args(["update", "-q"]))?;
            attempt().map(drop)
        }
    }
}

fn run(command: &mut Command) -> Result<Output, InstallError> {
    let line = format!("{command:?}");
    let output = command.output().map_err(|e| InstallError::Command {
        command: line.clone(),
        status: "did not start".into(),
        stderr: e.to_string(),
    })?;
    if output.status.success() {
        Ok(output)
    } else {
        Err(InstallError::Command {
            command: line,
            status: output.status.to_string(),
            stderr: tail(&output.stderr),
        })
    }
}

fn tail(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let skip = text.chars().count().saturating_sub(4000);
    text.chars().skip(skip).collect()
}
