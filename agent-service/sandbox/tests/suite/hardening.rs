//! What a sandboxed command cannot do to the host even when the service runs as root: read the
//! service's environment through `/proc`, change the kernel's host-wide settings, or take more
//! than its share of processes, memory, disk and CPU.

use std::fs;
use std::os::unix::fs::PermissionsExt;

use openclaw_sandbox::{Isolation, Limits, Network};
use tempfile::TempDir;

use super::{bash, engine, sh, text};

/// A sandbox over a fresh workspace (readable by every user, for the tests that start the
/// sandbox as an unprivileged user).
fn limited(limits: Limits) -> (TempDir, Isolation) {
    let dir = tempfile::tempdir().unwrap();
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o777)).unwrap();
    let workspace = fs::canonicalize(dir.path()).unwrap();
    let isolation = Isolation::new(engine(), workspace, None, Network::Off).with_limits(limits);
    (dir, isolation)
}

#[test]
fn the_sandboxs_pid_1_carries_no_variable_of_the_service_but_path() {
    let (_dir, sandbox) = limited(Limits::DEFAULT);
    // Every process the sandbox can see, pid 1 (bubblewrap's init) first.
    let out = bash(
        &sandbox,
        "for f in /proc/1/environ /proc/[0-9]*/environ; do \
           printf '%s:' \"$f\"; tr '\\0' ' ' < \"$f\"; echo; done",
    );
    let shown = text(&out);
    let pid1 = shown
        .lines()
        .find(|l| l.starts_with("/proc/1/environ:"))
        .unwrap_or_else(|| panic!("pid 1 is listed: {shown}"));
    let names: Vec<&str> = pid1["/proc/1/environ:".len()..]
        .split_whitespace()
        .filter_map(|pair| pair.split('=').next())
        .collect();
    // A root service's sandbox user cannot read it at all (pid 1 is bubblewrap, root); a
    // service of any other user's sandbox reads `PATH` alone.
    if nix::unistd::Uid::effective().is_root() {
        assert!(names.is_empty(), "{shown}");
        assert!(
            shown.contains("/proc/1/environ: Permission denied"),
            "{shown}"
        );
    } else {
        assert_eq!(names, ["PATH"], "{shown}");
    }
    // The test's own variables (the service's, in production) are nowhere to be read.
    let own = [
        "PATH",
        "HOME",
        "TMPDIR",
        "LANG",
        "TERM",
        "PAGER",
        "GIT_PAGER",
        "PWD",
    ];
    for (name, _) in std::env::vars().filter(|(name, _)| !own.contains(&name.as_str())) {
        assert!(
            !shown.contains(&format!("{name}=")),
            "{name} leaked: {shown}"
        );
    }
}

#[test]
fn no_kernel_setting_is_writable_from_the_sandbox() {
    let (_dir, sandbox) = limited(Limits::DEFAULT);
    // Opening for append writes nothing, so a setting found writable is not changed.
    let out = bash(
        &sandbox,
        "for f in $(find /proc/sys -type f 2>/dev/null) /proc/sysrq-trigger; do \
           [ -e \"$f\" ] || continue; \
           if (exec 3>>\"$f\") 2>/dev/null; then echo \"writable $f\"; fi; \
         done; \
         (exec 3>>/proc/sys/kernel/core_pattern) 2>&1; \
         mkdir -p /tmp/p && mount -t proc proc /tmp/p 2>&1 && echo mounted; \
         mount -o remount,rw /proc/sys 2>&1 && echo remounted; \
         ls /sys 2>&1 | head -3; echo checked",
    );
    let shown = text(&out);
    assert!(shown.contains("checked"), "{shown}");
    assert!(!shown.contains("writable "), "{shown}");
    assert!(!shown.contains("mounted\n"), "{shown}");
    assert!(
        shown.contains("Read-only file system") || shown.contains("Permission denied"),
        "{shown}"
    );
    assert!(
        fs::read_dir("/proc/sys/kernel").is_ok(),
        "the host has the settings the sandbox was kept from"
    );
}

