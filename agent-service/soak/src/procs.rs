//! Processes found through `/proc`: the descendants of agent-service (its
//! Codex app-server and whatever that started), and the processes left over
//! from a soak's Codex home after every agent-service is gone. Linux only,
//! like the soak's signals.

use std::{
    collections::{BTreeMap, BTreeSet},
    path::Path,
    time::{Duration, Instant},
};

use nix::{
    sys::signal::{self, Signal},
    unistd::Pid,
};

/// How often [`wait_gone`] looks again.
const POLL: Duration = Duration::from_millis(20);
/// Rounds of stopping newly found descendants before the tree is taken as
/// frozen (each round stops what forked during the one before).
const FREEZE_ROUNDS: usize = 5;

/// One process as `/proc/<pid>/stat` describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stat {
    ppid: i32,
    state: char,
}

/// Parses `/proc/<pid>/stat`: `pid (comm) state ppid ...`, where `comm` may
/// hold spaces and parentheses (so the last `)` ends it).
fn parse_stat(text: &str) -> Option<Stat> {
    let rest = &text[text.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let ppid = fields.next()?.parse().ok()?;
    Some(Stat { ppid, state })
}

fn stat_of(pid: i32) -> Option<Stat> {
    parse_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// Every process id in `/proc`.
fn all_pids() -> Vec<i32> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse().ok())
        .collect()
}

/// The living (not zombie) descendants of `root`, parents before children.
pub(crate) fn descendants(root: u32) -> Vec<u32> {
    let mut children: BTreeMap<i32, Vec<i32>> = BTreeMap::new();
    for pid in all_pids() {
        if let Some(stat) = stat_of(pid)
            && stat.state != 'Z'
        {
            children.entry(stat.ppid).or_default().push(pid);
        }
    }
    let mut out = Vec::new();
    let mut next = vec![i32::try_from(root).unwrap_or(i32::MAX)];
    while let Some(parent) = next.pop() {
        for &child in children.get(&parent).into_iter().flatten() {
            if let Ok(pid) = u32::try_from(child) {
                out.push(pid);
                next.push(child);
            }
        }
    }
    out
}

/// A process's name (`/proc/<pid>/comm`), or `?` once it is gone.
pub(crate) fn name_of(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .map(|name| name.trim().to_owned())
        .unwrap_or_else(|_| "?".to_owned())
}

fn send(pid: u32, signal: Signal) -> bool {
    i32::try_from(pid)
        .ok()
        .is_some_and(|pid| signal::kill(Pid::from_raw(pid), signal).is_ok())
}

/// SIGKILLs every descendant of `root`: first the tree is frozen with
/// SIGSTOP (again for whatever forked meanwhile), so nothing it starts
/// escapes, then each process is killed. Returns the pids killed, parents
/// first, with their names.
pub(crate) fn kill_descendants(root: u32) -> Vec<(u32, String)> {
    let mut stopped: BTreeSet<u32> = BTreeSet::new();
    let mut order = Vec::new();
    for _ in 0..FREEZE_ROUNDS {
        let found: Vec<u32> = descendants(root)
            .into_iter()
            .filter(|pid| !stopped.contains(pid))
            .collect();
        if found.is_empty() {
            break;
        }
        for pid in found {
            if send(pid, Signal::SIGSTOP) {
                stopped.insert(pid);
                order.push(pid);
            }
        }
    }
    let named: Vec<(u32, String)> = order.into_iter().map(|pid| (pid, name_of(pid))).collect();
    named
        .into_iter()
        .filter(|(pid, _)| send(*pid, Signal::SIGKILL))
        .collect()
}

/// SIGKILLs each of `pids` that is still there; returns those killed.
pub(crate) fn kill_all(pids: &[u32]) -> Vec<u32> {
    pids.iter()
        .copied()
        .filter(|&pid| is_alive(pid) && send(pid, Signal::SIGKILL))
        .collect()
}

/// Whether `pid` is a process that has not exited (a zombie has).
pub(crate) fn is_alive(pid: u32) -> bool {
    i32::try_from(pid)
        .ok()
        .and_then(stat_of)
        .is_some_and(|stat| stat.state != 'Z')
}

/// Waits until none of `pids` is alive; those still alive after `within`.
pub(crate) async fn wait_gone(pids: &[u32], within: Duration) -> Vec<u32> {
    let began = Instant::now();
    loop {
        let alive: Vec<u32> = pids.iter().copied().filter(|&p| is_alive(p)).collect();
        if alive.is_empty() || began.elapsed() >= within {
            return alive;
        }
        tokio::time::sleep(POLL).await;
    }
}

/// Living processes whose environment sets `CODEX_HOME` to `home`: every
/// Codex app-server of one soak (and what those started) carries it.
pub(crate) fn with_codex_home(home: &Path) -> Vec<u32> {
    let wanted = format!("CODEX_HOME={}", home.display());
    all_pids()
        .into_iter()
        .filter(|&pid| {
            std::fs::read(format!("/proc/{pid}/environ")).is_ok_and(|environ| {
                environ
                    .split(|&b| b == 0)
                    .any(|entry| entry == wanted.as_bytes())
            })
        })
        .filter_map(|pid| u32::try_from(pid).ok())
        .filter(|&pid| is_alive(pid))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_are_parsed_past_odd_names() {
        assert_eq!(
            parse_stat("4242 (codex) S 17 4242 4242 0 -1"),
            Some(Stat {
                ppid: 17,
                state: 'S'
            })
        );
        assert_eq!(
            parse_stat("7 (a (b) c) Z 1 7 7"),
            Some(Stat {
                ppid: 1,
                state: 'Z'
            })
        );
        assert_eq!(parse_stat("garbage"), None);
    }

    #[tokio::test]
    async fn a_child_tree_is_found_and_killed() {
        let mut child = tokio::process::Command::new("sh")
            .args(["-c", "sleep 30 & sleep 30 & wait"])
            .kill_on_drop(true)
            .spawn()
            .expect("sh");
        let me = std::process::id();
        let shell = child.id().expect("a pid");
        let began = Instant::now();
        while descendants(shell).len() < 2 && began.elapsed() < Duration::from_secs(5) {
            tokio::time::sleep(POLL).await;
        }
        let tree = descendants(me);
        assert!(tree.contains(&shell), "{tree:?}");
        assert_eq!(descendants(shell).len(), 2);
        let killed: Vec<u32> = kill_descendants(shell)
            .into_iter()
            .map(|(pid, _)| pid)
            .collect();
        assert_eq!(killed.len(), 2, "{killed:?}");
        assert!(wait_gone(&killed, Duration::from_secs(5)).await.is_empty());
        let _ = child.wait().await;
        assert!(!is_alive(shell));
    }
}
