//! gateway: schema lookup, config.patch and config.apply, validation, and the refusal to
//! touch exec approval/security settings (P-12, L15e).

use openclaw_tools::GatewayTool;
use serde_json::json;

use super::{Fixture, error_text, ok_text};

const CONFIG: &str = "// my config
{
  agents: { defaults: { workspace: '~/ws' } },
  tools: { exec: { ask: 'always', security: 'allowlist' } },
}
";

fn fixture() -> Fixture {
    let f = Fixture::new();
    *f.config.text.lock().unwrap() = CONFIG.to_owned();
    f
}

/// Calls the gateway tool with `arguments`.
async fn gateway(f: &Fixture, arguments: serde_json::Value) -> openclaw_tools::ToolOutcome {
    f.call(&GatewayTool, arguments).await
}

#[tokio::test]
async fn schema_lookup_returns_the_sub_schema() {
    let f = fixture();
    let outcome = gateway(
        &f,
        json!({ "action": "config.schema.lookup", "path": "tools.exec.applyPatch" }),
    )
    .await;
    let text = ok_text(&outcome);
    assert!(
        text.starts_with("Schema of tools.exec.applyPatch:\n{"),
        "{text}"
    );
    assert!(text.contains("\"allowModels\""), "{text}");
    let unknown = gateway(
        &f,
        json!({ "action": "config.schema.lookup", "path": "tools.nope" }),
    )
    .await;
    assert!(error_text(&unknown).starts_with("the config has no key tools.nope"));
    let missing = gateway(&f, json!({ "action": "config.schema.lookup" })).await;
    assert!(error_text(&missing).starts_with("invalid arguments for gateway: path: required"));
}

#[tokio::test]
async fn an_unrelated_patch_is_validated_and_written() {
    let f = fixture();
    let outcome = gateway(&f, json!({ "action": "config.patch", "patch": { "agents": { "defaults": { "userTimezone": "Europe/Berlin" } } } })).await;
    assert_eq!(
        ok_text(&outcome),
        "Config updated. Changed: agents.defaults.userTimezone. The file was rewritten as \
         formatted JSON: its comments and formatting were not kept."
    );
    let written: serde_json::Value = serde_json::from_str(&f.config.text()).unwrap();
    assert_eq!(
        written,
        json!({
            "agents": { "defaults": { "workspace": "~/ws", "userTimezone": "Europe/Berlin" } },
            "tools": { "exec": { "ask": "always", "security": "allowlist" } }
        })
    );
    assert_eq!(f.config.writes(), 1);
}

#[tokio::test]
async fn a_patch_given_as_json5_text_works_too() {
    let f = fixture();
    let outcome = gateway(&f, json!({ "action": "config.patch", "raw": "{ agents: { defaults: { userTimezone: 'UTC' } } }" })).await;
    assert!(
        ok_text(&outcome).starts_with("Config updated. Changed: agents.defaults.userTimezone.")
    );
    assert!(f.config.text().contains("\"userTimezone\": \"UTC\""));
}

#[tokio::test]
async fn patches_touching_exec_approval_or_security_are_refused() {
    let cases = [
        (
            json!({ "tools": { "exec": { "ask": "off" } } }),
            "tools.exec.ask",
        ),
        (
            json!({ "tools": { "exec": { "security": "full" } } }),
            "tools.exec.security",
        ),
        (
            json!({ "tools": { "exec": { "ask": null } } }),
            "tools.exec.ask",
        ),
        (
            json!({ "tools": null }),
            "tools.exec.ask, tools.exec.security",
        ),
        (
            json!({ "tools": { "exec": { "safeBins": ["rm"] } } }),
            "tools.exec.safeBins",
        ),
        (json!({ "gateway": { "bind": "0.0.0.0" } }), "gateway.bind"),
    ];
    for (patch, keys) in cases {
        let f = fixture();
        let outcome = gateway(
            &f,
            json!({ "action": "config.patch", "patch": patch.clone() }),
        )
        .await;
        let text = error_text(&outcome);
        assert!(
            text.starts_with(&format!(
                "refused: this change would modify {keys}, which the agent may not change"
            )),
            "{patch}: {text}"
        );
        assert!(text.ends_with("Nothing was written."), "{text}");
        assert_eq!(f.config.writes(), 0);
        assert_eq!(f.config.text(), CONFIG);
    }
}

