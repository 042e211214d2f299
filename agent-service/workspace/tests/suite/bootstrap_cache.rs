//! The bootstrap cache returns what a fresh load returns, after every kind of change to a
//! bootstrap name, to the root, or to what a name leads to; it keeps loads only while nothing
//! changed, and holds no more than its limits.
//!
//! The class of attack: a stale cached view that differs from what a confined fresh read would
//! return now, made by a change the validity key cannot see (content rewritten within one
//! timestamp tick, a forged mtime, a name replaced by a file of the same size), by a name that
//! now leads elsewhere (a link out, a hard link, a directory or FIFO), by a change to the root
//! itself (swapped directory, re-pointed parent link), or by a race with the load.
//!
//! Files written by a test are seconds old at most, and a load is kept only when every file is
//! older than [`RACY_MARGIN`]. Tests that need kept loads pass a clock an hour ahead, so files
//! look settled, and then make each change in a later tick of the filesystem's clock than the
//! one before ([`next_tick`]), as a real change made after the margin would be. The racy case
//! itself is tested with the real clock.

use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::Path;
use std::time::{Duration, SystemTime};

use openclaw_workspace::{
    BootstrapCache, BootstrapFile, BootstrapName, CacheLimits, CacheStats, MissingReason,
    RACY_MARGIN, SetupOptions, load_bootstrap_files,
};

use super::Home;

/// A clock far enough ahead that every file written by the test looks settled.
pub(super) fn later() -> SystemTime {
    SystemTime::now() + Duration::from_secs(3600)
}

pub(super) fn cache() -> BootstrapCache<()> {
    BootstrapCache::new(CacheLimits::default(), &[])
}

pub(super) fn cached(
    cache: &BootstrapCache<()>,
    workspace: &Path,
    now: SystemTime,
) -> Vec<BootstrapFile> {
    cache.load(workspace, now, |_| ()).unwrap().files.clone()
}

fn file(files: &[BootstrapFile], name: BootstrapName) -> Option<&BootstrapFile> {
    files.iter().find(|f| f.name == name)
}

/// Returns once the filesystem's clock has moved past every change made so far: a probe beside
/// the workspace is changed until its ctime differs from its first one. No sleep: the wait is
/// for the clock's tick itself (a few milliseconds).
pub(super) fn next_tick(home: &Home) {
    let probe = home.base.join("tick-probe");
    fs::write(&probe, "").unwrap();
    let first = ctime(&probe);
    while ctime(&probe) == first {
        fs::set_permissions(&probe, fs::Permissions::from_mode(0o644)).unwrap();
        std::thread::yield_now();
    }
}

fn ctime(path: &Path) -> (i64, i64) {
    use std::os::unix::fs::MetadataExt;
    let meta = fs::symlink_metadata(path).unwrap();
    (meta.ctime(), meta.ctime_nsec())
}

fn mtime(path: &Path) -> SystemTime {
    fs::symlink_metadata(path).unwrap().modified().unwrap()
}

fn set_mtime(path: &Path, to: SystemTime) {
    fs::OpenOptions::new()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(to)
        .unwrap();
}

/// A seeded workspace, loaded once through `cache` and kept.
fn kept(cache: &BootstrapCache<()>) -> Home {
    let home = Home::new();
    home.ensure(SetupOptions::default()).unwrap();
    home.write("USER.md", "Ada\n");
    let first = cached(cache, &home.workspace, later());
    assert_eq!(first, load_bootstrap_files(&home.workspace).unwrap());
    assert_eq!(cache.stats().entries, 1, "the load was not kept");
    next_tick(&home);
    home
}

/// Loads through the cache and fresh, asserts they agree, and returns the files.
fn agrees(cache: &BootstrapCache<()>, home: &Home, now: SystemTime) -> Vec<BootstrapFile> {
    let through_cache = cached(cache, &home.workspace, now);
    let fresh = load_bootstrap_files(&home.workspace).unwrap();
    assert_eq!(through_cache, fresh);
    fresh
}

#[test]
fn a_kept_load_is_returned_while_nothing_changes() {
    let cache = cache();
    let home = kept(&cache);

    for _ in 0..3 {
        agrees(&cache, &home, later());
    }

    let stats = cache.stats();
    assert_eq!((stats.hits, stats.misses, stats.entries), (3, 1, 1));
    assert!(stats.bytes > 0);
}

