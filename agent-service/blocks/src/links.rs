//! Links and URLs the chunker must not split.
//!
//! Protected spans are plain URLs (`http://` or `https://`, ASCII case-insensitive, up to the
//! next whitespace or `<`; a leading `<` of an autolink is included) and single-line Markdown
//! links and images, `[label](destination)` / `![alt](destination)`, whose destination has no
//! whitespace (parentheses may nest; link titles are not recognised). A span longer than the
//! channel limit can never be sent whole, so it is not protected. Spans are found everywhere,
//! code included: keeping a URL whole costs nothing there either.

/// Where a boundary lies with respect to the protected spans.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LinkAt {
    /// Not inside any span.
    Outside,
    /// Strictly inside the span `start..end`.
    Inside { start: usize, end: usize },
    /// Might be inside a span that the text seen so far does not complete.
    Pending,
}

/// Protected spans of one buffer, in buffer offsets.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Links {
    spans: Vec<(usize, usize)>,
    pending: Option<usize>,
}

impl Links {
    /// Scans `buf`. `done` says the text ends with `buf`; spans longer than `max_len` are ignored.
    pub(crate) fn scan(buf: &[char], done: bool, max_len: usize) -> Self {
        let mut links = Self::default();
        let mut i = 0;
        while i < buf.len() {
            let probe = match buf[i] {
                '\\' => {
                    // An escaped char never opens a link.
                    i += 2;
                    continue;
                }
                '[' => markdown_link(buf, i, done, max_len),
                'h' | 'H' => url(buf, i, done, max_len),
                _ => Probe::No,
            };
            // `![alt](..)` and `<https://..>` include the char before the match.
            let lead = matches!(
                (buf[i], i.checked_sub(1).map(|j| buf[j])),
                ('[', Some('!')) | ('h' | 'H', Some('<'))
            );
            let start = if lead { i - 1 } else { i };
            match probe {
                Probe::Found(end) => {
                    links.spans.push((start, end));
                    i = end;
                }
                Probe::Pending => {
                    links.pending.get_or_insert(start);
                    i += 1;
                }
                Probe::No => i += 1,
            }
        }
        links
    }

    /// Where the boundary before `buf[x]` lies.
    pub(crate) fn at(&self, x: usize) -> LinkAt {
        if let Some(&(start, end)) = self.spans.iter().find(|&&(s, e)| s < x && x < e) {
            LinkAt::Inside { start, end }
        } else if self.pending.is_some_and(|p| x > p) {
            LinkAt::Pending
        } else {
            LinkAt::Outside
        }
    }
}

enum Probe {
    Found(usize),
    Pending,
    No,
}

/// What running out of text at `j` (a span that began at `start`) means.
fn ran_out(j: usize, start: usize, done: bool, max_len: usize) -> Probe {
    if done || j - start > max_len {
        Probe::No
    } else {
        Probe::Pending
    }
}

fn markdown_link(buf: &[char], start: usize, done: bool, max_len: usize) -> Probe {
    let mut j = start + 1;
    loop {
        if j - start > max_len {
            return Probe::No;
        }
        match buf.get(j) {
            None => return ran_out(j, start, done, max_len),
            Some('\\') => j += 2,
            Some('\n' | '[') => return Probe::No,
            Some(']') => break,
            Some(_) => j += 1,
        }
    }
    match buf.get(j + 1) {
        None => return ran_out(j + 1, start, done, max_len),
        Some('(') => {}
        Some(_) => return Probe::No,
    }
    let mut k = j + 2;
    let mut depth = 0usize;
    loop {
        if k - start > max_len {
            return Probe::No;
        }
        match buf.get(k) {
            None => return ran_out(k, start, done, max_len),
            Some('\\') => k += 2,
            Some('(') => {
                depth += 1;
                k += 1;
            }
            Some(')') if depth == 0 => return Probe::Found(k + 1),
            Some(')') => {
                depth -= 1;
                k += 1;
            }
            Some(c) if c.is_whitespace() => return Probe::No,
            Some(_) => k += 1,
        }
    }
}

fn url(buf: &[char], start: usize, done: bool, max_len: usize) -> Probe {
    let mut pending = false;
    for scheme in ["https://", "http://"] {
        let mut matched = 0;
        for (k, want) in scheme.chars().enumerate() {
            match buf.get(start + k) {
                Some(c) if c.eq_ignore_ascii_case(&want) => matched += 1,
                Some(_) => break,
                None => {
                    pending |= !done;
                    break;
                }
            }
        }
        if matched == scheme.len() {
            let mut end = start + matched;
            loop {
                if end - start > max_len {
                    return Probe::No;
                }
                match buf.get(end) {
                    // A URL that reaches the end of the finished text ends there.
                    None if done => return Probe::Found(end),
                    None => return Probe::Pending,
                    Some(c) if c.is_whitespace() || *c == '<' => return Probe::Found(end),
                    Some(_) => end += 1,
                }
            }
        }
    }
    if pending { Probe::Pending } else { Probe::No }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spans(text: &str, done: bool) -> Links {
        let chars: Vec<char> = text.chars().collect();
        Links::scan(&chars, done, 4000)
    }

    #[test]
    fn urls_and_links_are_found() {
        let l = spans(
            "see https://a.b/c?d=1 and [the docs](http://x.y/(z)) or ![i](p).",
            true,
        );
        assert_eq!(l.spans, vec![(4, 21), (26, 52), (56, 63)]);
        assert_eq!(l.pending, None);
    }

    #[test]
    fn autolink_includes_angle_bracket() {
        let l = spans("<https://a.b> x", true);
        assert_eq!(l.spans, vec![(0, 13)]);
    }

    #[test]
    fn incomplete_spans_are_pending_until_done() {
        assert_eq!(spans("go to htt", false).pending, Some(6));
        assert_eq!(spans("go to htt", true).pending, None);
        assert_eq!(spans("a [label with", false).at(10), LinkAt::Pending);
        assert_eq!(spans("a [label with", true).at(10), LinkAt::Outside);
        assert_eq!(spans("https://a.b/c", false).at(5), LinkAt::Pending);
        assert_eq!(
            spans("https://a.b/c", true).at(5),
            LinkAt::Inside { start: 0, end: 13 }
        );
    }

    #[test]
    fn not_links() {
        assert_eq!(
            spans("a[0] = b [x] (y) [p](q r) \\[e](f)", true).spans,
            vec![]
        );
        assert_eq!(spans("[a\nb](c)", true).spans, vec![]);
    }

    #[test]
    fn oversized_spans_are_not_protected() {
        let chars: Vec<char> = "https://abcdefghij".chars().collect();
        assert_eq!(Links::scan(&chars, true, 10).spans, vec![]);
        assert_eq!(Links::scan(&chars, false, 10).pending, None);
    }
}