#[tokio::test]
async fn legacy_bash_aliases_count_as_the_exec_settings() {
    // Without tools.exec.ask, a tools.bash.ask would become the effective value.
    let f = Fixture::new();
    *f.config.text.lock().unwrap() = "{ tools: { bash: { ask: 'always' } } }".to_owned();
    let outcome = gateway(
        &f,
        json!({ "action": "config.patch", "patch": { "tools": { "bash": { "ask": "off" } } } }),
    )
    .await;
    assert!(error_text(&outcome).contains("would modify tools.exec.ask"));
    // Deleting tools.exec.ask so that a different tools.bash.ask takes over is a change.
    *f.config.text.lock().unwrap() =
        "{ tools: { exec: { ask: 'always' }, bash: { ask: 'off' } } }".to_owned();
    let outcome = gateway(
        &f,
        json!({ "action": "config.patch", "patch": { "tools": { "exec": { "ask": null } } } }),
    )
    .await;
    assert!(error_text(&outcome).contains("would modify tools.exec.ask"));
    // Moving the same value from the legacy spelling to the canonical one changes no
    // effective value, but both spellings are off the allowlist: refused all the same.
    *f.config.text.lock().unwrap() = "{ tools: { bash: { ask: 'always' } } }".to_owned();
    let outcome = gateway(&f, json!({ "action": "config.patch", "patch": { "tools": { "bash": null, "exec": { "ask": "always" } } } })).await;
    assert!(
        error_text(&outcome)
            .starts_with("refused: this change would modify tools.bash.ask, tools.exec.ask,")
    );
    assert_eq!(f.config.writes(), 0);
}

#[tokio::test]
async fn apply_is_refused_for_exec_settings_and_accepted_otherwise() {
    let refused = [
        "{ agents: { defaults: { workspace: '~/ws' } }, tools: { exec: { ask: 'off', security: 'allowlist' } } }",
        "{ agents: { defaults: { workspace: '~/ws' } }, tools: { exec: { security: 'allowlist' }, bash: { ask: 'off' } } }",
        "{ agents: { defaults: { workspace: '~/ws' } } }",
    ];
    for raw in refused {
        let f = fixture();
        let outcome = gateway(&f, json!({ "action": "config.apply", "raw": raw })).await;
        assert!(error_text(&outcome).starts_with("refused: "), "{raw}");
        assert_eq!(f.config.text(), CONFIG);
    }
    let f = fixture();
    let raw = "// still mine\n{\n  agents: { defaults: { workspace: '~/ws', userTimezone: 'UTC' } },\n  tools: { exec: { ask: 'always', security: 'allowlist' } },\n}";
    let outcome = gateway(&f, json!({ "action": "config.apply", "raw": raw })).await;
    assert_eq!(
        ok_text(&outcome),
        "Config replaced (changed: agents.defaults.userTimezone)."
    );
    assert_eq!(f.config.text(), format!("{raw}\n"));
}

#[tokio::test]
async fn invalid_configs_are_rejected_with_located_errors() {
    let f = fixture();
    let patched = gateway(&f, json!({ "action": "config.patch", "patch": { "agents": { "defaults": { "workspac": "x" } } } })).await;
    let text = error_text(&patched);
    assert!(
        text.starts_with("the new config is invalid, so nothing was written:\n"),
        "{text}"
    );
    assert!(
        text.contains(
            r#"agents.defaults.workspac (line 5, column 7): unknown key; did you mean "workspace"?"#
        ),
        "{text}"
    );
    let applied = gateway(
        &f,
        json!({ "action": "config.apply", "raw": "{ tools: { exec: { ask: 'sometimes' } } }" }),
    )
    .await;
    let text = error_text(&applied);
    assert!(
        text.contains("tools.exec.ask (line 1, column 25)"),
        "{text}"
    );
    let syntax = gateway(&f, json!({ "action": "config.apply", "raw": "{ tools: " })).await;
    assert!(
        error_text(&syntax).contains("invalid JSON5"),
        "{}",
        error_text(&syntax)
    );
    assert_eq!(f.config.writes(), 0);
    assert_eq!(f.config.text(), CONFIG);
}

#[tokio::test]
async fn other_actions_are_not_supported() {
    let f = fixture();
    for action in ["restart", "update.run", "config.get"] {
        let outcome = gateway(&f, json!({ "action": action })).await;
        assert!(
            error_text(&outcome).starts_with(&format!(
                "gateway action {action} is not supported by this runtime."
            )),
            "{action}"
        );
    }
    let unknown = gateway(&f, json!({ "action": "explode" })).await;
    assert!(
        error_text(&unknown)
            .starts_with("invalid arguments for gateway: action: unknown variant `explode`")
    );
    let scalar = gateway(&f, json!({ "action": "config.patch", "patch": 3 })).await;
    assert_eq!(
        error_text(&scalar),
        "invalid arguments for gateway: patch: must be an object (use config.apply to replace the whole file)"
    );
}

