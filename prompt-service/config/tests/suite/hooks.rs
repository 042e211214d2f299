//! `hooks.bootstrap` and `hooks.beforePromptBuild`: each form resolves per agent, and every
//! malformed entry is refused at load with its key named.

use std::time::Duration;

use openclaw_config::raw::{HookOnError, HookPlacement};
use openclaw_config::resolve::{BootstrapHook, HookCommand, PromptBuildHook};
use openclaw_config::{ErrorKind, NoEnv};

use super::support::{invalid, keep, paths_and_messages, valid};

const CONFIG: &str = r#"{
  hooks: {
    bootstrap: [
      { replace: "SOUL.md", with: "personas/pirate.md" },
      { drop: "TOOLS.md" },
      { add: "NOTES.md", from: "notes/x.md" },
      { command: ["python3", "hooks/files.py"], timeoutMs: 250, onError: "skip" },
    ],
    beforePromptBuild: [
      { text: "Speak plainly." },
      { from: "prompts/rules.md", placement: "stable" },
      { command: ["hooks/extra"] },
    ],
    // OpenClaw's webhook settings sit beside them, untouched.
    enabled: true,
    mappings: [{ match: { path: "gmail" } }],
  },
  agents: {
    list: [
      { id: "main" },
      { id: "quiet", hooks: { bootstrap: [] } },
      { id: "other", hooks: { beforePromptBuild: [{ text: "Only here." }] } },
    ],
  },
}"#;

#[test]
fn bootstrap_hook_config_resolves_every_form_in_order() {
    let config = valid(CONFIG);
    let hooks = config.hooks("main");
    let forms: Vec<_> = hooks.bootstrap.iter().map(|h| h.form.clone()).collect();
    assert_eq!(
        forms,
        [
            BootstrapHook::Replace {
                name: "SOUL.md".into(),
                with: "personas/pirate.md".into()
            },
            BootstrapHook::Drop {
                name: "TOOLS.md".into()
            },
            BootstrapHook::Add {
                name: "NOTES.md".into(),
                from: "notes/x.md".into()
            },
            BootstrapHook::Command(HookCommand {
                argv: vec!["python3".into(), "hooks/files.py".into()],
                timeout: Duration::from_millis(250),
                on_error: HookOnError::Skip,
            }),
        ]
    );
    let keys: Vec<_> = hooks.bootstrap.iter().map(|h| h.key.as_str()).collect();
    assert_eq!(
        keys,
        [
            "hooks.bootstrap[0]",
            "hooks.bootstrap[1]",
            "hooks.bootstrap[2]",
            "hooks.bootstrap[3]"
        ]
    );
}

#[test]
fn prompt_build_hook_config_defaults_to_dynamic_placement_and_five_seconds() {
    let config = valid(CONFIG);
    let forms: Vec<_> = config
        .hooks("main")
        .before_prompt_build
        .into_iter()
        .map(|h| h.form)
        .collect();
    assert_eq!(
        forms,
        [
            PromptBuildHook::Text {
                text: "Speak plainly.".into(),
                placement: HookPlacement::Dynamic
            },
            PromptBuildHook::File {
                from: "prompts/rules.md".into(),
                placement: HookPlacement::Stable
            },
            PromptBuildHook::Command(HookCommand {
                argv: vec!["hooks/extra".into()],
                timeout: Duration::from_secs(5),
                on_error: HookOnError::Fail,
            }),
        ]
    );
}

#[test]
fn bootstrap_hook_config_per_agent_list_replaces_the_shared_one() {
    let config = valid(CONFIG);
    // `bootstrap: []` turns the shared file hooks off; its prompt hooks are still shared.
    let quiet = config.hooks("quiet");
    assert!(quiet.bootstrap.is_empty());
    assert_eq!(quiet.before_prompt_build.len(), 3);
    // An agent's own prompt hooks replace the shared ones and name their own key.
    let other = config.hooks("OTHER");
    assert_eq!(other.bootstrap.len(), 4);
    assert_eq!(
        other
            .before_prompt_build
            .iter()
            .map(|h| (h.key.as_str(), h.form.clone()))
            .collect::<Vec<_>>(),
        [(
            "agents.list[2].hooks.beforePromptBuild[0]",
            PromptBuildHook::Text {
                text: "Only here.".into(),
                placement: HookPlacement::Dynamic
            }
        )]
    );
    // No hooks at all: nothing runs.
    let none = valid("{}").hooks("main");
    assert!(none.bootstrap.is_empty() && none.before_prompt_build.is_empty());
}

