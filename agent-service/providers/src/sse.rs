//! An incremental decoder for `text/event-stream` bodies, as the WHATWG spec defines them:
//! lines end in LF, CRLF or CR; `event:`, `data:` and `id:` fields; comments start with `:`;
//! a blank line dispatches the event; multiple `data:` lines join with `\n`.

use crate::error::ProviderError;

/// A line longer than this without a line break is treated as a malformed stream rather than
/// buffered without bound.
const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// One dispatched server-sent event.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct SseEvent {
    /// The `event:` field; `None` means the default type `message`.
    pub(crate) event: Option<String>,
    /// The `data:` lines joined with `\n`.
    pub(crate) data: String,
}

/// Feeds body chunks in, gets whole events out. Chunk boundaries may fall anywhere, also inside
/// a UTF-8 sequence or between CR and LF.
#[derive(Debug, Default)]
pub(crate) struct SseDecoder {
    buffer: Vec<u8>,
    /// How far `buffer` was already searched for a line break.
    scanned: usize,
    event: Option<String>,
    data: String,
    has_data: bool,
    started: bool,
}

impl SseDecoder {
    /// Decodes `chunk`, appending every completed event to `out`.
    pub(crate) fn push(
        &mut self,
        chunk: &[u8],
        out: &mut Vec<SseEvent>,
    ) -> Result<(), ProviderError> {
        self.buffer.extend_from_slice(chunk);
        let mut start = 0;
        let mut at = self.scanned;
        while at < self.buffer.len() {
            match self.buffer[at] {
                b'\n' => {
                    self.line(start, at, out)?;
                    start = at + 1;
                }
                b'\r' => {
                    // A CR at the very end may be the first half of CRLF: wait for more bytes.
                    let Some(&next) = self.buffer.get(at + 1) else {
                        break;
                    };
                    self.line(start, at, out)?;
                    if next == b'\n' {
                        at += 1;
                    }
                    start = at + 1;
                }
                _ => {}
            }
            at += 1;
        }
        self.buffer.drain(..start);
        self.scanned = at - start;
        if self.buffer.len() > MAX_LINE_BYTES {
            return Err(ProviderError::malformed(
                "an SSE line exceeds 16 MiB without a line break",
            ));
        }
        Ok(())
    }

    fn line(
        &mut self,
        start: usize,
        end: usize,
        out: &mut Vec<SseEvent>,
    ) -> Result<(), ProviderError> {
        let mut bytes = &self.buffer[start..end];
        if !self.started {
            self.started = true;
            bytes = bytes.strip_prefix("\u{feff}".as_bytes()).unwrap_or(bytes);
        }
        let line = std::str::from_utf8(bytes)
            .map_err(|_| ProviderError::malformed("an SSE line is not valid UTF-8"))?;
        if line.is_empty() {
            if self.has_data {
                out.push(SseEvent {
                    event: self.event.take(),
                    data: std::mem::take(&mut self.data),
                });
            }
            self.event = None;
            self.has_data = false;
            return Ok(());
        }
        if line.starts_with(':') {
            return Ok(());
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            "event" => self.event = Some(value.to_owned()),
            // `id` and `retry` only matter to reconnecting clients; model APIs never resume.
            _ => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_in_pieces(input: &str, piece: usize) -> Vec<SseEvent> {
        let mut decoder = SseDecoder::default();
        let mut out = Vec::new();
        for chunk in input.as_bytes().chunks(piece) {
            decoder.push(chunk, &mut out).unwrap();
        }
        out
    }

    #[test]
    fn any_chunking_gives_the_same_events() {
        let input = "\u{feff}: comment\r\nevent: one\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\n\
                     data:plain\n\nevent: three\rdata: é€\r\rdata: [DONE]\n\n";
        let expected = vec![
            SseEvent {
                event: Some("one".into()),
                data: "{\"a\":\n1}".into(),
            },
            SseEvent {
                event: None,
                data: "plain".into(),
            },
            SseEvent {
                event: Some("three".into()),
                data: "é€".into(),
            },
            SseEvent {
                event: None,
                data: "[DONE]".into(),
            },
        ];
        for piece in 1..input.len() {
            assert_eq!(
                decode_in_pieces(input, piece),
                expected,
                "piece size {piece}"
            );
        }
    }

    #[test]
    fn an_event_without_data_is_not_dispatched_and_a_tail_waits() {
        assert_eq!(decode_in_pieces("event: ping\n\ndata: x\n", 4), vec![]);
    }

    #[test]
    fn invalid_utf8_is_malformed() {
        let mut decoder = SseDecoder::default();
        let error = decoder
            .push(b"data: \xff\n\n", &mut Vec::new())
            .unwrap_err();
        assert!(matches!(error, ProviderError::Malformed { .. }));
    }
}
