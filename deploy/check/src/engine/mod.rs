//! `deploy-check engine`: `compose.yaml` on a real Docker engine, end to end.
//!
//! Not part of `cargo test` (CI has no engine); it refuses at once, saying
//! so, when no engine answers. In order: the engine's versions against what
//! the compose file and the Dockerfile need; the host's release binaries
//! with their debug info split off ([`crate::dist`]); `compose build` of both
//! images from them; each image's size (at most [`Options::image_limit_bytes`]), no
//! debug section in its binary, a shell in agent-service's for the exec
//! tool; `up --wait` until both are healthy; reflection of both services;
//! a call without a token refused; `Setup` with the read-only mounted
//! config; a Run with the scripted model; a restart and a recreate of
//! agent-service keep the session; `stop` exits 0 in both containers; and
//! `down` exits 0. Then the routed topology ([`routed`]): agent-service replicas
//! behind the router, and the session-ownership cases on them.
//!
//! Its project (`openclaw-deploy-check`), image tag (`deploy-check`), ports
//! (ephemeral, on the host's loopback) and tokens (made up per run) are its
//! own, so it neither uses nor disturbs a deployment of the same file; an
//! override file next to the tokens points the secrets at them, builds from
//! the prebuilt binaries and publishes prompt-service's port for the
//! reflection check.

mod images;
mod project;
pub mod routed;

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
    time::Instant,
};

use project::Project;

/// Largest accepted image by default, in bytes (what `docker images` shows as 40 MB): what
/// the `dist` profile's binaries fit in ([`Options::image_limit_bytes`]).
pub const IMAGE_LIMIT_BYTES: u64 = 40_000_000;

/// Compose project of the check.
pub(crate) const PROJECT: &str = "openclaw-deploy-check";
/// Image tag of the check (`OPENCLAW_TAG`).
pub(crate) const TAG: &str = "deploy-check";
/// How long `up --wait` may take.
pub(crate) const WAIT_SECS: u32 = 120;

/// What the engine must be for this repository's deploy files, and why.
/// `(component, minimum, reason)`; versions compare numerically.
pub const REQUIREMENTS: &[(&str, &str, &str)] = &[
    (
        "engine",
        "25.0",
        "compose.yaml's healthcheck.start_interval (older engines refuse the file)",
    ),
    (
        "compose",
        "2.24",
        "compose.yaml's env_file entries with `required: false`",
    ),
];

/// Compose from this version on builds through buildx and needs
/// [`BUILDX_WITH_NEW_COMPOSE`] or newer.
pub const COMPOSE_NEEDING_NEW_BUILDX: &str = "2.40";
/// See [`COMPOSE_NEEDING_NEW_BUILDX`].
pub const BUILDX_WITH_NEW_COMPOSE: &str = "0.17";

/// How to run the check.
#[derive(Debug, Clone)]
pub struct Options {
    /// The repository root (the build context).
    pub repo: PathBuf,
    /// Where the binaries are (`target/dist`, the `dist` profile).
    pub binaries: PathBuf,
    /// Extra `--build-arg`s, for example `http_proxy` when apt needs one.
    pub build_args: Vec<(String, String)>,
    /// The network of the build containers (`host` to reach a proxy on the
    /// host's loopback).
    pub build_network: Option<String>,
    /// Where published ports are reached from here.
    pub host: String,
    /// Largest accepted service image, in bytes ([`IMAGE_LIMIT_BYTES`] for the `dist`
    /// profile's binaries).
    pub image_limit_bytes: u64,
}

/// Why the check failed.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// No engine answers: the check cannot run here.
    #[error(
        "no Docker engine answers ({0}). This check needs one; it is not part of cargo test. \
         Start an engine (or point DOCKER_HOST at one) and run it again: see deploy/README.md, \
         \"Checking on a real engine\"."
    )]
    NoEngine(String),
    /// The engine is too old for the deploy files.
    #[error("{0}")]
    TooOld(String),
    /// A step failed.
    #[error("{step}: {detail}")]
    Step {
        /// Which step.
        step: &'static str,
        /// What went wrong.
        detail: String,
    },
}

