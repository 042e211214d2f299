//! Where to cut: the pure decision over the buffered text.
//!
//! [`plan`] looks at the buffer (the source after the last cut) with the fences and links in it
//! and either names a cut, says the text is used up, or says what it still has to see. It names a
//! cut only when no continuation of the text could change it; that is what makes the chunker's
//! output independent of how the text was split into deltas. Every read past the buffer goes
//! through [`Frame::at`] (or a helper built on it), which answers "need more" unless the turn has
//! ended.

use std::ops::Range;

use crate::chunker::CutKind;
use crate::config::{BreakPreference, ChunkerConfig};
use crate::fence::{self, Marker, Shape};
use crate::forced;
use crate::links::{LinkAt, Links};

/// What the planner must see before it can decide.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Need {
    /// The char at this turn offset.
    Char(usize),
    /// A non-whitespace char at or after this turn offset.
    NonWs(usize),
    /// The end of the current line.
    LineEnd,
}

/// A fence as seen from the buffer (buffer offsets).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FenceView {
    /// Opening line start; `None` when it lies before the buffer (a reopened fence).
    pub(crate) start: Option<usize>,
    /// First content char (0 for a reopened fence).
    pub(crate) content_start: usize,
    /// Start of the closing line, once seen.
    pub(crate) close_start: Option<usize>,
    /// Just past the closing marker, once seen.
    pub(crate) end: Option<usize>,
    /// Indentation of the opening line.
    pub(crate) indent: usize,
    /// Opening marker.
    pub(crate) marker: Marker,
}

/// Everything the planner looks at.
pub(crate) struct Frame<'a> {
    /// Source chars after the last cut.
    pub(crate) buf: &'a [char],
    /// Turn offset of `buf[0]`.
    pub(crate) base: usize,
    /// The turn has ended: nothing follows `buf`.
    pub(crate) done: bool,
    /// Chars of the synthetic reopening line (newline included) the next chunk starts with.
    pub(crate) reopen_chars: usize,
    /// Fences overlapping the buffer, in order.
    pub(crate) fences: Vec<FenceView>,
    /// The incomplete last line: its start and shape so far.
    pub(crate) pending: Option<(usize, Shape)>,
    /// Normalised configuration.
    pub(crate) cfg: &'a ChunkerConfig,
}

/// How the synthetic reopening line of a split fence is written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Reopen {
    /// The fence's own opening line, `buf[range]`.
    Line(Range<usize>),
    /// Indentation plus marker: the opening line is too long to repeat in every chunk.
    Bare { indent: usize, marker: Marker },
    /// The fence was reopened already: repeat that line.
    Same,
}

/// A decided cut: emit `buf[..body_end]`, continue at `buf[rest..]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Cut {
    pub(crate) body_end: usize,
    pub(crate) rest: usize,
    pub(crate) kind: CutKind,
    /// Close this fence at the end of the chunk (newline plus marker).
    pub(crate) close: Option<Marker>,
    /// Reopen the fence at the start of the next chunk.
    pub(crate) reopen: Option<Reopen>,
}

impl Cut {
    pub(crate) fn plain(body_end: usize, rest: usize, kind: CutKind) -> Self {
        Self {
            body_end,
            rest,
            kind,
            close: None,
            reopen: None,
        }
    }
}

/// A maximal whitespace run starting at a cut candidate.
pub(crate) struct Run {
    pub(crate) end: usize,
    pub(crate) newlines: usize,
    pub(crate) last_newline: Option<usize>,
}

/// Index just past the last non-whitespace char of `buf[..to]` (0 if there is none).
pub(crate) fn content_end(buf: &[char], to: usize) -> usize {
    buf[..to]
        .iter()
        .rposition(|c| !c.is_whitespace())
        .map_or(0, |i| i + 1)
}

/// Start of the line containing the boundary before `buf[x]` (0 if it began before the buffer).
pub(crate) fn line_start_before(buf: &[char], x: usize) -> usize {
    buf[..x]
        .iter()
        .rposition(|&c| c == '\n')
        .map_or(0, |i| i + 1)
}

fn is_run_start(buf: &[char], p: usize) -> bool {
    buf[p].is_whitespace() && !buf[p - 1].is_whitespace()
}

