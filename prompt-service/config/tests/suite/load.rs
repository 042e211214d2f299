//! Loading: the realistic example, every error at once with exact locations, syntax errors and
//! `${VAR}` substitution.

use openclaw_config::raw::{ModelSelection, ProviderApi, SandboxMode, SecretInput};
use openclaw_config::{ConfigError, ErrorKind, LoadOptions, NoEnv, Position, UnresolvedVars, load};

use super::support::{EXAMPLE, assert_points_at, env, invalid, keep, paths_and_messages, valid};

fn at(line: usize, column: usize) -> Option<Position> {
    Some(Position { line, column })
}

#[test]
fn realistic_example_with_comments_trailing_commas_and_unquoted_keys_loads() {
    let config = valid(EXAMPLE);
    let raw = config.raw();
    let agents = raw.agents.as_ref().expect("agents");
    let defaults = agents.defaults.as_ref().expect("defaults");
    assert_eq!(defaults.workspace.as_deref(), Some("~/.openclaw/workspace"));
    assert_eq!(defaults.bootstrap_max_chars, Some(16_000));
    assert_eq!(
        defaults.sandbox.as_ref().and_then(|s| s.mode),
        Some(SandboxMode::NonMain)
    );
    assert!(
        matches!(&defaults.model, Some(ModelSelection::Detailed(d)) if d.fallbacks.as_ref().map(Vec::len) == Some(2))
    );
    let list = agents.list.as_ref().expect("list");
    assert_eq!(
        list.iter().map(|a| a.id.as_str()).collect::<Vec<_>>(),
        ["main", "work"]
    );
    let providers = raw
        .models
        .as_ref()
        .and_then(|m| m.providers.as_ref())
        .expect("providers");
    // File order is kept: it decides the last-resort default model.
    assert_eq!(
        providers.keys().map(String::as_str).collect::<Vec<_>>(),
        ["anthropic", "openai", "openrouter", "scripted"]
    );
    assert_eq!(providers["scripted"].api, ProviderApi::Scripted);
    assert!(
        matches!(&providers["openai"].api_key, Some(SecretInput::Ref(r)) if r.id == "OPENAI_API_KEY")
    );
    // Open corners keep arbitrary JSON.
    let image_lab = &raw
        .skills
        .as_ref()
        .and_then(|s| s.entries.as_ref())
        .expect("entries")["image-lab"];
    assert_eq!(
        image_lab
            .config
            .as_ref()
            .and_then(|c| c.pointer("/nested/ok")),
        Some(&serde_json::json!(true))
    );
    // The substituted JSON is kept too, keys in file order.
    assert_eq!(
        config.value().pointer("/agents/list/1/id"),
        Some(&serde_json::json!("work"))
    );
}

#[test]
fn empty_object_is_a_valid_config() {
    let config = valid("{}");
    assert_eq!(config.raw(), &openclaw_config::raw::RawConfig::default());
}

/// Five distinct problems in one file: all reported, in source order, each with its path and
/// the position of the offending value (or key).
const BROKEN: &str = r#"{
  agents: { defaults: {
    workspac: "~/ws",
    'bootstrapMaxChars':  "lots",
    sandbox: { mode: "non_main" },
  },
  list: [
    { id: "a" },
    { name: "no id", workspace: 7 },
  ] },
  messages: { queue: { mode: "Steer", cap: -1 } },
  extraTop: 1,
}
"#;

#[test]
fn every_error_is_reported_with_path_line_and_column() {
    let errors = invalid(BROKEN, &env(&[]), &LoadOptions::default());
    let got: Vec<(&str, Option<Position>, ErrorKind)> = errors
        .iter()
        .map(|e| (e.path.as_str(), e.position, e.kind))
        .collect();
    assert_eq!(
        got,
        vec![
            ("agents.defaults.workspac", at(3, 5), ErrorKind::UnknownKey),
            (
                "agents.defaults.bootstrapMaxChars",
                at(4, 27),
                ErrorKind::WrongType
            ),
            (
                "agents.defaults.sandbox.mode",
                at(5, 22),
                ErrorKind::InvalidValue
            ),
            ("agents.list[1]", at(9, 5), ErrorKind::MissingKey),
            ("agents.list[1].workspace", at(9, 33), ErrorKind::WrongType),
            ("messages.queue.mode", at(11, 30), ErrorKind::InvalidValue),
            ("messages.queue.cap", at(11, 44), ErrorKind::InvalidValue),
            ("extraTop", at(12, 3), ErrorKind::UnknownKey),
        ]
    );
    // Each position, checked against the text itself.
    let tokens = [
        "workspac",
        "\"lots\"",
        "\"non_main\"",
        "{ name",
        "7",
        "\"Steer\"",
        "-1",
        "extraTop",
    ];
    for (error, token) in errors.iter().zip(tokens) {
        assert_points_at(BROKEN, error.position, token);
    }
}

