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
//! - each service gets its own directory standing in for its container's
//!   `/` ([`Layout::container_root`]); container paths under a mount target
//!   move under it: named volumes become empty directories there, bind
//!   sources are copied there (read-only when the mount is), `tmpfs:`
//!   targets become empty directories;
//! - a secret (`/run/secrets/<name>`) moves under it too, holding what the
//!   caller gives for it in [`Layout::secrets`], never the deployment's real
//!   secret file;
//! - `read_only: true` leaves every directory of that root read-only except
//!   the writable mounts (volumes, tmpfs, writable binds), as the container's
//!   read-only root filesystem is: a write beside the mounted config fails
//!   here as it does in the container;
//! - `cap_drop: [ALL]` and `no-new-privileges:true` run the process (and
//!   its health check) through `setpriv` (util-linux) without capabilities
//!   and with no_new_privs, so a test run as root cannot write where the
//!   container could not (root ignores directory modes only through
//!   CAP_DAC_OVERRIDE).

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
    /// Holds one directory per service, each standing in for that
    /// container's `/`.
    pub root: PathBuf,
    /// Directory holding the built binaries (`target/<profile>`).
    pub bin_dir: PathBuf,
    /// The content of each secret a service mounts, by secret name.
    pub secrets: BTreeMap<String, String>,
}

impl Layout {
    /// The directory standing in for `service`'s container root.
    pub fn container_root(&self, service: &str) -> PathBuf {
        self.root.join(service)
    }

    /// Where `container_path` of `service` is on this machine.
    pub fn host_path(&self, service: &str, container_path: &str) -> PathBuf {
        under(&self.container_root(service), container_path)
    }
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
    /// `cap_drop: [ALL]`: no capabilities.
    pub drop_capabilities: bool,
    /// `security_opt: ["no-new-privileges:true"]`.
    pub no_new_privileges: bool,
}

impl ProcessPlan {
    /// The service's command line as it must be spawned: through `setpriv`
    /// when the plan drops capabilities or privileges (see the module docs).
    pub fn command(&self) -> Result<(PathBuf, Vec<String>), String> {
        self.confine(&self.program, &self.args)
    }

    /// The health check's command line, confined like the service.
    pub fn healthcheck_command(&self) -> Result<Option<(PathBuf, Vec<String>)>, String> {
        self.healthcheck
            .as_ref()
            .map(|(program, args)| self.confine(program, args))
            .transpose()
    }

    fn confine(&self, program: &Path, args: &[String]) -> Result<(PathBuf, Vec<String>), String> {
        let mut wrapper = Vec::new();
        if self.no_new_privileges {
            wrapper.push("--no-new-privs".to_owned());
        }
        // Without capabilities there is nothing to drop, and dropping the
        // bounding set needs CAP_SETPCAP.
        if self.drop_capabilities && has_capabilities()? {
            wrapper.extend(
                [
                    "--inh-caps=-all",
                    "--ambient-caps=-all",
                    "--bounding-set=-all",
                ]
                .map(String::from),
            );
        }
        if wrapper.is_empty() {
            return Ok((program.to_path_buf(), args.to_vec()));
        }
        let setpriv = find_program("setpriv").ok_or(
            "cap_drop/no-new-privileges need setpriv (util-linux) on PATH to run the service natively",
        )?;
        wrapper.push("--".into());
        wrapper.push(program.display().to_string());
        wrapper.extend(args.iter().cloned());
        Ok((setpriv, wrapper))
    }
}

/// Whether this process has any effective capability (root usually has all).
fn has_capabilities() -> Result<bool, String> {
    let status = std::fs::read_to_string("/proc/self/status")
        .map_err(|e| format!("/proc/self/status: {e}"))?;
    let effective = status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .ok_or("/proc/self/status has no CapEff line")?;
    u64::from_str_radix(effective.trim(), 16)
        .map(|caps| caps != 0)
        .map_err(|e| format!("CapEff {effective:?}: {e}"))
}

