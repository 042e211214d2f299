//! A RenderSystemPrompt request split at the wire level into its turn
//! fields and everything else, without decoding the large fields.
//!
//! Why: an agent sends the same ~50 KB of stable inputs (context files, tool
//! schemas, skills) on every turn of a session, and only a few hundred bytes
//! of turn inputs change. [`crate::stable_cache::StableCache`] recognises the
//! stable part by its bytes and renders the turn from a prepared block, so
//! the stable fields are decoded, validated and converted once per session
//! instead of once per turn.
//!
//! The split reads only top-level keys and lengths. Anything it does not
//! expect (a group, a truncated field, a bad key) makes it give up, and the
//! caller decodes the whole request with prost as before, so malformed input
//! gets exactly the errors it always got.

use std::hash::Hasher;

use prost::{
    bytes::Buf,
    encoding::{WireType, decode_key, decode_varint},
};

/// Top-level fields of `RenderSystemPromptRequest` that carry only the
/// renderer's [`prompt_render::TurnInputs`], by number and name (the names
/// are checked against the proto descriptor by a test, and
/// `turn_from_request` converts exactly these).
pub(crate) const TURN_FIELDS: [(u32, &str); 12] = [
    (14, "channel"),
    (15, "extra_system_prompt"),
    (16, "heartbeat"),
    (17, "runtime"),
    (18, "think_level"),
    (19, "reasoning_level"),
    (26, "tts_hint"),
    (30, "reaction_level"),
    (36, "current_date"),
    (37, "prompt_surface"),
    (38, "mark_relocatable_block"),
    (41, "turn_kind"),
];

fn is_turn_field(tag: u32) -> bool {
    TURN_FIELDS.iter().any(|(t, _)| *t == tag)
}

/// A request split into its two parts.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Split<'a> {
    /// Every top-level field that is not a turn field, keys included, in
    /// request order; adjacent fields share one slice. Their concatenation
    /// is what identifies the stable inputs.
    pub(crate) stable: Vec<&'a [u8]>,
    /// The turn fields, keys included, in request order: a small
    /// `RenderSystemPromptRequest` of its own (copied).
    pub(crate) turn: Vec<u8>,
}

impl Split<'_> {
    /// Length of the stable part.
    pub(crate) fn stable_len(&self) -> usize {
        self.stable.iter().map(|s| s.len()).sum()
    }

    /// True when the stable part is byte for byte `key`.
    pub(crate) fn stable_equals(&self, key: &[u8]) -> bool {
        if self.stable_len() != key.len() {
            return false;
        }
        let mut at = 0;
        self.stable.iter().all(|span| {
            let same = key.get(at..at + span.len()) == Some(*span);
            at += span.len();
            same
        })
    }

    /// Copies the stable part's bytes from `pos` on into `out` (as many as
    /// there are).
    fn read_stable_at(&self, mut pos: usize, out: &mut [u8]) -> usize {
        let mut filled = 0;
        for span in &self.stable {
            if pos >= span.len() {
                pos -= span.len();
                continue;
            }
            let n = (span.len() - pos).min(out.len() - filled);
            out[filled..filled + n].copy_from_slice(&span[pos..pos + n]);
            filled += n;
            pos = 0;
            if filled == out.len() {
                break;
            }
        }
        filled
    }

    /// A fingerprint of the stable part, the same however its fields are
    /// interleaved with turn fields: its length, its first and last 64
    /// bytes, and 8 bytes every 512 (see [`crate::stable_cache::SampledHasher`],
    /// which hashes these short pieces whole). Equal stable parts always get
    /// equal fingerprints; parts that differ only between samples collide
    /// and are told apart by [`Self::stable_equals`].
    pub(crate) fn stable_fingerprint(&self) -> u64 {
        use crate::stable_cache::SampledHasher;
        const ENDS: usize = SampledHasher::ENDS;
        const STRIDE: usize = SampledHasher::STRIDE;
        const SAMPLE: usize = SampledHasher::SAMPLE;
        let len = self.stable_len();
        let mut hasher = SampledHasher::default();
        hasher.write_usize(len);
        let mut buf = [0u8; ENDS];
        let mut take = |from: usize, n: usize| {
            let n = self.read_stable_at(from, &mut buf[..n]);
            hasher.write(&buf[..n]);
        };
        if len <= 4 * ENDS {
            for from in (0..len).step_by(ENDS) {
                take(from, ENDS.min(len - from));
            }
        } else {
            take(0, ENDS);
            take(len - ENDS, ENDS);
            for from in (ENDS..len - ENDS).step_by(STRIDE) {
                take(from, SAMPLE);
            }
        }
        hasher.finish()
    }

    /// The stable part as one buffer.
    pub(crate) fn stable_bytes(&self) -> Vec<u8> {
        self.stable.concat()
    }
}

