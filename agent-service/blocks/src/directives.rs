//! Reply directives (P-18): the compact syntax a reply uses to attach media, ask for a voice
//! note and thread itself under a message, read out of the text before it is delivered.
//!
//! | Spelling                          | Where                       | Directive                    |
//! |-----------------------------------|-----------------------------|------------------------------|
//! | `MEDIA: <path or URL>`            | a line of its own           | [`Directive::Media`]         |
//! | `[[audio_as_voice]]`              | anywhere in a line          | [`Directive::AudioAsVoice`]  |
//! | `[[reply_to_current]]`            | anywhere in a line          | [`Directive::ReplyToCurrent`]|
//! | `[[reply_to:<id>]]`               | anywhere in a line          | [`Directive::ReplyTo`]       |
//!
//! Tags may have spaces inside the brackets. Spaces and tabs right after a tag go with it, and a
//! line left blank by its tags goes too. Anything else stays text: other spellings (`media:`,
//! `[[reply-to]]`), a `MEDIA:` line with nothing after it, and everything inside a fenced code
//! block (a line starting with three backticks or tildes opens and closes one).
//!
//! [`DirectiveFilter`] reads a reply as it streams: it holds back only what could still turn
//! out to be a directive (a line that may be a `MEDIA:` line or a fence line, an unclosed
//! `[[`, trailing whitespace after a tag) and releases everything else at once. The text it
//! releases over any chunking of a reply is exactly [`parse_directives`] of the whole reply, so
//! a directive is never split across blocks.

/// One directive read from a reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Directive {
    /// `MEDIA: <target>`: attach the file or URL, as written (quotes and backticks around it
    /// removed).
    Media(String),
    /// `[[audio_as_voice]]`: send audio attachments as a voice note.
    AudioAsVoice,
    /// `[[reply_to_current]]`: thread the reply under the message that started the turn.
    ReplyToCurrent,
    /// `[[reply_to:<id>]]`: thread the reply under message `id`.
    ReplyTo(String),
}

/// Text with its directives taken out, in the order they were read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parsed {
    /// The text to deliver.
    pub text: String,
    /// The directives, in reading order.
    pub directives: Vec<Directive>,
}

impl Parsed {
    fn extend(&mut self, other: Self) {
        self.text.push_str(&other.text);
        self.directives.extend(other.directives);
    }
}

/// What an attachment is, from its file extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttachmentKind {
    /// A picture.
    Image,
    /// Sound (a voice note when the reply asks for one).
    Audio,
    /// A video.
    Video,
    /// Anything else.
    File,
}

/// Extensions per kind; anything not listed is a [`AttachmentKind::File`].
const KINDS: &[(AttachmentKind, &[&str])] = &[
    (
        AttachmentKind::Image,
        &[
            "png", "jpg", "jpeg", "gif", "webp", "bmp", "svg", "heic", "heif", "tif", "tiff",
        ],
    ),
    (
        AttachmentKind::Audio,
        &[
            "mp3", "wav", "ogg", "oga", "opus", "m4a", "aac", "flac", "amr",
        ],
    ),
    (
        AttachmentKind::Video,
        &["mp4", "mov", "webm", "mkv", "avi", "m4v", "mpeg", "mpg"],
    ),
];

impl AttachmentKind {
    /// The kind of a path or URL by its extension (case-insensitive; a URL's query and
    /// fragment are ignored).
    pub fn of(target: &str) -> Self {
        let path = target.split(['?', '#']).next().unwrap_or(target);
        let name = path.rsplit('/').next().unwrap_or(path);
        let Some((_, ext)) = name.rsplit_once('.') else {
            return Self::File;
        };
        let ext = ext.to_ascii_lowercase();
        KINDS
            .iter()
            .find(|(_, exts)| exts.contains(&ext.as_str()))
            .map_or(Self::File, |(kind, _)| *kind)
    }

    /// `image`, `audio`, `video` or `file`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Image => "image",
            Self::Audio => "audio",
            Self::Video => "video",
            Self::File => "file",
        }
    }
}

/// The directives of a whole reply, and its text without them.
pub fn parse_directives(text: &str) -> Parsed {
    let mut filter = DirectiveFilter::new();
    let mut parsed = filter.push(text);
    parsed.extend(filter.finish());
    parsed
}

/// Reads directives out of a reply as it streams (see the module docs).
#[derive(Debug, Clone, Default)]
pub struct DirectiveFilter {
    /// What of the current line is not released yet.
    line: String,
    /// Inside a fenced code block.
    in_fence: bool,
    /// Part of the current line was released (so it is neither a `MEDIA:` line, a fence line
    /// nor a line of tags only).
    line_released: bool,
    /// A tag was taken out of the current line.
    line_had_tag: bool,
    /// The last thing released was a tag: spaces and tabs after it go with it.
    after_tag: bool,
}

impl DirectiveFilter {
    /// A filter at the start of a reply.
    pub fn new() -> Self {
        Self::default()
    }

