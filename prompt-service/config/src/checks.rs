//! Rules the schema cannot express: cross-field and cross-entry constraints, and string formats
//! (durations, model references, agent ids).
//!
//! They read the JSON document rather than the typed config so that they run even when the
//! schema found problems elsewhere: every error is reported in one pass. A value of the wrong
//! type is skipped here, since the schema already reports it.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::duration::parse_duration;
use crate::error::{ConfigError, ErrorKind};
use crate::locate::Target;
use crate::model_ref::{ModelRef, normalize_provider, split_auth_profile};
use crate::path::Segment;
use crate::validate::Finding;

/// Longest agent id accepted; ids become directory names.
const MAX_AGENT_ID_LEN: usize = 64;

/// Every rule violation in `document`.
pub(crate) fn check(document: &Value) -> Vec<Finding> {
    let mut out = Findings::default();
    let defaults = Node::root(document).at(&["agents", "defaults"]);
    out.duration(&defaults.at(&["heartbeat", "every"]));
    for field in [&["model"][..], &["imageModel"], &["subagents", "model"]] {
        out.model_selection(&defaults.at(field));
    }
    out.min_max(
        &defaults.at(&["blockStreamingChunk"]),
        "minChars",
        "maxChars",
    );
    out.min_max(
        &defaults.at(&["blockStreamingCoalesce"]),
        "minChars",
        "maxChars",
    );
    out.min_max(&defaults.at(&["humanDelay"]), "minMs", "maxMs");
    out.model_entries(&defaults.at(&["models"]));
    out.memory_search(&defaults.at(&["memorySearch"]), None);
    out.absolute_folder(&defaults.at(&["docsPath"]));
    for (_, entry) in Node::root(document).at(&["plugins", "entries"]).entries() {
        out.absolute_folder(&entry.at(&["skills"]));
    }

    let mut seen_ids: BTreeMap<String, usize> = BTreeMap::new();
    for (i, agent) in Node::root(document).at(&["agents", "list"]).elements() {
        out.agent_id(&agent.at(&["id"]), i, &mut seen_ids);
        out.duration(&agent.at(&["heartbeat", "every"]));
        out.model_selection(&agent.at(&["model"]));
        out.model_selection(&agent.at(&["subagents", "model"]));
        out.memory_search(
            &agent.at(&["memorySearch"]),
            Some(&defaults.at(&["memorySearch"])),
        );
        let runtime = agent.at(&["runtime"]);
        let codex = runtime.at(&["codex"]);
        if codex.value.is_some()
            && runtime.at(&["type"]).value.and_then(Value::as_str) == Some("embedded")
        {
            out.push(
                &codex,
                ErrorKind::InvalidValue,
                "codex settings need runtime type \"codex\"".to_owned(),
            );
        }
    }

    let tools = Node::root(document).at(&["tools"]);
    for key in ["exec", "bash"] {
        out.safe_bin_profiles(&tools.at(&[key, "safeBinProfiles"]));
        out.allowlist_entries(&tools.at(&[key, "allowlist"]));
    }
    for (_, agent) in Node::root(document).at(&["agents", "list"]).elements() {
        out.safe_bin_profiles(&agent.at(&["tools", "exec", "safeBinProfiles"]));
        out.allowlist_entries(&agent.at(&["tools", "exec", "allowlist"]));
    }

    out.duration(&Node::root(document).at(&["session", "maintenance", "pruneAfter"]));
    for (_, channel) in Node::root(document).at(&["channels"]).entries() {
        out.min_max(
            &channel.at(&["streaming", "block", "coalesce"]),
            "minChars",
            "maxChars",
        );
    }
    out.providers(&Node::root(document).at(&["models", "providers"]));
    out.hooks(&Node::root(document).at(&["hooks"]));
    for (_, agent) in Node::root(document).at(&["agents", "list"]).elements() {
        out.hooks(&agent.at(&["hooks"]));
    }
    out.0
}

/// The forms of a `bootstrap` hook entry: the key that names the form, and the keys it needs.
const BOOTSTRAP_FORMS: &[(&str, &[&str])] = &[
    ("replace", &["with"]),
    ("drop", &[]),
    ("add", &["from"]),
    ("command", &["timeoutMs", "onError"]),
];

