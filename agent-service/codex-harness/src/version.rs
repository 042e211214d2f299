//! The supported Codex range and reading a version from what the binary says.
//!
//! The protocol facts this crate relies on were verified on 0.169.0 and
//! re-checked on 0.171.0 (against each version's generated schema, see codex-peer); the
//! experimental surface (dynamic tools, collaboration mode) and the config
//! keys that switch Codex's own layers off change between minor releases,
//! so anything outside 0.169.x–0.171.x is refused rather than guessed at.

/// The lowest supported `(major, minor)`.
const MIN: (u64, u64) = (0, 169);
/// The highest supported `(major, minor)`.
const MAX: (u64, u64) = (0, 171);

/// The supported range, for messages and the README.
pub const SUPPORTED_RANGE: &str = "0.169.x to 0.171.x";

/// A Codex release number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CodexVersion {
    /// Major.
    pub major: u64,
    /// Minor.
    pub minor: u64,
    /// Patch.
    pub patch: u64,
}

impl std::fmt::Display for CodexVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

impl CodexVersion {
    /// Parses `0.169.0`, also with a pre-release or build suffix
    /// (`0.170.0-alpha.2`).
    pub fn parse(text: &str) -> Option<Self> {
        let core = text.split(['-', '+']).next()?;
        let mut parts = core.split('.');
        let major = parts.next()?.parse().ok()?;
        let minor = parts.next()?.parse().ok()?;
        let patch = parts.next()?.parse().ok()?;
        if parts.next().is_some() {
            return None;
        }
        Some(Self {
            major,
            minor,
            patch,
        })
    }

    /// The version in an `initialize` result's `userAgent`, which starts
    /// with `<clientInfo.name>/<version> (`…, for example
    /// `openclaw/0.169.0 (Debian 12.0.0; x86_64) xterm (openclaw; 0.1.0)`.
    pub fn from_user_agent(user_agent: &str) -> Option<Self> {
        let first = user_agent.split_whitespace().next()?;
        Self::parse(first.rsplit('/').next()?)
    }

    /// The version `codex --version` prints (`codex-cli 0.169.0`).
    pub fn from_version_output(output: &str) -> Option<Self> {
        output.split_whitespace().find_map(Self::parse)
    }

    /// Whether this build drives this release.
    pub fn is_supported(&self) -> bool {
        (MIN..=MAX).contains(&(self.major, self.minor))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse_from_every_place_codex_prints_them() {
        let v = |text: &str| CodexVersion::parse(text).map(|v| v.to_string());
        assert_eq!(v("0.169.0").as_deref(), Some("0.169.0"));
        assert_eq!(v("0.170.0-alpha.2").as_deref(), Some("0.170.0"));
        assert_eq!(v("0.169"), None);
        assert_eq!(v("0.169.0.1"), None);
        assert_eq!(v("x.1.2"), None);
        let agent = "openclaw/0.169.0 (Debian 12.0.0; x86_64) xterm (openclaw; 0.1.0)";
        assert_eq!(
            CodexVersion::from_user_agent(agent).map(|v| v.to_string()),
            Some("0.169.0".to_owned())
        );
        assert_eq!(CodexVersion::from_user_agent("openclaw (weird)"), None);
        assert_eq!(
            CodexVersion::from_version_output("codex-cli 0.171.0\n").map(|v| v.to_string()),
            Some("0.171.0".to_owned())
        );
    }

    #[test]
    fn only_0_169_to_0_171_are_supported() {
        for (text, ok) in [
            ("0.168.9", false),
            ("0.169.0", true),
            ("0.170.3", true),
            ("0.171.99", true),
            ("0.172.0", false),
            ("1.169.0", false),
        ] {
            let version = CodexVersion::parse(text).expect("parses");
            assert_eq!(version.is_supported(), ok, "{text}");
        }
    }
}
