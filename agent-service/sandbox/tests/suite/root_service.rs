//! A root service's sandbox: its commands are the sandbox user on the host, not uid 0, and the
//! workspace files the service writes are handed to that user without handing over anything
//! outside the workspace.
//!
//! These tests play a root service, so they must run as root (CI does); as any other user they
//! fail at once saying so.

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::process::Command;

use openclaw_sandbox::{Access, Isolation, Limits, Mount, Network, SandboxUser};
use tempfile::TempDir;

use super::{bash, engine, sh, text};

fn require_root() {
    assert!(
        nix::unistd::Uid::effective().is_root(),
        "these tests play a root service: run them as root, as CI does"
    );
}

/// A workspace under a directory only root may enter (as `/root/.openclaw/sandboxes/...` is),
/// with an `outside` directory of root's files next to it.
struct Tree {
    _root: TempDir,
    workspace: PathBuf,
    outside: PathBuf,
}

impl Tree {
    fn new() -> Self {
        require_root();
        let root = tempfile::tempdir().unwrap();
        fs::set_permissions(root.path(), fs::Permissions::from_mode(0o700)).unwrap();
        let base = fs::canonicalize(root.path()).unwrap();
        let workspace = base.join("state/sandboxes/session-1");
        let outside = base.join("outside");
        fs::create_dir_all(&workspace).unwrap();
        fs::create_dir_all(outside.join("dir")).unwrap();
        fs::write(outside.join("secret"), "root's").unwrap();
        fs::write(outside.join("dir/inner"), "root's").unwrap();
        Self {
            _root: root,
            workspace,
            outside,
        }
    }

    fn isolation(&self, agent: Option<Mount>) -> Isolation {
        Isolation::new(engine(), self.workspace.clone(), agent, Network::Off)
    }
}

fn owner(path: &Path) -> u32 {
    fs::symlink_metadata(path).unwrap().uid()
}

#[test]
fn a_root_services_commands_are_the_sandbox_user_on_the_host() {
    let tree = Tree::new();
    let sandbox = tree.isolation(None);
    assert_eq!(sandbox.user(), Some(SandboxUser::DEFAULT));
    let out = bash(
        &sandbox,
        "id -u; grep '^Uid:' /proc/self/status; echo made > made.txt; echo ok",
    );
    let shown = text(&out);
    assert!(shown.contains("ok\n"), "{shown}");
    // What the host sees: the file the command made, and the uid it ran as.
    assert_eq!(owner(&tree.workspace.join("made.txt")), 65532, "{shown}");
    assert!(shown.starts_with("65532\nUid:\t65532\t65532"), "{shown}");
    // A configured user is used instead; root is refused as one.
    let tree = Tree::new();
    let other = tree
        .isolation(None)
        .with_user(SandboxUser::new(61000, 61001).unwrap());
    bash(&other, "echo again > again.txt");
    let made = fs::metadata(tree.workspace.join("again.txt")).unwrap();
    assert_eq!((made.uid(), made.gid()), (61000, 61001));
    let refused = SandboxUser::new(0, 61001).unwrap_err().to_string();
    assert!(refused.contains("must not be root"), "{refused}");
}

#[test]
fn a_root_services_sandbox_cannot_read_uid_0s_kernel_keys() {
    require_root();
    let keyctl = agent_testkit::packages::ensure_program("keyctl", "keyutils")
        .unwrap_or_else(|e| panic!("keyutils is needed: {e}"));
    let name = format!("openclaw-sandbox-test-{}", std::process::id());
    let added = Command::new(&keyctl)
        .args(["add", "user", &name, "planted-key-value", "@u"])
        .output()
        .unwrap();
    assert!(added.status.success(), "{}", text(&added));
    let id = String::from_utf8_lossy(&added.stdout).trim().to_owned();
    // Readable by its owner's uid, not only by its possessor: uid 0 anywhere may read it.
    let perm = Command::new(&keyctl)
        .args(["setperm", &id, "0x3f3f0000"])
        .status()
        .unwrap();
    assert!(perm.success());
    let tree = Tree::new();
    let out = bash(
        &tree.isolation(None),
        &format!("cat /proc/keys; keyctl print {id} 2>&1; keyctl show @u 2>&1; echo checked"),
    );
    let _ = Command::new(&keyctl).args(["revoke", &id]).status();
    let _ = Command::new(&keyctl).args(["unlink", &id, "@u"]).status();
    let shown = text(&out);
    assert!(shown.contains("checked\n"), "{shown}");
    assert!(!shown.contains("planted-key-value"), "{shown}");
    assert!(!shown.contains(&name), "{shown}");
    assert!(!shown.contains("_uid.0"), "{shown}");
}

