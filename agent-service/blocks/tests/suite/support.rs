//! Shared helpers: feeding, an independent fence oracle and the random text generator.

use std::ops::Range;

use openclaw_blocks::{BlockChunker, BreakPreference, Chunk, ChunkerConfig};
use proptest::prelude::*;

/// A normalised config with the given bounds.
pub fn config(min: usize, max: usize, text_limit: usize, pref: BreakPreference) -> ChunkerConfig {
    ChunkerConfig {
        min_chars: min,
        max_chars: max,
        break_preference: pref,
        text_limit,
        flush_on_paragraph: false,
    }
    .normalized()
}

/// Feeds `deltas`, then finishes; returns every chunk.
pub fn chunks<'a>(config: &ChunkerConfig, deltas: impl IntoIterator<Item = &'a str>) -> Vec<Chunk> {
    let mut chunker = BlockChunker::new(config.clone());
    let mut out = Vec::new();
    for delta in deltas {
        out.extend(chunker.push_chunks(delta));
    }
    out.extend(chunker.finish_chunks());
    out
}

/// The text of every chunk, feeding `text` in one delta.
pub fn texts(config: &ChunkerConfig, text: &str) -> Vec<String> {
    let mut chunker = BlockChunker::new(config.clone());
    let mut out = chunker.push(text);
    out.extend(chunker.finish());
    out
}

/// `text` one char per delta.
pub fn char_deltas(text: &str) -> Vec<String> {
    text.chars().map(String::from).collect()
}

/// `text` cut into deltas of the given char counts (cycled).
pub fn split_deltas(text: &str, sizes: &[usize]) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut at = 0;
    for &size in sizes.iter().cycle() {
        if at >= chars.len() {
            break;
        }
        let end = (at + size.max(1)).min(chars.len());
        out.push(chars[at..end].iter().collect());
        at = end;
    }
    out
}

/// Whether `text` read on its own leaves no fenced code block open. Written from the
/// CommonMark rules independently of the crate's scanner, so the two check each other.
pub fn balanced(text: &str) -> bool {
    let mut open: Option<(char, usize)> = None;
    for line in text.split('\n') {
        let indent = line.len() - line.trim_start_matches(' ').len();
        if indent > 3 {
            continue;
        }
        let rest = &line[indent..];
        let Some(ch) = rest.chars().next().filter(|c| matches!(c, '`' | '~')) else {
            continue;
        };
        let run = rest.chars().take_while(|&c| c == ch).count();
        if run < 3 {
            continue;
        }
        let after = &rest[run..];
        match open {
            None if !(ch == '`' && after.contains('`')) => open = Some((ch, run)),
            None => {}
            Some((och, olen)) => {
                let blank = after.chars().all(|c| matches!(c, ' ' | '\t' | '\r'));
                if ch == och && run >= olen && blank {
                    open = None;
                }
            }
        }
    }
    open.is_none()
}

/// Non-whitespace chars of `text` on lines that are not fence lines (what the tracker compares).
pub fn content(text: &str) -> String {
    text.split('\n')
        .filter(|line| {
            let rest = line.trim_start_matches(' ');
            let fence_like = line.len() - rest.len() <= 3
                && (rest.starts_with("```") || rest.starts_with("~~~"));
            !fence_like
        })
        .flat_map(|line| line.chars().filter(|c| !c.is_whitespace()))
        .collect()
}

/// Generated text plus the char ranges of the links and URLs it contains.
#[derive(Clone, Debug)]
pub struct Sample {
    pub text: String,
    pub links: Vec<Range<usize>>,
}

const WORDS: &[&str] = &[
    "alpha",
    "beta",
    "gamma",
    "delta",
    "naïve",
    "café",
    "日本語",
    "🎉",
    "x",
    "lorem",
    "ipsum",
    "Ünïcödé",
    "ok",
    "the",
    "a",
    "end.",
    "wait!",
    "so?",
];
const ENDS: &[&str] = &[". ", "! ", "? ", " ", ".\n", ", ", "."];
const PARAGRAPHS: &[&str] = &["\n\n", "\n\n\n", "\n  \n", "\n\t\n"];
const LINES: &[&str] = &["\n", "\n  ", "\n- ", "\n1. ", "\n    "];
const INFOS: &[&str] = &["", "rust", "py", "sh x", "c++"];
/// Marker runs that are not fences where they stand (inline, too indented, tab-indented).
const MARKERS: &[&str] = &[
    " ```x``` ",
    " ~~~ ",
    "```mid ",
    "\n    ```\n",
    "\n\t~~~\n",
    " `` ",
    "a````b ",
];
/// Content lines that look like fence lines but close nothing.
const FENCE_LIKE_CONTENT: &[&str] = &["```python", "~~~ note", "```` x", "``` trailing text"];

