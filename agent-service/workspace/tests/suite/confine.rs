//! Path confinement (lesson L15c): one regression test per bypass class, and a property test
//! that compares every answer with the kernel's own resolution.

use std::fs;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use openclaw_workspace::{Confined, DenyReason, Error};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

/// `<base>/ws` is the workspace, `<base>/outside` holds a secret, and the workspace holds every
/// kind of link.
struct Fixture {
    _dir: tempfile::TempDir,
    base: PathBuf,
    root: PathBuf,
}

impl Fixture {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(dir.path()).unwrap();
        let root = base.join("ws");
        let outside = base.join("outside");
        fs::create_dir_all(root.join("sub")).unwrap();
        fs::create_dir_all(&outside).unwrap();
        fs::create_dir_all(base.join("ws-evil")).unwrap();
        fs::write(outside.join("secret.txt"), "secret\n").unwrap();
        fs::write(base.join("ws-evil/file.txt"), "evil\n").unwrap();
        fs::write(root.join("file.txt"), "inside\n").unwrap();
        fs::write(root.join("sub/inner.txt"), "inner\n").unwrap();
        fs::write(root.join("~notes.md"), "tilde\n").unwrap();
        let link = |target: &Path, name: &str| symlink(target, root.join(name)).unwrap();
        link(&outside, "out_dir");
        link(&outside.join("secret.txt"), "out_file");
        link(&root.join("sub/inner.txt"), "in_link");
        link(Path::new("sub"), "in_dir_link");
        link(&root.join("nowhere.txt"), "dangling_in");
        link(&outside.join("new.txt"), "dangling_out");
        link(&root.join("no-dir"), "dangling_dir");
        link(Path::new("loop_b"), "loop_a");
        link(Path::new("loop_a"), "loop_b");
        symlink("../..", root.join("sub/up")).unwrap();
        Self {
            _dir: dir,
            base,
            root,
        }
    }

    fn confined(&self) -> Confined {
        Confined::new(&self.root).unwrap()
    }
}

fn denied_reason(result: Result<PathBuf, Error>) -> DenyReason {
    match result {
        Err(Error::PathDenied { reason, .. }) => reason,
        other => panic!("expected PathDenied, got {other:?}"),
    }
}

#[test]
fn relative_paths_resolve_against_the_root() {
    let f = Fixture::new();
    let c = f.confined();
    assert_eq!(c.root(), f.root);
    assert_eq!(c.resolve_read("file.txt").unwrap(), f.root.join("file.txt"));
    assert_eq!(
        c.resolve_read("./sub/../file.txt").unwrap(),
        f.root.join("file.txt")
    );
    assert_eq!(c.resolve_read(".").unwrap(), f.root);
    assert_eq!(
        c.resolve_write("new/deeper/file.txt").unwrap(),
        f.root.join("new/deeper/file.txt")
    );
    assert_eq!(
        c.resolve_write("new/../created.txt").unwrap(),
        f.root.join("created.txt")
    );
}

#[test]
fn dot_dot_escapes_are_refused_for_reads_and_writes() {
    let f = Fixture::new();
    let c = f.confined();
    for path in [
        "../outside/secret.txt",
        "sub/../../outside/secret.txt",
        "..",
        "new/../../x",
        "../ws-evil/file.txt",
    ] {
        assert_eq!(
            denied_reason(c.resolve_read(path)),
            DenyReason::ParentEscape,
            "{path}"
        );
        assert_eq!(
            denied_reason(c.resolve_write(path)),
            DenyReason::ParentEscape,
            "{path}"
        );
    }
    // Leaving and coming straight back in is fine: the target is inside.
    assert_eq!(
        c.resolve_read("../ws/file.txt").unwrap(),
        f.root.join("file.txt")
    );
}

#[test]
fn absolute_paths_must_lie_inside() {
    let f = Fixture::new();
    let c = f.confined();
    for path in [
        PathBuf::from("/etc/passwd"),
        f.base.join("outside/secret.txt"),
        f.base.join("ws-evil/file.txt"),
        f.root.join("../outside/secret.txt"),
        PathBuf::from("/"),
    ] {
        assert_eq!(
            denied_reason(c.resolve_read(&path)),
            DenyReason::OutsideWorkspace,
            "{path:?}"
        );
        assert_eq!(
            denied_reason(c.resolve_write(&path)),
            DenyReason::OutsideWorkspace,
            "{path:?}"
        );
    }
    assert_eq!(
        c.resolve_read(f.root.join("file.txt")).unwrap(),
        f.root.join("file.txt")
    );
    assert_eq!(
        c.resolve_write(f.root.join("sub/x")).unwrap(),
        f.root.join("sub/x")
    );
}

