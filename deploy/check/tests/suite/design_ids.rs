//! Every rule id the code, the proto and the docs cite (`P-12`, `R-7`, `L13`) resolves to a
//! heading of one of the two design documents in the repository (prompt-service/DESIGN.md,
//! agent-service/DESIGN.md), so a reader of a fresh clone can look each one up; and no file
//! points at documents or trackers outside the repository.

use std::{
    collections::{BTreeMap, BTreeSet},
    path::{Path, PathBuf},
};

const DESIGN_DOCS: [&str; 2] = ["prompt-service/DESIGN.md", "agent-service/DESIGN.md"];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The tracked text files: sources, protos, docs and deployment files.
fn text_files() -> Vec<PathBuf> {
    let out = std::process::Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(root())
        .output()
        .expect("git ls-files");
    assert!(out.status.success(), "git ls-files failed");
    out.stdout
        .split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| PathBuf::from(String::from_utf8_lossy(p).into_owned()))
        .filter(|p| {
            let name = p.to_string_lossy();
            [
                ".rs",
                ".proto",
                ".md",
                ".toml",
                ".yaml",
                ".cfg",
                ".json5",
                "Dockerfile",
            ]
            .iter()
            .any(|ext| name.ends_with(ext))
        })
        .collect()
}

/// Ids cited in `text`: `P-<n>`, `R-<n>` and `L<n>` as whole words. A line reference such as
/// `MEMORY.md#L10-L20`, `12-L20` or a listing line `L3: text` is not a citation.
fn citations(text: &str) -> BTreeSet<String> {
    let bytes = text.as_bytes();
    let mut found = BTreeSet::new();
    for (i, &b) in bytes.iter().enumerate() {
        if i > 0 && (bytes[i - 1].is_ascii_alphanumeric() || b"#-_/.`$".contains(&bytes[i - 1])) {
            continue;
        }
        let (prefix_len, letter) = match (b, bytes.get(i + 1)) {
            (b'P' | b'R', Some(b'-')) => (2, b),
            (b'L', Some(d)) if d.is_ascii_digit() => (1, b),
            _ => continue,
        };
        let digits: String = bytes[i + prefix_len..]
            .iter()
            .take_while(|d| d.is_ascii_digit())
            .map(|d| char::from(*d))
            .collect();
        if digits.is_empty() || digits.len() > 2 {
            continue;
        }
        let after = bytes.get(i + prefix_len + digits.len()).copied();
        if after.is_some_and(|a| a.is_ascii_alphanumeric() || a == b'_') {
            continue;
        }
        if letter == b'L' && matches!(after, Some(b'-' | b':')) {
            continue;
        }
        let id = if letter == b'L' {
            format!("L{digits}")
        } else {
            format!("{}-{digits}", char::from(letter))
        };
        found.insert(id);
    }
    found
}

/// The ids each design document defines: headings `### <id> · <title>`.
fn defined() -> BTreeMap<String, &'static str> {
    let mut ids = BTreeMap::new();
    for doc in DESIGN_DOCS {
        let text = std::fs::read_to_string(root().join(doc)).expect(doc);
        for line in text.lines() {
            let Some(rest) = line.strip_prefix("### ") else {
                continue;
            };
            let Some((id, _title)) = rest.split_once(" · ") else {
                continue;
            };
            let previous = ids.insert(id.to_owned(), doc);
            assert!(previous.is_none(), "{id} is defined twice ({doc})");
        }
    }
    ids
}

#[test]
fn every_cited_rule_is_defined_in_a_design_document() {
    let defined = defined();
    assert!(
        defined.len() > 70,
        "design documents define only {} ids",
        defined.len()
    );
    let mut unresolved = Vec::new();
    for path in text_files() {
        let Ok(text) = std::fs::read_to_string(root().join(&path)) else {
            continue;
        };
        for id in citations(&text) {
            if !defined.contains_key(&id) {
                unresolved.push(format!("{}: {id}", path.display()));
            }
        }
    }
    assert!(
        unresolved.is_empty(),
        "ids cited but defined in neither design document:\n{}",
        unresolved.join("\n")
    );
}

#[test]
fn no_file_points_outside_the_repository_for_its_rules() {
    let mut offenders = Vec::new();
    for path in text_files() {
        if path.ends_with("design_ids.rs") {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(root().join(&path)) else {
            continue;
        };
        for (n, line) in text.lines().enumerate() {
            let words: Vec<&str> = line
                .split(|c: char| !c.is_ascii_alphanumeric())
                .filter(|w| !w.is_empty())
                .collect();
            let tracker = words.windows(2).any(|w| {
                matches!(w[0], "issue" | "Issue" | "issues" | "Issues")
                    && w[1].chars().all(|c| c.is_ascii_digit())
            });
            if tracker || words.contains(&"SPEC") {
                offenders.push(format!("{}:{}: {}", path.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "lines citing an outside document or tracker:\n{}",
        offenders.join("\n")
    );
}

#[test]
fn the_citation_scanner_tells_citations_from_line_references() {
    let ids =
        citations("(P-3, R-11; lessons L5, L10) MEMORY.md#L10-L20 12-L20\nL3: tea P-100 XP-2");
    let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
    assert_eq!(ids, ["L10", "L5", "P-3", "R-11"]);
}
