//! Where command output goes: the answer on stdout, notes (tool calls,
//! usage, hints) as short dimmed lines on stderr, so `openclaw chat -m ... >
//! answer.txt` captures only the answer.

use std::io::Write;

/// ANSI "dim" on, and reset.
const DIM: &str = "\x1b[2m";
const RESET: &str = "\x1b[0m";

/// Whether notes are dimmed with ANSI escapes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Style {
    /// Emit ANSI escapes.
    pub color: bool,
}

impl Style {
    /// No escapes (pipes, files, tests).
    pub const PLAIN: Self = Self { color: false };

    /// Colour only when both stdout and stderr are terminals and `NO_COLOR`
    /// is unset or empty (<https://no-color.org>). The caller reads the
    /// environment so this stays a pure decision.
    pub fn detect(no_color: Option<&str>, stdout_tty: bool, stderr_tty: bool) -> Self {
        let no_color = no_color.is_some_and(|v| !v.is_empty());
        Self {
            color: stdout_tty && stderr_tty && !no_color,
        }
    }
}

/// The two output streams of a command, tracking whether stdout is in the
/// middle of a line so notes on stderr never land mid-sentence.
pub struct Term<'a> {
    out: &'a mut (dyn Write + Send),
    err: &'a mut (dyn Write + Send),
    style: Style,
    out_mid_line: bool,
    err_mid_line: bool,
}

impl std::fmt::Debug for Term<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Term")
            .field("style", &self.style)
            .finish_non_exhaustive()
    }
}

impl<'a> Term<'a> {
    /// Writes answers to `out` and notes to `err`.
    pub fn new(
        out: &'a mut (dyn Write + Send),
        err: &'a mut (dyn Write + Send),
        style: Style,
    ) -> Self {
        Self {
            out,
            err,
            style,
            out_mid_line: false,
            err_mid_line: false,
        }
    }

    /// Streams answer text to stdout as it arrives (flushed at once).
    pub fn text(&mut self, text: &str) -> std::io::Result<()> {
        if text.is_empty() {
            return Ok(());
        }
        self.end_err_line()?;
        self.out.write_all(text.as_bytes())?;
        self.out.flush()?;
        self.out_mid_line = !text.ends_with('\n');
        Ok(())
    }

    /// Writes whole lines to stdout (command results such as listings).
    pub fn line(&mut self, text: &str) -> std::io::Result<()> {
        self.end_out_line()?;
        writeln!(self.out, "{text}")?;
        self.out.flush()
    }

    /// Writes `rows` to stdout as a [`table`], one line each.
    pub fn table(&mut self, rows: &[Vec<String>]) -> std::io::Result<()> {
        for line in table(rows) {
            self.line(&line)?;
        }
        Ok(())
    }

    /// Writes raw bytes to stdout unchanged (the exact prompt text).
    pub fn raw(&mut self, text: &str) -> std::io::Result<()> {
        self.out.write_all(text.as_bytes())?;
        self.out.flush()?;
        self.out_mid_line = !text.is_empty() && !text.ends_with('\n');
        Ok(())
    }

    /// Streams a dimmed fragment to stderr without ending the line
    /// (thinking as it arrives).
    pub fn note_fragment(&mut self, text: &str) -> std::io::Result<()> {
        if text.is_empty() {
            return Ok(());
        }
        self.end_out_line()?;
        let (on, off) = self.dim();
        write!(self.err, "{on}{text}{off}")?;
        self.err.flush()?;
        self.err_mid_line = !text.ends_with('\n');
        Ok(())
    }

    /// The interactive prompt on stderr. The user's Enter ends its line, so
    /// it does not count as a half-written line.
    pub fn prompt(&mut self, text: &str) -> std::io::Result<()> {
        let (on, off) = self.dim();
        self.write_err(format_args!("{on}{text}{off}"))
    }

    /// One dimmed line on stderr (tool calls, usage, hints).
    pub fn note(&mut self, text: &str) -> std::io::Result<()> {
        let (on, off) = self.dim();
        self.write_err(format_args!("{on}{text}{off}\n"))
    }

    /// One plain line on stderr (errors, the ready banner).
    pub fn message(&mut self, text: &str) -> std::io::Result<()> {
        self.write_err(format_args!("{text}\n"))
    }

    /// Writes `text` to stderr at the start of a line: any half-written line on either
    /// stream is ended first.
    fn write_err(&mut self, text: std::fmt::Arguments<'_>) -> std::io::Result<()> {
        self.end_out_line()?;
        self.end_err_line()?;
        self.err.write_fmt(text)?;
        self.err.flush()
    }

