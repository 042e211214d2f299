//! The turn-file cache: files and privacy judgement through it equal a fresh load and a fresh
//! judgement after changes to the files and to what makes a file private. (That a bootstrap
//! hook's output never reaches it is tested with the hooks.)
//!
//! Files written here are moments old, and the cache keeps a load only when every file is
//! older than its margin; the tests that need kept loads pass a clock an hour ahead and make
//! each change in a later tick of the filesystem's clock ([`next_tick`]).

use std::os::unix::fs::{PermissionsExt, symlink};
use std::time::{Duration, SystemTime};

use super::*;

/// A clock far enough ahead that every file written by the test looks settled.
fn later() -> SystemTime {
    SystemTime::now() + Duration::from_secs(3600)
}

/// A workspace with the bootstrap files, MEMORY.md, a memory note and a shared folder, beside
/// a directory for probes (`base`).
struct Ws {
    _root: tempfile::TempDir,
    base: PathBuf,
    path: PathBuf,
}

impl Ws {
    fn new() -> Self {
        let root = tempfile::tempdir().expect("tempdir");
        let base = std::fs::canonicalize(root.path()).expect("canonical");
        let path = base.join("ws");
        for dir in ["memory", "shared", "personas"] {
            std::fs::create_dir_all(path.join(dir)).expect("mkdir");
        }
        let ws = Self {
            _root: root,
            base,
            path,
        };
        for (name, text) in [
            ("AGENTS.md", "Agent rules.\n"),
            ("SOUL.md", "Be kind.\n"),
            ("USER.md", "Ada.\n"),
            ("MEMORY.md", "The user's secrets.\n"),
            ("memory/diary.md", "Private diary.\n"),
            ("shared/user.md", "Shared notes on Ada.\n"),
            ("personas/pirate.md", "Arr.\n"),
        ] {
            ws.write(name, text);
        }
        ws
    }

    fn at(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }

    fn write(&self, name: &str, text: &str) {
        std::fs::write(self.at(name), text).expect("write");
    }

    fn remove(&self, name: &str) {
        std::fs::remove_file(self.at(name)).expect("remove");
    }

    /// Returns once the filesystem's clock has moved past every change made so far (a probe
    /// beside the workspace is changed until its ctime moves); no sleep.
    fn next_tick(&self) {
        use std::os::unix::fs::MetadataExt;
        let probe = self.base.join("tick-probe");
        std::fs::write(&probe, "").expect("probe");
        let ctime = || {
            let meta = std::fs::metadata(&probe).expect("probe");
            (meta.ctime(), meta.ctime_nsec())
        };
        let first = ctime();
        while ctime() == first {
            std::fs::set_permissions(&probe, std::fs::Permissions::from_mode(0o644))
                .expect("chmod");
            std::thread::yield_now();
        }
    }
}

/// The files and judgement a fresh load and scan give now.
fn fresh(ws: &Ws) -> (Vec<InjectedFile>, PrivateFiles) {
    let files = read_turn_files(&ws.path).expect("load");
    let private = PrivateFiles::scan(&ws.path, &files);
    (files, private)
}

fn private_names(private: &PrivateFiles) -> Vec<&str> {
    ["AGENTS.md", "SOUL.md", "USER.md", "MEMORY.md"]
        .into_iter()
        .filter(|name| private.is_private(name))
        .collect()
}

#[test]
fn files_and_judgement_through_the_cache_follow_every_change_that_makes_a_file_private() {
    let cache = turn_file_cache();
    let ws = Ws::new();
    let (files, private) = turn_files_at(&cache, &ws.path, later()).expect("load");
    assert_eq!((files, private.clone()), fresh(&ws));
    assert_eq!(private_names(&private), ["MEMORY.md"]);

    // Each change, then the names judged private (MEMORY.md always is, by its name).
    type Change = fn(&Ws);
    let changes: [(&str, Change, &[&str]); 7] = [
        ("nothing", |_| {}, &["MEMORY.md"]),
        // A link under an extra name the cache watches: USER.md itself is untouched.
        (
            "memory.md linked to USER.md",
            |ws| symlink("USER.md", ws.at("memory.md")).expect("link"),
            &["USER.md", "MEMORY.md"],
        ),
        (
            "memory.md removed",
            |ws| ws.remove("memory.md"),
            &["MEMORY.md"],
        ),
        (
            "USER.md a hard link of MEMORY.md",
            |ws| {
                ws.remove("USER.md");
                std::fs::hard_link(ws.at("MEMORY.md"), ws.at("USER.md")).expect("link");
            },
            &["USER.md", "MEMORY.md"],
        ),
        (
            "USER.md a link into memory/",
            |ws| {
                ws.remove("USER.md");
                symlink("memory/diary.md", ws.at("USER.md")).expect("link");
            },
            &["USER.md", "MEMORY.md"],
        ),
        (
            "USER.md a plain file again",
            |ws| {
                ws.remove("USER.md");
                ws.write("USER.md", "Ada.\n");
            },
            &["MEMORY.md"],
        ),
        (
            "MEMORY.md gone",
            |ws| ws.remove("MEMORY.md"),
            // By its name only: nothing is the same file any more.
            &["MEMORY.md"],
        ),
    ];
    for (what, change, expected) in changes {
        ws.next_tick();
        change(&ws);
        // Twice: the first load may keep what it read, the second may use it.
        for _ in 0..2 {
            let (files, private) = turn_files_at(&cache, &ws.path, later()).expect("load");
            assert_eq!((files, private.clone()), fresh(&ws), "after {what}");
            assert_eq!(private_names(&private), expected, "after {what}");
        }
    }
    // The plain states were kept and used; the linked ones were read every time.
    assert!(cache.stats().hits >= 4, "{:?}", cache.stats());
}

#[tokio::test]
async fn a_render_right_after_an_edit_reads_the_edit() {
    // The real clock: the files were just written, so nothing is kept and every edit is read.
    let cache = Arc::new(turn_file_cache());
    let ws = Ws::new();
    let first = cached_turn_files(&cache, &ws.path).await.expect("load");
    assert_eq!(first, fresh(&ws));

    ws.write("SOUL.md", "Be bold.\n");

    let second = cached_turn_files(&cache, &ws.path).await.expect("load");
    assert_eq!(second, fresh(&ws));
    assert_eq!(
        second
            .0
            .iter()
            .find(|f| f.name == "SOUL.md")
            .map(|f| f.content.as_str()),
        Some("Be bold.\n")
    );
}

#[tokio::test]
async fn a_missing_workspace_is_the_same_error_as_before() {
    let cache = Arc::new(turn_file_cache());
    let ws = Ws::new();
    let gone = ws.base.join("gone");
    let error = cached_turn_files(&cache, &gone).await.expect_err("missing");
    let before = read_turn_files(&gone).expect_err("missing");
    assert_eq!(error.to_string(), before.to_string());
    assert_eq!(cache.stats().entries, 0);
}