/// Splits `buf`; `None` when it is not a plain sequence of well-formed
/// top-level fields (the caller then decodes it whole).
pub(crate) fn split(buf: &[u8]) -> Option<Split<'_>> {
    let mut out = Split::default();
    // Start of the stable run being collected.
    let mut run: Option<usize> = None;
    let mut rest = buf;
    while !rest.is_empty() {
        let start = buf.len() - rest.len();
        let (tag, wire_type) = decode_key(&mut rest).ok()?;
        match wire_type {
            WireType::Varint => {
                decode_varint(&mut rest).ok()?;
            }
            WireType::SixtyFourBit => skip(&mut rest, 8)?,
            WireType::ThirtyTwoBit => skip(&mut rest, 4)?,
            WireType::LengthDelimited => {
                let len = usize::try_from(decode_varint(&mut rest).ok()?).ok()?;
                skip(&mut rest, len)?;
            }
            WireType::StartGroup | WireType::EndGroup => return None,
        }
        let end = buf.len() - rest.len();
        if is_turn_field(tag) {
            if let Some(from) = run.take() {
                out.stable.push(&buf[from..start]);
            }
            out.turn.extend_from_slice(&buf[start..end]);
        } else if run.is_none() {
            run = Some(start);
        }
    }
    if let Some(from) = run {
        out.stable.push(&buf[from..]);
    }
    Some(out)
}

