//! Confinement under a concurrent attacker: while a thread keeps swapping a workspace
//! directory for a symlink to a directory outside, writes, deletes and reads through
//! [`Confined`] never touch anything outside. (Checking a path and then opening it by name let
//! some writes through; every operation now resolves beneath the root's directory handle.)

use std::fs;
use std::io::Read;
use std::os::unix::fs::symlink;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use nix::fcntl::{AT_FDCWD, RenameFlags, renameat2};
use openclaw_workspace::Confined;

/// `<base>/ws/sub` is a directory the attacker swaps for `<base>/ws/sub -> <base>/outside`.
struct Race {
    _dir: tempfile::TempDir,
    root: std::path::PathBuf,
    outside: std::path::PathBuf,
    stop: Arc<AtomicBool>,
    swapper: Option<std::thread::JoinHandle<u64>>,
}

impl Race {
    fn start() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(dir.path()).unwrap();
        let root = base.join("ws");
        let outside = base.join("outside");
        fs::create_dir_all(root.join("sub")).unwrap();
        fs::create_dir_all(&outside).unwrap();
        fs::write(outside.join("secret.txt"), "outside secret").unwrap();
        fs::write(root.join("sub/secret.txt"), "inside text").unwrap();
        // `ws/swap` is the link; exchanging it with `ws/sub` atomically flips `sub` between
        // the directory and the link, with no moment where it is missing.
        symlink(&outside, root.join("swap")).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let (sub, swap, flag) = (root.join("sub"), root.join("swap"), Arc::clone(&stop));
        let swapper = std::thread::spawn(move || {
            let mut swaps = 0_u64;
            while !flag.load(Ordering::Relaxed) {
                renameat2(
                    AT_FDCWD,
                    &swap,
                    AT_FDCWD,
                    &sub,
                    RenameFlags::RENAME_EXCHANGE,
                )
                .unwrap();
                swaps += 1;
                std::thread::yield_now();
            }
            // Leave the directory in place.
            if fs::symlink_metadata(&sub).unwrap().file_type().is_symlink() {
                renameat2(
                    AT_FDCWD,
                    &swap,
                    AT_FDCWD,
                    &sub,
                    RenameFlags::RENAME_EXCHANGE,
                )
                .unwrap();
            }
            swaps
        });
        Self {
            _dir: dir,
            root,
            outside,
            stop,
            swapper: Some(swapper),
        }
    }

    /// Stops the attacker; returns how many swaps it made.
    fn stop(&mut self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        self.swapper.take().map(|h| h.join().unwrap()).unwrap_or(0)
    }

    fn outside_entries(&self) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(&self.outside)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}

#[test]
fn ten_thousand_writes_under_a_directory_swap_never_land_outside() {
    let mut race = Race::start();
    let confined = Confined::new(&race.root).unwrap();
    let mut written = 0_u32;
    for i in 0..10_000 {
        if confined
            .write_file(format!("sub/file-{i}.txt"), b"written by the agent")
            .is_ok()
        {
            written += 1;
        }
        // Deletes are writes too: an escaped delete would remove the outside secret.
        let _ = confined.remove_file("sub/secret.txt");
    }
    let swaps = race.stop();
    assert!(swaps > 100, "the attacker swapped {swaps} times");
    assert!(
        written > 0,
        "some writes went through while the directory was in place"
    );
    assert_eq!(
        race.outside_entries(),
        ["secret.txt"],
        "nothing was written or deleted outside ({written} writes succeeded, {swaps} swaps)"
    );
}

#[test]
fn reads_under_a_directory_swap_never_return_outside_content() {
    let mut race = Race::start();
    let confined = Confined::new(&race.root).unwrap();
    let mut read = 0_u32;
    for _ in 0..10_000 {
        if let Ok((mut file, _)) = confined.open_read("sub/secret.txt") {
            let mut text = String::new();
            file.read_to_string(&mut text).unwrap();
            assert_eq!(text, "inside text");
            read += 1;
        }
    }
    race.stop();
    assert!(read > 0, "some reads went through");
}