    /// Reads `delta`; returns what can be delivered now and the directives completed by it.
    pub fn push(&mut self, delta: &str) -> Parsed {
        self.line.push_str(delta);
        let mut out = Parsed::default();
        while let Some(newline) = self.line.find('\n') {
            let line: String = self.line.drain(..=newline).collect();
            out.extend(self.whole_line(&line));
        }
        out.extend(self.partial());
        out
    }

    /// The reply ended: the last line is read as it is.
    pub fn finish(&mut self) -> Parsed {
        let line = std::mem::take(&mut self.line);
        let out = if line.is_empty() {
            Parsed::default()
        } else {
            self.whole_line(&line)
        };
        *self = Self::default();
        out
    }

    /// Nothing is held back.
    pub fn is_idle(&self) -> bool {
        self.line.is_empty()
    }

    /// The rest of a line whose end is known (`rest` ends with its newline, or the reply ends).
    fn whole_line(&mut self, rest: &str) -> Parsed {
        let at_start = !self.line_released;
        let had_tag = self.line_had_tag;
        let after_tag = self.after_tag;
        self.line_released = false;
        self.line_had_tag = false;
        self.after_tag = false;
        let verbatim = |text: &str| Parsed {
            text: text.to_owned(),
            directives: Vec::new(),
        };
        if at_start && is_fence_line(rest) {
            self.in_fence = !self.in_fence;
            return verbatim(rest);
        }
        if self.in_fence {
            return verbatim(rest);
        }
        if at_start && let Some(target) = media_target(rest) {
            return Parsed {
                text: String::new(),
                directives: vec![Directive::Media(target)],
            };
        }
        let tags = strip_tags(rest, after_tag);
        if at_start && (had_tag || tags.had_tag) && tags.text.trim().is_empty() {
            // A line of tags only goes whole, newline included.
            return Parsed {
                text: String::new(),
                directives: tags.directives,
            };
        }
        Parsed {
            text: tags.text,
            directives: tags.directives,
        }
    }

    /// Releases what of an unfinished line cannot change any more.
    fn partial(&mut self) -> Parsed {
        if self.line.is_empty() {
            return Parsed::default();
        }
        if !self.line_released {
            let start = self.line.trim_start();
            let maybe_media = "MEDIA:".starts_with(start) || start.starts_with("MEDIA:");
            if start.is_empty() || start.starts_with(['`', '~']) || maybe_media {
                return Parsed::default();
            }
        }
        if self.in_fence {
            self.line_released = true;
            return Parsed {
                text: std::mem::take(&mut self.line),
                directives: Vec::new(),
            };
        }
        let open = open_tag_start(&self.line);
        let cut = self.line[..open].trim_end().len();
        if cut == 0 {
            return Parsed::default();
        }
        let tags = strip_tags(&self.line[..cut], self.after_tag);
        if !self.line_released && tags.text.trim().is_empty() {
            // Only tags and blanks so far: the line may still turn out to be tags only.
            return Parsed::default();
        }
        self.line.drain(..cut);
        self.line_released = true;
        self.line_had_tag |= tags.had_tag;
        self.after_tag = tags.ends_after_tag;
        Parsed {
            text: tags.text,
            directives: tags.directives,
        }
    }
}

/// A line that opens or closes a fenced code block.
fn is_fence_line(line: &str) -> bool {
    let start = line.trim_start();
    start.starts_with("```") || start.starts_with("~~~")
}

/// The target of a `MEDIA:` line, when the line is one.
fn media_target(line: &str) -> Option<String> {
    let rest = line.trim().strip_prefix("MEDIA:")?.trim();
    let unquoted = ['`', '"', '\'']
        .iter()
        .find_map(|q| rest.strip_prefix(*q).and_then(|r| r.strip_suffix(*q)))
        .unwrap_or(rest)
        .trim();
    (!unquoted.is_empty()).then(|| unquoted.to_owned())
}

/// The directive a tag's inside (between `[[` and `]]`) names, if any.
fn tag(inside: &str) -> Option<Directive> {
    let inside = inside.trim();
    match inside {
        "reply_to_current" => Some(Directive::ReplyToCurrent),
        "audio_as_voice" => Some(Directive::AudioAsVoice),
        _ => {
            let id = inside.strip_prefix("reply_to:")?.trim();
            let valid = !id.is_empty() && !id.contains(char::is_whitespace);
            valid.then(|| Directive::ReplyTo(id.to_owned()))
        }
    }
}

/// Where a tag that is not closed yet starts (an `[[` with no `]]` after it, or a last `[`);
/// the line's length when there is none.
fn open_tag_start(line: &str) -> usize {
    let mut from = 0;
    while let Some(i) = line[from..].find("[[") {
        let at = from + i;
        if !line[at + 2..].contains("]]") {
            return at;
        }
        from = at + 1;
    }
    if line.ends_with('[') {
        line.len() - 1
    } else {
        line.len()
    }
}

