//! Per-turn project context (BOOTSTRAP.md, the MEMORY.md fallback, files
//! without a route of their own) and what the thread already holds of it.
//!
//! The turn input stays in Codex's thread history, so a file pasted on one
//! turn is still in front of the model on every later turn. A file is
//! pasted again only when it is new to the thread or its pasted block
//! changed; the caller keeps the digests a turn reports and sends them back
//! with the thread's next turn.

use prompt_render::{Injected, sha256_hex};

/// One file of a turn's project context, by the digest of its pasted block.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ContextDigest {
    /// Workspace-relative path.
    pub path: String,
    /// Lowercase hex SHA-256 of the pasted block (heading and text).
    pub sha256: String,
}

impl ContextDigest {
    /// The digest of `file` as the turn input pastes it.
    pub fn of(file: &Injected) -> Self {
        Self {
            path: file.path.clone(),
            sha256: sha256_hex(crate::instructions::context_block(file).as_bytes()),
        }
    }
}

/// This turn's context files, split by what the thread holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Split {
    /// New to the thread or changed: pasted this turn, in order.
    pub new: Vec<Injected>,
    /// Already in the thread, unchanged: not pasted again, in order.
    pub held: Vec<Injected>,
    /// Every file of this turn's context (new and held), by path.
    pub digests: Vec<ContextDigest>,
}

/// Splits `files` by the digests the thread holds.
pub fn split(files: &[Injected], held: &[ContextDigest]) -> Split {
    let mut out = Split::default();
    for file in files {
        let digest = ContextDigest::of(file);
        if held.contains(&digest) {
            out.held.push(file.clone());
        } else {
            out.new.push(file.clone());
        }
        out.digests.push(digest);
    }
    out.digests.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, text: &str) -> Injected {
        Injected {
            path: path.to_owned(),
            text: text.to_owned(),
        }
    }

    #[test]
    fn a_file_is_held_only_while_its_block_is_unchanged() {
        let boot = file("BOOTSTRAP.md", "set up");
        let memory = file("MEMORY.md", "likes tea");
        let first = split(&[boot.clone(), memory.clone()], &[]);
        assert_eq!(first.new, [boot.clone(), memory.clone()]);
        assert!(first.held.is_empty());
        let paths: Vec<&str> = first.digests.iter().map(|d| d.path.as_str()).collect();
        assert_eq!(paths, ["BOOTSTRAP.md", "MEMORY.md"]);

        let again = split(&[boot.clone(), memory.clone()], &first.digests);
        assert!(again.new.is_empty());
        assert_eq!(again.held, [boot.clone(), memory]);
        assert_eq!(again.digests, first.digests);

        let edited = file("MEMORY.md", "likes coffee");
        let changed = split(&[boot.clone(), edited.clone()], &first.digests);
        assert_eq!((changed.new, changed.held), (vec![edited], vec![boot]));
        assert_ne!(changed.digests, first.digests);
    }
}