#[test]
fn error_lines_read_like_sentences() {
    let errors = invalid(BROKEN, &env(&[]), &LoadOptions::default());
    let lines: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert_eq!(
        lines,
        vec![
            r#"agents.defaults.workspac (line 3, column 5): unknown key; did you mean "workspace"?"#,
            r#"agents.defaults.bootstrapMaxChars (line 4, column 27): expected an integer, found "lots""#,
            r#"agents.defaults.sandbox.mode (line 5, column 22): expected one of "off", "non-main", "all", found "non_main"; did you mean "non-main"?"#,
            r#"agents.list[1] (line 9, column 5): missing required key "id""#,
            r#"agents.list[1].workspace (line 9, column 33): expected a string, found 7"#,
            r#"messages.queue.mode (line 11, column 30): expected one of "steer", "followup", "collect", "interrupt", found "Steer"; did you mean "steer"?"#,
            r#"messages.queue.cap (line 11, column 44): must be at least 0, found -1"#,
            r#"extraTop (line 12, column 3): unknown key"#,
        ]
    );
    // ConfigError displays them one per line.
    let whole = load(BROKEN, &NoEnv, &LoadOptions::default())
        .err()
        .map(|e| e.to_string());
    assert_eq!(whole, Some(lines.join("\n")));
}

#[test]
fn unknown_keys_suggest_the_closest_known_key() {
    let text = "{\n  tools: { profle: 'full', exec: { securty: 'full' } },\n  channels: { telegram: { botToken: 'x' } },\n}";
    let errors = invalid(text, &env(&[]), &keep());
    assert_eq!(
        paths_and_messages(&errors),
        vec![
            ("tools.profle", r#"unknown key; did you mean "profile"?"#),
            (
                "tools.exec.securty",
                r#"unknown key; did you mean "security"?"#
            ),
        ]
    );
    assert_points_at(text, errors[1].position, "securty");
}

/// An existing openclaw.json loads unchanged. Channel plugins own keys
/// such as `botToken`; they are kept as written, and numeric sender ids are
/// accepted (R-14).
#[test]
fn channel_specific_keys_pass_through() {
    let text = "{ channels: { telegram: { botToken: 'x', allowFrom: [123, '456'], groups: { '*': { requireMention: true } } } } }";
    let config = load(text, &env(&[]), &keep()).expect("channel keys load");
    let telegram = &config.raw().channels.as_ref().expect("channels")["telegram"];
    assert_eq!(
        telegram.extra.get("botToken"),
        Some(&serde_json::json!("x"))
    );
    assert!(telegram.extra.contains_key("groups"));
    let allow: Vec<&str> = telegram
        .allow_from
        .iter()
        .flatten()
        .map(|s| s.as_str())
        .collect();
    assert_eq!(allow, ["123", "456"]);
    // Interpreted keys stay typed.
    let bad = invalid(
        "{ channels: { telegram: { blockStreaming: 'yes' } } }",
        &env(&[]),
        &keep(),
    );
    assert_eq!(bad[0].path, "channels.telegram.blockStreaming");
}

#[test]
fn wrong_types_name_expected_and_found() {
    let text = r#"{ agents: { defaults: { model: 42, skipBootstrap: "yes", skills: "github", heartbeat: [] } } }"#;
    let errors = invalid(text, &env(&[]), &keep());
    assert_eq!(
        paths_and_messages(&errors),
        vec![
            (
                "agents.defaults.model",
                "expected a string or an object, found 42"
            ),
            (
                "agents.defaults.skipBootstrap",
                r#"expected a boolean (true or false), found "yes""#
            ),
            (
                "agents.defaults.skills",
                r#"expected an array, found "github""#
            ),
            ("agents.defaults.heartbeat", "expected an object, found []"),
        ]
    );
    assert!(errors.iter().all(|e| e.kind == ErrorKind::WrongType));
}

#[test]
fn a_typo_inside_the_object_form_of_a_union_is_reported_as_that_typo() {
    let text = "{ agents: { defaults: { model: { primary: 'a/b', fallback: [] } } } }";
    let errors = invalid(text, &env(&[]), &keep());
    assert_eq!(errors.len(), 1);
    assert_eq!(
        errors[0].to_string(),
        r#"agents.defaults.model.fallback (line 1, column 50): unknown key; did you mean "fallbacks"?"#
    );
}

#[test]
fn rule_violations_are_reported_alongside_schema_errors() {
    let text = r#"{
  agents: {
    defaults: { heartbeat: { every: "soon" }, blockStreamingChunk: { minChars: 1500, maxChars: 1200 }, models: { opus: {} } },
    list: [{ id: "a" }, { id: "A" }, { id: "../etc" }, { id: "b", model: "openai/" }],
  },
  models: { providers: { local: { api: "scripted" }, openai: { api: "openai-responses" } } },
  session: { maintenance: { pruneAfter: "30 days" } },
  tools: { profile: "everything" },
}"#;
    let errors = invalid(text, &env(&[]), &keep());
    assert_eq!(
        paths_and_messages(&errors),
        vec![
            (
                "agents.defaults.heartbeat.every",
                r#"invalid duration "soon": expected a number such as 30 or 1.5 before each unit (examples: "30m", "1h30m", "45s", "500ms")"#
            ),
            (
                "agents.defaults.blockStreamingChunk.minChars",
                "minChars (1500) is larger than maxChars (1200)"
            ),
            (
                "agents.defaults.models.opus",
                r#"model keys must be "provider/model"; "opus": expected provider/model"#
            ),
            (
                "agents.list[1].id",
                r#"duplicate agent id "A" (first used at agents.list[0])"#
            ),
            (
                "agents.list[2].id",
                r#"agent id must be 1-64 letters, digits, '-' or '_', starting with a letter or digit; found "../etc""#
            ),
            (
                "agents.list[3].model",
                r#"invalid model reference "openai/": the model part after '/' is empty"#
            ),
            (
                "models.providers.local.api",
                r#"the scripted api needs a "script" file"#
            ),
            (
                "models.providers.openai.api",
                r#"api "openai-responses" needs a "baseUrl""#
            ),
            (
                "session.maintenance.pruneAfter",
                r#"invalid duration "30 days": missing unit (use ms, s, m, h or d) (examples: "30m", "1h30m", "45s", "500ms")"#
            ),
            (
                "tools.profile",
                r#"expected one of "minimal", "coding", "messaging", "full", found "everything""#
            ),
        ]
    );
}