#[test]
fn the_sandbox_of_a_root_service_has_read_only_kernel_settings() {
    // Under root, uid 0 in the sandbox is host uid 0: only the read-only mount stops it. As
    // any other user, the user namespace stops it first.
    let (_dir, sandbox) = limited(Limits::DEFAULT);
    let out = bash(
        &sandbox,
        "grep -E '^Uid:|^NoNewPrivs:' /proc/self/status; \
         grep ' /proc/sys ' /proc/self/mounts",
    );
    let shown = text(&out);
    assert!(shown.contains("NoNewPrivs:\t1"), "{shown}");
    let mount = shown
        .lines()
        .find(|l| l.contains(" /proc/sys "))
        .unwrap_or_else(|| panic!("/proc/sys is a mount of its own: {shown}"));
    assert!(mount.contains(" ro,") || mount.contains(" ro "), "{mount}");
}

#[test]
fn a_fork_bomb_stops_at_the_process_limit() {
    // As root (CI) this is a root service's sandbox, whose commands the kernel would never
    // limit as host uid 0; as any other user, the service's own.
    let (_dir, sandbox) = limited(Limits {
        processes: Some(40),
        ..Limits::DEFAULT
    });
    let out = sh(
        &sandbox,
        "i=0; while [ $i -lt 200 ]; do sleep 600 & i=$((i+1)); done; echo started $i",
    );
    let shown = text(&out);
    assert!(shown.contains("Cannot fork"), "{shown}");
    assert!(!shown.contains("started 200"), "{shown}");
    // The same loop under a limit it stays within runs to its end: the test can fail.
    let (_dir, roomy) = limited(Limits::DEFAULT);
    let out = sh(
        &roomy,
        "i=0; while [ $i -lt 100 ]; do sleep 600 & i=$((i+1)); done; echo started $i",
    );
    assert!(text(&out).contains("started 100"), "{}", text(&out));
}

#[test]
fn an_allocation_beyond_the_address_space_limit_fails() {
    let (_dir, sandbox) = limited(Limits {
        address_space_bytes: Some(256 << 20),
        ..Limits::DEFAULT
    });
    // `head` with a 512 MiB buffer size asks for it at once.
    let script = "python3 -c 'b = bytearray(512 * 1024 * 1024); print(\"allocated\")' 2>&1 \
                  || awk 'BEGIN { s = sprintf(\"%536870912s\", \"\"); print \"allocated\" }' 2>&1";
    let out = bash(&sandbox, script);
    let shown = text(&out);
    assert!(!shown.contains("allocated"), "{shown}");
    let (_dir, roomy) = limited(Limits::DEFAULT);
    let out = bash(&roomy, script);
    assert!(text(&out).contains("allocated"), "{}", text(&out));
}

#[test]
fn a_file_beyond_the_file_size_limit_is_cut_short() {
    let (dir, sandbox) = limited(Limits {
        file_size_bytes: Some(1 << 20),
        ..Limits::DEFAULT
    });
    let out = bash(
        &sandbox,
        "head -c 5000000 /dev/zero > big.bin; echo status=$?",
    );
    let shown = text(&out);
    assert!(shown.contains("status=153"), "SIGXFSZ: {shown}");
    assert_eq!(
        fs::metadata(dir.path().join("big.bin")).unwrap().len(),
        1 << 20
    );
}

#[test]
fn a_cpu_spinner_is_killed_at_the_cpu_limit() {
    let (_dir, sandbox) = limited(Limits {
        cpu_seconds: Some(1),
        ..Limits::DEFAULT
    });
    let started = std::time::Instant::now();
    let out = bash(&sandbox, "sh -c 'while :; do :; done'; echo status=$?");
    let shown = text(&out);
    // SIGXCPU (152) at the soft limit, or SIGKILL (137) at the hard one.
    assert!(
        shown.contains("status=152") || shown.contains("status=137"),
        "{shown}"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
}

#[test]
fn limits_left_unset_are_the_services_own() {
    let (_dir, sandbox) = limited(Limits::NONE);
    let out = bash(&sandbox, "ulimit -t; ulimit -f");
    assert_eq!(text(&out), "unlimited\nunlimited\n");
    let (_dir, limited) = limited(Limits {
        cpu_seconds: Some(7),
        file_size_bytes: Some(1 << 20),
        ..Limits::NONE
    });
    let out = bash(&limited, "ulimit -t; ulimit -f");
    // bash counts file size in blocks of 1024 bytes.
    assert_eq!(text(&out), "7\n1024\n");
}