#[test]
fn the_configured_spelling_of_a_symlinked_workspace_is_accepted() {
    let f = Fixture::new();
    let alias = f.base.join("ws-alias");
    symlink(&f.root, &alias).unwrap();
    let c = Confined::new(&alias).unwrap();

    assert_eq!(c.root(), f.root);
    assert_eq!(
        c.resolve_read(alias.join("file.txt")).unwrap(),
        f.root.join("file.txt")
    );
    assert_eq!(
        c.resolve_read(f.root.join("file.txt")).unwrap(),
        f.root.join("file.txt")
    );
}

#[test]
fn a_symlinked_parent_directory_pointing_outside_is_refused() {
    let f = Fixture::new();
    let c = f.confined();
    assert_eq!(
        denied_reason(c.resolve_read("out_dir/secret.txt")),
        DenyReason::SymlinkEscape
    );
    assert_eq!(
        denied_reason(c.resolve_write("out_dir/new.txt")),
        DenyReason::SymlinkEscape
    );
    assert_eq!(
        denied_reason(c.resolve_write("out_dir/deeper/new.txt")),
        DenyReason::SymlinkEscape
    );
    // A relative link climbing out (`sub/up -> ../..`) is caught the same way.
    assert_eq!(
        denied_reason(c.resolve_read("sub/up/outside/secret.txt")),
        DenyReason::SymlinkEscape
    );
    assert!(!f.base.join("outside/new.txt").exists());
}

#[test]
fn a_final_component_symlink_pointing_outside_is_refused_for_reads_and_writes() {
    let f = Fixture::new();
    let c = f.confined();
    assert_eq!(
        denied_reason(c.resolve_read("out_file")),
        DenyReason::SymlinkEscape
    );
    assert_eq!(
        denied_reason(c.resolve_write("out_file")),
        DenyReason::SymlinkEscape
    );
    assert_eq!(
        denied_reason(c.resolve_read(f.root.join("out_file"))),
        DenyReason::SymlinkEscape
    );
}

#[test]
fn symlinks_that_stay_inside_resolve_to_their_real_target() {
    let f = Fixture::new();
    let c = f.confined();
    let inner = f.root.join("sub/inner.txt");
    assert_eq!(c.resolve_read("in_link").unwrap(), inner);
    // Lesson L15c: never write through a final-component link, even inside.
    assert_eq!(
        denied_reason(c.resolve_write("in_link")),
        DenyReason::FinalSymlink
    );
    assert_eq!(c.resolve_write("sub/inner.txt").unwrap(), inner);
    assert_eq!(c.resolve_read("in_dir_link/inner.txt").unwrap(), inner);
    assert_eq!(
        c.resolve_write("in_dir_link/new.txt").unwrap(),
        f.root.join("sub/new.txt")
    );
    // `..` after a link applies to the link's target, as in the kernel.
    assert_eq!(
        c.resolve_read("in_dir_link/../file.txt").unwrap(),
        f.root.join("file.txt")
    );
}

#[test]
fn writes_through_dangling_symlinks_are_refused() {
    let f = Fixture::new();
    let c = f.confined();
    // A final-component link is refused as such; a dangling link earlier in
    // the path is refused as dangling.
    assert_eq!(
        denied_reason(c.resolve_write("dangling_in")),
        DenyReason::FinalSymlink
    );
    assert_eq!(
        denied_reason(c.resolve_write("dangling_dir/file.txt")),
        DenyReason::DanglingSymlink
    );
    // Pointing outside is refused before its danglingness matters.
    assert_eq!(
        denied_reason(c.resolve_write("dangling_out")),
        DenyReason::SymlinkEscape
    );
    assert!(matches!(
        c.resolve_read("dangling_in"),
        Err(Error::NotFound { .. })
    ));
    assert!(!f.root.join("nowhere.txt").exists());
}