    /// Ends a half-written stdout line (after a streamed answer).
    pub fn end_out_line(&mut self) -> std::io::Result<()> {
        end_line(self.out, &mut self.out_mid_line)
    }

    /// Ends a half-written stderr line (after streamed thinking).
    pub fn end_err_line(&mut self) -> std::io::Result<()> {
        end_line(self.err, &mut self.err_mid_line)
    }

    fn dim(&self) -> (&'static str, &'static str) {
        if self.style.color {
            (DIM, RESET)
        } else {
            ("", "")
        }
    }
}

/// `text` with every character that could change how a terminal shows the
/// rest written as a visible escape: control characters (`\n`, `\r`, `\t`,
/// ESC and the others, as `\n`, `\r`, `\t` or `\u{1b}`) and the Unicode
/// format characters that reorder or hide text (bidi overrides and
/// isolates, zero-width characters). For text a person must read exactly,
/// such as a command waiting for their approval: what they see is the
/// command, byte for byte, never a line an escape sequence redrew.
pub fn visible(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() || is_hiding_format(c) => {
                out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
            }
            c => out.push(c),
        }
    }
    out
}

/// Format characters that reorder, join or hide text on display.
fn is_hiding_format(c: char) -> bool {
    matches!(
        c,
        '\u{200b}'..='\u{200f}'
            | '\u{202a}'..='\u{202e}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{2069}'
            | '\u{feff}'
            | '\u{061c}'
            | '\u{00ad}'
    )
}

/// Ends `stream`'s line when `mid_line` says one is half-written.
fn end_line(stream: &mut (dyn Write + Send), mid_line: &mut bool) -> std::io::Result<()> {
    if *mid_line {
        stream.write_all(b"\n")?;
        stream.flush()?;
        *mid_line = false;
    }
    Ok(())
}

/// A row of `names` (a [`table`]'s header).
pub fn columns<const N: usize>(names: [&str; N]) -> Vec<String> {
    names.map(str::to_owned).to_vec()
}

/// Left-aligned columns, two spaces apart (the last column is not padded).
pub fn table(rows: &[Vec<String>]) -> Vec<String> {
    let mut widths: Vec<usize> = Vec::new();
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            let width = cell.chars().count();
            match widths.get_mut(i) {
                Some(w) => *w = (*w).max(width),
                None => widths.push(width),
            }
        }
    }
    rows.iter()
        .map(|row| {
            let mut line = String::new();
            for (i, cell) in row.iter().enumerate() {
                if i + 1 == row.len() {
                    line.push_str(cell);
                } else {
                    let pad = widths[i] - cell.chars().count();
                    line.push_str(cell);
                    line.push_str(&" ".repeat(pad + 2));
                }
            }
            line.trim_end().to_owned()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_only_on_terminals_without_no_color() {
        assert!(Style::detect(None, true, true).color);
        assert!(Style::detect(Some(""), true, true).color);
        assert!(!Style::detect(Some("1"), true, true).color);
        assert!(!Style::detect(None, false, true).color);
        assert!(!Style::detect(None, true, false).color);
    }

    #[test]
    fn visible_escapes_what_would_redraw_or_reorder_a_line() {
        assert_eq!(visible("ls -l"), "ls -l");
        assert_eq!(
            visible("rm -rf ~\r\x1b[2Kls\nx\ty"),
            "rm -rf ~\\r\\u{1b}[2Kls\\nx\\ty"
        );
        assert_eq!(
            visible("a\u{202e}b\u{200b}c\u{7f}"),
            "a\\u{202e}b\\u{200b}c\\u{7f}"
        );
        assert_eq!(visible("café ✓"), "café ✓");
    }

    #[test]
    fn tables_align_columns() {
        let rows = vec![
            vec!["ID".to_owned(), "MODEL".to_owned(), "X".to_owned()],
            vec!["main".to_owned(), "a/b".to_owned(), String::new()],
        ];
        assert_eq!(table(&rows), ["ID    MODEL  X", "main  a/b"]);
    }

    #[test]
    fn notes_never_land_mid_line() -> std::io::Result<()> {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let mut term = Term::new(&mut out, &mut err, Style { color: true });
        term.text("Let me look")?;
        term.note("· read: a.txt")?;
        term.text("Done.")?;
        term.end_out_line()?;
        assert_eq!(String::from_utf8_lossy(&out), "Let me look\nDone.\n");
        assert_eq!(
            String::from_utf8_lossy(&err),
            "\x1b[2m· read: a.txt\x1b[0m\n"
        );
        Ok(())
    }
}