/// Deny by default (lesson L15 e): regression cases from the public reports. Exec approval
/// paths and their legacy aliases (openclaw#55682, #62001), global prompt and model defaults
/// (#90145), auth, bind, channels, models and workspaces (#11945), and everything outside the
/// short allowlist (#70726). Each is refused through both config.patch and config.apply,
/// and nothing is written.
#[tokio::test]
async fn only_allowlisted_settings_can_be_changed() {
    let refused = [
        (
            json!({ "tools": { "exec": { "security": "full" } } }),
            "tools.exec.security",
        ),
        (
            json!({ "tools": { "exec": { "askFallback": "full" } } }),
            "tools.exec.askFallback",
        ),
        (
            json!({ "tools": { "exec": { "safeBins": ["sh"] } } }),
            "tools.exec.safeBins",
        ),
        (
            json!({ "tools": { "exec": { "pathPrepend": ["./bin"] } } }),
            "tools.exec.pathPrepend",
        ),
        (
            json!({ "tools": { "exec": { "host": "gateway" } } }),
            "tools.exec.host",
        ),
        (
            json!({ "tools": { "exec": { "timeoutSec": 5 } } }),
            "tools.exec.timeoutSec",
        ),
        (
            json!({ "tools": { "exec": { "applyPatch": { "workspaceOnly": false } } } }),
            "tools.exec.applyPatch.workspaceOnly",
        ),
        // Legacy aliases: the effective tools.exec value is what is reported; where
        // tools.exec already decides, the alias is refused as itself.
        (
            json!({ "tools": { "bash": { "security": "full" } } }),
            "tools.bash.security",
        ),
        (
            json!({ "tools": { "exec": { "security": null }, "bash": { "security": "full" } } }),
            "tools.exec.security",
        ),
        (
            json!({ "tools": { "bash": { "safeBins": ["rm"] } } }),
            "tools.exec.safeBins",
        ),
        (
            json!({ "tools": { "bash": { "askFallback": "full" } } }),
            "tools.exec.askFallback",
        ),
        // Tool policy and elevated exec.
        (json!({ "tools": { "allow": ["*"] } }), "tools.allow"),
        (
            json!({ "tools": { "elevated": { "enabled": true } } }),
            "tools.elevated.enabled",
        ),
        // Global prompt and model defaults.
        (
            json!({ "agents": { "defaults": { "model": { "primary": "evil/model" } } } }),
            "agents.defaults.model.primary",
        ),
        (
            json!({ "agents": { "defaults": { "heartbeat": { "prompt": "obey" } } } }),
            "agents.defaults.heartbeat.prompt",
        ),
        // Workspaces, sandboxes, agents, runtimes.
        (
            json!({ "agents": { "defaults": { "workspace": "/" } } }),
            "agents.defaults.workspace",
        ),
        (
            json!({ "agents": { "defaults": { "sandbox": { "mode": "off" } } } }),
            "agents.defaults.sandbox.mode",
        ),
        (
            json!({ "agents": { "list": [{ "id": "evil", "workspace": "/" }] } }),
            "agents.list[evil].workspace",
        ),
        // Who may talk to the agent, and the gateway itself.
        (
            json!({ "channels": { "telegram": { "allowFrom": ["*"] } } }),
            "channels.telegram.allowFrom",
        ),
        (
            json!({ "gateway": { "auth": { "mode": "none" } } }),
            "gateway.auth",
        ),
        (json!({ "gateway": { "bind": "0.0.0.0" } }), "gateway.bind"),
        (
            json!({ "tools": { "fs": { "workspaceOnly": false } } }),
            "tools.fs.workspaceOnly",
        ),
        (
            json!({ "commands": { "ownerAllowFrom": ["*"] } }),
            "commands.ownerAllowFrom",
        ),
        // Memory search: pointing the embeddings elsewhere would send the private memory
        // text, and the provider's key with it, to that endpoint.
        (
            json!({ "agents": { "defaults": { "memorySearch": { "remote": { "baseUrl": "https://collector.example/v1" } } } } }),
            "agents.defaults.memorySearch.remote.baseUrl",
        ),
        (
            json!({ "agents": { "defaults": { "memorySearch": { "provider": "openai-compatible", "model": "m", "remote": { "baseUrl": "https://collector.example/v1" } } } } }),
            "agents.defaults.memorySearch",
        ),
        (
            json!({ "models": { "providers": { "openai": { "api": "openai-completions", "baseUrl": "https://collector.example/v1" } } } }),
            "models.providers",
        ),
    ];
    for (patch, key) in refused {
        let f = fixture();
        let outcome = gateway(
            &f,
            json!({ "action": "config.patch", "patch": patch.clone() }),
        )
        .await;
        let text = error_text(&outcome);
        assert!(
            text.starts_with(&format!("refused: this change would modify {key}")),
            "{patch}: {text}"
        );
        assert!(text.contains("not a missing permission"), "{text}");
        assert_eq!(f.config.writes(), 0, "{patch}");
        // The same change as a whole new file.
        let mut whole: serde_json::Value = json5::from_str(CONFIG).unwrap();
        merge(&mut whole, &patch);
        let outcome = gateway(
            &f,
            json!({ "action": "config.apply", "raw": whole.to_string() }),
        )
        .await;
        let text = error_text(&outcome);
        assert!(text.starts_with("refused: "), "apply {patch}: {text}");
        assert_eq!(f.config.writes(), 0, "{patch}");
        assert_eq!(f.config.text(), CONFIG);
    }
}

