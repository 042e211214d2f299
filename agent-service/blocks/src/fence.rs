//! Fenced code blocks: the line rules shared by the chunker and the tracker.
//!
//! A CommonMark subset. An opening fence is a line indented by at most three spaces, then
//! three or more backticks or tildes, then an optional info string (a backtick fence's info
//! string may not contain a backtick). A closing fence uses the same character, at least as
//! many of them, and nothing but blanks after them, so a fence line with trailing text is
//! content, never a close. Container blocks (block quotes, deeply indented list items) are not
//! recognised.
//!
//! The scanner reads the source once, char by char, and keeps positions in turn offsets, so the
//! chunker never re-parses text it has already seen.

use std::collections::VecDeque;

/// A fence marker: its character and how many of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Marker {
    pub(crate) ch: char,
    pub(crate) len: usize,
}

impl Marker {
    /// The marker as text (what a synthetic closing line consists of).
    pub(crate) fn text(self) -> String {
        std::iter::repeat_n(self.ch, self.len).collect()
    }
}

/// What the start of a (possibly incomplete) line says about fences.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Shape {
    /// Can no longer be a fence line.
    Plain,
    /// Only up to three spaces and fewer than three marker chars so far.
    Undecided,
    /// Indentation plus three or more marker chars: opener, closer or content, depending on the
    /// rest of the line and the fence state.
    FenceLike,
}

/// Incremental reader of one line's fence-relevant features.
#[derive(Clone, Copy, Debug, Default)]
struct LineReader {
    spaces: usize,
    ch: Option<char>,
    run: usize,
    in_rest: bool,
    rest_blank: bool,
    rest_backtick: bool,
    plain: bool,
}

impl LineReader {
    fn feed(&mut self, c: char) {
        if self.plain {
            return;
        }
        if self.in_rest {
            self.rest_blank &= is_blank(c);
            self.rest_backtick |= c == '`';
            return;
        }
        match self.ch {
            None => match c {
                ' ' if self.spaces < 3 => self.spaces += 1,
                '`' | '~' => {
                    self.ch = Some(c);
                    self.run = 1;
                }
                _ => self.plain = true,
            },
            Some(m) if c == m => self.run += 1,
            Some(_) if self.run < 3 => self.plain = true,
            Some(_) => {
                self.in_rest = true;
                self.rest_blank = is_blank(c);
                self.rest_backtick = c == '`';
            }
        }
    }

    fn shape(&self) -> Shape {
        if self.plain {
            Shape::Plain
        } else if self.run >= 3 {
            Shape::FenceLike
        } else {
            Shape::Undecided
        }
    }

    /// The marker this complete line would open a fence with.
    fn opener(&self) -> Option<Marker> {
        let ch = self.ch?;
        let valid = self.shape() == Shape::FenceLike && !(ch == '`' && self.rest_backtick);
        valid.then_some(Marker { ch, len: self.run })
    }

    /// Whether this complete line closes a fence opened with `open`.
    fn closes(&self, open: Marker) -> bool {
        self.shape() == Shape::FenceLike
            && self.ch == Some(open.ch)
            && self.run >= open.len
            && (!self.in_rest || self.rest_blank)
    }
}

fn is_blank(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r')
}

/// Shape of the line that starts with `chars`; `None` if the chars run out before it is known.
pub(crate) fn line_shape(chars: impl IntoIterator<Item = char>) -> Option<Shape> {
    let mut reader = LineReader::default();
    for c in chars {
        if c == '\n' {
            // A decided shape returned below, so the line ended undecided: plain.
            return Some(Shape::Plain);
        }
        reader.feed(c);
        match reader.shape() {
            Shape::Undecided => {}
            decided => return Some(decided),
        }
    }
    None
}

/// Whether the complete line `line` reads as a fence line: as a close of a fence opened with
/// `open`, or as an opening when no fence is open.
pub(crate) fn reads_as_fence(line: impl IntoIterator<Item = char>, open: Option<Marker>) -> bool {
    let mut reader = LineReader::default();
    line.into_iter().for_each(|c| reader.feed(c));
    match open {
        Some(marker) => reader.closes(marker),
        None => reader.opener().is_some(),
    }
}

/// Whether `line` (without its newline) starts like a fence line.
pub(crate) fn is_fence_like(line: &str) -> bool {
    line_shape(line.chars()) == Some(Shape::FenceLike)
}

/// A fence closing line, in turn offsets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Close {
    /// First char of the closing line.
    pub(crate) line_start: usize,
    /// Just past the closing marker run; a cut here keeps the fence whole.
    pub(crate) end: usize,
}

/// One fenced block, in turn offsets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Fence {
    /// First char of the opening line (its indentation included).
    pub(crate) start: usize,
    /// First char after the opening line's newline.
    pub(crate) content_start: usize,
    /// Spaces before the opening marker.
    pub(crate) indent: usize,
    /// The opening marker.
    pub(crate) marker: Marker,
    /// The closing line, once seen.
    pub(crate) close: Option<Close>,
}

