//! The `<available_skills>` listing (P-37, P-39, lesson L6).
//!
//! Skills are sorted by name, each carries a content version, and when the
//! listing does not fit its budget it degrades to a compact form and then to
//! fewer skills — with the omitted names reported, never dropped silently.

use std::collections::BTreeMap;

use crate::{
    error::RenderError,
    input::{Skill, SkillVersionSource, SkillsLimits},
    text::{self, xml_escape},
};

/// Default most skills listed (`skills.limits.maxSkillsInPrompt`).
pub const DEFAULT_MAX_SKILLS: usize = 150;
/// Default most characters (`skills.limits.maxSkillsPromptChars`).
pub const DEFAULT_MAX_CHARS: usize = 18_000;

/// A validated skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreparedSkill {
    /// Flat name.
    pub name: String,
    /// Description (single line).
    pub description: String,
    /// SKILL.md location.
    pub location: String,
    /// `sha256:` + 16 hex chars.
    pub version: String,
}

/// The listing and its report.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Listing {
    /// Note lines (if any) plus the catalog; empty when no skills.
    pub block: String,
    /// Skills offered.
    pub offered: usize,
    /// Listed skills with their version and block size.
    pub entries: Vec<(String, String, u32)>,
    /// Names left out, sorted.
    pub omitted: Vec<String>,
    /// The compact form (one line per skill, no description or version)
    /// was used to fit.
    pub compact: bool,
}

/// A skill's version (P-37), derived from the skill file's path and
/// content: `sha256:` and the first 16 hex digits of SHA-256 over the
/// location as listed (after one-line normalisation), a NUL byte and the
/// 32-byte SHA-256 digest of the SKILL.md bytes. A moved skill gets a new
/// version as surely as an edited one. The location holds no NUL (control
/// characters become spaces), so no two (path, content) pairs share an input.
pub fn version_tag(location: &str, source: &SkillVersionSource) -> String {
    use sha2::{Digest, Sha256};
    let content: [u8; 32] = match source {
        SkillVersionSource::Content(bytes) => Sha256::digest(bytes).into(),
        SkillVersionSource::Sha256(hex) => {
            let mut digest = [0u8; 32];
            // Validated in `prepare` (64 hex chars); a bad one hashes as zeros.
            if hex::decode_to_slice(hex, &mut digest).is_err() {
                digest = [0u8; 32];
            }
            digest
        }
    };
    let mut hasher = Sha256::new();
    hasher.update(text::one_line(location).as_bytes());
    hasher.update([0u8]);
    hasher.update(content);
    let hex = text::sha256_hex_of_digest(&hasher.finalize());
    format!("sha256:{}", &hex[..16])
}