/// The per-agent exec policy and safe-bin profiles are exec approvals too.
#[tokio::test]
async fn per_agent_exec_settings_and_safe_bin_profiles_are_refused() {
    for (patch, key) in [
        (
            json!({ "agents": { "list": [{ "id": "main", "tools": { "exec": { "security": "full" } } }] } }),
            "agents.list[main].tools.exec.security",
        ),
        (
            json!({ "agents": { "list": [{ "id": "main", "tools": { "exec": { "safeBins": ["sed"] } } }] } }),
            "agents.list[main].tools.exec.safeBins",
        ),
        (
            json!({ "tools": { "exec": { "safeBinProfiles": { "sed": { "maxPositional": 1 } } } } }),
            "tools.exec.safeBinProfiles",
        ),
        (
            json!({ "tools": { "exec": { "allowlist": ["/usr/bin/*"] } } }),
            "tools.exec.allowlist",
        ),
        (
            json!({ "agents": { "list": [{ "id": "main", "tools": { "exec": { "allowlist": ["/**"] } } }] } }),
            "agents.list[main].tools.exec.allowlist",
        ),
    ] {
        let f = Fixture::new();
        let config = "{ agents: { list: [{ id: 'main' }] } }";
        *f.config.text.lock().unwrap() = config.to_owned();
        let outcome = gateway(
            &f,
            json!({ "action": "config.patch", "patch": patch.clone() }),
        )
        .await;
        let text = error_text(&outcome);
        assert!(
            text.starts_with(&format!("refused: this change would modify {key}")),
            "{patch}: {text}"
        );
        assert_eq!(f.config.writes(), 0, "{patch}");
    }
}

#[tokio::test]
async fn allowlisted_settings_can_be_changed() {
    let f = Fixture::new();
    *f.config.text.lock().unwrap() =
        "{ agents: { list: [{ id: 'main', thinkingDefault: 'low' }] }, channels: { telegram: { allowFrom: ['42'] } } }"
            .to_owned();
    let outcome = gateway(&f, json!({ "action": "config.patch", "patch": {
                "agents": {
                    "defaults": { "userTimezone": "Europe/Berlin", "humanDelay": { "mode": "natural" } },
                    "list": [{ "id": "main", "thinkingDefault": "high", "groupChat": { "mentionPatterns": ["@bot"] } }]
                },
                "messages": { "groupChat": { "visibleReplies": "automatic" } },
                "channels": { "telegram": { "allowFrom": ["42"], "textChunkLimit": 2000 } }
            } })).await;
    let text = ok_text(&outcome);
    assert!(text.starts_with("Config updated. Changed: "), "{text}");
    assert_eq!(f.config.writes(), 1);
    // Adding an agent, or reordering the list, is not on the allowlist.
    let outcome = gateway(&f, json!({ "action": "config.patch", "patch": { "agents": { "list": [
                { "id": "main", "thinkingDefault": "high", "groupChat": { "mentionPatterns": ["@bot"] } },
                { "id": "second" }
            ] } } })).await;
    assert!(
        error_text(&outcome).starts_with("refused: this change would modify agents.list,"),
        "{}",
        error_text(&outcome)
    );
    assert_eq!(f.config.writes(), 1);
}

/// RFC 7396 merge, for building whole files from patches.
fn merge(target: &mut serde_json::Value, patch: &serde_json::Value) {
    match (target, patch) {
        (serde_json::Value::Object(fields), serde_json::Value::Object(changes)) => {
            for (key, change) in changes {
                if change.is_null() {
                    fields.remove(key);
                } else {
                    merge(
                        fields.entry(key.clone()).or_insert(serde_json::Value::Null),
                        change,
                    );
                }
            }
        }
        (target, patch) => *target = patch.clone(),
    }
}
