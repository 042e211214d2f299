//! A compose service as the native process it describes.
//!
//! The mapping, and nothing else, is what differs from the container:
//! - the program is the image's entrypoint binary, found by file name among
//!   the binaries cargo built; the arguments are the rest of the entrypoint
//!   plus `command:` (or the image's CMD);
//! - the environment is the image's `ENV`, then the committed example of
//!   each `env_file` (never a developer's real `.env`), then `environment:`,
//!   and nothing from the caller's process;
//! - a listen address on all interfaces (`0.0.0.0:P`) becomes a loopback
//!   port chosen by the caller, and `http://SERVICE:P` the loopback port
//!   that service's `P` got;
//! - container paths under a mount target move under a temporary root:
//!   named volumes become empty directories there, bind sources are copied
//!   there (read-only when the mount is);
//! - a secret (`/run/secrets/<name>`) moves under the temporary root too,
//!   holding what the caller gives for it in [`Layout::secrets`], never the
//!   deployment's real secret file.

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
    time::Duration,
};

use crate::compose::{self, ComposeFile};

/// The default PATH of the Debian base image (the image config sets it, not
/// our Dockerfile).
const IMAGE_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// Where mapped files and binaries are.
#[derive(Debug, Clone)]
pub struct Layout {
    /// Stands in for the container's `/`.
    pub root: PathBuf,
    /// Directory holding the built binaries (`target/<profile>`).
    pub bin_dir: PathBuf,
    /// The content of each secret a service mounts, by secret name.
    pub secrets: BTreeMap<String, String>,
}

/// One service as a process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessPlan {
    /// Service name.
    pub service: String,
    /// The binary.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// The whole environment.
    pub env: BTreeMap<String, String>,
    /// The health check command (run with `env`).
    pub healthcheck: Option<(PathBuf, Vec<String>)>,
    /// Container port → loopback port.
    pub ports: BTreeMap<u16, u16>,
    /// Time from SIGTERM to SIGKILL.
    pub stop_grace: Duration,
    /// Health check timing: how long to keep trying before giving up
    /// (start period plus retries × interval).
    pub health_deadline: Duration,
}

/// Plans `service`. `planned` holds the port maps of services started
/// before it; `pick_port` returns a free loopback port.
pub fn plan(
    compose: &ComposeFile,
    dir: &Path,
    name: &str,
    layout: &Layout,
    planned: &BTreeMap<String, BTreeMap<u16, u16>>,
    pick_port: &mut dyn FnMut() -> Result<u16, String>,
) -> Result<ProcessPlan, String> {
    let service = compose
        .services
        .get(name)
        .ok_or_else(|| format!("no service {name:?}"))?;
    let build = service.build.as_ref().ok_or("no build section")?;
    let dockerfile = dir
        .join(&build.context)
        .join(build.dockerfile.as_deref().unwrap_or("Dockerfile"));
    let parsed = crate::dockerfile::Dockerfile::load(&dockerfile).map_err(|e| e.to_string())?;
    let target = build.target.as_deref().unwrap_or_default();
    let image = parsed
        .image(target)
        .ok_or_else(|| format!("no stage {target:?}"))?;

    let mut env: BTreeMap<String, String> = image.env.clone();
    for file in &service.env_file {
        let example = compose::example_of(dir, file);
        let text = crate::read(&example).map_err(|e| e.to_string())?;
        env.extend(compose::parse_env_file(&text));
    }
    env.extend(service.environment.clone());

    let mut mounts = mount(service, dir, &layout.root)?;
    for name in &service.secrets {
        let target = compose::secret_path(name);
        let content = layout
            .secrets
            .get(name)
            .ok_or_else(|| format!("secret {name:?}: the caller gave no content for it"))?;
        let at = under(&layout.root, &target);
        write_secret(&at, content)?;
        mounts.push(target);
    }
    let mut ports = BTreeMap::new();
    for (key, value) in env.iter_mut() {
        if key.ends_with("_LISTEN")
            && let Some(port) = all_interfaces_port(value)
        {
            let local = pick_port()?;
            ports.insert(port, local);
            *value = format!("127.0.0.1:{local}");
            continue;
        }
        if let Some((host, port)) = compose::service_url(value)
            && let Some(map) = planned.get(host)
        {
            let local = map
                .get(&port)
                .ok_or_else(|| format!("{key}: {host} does not listen on {port}"))?;
            *value = value.replacen(
                &format!("//{host}:{port}"),
                &format!("//127.0.0.1:{local}"),
                1,
            );
            continue;
        }
        if let Some(mapped) = map_path(value, &mounts, &layout.root) {
            *value = mapped;
        }
    }
    env.entry("PATH".into())
        .or_insert_with(|| IMAGE_PATH.into());

    let binary = |container_path: &str| -> Result<PathBuf, String> {
        let file = Path::new(container_path)
            .file_name()
            .ok_or_else(|| format!("{container_path:?} names no file"))?;
        let path = layout.bin_dir.join(file);
        if path.is_file() {
            Ok(path)
        } else {
            Err(format!(
                "{container_path} maps to {}, which does not exist: build the servers' binaries \
                 (cargo test --workspace does)",
                path.display()
            ))
        }
    };
    let (entry, entry_args) = image
        .entrypoint
        .split_first()
        .ok_or_else(|| format!("target {target:?} has no ENTRYPOINT"))?;
    let program = binary(entry)?;
    let mut args = entry_args.to_vec();
    args.extend(service.command.clone().unwrap_or(image.cmd.clone()));

    let healthcheck = match &service.healthcheck {
        Some(check) => match check.test.as_slice() {
            [kind, program, rest @ ..] if kind == "CMD" => Some((binary(program)?, rest.to_vec())),
            _ => return Err("healthcheck is not [\"CMD\", ...]".into()),
        },
        None => None,
    };
    let duration = |value: &Option<String>, default: u64| {
        value
            .as_deref()
            .and_then(compose::parse_duration)
            .unwrap_or(Duration::from_secs(default))
    };
    let health_deadline = service.healthcheck.as_ref().map_or(Duration::ZERO, |c| {
        duration(&c.start_period, 0) + duration(&c.interval, 30) * c.retries.unwrap_or(3)
    });
    Ok(ProcessPlan {
        service: name.to_owned(),
        program,
        args,
        env,
        healthcheck,
        ports,
        stop_grace: duration(&service.stop_grace_period, 10),
        health_deadline,
    })
}

