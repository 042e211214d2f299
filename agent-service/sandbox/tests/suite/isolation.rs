//! What a sandboxed command can and cannot reach.

use std::ffi::OsStr;
use std::fs;
use std::io::Read;
use std::net::TcpListener;
use std::time::Duration;

use openclaw_sandbox::{Access, Bubblewrap, Isolation, Mount, Network};
use tempfile::TempDir;

use super::{bash, engine, text};

/// A state dir with a secret, an agent workspace and a session workspace beside it.
struct Layout {
    root: TempDir,
}

impl Layout {
    fn new() -> Self {
        let root = tempfile::tempdir().unwrap();
        for dir in [
            "state",
            "agent",
            "state/sandboxes/session-1",
            "state/sandboxes/other",
        ] {
            fs::create_dir_all(root.path().join(dir)).unwrap();
        }
        fs::write(
            root.path().join("state/openclaw.json"),
            "{apiKey: 'sk-secret'}",
        )
        .unwrap();
        fs::write(root.path().join("agent/AGENTS.md"), "agent rules").unwrap();
        fs::write(
            root.path().join("state/sandboxes/other/notes.md"),
            "other session",
        )
        .unwrap();
        Self { root }
    }

    fn path(&self, rel: &str) -> std::path::PathBuf {
        fs::canonicalize(self.root.path().join(rel)).unwrap()
    }

    fn isolation(&self, agent: Option<Access>, network: Network) -> Isolation {
        Isolation::new(
            engine(),
            self.path("state/sandboxes/session-1"),
            agent.map(|access| Mount {
                path: self.path("agent"),
                access,
            }),
            network,
        )
    }
}

#[test]
fn the_state_dir_config_and_other_sessions_are_invisible() {
    let layout = Layout::new();
    let sandbox = layout.isolation(Some(Access::ReadOnly), Network::Off);
    let state = layout.path("state");
    for path in [
        state.join("openclaw.json"),
        state.join("sandboxes/other/notes.md"),
    ] {
        let out = bash(&sandbox, &format!("cat {}", path.display()));
        assert!(!out.status.success(), "{}", text(&out));
        assert!(text(&out).contains("No such file"), "{}", text(&out));
    }
    // The home directory and the rest of /etc are not there either.
    let out = bash(&sandbox, "ls /root /home /etc/shadow 2>&1; ls /etc");
    let listing = text(&out);
    assert!(!listing.contains("shadow\n"), "{listing}");
    assert!(listing.contains("No such file"), "{listing}");
    // The agent workspace is readable when mounted read-only.
    let out = bash(
        &sandbox,
        &format!("cat {}/AGENTS.md", layout.path("agent").display()),
    );
    assert_eq!(text(&out), "agent rules");
}

#[test]
fn only_the_session_workspace_is_writable_and_tmp_is_private() {
    let layout = Layout::new();
    let sandbox = layout.isolation(Some(Access::ReadOnly), Network::Off);
    let agent = layout.path("agent");
    let marker = format!("openclaw-sandbox-test-{}", std::process::id());
    let script = format!(
        "echo made > made.txt && echo workspace-ok; \
         touch {agent}/x 2>&1; touch /usr/x 2>&1; touch /x 2>&1; mkdir -p /var/x 2>&1; \
         echo tmp > /tmp/{marker} && cat /tmp/{marker}",
        agent = agent.display()
    );
    let out = bash(&sandbox, &script);
    let shown = text(&out);
    assert!(shown.contains("workspace-ok"), "{shown}");
    assert_eq!(
        shown.matches("Read-only file system").count(),
        4,
        "agent workspace, /usr, / and /var are read-only: {shown}"
    );
    assert!(shown.contains("tmp\n"), "{shown}");
    assert_eq!(
        fs::read_to_string(layout.path("state/sandboxes/session-1").join("made.txt")).unwrap(),
        "made\n"
    );
    assert!(!agent.join("x").exists());
    assert!(
        !std::env::temp_dir().join(&marker).exists(),
        "the sandbox's /tmp is not the host's"
    );
}

#[test]
fn a_read_write_agent_workspace_is_writable_and_none_is_absent() {
    let layout = Layout::new();
    let agent = layout.path("agent");
    let rw = layout.isolation(Some(Access::ReadWrite), Network::Off);
    let out = bash(
        &rw,
        &format!("echo hi > {}/from-sandbox.txt", agent.display()),
    );
    assert!(out.status.success(), "{}", text(&out));
    assert!(agent.join("from-sandbox.txt").exists());
    let none = layout.isolation(None, Network::Off);
    let out = bash(&none, &format!("cat {}/AGENTS.md", agent.display()));
    assert!(text(&out).contains("No such file"), "{}", text(&out));
}