/// Validates and sorts the skills.
pub fn prepare(skills: &[Skill]) -> Result<Vec<PreparedSkill>, RenderError> {
    let mut seen = BTreeMap::new();
    let mut out = Vec::with_capacity(skills.len());
    for (i, skill) in skills.iter().enumerate() {
        let name = text::one_line(&skill.name);
        if name.is_empty() {
            return Err(RenderError::invalid(
                format!("skills[{i}].name"),
                "must not be empty",
            ));
        }
        if let Some(first) = seen.insert(name.clone(), i) {
            return Err(RenderError::invalid(
                format!("skills[{i}].name"),
                format!("duplicate skill name {name:?} (same as skills[{first}])"),
            ));
        }
        if text::one_line(&skill.location).is_empty() {
            return Err(RenderError::invalid(
                format!("skills[{i}].location"),
                "must not be empty",
            ));
        }
        if let SkillVersionSource::Sha256(hex) = &skill.version_source
            && (hex.len() != 64 || !hex.chars().all(|c| c.is_ascii_hexdigit()))
        {
            return Err(RenderError::invalid(
                format!("skills[{i}].content_sha256"),
                "must be 64 hex characters",
            ));
        }
        out.push(PreparedSkill {
            name,
            description: text::one_line(&skill.description),
            location: text::one_line(&skill.location),
            version: version_tag(&skill.location, &skill.version_source),
        });
    }
    // Explicit total order: by name (names are unique).
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

fn skill_block(skill: &PreparedSkill, compact: bool) -> String {
    if compact {
        // One line, name and location only: the form that fits the most
        // skills when the full listing is over budget.
        return format!(
            "  <skill name=\"{}\" location=\"{}\"/>",
            xml_escape(&skill.name),
            xml_escape(&skill.location)
        );
    }
    let mut block = String::from("  <skill>\n");
    block.push_str(&format!("    <name>{}</name>\n", xml_escape(&skill.name)));
    if !skill.description.is_empty() {
        block.push_str(&format!(
            "    <description>{}</description>\n",
            xml_escape(&skill.description)
        ));
    }
    block.push_str(&format!(
        "    <location>{}</location>\n",
        xml_escape(&skill.location)
    ));
    block.push_str(&format!(
        "    <version>{}</version>\n",
        xml_escape(&skill.version)
    ));
    block.push_str("  </skill>");
    block
}

/// The note over a shortened listing. Every omitted skill is named: a
/// skill the model never hears of cannot be asked for.
fn note(listed: usize, offered: usize, compact: bool, omitted: &[String]) -> Option<String> {
    if omitted.is_empty() && !compact {
        return None;
    }
    let mut line = format!(
        "Note: the skills list was shortened to fit the prompt budget ({listed} of {offered} listed"
    );
    if compact {
        line.push_str(
            ", without descriptions or versions: read a skill's SKILL.md before using it",
        );
    }
    line.push(')');
    if !omitted.is_empty() {
        line.push_str(&format!(". Not listed: {}", omitted.join(", ")));
    }
    line.push('.');
    Some(line)
}

fn render(
    skills: &[PreparedSkill],
    offered: usize,
    compact: bool,
    omitted: &[String],
) -> (String, Vec<(String, String, u32)>) {
    let mut entries = Vec::with_capacity(skills.len());
    let mut lines = Vec::with_capacity(skills.len() + 3);
    if let Some(note) = note(skills.len(), offered, compact, omitted) {
        lines.push(note);
    }
    lines.push("<available_skills>".to_owned());
    for skill in skills {
        let block = skill_block(skill, compact);
        entries.push((
            skill.name.clone(),
            skill.version.clone(),
            text::chars_u32(&block),
        ));
        lines.push(block);
    }
    lines.push("</available_skills>".to_owned());
    (lines.join("\n"), entries)
}

/// Builds the listing within the limits: full form, else compact form, else
/// the largest prefix of skills (in name order) whose compact form fits.
pub fn listing(skills: &[PreparedSkill], limits: SkillsLimits) -> Listing {
    if skills.is_empty() {
        return Listing::default();
    }
    let max_skills = match limits.max_skills {
        0 => DEFAULT_MAX_SKILLS,
        n => n as usize,
    };
    let max_chars = match limits.max_chars {
        0 => DEFAULT_MAX_CHARS,
        n => n as usize,
    };
    let offered = skills.len();
    let take = max_skills.min(offered);
    let omitted_of = |n: usize| {
        skills[n..]
            .iter()
            .map(|s| s.name.clone())
            .collect::<Vec<_>>()
    };

    let omitted = omitted_of(take);
    let (block, entries) = render(&skills[..take], offered, false, &omitted);
    if text::chars(&block) <= max_chars {
        return Listing {
            block,
            offered,
            entries,
            omitted,
            compact: false,
        };
    }
    // Binary search the largest count whose compact rendering fits.
    let fits =
        |n: usize| text::chars(&render(&skills[..n], offered, true, &omitted_of(n)).0) <= max_chars;
    let (mut lo, mut hi) = (0usize, take);
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if fits(mid) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    let omitted = omitted_of(lo);
    let (block, entries) = render(&skills[..lo], offered, true, &omitted);
    Listing {
        block,
        offered,
        entries,
        omitted,
        compact: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skill(name: &str, desc: &str) -> Skill {
        Skill {
            name: name.into(),
            description: desc.into(),
            location: format!("/skills/{name}/SKILL.md"),
            version_source: SkillVersionSource::Content(format!("# {name}").into_bytes()),
        }
    }

    /// P-37: the version follows the path and the content.
    #[test]
    fn version_is_derived_from_path_and_content() {
        use sha2::{Digest, Sha256};
        let mut input = b"/skills/a/SKILL.md\0".to_vec();
        input.extend_from_slice(&Sha256::digest(b"abc"));
        let expected = format!("sha256:{}", &hex::encode(Sha256::digest(&input))[..16]);
        let content = SkillVersionSource::Content(b"abc".to_vec());
        assert_eq!(version_tag("/skills/a/SKILL.md", &content), expected);
        // A precomputed content digest gives the same version.
        let digest = SkillVersionSource::Sha256(hex::encode(Sha256::digest(b"abc")));
        assert_eq!(version_tag("/skills/a/SKILL.md", &digest), expected);
        // Another path or another content: another version.
        assert_ne!(version_tag("/skills/b/SKILL.md", &content), expected);
        let edited = SkillVersionSource::Content(b"abd".to_vec());
        assert_ne!(version_tag("/skills/a/SKILL.md", &edited), expected);
    }

    #[test]
    fn sorted_escaped_and_versioned() {
        let prepared =
            prepare(&[skill("zed", "a <b> & 'c'"), skill("alpha", "first")]).unwrap_or_default();
        let l = listing(&prepared, SkillsLimits::default());
        assert!(l.block.find("<name>alpha</name>") < l.block.find("<name>zed</name>"));
        assert!(
            l.block
                .contains("<description>a &lt;b&gt; &amp; &apos;c&apos;</description>")
        );
        assert!(l.block.contains("<version>sha256:"));
        assert!(l.omitted.is_empty() && !l.compact);
    }

    #[test]
    fn over_budget_goes_compact_then_drops_and_reports_names() {
        let skills: Vec<_> = (0..40)
            .map(|i| skill(&format!("skill-{i:02}"), &"d".repeat(200)))
            .collect();
        let prepared = prepare(&skills).unwrap_or_default();
        let compact = listing(
            &prepared,
            SkillsLimits {
                max_skills: 0,
                max_chars: 6_000,
            },
        );
        assert!(compact.compact);
        assert!(compact.omitted.is_empty(), "{:?}", compact.omitted);
        assert!(text::chars(&compact.block) <= 6_000);

        let dropped = listing(
            &prepared,
            SkillsLimits {
                max_skills: 0,
                max_chars: 2_000,
            },
        );
        assert!(text::chars(&dropped.block) <= 2_000);
        assert!(!dropped.omitted.is_empty());
        assert_eq!(dropped.entries.len() + dropped.omitted.len(), 40);
        assert!(dropped.block.contains("Not listed: skill-"));
    }

    #[test]
    fn max_skills_cap_reports_the_rest() {
        let prepared =
            prepare(&[skill("a", ""), skill("b", ""), skill("c", "")]).unwrap_or_default();
        let l = listing(
            &prepared,
            SkillsLimits {
                max_skills: 2,
                max_chars: 0,
            },
        );
        assert_eq!(l.omitted, vec!["c".to_owned()]);
        assert!(l.block.starts_with("Note: the skills list was shortened"));
    }

    #[test]
    fn duplicates_and_bad_hashes_are_refused() {
        let err = prepare(&[skill("a", ""), skill("a", "")]).err();
        assert_eq!(err.as_ref().map(RenderError::field), Some("skills[1].name"));
        let mut bad = skill("b", "");
        bad.version_source = SkillVersionSource::Sha256("xyz".into());
        let err = prepare(&[bad]).err();
        assert_eq!(
            err.as_ref().map(RenderError::field),
            Some("skills[0].content_sha256")
        );
    }
}