#[test]
fn syntax_errors_carry_line_and_column() {
    let cases: &[(&str, usize, usize, &str)] = &[
        (
            "{\n  a: 1\n  b: 2,\n}",
            3,
            3,
            "invalid JSON5: expected comma",
        ),
        (
            "{\n  agents: {\n    defaults: { workspace: \"~/ws },\n  },\n}",
            3,
            36,
            "invalid JSON5: line terminator in string",
        ),
        ("{ a: [1, 2 }", 1, 12, "invalid JSON5: expected comma"),
        ("", 1, 1, "invalid JSON5: EOF parsing value"),
    ];
    for (text, line, column, message) in cases {
        let errors = invalid(text, &env(&[]), &keep());
        assert_eq!(errors.len(), 1, "{text}");
        assert_eq!(errors[0].kind, ErrorKind::Syntax);
        assert_eq!(errors[0].path, "");
        assert_eq!(
            (errors[0].position, errors[0].message.as_str()),
            (at(*line, *column), *message),
            "{text}"
        );
    }
    let errors = invalid("{\n  a: 1\n  b: 2,\n}", &env(&[]), &keep());
    assert_eq!(
        errors[0].to_string(),
        "line 3, column 3: invalid JSON5: expected comma"
    );
}

const WITH_VARS: &str = r#"{
  models: { providers: { openai: {
    baseUrl: "https://${API_HOST}/v1",
    apiKey: "${OPENAI_API_KEY}",
    api: "openai-responses",
    headers: { "X-Literal": "$${NOT_A_SECRET}", "X-Mixed": "${API_HOST}:${MISSING_PORT}" },
  } } },
  commands: { ownerDisplaySecret: "${EMPTY_SECRET}", ownerAllowFrom: ["${lowercase_is_not_a_var}"] },
}"#;