#[test]
fn files_the_service_writes_stay_writable_from_the_sandbox() {
    let tree = Tree::new();
    // As the file tools do: root writes into the session workspace, at any depth.
    fs::create_dir_all(tree.workspace.join("src/deep")).unwrap();
    fs::write(tree.workspace.join("notes.md"), "one\n").unwrap();
    fs::write(tree.workspace.join("src/deep/lib.rs"), "fn a() {}\n").unwrap();
    let out = bash(
        &tree.isolation(None),
        "echo two >> notes.md && sed -i 's/a()/b()/' src/deep/lib.rs && mkdir src/deep/more \
         && echo ok",
    );
    assert!(text(&out).ends_with("ok\n"), "{}", text(&out));
    assert_eq!(
        fs::read_to_string(tree.workspace.join("notes.md")).unwrap(),
        "one\ntwo\n"
    );
    assert_eq!(
        fs::read_to_string(tree.workspace.join("src/deep/lib.rs")).unwrap(),
        "fn b() {}\n"
    );
    // And what the sandbox made, root reads and writes back as the file tools would.
    fs::write(tree.workspace.join("src/deep/more/x"), "host").unwrap();
    let out = bash(&tree.isolation(None), "cat src/deep/more/x; echo");
    assert_eq!(text(&out), "host\n");
}

#[test]
fn nothing_outside_the_workspace_is_handed_over() {
    let tree = Tree::new();
    let ws = &tree.workspace;
    // Every way a name in the workspace can lead outside it.
    symlink(tree.outside.join("secret"), ws.join("link-to-file")).unwrap();
    symlink(&tree.outside, ws.join("link-to-dir")).unwrap();
    fs::create_dir(ws.join("sub")).unwrap();
    symlink("../../../../outside", ws.join("sub/relative-escape")).unwrap();
    fs::hard_link(tree.outside.join("secret"), ws.join("hard-link")).unwrap();
    let out = bash(
        &tree.isolation(None),
        "ls -la . sub >/dev/null; echo x > link-to-file 2>&1; echo x > link-to-dir/secret 2>&1; \
         echo x > hard-link 2>&1; echo checked",
    );
    assert!(text(&out).contains("checked\n"), "{}", text(&out));
    for path in [
        tree.outside.clone(),
        tree.outside.join("secret"),
        tree.outside.join("dir"),
        tree.outside.join("dir/inner"),
    ] {
        assert_eq!(owner(&path), 0, "{} was handed over", path.display());
    }
    assert_eq!(
        fs::read_to_string(tree.outside.join("secret")).unwrap(),
        "root's"
    );
    // The links themselves are the workspace's, so the sandbox may remove them.
    assert_eq!(owner(&ws.join("link-to-dir")), 65532);
    assert_eq!(owner(&ws.join("sub")), 65532);
    // A file with another name elsewhere stays root's.
    assert_eq!(owner(&ws.join("hard-link")), 0);
}

#[test]
fn a_directory_swapped_for_a_link_during_hand_over_does_not_lead_outside() {
    let tree = Tree::new();
    let ws = &tree.workspace;
    for i in 0..200 {
        fs::write(tree.outside.join(format!("f{i}")), "root's").unwrap();
    }
    // A background command keeps exchanging a directory of the workspace with a link to
    // `outside` while the service hands the workspace over again and again, with root-owned
    // files appearing in it each time (the file tools at work).
    let sandbox = tree.isolation(None);
    fs::create_dir(ws.join("d")).unwrap();
    let mut swapper = sandbox
        .command(
            ws,
            std::ffi::OsStr::new("sh"),
            &[
                std::ffi::OsStr::new("-c"),
                &std::ffi::OsString::from(format!(
                    "while :; do mv d d.real; ln -s {} d; rm d; mv d.real d; done",
                    tree.outside.display()
                )),
            ],
        )
        .unwrap()
        .spawn()
        .unwrap();
    for round in 0..60 {
        let _ = fs::write(ws.join(format!("d/r{round}")), "root writes");
        let _ = fs::write(ws.join(format!("top{round}")), "root writes");
        sandbox
            .command(ws, std::ffi::OsStr::new("true"), &[])
            .unwrap()
            .status()
            .unwrap();
    }
    let _ = nix::sys::signal::killpg(
        nix::unistd::Pid::from_raw(swapper.id() as i32),
        nix::sys::signal::Signal::SIGKILL,
    );
    swapper.wait().unwrap();
    for entry in fs::read_dir(&tree.outside).unwrap() {
        let path = entry.unwrap().path();
        assert_eq!(owner(&path), 0, "{} was handed over", path.display());
    }
    assert_eq!(owner(&ws.join("top59")), 65532);
}