impl Frame<'_> {
    pub(crate) fn at(&self, i: usize) -> Result<Option<char>, Need> {
        match self.buf.get(i) {
            Some(&c) => Ok(Some(c)),
            None if self.done => Ok(None),
            None => Err(Need::Char(self.base + i)),
        }
    }

    pub(crate) fn run_at(&self, p: usize) -> Result<Run, Need> {
        let mut run = Run {
            end: p,
            newlines: 0,
            last_newline: None,
        };
        while let Some(&c) = self.buf.get(run.end) {
            if !c.is_whitespace() {
                return Ok(run);
            }
            if c == '\n' {
                run.newlines += 1;
                run.last_newline = Some(run.end);
            }
            run.end += 1;
        }
        if self.done {
            Ok(run)
        } else {
            Err(Need::NonWs(self.base + run.end))
        }
    }

    /// Whether text starting at `s` would read as a fence line if it began a chunk.
    pub(crate) fn fence_like_at(&self, s: usize) -> Result<bool, Need> {
        let tail = self.buf.get(s..).unwrap_or_default();
        match fence::line_shape(tail.iter().copied()) {
            Some(shape) => Ok(shape == Shape::FenceLike),
            None if self.done => Ok(false),
            None => Err(Need::Char(self.base + self.buf.len())),
        }
    }

    fn pending_line_blocks(&self, x: usize) -> bool {
        self.pending
            .is_some_and(|(start, shape)| x > start && shape != Shape::Plain)
    }

    /// The fence whose inside the boundary before `buf[x]` lies in (the opening line counts as
    /// inside; the boundary just past the closing marker does not).
    pub(crate) fn fence_at(&self, x: usize) -> Result<Option<FenceView>, Need> {
        for fence in &self.fences {
            if fence.start.is_some_and(|s| s >= x) {
                break;
            }
            match fence.end {
                Some(end) if x < end => return Ok(Some(*fence)),
                Some(_) => {}
                None if self.pending_line_blocks(x) => return Err(Need::LineEnd),
                None => return Ok(Some(*fence)),
            }
        }
        if self.pending_line_blocks(x) {
            return Err(Need::LineEnd);
        }
        Ok(None)
    }
}

/// Decides the next cut: `Ok(Some)` a cut, `Ok(None)` nothing left (only when done), `Err` what
/// must be seen first.
pub(crate) fn plan(f: &Frame<'_>) -> Result<Option<Cut>, Need> {
    let cfg = f.cfg;
    let n = f.buf.len();
    let r = f.reopen_chars;
    let body_max = cfg.max_chars.saturating_sub(r).max(1);
    let body_min = cfg.min_chars.saturating_sub(r).clamp(1, body_max);

    if f.done {
        let end = content_end(f.buf, n);
        if end == 0 {
            return Ok(None);
        }
        let open = f
            .fences
            .last()
            .filter(|x| x.end.is_none())
            .map(|x| x.marker);
        let close = open.map_or(0, |m| m.len + 1);
        if r + end + close <= cfg.max_chars {
            return Ok(Some(Cut {
                body_end: end,
                rest: n,
                kind: CutKind::End,
                close: open,
                reopen: None,
            }));
        }
    }
    if r == 0 && f.buf.first().is_some_and(|c| c.is_whitespace()) {
        // Indentation kept after a cut that alone fills a chunk: drop it (an empty body emits
        // no chunk) rather than send a whitespace-only message.
        let run = f.run_at(0)?;
        if run.end >= body_max {
            return Ok(Some(Cut::plain(0, run.end, CutKind::Whitespace)));
        }
    }
    if cfg.flush_on_paragraph
        && let Some(cut) = first_paragraph(f, body_min, body_max)?
    {
        return Ok(Some(cut));
    }
    if n <= body_max && !f.done {
        return Err(Need::Char(f.base + body_max));
    }
    let links = Links::scan(f.buf, f.done, cfg.text_limit);
    if let Some(cut) = best_break(f, &links, body_min, body_max)? {
        return Ok(Some(cut));
    }
    forced::cut(f, &links, body_max).map(Some)
}

