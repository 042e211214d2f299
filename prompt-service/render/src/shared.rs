//! Immutable text and reports shared between the memoised stable block and
//! every [`crate::Rendered`] built from it, so a per-turn render hands out
//! the ~35 KB stable prefix and its reports without copying them.

use std::{
    fmt,
    ops::Deref,
    sync::{Arc, OnceLock},
};

use crate::render::SectionReport;

/// An immutable, cheaply cloned string: the stable prefix of a prompt.
/// Reads like a `&str` (it derefs to one) and compares equal to string types.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct SharedStr(Arc<str>);

impl SharedStr {
    /// The text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Deref for SharedStr {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for SharedStr {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl From<String> for SharedStr {
    fn from(s: String) -> Self {
        Self(Arc::from(s))
    }
}

impl From<&str> for SharedStr {
    fn from(s: &str) -> Self {
        Self(Arc::from(s))
    }
}

impl From<SharedStr> for String {
    fn from(s: SharedStr) -> Self {
        s.as_str().to_owned()
    }
}

impl fmt::Debug for SharedStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for SharedStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<str> for SharedStr {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for SharedStr {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<String> for SharedStr {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == other
    }
}

/// A whole prompt: the shared stable prefix, then the rest (the boundary
/// marker and the dynamic suffix). It reads as one `&str` (it derefs to
/// one), joined on the first such read; a caller that can take the prompt
/// in parts ([`PromptText::parts`]), as the RPC reply does, never pays for
/// copying the ~35 KB prefix into a new string.
#[derive(Clone, Default)]
pub struct PromptText {
    prefix: SharedStr,
    rest: String,
    joined: OnceLock<String>,
}

impl PromptText {
    pub(crate) fn new(prefix: SharedStr, rest: String) -> Self {
        Self {
            prefix,
            rest,
            joined: OnceLock::new(),
        }
    }

    /// The text, joined into one string on the first call.
    pub fn as_str(&self) -> &str {
        if self.rest.is_empty() {
            return self.prefix.as_str();
        }
        self.joined
            .get_or_init(|| [self.prefix.as_str(), self.rest.as_str()].concat())
    }

    /// The text in order, in two parts, without joining them.
    pub fn parts(&self) -> [&str; 2] {
        [self.prefix.as_str(), self.rest.as_str()]
    }

    /// Bytes of the text.
    pub fn len(&self) -> usize {
        self.prefix.len() + self.rest.len()
    }

    /// True when the text is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The text as an owned string.
    pub fn into_string(self) -> String {
        match self.joined.into_inner() {
            Some(joined) => joined,
            None => [self.prefix.as_str(), self.rest.as_str()].concat(),
        }
    }
}

impl Deref for PromptText {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for PromptText {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl From<PromptText> for String {
    fn from(text: PromptText) -> Self {
        text.into_string()
    }
}

impl PartialEq for PromptText {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.as_str() == other.as_str()
    }
}

impl Eq for PromptText {}

impl PartialEq<str> for PromptText {
    fn eq(&self, other: &str) -> bool {
        self.len() == other.len() && self.as_str() == other
    }
}

impl PartialEq<&str> for PromptText {
    fn eq(&self, other: &&str) -> bool {
        self == *other
    }
}

impl PartialEq<String> for PromptText {
    fn eq(&self, other: &String) -> bool {
        self == other.as_str()
    }
}

impl PartialEq<PromptText> for String {
    fn eq(&self, other: &PromptText) -> bool {
        other == self
    }
}

impl PartialEq<PromptText> for &str {
    fn eq(&self, other: &PromptText) -> bool {
        other == *self
    }
}

impl fmt::Debug for PromptText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for PromptText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for part in self.parts() {
            f.write_str(part)?;
        }
        Ok(())
    }
}

/// The sections of a prompt in output order: the stable ones (shared with
/// the memoised block) followed by this turn's dynamic ones.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Sections {
    stable: Arc<[SectionReport]>,
    dynamic: Vec<SectionReport>,
}

impl Sections {
    pub(crate) fn new(stable: Arc<[SectionReport]>, dynamic: Vec<SectionReport>) -> Self {
        Self { stable, dynamic }
    }

    /// Every section, in output order.
    pub fn iter(
        &self,
    ) -> std::iter::Chain<std::slice::Iter<'_, SectionReport>, std::slice::Iter<'_, SectionReport>>
    {
        self.stable.iter().chain(self.dynamic.iter())
    }

    /// Sections above the boundary.
    pub fn stable(&self) -> &[SectionReport] {
        &self.stable
    }

    /// Sections below the boundary.
    pub fn dynamic(&self) -> &[SectionReport] {
        &self.dynamic
    }

    /// The sections below the boundary, owned.
    pub fn into_dynamic(self) -> Vec<SectionReport> {
        self.dynamic
    }

    /// Number of sections.
    pub fn len(&self) -> usize {
        self.stable.len() + self.dynamic.len()
    }

    /// True when there are no sections.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<'a> IntoIterator for &'a Sections {
    type Item = &'a SectionReport;
    type IntoIter =
        std::iter::Chain<std::slice::Iter<'a, SectionReport>, std::slice::Iter<'a, SectionReport>>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prompt_text_reads_as_its_parts_joined() {
        let text = PromptText::new(SharedStr::from("stable"), "\n\nrest".to_owned());
        assert_eq!(text.parts(), ["stable", "\n\nrest"]);
        assert_eq!(text.len(), 12);
        assert_eq!(text, "stable\n\nrest");
        assert_eq!(&text[6..], "\n\nrest");
        assert_ne!(
            text,
            PromptText::new(SharedStr::from("stable\n\n"), "rust".into())
        );
        assert_eq!(text.to_string(), "stable\n\nrest");
        assert_eq!(text.clone().into_string(), "stable\n\nrest");
        let prefix_only = PromptText::new(SharedStr::from("only"), String::new());
        assert_eq!(prefix_only.as_str(), "only");
        assert_eq!(prefix_only.into_string(), "only");
    }
}
