//! Text to validated [`Config`]: decode JSON5, substitute `${VAR}`, validate against the schema,
//! decode into the raw types, check cross-field rules; on failure, locate every problem.

use jsonschema::Validator;
use serde_json::Value;

use crate::checks;
use crate::error::{ConfigError, ConfigErrors, ErrorKind, LocatedError};
use crate::locate::{self, Locator, Target, position_at};
use crate::path::{Segment, dotted};
use crate::raw::RawConfig;
use crate::schema::json_schema;
use crate::substitute::{EnvSource, Resolved, UnresolvedVars, substitute_all};
use crate::validate::{self, Finding};

/// How [`load`] treats the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LoadOptions {
    /// What to do with `${VAR}` references whose variable is unset or empty.
    pub unresolved_vars: UnresolvedVars,
}

/// A validated config: the typed raw shape plus the substituted JSON it came from.
#[derive(Clone, PartialEq)]
pub struct Config {
    pub(crate) raw: RawConfig,
    pub(crate) value: Value,
    /// The `${VAR}` references that were replaced, with their values.
    pub(crate) resolved: Vec<Resolved>,
}

impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The raw config holds substituted values, which may be secrets.
        f.debug_struct("Config")
            .field(
                "resolved_variables",
                &self.resolved.iter().map(|r| &r.name).collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

/// One secret-bearing value of a config: where it came from and what it is.
#[derive(Clone, PartialEq, Eq)]
pub struct SecretValue {
    /// The variable (`ANTHROPIC_API_KEY`) or the dotted path (`models.providers.x.apiKey`).
    pub label: String,
    /// The value.
    pub value: String,
}

impl std::fmt::Debug for SecretValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SecretValue")
            .field("label", &self.label)
            .finish_non_exhaustive()
    }
}

impl Config {
    /// The typed config, exactly as written (no defaults applied).
    pub fn raw(&self) -> &RawConfig {
        &self.raw
    }

    /// The config as JSON after `${VAR}` substitution, keys in file order.
    pub fn value(&self) -> &Value {
        &self.value
    }

    /// The names of the environment variables `${VAR}` references were replaced from.
    pub fn substituted_variables(&self) -> Vec<String> {
        self.resolved.iter().map(|r| r.name.clone()).collect()
    }

    /// Every value that must stay secret: what each `${VAR}` expanded to (whatever field it
    /// sits in), and every string under a key that names a secret (`apiKey`, `token`,
    /// `password`, `secret` and their compounds, any case), labelled by its path.
    pub fn secret_values(&self) -> Vec<SecretValue> {
        let mut out: Vec<SecretValue> = self
            .resolved
            .iter()
            .map(|r| SecretValue {
                label: r.name.clone(),
                value: r.value.clone(),
            })
            .collect();
        collect_secret_fields(&self.value, &mut Vec::new(), &mut out);
        out
    }
}

/// Whether a key names a secret: `apiKey`, `token`, `botToken`, `password`, `clientSecret`...
fn secret_key(key: &str) -> bool {
    let lower = key.to_ascii_lowercase();
    ["apikey", "api_key", "token", "password", "secret"]
        .iter()
        .any(|word| lower.ends_with(word))
}

fn collect_secret_fields(value: &Value, path: &mut Vec<Segment>, out: &mut Vec<SecretValue>) {
    match value {
        Value::Object(map) => {
            for (key, item) in map {
                path.push(Segment::Key(key.clone()));
                match item {
                    Value::String(text) if secret_key(key) && !text.is_empty() => {
                        out.push(SecretValue {
                            label: dotted(path),
                            value: text.clone(),
                        });
                    }
                    other => collect_secret_fields(other, path, out),
                }
                path.pop();
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                path.push(Segment::Index(i));
                collect_secret_fields(item, path, out);
                path.pop();
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => {}
    }
}

/// Parses and validates the JSON5 text of `openclaw.json`, reporting every problem at once.
///
/// `env` supplies `${VAR}` values; pass [`crate::NoEnv`] with [`UnresolvedVars::Keep`] to leave
/// references untouched. Builds the schema validator on each call (a few milliseconds); a
/// service that loads often keeps a [`Loader`] instead.
pub fn load(text: &str, env: &dyn EnvSource, options: &LoadOptions) -> Result<Config, ConfigError> {
    Loader::new()?.load(text, env, options)
}

/// A reusable loader: the generated schema and its compiled validator, built once.
pub struct Loader {
    schema: Value,
    validator: Validator,
}

impl std::fmt::Debug for Loader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Loader").finish_non_exhaustive()
    }
}

impl Loader {
    /// Generates the schema and compiles its validator.
    pub fn new() -> Result<Self, ConfigError> {
        let schema = json_schema();
        let validator = validate::validator(&schema)?;
        Ok(Self { schema, validator })
    }