#[derive(Clone, Debug)]
enum Piece {
    Sentence(Vec<usize>, usize),
    Paragraph(usize),
    Line(usize),
    Url(Vec<String>, bool),
    LongUrl(usize),
    Link(Vec<usize>, String, bool),
    Fence(Fence),
    Marker(usize),
    Long(usize),
    Blank(bool),
}

#[derive(Clone, Debug)]
struct Fence {
    indent: usize,
    tilde: bool,
    len: usize,
    info: usize,
    lines: Vec<CodeLine>,
    close: Close,
}

#[derive(Clone, Debug)]
enum CodeLine {
    Code(Vec<usize>),
    Url(Vec<String>),
    FenceLike(usize),
    Long(usize),
    Empty,
}

#[derive(Clone, Debug)]
enum Close {
    Proper { extra: usize, trailing: bool },
    TrailingText,
    Missing,
}

fn words() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(0..WORDS.len(), 1..12)
}

fn segments() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec("[a-z0-9]{1,8}", 0..4)
}

fn code_line() -> impl Strategy<Value = CodeLine> {
    prop_oneof![
        6 => words().prop_map(CodeLine::Code),
        1 => segments().prop_map(CodeLine::Url),
        1 => (0..FENCE_LIKE_CONTENT.len()).prop_map(CodeLine::FenceLike),
        1 => (20usize..250).prop_map(CodeLine::Long),
        1 => Just(CodeLine::Empty),
    ]
}

fn fence() -> impl Strategy<Value = Fence> {
    let close = prop_oneof![
        6 => (0usize..3, any::<bool>()).prop_map(|(extra, trailing)| Close::Proper { extra, trailing }),
        1 => Just(Close::TrailingText),
        1 => Just(Close::Missing),
    ];
    (
        0usize..4,
        any::<bool>(),
        3usize..6,
        0..INFOS.len(),
        prop::collection::vec(code_line(), 0..40),
        close,
    )
        .prop_map(|(indent, tilde, len, info, lines, close)| Fence {
            indent,
            tilde,
            len,
            info,
            lines,
            close,
        })
}

fn piece() -> impl Strategy<Value = Piece> {
    prop_oneof![
        12 => (words(), 0..ENDS.len()).prop_map(|(w, e)| Piece::Sentence(w, e)),
        3 => (0..PARAGRAPHS.len()).prop_map(Piece::Paragraph),
        3 => (0..LINES.len()).prop_map(Piece::Line),
        2 => (segments(), any::<bool>()).prop_map(|(s, angle)| Piece::Url(s, angle)),
        1 => (60usize..500).prop_map(Piece::LongUrl),
        2 => (prop::collection::vec(0..WORDS.len(), 1..4), "[a-z0-9]{1,8}", any::<bool>())
            .prop_map(|(w, seg, image)| Piece::Link(w, seg, image)),
        2 => fence().prop_map(Piece::Fence),
        1 => (0..MARKERS.len()).prop_map(Piece::Marker),
        1 => (20usize..400).prop_map(Piece::Long),
        1 => any::<bool>().prop_map(Piece::Blank),
    ]
}

/// Random assistant text: sentences, paragraphs, lists, URLs, Markdown links, fenced blocks
/// (some unclosed, some with trailing text on would-be closing lines), stray marker runs.
/// Every fence line is short (within the chunker's documented precondition).
pub fn sample() -> impl Strategy<Value = Sample> {
    text(false)
}

/// Like [`sample`], but marker runs may also start lines, opening fences whose opening line
/// runs on for hundreds of chars: outside the balance precondition, still within every other.
pub fn wild_sample() -> impl Strategy<Value = Sample> {
    text(true)
}

fn text(wild: bool) -> impl Strategy<Value = Sample> {
    (any::<bool>(), prop::collection::vec(piece(), 0..60)).prop_map(move |(lead, pieces)| {
        let mut b = Builder {
            wild,
            ..Builder::default()
        };
        if lead {
            b.push("\n\n  ");
        }
        for piece in &pieces {
            b.piece(piece);
        }
        Sample {
            text: b.text,
            links: b.links,
        }
    })
}