pub(crate) fn step(step: &'static str) -> impl FnOnce(String) -> EngineError {
    move |detail| EngineError::Step { step, detail }
}

/// Runs the check, printing one line per result.
pub async fn run(options: &Options) -> Result<(), EngineError> {
    let versions = versions().await?;
    say(&format!(
        "engine: Docker Engine {}, Compose {}, buildx {}",
        versions["engine"], versions["compose"], versions["buildx"]
    ));
    check_versions(&versions).map_err(EngineError::TooOld)?;

    let started = Instant::now();
    let dist = options.repo.join("deploy/dist");
    let split = crate::dist::split_all(&options.binaries, &dist)
        .map_err(|e| step("dist")(e.to_string()))?;
    for s in &split {
        say(&format!(
            "dist: {} {} without debug info ({} of DWARF split off to {})",
            s.name,
            megabytes(s.binary_bytes),
            megabytes(s.debug_bytes),
            relative(&s.debug, &options.repo)
        ));
    }

    let work = tempfile::tempdir().map_err(|e| step("temp dir")(e.to_string()))?;
    let project = Project::prepare(options, work.path())?;
    let result = exercise(&project, options).await;
    if result.is_err() {
        // Before `down`, which removes the containers and their logs.
        let logs = project
            .compose(&["logs", "--no-color", "--tail", "40"])
            .await
            .unwrap_or_default();
        eprintln!("{logs}");
    }
    // Whatever happened, leave nothing running.
    let down = project
        .compose(&["down", "--volumes", "--timeout", "60"])
        .await;
    match (result, down) {
        (Err(e), _) => Err(e),
        (Ok(()), Err(e)) => Err(step("down")(e)),
        (Ok(()), Ok(_)) => {
            say("down: exit 0");
            routed::run(
                options,
                work.path(),
                &project.secrets,
                &project.env_file,
                project.agent_token(),
            )
            .await?;
            say(&format!(
                "whole check {:.1} s",
                started.elapsed().as_secs_f64()
            ));
            Ok(())
        }
    }
}

pub(crate) fn say(line: &str) {
    println!("{line}");
}

pub(crate) fn megabytes(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

fn relative(path: &Path, root: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// The engine's, Compose's and buildx's versions.
async fn versions() -> Result<BTreeMap<&'static str, String>, EngineError> {
    let engine = docker(&["version", "--format", "{{.Server.Version}}"])
        .await
        .map_err(EngineError::NoEngine)?;
    let compose = docker(&["compose", "version", "--short"])
        .await
        .map_err(|e| EngineError::TooOld(format!("docker compose is not installed: {e}")))?;
    let buildx = docker(&["buildx", "version"])
        .await
        .map_err(|e| EngineError::TooOld(format!("docker buildx is not installed: {e}")))?;
    let buildx = buildx
        .split_whitespace()
        .nth(1)
        .unwrap_or_default()
        .trim_start_matches('v')
        .to_owned();
    Ok([
        ("engine", engine.trim().to_owned()),
        ("compose", compose.trim().trim_start_matches('v').to_owned()),
        ("buildx", buildx),
    ]
    .into())
}

/// Checks [`REQUIREMENTS`] and the Compose/buildx pairing.
pub fn check_versions(versions: &BTreeMap<&'static str, String>) -> Result<(), String> {
    let mut problems = Vec::new();
    for (component, minimum, reason) in REQUIREMENTS {
        let found = versions.get(component).map(String::as_str).unwrap_or("");
        if !at_least(found, minimum) {
            problems.push(format!(
                "{component} {found} is older than {minimum}, needed for {reason}"
            ));
        }
    }
    let compose = versions.get("compose").map(String::as_str).unwrap_or("");
    let buildx = versions.get("buildx").map(String::as_str).unwrap_or("");
    if at_least(compose, COMPOSE_NEEDING_NEW_BUILDX) && !at_least(buildx, BUILDX_WITH_NEW_COMPOSE) {
        problems.push(format!(
            "Compose {compose} builds only with buildx {BUILDX_WITH_NEW_COMPOSE} or newer (found \
             {buildx}): update buildx, or build with `docker build` and run `compose up` without \
             --build"
        ));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("; "))
    }
}

