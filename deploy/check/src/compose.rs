//! `compose.yaml`: the keys our file uses, `${VAR}` interpolation, and the
//! checks Compose itself does not make.

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
    time::Duration,
};

use serde::Deserialize;

use crate::{Error, dockerfile::Dockerfile};

/// A compose file (the subset of the Compose specification we use).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ComposeFile {
    /// Project name.
    pub name: Option<String>,
    /// Services by name.
    pub services: BTreeMap<String, Service>,
    /// Declared named volumes.
    #[serde(default)]
    pub volumes: BTreeMap<String, Option<serde_json::Value>>,
    /// Declared secrets (file-based): what services mount at
    /// `/run/secrets/<name>`.
    #[serde(default)]
    pub secrets: BTreeMap<String, SecretFile>,
}

/// One top-level secret.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SecretFile {
    /// Host file, relative to the compose file. Git-ignored: it holds the
    /// real secret and is created by whoever deploys (deploy/README.md).
    pub file: String,
}

/// Where Compose mounts a service's secret.
pub fn secret_path(name: &str) -> String {
    format!("/run/secrets/{name}")
}

/// One service.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Service {
    /// How the image is built.
    pub build: Option<Build>,
    /// Image name.
    pub image: Option<String>,
    /// Overrides the image's CMD.
    pub command: Option<Vec<String>>,
    /// Start order and health gates (long form).
    #[serde(default)]
    pub depends_on: BTreeMap<String, DependsOn>,
    /// Env files, lower precedence than `environment`.
    #[serde(default)]
    pub env_file: Vec<EnvFile>,
    /// Environment (map form; values must be strings).
    #[serde(default)]
    pub environment: BTreeMap<String, String>,
    /// Ports reachable on the compose network only.
    #[serde(default)]
    pub expose: Vec<String>,
    /// Published ports, `HOST_IP:HOST_PORT:CONTAINER_PORT`.
    #[serde(default)]
    pub ports: Vec<String>,
    /// Mounts (long form).
    #[serde(default)]
    pub volumes: Vec<Mount>,
    /// Health check.
    pub healthcheck: Option<Healthcheck>,
    /// Restart policy.
    pub restart: Option<String>,
    /// Time between SIGTERM and SIGKILL.
    pub stop_grace_period: Option<String>,
    /// Read-only root filesystem.
    pub read_only: Option<bool>,
    /// Dropped capabilities.
    #[serde(default)]
    pub cap_drop: Vec<String>,
    /// Security options.
    #[serde(default)]
    pub security_opt: Vec<String>,
    /// tmpfs mounts.
    #[serde(default)]
    pub tmpfs: Vec<String>,
    /// Secrets mounted at `/run/secrets/<name>` (short form).
    #[serde(default)]
    pub secrets: Vec<String>,
}

/// `build:`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Build {
    /// Context directory, relative to the compose file.
    pub context: String,
    /// Dockerfile, relative to the context.
    pub dockerfile: Option<String>,
    /// Stage to build.
    pub target: Option<String>,
}

/// One `depends_on` entry.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DependsOn {
    /// `service_started`, `service_healthy` or `service_completed_successfully`.
    pub condition: String,
    /// Restart this service when the dependency restarts.
    pub restart: Option<bool>,
    /// Whether the dependency must exist.
    pub required: Option<bool>,
}

/// One `env_file` entry (long form).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnvFile {
    /// Path, relative to the compose file.
    pub path: String,
    /// Whether a missing file is an error.
    pub required: Option<bool>,
}

/// One mount (long form).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Mount {
    /// `volume` or `bind`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Volume name or host path (relative to the compose file).
    pub source: String,
    /// Path in the container.
    pub target: String,
    /// Mounted read-only.
    pub read_only: Option<bool>,
}

/// `healthcheck:`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Healthcheck {
    /// `["CMD", program, args...]`.
    pub test: Vec<String>,
    /// Between checks.
    pub interval: Option<String>,
    /// Per check.
    pub timeout: Option<String>,
    /// Failures before unhealthy.
    pub retries: Option<u32>,
    /// Grace period after start.
    pub start_period: Option<String>,
    /// Between checks during the start period.
    pub start_interval: Option<String>,
}

/// Restart policies that bring a crashed service back.
const RESTARTING: &[&str] = &["always", "unless-stopped", "on-failure"];
/// Time a process needs after its drain to flush and exit.
const STOP_MARGIN: Duration = Duration::from_secs(5);

