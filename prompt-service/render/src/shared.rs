//! Immutable text and reports shared between the memoised stable block and
//! every [`crate::Rendered`] built from it, so a per-turn render hands out
//! the ~35 KB stable prefix and its reports without copying them.

use std::{fmt, ops::Deref, sync::Arc};

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