/// `found >= minimum`, comparing the leading numbers of dotted versions
/// (`26.1.5+dfsg1` is 26.1.5).
pub fn at_least(found: &str, minimum: &str) -> bool {
    let numbers = |v: &str| -> Vec<u64> {
        v.split('.')
            .map(|part| {
                let digits: String = part.chars().take_while(char::is_ascii_digit).collect();
                digits.parse().unwrap_or(0)
            })
            .collect()
    };
    let (found, minimum) = (numbers(found), numbers(minimum));
    if found.is_empty() || found == [0] {
        return false;
    }
    for i in 0..found.len().max(minimum.len()) {
        let (f, m) = (
            found.get(i).copied().unwrap_or(0),
            minimum.get(i).copied().unwrap_or(0),
        );
        if f != m {
            return f > m;
        }
    }
    true
}

/// Runs `docker ARGS`; its stdout, or its stderr as the error.
pub(crate) async fn docker(args: &[&str]) -> Result<String, String> {
    let output = tokio::process::Command::new("docker")
        .args(args)
        .output()
        .await
        .map_err(|e| format!("cannot run docker: {e}"))?;
    if output.status.success() {
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    } else {
        Err(format!(
            "docker {} exited with {}: {}",
            args.join(" "),
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        ))
    }
}

/// Everything between `compose build` and `down`, in order.
async fn exercise(project: &Project, options: &Options) -> Result<(), EngineError> {
    let at = Instant::now();
    project.compose(&["build"]).await.map_err(step("build"))?;
    say(&format!(
        "build: both images in {:.1} s",
        at.elapsed().as_secs_f64()
    ));
    images::check_service_image("prompt-service", options.image_limit_bytes).await?;
    images::check_service_image("agent-service", options.image_limit_bytes).await?;
    images::check_agent_shell().await?;
    images::check_router_image(options).await?;

    let at = Instant::now();
    project.up(&[]).await?;
    say(&format!(
        "up: both services healthy in {:.1} s",
        at.elapsed().as_secs_f64()
    ));
    let prompt = project.channel(options, "prompt-service", 50051).await?;
    let agent = project.channel(options, "agent-service", 50052).await?;
    project::check_reflection(&prompt, &agent).await?;
    project.check_tokens(&prompt, &agent).await?;
    let first = project.setup_and_run(agent).await?;
    project.restarts_keep_the_session(options, &first).await?;
    project.check_logs().await?;
    project.stop().await
}

pub(crate) fn image(service: &str) -> String {
    format!("openclaw/{service}:{TAG}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_compare_by_their_numbers() {
        assert!(at_least("26.1.5+dfsg1", "25.0"));
        assert!(at_least("25.0.0", "25.0"));
        assert!(!at_least("24.0.9", "25.0"));
        assert!(at_least("2.26.1-4", "2.24"));
        assert!(!at_least("2.9.0", "2.24"));
        assert!(!at_least("", "2.24"));
        assert!(!at_least("0.13.1+ds1", "0.17"));
    }

    #[test]
    fn old_engines_and_mismatched_buildx_are_refused() {
        let of = |engine: &str, compose: &str, buildx: &str| {
            check_versions(
                &[
                    ("engine", engine.to_owned()),
                    ("compose", compose.to_owned()),
                    ("buildx", buildx.to_owned()),
                ]
                .into(),
            )
        };
        assert_eq!(of("26.1.5", "2.26.1", "0.13.1"), Ok(()));
        assert_eq!(
            of("20.10.24", "2.26.1", "0.13.1"),
            Err(
                "engine 20.10.24 is older than 25.0, needed for compose.yaml's \
                 healthcheck.start_interval (older engines refuse the file)"
                    .into()
            )
        );
        assert!(
            of("27.0.1", "2.40.0", "0.13.1")
                .is_err_and(|e| e.starts_with("Compose 2.40.0 builds only with buildx 0.17"))
        );
        assert_eq!(of("27.0.1", "2.40.0", "0.17.1"), Ok(()));
    }
}