/// The forms of a `beforePromptBuild` hook entry, as [`BOOTSTRAP_FORMS`].
const PROMPT_BUILD_FORMS: &[(&str, &[&str])] = &[
    ("text", &["placement"]),
    ("from", &["placement"]),
    ("command", &["timeoutMs", "onError"]),
];

/// The longest a hook command may be given, in milliseconds: a hook runs before every turn.
pub(crate) const MAX_HOOK_TIMEOUT_MS: u64 = 120_000;

/// A position in the document: its path, and the value there if it exists.
#[derive(Clone)]
struct Node<'a> {
    path: Vec<Segment>,
    value: Option<&'a Value>,
}

impl<'a> Node<'a> {
    fn root(document: &'a Value) -> Self {
        Self {
            path: Vec::new(),
            value: Some(document),
        }
    }

    fn at(&self, keys: &[&str]) -> Node<'a> {
        let mut node = self.clone();
        for key in keys {
            node.value = node.value.and_then(|v| v.get(key));
            node.path.push(Segment::Key((*key).to_owned()));
        }
        node
    }

    fn str(&self) -> Option<&'a str> {
        self.value.and_then(Value::as_str)
    }

    fn elements(&self) -> Vec<(usize, Node<'a>)> {
        let items = self
            .value
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                let mut path = self.path.clone();
                path.push(Segment::Index(i));
                (
                    i,
                    Node {
                        path,
                        value: Some(item),
                    },
                )
            })
            .collect()
    }

    fn entries(&self) -> Vec<(&'a str, Node<'a>)> {
        let Some(map) = self.value.and_then(Value::as_object) else {
            return Vec::new();
        };
        map.iter()
            .map(|(key, item)| {
                let mut path = self.path.clone();
                path.push(Segment::Key(key.clone()));
                (
                    key.as_str(),
                    Node {
                        path,
                        value: Some(item),
                    },
                )
            })
            .collect()
    }
}

#[derive(Default)]
struct Findings(Vec<Finding>);

impl Findings {
    fn push(&mut self, node: &Node<'_>, kind: ErrorKind, message: String) {
        self.0.push(Finding {
            path: node.path.clone(),
            target: Target::Value,
            kind,
            message,
        });
    }

    fn duration(&mut self, node: &Node<'_>) {
        let Some(text) = node.str() else { return };
        if let Err(ConfigError::Duration { reason, .. }) = parse_duration(text) {
            let message = format!(
                "invalid duration \"{text}\": {reason} (examples: \"30m\", \"1h30m\", \"45s\", \"500ms\")"
            );
            self.push(node, ErrorKind::InvalidValue, message);
        }
    }

    /// A string, or `{primary, fallbacks}`.
    fn model_selection(&mut self, node: &Node<'_>) {
        if node.str().is_some() {
            self.model_reference(node);
        }
        self.model_reference(&node.at(&["primary"]));
        for (_, fallback) in node.at(&["fallbacks"]).elements() {
            self.model_reference(&fallback);
        }
    }

    /// A bare id or alias is fine (resolved later); text with `/` must parse.
    fn model_reference(&mut self, node: &Node<'_>) {
        let Some(reference) = node.str() else { return };
        let (base, _) = split_auth_profile(reference.trim());
        let problem = if base.is_empty() {
            Some("empty model reference".to_owned())
        } else if base.contains('/') {
            ModelRef::parse(reference).err().map(|e| e.to_string())
        } else {
            None
        };
        if let Some(message) = problem {
            self.push(node, ErrorKind::InvalidValue, message);
        }
    }

    /// A folder the services read from: absolute, or under the home directory (`~/`). A
    /// relative path has no sensible base (the service's working directory is arbitrary).
    fn absolute_folder(&mut self, node: &Node<'_>) {
        let Some(written) = node.str() else { return };
        let path = written.trim();
        let ok = path == "~" || path.starts_with("~/") || std::path::Path::new(path).is_absolute();
        if !ok {
            let message = format!(
                "folder must be an absolute path or start with \"~/\"; found \"{written}\""
            );
            self.push(node, ErrorKind::InvalidValue, message);
        }
    }

    fn min_max(&mut self, node: &Node<'_>, min_key: &str, max_key: &str) {
        let (min, max) = (node.at(&[min_key]), node.at(&[max_key]));
        if let (Some(low), Some(high)) = (
            min.value.and_then(Value::as_u64),
            max.value.and_then(Value::as_u64),
        ) && low > high
        {
            self.push(
                &min,
                ErrorKind::InvalidValue,
                format!("{min_key} ({low}) is larger than {max_key} ({high})"),
            );
        }
    }

