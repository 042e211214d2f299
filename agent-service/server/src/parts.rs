//! Every streamed item fits a default gRPC client.
//!
//! gRPC clients refuse a message over 4 MiB unless told otherwise, and one
//! oversize item fails the whole stream: a transcript with one large
//! message (a 3.5 MiB message of quotes is a 7 MB JSON line once escaped)
//! could not be read at all, nor a run whose answer was long. So the
//! streams send long text in parts of at most [`PART_BYTES`], in the shapes
//! the proto documents: a transcript line in several entries
//! (`json_continues`), a long delta as several deltas, a long final answer
//! as `final_part` events before `final`. Parts split at character
//! boundaries, so each is valid UTF-8 as a proto string must be.

use openclaw_proto::agent::v1 as pb;

/// The most text one streamed item carries. Well under the 4 MiB default,
/// with room for the item's other fields.
pub const PART_BYTES: usize = 1024 * 1024;

/// `text` in pieces of at most `max` bytes, cut at character boundaries;
/// one piece (possibly empty) when it fits.
fn split(text: String, max: usize) -> Vec<String> {
    if text.len() <= max {
        return vec![text];
    }
    let mut parts = Vec::with_capacity(text.len() / max + 1);
    let mut rest = text.as_str();
    while !rest.is_empty() {
        let mut end = max.min(rest.len());
        while !rest.is_char_boundary(end) {
            end -= 1;
        }
        let (part, tail) = rest.split_at(end);
        parts.push(part.to_owned());
        rest = tail;
    }
    parts
}

/// A transcript entry as the items that carry it: itself when its line
/// fits, else its parts (the first with every field, the rest with `seq`
/// and `json` only), each but the last with `json_continues`.
pub fn entry_items(entry: pb::TranscriptEntry) -> Vec<pb::TranscriptItem> {
    let item = |entry| pb::TranscriptItem {
        item: Some(pb::transcript_item::Item::Entry(entry)),
    };
    if entry.json.len() <= PART_BYTES {
        return vec![item(entry)];
    }
    let seq = entry.seq;
    let mut parts = split(entry.json, PART_BYTES).into_iter();
    let first = parts.next().unwrap_or_default();
    let mut items = vec![item(pb::TranscriptEntry {
        json: first,
        json_continues: true,
        ..entry
    })];
    items.extend(parts.map(|json| {
        item(pb::TranscriptEntry {
            seq,
            json,
            json_continues: true,
            ..pb::TranscriptEntry::default()
        })
    }));
    if let Some(pb::transcript_item::Item::Entry(last)) =
        items.last_mut().and_then(|i| i.item.as_mut())
    {
        last.json_continues = false;
    }
    items
}

/// A run event as the events that carry it: long deltas as several deltas,
/// a long final answer as `final_part` events and then the final event
/// with the last pieces. `seq` is the stream position of the first; the
/// rest follow it.
pub fn run_events(seq: u64, run: u64, event: pb::run_event::Event) -> Vec<pb::RunEvent> {
    use pb::run_event::Event as E;
    let events: Vec<E> = match event {
        E::TextDelta(text) => split(text, PART_BYTES)
            .into_iter()
            .map(E::TextDelta)
            .collect(),
        E::ThinkingDelta(text) => split(text, PART_BYTES)
            .into_iter()
            .map(E::ThinkingDelta)
            .collect(),
        E::Final(last) if last.text.len() + last.reply.len() > PART_BYTES => final_parts(last),
        other => vec![other],
    };
    (seq..)
        .zip(events)
        .map(|(seq, event)| pb::RunEvent {
            seq,
            run,
            event: Some(event),
        })
        .collect()
}

/// `final_part` events, then the final event, each with at most
/// [`PART_BYTES`] of `text` and `reply` together.
fn final_parts(mut last: pb::RunFinal) -> Vec<pb::run_event::Event> {
    // Half the budget each; a part that leaves one side empty is fine.
    let half = PART_BYTES / 2;
    let mut text = split(std::mem::take(&mut last.text), half);
    let mut reply = split(std::mem::take(&mut last.reply), half);
    let count = text.len().max(reply.len());
    text.resize(count, String::new());
    reply.resize(count, String::new());
    let mut events: Vec<pb::run_event::Event> = text
        .into_iter()
        .zip(reply)
        .map(|(text, reply)| pb::run_event::Event::FinalPart(pb::RunFinalPart { text, reply }))
        .collect();
    if let Some(pb::run_event::Event::FinalPart(tail)) = events.pop() {
        last.text = tail.text;
        last.reply = tail.reply;
    }
    events.push(pb::run_event::Event::Final(last));
    events
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_splits_at_character_boundaries_into_pieces_that_join_back() {
        let text = "aé€😀".repeat(1000);
        for max in [4, 5, 7, 100] {
            let parts = split(text.clone(), max);
            assert!(
                parts.iter().all(|p| p.len() <= max && !p.is_empty()),
                "{max}"
            );
            assert_eq!(parts.concat(), text);
        }
        assert_eq!(split(String::new(), 4), [""]);
    }

    #[test]
    fn a_long_final_answer_comes_in_parts_that_rebuild_it() {
        let text = "t".repeat(3 * PART_BYTES + 5);
        let reply = "r".repeat(PART_BYTES);
        let events = run_events(
            7,
            2,
            pb::run_event::Event::Final(pb::RunFinal {
                text: text.clone(),
                reply: reply.clone(),
                steps: 3,
                ..Default::default()
            }),
        );
        let (mut all_text, mut all_reply) = (String::new(), String::new());
        for (i, event) in events.iter().enumerate() {
            assert_eq!((event.seq, event.run), (7 + i as u64, 2));
            assert!(prost::Message::encoded_len(event) <= PART_BYTES + 64);
            match event.event.as_ref() {
                Some(pb::run_event::Event::FinalPart(p)) if i + 1 < events.len() => {
                    all_text.push_str(&p.text);
                    all_reply.push_str(&p.reply);
                }
                Some(pb::run_event::Event::Final(f)) if i + 1 == events.len() => {
                    all_text.push_str(&f.text);
                    all_reply.push_str(&f.reply);
                    assert_eq!(f.steps, 3);
                }
                other => panic!("{i}: {other:?}"),
            }
        }
        assert_eq!((all_text, all_reply), (text, reply));
    }
}
