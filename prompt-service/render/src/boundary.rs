//! The prompt-cache boundary (SPEC P-24).
//!
//! The rendered prompt is `stable prefix`, a marker line, `dynamic suffix`.
//! Everything above the marker is a pure function of stable inputs, so backends
//! with prefix caching can reuse it across turns. The marker is transport
//! metadata: providers that cache split on it, others strip it.

use std::borrow::Cow;

/// The marker line placed between the stable prefix and the dynamic suffix.
/// Our own constant; callers should treat it as opaque.
pub const CACHE_BOUNDARY_MARKER: &str = "<!-- openclaw:prompt-cache-boundary -->";

/// Separator between sections and around the marker.
pub const SECTION_SEPARATOR: &str = "\n\n";

/// Removes every occurrence of the marker from caller-supplied text, so that
/// no input can smuggle a second boundary into the prompt. Borrows `s` when
/// it carries no marker (almost always).
pub fn strip_markers(s: &str) -> Cow<'_, str> {
    if s.contains(CACHE_BOUNDARY_MARKER) {
        Cow::Owned(s.replace(CACHE_BOUNDARY_MARKER, ""))
    } else {
        Cow::Borrowed(s)
    }
}

/// Splits a rendered prompt at its first marker into (stable, dynamic), both
/// trimmed of the separator. `None` when the text carries no marker.
pub fn split(text: &str) -> Option<(&str, &str)> {
    let idx = text.find(CACHE_BOUNDARY_MARKER)?;
    let stable = text[..idx].trim_end();
    let dynamic = text[idx + CACHE_BOUNDARY_MARKER.len()..].trim_start();
    Some((stable, dynamic))
}

/// The prompt with the marker removed, for transports that send one plain
/// system prompt: the stable prefix and the dynamic suffix joined by a blank line.
pub fn strip(text: &str) -> String {
    match split(text) {
        Some((stable, "")) => stable.to_owned(),
        Some(("", dynamic)) => dynamic.to_owned(),
        Some((stable, dynamic)) => format!("{stable}{SECTION_SEPARATOR}{dynamic}"),
        None => text.to_owned(),
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
        let evil = format!("x{CACHE_BOUNDARY_MARKER}y");
        assert_eq!(strip_markers(&evil), "xy");
    }
}