    /// `tools.exec.safeBinProfiles`: operand bounds in order, and every flag written as an
    /// option (`-x` or `--name`), without a value attached.
    fn safe_bin_profiles(&mut self, profiles: &Node<'_>) {
        for (_, profile) in profiles.entries() {
            self.min_max(&profile, "minPositional", "maxPositional");
            let min = profile.at(&["minPositional"]).value.and_then(Value::as_u64);
            if let Some(low) = min
                && profile.at(&["maxPositional"]).value.is_none()
                && low > 0
            {
                self.push(
                    &profile.at(&["minPositional"]),
                    ErrorKind::InvalidValue,
                    format!("minPositional ({low}) needs a maxPositional (the default is 0)"),
                );
            }
            for key in ["allowedFlags", "allowedValueFlags", "deniedFlags"] {
                for (_, flag) in profile.at(&[key]).elements() {
                    let Some(text) = flag.str() else { continue };
                    let short = text.len() == 2
                        && text.starts_with('-')
                        && text[1..].chars().all(|c| c.is_ascii_alphanumeric());
                    let long = text.len() > 2
                        && text.starts_with("--")
                        && text[2..]
                            .chars()
                            .all(|c| c.is_ascii_alphanumeric() || c == '-');
                    if !short && !long {
                        self.push(
                            &flag,
                            ErrorKind::InvalidValue,
                            format!(
                                "{text:?} is not a flag: write one short option (\"-n\") or one \
                                 long option (\"--lines\"), without a value"
                            ),
                        );
                    }
                }
            }
        }
    }

    /// `tools.exec.allowlist`: absolute path globs (a bare name or `~` would never match a
    /// resolved path, so it is an error rather than a silent miss).
    fn allowlist_entries(&mut self, entries: &Node<'_>) {
        for (_, entry) in entries.elements() {
            let Some(text) = entry.str() else { continue };
            if !text.trim().starts_with('/') {
                self.push(
                    &entry,
                    ErrorKind::InvalidValue,
                    format!(
                        "allowlist entry {text:?} is not an absolute path: entries match the \
                         resolved path of a program (\"/usr/bin/git\"); names and ~ are not \
                         expanded"
                    ),
                );
            }
        }
    }

    /// `agents.defaults.models`: keys are full references and aliases are unique.
    fn model_entries(&mut self, models: &Node<'_>) {
        let mut aliases: BTreeMap<String, String> = BTreeMap::new();
        for (key, entry) in models.entries() {
            if let Err(ConfigError::ModelRef { reason, .. }) = ModelRef::parse(key) {
                let message = format!("model keys must be \"provider/model\"; \"{key}\": {reason}");
                self.push(&entry, ErrorKind::InvalidValue, message);
            }
            let alias = entry.at(&["alias"]);
            if let Some(name) = alias.str()
                && let Some(other) = aliases.insert(name.trim().to_lowercase(), key.to_owned())
            {
                self.push(
                    &alias,
                    ErrorKind::InvalidValue,
                    format!("alias \"{name}\" is already used by \"{other}\""),
                );
            }
        }
    }

    /// Agent ids become directory names and session-key parts: a safe charset, unique
    /// case-insensitively.
    fn agent_id(&mut self, node: &Node<'_>, index: usize, seen: &mut BTreeMap<String, usize>) {
        let Some(id) = node.str() else { return };
        let mut chars = id.chars();
        let valid = id.len() <= MAX_AGENT_ID_LEN
            && chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !valid {
            let message = format!(
                "agent id must be 1-{MAX_AGENT_ID_LEN} letters, digits, '-' or '_', starting with a letter or digit; found \"{id}\""
            );
            self.push(node, ErrorKind::InvalidValue, message);
        } else if let Some(first) = seen.insert(id.to_lowercase(), index) {
            self.push(
                node,
                ErrorKind::InvalidValue,
                format!("duplicate agent id \"{id}\" (first used at agents.list[{first}])"),
            );
        }
    }

