//! The prompt-cache boundary (P-24).
//!
//! The rendered prompt is `stable prefix`, a marker line, `dynamic suffix`.
//! Everything above the marker is a pure function of stable inputs, so backends
//! with prefix caching can reuse it across turns. The marker is transport
//! metadata: providers that cache split on it, others strip it.

use std::borrow::Cow;

/// The marker line placed between the stable prefix and the dynamic suffix.
/// Our own constant; callers should treat it as opaque.
pub const CACHE_BOUNDARY_MARKER: &str = "<!-- openclaw:prompt-cache-boundary -->";

/// The marker line a caller may ask for (`mark_relocatable`) in front of
/// the relocatable block: the trailing per-turn sections (date, runtime)
/// that a provider with implicit prefix caching can move into a trailing
/// system message, so that everything before the conversation stays the
/// same from turn to turn. Treat it as opaque, like the boundary marker.
pub const RELOCATABLE_MARKER: &str = "<!-- openclaw:prompt-relocatable -->";

/// What both markers start with, for a quick check that a text has none.
pub(crate) const MARKER_PREFIX: &str = "<!-- openclaw:prompt-";

/// Separator between sections and around the marker.
pub const SECTION_SEPARATOR: &str = "\n\n";

/// Removes every occurrence of the marker from caller-supplied text, so that
/// no input can smuggle a second boundary into the prompt. Borrows `s` when
/// it carries no marker (almost always).
pub fn strip_markers(s: &str) -> Cow<'_, str> {
    if !s.contains(MARKER_PREFIX) {
        return Cow::Borrowed(s);
    }
    let mut out = Cow::Borrowed(s);
    for marker in [CACHE_BOUNDARY_MARKER, RELOCATABLE_MARKER] {
        if out.contains(marker) {
            out = Cow::Owned(out.replace(marker, ""));
        }
    }
    out
}

/// Splits a rendered prompt at its first marker into (stable, dynamic), both
/// trimmed of the separator. `None` when the text carries no marker.
pub fn split(text: &str) -> Option<(&str, &str)> {
    let idx = text.find(CACHE_BOUNDARY_MARKER)?;
    let stable = text[..idx].trim_end();
    let dynamic = text[idx + CACHE_BOUNDARY_MARKER.len()..].trim_start();
    Some((stable, dynamic))
}

/// The prompt with the markers removed, for transports that send one plain
/// system prompt: the stable prefix and the dynamic suffix joined by a blank line.
pub fn strip(text: &str) -> String {
    let joined = match split(text) {
        Some((stable, "")) => stable.to_owned(),
        Some(("", dynamic)) => dynamic.to_owned(),
        Some((stable, dynamic)) => format!("{stable}{SECTION_SEPARATOR}{dynamic}"),
        None => text.to_owned(),
    };
    let marker_line = format!("{SECTION_SEPARATOR}{RELOCATABLE_MARKER}");
    if joined.contains(&marker_line) {
        joined.replace(&marker_line, "")
    } else {
        joined
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_uses_the_first_marker() {
        let text = format!("a\n\n{CACHE_BOUNDARY_MARKER}\n\nb");
        assert_eq!(split(&text), Some(("a", "b")));
        assert_eq!(strip(&text), "a\n\nb");
        assert_eq!(split("no marker"), None);
    }

    #[test]
    fn smuggled_markers_are_removed() {
        let evil = format!("x{CACHE_BOUNDARY_MARKER}y{RELOCATABLE_MARKER}z");
        assert_eq!(strip_markers(&evil), "xyz");
    }

    #[test]
    fn strip_drops_the_relocatable_marker_line() {
        let text = format!("a\n\n{CACHE_BOUNDARY_MARKER}\n\nb\n\n{RELOCATABLE_MARKER}\n\nc");
        assert_eq!(strip(&text), "a\n\nb\n\nc");
    }
}
