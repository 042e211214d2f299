//! The prompt's promise table (prompt-service/render/tests/promises.md) names, for every line
//! that promises a command, directive, token or config action, the agent-service tests that
//! exercise it. Each named test must exist; a row still pending its tests fails once they
//! exist, so that it is marked backed with their names.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `(needle, tests, pending)` per row.
fn rows() -> Vec<(String, Vec<String>, bool)> {
    let table = std::fs::read_to_string(root().join("prompt-service/render/tests/promises.md"))
        .expect("promise table");
    table
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| Prompt line"))
        .map(|l| {
            let cells: Vec<&str> = l
                .trim_start_matches("| ")
                .trim_end_matches(" |")
                .split(" | ")
                .collect();
            assert_eq!(cells.len(), 4, "a row has four cells: {l}");
            let tests = cells[2].split(',').map(|t| t.trim().to_owned()).collect();
            (cells[0].to_owned(), tests, cells[3] == "pending")
        })
        .collect()
}

/// The names of every `fn` in agent-service's Rust sources.
fn agent_service_fns() -> Vec<String> {
    let mut out = Vec::new();
    let mut dirs = vec![root().join("agent-service")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("read dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                if path.file_name().is_some_and(|n| n != "target") {
                    dirs.push(path);
                }
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).expect("read");
                for rest in text.split("fn ").skip(1) {
                    let name: String = rest
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .collect();
                    if rest[name.len()..].starts_with('(') && !name.is_empty() {
                        out.push(name);
                    }
                }
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

#[test]
fn every_promise_names_runtime_tests_that_exist() {
    let fns = agent_service_fns();
    let exists = |name: &str| match name.strip_suffix('*') {
        Some(prefix) => fns.iter().any(|f| f.starts_with(prefix)),
        None => fns.iter().any(|f| f == name),
    };
    let rows = rows();
    assert!(rows.len() >= 10, "the table has its rows");
    let mut problems = Vec::new();
    for (needle, tests, pending) in &rows {
        for test in tests {
            match (*pending, exists(test)) {
                (false, false) => {
                    problems.push(format!("{needle:?}: no agent-service test named {test}"))
                }
                (false, true) if test.ends_with('*') => problems.push(format!(
                    "{needle:?}: a backed row names its tests in full, not {test}"
                )),
                (true, true) => problems.push(format!(
                    "{needle:?}: tests {test} exist now; name them and mark the row backed"
                )),
                _ => {}
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
