//! Structure-keeping truncation of rule files (AGENTS.md, SOUL.md, TOOLS.md;
//! lesson L4).
//!
//! A plain head/tail cut of a rule file loses every rule of its middle. Here
//! the headings and rule lines (list items, numbered steps and lines that say
//! must, never, always or do not) are kept first, as a digest of the whole
//! file; what is left of the budget then goes to the full text of the file's
//! start (three quarters) and end (one quarter). The result reads as the
//! file's start, a marked digest of its middle, and its end. Every omission
//! is marked: which lines the digest stands for, how many rules did not fit,
//! and where the full text resumes.

use crate::{paths, text::chars};

/// Files cut by structure rather than by plain head and tail.
const RULE_FILES: &[&str] = &["agents.md", "soul.md", "tools.md"];
/// A digest line longer than this is shortened with `…`.
const MAX_DIGEST_LINE: usize = 240;
/// Words that make a prose line a rule (matched case-insensitively).
const RULE_WORDS: &[&str] = &["must", "never", "always", "do not", "don't"];

/// True for the files cut by [`structured`].
pub fn is_rule_file(path: &str) -> bool {
    let base = paths::basename(path);
    RULE_FILES.iter().any(|n| base.eq_ignore_ascii_case(n))
}

/// True for a heading or a rule line: what a digest keeps.
pub fn is_structure(line: &str) -> bool {
    let t = line.trim_start();
    if t.starts_with('#') || t.starts_with("- ") || t.starts_with("* ") || t.starts_with("+ ") {
        return true;
    }
    let digits = t.chars().take_while(char::is_ascii_digit).count();
    if digits > 0 && (t[digits..].starts_with(". ") || t[digits..].starts_with(") ")) {
        return true;
    }
    let lower = t.to_lowercase();
    RULE_WORDS.iter().any(|w| contains_word(&lower, w))
}

fn contains_word(haystack: &str, word: &str) -> bool {
    haystack.match_indices(word).any(|(i, _)| {
        let before = haystack[..i].chars().next_back();
        let after = haystack[i + word.len()..].chars().next();
        !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
    })
}

/// A line as the digest shows it: at most [`MAX_DIGEST_LINE`] characters.
fn digest_line(line: &str) -> String {
    if chars(line) <= MAX_DIGEST_LINE {
        return line.to_owned();
    }
    let mut out: String = line.chars().take(MAX_DIGEST_LINE - 1).collect();
    out.push('…');
    out
}

/// The result of a structured cut.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Structured {
    /// The text to inject.
    pub text: String,
    /// Headings and rule lines of the file.
    pub rules_total: usize,
    /// Of those, the ones the text keeps (in full text or in the digest).
    pub rules_kept: usize,
}

fn opening(path: &str, from: usize, to: usize) -> String {
    format!(
        "[…{path} shortened to fit: lines {from}-{to} keep only their headings and rules; read the file for the rest…]"
    )
}

fn rules_left_out(path: &str, n: usize) -> String {
    format!("[…{n} more rules of {path} left out here…]")
}

fn resumes(path: &str, line: usize) -> String {
    format!("[…{path} continues in full from line {line}…]")
}

/// Cuts a rule file (longer than `budget` characters) to at most `budget`
/// characters, keeping its structure. `None` when not even the headings fit;
/// the caller then falls back to a plain head/tail cut.
pub fn structured(content: &str, budget: usize, path: &str) -> Option<Structured> {
    let lines: Vec<&str> = content.split('\n').collect();
    let n = lines.len();
    let structure: Vec<bool> = lines.iter().map(|l| is_structure(l)).collect();
    let rules_total = structure.iter().filter(|s| **s).count();
    if rules_total == 0 {
        // No structure to keep: a plain head/tail cut does better.
        return None;
    }
    let digest: Vec<String> = lines.iter().map(|l| digest_line(l)).collect();
    let cost = |i: usize| chars(lines[i]) + 1;
    let digest_cost = |i: usize| chars(&digest[i]) + 1;
    // Markers measured with the widest numbers they can carry.
    let overhead = chars(&opening(path, n, n))
        + 1
        + chars(&rules_left_out(path, n))
        + 1
        + chars(&resumes(path, n))
        + 1;
    let all_digest: usize = (0..n).filter(|&i| structure[i]).map(digest_cost).sum();
    if overhead + all_digest > budget {
        return cut_digest(&lines, &structure, &digest, budget, path, rules_total);
    }
    // The whole digest fits: spend the rest on full text at both ends.
    let mut left = budget - overhead - all_digest;
    // Moving a line into the full text costs its full length, less its
    // digest length when the digest had it.
    let extra = |i: usize| {
        if structure[i] {
            cost(i) - digest_cost(i)
        } else {
            cost(i)
        }
    };
    let (mut head, mut tail) = (0usize, n);
    let head_share = left * 3 / 4;
    let mut spent = 0;
    while head < tail && spent + extra(head) <= head_share {
        spent += extra(head);
        head += 1;
    }
    left -= spent;
    while tail > head && extra(tail - 1) <= left {
        left -= extra(tail - 1);
        tail -= 1;
    }
    while head < tail && extra(head) <= left {
        left -= extra(head);
        head += 1;
    }
    if head >= tail {
        // Everything fits in full after all (the markers were the excess).
        return None;
    }
    let mut out: Vec<String> = lines[..head].iter().map(|l| (*l).to_owned()).collect();
    out.push(opening(path, head + 1, tail));
    out.extend(
        (head..tail)
            .filter(|&i| structure[i])
            .map(|i| digest[i].clone()),
    );
    if tail < n {
        out.push(resumes(path, tail + 1));
        out.extend(lines[tail..].iter().map(|l| (*l).to_owned()));
    }
    let text = out.join("\n");
    (chars(&text) <= budget).then_some(Structured {
        text,
        rules_total,
        rules_kept: rules_total,
    })
}

