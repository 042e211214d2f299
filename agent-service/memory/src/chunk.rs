//! Cutting a memory file into overlapping chunks of whole lines.
//!
//! A chunk holds about `tokens × 4` characters (a token is counted as four characters, the
//! usual estimate for English; CJK text gets fewer characters per token in reality, so its
//! chunks are somewhat larger in tokens). The next chunk starts with the last lines of the
//! previous one, about `overlap × 4` characters of them, so a passage cut at a boundary is
//! whole in one of the two. A single line longer than a chunk is a chunk of its own. Blank
//! lines at either end of a chunk are left out of its line range.

use crate::settings::Chunking;

/// Characters counted as one token.
pub const CHARS_PER_TOKEN: usize = 4;

/// One chunk: lines `start..=end` (1-based) of a file and their text joined by `\n`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    /// First line, 1-based.
    pub start: usize,
    /// Last line, inclusive.
    pub end: usize,
    /// The lines, joined by `\n`.
    pub text: String,
}

/// The chunks of `text`, in order. Empty or blank text has none.
pub fn chunks(text: &str, chunking: Chunking) -> Vec<Chunk> {
    let lines: Vec<&str> = text.lines().collect();
    let max = chunking.tokens.max(1) * CHARS_PER_TOKEN;
    let overlap = chunking.overlap * CHARS_PER_TOKEN;
    let size = |line: &str| line.chars().count() + 1;
    let mut out = Vec::new();
    let mut first = 0;
    while first < lines.len() {
        // Grow the chunk line by line until the next line would overflow it.
        let mut last = first;
        let mut used = size(lines[first]);
        while last + 1 < lines.len() && used + size(lines[last + 1]) <= max {
            last += 1;
            used += size(lines[last]);
        }
        push(&mut out, &lines, first, last);
        if last + 1 >= lines.len() {
            break;
        }
        // The next chunk repeats the tail of this one, but always moves forward.
        let mut next = last + 1;
        let mut shared = 0;
        while next > first + 1 && shared + size(lines[next - 1]) <= overlap {
            next -= 1;
            shared += size(lines[next]);
        }
        first = next;
    }
    out
}

fn push(out: &mut Vec<Chunk>, lines: &[&str], first: usize, last: usize) {
    let blank = |i: &usize| lines[*i].trim().is_empty();
    let Some(start) = (first..=last).find(|i| !blank(i)) else {
        return;
    };
    let end = (first..=last).rev().find(|i| !blank(i)).unwrap_or(start);
    out.push(Chunk {
        start: start + 1,
        end: end + 1,
        text: lines[start..=end].join("\n"),
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ranges(text: &str, tokens: usize, overlap: usize) -> Vec<(usize, usize)> {
        chunks(text, Chunking { tokens, overlap })
            .iter()
            .map(|c| (c.start, c.end))
            .collect()
    }

    #[test]
    fn a_short_file_is_one_chunk_without_blank_edges() {
        assert_eq!(ranges("\n# Notes\nlikes tea\n\n", 400, 80), [(2, 3)]);
        assert!(ranges("\n \n", 400, 80).is_empty());
    }

    #[test]
    fn long_files_are_cut_with_overlap_and_always_advance() {
        // Lines of 10 characters (11 with the break); 10 tokens = 40 characters = 3 lines.
        let text: String = (0..10).map(|i| format!("line {i:05}\n")).collect();
        assert_eq!(
            ranges(&text, 10, 3),
            [(1, 3), (3, 5), (5, 7), (7, 9), (9, 10)]
        );
        assert_eq!(ranges(&text, 10, 0), [(1, 3), (4, 6), (7, 9), (10, 10)]);
        // An overlap as large as the chunk still moves on by a line.
        assert_eq!(ranges(&text, 10, 10)[..2], [(1, 3), (2, 4)]);
    }

    #[test]
    fn a_line_longer_than_a_chunk_stands_alone() {
        let text = format!("short\n{}\nshort\n", "x".repeat(100));
        assert_eq!(ranges(&text, 5, 1), [(1, 1), (2, 2), (3, 3)]);
    }
}