/// Reads the source once and records its fences.
#[derive(Clone, Debug, Default)]
pub(crate) struct FenceScanner {
    fences: VecDeque<Fence>,
    open: bool,
    line_start: usize,
    line: LineReader,
    pos: usize,
    lines_done: u64,
}

impl FenceScanner {
    /// Feeds the next source char.
    pub(crate) fn push(&mut self, c: char) {
        if c == '\n' {
            self.end_line(self.pos);
            self.pos += 1;
            self.line_start = self.pos;
            self.line = LineReader::default();
            self.lines_done += 1;
        } else {
            self.line.feed(c);
            self.pos += 1;
        }
    }

    /// Ends the source: the last line is classified even without a newline.
    pub(crate) fn finish(&mut self) {
        if self.pos > self.line_start {
            self.end_line(self.pos);
            self.line_start = self.pos;
            self.line = LineReader::default();
        }
    }

    fn end_line(&mut self, newline_at: usize) {
        let line_start = self.line_start;
        if self.open {
            if let Some(fence) = self.fences.back_mut()
                && self.line.closes(fence.marker)
            {
                fence.close = Some(Close {
                    line_start,
                    end: line_start + self.line.spaces + self.line.run,
                });
                self.open = false;
            }
        } else if let Some(marker) = self.line.opener() {
            self.fences.push_back(Fence {
                start: line_start,
                content_start: newline_at + 1,
                indent: self.line.spaces,
                marker,
                close: None,
            });
            self.open = true;
        }
    }

    /// Forgets fences that end at or before `base`: no boundary after `base` can be in them.
    pub(crate) fn prune(&mut self, base: usize) {
        while self
            .fences
            .front()
            .is_some_and(|f| f.close.is_some_and(|c| c.end <= base))
        {
            self.fences.pop_front();
        }
    }

    /// Known fences, in source order; only the last one can be open.
    pub(crate) fn fences(&self) -> impl Iterator<Item = &Fence> {
        self.fences.iter()
    }

    /// The incomplete last line: its start and what its prefix says.
    pub(crate) fn pending(&self) -> Option<(usize, Shape)> {
        (self.pos > self.line_start).then(|| (self.line_start, self.line.shape()))
    }

    /// Completed lines so far (a retry hint for the chunker).
    pub(crate) fn lines_done(&self) -> u64 {
        self.lines_done
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(text: &str) -> Vec<Fence> {
        let mut s = FenceScanner::default();
        text.chars().for_each(|c| s.push(c));
        s.finish();
        s.fences().cloned().collect()
    }

    #[test]
    fn opener_closer_and_positions() {
        let fences = scan("a\n```rust\nx\n```\nb");
        assert_eq!(
            fences,
            vec![Fence {
                start: 2,
                content_start: 10,
                indent: 0,
                marker: Marker { ch: '`', len: 3 },
                close: Some(Close {
                    line_start: 12,
                    end: 15
                }),
            }]
        );
    }

    #[test]
    fn trailing_text_is_not_a_close_and_shorter_or_other_markers_neither() {
        let fences = scan("````\n```\n~~~~\n```` x\n````  \nafter");
        assert_eq!(fences.len(), 1);
        assert_eq!(
            fences[0].close.map(|c| c.line_start),
            Some("````\n```\n~~~~\n```` x\n".len())
        );
    }

    #[test]
    fn backtick_info_with_backtick_is_not_an_opener_but_tilde_is() {
        assert!(scan("```a`b\n").is_empty());
        let fences = scan("~~~a`b\n");
        assert_eq!(fences.len(), 1);
        assert!(fences[0].close.is_none());
    }

    #[test]
    fn indentation_rules() {
        assert_eq!(scan("   ```\nx\n   ```").len(), 1);
        assert!(scan("    ```\nx").is_empty());
        assert!(scan("\t```\nx").is_empty());
    }

    #[test]
    fn open_fence_at_end_and_pending_line() {
        let mut s = FenceScanner::default();
        "x\n``".chars().for_each(|c| s.push(c));
        assert_eq!(s.pending(), Some((2, Shape::Undecided)));
        s.push('`');
        assert_eq!(s.pending(), Some((2, Shape::FenceLike)));
        s.finish();
        assert_eq!(s.fences().count(), 1);
        assert_eq!(s.pending(), None);
    }

    #[test]
    fn line_shape_needs_at_most_the_marker() {
        assert_eq!(line_shape("ab".chars()), Some(Shape::Plain));
        assert_eq!(line_shape("  `".chars()), None);
        assert_eq!(line_shape("``\n".chars()), Some(Shape::Plain));
        assert_eq!(line_shape("   ~~~".chars()), Some(Shape::FenceLike));
        assert_eq!(line_shape("    ~~~".chars()), Some(Shape::Plain));
        assert!(is_fence_like("```rust"));
        assert!(!is_fence_like("x ```"));
    }
}