#[test]
fn home_expansion_is_refused_unless_a_home_is_given_and_then_checked() {
    let f = Fixture::new();
    let c = f.confined();
    for path in [
        "~",
        "~/file.txt",
        "~root/.ssh/id_rsa",
        "~user/../ws/file.txt",
        "~notes.md",
    ] {
        assert_eq!(
            denied_reason(c.resolve_read(path)),
            DenyReason::HomeExpansion,
            "{path}"
        );
        assert_eq!(
            denied_reason(c.resolve_write(path)),
            DenyReason::HomeExpansion,
            "{path}"
        );
    }
    // A file whose name starts with `~` is reachable with `./`.
    assert_eq!(
        c.resolve_read("./~notes.md").unwrap(),
        f.root.join("~notes.md")
    );

    let with_home = f.confined().with_home(f.base.clone());
    assert_eq!(
        with_home.resolve_read("~/ws/file.txt").unwrap(),
        f.root.join("file.txt")
    );
    assert_eq!(
        denied_reason(with_home.resolve_read("~/outside/secret.txt")),
        DenyReason::OutsideWorkspace
    );
    assert_eq!(
        denied_reason(with_home.resolve_read("~root/ws/file.txt")),
        DenyReason::HomeExpansion
    );
    assert_eq!(
        denied_reason(with_home.resolve_read("~user/../ws/file.txt")),
        DenyReason::HomeExpansion
    );
}

#[test]
fn nul_bytes_and_empty_paths_are_invalid() {
    let f = Fixture::new();
    let c = f.confined();
    for path in ["file.txt\0../../outside/secret.txt", "\0", ""] {
        let error = c.resolve_read(path).unwrap_err();
        assert!(
            matches!(error, Error::InvalidPath { .. }),
            "{path:?}: {error:?}"
        );
        assert!(matches!(
            c.resolve_write(path),
            Err(Error::InvalidPath { .. })
        ));
    }
    assert_eq!(
        c.resolve_read("a\0b").unwrap_err().to_string(),
        r#"invalid path "a\0b": the path contains a NUL byte"#
    );
}

#[test]
fn symlink_loops_end_in_a_refusal() {
    let f = Fixture::new();
    let c = f.confined();
    assert_eq!(
        denied_reason(c.resolve_read("loop_a")),
        DenyReason::TooManySymlinks
    );
    assert_eq!(
        denied_reason(c.resolve_write("loop_a/x")),
        DenyReason::TooManySymlinks
    );
}

#[test]
fn refusals_name_the_requested_path_and_the_rule() {
    let f = Fixture::new();
    let c = f.confined();
    assert_eq!(
        c.resolve_read("../outside/secret.txt")
            .unwrap_err()
            .to_string(),
        "permission denied for ../outside/secret.txt: `..` leads outside the workspace"
    );
    assert_eq!(
        c.resolve_read("out_file").unwrap_err().to_string(),
        "permission denied for out_file: a symbolic link leads outside the workspace"
    );
}