impl ComposeFile {
    /// Reads `path`, interpolating `${VAR}` from `vars` (what Compose reads
    /// from the project's `.env`; never the caller's process environment).
    pub fn load(path: &Path, vars: &BTreeMap<String, String>) -> Result<Self, Error> {
        let text = interpolate(&crate::read(path)?, vars).map_err(|message| Error::Parse {
            path: path.to_path_buf(),
            message,
        })?;
        crate::yaml::one(path, &text)
    }

    /// Every problem the Compose CLI would not report, at once. `dir` is the
    /// compose file's directory.
    pub fn problems(&self, dir: &Path) -> Vec<String> {
        let mut problems = Vec::new();
        for (name, service) in &self.services {
            let mut add = |what: String| problems.push(format!("services.{name}: {what}"));
            let image = match &service.build {
                None => {
                    add("has no build section (our images are built here)".into());
                    None
                }
                Some(build) => match build_image(dir, build) {
                    Ok(image) => Some(image),
                    Err(what) => {
                        add(what);
                        None
                    }
                },
            };
            check_healthcheck(service, image.as_ref(), &mut add);
            for (dependency, on) in &service.depends_on {
                match self.services.get(dependency) {
                    None => add(format!("depends_on names no service {dependency:?}")),
                    Some(target)
                        if on.condition == "service_healthy" && target.healthcheck.is_none() =>
                    {
                        add(format!(
                            "depends_on {dependency} with service_healthy, but {dependency} has no healthcheck"
                        ));
                    }
                    Some(_) => {}
                }
            }
            match service.restart.as_deref() {
                Some(policy) if RESTARTING.iter().any(|p| policy.starts_with(p)) => {}
                other => add(format!("restart policy {other:?} does not restart a crash")),
            }
            check_stop_grace(service, &mut add);
            let listening = listen_ports(service);
            for spec in &service.ports {
                match parse_port(spec) {
                    Some((host_ip, _, container)) => {
                        if host_ip != "127.0.0.1" {
                            add(format!(
                                "port {spec:?} is published on {host_ip:?} by default, not 127.0.0.1"
                            ));
                        }
                        if !listening.contains(&container) {
                            add(format!(
                                "port {spec:?}: nothing listens on container port {container} (listening: {listening:?})"
                            ));
                        }
                    }
                    None => add(format!(
                        "port {spec:?} is not HOST_IP:HOST_PORT:CONTAINER_PORT"
                    )),
                }
            }
            for port in &service.expose {
                if port.parse().map_or(true, |p: u16| !listening.contains(&p)) {
                    add(format!(
                        "expose {port:?}: nothing listens there (listening: {listening:?})"
                    ));
                }
            }
            for (key, value) in &service.environment {
                if let Some((host, port)) = service_url(value) {
                    match self.services.get(host) {
                        Some(other)
                            if listen_ports(other).contains(&port)
                                && !service.depends_on.contains_key(host) =>
                        {
                            add(format!("{key} calls {host} but does not depend_on it"));
                        }
                        Some(other) if listen_ports(other).contains(&port) => {}
                        Some(_) => add(format!("{key}: {host} does not listen on port {port}")),
                        None => {}
                    }
                }
            }
            for mount in &service.volumes {
                match mount.kind.as_str() {
                    "volume" if !self.volumes.contains_key(&mount.source) => {
                        add(format!(
                            "volume {:?} is not declared under top-level volumes",
                            mount.source
                        ));
                    }
                    "bind" if !dir.join(&mount.source).exists() => {
                        add(format!("bind source {:?} does not exist", mount.source));
                    }
                    "volume" | "bind" => {}
                    other => add(format!("mount type {other:?} (expected volume or bind)")),
                }
            }
            for secret in &service.secrets {
                if !self.secrets.contains_key(secret) {
                    add(format!(
                        "secret {secret:?} is not declared under top-level secrets"
                    ));
                }
            }
            check_authentication(self, service, &mut add);
            for file in &service.env_file {
                let example = format!("{}.example", file.path);
                if file.required != Some(false) && !dir.join(&file.path).exists() {
                    add(format!("env_file {:?} is required but missing", file.path));
                }
                if !dir.join(&example).exists() {
                    add(format!(
                        "env_file {:?} has no committed example {example:?}",
                        file.path
                    ));
                }
            }
        }
        for (name, secret) in &self.secrets {
            let used = self.services.values().any(|s| s.secrets.contains(name));
            if !used {
                problems.push(format!("secrets.{name}: declared but no service mounts it"));
            }
            if !git_ignored(dir, &secret.file) {
                problems.push(format!(
                    "secrets.{name}: {} is not git-ignored (it holds a real secret)",
                    secret.file
                ));
            }
        }
        for volume in self.volumes.keys() {
            let used = self.services.values().any(|s| {
                s.volumes
                    .iter()
                    .any(|m| m.kind == "volume" && &m.source == volume)
            });
            if !used {
                problems.push(format!(
                    "volumes.{volume}: declared but no service mounts it"
                ));
            }
        }
        problems
    }

