//! The pinned Codex model-prompt fixture (P-29, P-30).
//!
//! Codex renders a model's instructions from its model catalog
//! (`models_cache.json`, or the `models.json` checked into Codex's source;
//! both hold a `models` array of the same shape): the entry's `model_messages.instructions_template`
//! with `{{ personality }}` replaced by the `personality_<name>` variable, or
//! `base_instructions` when there is no template. The fixture is that text
//! plus a small JSON note of where it came from. The committed fixture is
//! made from a catalog we wrote ourselves (tests/fixtures), never from
//! OpenAI's prompt text.

use serde_json::Value;

use crate::{error::CodexError, json::object};

/// The model whose instructions are pinned.
pub const MODEL_FIXTURE_MODEL: &str = "gpt-5.5";
/// The personality variable used to render them.
pub const MODEL_FIXTURE_PERSONALITY: &str = "pragmatic";

/// Where a catalog came from, as recorded in the fixture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogSource {
    /// Path as it should be shown (`$CODEX_HOME/models_cache.json`, or a
    /// workspace-relative path), never a machine-specific absolute path
    /// when avoidable.
    pub path: String,
    /// `models_cache` for Codex's cache, `checked_in_catalog` for a catalog
    /// checked into a repository: ours, or Codex's `models.json`.
    pub kind: &'static str,
}

/// The rendered model instructions and their provenance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelFixture {
    /// Model slug.
    pub model: String,
    /// Personality variable used.
    pub personality: String,
    /// The rendered instructions.
    pub instructions: String,
    /// Where they came from.
    pub source: CatalogSource,
    /// The catalog field the text came from.
    pub field: String,
}

fn catalog_error(reason: impl Into<String>) -> CodexError {
    CodexError::Catalog(reason.into())
}

impl ModelFixture {
    /// File name of the instructions text.
    pub fn instructions_file_name() -> String {
        format!("{MODEL_FIXTURE_MODEL}.{MODEL_FIXTURE_PERSONALITY}.instructions.md")
    }

    /// File name of the provenance note.
    pub fn source_file_name() -> String {
        format!("{MODEL_FIXTURE_MODEL}.{MODEL_FIXTURE_PERSONALITY}.source.json")
    }

    /// Renders the pinned model's instructions from a catalog's JSON text.
    pub fn from_catalog(catalog_json: &str, source: CatalogSource) -> Result<Self, CodexError> {
        let catalog: Value = serde_json::from_str(catalog_json)
            .map_err(|e| catalog_error(format!("{}: not valid JSON: {e}", source.path)))?;
        let models = catalog
            .get("models")
            .and_then(Value::as_array)
            .ok_or_else(|| catalog_error(format!("{}: no \"models\" array", source.path)))?;
        let entry = models
            .iter()
            .find(|m| m.get("slug").and_then(Value::as_str) == Some(MODEL_FIXTURE_MODEL))
            .ok_or_else(|| {
                catalog_error(format!(
                    "{}: no model with slug {MODEL_FIXTURE_MODEL:?}",
                    source.path
                ))
            })?;
        let messages = entry.get("model_messages");
        let template = messages
            .and_then(|m| m.get("instructions_template"))
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty());
        let (instructions, field) = match template {
            Some(template) => {
                let key = format!("personality_{MODEL_FIXTURE_PERSONALITY}");
                // Variables sit under model_messages; some catalogs keep them on the entry.
                let variable = [messages, Some(entry)]
                    .into_iter()
                    .flatten()
                    .find_map(|m| m.get("instructions_variables")?.get(&key)?.as_str())
                    .unwrap_or("");
                let text = template
                    .replace("{{ personality }}", variable)
                    .replace("{{personality}}", variable);
                (text, "model_messages.instructions_template")
            }
            None => {
                let base = entry
                    .get("base_instructions")
                    .and_then(Value::as_str)
                    .ok_or_else(|| {
                        catalog_error(format!(
                            "{}: model {MODEL_FIXTURE_MODEL:?} has neither an instructions template nor base_instructions",
                            source.path
                        ))
                    })?;
                (base.to_owned(), "base_instructions")
            }
        };
        Ok(Self {
            model: MODEL_FIXTURE_MODEL.to_owned(),
            personality: MODEL_FIXTURE_PERSONALITY.to_owned(),
            instructions,
            source,
            field: field.to_owned(),
        })
    }

    /// The instructions file's content.
    pub fn instructions_file(&self) -> String {
        format!("{}\n", self.instructions.trim_end_matches('\n'))
    }

    /// The provenance note's content (sorted keys).
    pub fn source_file(&self) -> String {
        let note = object(vec![
            ("model", Value::String(self.model.clone())),
            ("personality", Value::String(self.personality.clone())),
            (
                "source",
                object(vec![
                    ("catalogKind", Value::String(self.source.kind.to_owned())),
                    ("catalogPath", Value::String(self.source.path.clone())),
                    ("field", Value::String(self.field.clone())),
                ]),
            ),
        ]);
        format!(
            "{}\n",
            serde_json::to_string_pretty(&note).unwrap_or_default()
        )
    }

    /// Reads a fixture back from its two files.
    pub fn from_files(instructions: &str, source_json: &str) -> Result<Self, CodexError> {
        let note: Value = serde_json::from_str(source_json)
            .map_err(|e| catalog_error(format!("fixture source note: {e}")))?;
        let text = |pointer: &str| {
            note.pointer(pointer)
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or_else(|| catalog_error(format!("fixture source note lacks {pointer}")))
        };
        let kind = match text("/source/catalogKind")?.as_str() {
            "models_cache" => "models_cache",
            "checked_in_catalog" => "checked_in_catalog",
            other => return Err(catalog_error(format!("unknown catalogKind {other:?}"))),
        };
        Ok(Self {
            model: text("/model")?,
            personality: text("/personality")?,
            instructions: instructions.trim_end_matches('\n').to_owned(),
            source: CatalogSource {
                path: text("/source/catalogPath")?,
                kind,
            },
            field: text("/source/field")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source() -> CatalogSource {
        CatalogSource {
            path: "catalog.json".to_owned(),
            kind: "checked_in_catalog",
        }
    }

    #[test]
    fn the_template_gets_the_personality_variable() {
        let catalog = r#"{"models": [
            {"slug": "other", "base_instructions": "no"},
            {"slug": "gpt-5.5", "base_instructions": "fallback",
             "model_messages": {"instructions_template": "A\n{{ personality }}\nB",
               "instructions_variables": {"personality_pragmatic": "P", "personality_friendly": "F"}}}
        ]}"#;
        let f = ModelFixture::from_catalog(catalog, source()).expect("fixture");
        assert_eq!(f.instructions, "A\nP\nB");
        assert_eq!(f.field, "model_messages.instructions_template");
        let back =
            ModelFixture::from_files(&f.instructions_file(), &f.source_file()).expect("parse");
        assert_eq!(back, f);
    }

    #[test]
    fn base_instructions_are_the_fallback_and_gaps_are_errors() {
        let only_base = r#"{"models": [{"slug": "gpt-5.5", "base_instructions": "Base."}]}"#;
        let f = ModelFixture::from_catalog(only_base, source()).expect("fixture");
        assert_eq!(
            (f.instructions.as_str(), f.field.as_str()),
            ("Base.", "base_instructions")
        );
        for bad in [
            "{",
            r#"{"models": []}"#,
            r#"{"models": [{"slug": "gpt-5.5"}]}"#,
        ] {
            assert!(ModelFixture::from_catalog(bad, source()).is_err(), "{bad}");
        }
    }
}
