//! Tool policy as tables: profiles, groups, wildcards, aliases, alsoAllow, deny wins,
//! byProvider, the plan tool switch and apply_patch availability.

use std::collections::BTreeMap;

use openclaw_config::raw::{ToolPolicyConfig, ToolProfile};
use openclaw_config::resolve::{ApplyPatchSettings, ToolPolicy};
use openclaw_tools::{allowed_tools, apply_patch_available};

fn policy() -> ToolPolicy {
    ToolPolicy {
        profile: None,
        allow: None,
        also_allow: Vec::new(),
        deny: Vec::new(),
        by_provider: BTreeMap::new(),
        fs_workspace_only: false,
        elevated_enabled: false,
    }
}

fn strings(names: &[&str]) -> Vec<String> {
    names.iter().map(|s| (*s).to_owned()).collect()
}

fn patch_settings() -> ApplyPatchSettings {
    ApplyPatchSettings {
        enabled: true,
        workspace_only: true,
        allow_models: Vec::new(),
    }
}

struct Case {
    name: &'static str,
    policy: ToolPolicy,
    provider: &'static str,
    model: &'static str,
    plan_tool: bool,
    extra: &'static [&'static str],
    expected: &'static [&'static str],
}

fn case(name: &'static str, expected: &'static [&'static str]) -> Case {
    Case {
        name,
        policy: policy(),
        provider: "openai",
        model: "gpt-5.4",
        plan_tool: false,
        extra: &[],
        expected,
    }
}

const ALL_CORE: &[&str] = &[
    "read",
    "write",
    "edit",
    "apply_patch",
    "exec",
    "process",
    "gateway",
    "session_status",
];

#[test]
fn policy_table() {
    let by_provider = |key: &str, entry: ToolPolicyConfig| {
        let mut p = policy();
        p.by_provider.insert(key.to_owned(), entry);
        p
    };
    let cases = vec![
        case("no policy: every core tool", ALL_CORE),
        Case {
            provider: "anthropic",
            model: "claude-opus-4",
            ..case(
                "no apply_patch for other providers by default",
                &[
                    "read",
                    "write",
                    "edit",
                    "exec",
                    "process",
                    "gateway",
                    "session_status",
                ],
            )
        },
        Case {
            policy: ToolPolicy {
                profile: Some(ToolProfile::Full),
                ..policy()
            },
            ..case("full is no restriction", ALL_CORE)
        },
        Case {
            policy: ToolPolicy {
                profile: Some(ToolProfile::Minimal),
                ..policy()
            },
            ..case("minimal", &["session_status"])
        },
        Case {
            policy: ToolPolicy {
                profile: Some(ToolProfile::Coding),
                ..policy()
            },
            extra: &["memory_search", "message", "image", "web_search"],
            ..case(
                "coding: fs, runtime, sessions, memory, image",
                &[
                    "read",
                    "write",
                    "edit",
                    "apply_patch",
                    "exec",
                    "process",
                    "session_status",
                    "memory_search",
                    "image",
                ],
            )
        },
        Case {
            policy: ToolPolicy {
                profile: Some(ToolProfile::Messaging),
                ..policy()
            },
            extra: &["message", "sessions_list", "memory_get"],
            ..case("messaging", &["message", "sessions_list", "session_status"])
        },
        Case {
            policy: ToolPolicy {
                profile: Some(ToolProfile::Minimal),
                also_allow: strings(&["read", "Web_*"]),
                ..policy()
            },
            extra: &["web_search", "web_fetch"],
            ..case(
                "alsoAllow widens the profile",
                &["read", "web_search", "web_fetch", "session_status"],
            )
        },
        Case {
            policy: ToolPolicy {
                profile: Some(ToolProfile::Coding),
                deny: strings(&["exec"]),
                ..policy()
            },
            ..case(
                "deny removes one tool of a group",
                &[
                    "read",
                    "write",
                    "edit",
                    "apply_patch",
                    "process",
                    "session_status",
                ],
            )
        },
        Case {
            policy: ToolPolicy {
                deny: strings(&["group:fs"]),
                ..policy()
            },
            ..case(
                "deny a group",
                &["exec", "process", "gateway", "session_status"],
            )
        },
        Case {
            policy: ToolPolicy {
                allow: Some(strings(&["READ", " Exec "])),
                ..policy()
            },
            ..case(
                "allow is case-insensitive; exec brings apply_patch",
                &["read", "apply_patch", "exec"],
            )
        },
        Case {
            policy: ToolPolicy {
                allow: Some(strings(&["bash", "apply-patch"])),
                ..policy()
            },
            ..case("aliases", &["apply_patch", "exec"])
        },
        Case {
            policy: ToolPolicy {
                allow: Some(strings(&["*"])),
                deny: strings(&["*_status", "apply_patch"]),
                ..policy()
            },
            ..case(
                "wildcards, deny wins",
                &["read", "write", "edit", "exec", "process", "gateway"],
            )
        },
        Case {
            policy: ToolPolicy {
                allow: Some(strings(&["read"])),
                deny: strings(&["read"]),
                ..policy()
            },
            ..case("deny wins over allow", &[])
        },
        Case {
            policy: ToolPolicy {
                allow: Some(Vec::new()),
                ..policy()
            },
            ..case("an explicitly empty allowlist allows nothing", &[])
        },
        Case {
            policy: ToolPolicy {
                allow: Some(strings(&["group:nope"])),
                ..policy()
            },
            ..case("an unknown group matches nothing", &[])
        },
        Case {
            policy: ToolPolicy {
                profile: Some(ToolProfile::Coding),
                ..policy()
            },
            plan_tool: true,
            ..case(
                "the plan tool switch adds update_plan",
                &[
                    "read",
                    "write",
                    "edit",
                    "apply_patch",
                    "exec",
                    "process",
                    "session_status",
                    "update_plan",
                ],
            )
        },
        Case {
            policy: ToolPolicy {
                allow: Some(strings(&["update_plan", "read"])),
                ..policy()
            },
            ..case("update_plan does not exist without the switch", &["read"])
        },
        Case {
            policy: ToolPolicy {
                profile: Some(ToolProfile::Coding),
                allow: Some(strings(&["gateway", "read"])),
                ..policy()
            },
            ..case(
                "allow filters after the profile; it does not widen it",
                &["read"],
            )
        },
        Case {
            policy: by_provider(
                "OpenAI",
                ToolPolicyConfig {
                    deny: Some(strings(&["exec", "process"])),
                    ..ToolPolicyConfig::default()
                },
            ),
            ..case(
                "byProvider by provider, case-insensitive",
                &[
                    "read",
                    "write",
                    "edit",
                    "apply_patch",
                    "gateway",
                    "session_status",
                ],
            )
        },
        Case {
            policy: by_provider(
                "openai",
                ToolPolicyConfig {
                    deny: Some(strings(&["exec"])),
                    ..ToolPolicyConfig::default()
                },
            ),
            provider: "anthropic",
            model: "claude-opus-4",
            ..case(
                "another provider's entry does not apply",
                &[
                    "read",
                    "write",
                    "edit",
                    "exec",
                    "process",
                    "gateway",
                    "session_status",
                ],
            )
        },
        Case {
            policy: {
                let mut p = by_provider(
                    "openai/GPT-5.4",
                    ToolPolicyConfig {
                        profile: Some(ToolProfile::Minimal),
                        also_allow: Some(strings(&["read"])),
                        ..ToolPolicyConfig::default()
                    },
                );
                p.by_provider.insert(
                    "openai".into(),
                    ToolPolicyConfig {
                        deny: Some(strings(&["read"])),
                        ..ToolPolicyConfig::default()
                    },
                );
                p
            },
            ..case(
                "provider/model wins over provider",
                &["read", "session_status"],
            )
        },
        Case {
            policy: by_provider(
                "anthropic/claude-sonnet",
                ToolPolicyConfig {
                    deny: Some(strings(&["read"])),
                    ..ToolPolicyConfig::default()
                },
            ),
            provider: "openrouter",
            model: "anthropic/claude-sonnet",
            ..case(
                "a model id with a slash does not select another provider",
                &[
                    "read",
                    "write",
                    "edit",
                    "exec",
                    "process",
                    "gateway",
                    "session_status",
                ],
            )
        },
        Case {
            extra: &["Read", "memory_get", "cron", " "],
            ..case(
                "extra tools are listed in display order, duplicates dropped",
                &[
                    "read",
                    "write",
                    "edit",
                    "apply_patch",
                    "exec",
                    "process",
                    "cron",
                    "gateway",
                    "session_status",
                    "memory_get",
                ],
            )
        },
    ];
    for c in cases {
        let got = allowed_tools(
            &c.policy,
            c.provider,
            c.model,
            c.plan_tool,
            &patch_settings(),
            c.extra,
        );
        assert_eq!(got, c.expected, "{}", c.name);
    }
}

#[test]
fn apply_patch_availability_table() {
    let settings = |enabled: bool, models: &[&str]| ApplyPatchSettings {
        enabled,
        workspace_only: true,
        allow_models: strings(models),
    };
    let cases = [
        (settings(true, &[]), "openai", "gpt-5.4", true),
        (settings(true, &[]), "OpenAI", "gpt-4o", true),
        (settings(true, &[]), "openai-codex", "gpt-5.3-codex", true),
        (settings(true, &[]), "codex", "gpt-5.4", true),
        (settings(true, &[]), "azure-openai", "gpt-5.4", true),
        (settings(true, &[]), "anthropic", "claude-opus-4", false),
        (settings(true, &[]), "openrouter", "openai/gpt-5.4", false),
        (settings(false, &[]), "openai", "gpt-5.4", false),
        (settings(true, &["gpt-5.4"]), "openai", "gpt-5.4", true),
        (settings(true, &["gpt-5.4"]), "openai", "gpt-5.5", false),
        (
            settings(true, &["openai/gpt-5.4"]),
            "OPENAI",
            "gpt-5.4",
            true,
        ),
        (
            settings(true, &["openai/gpt-5.4"]),
            "azure-openai",
            "gpt-5.4",
            false,
        ),
        (
            settings(true, &["anthropic/claude-opus-4"]),
            "anthropic",
            "claude-opus-4",
            true,
        ),
        (settings(false, &["gpt-5.4"]), "openai", "gpt-5.4", false),
    ];
    for (settings, provider, model, expected) in cases {
        assert_eq!(
            apply_patch_available(&settings, provider, model),
            expected,
            "{provider}/{model} with {settings:?}"
        );
    }
    let off = settings(false, &[]);
    let got = allowed_tools(&policy(), "openai", "gpt-5.4", false, &off, &[]);
    assert!(!got.contains(&"apply_patch".to_owned()));
}

/// The model request lists a run's tools in `allowed_tools` order and the prompt's Tooling
/// section lists them in the renderer's order: fed the same tools (every tool of the table, in
/// reverse, and two it does not know), both give one order.
#[test]
fn the_request_lists_tools_in_the_order_the_prompt_does() {
    let mut extra: Vec<&str> = prompt_render::TOOL_TABLE
        .iter()
        .rev()
        .map(|(name, _)| *name)
        .collect();
    extra.extend(["zeta_tool", "Alpha_tool"]);
    let allowed = allowed_tools(
        &policy(),
        "openai",
        "gpt-5.4",
        true,
        &patch_settings(),
        &extra,
    );
    assert_eq!(allowed.len(), prompt_render::TOOL_TABLE.len() + 2);
    assert_eq!(allowed.first().map(String::as_str), Some("read"));
    assert_eq!(allowed.last().map(String::as_str), Some("zeta_tool"));
    let mut input = prompt_render::RenderInput::new("/workspace");
    input.tools = allowed
        .iter()
        .rev()
        .map(|name| prompt_render::Tool {
            name: name.clone(),
            ..prompt_render::Tool::default()
        })
        .collect();
    let rendered = prompt_render::render(&input).expect("renders");
    let listed: Vec<String> = rendered
        .tools
        .entries
        .iter()
        .map(|e| e.name.clone())
        .collect();
    assert_eq!(listed, allowed);
    let memory: Vec<&str> = allowed
        .iter()
        .map(String::as_str)
        .filter(|n| n.starts_with("memory_"))
        .collect();
    assert_eq!(memory, ["memory_search", "memory_get"]);
}