    /// Service names, dependencies before dependents.
    pub fn start_order(&self) -> Vec<String> {
        let mut order: Vec<String> = Vec::new();
        while order.len() < self.services.len() {
            let before = order.len();
            for (name, service) in &self.services {
                if !order.contains(name) && service.depends_on.keys().all(|d| order.contains(d)) {
                    order.push(name.clone());
                }
            }
            if order.len() == before {
                break; // a cycle; `problems` reports missing services, Compose reports cycles
            }
        }
        order
    }
}

/// The Dockerfile target a build section names, resolved.
fn build_image(dir: &Path, build: &Build) -> Result<crate::dockerfile::Image, String> {
    let context = dir.join(&build.context);
    if !context.is_dir() {
        return Err(format!(
            "build context {:?} is not a directory",
            build.context
        ));
    }
    let dockerfile = context.join(build.dockerfile.as_deref().unwrap_or("Dockerfile"));
    if !dockerfile.is_file() {
        return Err(format!(
            "Dockerfile {} does not exist",
            dockerfile.display()
        ));
    }
    let parsed = Dockerfile::load(&dockerfile).map_err(|e| e.to_string())?;
    if let Some(problem) = parsed.problems().into_iter().next() {
        return Err(format!("{}: {problem}", dockerfile.display()));
    }
    let target = build
        .target
        .clone()
        .or_else(|| parsed.stages.last().map(|s| s.name.clone()))
        .unwrap_or_default();
    let image = parsed.image(&target).ok_or_else(|| {
        format!(
            "target {target:?} is not a stage of {}",
            dockerfile.display()
        )
    })?;
    match image.user.as_deref() {
        None | Some("root" | "0" | "0:0") => {
            Err(format!("target {target:?} runs as root (no USER)"))
        }
        Some(_) => Ok(image),
    }
}

