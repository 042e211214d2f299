//! Head/tail truncation of one injected file (P-34, lesson L4).
//!
//! The kept text is 75% head and 25% tail of what fits after the marker,
//! counted in Unicode scalar values. The marker names the file and the
//! kept/total counts so the model knows to read the file for the rest.

use crate::text::{chars, last_chars, take_chars};

/// Head share of the kept characters, in percent.
const HEAD_PERCENT: usize = 75;
/// Below this many kept content characters the short marker is used.
const MIN_CONTENT_FOR_FULL_MARKER: usize = 16;

/// The result of cutting a file down to a budget.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cut {
    /// The text to inject (head, marker, tail).
    pub text: String,
    /// Characters kept from the start.
    pub head: usize,
    /// Characters kept from the end.
    pub tail: usize,
}

fn full_marker(path: &str, head: usize, tail: usize, total: usize) -> String {
    format!(
        "[…truncated {path}: kept {head}+{tail} of {total} chars; read the file for the full text…]"
    )
}

fn short_marker(head: usize, tail: usize, total: usize) -> String {
    format!("[…truncated {head}+{tail}/{total}]")
}

/// Cuts `content` (longer than `budget` chars) to at most `budget` chars.
pub fn head_tail(content: &str, budget: usize, path: &str) -> Cut {
    let total = chars(content);
    if total <= budget {
        return Cut {
            text: content.to_owned(),
            head: total,
            tail: 0,
        };
    }
    let full = |h, t| full_marker(path, h, t, total);
    let short = |h, t| short_marker(h, t, total);
    if let Some(cut) = fit(content, budget, total, &full)
        .filter(|c| c.head + c.tail >= MIN_CONTENT_FOR_FULL_MARKER)
    {
        return cut;
    }
    if let Some(cut) = fit(content, budget, total, &short) {
        return cut;
    }
    // Not even the short marker fits: keep what we can of the head.
    Cut {
        text: take_chars(content, budget).to_owned(),
        head: budget,
        tail: 0,
    }
}

/// Finds head/tail sizes whose rendering fits `budget`. The marker's length
/// depends on the digits of the counts, so start from the widest counts
/// (which gives a conservative length) and refine a few times.
fn fit(
    content: &str,
    budget: usize,
    total: usize,
    marker: &dyn Fn(usize, usize) -> String,
) -> Option<Cut> {
    // Two newlines join head, marker and tail.
    const JOINERS: usize = 2;
    let (mut head, mut tail) = (total, total);
    for _ in 0..3 {
        let overhead = chars(&marker(head, tail)) + JOINERS;
        let avail = budget.checked_sub(overhead)?;
        head = avail * HEAD_PERCENT / 100;
        tail = avail - head;
        // Keep at least one head character when anything fits at all.
        if head == 0 && tail > 0 {
            head = 1;
            tail -= 1;
        }
    }
    let render = |h: usize, t: usize| {
        format!(
            "{}\n{}\n{}",
            take_chars(content, h),
            marker(h, t),
            last_chars(content, t)
        )
    };
    let mut text = render(head, tail);
    // The refinement is conservative, but guard the budget strictly anyway:
    // shrink the tail first, then the head.
    while chars(&text) > budget {
        if tail > 0 {
            tail -= 1;
        } else if head > 0 {
            head -= 1;
        } else {
            return None;
        }
        text = render(head, tail);
    }
    Some(Cut { text, head, tail })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_75_25_and_respects_the_budget() {
        let content: String = "abcdefghij".repeat(100); // 1000 chars
        let cut = head_tail(&content, 400, "MEMORY.md");
        assert!(chars(&cut.text) <= 400);
        assert!(cut.text.contains("truncated MEMORY.md: kept"));
        assert!(
            cut.text
                .contains(&format!("kept {}+{} of 1000", cut.head, cut.tail))
        );
        // Head is floor(75%) of what is kept; the budget is used up to the
        // marker's rounding.
        assert_eq!(cut.head, (cut.head + cut.tail) * 75 / 100, "{cut:?}");
        assert!(chars(&cut.text) >= 398, "{}", chars(&cut.text));
        assert!(cut.text.starts_with(take_chars(&content, cut.head)));
        assert!(cut.text.ends_with(last_chars(&content, cut.tail)));
    }

    #[test]
    fn counts_unicode_scalar_values_not_bytes() {
        let content = "ü".repeat(500);
        let cut = head_tail(&content, 200, "USER.md");
        assert!(chars(&cut.text) <= 200);
        assert!(cut.text.len() > 200, "multi-byte text must be cut by chars");
    }

    #[test]
    fn tiny_budgets_fall_back_to_the_short_marker_then_a_clamp() {
        let content = "x".repeat(1000);
        let short = head_tail(&content, 40, "AGENTS.md");
        assert!(short.text.contains("[…truncated"));
        assert!(!short.text.contains("AGENTS.md"));
        assert!(chars(&short.text) <= 40);
        let clamp = head_tail(&content, 5, "AGENTS.md");
        assert_eq!(clamp.text, "xxxxx");
    }

    #[test]
    fn content_within_budget_is_untouched() {
        assert_eq!(head_tail("short", 10, "A").text, "short");
    }
}