#[test]
fn kept_answers_only_what_load_would_answer_without_reading() {
    let cache = cache();
    let home = Home::new();
    home.ensure(SetupOptions::default()).unwrap();
    assert!(
        cache.kept(&home.workspace, later()).is_none(),
        "nothing loaded yet"
    );
    let home = {
        drop(home);
        kept(&cache)
    };
    let hit = cache.kept(&home.workspace, later()).expect("a kept load");
    assert_eq!(hit.files, load_bootstrap_files(&home.workspace).unwrap());
    home.write("USER.md", "Grace\n");
    assert!(
        cache.kept(&home.workspace, later()).is_none(),
        "an edited file is never answered from what was kept"
    );
    assert_eq!(
        file(&agrees(&cache, &home, later()), BootstrapName::User)
            .unwrap()
            .content,
        "Grace\n"
    );
}

#[test]
fn an_edit_of_the_same_size_in_the_same_second_is_read_again() {
    // The racy case, with the real clock: the edit keeps size and mtime, and on a filesystem
    // with coarse timestamps it would keep ctime too. Only the file's age protects it.
    let cache = cache();
    let home = Home::new();
    home.ensure(SetupOptions::default()).unwrap();
    home.write("USER.md", "Ada\n");
    let written = mtime(&home.file("USER.md"));
    assert_eq!(
        file(
            &cached(&cache, &home.workspace, SystemTime::now()),
            BootstrapName::User
        )
        .unwrap()
        .content,
        "Ada\n"
    );

    home.write("USER.md", "Bob\n");
    set_mtime(&home.file("USER.md"), written);

    let files = agrees(&cache, &home, SystemTime::now());
    assert_eq!(file(&files, BootstrapName::User).unwrap().content, "Bob\n");
    // A load of files younger than the margin is never kept.
    assert_eq!(cache.stats().entries, 0);
    assert_eq!(cache.stats().hits, 0);
}

#[test]
fn a_load_is_kept_once_the_files_are_older_than_the_margin() {
    let cache = cache();
    let home = Home::new();
    home.ensure(SetupOptions::default()).unwrap();
    let now = SystemTime::now();

    cached(&cache, &home.workspace, now);
    assert_eq!(cache.stats().entries, 0);
    cached(
        &cache,
        &home.workspace,
        now + RACY_MARGIN + Duration::from_millis(500),
    );
    assert_eq!(cache.stats().entries, 1);
}

#[test]
fn an_edit_with_its_mtime_put_back_is_seen_by_its_ctime() {
    let cache = cache();
    let home = kept(&cache);
    let before = mtime(&home.file("USER.md"));

    home.write("USER.md", "Bob\n");
    set_mtime(&home.file("USER.md"), before);

    let files = agrees(&cache, &home, later());
    assert_eq!(file(&files, BootstrapName::User).unwrap().content, "Bob\n");
}

#[test]
fn a_deleted_file_is_missing() {
    let cache = cache();
    let home = kept(&cache);

    fs::remove_file(home.file("SOUL.md")).unwrap();

    let files = agrees(&cache, &home, later());
    assert_eq!(
        file(&files, BootstrapName::Soul).unwrap().missing,
        Some(MissingReason::NotFound)
    );
}

#[test]
fn a_created_optional_file_appears() {
    let cache = cache();
    let home = kept(&cache);
    assert!(
        file(
            &cached(&cache, &home.workspace, later()),
            BootstrapName::Memory
        )
        .is_none()
    );

    home.write("MEMORY.md", "likes tea\n");

    let files = agrees(&cache, &home, later());
    assert_eq!(
        file(&files, BootstrapName::Memory).unwrap().content,
        "likes tea\n"
    );
}

#[test]
fn a_file_replaced_by_a_link_out_is_refused_as_a_fresh_load_refuses_it() {
    let cache = cache();
    let home = kept(&cache);
    let secret = home.base.join("secret.txt");
    fs::write(&secret, "TOP SECRET\n").unwrap();

    fs::remove_file(home.file("USER.md")).unwrap();
    symlink(&secret, home.file("USER.md")).unwrap();

    for _ in 0..2 {
        let files = agrees(&cache, &home, later());
        assert_eq!(
            file(&files, BootstrapName::User).unwrap().missing,
            Some(MissingReason::OutsideWorkspace)
        );
        assert!(files.iter().all(|f| !f.content.contains("SECRET")));
    }
    // A workspace with a linked name is read every time, never kept.
    assert_eq!(cache.stats().entries, 0);
}

#[test]
fn a_file_a_kept_link_leads_to_is_read_again_when_it_changes() {
    let cache = cache();
    let home = Home::new();
    home.ensure(SetupOptions::default()).unwrap();
    fs::create_dir_all(home.workspace.join("shared")).unwrap();
    home.write("shared/user.md", "Ada\n");
    fs::remove_file(home.file("USER.md")).unwrap();
    symlink("shared/user.md", home.file("USER.md")).unwrap();
    agrees(&cache, &home, later());
    next_tick(&home);

    home.write("shared/user.md", "Bob\n");

    let files = agrees(&cache, &home, later());
    assert_eq!(file(&files, BootstrapName::User).unwrap().content, "Bob\n");
}