struct Stripped {
    text: String,
    directives: Vec<Directive>,
    had_tag: bool,
    /// The text ended with a tag (so blanks that follow still go with it).
    ends_after_tag: bool,
}

/// Takes the known tags out of `text`, and the spaces and tabs after each.
fn strip_tags(text: &str, after_tag: bool) -> Stripped {
    let mut out = Stripped {
        text: String::new(),
        directives: Vec::new(),
        had_tag: false,
        ends_after_tag: false,
    };
    let mut rest = text;
    let mut skip = after_tag;
    loop {
        if skip {
            rest = rest.trim_start_matches([' ', '\t']);
            if rest.is_empty() {
                out.ends_after_tag = true;
                return out;
            }
            skip = false;
        }
        let Some(i) = rest.find("[[") else {
            out.text.push_str(rest);
            return out;
        };
        out.text.push_str(&rest[..i]);
        let after = &rest[i + 2..];
        match after
            .find("]]")
            .and_then(|j| tag(&after[..j]).map(|d| (j, d)))
        {
            Some((j, directive)) => {
                out.directives.push(directive);
                out.had_tag = true;
                rest = &after[j + 2..];
                skip = true;
            }
            None => {
                out.text.push('[');
                rest = &rest[i + 1..];
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(text: &str, directives: Vec<Directive>) -> Parsed {
        Parsed {
            text: text.to_owned(),
            directives,
        }
    }

    #[test]
    fn media_lines_are_taken_out_whole() {
        assert_eq!(
            parse_directives("Here it is.\nMEDIA: out/chart.png\nMore.\n  MEDIA: `a b.mp3`  \n"),
            parsed(
                "Here it is.\nMore.\n",
                vec![
                    Directive::Media("out/chart.png".into()),
                    Directive::Media("a b.mp3".into())
                ]
            )
        );
        assert_eq!(
            parse_directives("MEDIA: https://example.com/a.jpg"),
            parsed(
                "",
                vec![Directive::Media("https://example.com/a.jpg".into())]
            )
        );
    }

    #[test]
    fn tags_are_taken_out_with_the_blanks_after_them() {
        assert_eq!(
            parse_directives("[[reply_to_current]] Sure, done."),
            parsed("Sure, done.", vec![Directive::ReplyToCurrent])
        );
        assert_eq!(
            parse_directives("[[ reply_to: 42 ]]\nHi\n[[audio_as_voice]]\nMEDIA: v.ogg"),
            parsed(
                "Hi\n",
                vec![
                    Directive::ReplyTo("42".into()),
                    Directive::AudioAsVoice,
                    Directive::Media("v.ogg".into())
                ]
            )
        );
        assert_eq!(
            parse_directives("ok [[reply_to_current]]\tthen"),
            parsed("ok then", vec![Directive::ReplyToCurrent])
        );
    }

    #[test]
    fn other_spellings_stay_text() {
        for text in [
            "media: a.png",
            "MEDIA:",
            "MEDIA:   \nnext",
            "see MEDIA: a.png",
            "[[reply-to-current]]",
            "[[reply_to:]]",
            "[[reply_to:a b]]",
            "[[REPLY_TO_CURRENT]]",
            "[[reply_to_current",
            "[reply_to_current]",
        ] {
            assert_eq!(parse_directives(text), parsed(text, vec![]), "{text:?}");
        }
    }

    #[test]
    fn fenced_code_keeps_its_directive_lookalikes() {
        let text = "```\nMEDIA: a.png\n[[reply_to_current]]\n```\nMEDIA: b.png\n";
        assert_eq!(
            parse_directives(text),
            parsed(
                "```\nMEDIA: a.png\n[[reply_to_current]]\n```\n",
                vec![Directive::Media("b.png".into())]
            )
        );
    }

    #[test]
    fn streaming_holds_only_what_may_still_be_a_directive() {
        let mut f = DirectiveFilter::new();
        assert_eq!(f.push("Hello wor").text, "Hello wor");
        assert_eq!(f.push("ld\nMED").text, "ld\n");
        assert_eq!(f.push("IA: x.png").text, "");
        let out = f.push("\nnext [[reply_to");
        assert_eq!(out, parsed("next", vec![Directive::Media("x.png".into())]));
        let out = f.push("_current]] tail");
        assert_eq!(out, parsed(" tail", vec![Directive::ReplyToCurrent]));
        assert!(f.is_idle());
        assert_eq!(f.finish(), Parsed::default());
    }

    #[test]
    fn kinds_follow_the_extension() {
        for (target, kind) in [
            ("a.PNG", AttachmentKind::Image),
            ("https://x.test/v.mp4?sig=1#t", AttachmentKind::Video),
            ("notes/voice.ogg", AttachmentKind::Audio),
            ("report.pdf", AttachmentKind::File),
            ("Makefile", AttachmentKind::File),
            ("https://x.test/", AttachmentKind::File),
        ] {
            assert_eq!(AttachmentKind::of(target), kind, "{target}");
        }
    }
}