fn find_program(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
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

    let root = layout.container_root(name);
    // A retried plan finds the directories the previous one left read-only.
    unlock(&root)?;
    std::fs::create_dir_all(&root).map_err(|e| format!("{}: {e}", root.display()))?;
    let (mut mounts, writable) = mount(service, dir, &root)?;
    for name in &service.secrets {
        let target = compose::secret_path(name);
        let content = layout
            .secrets
            .get(name)
            .ok_or_else(|| format!("secret {name:?}: the caller gave no content for it"))?;
        let at = under(&root, &target);
        write_secret(&at, content)?;
        mounts.push(target);
    }
    if service.read_only == Some(true) {
        lock(&root, &writable)?;
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
        if let Some(mapped) = map_path(value, &mounts, &root) {
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
        drop_capabilities: service
            .cap_drop
            .iter()
            .any(|c| c.eq_ignore_ascii_case("ALL")),
        no_new_privileges: service
            .security_opt
            .iter()
            .any(|o| matches!(o.as_str(), "no-new-privileges:true" | "no-new-privileges")),
    })
}

/// `0.0.0.0:P` or `[::]:P` → P.
fn all_interfaces_port(value: &str) -> Option<u16> {
    let (host, port) = value.rsplit_once(':')?;
    matches!(host, "0.0.0.0" | "[::]").then_some(())?;
    port.parse().ok()
}

/// Creates the mounts under `root`; returns their container targets, and
/// the host paths that stay writable on a read-only root.
fn mount(
    service: &compose::Service,
    dir: &Path,
    root: &Path,
) -> Result<(Vec<String>, Vec<PathBuf>), String> {
    let mut targets = Vec::new();
    let mut writable = Vec::new();
    for mount in &service.volumes {
        let at = under(root, &mount.target);
        match mount.kind.as_str() {
            "volume" => {
                std::fs::create_dir_all(&at).map_err(|e| format!("{}: {e}", at.display()))?;
                writable.push(at);
            }
            "bind" => {
                let source = dir.join(&mount.source);
                copy(&source, &at)?;
                if mount.read_only == Some(true) {
                    read_only(&at)?;
                } else {
                    writable.push(at);
                }
            }
            other => return Err(format!("mount type {other:?}")),
        }
        targets.push(mount.target.clone());
    }
    for target in &service.tmpfs {
        let at = under(root, target);
        std::fs::create_dir_all(&at).map_err(|e| format!("{}: {e}", at.display()))?;
        writable.push(at);
        targets.push(target.clone());
    }
    Ok((targets, writable))
}

/// Makes every directory under `root` read-only (0555), `root` included,
/// except the `writable` mounts and what is under them.
fn lock(root: &Path, writable: &[PathBuf]) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    if writable.iter().any(|w| root.starts_with(w)) {
        return Ok(());
    }
    let entries = std::fs::read_dir(root).map_err(|e| format!("{}: {e}", root.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("{}: {e}", root.display()))?;
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            lock(&entry.path(), writable)?;
        }
    }
    std::fs::set_permissions(root, std::fs::Permissions::from_mode(0o555))
        .map_err(|e| format!("{}: {e}", root.display()))
}

/// Gives the owner write access to every directory under `root` again, so
/// that a plan can be retried and the temporary root deleted. A missing
/// `root` is fine.
pub fn unlock(root: &Path) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    let Ok(metadata) = std::fs::symlink_metadata(root) else {
        return Ok(());
    };
    if !metadata.is_dir() {
        return Ok(());
    }
    let mode = metadata.permissions().mode();
    if mode & 0o200 == 0 {
        std::fs::set_permissions(root, std::fs::Permissions::from_mode(mode | 0o200))
            .map_err(|e| format!("{}: {e}", root.display()))?;
    }
    let entries = std::fs::read_dir(root).map_err(|e| format!("{}: {e}", root.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("{}: {e}", root.display()))?;
        unlock(&entry.path())?;
    }
    Ok(())
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