    /// Same as [`load`], reusing the compiled validator.
    pub fn load(
        &self,
        text: &str,
        env: &dyn EnvSource,
        options: &LoadOptions,
    ) -> Result<Config, ConfigError> {
        // Editors do not show a byte-order mark, so columns are counted without it.
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let mut document = parse_json5(text)?;
        let substitution = substitute_all(&mut document, env, options.unresolved_vars);
        let unresolved = substitution.unresolved;
        let resolved = substitution.resolved;

        let mut findings = validate::findings(&self.validator, &self.schema, &document);
        findings.extend(checks::check(&document));
        let mut raw = None;
        if findings.is_empty() {
            // The schema is generated from the same types, so decoding is expected to succeed;
            // the few gaps (an integer written as 20000.0, a number too large for u64) still get
            // a path.
            match serde_path_to_error::deserialize::<_, RawConfig>(&document) {
                Ok(decoded) => raw = Some(decoded),
                Err(error) => findings.push(Finding {
                    path: serde_path(error.path()),
                    target: Target::Value,
                    kind: ErrorKind::WrongType,
                    message: error.inner().to_string(),
                }),
            }
        }
        findings.extend(unresolved.into_iter().map(|u| Finding {
            path: u.path,
            target: Target::Value,
            kind: ErrorKind::UnresolvedVariable,
            message: format!(
                "environment variable {} is unset or empty (written as ${{{}}})",
                u.name, u.name
            ),
        }));

        match raw {
            Some(raw) if findings.is_empty() => Ok(Config {
                raw,
                value: document,
                resolved,
            }),
            _ => {
                // A message may quote the offending value ("unknown variant `...`"); a value
                // that came from a variable is shown as the reference the file has instead.
                for finding in &mut findings {
                    // A field that holds a secret never has its value quoted.
                    if let Some(Segment::Key(key)) = finding.path.last()
                        && secret_key(key)
                        && finding.kind != ErrorKind::UnresolvedVariable
                    {
                        finding.message = "the value is not valid here (it is not shown: this \
                                           field holds a secret)"
                            .to_owned();
                        continue;
                    }
                    for r in &resolved {
                        if r.value.chars().count() >= 4 && finding.message.contains(&r.value) {
                            finding.message = finding
                                .message
                                .replace(&r.value, &format!("${{{}}}", r.name));
                        }
                    }
                }
                Err(ConfigError::Invalid(locate_all(text, findings)))
            }
        }
    }
}

fn locate_all(text: &str, findings: Vec<Finding>) -> ConfigErrors {
    let blanked = locate::blank_comments(text);
    let locator = Locator::new(text, &blanked);
    ConfigErrors::new(
        findings
            .into_iter()
            .map(|f| LocatedError {
                position: locator.locate(&f.path, f.target),
                path: dotted(&f.path),
                kind: f.kind,
                message: f.message,
            })
            .collect(),
    )
}

/// How deeply arrays and objects may nest in a config text. Real configs stay under ten
/// levels; the JSON5 parser and the validator recurse per level, and a few thousand levels
/// overflow a thread's stack, which aborts the whole process (found by the fuzz tests).
pub const MAX_NESTING: usize = 64;

/// Parses JSON5 text into JSON, refusing nesting deeper than [`MAX_NESTING`] before the
/// parser sees it. Errors are located like the loader's. For any JSON5 that comes from
/// outside (a config file, an RPC field, an agent's tool call).
pub fn parse_json5(text: &str) -> Result<Value, ConfigError> {
    if let Some(at) = too_deep(text) {
        return Err(ConfigError::Invalid(ConfigErrors::new(vec![
            LocatedError {
                path: String::new(),
                position: Some(position_at(text, at)),
                kind: ErrorKind::Syntax,
                message: format!("invalid JSON5: nested deeper than {MAX_NESTING} levels"),
            },
        ])));
    }
    json5::from_str(text).map_err(|e| syntax_error(text, &e))
}

/// The byte offset of the first `[` or `{` deeper than [`MAX_NESTING`], outside strings and
/// comments; `None` when the text stays within the limit. Malformed text is scanned on a
/// best-effort basis: the parser reports what is wrong with it.
fn too_deep(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut depth = 0_usize;
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Some(i);
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            b'"' | b'\'' => {
                // A string: up to the same quote, skipping escaped characters.
                i += 1;
                while let Some(&c) = bytes.get(i) {
                    match c {
                        b'\\' => i += 1,
                        c if c == b => break,
                        _ => {}
                    }
                    i += 1;
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while bytes.get(i).is_some_and(|&c| c != b'\n') {
                    i += 1;
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i += 2;
                while bytes.get(i).is_some() && !bytes[i..].starts_with(b"*/") {
                    i += 1;
                }
                i += 1;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

fn syntax_error(text: &str, error: &json5::Error) -> ConfigError {
    let position = error.position().map(|p| {
        // json5 positions are 0-based; ours are 1-based.
        crate::error::Position {
            line: p.line + 1,
            column: p.column + 1,
        }
    });
    let detail = match (error.code(), error.position()) {
        (Some(code), _) => code.to_string(),
        (None, Some(p)) => {
            let full = error.to_string();
            full.strip_suffix(&format!(" at {p}"))
                .map_or(full.clone(), str::to_owned)
        }
        (None, None) => error.to_string(),
    };
    ConfigError::Invalid(ConfigErrors::new(vec![LocatedError {
        path: String::new(),
        position: position.or_else(|| Some(position_at(text, text.len()))),
        kind: ErrorKind::Syntax,
        message: format!("invalid JSON5: {detail}"),
    }]))
}

fn serde_path(path: &serde_path_to_error::Path) -> Vec<Segment> {
    path.iter()
        .filter_map(|segment| match segment {
            serde_path_to_error::Segment::Seq { index } => Some(Segment::Index(*index)),
            serde_path_to_error::Segment::Map { key } => Some(Segment::Key(key.clone())),
            serde_path_to_error::Segment::Enum { .. } | serde_path_to_error::Segment::Unknown => {
                None
            }
        })
        .collect()
}
