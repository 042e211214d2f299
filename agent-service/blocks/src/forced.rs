//! Forced cuts: when the window holds no natural break.
//!
//! A fence in the way is kept whole in the next chunk if it fits there, or split with a
//! synthetic close and reopen; otherwise the cut lands at the window's end and is moved back
//! off links, fence-like lines and marker runs (or just past a link that starts the chunk).

use crate::breaks::{Cut, FenceView, Frame, Need, Reopen, content_end, line_start_before};
use crate::chunker::CutKind;
use crate::fence::{self, Marker, Shape};
use crate::links::{LinkAt, Links};

/// The cut when the window holds no allowed natural break.
pub(crate) fn cut(f: &Frame<'_>, links: &Links, body_max: usize) -> Result<Cut, Need> {
    if let Some(fence) = f.fence_at(body_max.min(f.buf.len()))? {
        let lead = fence.start.map_or(0, |s| content_end(f.buf, s));
        if let Some(start) = fence.start.filter(|_| lead > 0) {
            // Text precedes the fence: keep the fence whole in the next chunk if it fits there,
            // otherwise split it here so the text before it is not left alone.
            if fits_fresh(f, &fence, start)? {
                return Ok(Cut::plain(lead, start, CutKind::BeforeFence));
            }
            return Ok(split_fence(f, links, &fence, false)?
                .unwrap_or_else(|| Cut::plain(lead, start, CutKind::BeforeFence)));
        }
        if let Some(cut) = split_fence(f, links, &fence, true)? {
            return Ok(cut);
        }
        // Unreachable with fence lines shorter than a quarter of max_chars: the fence cannot be
        // split with a close and reopen, so it is cut like plain text below.
    }
    at_max(f, links, body_max)
}

/// Whether the fence starting at `start` fits one chunk of its own.
fn fits_fresh(f: &Frame<'_>, fence: &FenceView, start: usize) -> Result<bool, Need> {
    let max = f.cfg.max_chars;
    if let Some(end) = fence.end {
        return Ok(end - start <= max);
    }
    let n = f.buf.len();
    if f.done {
        return Ok(content_end(f.buf, n) - start + 1 + fence.marker.len <= max);
    }
    // The earliest line that could still close it.
    let next_line = match f.pending {
        Some((_, Shape::Plain)) => n + 1,
        Some((line_start, _)) => line_start,
        None => n,
    };
    if next_line + fence.marker.len - start > max {
        Ok(false)
    } else {
        Err(Need::Char(f.base + n))
    }
}

fn reopen_for(f: &Frame<'_>, fence: &FenceView) -> Option<Reopen> {
    let Some(start) = fence.start else {
        return Some(Reopen::Same);
    };
    let max = f.cfg.max_chars;
    let line_end = fence.content_start - 1;
    if line_end - start < max / 4 {
        return Some(Reopen::Line(start..line_end));
    }
    // The bare line, its newline, one content char and the synthetic close must fit.
    let needed = (fence.indent + fence.marker.len + 1) + 1 + (fence.marker.len + 1);
    (needed <= max).then_some(Reopen::Bare {
        indent: fence.indent,
        marker: fence.marker,
    })
}

/// A forced cut inside `fence`: the chunk closes it, the next one reopens it. Without
/// `may_split`, a link or fence-like line at the start of the code that is too long to keep
/// whole makes it give up, so the caller can cut before the fence and give it a fresh chunk.
fn split_fence(
    f: &Frame<'_>,
    links: &Links,
    fence: &FenceView,
    may_split: bool,
) -> Result<Option<Cut>, Need> {
    let cfg = f.cfg;
    let n = f.buf.len();
    let close_chars = fence.marker.len + 1;
    let Some(e_max) = cfg.max_chars.checked_sub(f.reopen_chars + close_chars) else {
        return Ok(None);
    };
    let first = fence.content_start + 1;
    if first > e_max || fence.content_start >= n {
        return Ok(None);
    }
    let Some(reopen) = reopen_for(f, fence) else {
        return Ok(None);
    };
    let close_start = fence.close_start.unwrap_or(usize::MAX);
    let split = |body_end, rest, kind| Cut {
        body_end,
        rest,
        kind,
        close: Some(fence.marker),
        reopen: Some(reopen.clone()),
    };
    // The last line boundary inside the code that keeps the chunk in [min_chars, max_chars].
    let lo = cfg
        .min_chars
        .saturating_sub(f.reopen_chars + close_chars)
        .max(first);
    let hi = e_max.min(n - 1);
    if let Some(e) = (lo..=hi)
        .rev()
        .find(|&e| f.buf[e] == '\n' && e + 1 < close_start)
    {
        return Ok(Some(split(e, e + 1, CutKind::Newline)));
    }
    // Never cut inside the closing line: the next chunk must see it whole.
    let (target, kind) = if close_start < e_max {
        (close_start, CutKind::BeforeMarker)
    } else {
        (e_max, CutKind::Hard)
    };
    Ok(settle(
        f,
        links,
        target,
        fence.content_start,
        Some(fence.marker),
        may_split,
    )?
    .map(|(body_end, rest, moved)| {
        let kind = if moved == CutKind::Hard { kind } else { moved };
        split(body_end, rest, kind)
    }))
}

/// A forced cut outside fences at `body_max`, moved off links and fence-like line starts.
fn at_max(f: &Frame<'_>, links: &Links, body_max: usize) -> Result<Cut, Need> {
    let target = body_max.min(f.buf.len());
    Ok(match settle(f, links, target, 0, None, true)? {
        Some((body_end, rest, kind)) => Cut::plain(body_end, rest, kind),
        // Only when the whole window is one oversized marker run or link: cut it anyway.
        None => Cut::plain(target, target, CutKind::Hard),
    })
}