fn skip(rest: &mut &[u8], len: usize) -> Option<()> {
    if rest.remaining() < len {
        return None;
    }
    rest.advance(len);
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use openclaw_proto::prompt::v1 as pb;
    use prost::Message;

    #[test]
    fn turn_fields_are_named_as_in_the_proto() {
        let pool = prost_reflect::DescriptorPool::decode(openclaw_proto::FILE_DESCRIPTOR_SET)
            .unwrap_or_else(|e| panic!("the descriptor set decodes: {e}"));
        let Some(message) =
            pool.get_message_by_name("openclaw.prompt.v1.RenderSystemPromptRequest")
        else {
            panic!("the request message is in the descriptor pool");
        };
        for (number, name) in TURN_FIELDS {
            let field = message.get_field(number);
            assert_eq!(field.map(|f| f.name().to_owned()), Some(name.to_owned()));
        }
    }

    fn request() -> pb::RenderSystemPromptRequest {
        crate::request_from_input(&prompt_render::fixtures::realistic())
    }

    #[test]
    fn the_parts_hold_every_byte_once_and_decode_to_the_two_halves() {
        let req = request();
        let bytes = req.encode_to_vec();
        let Some(split) = split(&bytes) else {
            panic!("a prost-encoded request splits");
        };
        assert_eq!(split.stable_len() + split.turn.len(), bytes.len());
        // Fields in tag order: 1-13, 20-25, 27-29, 31-35 are separate runs.
        assert!(split.stable.len() <= 4, "{} runs", split.stable.len());
        let turn = pb::RenderSystemPromptRequest::decode(split.turn.as_slice())
            .unwrap_or_else(|e| panic!("the turn part decodes: {e}"));
        assert_eq!(turn.channel, req.channel);
        assert_eq!(turn.runtime, req.runtime);
        assert_eq!(turn.think_level, req.think_level);
        assert!(turn.tools.is_empty() && turn.context_files.is_empty());
        let stable = pb::RenderSystemPromptRequest::decode(split.stable_bytes().as_slice())
            .unwrap_or_else(|e| panic!("the stable part decodes: {e}"));
        assert_eq!(stable.tools, req.tools);
        assert_eq!(stable.context_files, req.context_files);
        assert_eq!(stable.channel, None);
        assert!(split.stable_equals(&split.stable_bytes()));
    }

    #[test]
    fn only_turn_fields_change_when_only_turn_inputs_change() {
        let mut a = request();
        let mut b = a.clone();
        if let Some(channel) = b.channel.as_mut() {
            channel.name = "discord".into();
        }
        b.extra_system_prompt = "another turn".into();
        let (wa, wb) = (a.encode_to_vec(), b.encode_to_vec());
        let (sa, sb) = (split(&wa), split(&wb));
        let (Some(sa), Some(sb)) = (sa, sb) else {
            panic!("both split");
        };
        assert!(sb.stable_equals(&sa.stable_bytes()));
        assert_ne!(sa.turn, sb.turn);
        // A stable change is seen, even one byte in a long file.
        if let Some(file) = a.context_files.iter_mut().max_by_key(|f| f.content.len()) {
            file.content.replace_range(1000..1001, "#");
        }
        let wa2 = a.encode_to_vec();
        let Some(sa2) = split(&wa2) else {
            panic!("splits");
        };
        assert!(!sa2.stable_equals(&sa.stable_bytes()));
    }

    #[test]
    fn the_fingerprint_ignores_where_turn_fields_sit() {
        let mut a = request();
        a.tts_hint.clear();
        let mut b = a.clone();
        // Field 26 now splits the run of fields 20 to 29 in two.
        b.tts_hint = "Speak slowly.".into();
        let (wa, wb) = (a.encode_to_vec(), b.encode_to_vec());
        let (Some(sa), Some(sb)) = (split(&wa), split(&wb)) else {
            panic!("both split");
        };
        assert_ne!(sa.stable.len(), sb.stable.len());
        assert_eq!(sa.stable_fingerprint(), sb.stable_fingerprint());
        assert!(sb.stable_equals(&sa.stable_bytes()));
        // The same bytes as one span.
        let whole = sa.stable_bytes();
        let one = Split {
            stable: vec![whole.as_slice()],
            turn: Vec::new(),
        };
        assert_eq!(one.stable_fingerprint(), sa.stable_fingerprint());
        // A change at a sampled offset changes it.
        let mut changed = whole.clone();
        changed[64] ^= 1;
        let other = Split {
            stable: vec![changed.as_slice()],
            turn: Vec::new(),
        };
        assert_ne!(other.stable_fingerprint(), one.stable_fingerprint());
        // Short parts are read whole.
        let short = Split {
            stable: vec![&whole[..10], &whole[10..100]],
            turn: Vec::new(),
        };
        let short_one = Split {
            stable: vec![&whole[..100]],
            turn: Vec::new(),
        };
        assert_eq!(short.stable_fingerprint(), short_one.stable_fingerprint());
    }

    #[test]
    fn malformed_input_is_left_to_prost() {
        let bytes = request().encode_to_vec();
        // Truncated in the middle of a field (the long MEMORY.md).
        assert!(split(&bytes[..bytes.len() / 2]).is_none());
        // A group (wire type 3) and a zero tag.
        assert_eq!(split(&[0x0b, 0x0c]), None);
        assert_eq!(split(&[0x00, 0x01]), None);
        // A length past the end.
        assert_eq!(split(&[0x3a, 0xff, 0x01, 0x00]), None);
        // Empty is a valid, empty request.
        assert_eq!(split(&[]), Some(Split::default()));
        // Unknown fields stay in the stable part.
        assert_eq!(split(&[0xf8, 0x3e, 0x01]).map(|s| s.stable.len()), Some(1));
    }
}