#[test]
fn bootstrap_hook_config_errors_name_the_key() {
    let text = r#"{
  hooks: {
    bootstrap: [
      { replace: "SOUL.md" },
      { drop: "TOOLS.md", add: "X.md", from: "x.md" },
      { add: "NOTES.md", from: "../outside.md" },
      { replace: "/etc/passwd", with: "a.md" },
      { command: [] },
      { command: ["hooks/x"], timeoutMs: 0 },
      { drop: "TOOLS.md", timeoutMs: 10 },
      {},
      { drop: "TOOLS.md", dorp: 1 },
    ],
  },
  agents: { list: [{ id: "main", hooks: { bootstrap: [{ add: "~/x.md", from: "x.md" }] } }] },
}"#;
    let errors = invalid(text, &Default::default(), &keep());
    let got: Vec<(String, ErrorKind, String)> = errors
        .iter()
        .map(|e| (e.path.clone(), e.kind, e.message.clone()))
        .collect();
    let expect = |path: &str, needle: &str| {
        assert!(
            got.iter().any(|(p, _, m)| p == path && m.contains(needle)),
            "no error at {path} containing {needle:?} in {got:#?}"
        );
    };
    expect("hooks.bootstrap[0]", "a \"replace\" hook needs \"with\"");
    expect("hooks.bootstrap[1]", "this one has drop and add");
    expect("hooks.bootstrap[2].from", "leaves the workspace");
    expect(
        "hooks.bootstrap[3].replace",
        "not relative to the workspace",
    );
    expect("hooks.bootstrap[4].command", "needs a program");
    expect(
        "hooks.bootstrap[5].timeoutMs",
        "timeoutMs must be 1 to 120000",
    );
    expect(
        "hooks.bootstrap[6].timeoutMs",
        "\"timeoutMs\" does not belong to a \"drop\" hook",
    );
    expect("hooks.bootstrap[7]", "a hook needs exactly one of");
    expect("hooks.bootstrap[8].dorp", "unknown key");
    expect(
        "agents.list[0].hooks.bootstrap[0].add",
        "not relative to the workspace",
    );
    assert_eq!(got.len(), 10, "{got:#?}");
}

#[test]
fn prompt_build_hook_config_errors_name_the_key() {
    let text = r#"{
  hooks: {
    beforePromptBuild: [
      { text: "a", from: "b.md" },
      { text: "a", placement: "top" },
      { command: ["x"], placement: "stable" },
      { from: "a/../../b.md" },
      { command: ["x"], onError: "ignore" },
    ],
  },
}"#;
    let errors = invalid(text, &Default::default(), &keep());
    let got = paths_and_messages(&errors);
    let expect = |path: &str, needle: &str| {
        assert!(
            got.iter().any(|(p, m)| *p == path && m.contains(needle)),
            "no error at {path} containing {needle:?} in {got:#?}"
        );
    };
    expect("hooks.beforePromptBuild[0]", "this one has text and from");
    expect("hooks.beforePromptBuild[1].placement", "top");
    expect(
        "hooks.beforePromptBuild[2].placement",
        "\"placement\" does not belong to a \"command\" hook",
    );
    expect("hooks.beforePromptBuild[3].from", "leaves the workspace");
    expect("hooks.beforePromptBuild[4].onError", "ignore");
    assert_eq!(got.len(), 5, "{got:#?}");
    // The same text without the bad entries loads.
    assert!(openclaw_config::load("{ hooks: {} }", &NoEnv, &keep()).is_ok());
}