/// Not all the digest fits: headings first, then rules in file order, and a
/// marker counting the rules left out.
fn cut_digest(
    lines: &[&str],
    structure: &[bool],
    digest: &[String],
    budget: usize,
    path: &str,
    rules_total: usize,
) -> Option<Structured> {
    let n = lines.len();
    let overhead = chars(&opening(path, 1, n)) + 1 + chars(&rules_left_out(path, n)) + 1;
    let mut left = budget.checked_sub(overhead)?;
    let mut keep = vec![false; n];
    let headings = (0..n).filter(|&i| lines[i].trim_start().starts_with('#'));
    for i in headings {
        let c = chars(&digest[i]) + 1;
        if c > left {
            return None;
        }
        left -= c;
        keep[i] = true;
    }
    let rules: Vec<usize> = (0..n).filter(|&i| structure[i] && !keep[i]).collect();
    for i in rules {
        let c = chars(&digest[i]) + 1;
        if c > left {
            break;
        }
        left -= c;
        keep[i] = true;
    }
    let kept = keep.iter().filter(|k| **k).count();
    let mut out = vec![opening(path, 1, n)];
    out.extend((0..n).filter(|&i| keep[i]).map(|i| digest[i].clone()));
    out.push(rules_left_out(path, rules_total - kept));
    let text = out.join("\n");
    (chars(&text) <= budget).then_some(Structured {
        text,
        rules_total,
        rules_kept: kept,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule_file(sections: usize, rules: usize, prose: usize) -> String {
        let mut out = Vec::new();
        for s in 0..sections {
            out.push(format!("## Section {s}"));
            for p in 0..prose {
                out.push(format!(
                    "Some background prose for section {s}, paragraph {p}, explaining context at length."
                ));
            }
            for r in 0..rules {
                out.push(format!("- Rule {s}.{r}: keep this behaviour."));
            }
        }
        out.join("\n")
    }

    #[test]
    fn classifies_headings_and_rules() {
        for (line, want) in [
            ("# Title", true),
            ("  - item", true),
            ("* item", true),
            ("12. step", true),
            ("3) step", true),
            ("You must ask first.", true),
            ("Never push to main.", true),
            ("We don't guess.", true),
            ("Mustard is yellow.", false),
            ("Plain prose.", false),
            ("", false),
        ] {
            assert_eq!(is_structure(line), want, "{line:?}");
        }
    }

    #[test]
    fn every_rule_survives_when_the_digest_fits() {
        let content = rule_file(8, 13, 6);
        let total_rules = content.lines().filter(|l| is_structure(l)).count();
        let budget = chars(&content) * 6 / 10;
        let cut = structured(&content, budget, "AGENTS.md").expect("a cut");
        assert!(chars(&cut.text) <= budget);
        assert_eq!(cut.rules_kept, total_rules);
        for line in content.lines().filter(|l| is_structure(l)) {
            assert!(cut.text.contains(line), "{line} lost");
        }
        assert!(cut.text.starts_with("## Section 0\n"));
        assert!(cut.text.contains("[…AGENTS.md shortened to fit: lines "));
        assert!(
            cut.text
                .contains("[…AGENTS.md continues in full from line ")
        );
        // Prose of the middle is what goes.
        assert!(!cut.text.contains("section 4, paragraph 3"));
    }

    #[test]
    fn headings_come_before_rules_when_the_digest_is_cut() {
        let content = rule_file(6, 40, 2);
        let cut = structured(&content, 1_500, "AGENTS.md").expect("a cut");
        assert!(chars(&cut.text) <= 1_500);
        for s in 0..6 {
            assert!(cut.text.contains(&format!("## Section {s}")));
        }
        assert!(cut.rules_kept < cut.rules_total);
        assert!(cut.text.contains(&format!(
            "[…{} more rules of AGENTS.md left out here…]",
            cut.rules_total - cut.rules_kept
        )));
    }

    #[test]
    fn no_room_for_the_headings_gives_none() {
        let content = rule_file(50, 2, 1);
        assert_eq!(structured(&content, 200, "AGENTS.md"), None);
    }

    #[test]
    fn long_rule_lines_are_shortened_in_the_digest() {
        let long = format!("- {}", "x".repeat(400));
        assert_eq!(chars(&digest_line(&long)), MAX_DIGEST_LINE);
        assert!(digest_line(&long).ends_with('…'));
    }
}