/// `flush_on_paragraph`: the first paragraph break in the window, as soon as it is seen.
fn first_paragraph(f: &Frame<'_>, lo: usize, hi: usize) -> Result<Option<Cut>, Need> {
    let n = f.buf.len();
    let mut p = lo;
    while p <= hi && p < n {
        if !is_run_start(f.buf, p) {
            p += 1;
            continue;
        }
        let run = f.run_at(p)?;
        if run.newlines >= 2 && f.fence_at(p)?.is_none() {
            let rest = run.last_newline.map_or(run.end, |nl| nl + 1);
            return Ok(Some(Cut::plain(p, rest, CutKind::Paragraph)));
        }
        p = run.end.max(p + 1);
    }
    if n <= hi && !f.done {
        return Err(Need::Char(f.base + n));
    }
    Ok(None)
}

#[derive(Clone, Copy)]
enum Tier {
    Paragraph,
    Newline,
    Sentence,
    Whitespace,
}

impl Tier {
    fn order(pref: BreakPreference) -> &'static [Tier] {
        match pref {
            BreakPreference::Paragraph => &[
                Tier::Paragraph,
                Tier::Newline,
                Tier::Sentence,
                Tier::Whitespace,
            ],
            BreakPreference::Newline => &[Tier::Newline, Tier::Sentence, Tier::Whitespace],
            BreakPreference::Sentence => &[Tier::Sentence, Tier::Whitespace],
        }
    }

    fn kind(self) -> CutKind {
        match self {
            Tier::Paragraph => CutKind::Paragraph,
            Tier::Newline => CutKind::Newline,
            Tier::Sentence => CutKind::Sentence,
            Tier::Whitespace => CutKind::Whitespace,
        }
    }
}

struct Candidate {
    at: usize,
    rest: usize,
    newlines: usize,
    sentence: bool,
}

impl Candidate {
    fn is(&self, tier: Tier) -> bool {
        match tier {
            Tier::Paragraph => self.newlines >= 2,
            Tier::Newline => self.newlines >= 1,
            Tier::Sentence => self.sentence,
            Tier::Whitespace => true,
        }
    }
}

/// The last allowed break of the best eligible tier whose chunk length lies in `[lo, hi]`.
fn best_break(f: &Frame<'_>, links: &Links, lo: usize, hi: usize) -> Result<Option<Cut>, Need> {
    let n = f.buf.len();
    let mut found = Vec::new();
    let mut line_start = line_start_before(f.buf, lo.min(n));
    let mut p = lo;
    while p <= hi && p < n {
        if !is_run_start(f.buf, p) {
            if f.buf[p] == '\n' {
                line_start = p + 1;
            }
            p += 1;
            continue;
        }
        let run = f.run_at(p)?;
        if let Some(rest) = run_rest(f, links, p, &run, line_start)? {
            found.push(Candidate {
                at: p,
                rest,
                newlines: run.newlines,
                sentence: matches!(f.buf[p - 1], '.' | '!' | '?'),
            });
        }
        if let Some(nl) = run.last_newline {
            line_start = nl + 1;
        }
        p = run.end.max(p + 1);
    }
    for &tier in Tier::order(f.cfg.break_preference) {
        if let Some(c) = found.iter().rev().find(|c| c.is(tier)) {
            return Ok(Some(Cut::plain(c.at, c.rest, tier.kind())));
        }
    }
    Ok(None)
}

/// Where the next chunk starts if the text is cut at the run at `p` (on the line starting at
/// `line_start`); `None` if that cut would split a fence, a link or a fence-like line, or would
/// make the next chunk start with a fence marker.
fn run_rest(
    f: &Frame<'_>,
    links: &Links,
    p: usize,
    run: &Run,
    line_start: usize,
) -> Result<Option<usize>, Need> {
    if f.fence_at(p)?.is_some() {
        return Ok(None);
    }
    if let Some(nl) = run.last_newline {
        // The next chunk starts at a real line start, indentation kept.
        return Ok(Some(nl + 1));
    }
    match links.at(p) {
        LinkAt::Inside { .. } => return Ok(None),
        LinkAt::Pending => return Err(Need::Char(f.base + f.buf.len())),
        LinkAt::Outside => {}
    }
    // A fence-like line is never split, so the tracker can recognise it in any chunk.
    if f.fence_like_at(line_start)? || f.fence_like_at(run.end)? {
        return Ok(None);
    }
    Ok(Some(run.end))
}