#[test]
fn substitution_replaces_references_and_unescapes() {
    let vars = env(&[
        ("API_HOST", "api.example.com"),
        ("OPENAI_API_KEY", "sk-test"),
        ("MISSING_PORT", "443"),
        ("EMPTY_SECRET", "s3cret"),
    ]);
    let config = load(WITH_VARS, &vars, &LoadOptions::default()).expect("valid");
    let value = config.value();
    assert_eq!(
        value.pointer("/models/providers/openai/baseUrl"),
        Some(&"https://api.example.com/v1".into())
    );
    assert_eq!(
        value.pointer("/models/providers/openai/apiKey"),
        Some(&"sk-test".into())
    );
    let headers = value
        .pointer("/models/providers/openai/headers")
        .expect("headers");
    assert_eq!(headers["X-Literal"], "${NOT_A_SECRET}");
    assert_eq!(headers["X-Mixed"], "api.example.com:443");
    assert_eq!(
        value.pointer("/commands/ownerAllowFrom/0"),
        Some(&"${lowercase_is_not_a_var}".into())
    );
    // The typed view sees the substituted values.
    let provider = &config
        .raw()
        .models
        .as_ref()
        .and_then(|m| m.providers.as_ref())
        .expect("providers")["openai"];
    assert_eq!(
        provider.api_key,
        Some(openclaw_config::raw::SecretInput::Plain(
            "sk-test".to_owned()
        ))
    );
}

#[test]
fn error_policy_reports_each_unset_or_empty_variable_where_it_is_used() {
    let vars = env(&[("API_HOST", "api.example.com"), ("EMPTY_SECRET", "")]);
    let errors = invalid(
        WITH_VARS,
        &vars,
        &LoadOptions {
            unresolved_vars: UnresolvedVars::Error,
        },
    );
    let got: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert_eq!(
        got,
        vec![
            "models.providers.openai.apiKey (line 4, column 13): environment variable OPENAI_API_KEY is unset or empty (written as ${OPENAI_API_KEY})",
            "models.providers.openai.headers.X-Mixed (line 6, column 60): environment variable MISSING_PORT is unset or empty (written as ${MISSING_PORT})",
            "commands.ownerDisplaySecret (line 8, column 35): environment variable EMPTY_SECRET is unset or empty (written as ${EMPTY_SECRET})",
        ]
    );
    assert!(
        errors
            .iter()
            .all(|e| e.kind == ErrorKind::UnresolvedVariable)
    );
    assert_points_at(
        WITH_VARS,
        errors[1].position,
        "\"${API_HOST}:${MISSING_PORT}\"",
    );
}

#[test]
fn keep_policy_leaves_unresolved_references_as_written() {
    let config = load(WITH_VARS, &env(&[("API_HOST", "h")]), &keep()).expect("valid");
    let value = config.value();
    assert_eq!(
        value.pointer("/models/providers/openai/apiKey"),
        Some(&"${OPENAI_API_KEY}".into())
    );
    assert_eq!(
        value.pointer("/models/providers/openai/baseUrl"),
        Some(&"https://h/v1".into())
    );
    assert_eq!(
        value.pointer("/models/providers/openai/headers/X-Mixed"),
        Some(&"h:${MISSING_PORT}".into())
    );
    assert_eq!(
        value.pointer("/models/providers/openai/headers/X-Literal"),
        Some(&"${NOT_A_SECRET}".into())
    );
}

#[test]
fn unresolved_variables_and_schema_errors_come_together() {
    let text = "{\n  agents: { defaults: { workspace: \"${WS}\", bogus: 1 } },\n}";
    let errors = invalid(text, &env(&[]), &LoadOptions::default());
    let kinds: Vec<ErrorKind> = errors.iter().map(|e| e.kind).collect();
    assert_eq!(
        kinds,
        vec![ErrorKind::UnresolvedVariable, ErrorKind::UnknownKey]
    );
}

#[test]
fn an_integer_written_as_a_float_still_gets_a_located_error() {
    // JSON Schema counts 20000.0 as an integer; the typed decode does not. The gap is reported
    // with its path instead of slipping through.
    let text = "{ agents: { defaults: { bootstrapMaxChars: 20000.0 } } }";
    let errors = invalid(text, &env(&[]), &keep());
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].path, "agents.defaults.bootstrapMaxChars");
    assert_points_at(text, errors[0].position, "20000.0");
}