#[test]
fn an_agent_workspace_is_handed_over_only_when_mounted_read_write_and_the_services() {
    let tree = Tree::new();
    let parent = tree.outside.parent().unwrap();
    let agent = parent.join("agent");
    fs::create_dir(&agent).unwrap();
    fs::write(agent.join("AGENTS.md"), "rules\n").unwrap();
    let mount = |access| Mount {
        path: agent.clone(),
        access,
    };
    let script = format!("echo more >> {}/AGENTS.md 2>&1; echo done", agent.display());
    // Read-only: nothing changes hands, and nothing can be written.
    let out = bash(&tree.isolation(Some(mount(Access::ReadOnly))), &script);
    assert!(text(&out).contains("AGENTS.md: "), "{}", text(&out));
    assert_eq!(owner(&agent.join("AGENTS.md")), 0);
    assert_eq!(owner(&agent), 0);
    assert_eq!(
        fs::read_to_string(agent.join("AGENTS.md")).unwrap(),
        "rules\n"
    );
    // Read-write: the service's files are the sandbox user's, so the write lands.
    let out = bash(&tree.isolation(Some(mount(Access::ReadWrite))), &script);
    assert_eq!(text(&out), "done\n");
    assert_eq!(
        fs::read_to_string(agent.join("AGENTS.md")).unwrap(),
        "rules\nmore\n"
    );
    // Another user's workspace keeps its owner: the sandbox writes only where they let it.
    let theirs = parent.join("theirs");
    fs::create_dir(&theirs).unwrap();
    fs::write(theirs.join("AGENTS.md"), "theirs\n").unwrap();
    fs::write(theirs.join("root-made.md"), "root\n").unwrap();
    nix::unistd::chown(&theirs, Some(nix::unistd::Uid::from_raw(1000)), None).unwrap();
    nix::unistd::chown(
        &theirs.join("AGENTS.md"),
        Some(nix::unistd::Uid::from_raw(1000)),
        None,
    )
    .unwrap();
    let sandbox = tree.isolation(Some(Mount {
        path: theirs.clone(),
        access: Access::ReadWrite,
    }));
    let out = bash(
        &sandbox,
        &format!("echo x >> {}/AGENTS.md 2>&1; echo done", theirs.display()),
    );
    assert!(text(&out).contains("Permission denied"), "{}", text(&out));
    assert_eq!(owner(&theirs), 1000);
    assert_eq!(owner(&theirs.join("root-made.md")), 0);
}

#[test]
fn the_process_limit_of_a_root_service_is_per_sandbox() {
    // Two sandboxes of the same user, each near its limit, do not starve each other.
    let tree = Tree::new();
    let limited = |n| {
        tree.isolation(None).with_limits(Limits {
            processes: Some(n),
            ..Limits::DEFAULT
        })
    };
    let mut first = limited(30)
        .command(
            &tree.workspace,
            std::ffi::OsStr::new("sh"),
            &[
                std::ffi::OsStr::new("-c"),
                std::ffi::OsStr::new(
                    "i=0; while [ $i -lt 20 ]; do sleep 600 & i=$((i+1)); done; echo up; wait",
                ),
            ],
        )
        .unwrap()
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(first.stdout.as_mut().unwrap()),
        &mut line,
    )
    .unwrap();
    assert_eq!(line, "up\n");
    let out = sh(
        &limited(30),
        "i=0; while [ $i -lt 20 ]; do sleep 600 & i=$((i+1)); done; echo started $i",
    );
    let _ = nix::sys::signal::killpg(
        nix::unistd::Pid::from_raw(first.id() as i32),
        nix::sys::signal::Signal::SIGKILL,
    );
    first.wait().unwrap();
    assert!(text(&out).contains("started 20"), "{}", text(&out));
}

#[test]
fn a_host_network_sandbox_reaches_abstract_sockets_as_the_sandbox_user() {
    // With `network: "host"` the sandbox shares the host's abstract Unix sockets, which have no
    // file permissions: their servers tell callers apart by the peer's credentials alone. A root
    // service's sandbox must not present uid 0's.
    use std::io::Read;
    use std::os::linux::net::SocketAddrExt;
    use std::os::unix::net::{SocketAddr, UnixListener};
    require_root();
    let socat = agent_testkit::packages::ensure_program("socat", "socat")
        .unwrap_or_else(|e| panic!("socat is needed: {e}"));
    let name = format!("openclaw-sandbox-test-{}", std::process::id());
    let listener =
        UnixListener::bind_addr(&SocketAddr::from_abstract_name(name.as_bytes()).unwrap()).unwrap();
    let server = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let peer =
            nix::sys::socket::getsockopt(&stream, nix::sys::socket::sockopt::PeerCredentials)
                .unwrap();
        let mut said = String::new();
        stream.read_to_string(&mut said).unwrap();
        (peer.uid(), said)
    });
    let tree = Tree::new();
    let sandbox = Isolation::new(engine(), tree.workspace.clone(), None, Network::On);
    let out = bash(
        &sandbox,
        &format!(
            "echo hello | {} - ABSTRACT-CONNECT:{name} 2>&1; echo sent",
            socat.display()
        ),
    );
    assert!(text(&out).contains("sent"), "{}", text(&out));
    let (uid, said) = server.join().unwrap();
    assert_eq!(said, "hello\n", "{}", text(&out));
    assert_eq!(uid, 65532, "the peer the server saw");
}