#[test]
fn a_file_renamed_over_with_the_same_size_and_mtime_is_read() {
    let cache = cache();
    let home = kept(&cache);
    let before = mtime(&home.file("USER.md"));
    let replacement = home.workspace.join("user.new");
    fs::write(&replacement, "Bob\n").unwrap();
    set_mtime(&replacement, before);

    fs::rename(&replacement, home.file("USER.md")).unwrap();

    let files = agrees(&cache, &home, later());
    assert_eq!(file(&files, BootstrapName::User).unwrap().content, "Bob\n");
}

#[test]
fn a_file_made_unreadable_reads_as_a_fresh_load_reads_it() {
    let cache = cache();
    let home = kept(&cache);

    fs::set_permissions(home.file("USER.md"), fs::Permissions::from_mode(0o000)).unwrap();

    // Root still reads it; anyone else gets Unreadable. Either way, as a fresh load does.
    agrees(&cache, &home, later());
    next_tick(&home);
    fs::set_permissions(home.file("USER.md"), fs::Permissions::from_mode(0o644)).unwrap();
    agrees(&cache, &home, later());
}

#[test]
fn a_directory_or_fifo_under_a_name_is_not_a_regular_file() {
    let cache = cache();
    let home = kept(&cache);

    fs::remove_file(home.file("USER.md")).unwrap();
    fs::create_dir(home.file("USER.md")).unwrap();
    nix::unistd::mkfifo(
        &home.file("BOOTSTRAP.md").with_extension("fifo"),
        nix::sys::stat::Mode::S_IRWXU,
    )
    .unwrap();
    fs::remove_file(home.file("BOOTSTRAP.md")).unwrap();
    fs::rename(
        home.file("BOOTSTRAP.md").with_extension("fifo"),
        home.file("BOOTSTRAP.md"),
    )
    .unwrap();

    let files = agrees(&cache, &home, later());
    for name in [BootstrapName::User, BootstrapName::Bootstrap] {
        assert_eq!(
            file(&files, name).unwrap().missing,
            Some(MissingReason::NotARegularFile),
            "{name}"
        );
    }
}

#[test]
fn a_hard_link_under_a_name_is_another_file() {
    let cache = cache();
    let home = kept(&cache);
    home.write("notes.md", "Zed\n");

    fs::remove_file(home.file("USER.md")).unwrap();
    fs::hard_link(home.workspace.join("notes.md"), home.file("USER.md")).unwrap();

    let files = agrees(&cache, &home, later());
    assert_eq!(file(&files, BootstrapName::User).unwrap().content, "Zed\n");
}

#[test]
fn a_root_swapped_for_another_directory_is_read_anew() {
    let cache = cache();
    let home = kept(&cache);
    let other = home.base.join("other");
    fs::create_dir(&other).unwrap();
    for name in BootstrapName::SEEDED {
        fs::copy(home.file(name.file_name()), other.join(name.file_name())).unwrap();
    }
    fs::write(other.join("USER.md"), "Bob\n").unwrap();

    fs::rename(&home.workspace, home.base.join("moved")).unwrap();
    fs::rename(&other, &home.workspace).unwrap();

    let files = agrees(&cache, &home, later());
    assert_eq!(file(&files, BootstrapName::User).unwrap().content, "Bob\n");
}

#[test]
fn a_parent_link_pointed_elsewhere_is_read_anew() {
    let cache = cache();
    let home = Home::new();
    for (dir, user) in [("a", "Ada\n"), ("b", "Bob\n")] {
        fs::create_dir_all(home.base.join(dir).join("ws")).unwrap();
        fs::write(home.base.join(dir).join("ws/USER.md"), user).unwrap();
    }
    symlink(home.base.join("a"), home.base.join("current")).unwrap();
    let workspace = home.base.join("current/ws");
    cached(&cache, &workspace, later());
    assert_eq!(cache.stats().entries, 1);

    fs::remove_file(home.base.join("current")).unwrap();
    symlink(home.base.join("b"), home.base.join("current")).unwrap();

    let files = cached(&cache, &workspace, later());
    assert_eq!(files, load_bootstrap_files(&workspace).unwrap());
    assert_eq!(file(&files, BootstrapName::User).unwrap().content, "Bob\n");
}

#[test]
fn a_vanished_workspace_is_an_error_and_drops_its_entry() {
    let cache = cache();
    let home = kept(&cache);

    fs::rename(&home.workspace, home.base.join("moved")).unwrap();

    assert!(cache.load(&home.workspace, later(), |_| ()).is_err());
    assert_eq!(cache.stats().entries, 0);
}

