//! The crate's error type and the located problems it carries.

use std::fmt;

/// A place in the config text: 1-based line and 1-based column.
///
/// Columns count characters (Unicode scalar values), not bytes, and a CRLF pair ends one line,
/// the same rules the JSON5 decoder uses for its own syntax errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Position {
    /// 1-based line number.
    pub line: usize,
    /// 1-based column number, in characters.
    pub column: usize,
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}, column {}", self.line, self.column)
    }
}

/// What kind of problem a [`LocatedError`] describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// The text is not valid JSON5.
    Syntax,
    /// An object holds a key the schema does not know.
    UnknownKey,
    /// A value has the wrong JSON type (a string where an integer belongs, ...).
    WrongType,
    /// A value has the right type but is not allowed (not one of an enum's values, out of range,
    /// a malformed duration or model reference, a duplicate agent id, ...).
    InvalidValue,
    /// A required key is absent.
    MissingKey,
    /// A `${VAR}` reference names an environment variable that is unset or empty.
    UnresolvedVariable,
}

/// One problem in a config text: where it is and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LocatedError {
    /// Dotted JSON path of the offending value or key, e.g. `agents.list[1].workspace`.
    /// Empty for the document itself (syntax errors, a non-object root).
    pub path: String,
    /// Where the offending value (or key, for unknown keys) starts; `None` only when the text
    /// could not be mapped back (never expected, kept so a mapping gap cannot hide an error).
    pub position: Option<Position>,
    /// The category, for callers that branch on it.
    pub kind: ErrorKind,
    /// A human sentence without the path or position, e.g. `expected an integer, found "lots"`.
    pub message: String,
}

impl fmt::Display for LocatedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.path.is_empty(), self.position) {
            (false, Some(pos)) => write!(f, "{} ({pos}): {}", self.path, self.message),
            (false, None) => write!(f, "{}: {}", self.path, self.message),
            (true, Some(pos)) => write!(f, "{pos}: {}", self.message),
            (true, None) => write!(f, "{}", self.message),
        }
    }
}

/// Every problem found in one config text, ordered by position in the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigErrors {
    errors: Vec<LocatedError>,
}

impl ConfigErrors {
    /// Wraps a list, sorting it by position (then path) so output is stable; errors without a
    /// position go last.
    pub fn new(mut errors: Vec<LocatedError>) -> Self {
        errors.sort_by(|a, b| {
            let key = |e: &LocatedError| (e.position.is_none(), e.position, e.path.clone());
            key(a).cmp(&key(b))
        });
        errors.dedup();
        Self { errors }
    }

    /// The errors, in order.
    pub fn as_slice(&self) -> &[LocatedError] {
        &self.errors
    }

    /// Iterates over the errors in order.
    pub fn iter(&self) -> std::slice::Iter<'_, LocatedError> {
        self.errors.iter()
    }

    /// How many errors there are.
    pub fn len(&self) -> usize {
        self.errors.len()
    }

    /// True when there are none (never the case inside a [`ConfigError::Invalid`]).
    pub fn is_empty(&self) -> bool {
        self.errors.is_empty()
    }

    /// Takes the errors out.
    pub fn into_vec(self) -> Vec<LocatedError> {
        self.errors
    }
}

impl<'a> IntoIterator for &'a ConfigErrors {
    type Item = &'a LocatedError;
    type IntoIter = std::slice::Iter<'a, LocatedError>;

    fn into_iter(self) -> Self::IntoIter {
        self.errors.iter()
    }
}

impl fmt::Display for ConfigErrors {
    /// One error per line, no trailing newline.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, error) in self.errors.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{error}")?;
        }
        Ok(())
    }
}

/// Everything that can go wrong in this crate.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The config text has one or more problems; all of them are listed.
    #[error("{0}")]
    Invalid(ConfigErrors),
    /// A duration string such as `"30m"` could not be parsed.
    #[error("invalid duration {input:?}: {reason}")]
    Duration {
        /// The text as given.
        input: String,
        /// Why it was refused.
        reason: String,
    },
    /// A model reference could not be parsed or resolved.
    #[error("invalid model reference {input:?}: {reason}")]
    ModelRef {
        /// The reference as given.
        input: String,
        /// Why it was refused.
        reason: String,
    },
    /// An agent id that `agents.list` does not contain.
    #[error("no agent with id {0:?} in agents.list")]
    UnknownAgent(String),
    /// The schema generated from our own types was refused by the validator: a bug in this
    /// crate, reported instead of panicking.
    #[error("internal error: the generated config schema is unusable: {0}")]
    Schema(String),
}

impl ConfigError {
    /// The located errors when this is [`ConfigError::Invalid`], else an empty slice.
    pub fn located(&self) -> &[LocatedError] {
        match self {
            ConfigError::Invalid(errors) => errors.as_slice(),
            ConfigError::Duration { .. }
            | ConfigError::ModelRef { .. }
            | ConfigError::UnknownAgent(_)
            | ConfigError::Schema(_) => &[],
        }
    }
}