    /// `hooks` or `agents.list[].hooks`: each entry has exactly one form, only the keys that
    /// form takes, workspace-relative paths and a usable command.
    fn hooks(&mut self, hooks: &Node<'_>) {
        for (list, forms) in [
            ("bootstrap", BOOTSTRAP_FORMS),
            ("beforePromptBuild", PROMPT_BUILD_FORMS),
        ] {
            for (_, entry) in hooks.at(&[list]).elements() {
                self.hook_entry(&entry, forms);
            }
        }
    }

    fn hook_entry(&mut self, entry: &Node<'_>, forms: &[(&str, &[&str])]) {
        let Some(object) = entry.value.and_then(Value::as_object) else {
            return;
        };
        let present: Vec<&str> = forms
            .iter()
            .map(|(form, _)| *form)
            .filter(|form| object.contains_key(*form))
            .collect();
        let names = forms
            .iter()
            .map(|(form, _)| format!("\"{form}\""))
            .collect::<Vec<_>>()
            .join(", ");
        let [form] = present[..] else {
            let message = if present.is_empty() {
                format!("a hook needs exactly one of {names}")
            } else {
                format!(
                    "a hook has exactly one of {names}; this one has {}",
                    present.join(" and ")
                )
            };
            self.push(entry, ErrorKind::InvalidValue, message);
            return;
        };
        let allowed = forms
            .iter()
            .find(|(name, _)| *name == form)
            .map(|(_, keys)| *keys)
            .unwrap_or_default();
        for key in object.keys() {
            let belongs_elsewhere = forms.iter().any(|(other, keys)| {
                *other != form && (key == other || keys.contains(&key.as_str()))
            });
            if belongs_elsewhere && !allowed.contains(&key.as_str()) && key != form {
                self.push(
                    &entry.at(&[key]),
                    ErrorKind::InvalidValue,
                    format!("\"{key}\" does not belong to a \"{form}\" hook"),
                );
            }
        }
        match form {
            "replace" | "add" => {
                let source = if form == "replace" { "with" } else { "from" };
                self.workspace_path(&entry.at(&[form]));
                if object.contains_key(source) {
                    self.workspace_path(&entry.at(&[source]));
                } else {
                    self.push(
                        entry,
                        ErrorKind::MissingKey,
                        format!("a \"{form}\" hook needs \"{source}\": the workspace file to read"),
                    );
                }
            }
            "drop" | "from" => self.workspace_path(&entry.at(&[form])),
            "command" => self.hook_command(entry),
            _ => {}
        }
    }

    /// A path a hook reads or names: relative to the workspace and staying inside it.
    fn workspace_path(&mut self, node: &Node<'_>) {
        let Some(path) = node.str() else { return };
        let problem = if path.trim().is_empty() {
            Some("an empty path")
        } else if path.starts_with('/') || path.starts_with('~') || path.starts_with('\\') {
            Some("not relative to the workspace")
        } else if path.split(['/', '\\']).any(|part| part == "..") {
            Some("it leaves the workspace with \"..\"")
        } else if path.contains('\0') {
            Some("it holds a NUL character")
        } else {
            None
        };
        if let Some(problem) = problem {
            self.push(
                node,
                ErrorKind::InvalidValue,
                format!("\"{path}\" must be a path inside the workspace: {problem}"),
            );
        }
    }

    fn hook_command(&mut self, entry: &Node<'_>) {
        let command = entry.at(&["command"]);
        if let Some(argv) = command.value.and_then(Value::as_array) {
            match argv.first().and_then(Value::as_str) {
                None => self.push(
                    &command,
                    ErrorKind::InvalidValue,
                    "the command needs a program: [\"program\", \"arg\", ...]".to_owned(),
                ),
                Some(program) if program.trim().is_empty() => self.push(
                    &command,
                    ErrorKind::InvalidValue,
                    "the program name is empty".to_owned(),
                ),
                Some(_) => {}
            }
        }
        let timeout = entry.at(&["timeoutMs"]);
        if let Some(ms) = timeout.value.and_then(Value::as_u64)
            && !(1..=MAX_HOOK_TIMEOUT_MS).contains(&ms)
        {
            self.push(
                &timeout,
                ErrorKind::InvalidValue,
                format!("timeoutMs must be 1 to {MAX_HOOK_TIMEOUT_MS}; found {ms}"),
            );
        }
    }