#[test]
fn the_derived_value_is_kept_with_the_files_and_made_again_with_them() {
    let cache: BootstrapCache<usize> = BootstrapCache::new(CacheLimits::default(), &[]);
    let home = Home::new();
    home.ensure(SetupOptions::default()).unwrap();
    let mut derived = 0;
    let mut load = |home: &Home| {
        cache
            .load(&home.workspace, later(), |files| {
                derived += 1;
                files.iter().filter(|f| !f.is_missing()).count()
            })
            .unwrap()
            .derived
    };
    assert_eq!(load(&home), 7);
    assert_eq!(load(&home), 7);
    next_tick(&home);
    fs::remove_file(home.file("SOUL.md")).unwrap();
    assert_eq!(load(&home), 6);
    assert_eq!(derived, 2);
}

#[test]
fn an_extra_name_is_watched_like_the_bootstrap_names() {
    let cache: BootstrapCache<bool> = BootstrapCache::new(CacheLimits::default(), &["memory.md"]);
    let home = Home::new();
    home.ensure(SetupOptions::default()).unwrap();
    let load = |home: &Home| {
        let workspace = home.workspace.clone();
        cache
            .load(&home.workspace, later(), move |_| {
                workspace.join("memory.md").exists()
            })
            .unwrap()
            .derived
    };
    assert!(!load(&home));
    next_tick(&home);
    home.write("memory.md", "notes\n");
    assert!(load(&home));
    // And a link under an extra name makes the workspace uncacheable too.
    fs::remove_file(home.file("memory.md")).unwrap();
    symlink("USER.md", home.file("memory.md")).unwrap();
    assert!(load(&home));
    assert_eq!(cache.stats().entries, 0);
}

fn workspaces(count: usize) -> Vec<Home> {
    (0..count)
        .map(|_| {
            let home = Home::new();
            home.ensure(SetupOptions::default()).unwrap();
            home
        })
        .collect()
}

#[test]
fn entries_are_bounded_least_recently_used_first_out() {
    let limits = CacheLimits {
        entries: 2,
        ..CacheLimits::default()
    };
    let cache: BootstrapCache<()> = BootstrapCache::new(limits, &[]);
    let homes = workspaces(3);
    let now = later();
    cache.load(&homes[0].workspace, now, |_| ()).unwrap();
    cache.load(&homes[1].workspace, now, |_| ()).unwrap();
    cache.load(&homes[0].workspace, now, |_| ()).unwrap();
    cache.load(&homes[2].workspace, now, |_| ()).unwrap();
    assert_eq!(cache.stats().entries, 2);

    // 1 was least recently used: 0 and 2 are still kept.
    cache.load(&homes[0].workspace, now, |_| ()).unwrap();
    cache.load(&homes[2].workspace, now, |_| ()).unwrap();
    assert_eq!(cache.stats().hits, 3);
}

#[test]
fn bytes_are_bounded_and_an_oversized_workspace_is_not_kept() {
    let homes = workspaces(6);
    let one = {
        let cache = cache();
        cache.load(&homes[0].workspace, later(), |_| ()).unwrap();
        cache.stats().bytes
    };
    // Room for four and a half: a workspace is a quarter at most, so it is kept.
    let limits = CacheLimits {
        bytes: one * 9 / 2,
        ..CacheLimits::default()
    };
    let cache: BootstrapCache<()> = BootstrapCache::new(limits, &[]);
    for home in &homes {
        cache.load(&home.workspace, later(), |_| ()).unwrap();
    }
    let stats = cache.stats();
    assert_eq!(stats.entries, 4);
    assert!(stats.bytes <= limits.bytes);

    let small: BootstrapCache<()> = BootstrapCache::new(
        CacheLimits {
            bytes: one * 3,
            ..CacheLimits::default()
        },
        &[],
    );
    small.load(&homes[0].workspace, later(), |_| ()).unwrap();
    assert_eq!(small.stats().entries, 0, "over a quarter of the bound");
}

#[test]
fn idle_entries_and_forgotten_workspaces_drop_out() {
    let cache = cache();
    let homes = workspaces(3);
    let now = later();
    for home in &homes {
        cache.load(&home.workspace, now, |_| ()).unwrap();
    }
    let idle = CacheLimits::default().idle;
    cache.load(&homes[2].workspace, now + idle, |_| ()).unwrap();
    assert_eq!(
        cache.stats().entries,
        3,
        "exactly the idle time is not past it"
    );

    cache
        .load(
            &homes[2].workspace,
            now + idle + Duration::from_secs(1),
            |_| (),
        )
        .unwrap();
    assert_eq!(cache.stats().entries, 1);

    cache.forget(&homes[2].workspace);
    assert_eq!(
        cache.stats(),
        CacheStats {
            hits: 2,
            misses: 3,
            entries: 0,
            bytes: 0
        }
    );
}