/// A service reachable from other hosts authenticates its callers, and a
/// service calling one that does sends a token:
/// - listening on all interfaces (`<P>_LISTEN=0.0.0.0:…` in
///   `environment:`, metrics aside) needs `<P>_TOKENS_FILE` naming one of
///   its secrets (the binary refuses to start without a token there
///   anyway; this says so before `up`);
/// - `<X>_URL=http://<service>:<port>` where that service listens with
///   `<X>_LISTEN` and requires tokens needs `<X>_TOKEN_FILE` naming one
///   of the caller's secrets.
fn check_authentication(compose: &ComposeFile, service: &Service, add: &mut impl FnMut(String)) {
    for (key, value) in &service.environment {
        let Some(prefix) = key.strip_suffix("_LISTEN") else {
            continue;
        };
        let all_interfaces = value
            .rsplit_once(':')
            .is_some_and(|(host, _)| matches!(host, "0.0.0.0" | "[::]"));
        if key.ends_with("_METRICS_LISTEN") || !all_interfaces {
            continue;
        }
        let variable = format!("{prefix}_TOKENS_FILE");
        match service.environment.get(&variable) {
            None => add(format!(
                "{key}={value} serves other hosts but {variable} is not set (no token, no start)"
            )),
            Some(path) if !names_own_secret(service, path) => add(format!(
                "{variable}={path} is not one of its secrets ({})",
                service
                    .secrets
                    .iter()
                    .map(|s| secret_path(s))
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
            Some(_) => {}
        }
    }
    for (key, value) in &service.environment {
        let Some(prefix) = key.strip_suffix("_URL") else {
            continue;
        };
        let Some((host, _)) = service_url(value) else {
            continue;
        };
        let requires_tokens = compose.services.get(host).is_some_and(|target| {
            target
                .environment
                .contains_key(&format!("{prefix}_TOKENS_FILE"))
        });
        if !requires_tokens {
            continue;
        }
        let variable = format!("{prefix}_TOKEN_FILE");
        match service.environment.get(&variable) {
            None => add(format!(
                "{key} calls {host}, which requires a token, but {variable} is not set"
            )),
            Some(path) if !names_own_secret(service, path) => {
                add(format!("{variable}={path} is not one of its secrets"));
            }
            Some(_) => {}
        }
    }
}

fn names_own_secret(service: &Service, path: &str) -> bool {
    service.secrets.iter().any(|s| secret_path(s) == path)
}

/// Whether `.gitignore` at the repository root (the compose directory's
/// parent) ignores `file` (relative to the compose directory): an entry
/// for it or for one of its parent directories.
fn git_ignored(dir: &Path, file: &str) -> bool {
    let Some(root) = dir.parent() else {
        return false;
    };
    let Ok(ignore) = std::fs::read_to_string(root.join(".gitignore")) else {
        return false;
    };
    let Some(compose_dir) = dir.file_name().map(|n| n.to_string_lossy().into_owned()) else {
        return false;
    };
    let mut path = format!("/{compose_dir}");
    let mut candidates = vec![];
    for part in file.trim_start_matches("./").split('/') {
        path = format!("{path}/{part}");
        candidates.push(path.clone());
        candidates.push(format!("{path}/"));
    }
    ignore
        .lines()
        .map(str::trim)
        .any(|line| candidates.iter().any(|c| c == line))
}

/// The health check runs the image's own binary with `healthcheck`.
fn check_healthcheck(
    service: &Service,
    image: Option<&crate::dockerfile::Image>,
    add: &mut impl FnMut(String),
) {
    let Some(check) = &service.healthcheck else {
        return;
    };
    match check.test.split_first() {
        Some((kind, command)) if kind == "CMD" => {
            if let Some(image) = image
                && command.first() != image.entrypoint.first()
            {
                add(format!(
                    "healthcheck runs {:?}, not the image's entrypoint {:?}",
                    command.first(),
                    image.entrypoint.first()
                ));
            }
            if command.last().map(String::as_str) != Some("healthcheck") {
                add("healthcheck does not use the binary's healthcheck subcommand".into());
            }
        }
        _ => add("healthcheck test must be the exec form [\"CMD\", ...]".into()),
    }
    for (key, value) in [
        ("interval", &check.interval),
        ("timeout", &check.timeout),
        ("start_period", &check.start_period),
        ("start_interval", &check.start_interval),
    ] {
        if let Some(value) = value
            && parse_duration(value).is_none()
        {
            add(format!("healthcheck.{key} {value:?} is not a duration"));
        }
    }
}

/// `stop_grace_period` must cover the drain the environment configures.
fn check_stop_grace(service: &Service, add: &mut impl FnMut(String)) {
    let grace = service.stop_grace_period.as_deref().map(parse_duration);
    let drain = service
        .environment
        .iter()
        .find(|(k, _)| k.ends_with("_DRAIN_SECS"))
        .and_then(|(_, v)| v.parse::<u64>().ok())
        .map(Duration::from_secs);
    match (grace, drain) {
        (None, _) => add("no stop_grace_period (Compose's default is 10 s)".into()),
        (Some(None), _) => add("stop_grace_period is not a duration".into()),
        (Some(Some(_)), None) => add("no *_DRAIN_SECS in environment".into()),
        (Some(Some(grace)), Some(drain)) if grace < drain + STOP_MARGIN => add(format!(
            "stop_grace_period {grace:?} leaves under {STOP_MARGIN:?} after the {drain:?} drain"
        )),
        (Some(Some(_)), Some(_)) => {}
    }
}

/// Ports the service listens on: every `*_LISTEN` value `HOST:PORT`.
pub fn listen_ports(service: &Service) -> Vec<u16> {
    service
        .environment
        .iter()
        .filter(|(k, _)| k.ends_with("_LISTEN"))
        .filter_map(|(_, v)| v.rsplit_once(':').and_then(|(_, p)| p.parse().ok()))
        .collect()
}

/// `http://NAME:PORT[/...]` → (NAME, PORT).
pub fn service_url(value: &str) -> Option<(&str, u16)> {
    let rest = value.strip_prefix("http://")?;
    let authority = rest.split('/').next()?;
    let (host, port) = authority.rsplit_once(':')?;
    Some((host, port.parse().ok()?))
}

/// `HOST_IP:HOST_PORT:CONTAINER_PORT` → its parts.
pub fn parse_port(spec: &str) -> Option<(&str, u16, u16)> {
    let mut parts = spec.rsplitn(3, ':');
    let container = parts.next()?.parse().ok()?;
    let host_port = parts.next()?.parse().ok()?;
    let host_ip = parts.next()?;
    Some((host_ip, host_port, container))
}

/// Compose durations: `1m30s`, `10s`, `500ms`.
pub fn parse_duration(text: &str) -> Option<Duration> {
    let mut total = Duration::ZERO;
    let mut rest = text.trim();
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !c.is_ascii_digit())?;
        let value: u64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(rest.len());
        let unit = match &rest[..unit_len] {
            "h" => Duration::from_secs(3600),
            "m" => Duration::from_secs(60),
            "s" => Duration::from_secs(1),
            "ms" => Duration::from_millis(1),
            "us" => Duration::from_micros(1),
            _ => return None,
        };
        total += unit * u32::try_from(value).ok()?;
        rest = &rest[unit_len..];
    }
    Some(total)
}

