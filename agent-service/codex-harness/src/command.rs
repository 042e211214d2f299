//! The programs a shell command line would run, for allowlist decisions
//! (lesson L15 d: judge the effective command, unwrap `sh -c` and `env`,
//! split chains).
//!
//! Deliberately conservative: anything this small parser cannot judge
//! (command or process substitution, redirections, subshells, a variable as
//! the program, unbalanced quotes) gives `None`, which an allowlist treats
//! as a miss.

/// Shells whose `-c` script is judged instead of the shell itself.
const SHELLS: [&str; 5] = ["sh", "bash", "zsh", "dash", "ksh"];
/// How deep `sh -c "sh -c …"` is unwrapped.
const MAX_DEPTH: usize = 4;

/// Every program the command line runs, in order, or `None` when the line
/// cannot be judged.
pub(crate) fn effective_programs(command: &str) -> Option<Vec<String>> {
    let mut programs = Vec::new();
    collect(command, 0, &mut programs)?;
    Some(programs)
}

fn collect(command: &str, depth: usize, out: &mut Vec<String>) -> Option<()> {
    if depth > MAX_DEPTH {
        return None;
    }
    for words in segments(command)? {
        let mut words: Vec<String> = words.into_iter().skip_while(|w| is_assignment(w)).collect();
        if words.first().is_some_and(|w| w == "env") {
            // `env [-opts] [NAME=value]... program args`
            words = words
                .into_iter()
                .skip(1)
                .skip_while(|w| w.starts_with('-') || is_assignment(w))
                .collect();
            if words.is_empty() {
                out.push("env".to_owned());
                continue;
            }
        }
        let Some((program, args)) = words.split_first() else {
            continue;
        };
        if program.starts_with('$') {
            return None;
        }
        let base = program.rsplit('/').next().unwrap_or(program);
        let script = if SHELLS.contains(&base) {
            args.iter()
                .position(|a| a.starts_with('-') && !a.starts_with("--") && a.contains('c'))
                .and_then(|at| args.get(at + 1))
        } else {
            None
        };
        match script {
            Some(script) => collect(script, depth + 1, out)?,
            None => out.push(program.clone()),
        }
    }
    Some(())
}

fn is_assignment(word: &str) -> bool {
    match word.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit())
        }
        None => false,
    }
}

/// Splits on `;`, `&`, `|`, `&&`, `||` and newlines into words, honouring
/// quotes and backslashes.
fn segments(command: &str) -> Option<Vec<Vec<String>>> {
    let mut segments = Vec::new();
    let mut words: Vec<String> = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = command.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '\'' => break,
                        other => word.push(other),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '"' => break,
                        '`' => return None,
                        '$' if chars.peek() == Some(&'(') => return None,
                        '\\' => word.push(chars.next()?),
                        other => word.push(other),
                    }
                }
            }
            '\\' => {
                in_word = true;
                word.push(chars.next()?);
            }
            '`' | '<' | '>' | '(' | ')' => return None,
            '$' if chars.peek() == Some(&'(') => return None,
            ';' | '&' | '|' | '\n' => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
                if !words.is_empty() {
                    segments.push(std::mem::take(&mut words));
                }
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            other => {
                in_word = true;
                word.push(other);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    if !words.is_empty() {
        segments.push(words);
    }
    Some(segments)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn programs(command: &str) -> Option<Vec<String>> {
        effective_programs(command)
    }

    fn list(items: &[&str]) -> Option<Vec<String>> {
        Some(items.iter().map(|s| (*s).to_owned()).collect())
    }

    #[test]
    fn chains_wrappers_and_quotes_are_seen_through() {
        assert_eq!(programs("ls -la"), list(&["ls"]));
        assert_eq!(
            programs("ls && git status || echo 'a;b' ; pwd | wc -l & true"),
            list(&["ls", "git", "echo", "pwd", "wc", "true"])
        );
        assert_eq!(
            programs("/bin/bash -lc 'cd sub && rm -f x'"),
            list(&["cd", "rm"])
        );
        assert_eq!(
            programs("env -i LANG=C FOO=1 python3 -c 'print(1)'"),
            list(&["python3"])
        );
        assert_eq!(programs("FOO=1 make"), list(&["make"]));
        assert_eq!(programs(r#"sh -c "bash -c \"touch x\"""#), list(&["touch"]));
        assert_eq!(programs("bash script.sh"), list(&["bash"]));
        assert_eq!(programs(""), list(&[]));
    }

    #[test]
    fn what_cannot_be_judged_is_none() {
        for command in [
            "ls $(whoami)",
            "echo \"$(id)\"",
            "ls `id`",
            "cat < /etc/passwd",
            "echo hi > file",
            "(rm -rf x)",
            "$CMD arg",
            "echo 'unbalanced",
            "sh -c 'sh -c \"sh -c \\\"sh -c \\\\\\\"sh -c ls\\\\\\\"\\\"\"'",
        ] {
            assert_eq!(programs(command), None, "{command}");
        }
    }
}