#[test]
fn open_read_returns_the_checked_regular_file_only() {
    let f = Fixture::new();
    let c = f.confined();
    let (mut file, real) = c.open_read("in_link").unwrap();
    let mut text = String::new();
    file.read_to_string(&mut text).unwrap();
    assert_eq!(
        (text.as_str(), real),
        ("inner\n", f.root.join("sub/inner.txt"))
    );

    assert!(matches!(c.open_read("sub"), Err(Error::NotAFile { .. })));
    let fifo = f.root.join("fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    // Refused before opening, so the test does not hang on a FIFO without a writer.
    assert!(matches!(c.open_read("fifo"), Err(Error::NotAFile { .. })));
    assert_eq!(
        denied_reason(c.open_read("out_file").map(|(_, p)| p)),
        DenyReason::SymlinkEscape
    );
}

#[test]
fn a_root_that_is_not_a_directory_is_refused() {
    let f = Fixture::new();
    assert!(Confined::new(&f.root.join("file.txt")).is_err());
    assert!(Confined::new(&f.root.join("missing")).is_err());
}

/// Path pieces that exercise every link in the fixture.
const SEGMENTS: &[&str] = &[
    "sub",
    "..",
    ".",
    "file.txt",
    "inner.txt",
    "out_dir",
    "out_file",
    "in_link",
    "in_dir_link",
    "dangling_in",
    "dangling_dir",
    "dangling_out",
    "new",
    "up",
    "secret.txt",
    "ws",
    "outside",
    "loop_a",
    "~",
    "~user",
];

fn path_strategy() -> impl Strategy<Value = (u8, Vec<&'static str>)> {
    (
        0_u8..3,
        prop::collection::vec(prop::sample::select(SEGMENTS), 1..7),
    )
}

#[test]
fn every_accepted_path_is_inside_and_agrees_with_the_kernel() {
    let f = Fixture::new();
    let c = f.confined();
    let mut runner = TestRunner::new(Config::with_cases(2_000));
    runner
        .run(&path_strategy(), |(anchor, segments)| {
            let relative = segments.join("/");
            let requested = match anchor {
                0 => PathBuf::from(&relative),
                1 => f.root.join(&relative),
                _ => f.base.join(&relative),
            };
            let kernel = fs::canonicalize(f.root.join(&requested)).ok();

            match c.resolve_read(&requested) {
                Ok(real) => {
                    prop_assert!(real.starts_with(&f.root), "{requested:?} -> {real:?}");
                    if let Some(kernel) = &kernel {
                        prop_assert_eq!(&real, kernel, "{:?}", requested);
                    }
                }
                Err(Error::PathDenied {
                    reason: DenyReason::SymlinkEscape,
                    ..
                }) => {
                    if let Some(kernel) = &kernel {
                        prop_assert!(!kernel.starts_with(&f.root), "{requested:?}");
                    }
                }
                Err(_) => {}
            }
            // No false refusals: a plain path (no `..`, no `~`) the kernel resolves inside is
            // readable.
            let plain = !segments.iter().any(|s| *s == ".." || s.starts_with('~'));
            if plain && anchor != 2 && kernel.as_ref().is_some_and(|k| k.starts_with(&f.root)) {
                prop_assert!(c.resolve_read(&requested).is_ok(), "{requested:?}");
            }

            if let Ok(real) = c.resolve_write(&requested) {
                prop_assert!(real.starts_with(&f.root), "{requested:?} -> {real:?}");
                // Fully resolved: no component that exists is a symlink.
                let mut prefix = PathBuf::new();
                for component in real.components() {
                    prefix.push(component);
                    if let Ok(meta) = fs::symlink_metadata(&prefix) {
                        prop_assert!(!meta.file_type().is_symlink(), "{prefix:?} in {real:?}");
                    }
                }
                prop_assert!(!real.as_os_str().as_bytes().contains(&0));
            }
            Ok(())
        })
        .unwrap();
}

/// The root itself swapped for a link out after the confinement was made (an agent's command
/// can rename its workspace and link the name elsewhere): names under it are refused, and a
/// read through the root's handle never returns the outside file.
#[test]
fn a_root_replaced_by_a_link_out_is_never_followed() {
    let f = Fixture::new();
    let c = f.confined();
    fs::rename(&f.root, f.base.join("ws-moved")).unwrap();
    symlink(f.base.join("outside"), &f.root).unwrap();
    assert_eq!(
        denied_reason(c.resolve_read("secret.txt")),
        DenyReason::SymlinkEscape
    );
    assert_eq!(
        denied_reason(c.resolve_write("new.txt")),
        DenyReason::SymlinkEscape
    );
    assert!(
        c.open_read("secret.txt").is_err(),
        "nothing outside is opened"
    );
    // The same name in the moved workspace is a different file than the one checked.
    fs::write(f.base.join("ws-moved/secret.txt"), "decoy\n").unwrap();
    if let Ok((mut file, _)) = c.open_read("secret.txt") {
        let mut text = String::new();
        file.read_to_string(&mut text).unwrap();
        assert_ne!(text, "secret\n", "the outside file was opened");
    }
}

/// A regular file swapped for a FIFO between the type check and the open: the open must not
/// wait for a writer (it is non-blocking, and the file opened is then not the file checked).
/// Another thread swaps the name back and forth while this one opens it again and again.
#[test]
fn a_fifo_swapped_in_after_the_check_does_not_block_the_open() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, mpsc};
    use std::time::{Duration, Instant};

    let f = Fixture::new();
    let c = Confined::new(&f.root).unwrap();
    let target = f.root.join("swapped");
    fs::write(&target, "regular\n").unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let (stop, root, target) = (Arc::clone(&stop), f.root.clone(), target.clone());
        std::thread::spawn(move || {
            let (fifo, file) = (root.join(".fifo"), root.join(".file"));
            while !stop.load(Ordering::Relaxed) {
                let _ = nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU);
                let _ = fs::rename(&fifo, &target);
                let _ = fs::write(&file, "regular\n");
                let _ = fs::rename(&file, &target);
            }
        })
    };
    let (done_tx, done_rx) = mpsc::channel();
    std::thread::spawn(move || {
        let until = Instant::now() + Duration::from_secs(3);
        let (mut opened, mut refused) = (0_u32, 0_u32);
        while Instant::now() < until {
            match c.open_read("swapped") {
                Ok(_) => opened += 1,
                Err(_) => refused += 1,
            }
        }
        let _ = done_tx.send((opened, refused));
    });
    let outcome = done_rx.recv_timeout(Duration::from_secs(30));
    stop.store(true, Ordering::Relaxed);
    let (opened, refused) = outcome.unwrap_or_else(|_| {
        panic!("open_read blocked: it opened a FIFO that was swapped in after the check")
    });
    swapper.join().unwrap();
    assert!(
        opened > 0,
        "the regular file was opened ({refused} refused)"
    );
}