/// Moves a forced cut at `target` back until it splits no link and no fence-like line and the
/// next chunk does not start with a fence marker; keeps a link that starts the chunk whole
/// instead when it fits the channel limit. `floor`: the cut must leave content before it.
/// `in_fence`: the fence's marker when cutting inside a fence. `may_split`: what to do with a
/// link or fence-like line that starts the chunk and is too long to keep whole: split it, or
/// give up (`None`).
/// Returns `(body_end, rest, kind)`.
fn settle(
    f: &Frame<'_>,
    links: &Links,
    target: usize,
    floor: usize,
    in_fence: Option<Marker>,
    may_split: bool,
) -> Result<Option<(usize, usize, CutKind)>, Need> {
    let mut e = target;
    let mut kind = CutKind::Hard;
    let mut line_start = line_start_before(f.buf, e);
    let mut split_link = false;
    // Moving back to `x` is only worth it if the chunk keeps some content.
    let content_before = |x: usize| f.buf[floor..x].iter().any(|c| !c.is_whitespace());
    loop {
        if e <= floor {
            return Ok(None);
        }
        if e <= line_start {
            line_start = line_start_before(f.buf, e);
        }
        match links.at(e) {
            _ if split_link => {}
            LinkAt::Pending => return Err(Need::Char(f.base + f.buf.len())),
            LinkAt::Inside { start, end } => {
                if content_before(start) {
                    e = start;
                    kind = CutKind::BeforeLink;
                    continue;
                }
                if let Some(cut) = after_link(f, end, in_fence)? {
                    return Ok(Some(cut));
                }
                if !may_split {
                    return Ok(None);
                }
                // Longer than the channel allows: it has to be split.
                split_link = true;
            }
            LinkAt::Outside => {}
        }
        if line_start < e {
            if f.fence_like_at(line_start)? {
                // A fence-like line is not split: a part of it could read as a fence line.
                let keeps_content = match in_fence {
                    Some(_) => line_start > floor + 1,
                    None => content_before(line_start),
                };
                if keeps_content {
                    e = line_start;
                    kind = CutKind::BeforeMarker;
                    continue;
                }
                // Unless it starts the chunk and is longer than a chunk: then its first part
                // must still read as it did (no close inside a fence, no opening outside one).
                if !may_split {
                    return Ok(None);
                }
                let head = f.buf[line_start..e].iter().copied();
                if fence::reads_as_fence(head, in_fence) {
                    e -= 1;
                    kind = CutKind::BeforeMarker;
                    continue;
                }
            }
            if f.fence_like_at(e)? {
                e -= 1;
                kind = CutKind::BeforeMarker;
                continue;
            }
        }
        break;
    }
    // When a cut moved back to a line start, the newline goes to the gap (in code the
    // synthetic close replaces it). An unmoved cut keeps every char, so it keeps min_chars.
    let at_line_start = f.buf[e - 1] == '\n' && kind != CutKind::Hard;
    if in_fence.is_some() {
        // Keep the newline if it is all the code this chunk would carry.
        return Ok(Some(if at_line_start && e - 1 > floor {
            (e - 1, e, kind)
        } else {
            (e, e, kind)
        }));
    }
    let (body_end, rest) = if kind == CutKind::BeforeLink || at_line_start {
        let body_end = content_end(f.buf, e);
        let newline = f.buf[body_end..e].iter().rposition(|&c| c == '\n');
        (body_end, newline.map_or(e, |nl| body_end + nl + 1))
    } else {
        (e, e)
    };
    if body_end == 0 || f.fence_at(e)?.is_some() {
        return Ok(None);
    }
    Ok(Some((body_end, rest, kind)))
}

/// Cut just after a link that starts the chunk, if that stays within the channel limit.
fn after_link(
    f: &Frame<'_>,
    end: usize,
    in_fence: Option<Marker>,
) -> Result<Option<(usize, usize, CutKind)>, Need> {
    let mut body_end = end;
    let mut rest = end;
    loop {
        if in_fence.is_none()
            && let Some(c) = f.at(rest)?
            && c.is_whitespace()
        {
            let run = f.run_at(rest)?;
            if let Some(nl) = run.last_newline {
                // A real line start: a fence line there is a real fence.
                rest = nl + 1;
                break;
            }
            rest = run.end;
        }
        if !f.fence_like_at(rest)? {
            break;
        }
        // A marker run right after the link would start the next chunk and read as a fence
        // line there: it goes with this chunk instead.
        rest = skip_marker_run(f.buf, rest);
        body_end = rest;
        if rest == f.buf.len() && !f.done {
            // The run may go on.
            return Err(Need::Char(f.base + rest));
        }
    }
    let used = f.reopen_chars + body_end + in_fence.map_or(0, |m| m.len + 1);
    Ok((used <= f.cfg.text_limit).then_some((body_end, rest, CutKind::AfterLink)))
}

/// Index past up to three spaces and the marker run at `at` (which reads as a fence line).
fn skip_marker_run(buf: &[char], at: usize) -> usize {
    let mut i = at;
    while buf.get(i) == Some(&' ') {
        i += 1;
    }
    let marker = buf.get(i).copied();
    while i < buf.len() && Some(buf[i]) == marker {
        i += 1;
    }
    i
}