#[derive(Default)]
struct Builder {
    wild: bool,
    text: String,
    chars: usize,
    links: Vec<Range<usize>>,
}

impl Builder {
    fn push(&mut self, s: &str) {
        self.text.push_str(s);
        self.chars += s.chars().count();
    }

    fn link(&mut self, s: &str) {
        if !self.text.is_empty() && !self.text.ends_with(char::is_whitespace) {
            self.push(" ");
        }
        let start = self.chars;
        self.push(s);
        self.links.push(start..self.chars);
        self.push(" ");
    }

    fn line_start(&mut self) {
        if !self.text.is_empty() && !self.text.ends_with('\n') {
            self.push("\n");
        }
    }

    fn words(&mut self, words: &[usize]) {
        let joined: Vec<&str> = words.iter().map(|&w| WORDS[w]).collect();
        self.push(&joined.join(" "));
    }

    fn piece(&mut self, piece: &Piece) {
        match piece {
            Piece::Sentence(words, end) => {
                self.words(words);
                self.push(ENDS[*end]);
            }
            Piece::Paragraph(i) => self.push(PARAGRAPHS[*i]),
            Piece::Line(i) => self.push(LINES[*i]),
            Piece::Url(segments, angle) => {
                let url = format!("https://ex.com/{}", segments.join("/"));
                self.link(&if *angle { format!("<{url}>") } else { url });
            }
            Piece::LongUrl(n) => self.link(&format!("https://ex.com/{}", "u".repeat(*n))),
            Piece::Link(words, seg, image) => {
                let label: Vec<&str> = words.iter().map(|&w| WORDS[w]).collect();
                let bang = if *image { "!" } else { "" };
                self.link(&format!(
                    "{bang}[{}](https://ex.com/{seg})",
                    label.join(" ")
                ));
            }
            Piece::Fence(fence) => self.fence(fence),
            Piece::Marker(i) => {
                let line = self.text.rsplit('\n').next().unwrap_or_default();
                if !self.wild && line.trim().is_empty() {
                    // Keep the run mid-line: at a line start it would open a fence.
                    self.push("w");
                }
                self.push(MARKERS[*i]);
            }
            Piece::Long(n) => self.push(&"y".repeat(*n)),
            Piece::Blank(tab) => self.push(if *tab { "\t" } else { "   " }),
        }
    }

    fn fence(&mut self, fence: &Fence) {
        let ch = if fence.tilde { "~" } else { "`" };
        let indent = " ".repeat(fence.indent);
        self.line_start();
        self.push(&format!(
            "{indent}{}{}\n",
            ch.repeat(fence.len),
            INFOS[fence.info]
        ));
        for line in &fence.lines {
            match line {
                CodeLine::Code(words) => {
                    self.push("    ");
                    self.words(words);
                }
                CodeLine::Url(segments) => {
                    self.push("  get");
                    self.link(&format!("https://ex.com/{}", segments.join("/")));
                }
                CodeLine::FenceLike(i) => self.push(FENCE_LIKE_CONTENT[*i]),
                CodeLine::Long(n) => self.push(&"z".repeat(*n)),
                CodeLine::Empty => {}
            }
            self.push("\n");
        }
        match fence.close {
            Close::Proper { extra, trailing } => {
                let blanks = if trailing { "  " } else { "" };
                self.push(&format!("{}{blanks}\n", ch.repeat(fence.len + extra)));
            }
            Close::TrailingText => self.push(&format!("{} not a close\n", ch.repeat(fence.len))),
            Close::Missing => {}
        }
    }
}

/// Chunker bounds for property tests: `max_chars >= 96`, so every generated fence line is
/// shorter than `max_chars / 4` and every generated link fits with the fence lines around it.
pub fn chunker_config() -> impl Strategy<Value = ChunkerConfig> {
    (96usize..=600, 0usize..=300, any::<bool>(), 0usize..3).prop_flat_map(
        |(max, extra, flush, pref)| {
            (1..=max).prop_map(move |min| ChunkerConfig {
                min_chars: min,
                max_chars: max,
                break_preference: [
                    BreakPreference::Paragraph,
                    BreakPreference::Newline,
                    BreakPreference::Sentence,
                ][pref],
                text_limit: max + extra,
                flush_on_paragraph: flush,
            })
        },
    )
}