    /// `memorySearch` (defaults, or an agent's over `defaults`): chunk overlap below the
    /// chunk size, what each provider needs, and weights that rank something.
    fn memory_search(&mut self, node: &Node<'_>, defaults: Option<&Node<'_>>) {
        if node.value.is_none() {
            return;
        }
        // A key this object leaves out comes from the defaults.
        let effective = |keys: &[&str]| {
            let own = node.at(keys);
            match (own.value, defaults) {
                (None, Some(d)) => d.at(keys),
                _ => own,
            }
        };
        let tokens = effective(&["chunking", "tokens"])
            .value
            .and_then(Value::as_u64);
        let overlap = effective(&["chunking", "overlap"]);
        if let Some(o) = overlap.value.and_then(Value::as_u64)
            && o >= tokens.unwrap_or(400)
        {
            let message = format!(
                "the overlap ({o}) must be less than chunking.tokens ({})",
                tokens.unwrap_or(400)
            );
            self.push(
                &node.at(&["chunking", "overlap"]),
                ErrorKind::InvalidValue,
                message,
            );
        }
        let provider = effective(&["provider"]);
        let base_url = effective(&["remote", "baseUrl"]);
        match provider.str() {
            Some("local") => self.push(
                &provider,
                ErrorKind::InvalidValue,
                "\"local\" (an in-process GGUF model) is not available in this service; serve \
                 the model with Ollama (\"ollama\") or any OpenAI-compatible server \
                 (\"openai-compatible\" with remote.baseUrl)"
                    .to_owned(),
            ),
            Some("openai-compatible") => {
                if base_url.value.is_none() {
                    self.push(
                        &provider,
                        ErrorKind::MissingKey,
                        "\"openai-compatible\" needs remote.baseUrl".to_owned(),
                    );
                }
                if effective(&["model"]).value.is_none() {
                    self.push(
                        &provider,
                        ErrorKind::MissingKey,
                        "\"openai-compatible\" needs a model".to_owned(),
                    );
                }
            }
            _ => {}
        }
        if let Some(url) = node.at(&["remote", "baseUrl"]).str() {
            let scheme_ok = url.starts_with("http://") || url.starts_with("https://");
            if !scheme_ok || url.contains(char::is_whitespace) {
                self.push(
                    &node.at(&["remote", "baseUrl"]),
                    ErrorKind::InvalidValue,
                    format!("\"{url}\" is not an http:// or https:// URL"),
                );
            }
        }
        let weight = |key: &str| {
            effective(&["query", "hybrid", key])
                .value
                .and_then(Value::as_f64)
        };
        if weight("vectorWeight").unwrap_or(0.7) + weight("textWeight").unwrap_or(0.3) <= 0.0 {
            self.push(
                &node.at(&["query", "hybrid"]),
                ErrorKind::InvalidValue,
                "vectorWeight and textWeight are both 0: nothing would rank".to_owned(),
            );
        }
    }

    fn providers(&mut self, providers: &Node<'_>) {
        let mut seen: BTreeMap<String, &str> = BTreeMap::new();
        for (id, provider) in providers.entries() {
            if let Some(other) = seen.insert(normalize_provider(id), id) {
                let message =
                    format!("provider ids are case-insensitive: \"{id}\" repeats \"{other}\"");
                self.push(&provider, ErrorKind::InvalidValue, message);
            }
            let api = provider.at(&["api"]);
            let has = |key: &str| provider.at(&[key]).value.is_some();
            let key_file = provider.at(&["apiKeyFile"]);
            if has("apiKey") && key_file.value.is_some() {
                self.push(
                    &key_file,
                    ErrorKind::InvalidValue,
                    "give \"apiKey\" or \"apiKeyFile\", not both".to_owned(),
                );
            } else if let Some(path) = key_file.str()
                && !path.starts_with('/')
            {
                self.push(
                    &key_file,
                    ErrorKind::InvalidValue,
                    format!("\"{path}\" must be an absolute path"),
                );
            }
            match api.str() {
                Some("scripted") if !has("script") => {
                    self.push(
                        &api,
                        ErrorKind::MissingKey,
                        "the scripted api needs a \"script\" file".to_owned(),
                    );
                }
                Some(name @ ("openai-responses" | "openai-completions" | "anthropic-messages"))
                    if !has("baseUrl") =>
                {
                    self.push(
                        &api,
                        ErrorKind::MissingKey,
                        format!("api \"{name}\" needs a \"baseUrl\""),
                    );
                }
                _ => {}
            }
        }
    }
}