/// Compose interpolation: `${VAR}`, `${VAR:-default}` (unset or empty),
/// `${VAR-default}` (unset), `${VAR:?message}` and `$$`.
pub fn interpolate(text: &str, vars: &BTreeMap<String, String>) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        rest = &rest[at + 1..];
        if let Some(after) = rest.strip_prefix('$') {
            out.push('$');
            rest = after;
            continue;
        }
        let Some(body) = rest.strip_prefix('{') else {
            out.push('$');
            continue;
        };
        let end = body.find('}').ok_or("unterminated ${")?;
        let expr = &body[..end];
        rest = &body[end + 1..];
        let name_end = expr
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(expr.len());
        let (name, op) = expr.split_at(name_end);
        let value = vars.get(name);
        let set_non_empty = value.filter(|v| !v.is_empty());
        let resolved = if let Some(default) = op.strip_prefix(":-") {
            set_non_empty.map_or(default, String::as_str)
        } else if let Some(default) = op.strip_prefix('-') {
            value.map_or(default, String::as_str)
        } else if let Some(message) = op.strip_prefix(":?") {
            set_non_empty.ok_or_else(|| format!("${{{name}}}: {message}"))?
        } else if op.is_empty() {
            value.map_or("", String::as_str)
        } else {
            return Err(format!("unsupported interpolation ${{{expr}}}"));
        };
        out.push_str(resolved);
    }
    out.push_str(rest);
    Ok(out)
}

/// `KEY=VALUE` lines of an env file (comments and blanks skipped).
pub fn parse_env_file(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.trim().to_owned(), unquote(v.trim()).to_owned()))
        .collect()
}

fn unquote(value: &str) -> &str {
    value
        .strip_prefix('"')
        .and_then(|v| v.strip_suffix('"'))
        .or_else(|| value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
        .unwrap_or(value)
}

/// The committed example of an env file (`./.env` → `./.env.example`).
pub fn example_of(dir: &Path, file: &EnvFile) -> PathBuf {
    dir.join(format!("{}.example", file.path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interpolation() {
        let vars: BTreeMap<String, String> =
            [("A".into(), "a".into()), ("E".into(), String::new())].into();
        assert_eq!(
            interpolate("${A} ${E:-d} ${E-d} ${U:-x} $$ $A", &vars).unwrap(),
            "a d  x $ $A"
        );
        assert_eq!(
            interpolate("${U:?set U}", &vars).unwrap_err(),
            "${U}: set U"
        );
        assert!(interpolate("${A", &vars).is_err());
    }

    #[test]
    fn durations_and_ports() {
        assert_eq!(parse_duration("1m30s"), Some(Duration::from_secs(90)));
        assert_eq!(parse_duration("500ms"), Some(Duration::from_millis(500)));
        assert_eq!(parse_duration("five"), None);
        assert_eq!(
            parse_port("127.0.0.1:50052:50052"),
            Some(("127.0.0.1", 50052, 50052))
        );
        assert_eq!(parse_port("50052"), None);
        assert_eq!(
            service_url("http://prompt-service:50051"),
            Some(("prompt-service", 50051))
        );
    }
}
