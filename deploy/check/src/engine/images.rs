//! The images themselves: sizes, debug sections, agent-service's shell,
//! and the router image with its HAProxy checking the Kubernetes config.

use std::time::Instant;

use super::{EngineError, Options, docker, image, megabytes, say, step};

/// Size (at most `limit` bytes), debug sections and binary of one service's image.
pub(super) async fn check_service_image(service: &str, limit: u64) -> Result<(), EngineError> {
    let binary = &format!("/usr/local/bin/{service}");
    let name = image(service);
    let size: u64 = docker(&["image", "inspect", "--format", "{{.Size}}", &name])
        .await
        .map_err(step("image"))?
        .trim()
        .parse()
        .map_err(|e| step("image")(format!("{name}: size: {e}")))?;
    let container = docker(&["create", &name])
        .await
        .map_err(step("image"))?
        .trim()
        .to_owned();
    let copy = tempfile::tempdir().map_err(|e| step("image")(e.to_string()))?;
    let local = copy.path().join(service);
    let copied = docker(&[
        "cp",
        &format!("{container}:{binary}"),
        &local.display().to_string(),
    ])
    .await;
    let _ = docker(&["rm", &container]).await;
    copied.map_err(step("image"))?;
    let sections = crate::dist::debug_sections(&local).map_err(|e| step("image")(e.to_string()))?;
    if !sections.is_empty() {
        return Err(step("image")(format!(
            "{name}: {binary} has debug sections {sections:?}"
        )));
    }
    if size > limit {
        return Err(step("image")(format!(
            "{name} is {}, over the {} limit",
            megabytes(size),
            megabytes(limit)
        )));
    }
    say(&format!(
        "image {name}: {} (limit {}), {binary} has no debug sections",
        megabytes(size),
        megabytes(limit)
    ));
    Ok(())
}

/// agent-service's exec tool runs `setsid setpriv --pdeathsig KILL unshare --kill-child
/// --map-current-user ... sh -c`, and sandboxed sessions `setsid bwrap ... prlimit`: the image
/// has them all, util-linux's where busybox's lack the options. They are run as the service
/// chains them: busybox's `setsid` would start busybox's own `setpriv` applet.
pub(super) async fn check_agent_shell() -> Result<(), EngineError> {
    let shell = docker(&[
        "run",
        "--rm",
        "--entrypoint",
        "/bin/sh",
        &image("agent-service"),
        "-c",
        // By path: busybox's `sh` runs its own applet for a bare `setpriv` or `unshare`.
        "setsid sh -c 'echo shell ok' && bwrap --version \
         && /bin/setpriv --pdeathsig KILL -- prlimit --version \
         && /bin/unshare --help | grep -c -e --kill-child -e --map-current-user",
    ])
    .await
    .map_err(step("agent-service shell"))?;
    let mut lines = shell.lines();
    if lines.next().map(str::trim) != Some("shell ok") {
        return Err(step("agent-service shell")(format!("sh printed {shell:?}")));
    }
    let bwrap = lines.next().unwrap_or_default().trim().to_owned();
    if !bwrap.starts_with("bubblewrap") {
        return Err(step("agent-service shell")(format!(
            "bwrap --version printed {bwrap:?}"
        )));
    }
    let prlimit = lines.next().unwrap_or_default().trim().to_owned();
    if !prlimit.contains("util-linux") {
        return Err(step("agent-service shell")(format!(
            "/bin/setpriv --pdeathsig KILL -- prlimit --version printed {prlimit:?}"
        )));
    }
    if lines.next().map(str::trim) != Some("2") {
        return Err(step("agent-service shell")(format!(
            "unshare lacks --kill-child or --map-current-user: {shell:?}"
        )));
    }
    // As the service starts them, without a shell (busybox's `sh` would run its own applets):
    // `setsid` must be util-linux's, whose `setpriv` is the one with `--pdeathsig`. `-w`
    // because the container's first process leads its group, so `setsid` would fork.
    let chained = docker(&[
        "run",
        "--rm",
        "--entrypoint",
        "/bin/setsid",
        &image("agent-service"),
        "-w",
        "setpriv",
        "--pdeathsig",
        "KILL",
        "--",
        "prlimit",
        "--version",
    ])
    .await
    .map_err(step("agent-service setsid setpriv"))?;
    if !chained.contains("util-linux") {
        return Err(step("agent-service setsid setpriv")(format!(
            "setsid -w setpriv --pdeathsig KILL -- prlimit --version printed {chained:?}"
        )));
    }
    say(&format!(
        "image agent-service: setsid and /bin/sh run (the exec tool's shell), {bwrap} is there for sandboxed sessions, util-linux's setsid, setpriv, unshare and prlimit contain commands"
    ));
    Ok(())
}

/// Builds the router image and has its HAProxy check the Kubernetes config.
pub(super) async fn check_router_image(options: &Options) -> Result<(), EngineError> {
    let name = image("router");
    let dockerfile = options.repo.join("deploy/Dockerfile").display().to_string();
    let mut args = vec![
        "build".to_owned(),
        "--quiet".to_owned(),
        "--file".to_owned(),
        dockerfile,
        "--target".to_owned(),
        "router".to_owned(),
        "--tag".to_owned(),
        name.clone(),
    ];
    for (key, value) in &options.build_args {
        args.push("--build-arg".into());
        args.push(format!("{key}={value}"));
    }
    if let Some(network) = &options.build_network {
        args.push("--network".into());
        args.push(network.clone());
    }
    args.push(options.repo.display().to_string());
    let at = Instant::now();
    docker(&args.iter().map(String::as_str).collect::<Vec<_>>())
        .await
        .map_err(step("router image"))?;
    let inspected = docker(&[
        "image",
        "inspect",
        "--format",
        "{{.Config.User}} {{.Config.StopSignal}} {{.Size}}",
        &name,
    ])
    .await
    .map_err(step("router image"))?;
    let fields: Vec<&str> = inspected.split_whitespace().collect();
    if fields.get(..2) != Some(&["10002:10002", "SIGUSR1"][..]) {
        return Err(step("router image")(format!(
            "{name}: user and stop signal are {inspected:?}, expected 10002:10002 SIGUSR1"
        )));
    }
    // The whole directory, as the ConfigMap mounts it: haproxy.cfg and the error files it names.
    let config = options.repo.join("deploy/k8s/router");
    let mount = format!(
        "type=bind,source={},target=/usr/local/etc/haproxy,readonly",
        config.display()
    );
    let version = docker(&["run", "--rm", "--entrypoint", "haproxy", &name, "-v"])
        .await
        .map_err(step("router image"))?;
    docker(&["run", "--rm", "--mount", &mount, &name, "-c"])
        .await
        .map_err(step("router config"))?;
    say(&format!(
        "image {name}: built in {:.1} s, {}, user 10002, stop signal SIGUSR1; {} accepts k8s/router/haproxy.cfg",
        at.elapsed().as_secs_f64(),
        megabytes(fields.get(2).and_then(|s| s.parse().ok()).unwrap_or(0)),
        version.lines().next().unwrap_or("haproxy").trim()
    ));
    Ok(())
}