#[test]
fn non_object_documents_are_refused() {
    let errors = invalid("[1, 2]", &env(&[]), &keep());
    assert_eq!(errors[0].message, "expected an object, found an array");
    assert!(matches!(
        load("null", &NoEnv, &keep()),
        Err(ConfigError::Invalid(_))
    ));
}

#[test]
fn a_reused_loader_gives_the_same_answers() {
    let Ok(loader) = openclaw_config::Loader::new() else {
        panic!("schema compiles")
    };
    let once = load(BROKEN, &NoEnv, &keep()).err().map(|e| e.to_string());
    let reused = loader
        .load(BROKEN, &NoEnv, &keep())
        .err()
        .map(|e| e.to_string());
    assert_eq!(once, reused);
    assert!(loader.load(EXAMPLE, &NoEnv, &keep()).is_ok());
}

#[test]
fn a_byte_order_mark_is_ignored_and_not_counted() {
    let errors = invalid("\u{feff}{ bogus: 1 }", &env(&[]), &keep());
    assert_eq!(errors[0].position, at(1, 3));
}

/// JSON5 allows comments and Unicode whitespace between any two tokens, including between a
/// key and its colon; errors there are still located.
#[test]
fn errors_after_comments_between_key_and_colon_are_located() {
    let text = "{\n  agents /* all of them */ : {\n    defaults // inline\n    : { bootstrapMaxChars\u{feff}: 'many' },\n  },\n  tools: { profle\u{a0}: 'full' },\n}\n";
    let errors = invalid(text, &env(&[]), &LoadOptions::default());
    let paths: Vec<&str> = errors.iter().map(|e| e.path.as_str()).collect();
    assert_eq!(
        paths,
        ["agents.defaults.bootstrapMaxChars", "tools.profle"],
        "{errors:?}"
    );
    assert_points_at(text, errors[0].position, "'many'");
    assert_points_at(text, errors[1].position, "profle");
}

#[test]
fn safe_bin_profiles_are_checked_where_they_are_written() {
    let text = r#"{
  tools: { exec: { safeBins: ["jq"], safeBinProfiles: {
    jq: { minPositional: 2, maxPositional: 1, allowedFlags: ["-c", "c"], allowedValueFlags: ["--arg=x"] },
  } } },
  agents: { list: [{ id: "a", tools: { exec: { security: "full", allowlist: ["/usr/bin/git", "git", "~/bin/x"],
    safeBinProfiles: { rev: { minPositional: 1 } } } } }] },
}"#;
    let errors = invalid(text, &env(&[]), &keep());
    assert_eq!(
        paths_and_messages(&errors),
        vec![
            (
                "tools.exec.safeBinProfiles.jq.minPositional",
                "minPositional (2) is larger than maxPositional (1)"
            ),
            (
                "tools.exec.safeBinProfiles.jq.allowedFlags[1]",
                r#""c" is not a flag: write one short option ("-n") or one long option ("--lines"), without a value"#
            ),
            (
                "tools.exec.safeBinProfiles.jq.allowedValueFlags[0]",
                r#""--arg=x" is not a flag: write one short option ("-n") or one long option ("--lines"), without a value"#
            ),
            (
                "agents.list[0].tools.exec.allowlist[1]",
                r#"allowlist entry "git" is not an absolute path: entries match the resolved path of a program ("/usr/bin/git"); names and ~ are not expanded"#
            ),
            (
                "agents.list[0].tools.exec.allowlist[2]",
                r#"allowlist entry "~/bin/x" is not an absolute path: entries match the resolved path of a program ("/usr/bin/git"); names and ~ are not expanded"#
            ),
            (
                "agents.list[0].tools.exec.safeBinProfiles.rev.minPositional",
                "minPositional (1) needs a maxPositional (the default is 0)"
            ),
        ]
    );
}

#[test]
fn provider_timeouts_out_of_range_or_misspelt_name_their_key() {
    let text = "{ models: { providers: { local: { api: 'openai-completions', baseUrl: 'http://127.0.0.1:1/v1',\n  timeouts: { firstByteSeconds: 0, idleSecond: 5 } } } } }";
    let errors = invalid(text, &env(&[]), &LoadOptions::default());
    let lines: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert_eq!(
        lines,
        vec![
            r#"models.providers.local.timeouts.firstByteSeconds (line 2, column 33): must be at least 0.001, found 0"#,
            r#"models.providers.local.timeouts.idleSecond (line 2, column 36): unknown key; did you mean "idleSeconds"?"#,
        ]
    );
}