/// A listener on the host's loopback that records whether anything connected.
fn listener() -> (TcpListener, u16) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    listener.set_nonblocking(true).unwrap();
    (listener, port)
}

#[test]
fn with_the_network_off_a_host_loopback_listener_is_unreachable() {
    let layout = Layout::new();
    let (listener, port) = listener();
    let off = layout.isolation(None, Network::Off);
    let out = bash(
        &off,
        &format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected"),
    );
    assert!(!out.status.success(), "{}", text(&out));
    assert!(!text(&out).contains("connected"), "{}", text(&out));
    assert!(listener.accept().is_err(), "nothing reached the listener");

    // The same command with the network on does connect: the test can fail.
    let on = layout.isolation(None, Network::On);
    let out = bash(
        &on,
        &format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected"),
    );
    assert!(text(&out).contains("connected"), "{}", text(&out));
    let (mut stream, _) = listener.accept().expect("the sandbox connected");
    stream
        .set_read_timeout(Some(Duration::from_secs(1)))
        .unwrap();
    let _ = stream.read(&mut [0_u8; 1]);
}

#[test]
fn the_environment_is_empty_but_for_a_few_harmless_variables() {
    let layout = Layout::new();
    let sandbox = layout.isolation(None, Network::Off);
    let out = sandbox
        .command(sandbox.workspace(), OsStr::new("env"), &[])
        .unwrap()
        .env("OPENCLAW_TEST_API_KEY", "sk-never-shown")
        .output()
        .unwrap();
    let env = text(&out);
    assert!(!env.contains("sk-never-shown"), "{env}");
    let names: Vec<&str> = env.lines().filter_map(|l| l.split('=').next()).collect();
    for name in &names {
        assert!(
            [
                "PATH",
                "HOME",
                "TMPDIR",
                "LANG",
                "TERM",
                "PAGER",
                "GIT_PAGER",
                "PWD"
            ]
            .contains(name),
            "unexpected variable {name}: {env}"
        );
    }
    assert!(env.contains(&format!("HOME={}", sandbox.workspace().display())));
}

#[test]
fn no_capability_survives_even_for_root() {
    let layout = Layout::new();
    let sandbox = layout.isolation(None, Network::Off);
    let out = bash(&sandbox, "grep CapEff /proc/self/status");
    assert!(
        text(&out).contains("CapEff:\t0000000000000000"),
        "{}",
        text(&out)
    );
}

#[test]
fn killing_the_sandbox_kills_what_it_started() {
    let layout = Layout::new();
    let sandbox = layout.isolation(None, Network::Off);
    let marker = format!("{}", 4_000_000 + std::process::id() % 100_000);
    let sid = |pid: u32| nix::unistd::getsid(Some(nix::unistd::Pid::from_raw(pid as i32)));
    let mut child = sandbox
        .command(
            sandbox.workspace(),
            OsStr::new("bash"),
            &[
                OsStr::new("-c"),
                OsStr::new(&format!("sleep {marker} & sleep {marker}")),
            ],
        )
        .unwrap()
        .spawn()
        .unwrap();
    let running = || {
        fs::read_dir("/proc")
            .unwrap()
            .filter_map(|e| fs::read(e.ok()?.path().join("cmdline")).ok())
            .filter(|c| String::from_utf8_lossy(c).contains(&marker))
            .count()
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    // bwrap, its init, bash and two sleeps.
    while running() < 5 {
        assert!(std::time::Instant::now() < deadline, "the sleeps started");
        std::thread::yield_now();
    }
    assert_eq!(
        sid(child.id()).unwrap().as_raw(),
        child.id() as i32,
        "the sandbox leads a session of its own"
    );
    assert_ne!(sid(child.id()).unwrap(), sid(std::process::id()).unwrap());
    // The sandbox leads its own process group (setsid): one group kill, as the exec tool
    // does on a timeout.
    let pgid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::killpg(pgid, nix::sys::signal::Signal::SIGKILL).unwrap();
    child.wait().unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while running() > 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "both sleeps died with the sandbox"
        );
        std::thread::yield_now();
    }
}

#[test]
fn a_missing_engine_is_unusable_with_a_reason_naming_it() {
    let error = Bubblewrap::detect(OsStr::new("/nonexistent/bwrap")).unwrap_err();
    assert!(error.0.contains("/nonexistent/bwrap"), "{error}");
    assert!(error.0.contains("not installed"), "{error}");
    let error = Bubblewrap::detect(OsStr::new("false")).unwrap_err();
    assert!(error.0.contains("--version failed"), "{error}");
}
