//! Host commands in a pid namespace of their own: nothing they start outlives their process
//! group or the thread (the service) that started them.

use std::ffi::OsStr;
use std::fs;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;
use openclaw_sandbox::{Containment, Lifetime};

/// A number no other process has in its command line.
fn marker(salt: u32) -> String {
    format!(
        "{}",
        5_000_000 + salt * 100_000 + std::process::id() % 100_000
    )
}

/// Host pids of the processes whose command line holds `marker`.
fn running(marker: &str) -> Vec<i32> {
    fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| {
            let e = e.ok()?;
            let pid: i32 = e.file_name().to_str()?.parse().ok()?;
            let cmdline = fs::read(e.path().join("cmdline")).ok()?;
            String::from_utf8_lossy(&cmdline)
                .contains(marker)
                .then_some(pid)
        })
        .collect()
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(15);
    while !done() {
        assert!(Instant::now() < deadline, "{what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `sh -c script` with the host's lifetime.
fn spawn(lifetime: &Lifetime, script: &str) -> std::process::Child {
    lifetime
        .command(OsStr::new("sh"), &[OsStr::new("-c"), OsStr::new(script)])
        .stdin(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

#[test]
fn this_host_gives_commands_a_pid_namespace() {
    // CI and the images run where namespaces work; the fallback is for hosts where they do not.
    assert!(
        matches!(
            Lifetime::host().containment(),
            Containment::PidNamespace { .. }
        ),
        "{:?}",
        Lifetime::host().containment()
    );
}

#[test]
fn a_detached_process_dies_when_the_commands_group_is_killed() {
    let mark = marker(1);
    let script = format!("setsid -f sleep {mark}; sleep {mark}");
    let mut child = spawn(Lifetime::host(), &script);
    wait_until("both sleeps started", || running(&mark).len() >= 3);
    killpg(Pid::from_raw(child.id() as i32), Signal::SIGKILL).unwrap();
    child.wait().unwrap();
    wait_until("the detached sleep died too", || running(&mark).is_empty());

    // With a process group only, the detached sleep outlives the kill: the test can fail.
    let mark = marker(2);
    let script = format!("setsid -f sleep {mark}; sleep {mark}");
    let mut child = spawn(&Lifetime::group_only("for the test"), &script);
    wait_until("both sleeps started", || running(&mark).len() >= 3);
    killpg(Pid::from_raw(child.id() as i32), Signal::SIGKILL).unwrap();
    child.wait().unwrap();
    wait_until("the group died", || running(&mark).len() == 1);
    for pid in running(&mark) {
        kill(Pid::from_raw(pid), Signal::SIGKILL).unwrap();
    }
}

#[test]
fn everything_a_command_started_dies_with_the_thread_that_started_it() {
    // The parent-death signal follows the spawning thread: a service that dies (or is killed)
    // takes its threads with it, so a thread that ends here stands for the service.
    let mark = marker(3);
    let script = format!("setsid -f sleep {mark}; (sleep {mark} &); sleep {mark}");
    let mut child = std::thread::spawn(move || {
        let child = spawn(Lifetime::host(), &script);
        wait_until("the sleeps started", || running(&mark).len() >= 4);
        child
    })
    .join()
    .unwrap();
    let mark = marker(3);
    wait_until("every sleep died with the thread", || {
        running(&mark).is_empty()
    });
    let status = child.wait().unwrap();
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(9),
        "the parent-death signal"
    );
}

#[test]
fn a_command_sees_its_own_processes_and_not_the_services() {
    let out = Lifetime::host()
        .command(
            OsStr::new("sh"),
            &[
                OsStr::new("-c"),
                OsStr::new("echo $$; ls /proc | grep -c '^[0-9]'"),
            ],
        )
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&out.stdout);
    let mut lines = shown.lines();
    assert_eq!(lines.next(), Some("1"), "the command is pid 1: {shown}");
    let count: usize = lines.next().unwrap().trim().parse().unwrap();
    assert!(count <= 3, "sh, ls and grep at most: {shown}");
    let out = Lifetime::host()
        .command(
            OsStr::new("cat"),
            &[OsStr::new(&format!("/proc/{}/environ", std::process::id()))],
        )
        .output()
        .unwrap();
    assert!(!out.status.success());
}

#[test]
fn a_commands_exit_status_and_a_kill_come_through() {
    let out = Lifetime::host()
        .command(OsStr::new("sh"), &[OsStr::new("-c"), OsStr::new("exit 7")])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(7));
    let mark = marker(4);
    let mut child = spawn(Lifetime::host(), &format!("sleep {mark}"));
    wait_until("the sleep started", || running(&mark).len() >= 3);
    killpg(Pid::from_raw(child.id() as i32), Signal::SIGKILL).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(9)
    );
}