/// `0.0.0.0:P` or `[::]:P` → P.
fn all_interfaces_port(value: &str) -> Option<u16> {
    let (host, port) = value.rsplit_once(':')?;
    matches!(host, "0.0.0.0" | "[::]").then_some(())?;
    port.parse().ok()
}

/// Creates the mounts under `root`; returns their container targets.
fn mount(service: &compose::Service, dir: &Path, root: &Path) -> Result<Vec<String>, String> {
    let mut targets = Vec::new();
    for mount in &service.volumes {
        let at = under(root, &mount.target);
        match mount.kind.as_str() {
            "volume" => {
                std::fs::create_dir_all(&at).map_err(|e| format!("{}: {e}", at.display()))?
            }
            "bind" => {
                let source = dir.join(&mount.source);
                copy(&source, &at)?;
                if mount.read_only == Some(true) {
                    read_only(&at)?;
                }
            }
            other => return Err(format!("mount type {other:?}")),
        }
        targets.push(mount.target.clone());
    }
    Ok(targets)
}

/// A container path under a mount target, moved under `root`.
fn map_path(value: &str, mounts: &[String], root: &Path) -> Option<String> {
    let hit = mounts.iter().any(|target| {
        value == target
            || value
                .strip_prefix(target.as_str())
                .is_some_and(|rest| rest.starts_with('/'))
    });
    hit.then(|| under(root, value).display().to_string())
}

fn under(root: &Path, container_path: &str) -> PathBuf {
    root.join(container_path.trim_start_matches('/'))
}

fn copy(source: &Path, to: &Path) -> Result<(), String> {
    let fail = |e: std::io::Error| format!("copy {} to {}: {e}", source.display(), to.display());
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent).map_err(fail)?;
    }
    if source.is_dir() {
        std::fs::create_dir_all(to).map_err(fail)?;
        for entry in std::fs::read_dir(source).map_err(fail)? {
            let entry = entry.map_err(fail)?;
            copy(&entry.path(), &to.join(entry.file_name()))?;
        }
        Ok(())
    } else {
        // A retried plan finds its earlier, read-only copy.
        if to.exists() {
            std::fs::remove_file(to).map_err(fail)?;
        }
        std::fs::copy(source, to).map(drop).map_err(fail)
    }
}

/// Writes a secret file readable by its owner only, as Compose mounts it
/// read-only.
fn write_secret(at: &Path, content: &str) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    let fail = |e: std::io::Error| format!("secret {}: {e}", at.display());
    if let Some(parent) = at.parent() {
        std::fs::create_dir_all(parent).map_err(fail)?;
    }
    // A retried plan finds its earlier, read-only copy.
    if at.exists() {
        std::fs::remove_file(at).map_err(fail)?;
    }
    std::fs::write(at, content).map_err(fail)?;
    std::fs::set_permissions(at, std::fs::Permissions::from_mode(0o400)).map_err(fail)
}

fn read_only(path: &Path) -> Result<(), String> {
    let fail = |e: std::io::Error| format!("{}: {e}", path.display());
    let mut permissions = std::fs::metadata(path).map_err(fail)?.permissions();
    permissions.set_readonly(true);
    std::fs::set_permissions(path, permissions).map_err(fail)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_under_mounts_move_under_the_root() {
        let mounts = vec![
            "/var/lib/openclaw".to_owned(),
            "/etc/openclaw/x.json".to_owned(),
        ];
        let root = Path::new("/tmp/r");
        assert_eq!(
            map_path("/var/lib/openclaw/workspace", &mounts, root).as_deref(),
            Some("/tmp/r/var/lib/openclaw/workspace")
        );
        assert_eq!(
            map_path("/etc/openclaw/x.json", &mounts, root).as_deref(),
            Some("/tmp/r/etc/openclaw/x.json")
        );
        assert_eq!(map_path("/var/lib/openclawx", &mounts, root), None);
        assert_eq!(map_path("json", &mounts, root), None);
        assert_eq!(all_interfaces_port("0.0.0.0:50051"), Some(50051));
        assert_eq!(all_interfaces_port("127.0.0.1:50051"), None);
    }
}
