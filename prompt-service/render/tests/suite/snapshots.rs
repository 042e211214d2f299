//! Golden snapshots of the whole prompt, one per mode and variant. A prompt
//! change and its snapshot update land together (`INSTA_UPDATE=always` to
//! regenerate, then review the diff).

use prompt_render::{
    ChannelInfo, ChatType, Contribution, DelegationMode, Elevated, ElevatedLevel, FullAccessBlock,
    Gpt5Personality, PromptMode, ReactionLevel, RenderInput, ReplyDelivery, RuntimeVersion,
    SandboxInfo, SessionKind, WorkspaceAccess, gpt5_contribution, render,
};

use prompt_render::fixtures::{self as fixture, WORKSPACE, file};

/// A compact base: short workspace files so snapshots stay readable.
fn base() -> RenderInput {
    let mut input = fixture::realistic();
    input.skills.clear();
    input.context_files = vec![
        file(
            "AGENTS.md",
            "# AGENTS.md\nWork carefully; ask before deleting anything.".into(),
        ),
        file("SOUL.md", "# SOUL.md\nCalm, precise, a little dry.".into()),
        file(
            "TOOLS.md",
            "# TOOLS.md\nThe printer is called `office`.".into(),
        ),
        file("IDENTITY.md", "Name: Ada".into()),
        file(
            "USER.md",
            "The user is Grace; she prefers short answers.".into(),
        ),
        file("HEARTBEAT.md", "- Check the inbox.".into()),
        file("MEMORY.md", "- Grace's standup is at 09:30.".into()),
    ];
    input
}

fn snapshot(input: &RenderInput) -> String {
    let r = match render(input) {
        Ok(r) => r,
        Err(e) => panic!("render failed: {e}"),
    };
    let mut out = r.text.as_str().to_owned();
    out.push_str("\n\n==== report ====\n");
    out.push_str(&format!(
        "mode: {}\nstable_prefix_sha256: {}\nchars: {} (~{} tokens)\n",
        r.mode.as_str(),
        r.stable_prefix_sha256,
        r.chars,
        r.approx_tokens
    ));
    for s in &r.sections {
        out.push_str(&format!(
            "section {:<36} {:<7} {:>6}\n",
            s.id,
            s.layer.as_str(),
            s.chars
        ));
    }
    for f in &r.context.files {
        out.push_str(&format!(
            "file {:<14} {:?} raw={} injected={} cause={:?}\n",
            f.path, f.status, f.raw_chars, f.injected_chars, f.cause
        ));
    }
    if r.skills.offered > 0 {
        out.push_str(&format!(
            "skills listed={} omitted={:?} compact={}\n",
            r.skills.listed, r.skills.omitted, r.skills.compact
        ));
    }
    out
}

macro_rules! snap {
    ($name:ident, $input:expr) => {
        #[test]
        fn $name() {
            insta::assert_snapshot!(stringify!($name), snapshot(&$input));
        }
    };
}

snap!(mode_full, base());
snap!(mode_minimal_cron, {
    let mut i = base();
    i.session_kind = SessionKind::Cron;
    i
});
snap!(mode_none, {
    let mut i = base();
    i.prompt_mode = Some(PromptMode::None);
    i
});
snap!(variant_provider_override, {
    let mut i = base();
    i.contribution = Contribution {
        stable_prefix: "Provider note: prefer concise tool arguments.".into(),
        dynamic_suffix: "Provider note for this turn: the fast tier is active.".into(),
        tool_call_style:
            "## Tool Call Style\nCall tools directly; never describe a call you are about to make."
                .into(),
        ..Contribution::default()
    };
    i
});
snap!(variant_gpt5_friendly, {
    let mut i = base();
    i.runtime.model = "openai/gpt-5.5".into();
    i.contribution = gpt5_contribution(Gpt5Personality::Friendly);
    i
});
snap!(variant_gpt5_off, {
    let mut i = base();
    i.runtime.model = "openai/gpt-5.5".into();
    i.contribution = gpt5_contribution(Gpt5Personality::Off);
    i
});
snap!(variant_prefer_delegation, {
    let mut i = base();
    i.delegation_mode = DelegationMode::Prefer;
    i
});
snap!(variant_sandbox, {
    let mut i = base();
    i.sandbox = SandboxInfo {
        enabled: true,
        container_workspace_dir: "/workspace".into(),
        workspace_access: WorkspaceAccess::ReadOnly,
        agent_workspace_mount: "/agent".into(),
        ..SandboxInfo::default()
    };
    i
});
snap!(variant_native_approvals, {
    let mut i = base();
    i.channel = ChannelInfo {
        name: "discord".into(),
        chat_type: ChatType::Group,
        capabilities: vec!["components".into(), "native-approvals".into()],
        native_approvals: Some(true),
        reply_delivery: ReplyDelivery::Automatic,
        ..ChannelInfo::default()
    };
    i
});
snap!(variant_heartbeat, {
    let mut i = base();
    i.session_kind = SessionKind::Heartbeat;
    i
});
snap!(variant_subagent, {
    let mut i = base();
    i.session_kind = SessionKind::Subagent;
    i.extra_system_prompt = "You were spawned by the main agent to research train times. Report back with a short summary.".into();
    i
});
snap!(variant_truncated_memory, {
    let mut i = base();
    i.context_files.retain(|f| f.path != "MEMORY.md");
    i.context_files
        .push(file("MEMORY.md", fixture::prose("long-term memory", 3_000)));
    i.bootstrap_limits.max_chars_per_file = 1_000;
    i
});
snap!(variant_missing_soul, {
    let mut i = base();
    i.context_files.retain(|f| f.path != "SOUL.md");
    i.context_files.push(prompt_render::ContextFile {
        path: "SOUL.md".into(),
        content: String::new(),
        missing: true,
    });
    i
});
snap!(variant_three_skills, {
    let mut i = base();
    i.skills = fixture::skills();
    i
});

#[test]
fn snapshot_workspace_is_the_fixture_workspace() {
    assert!(base().workspace_dir == WORKSPACE);
}

// ---- one snapshot per newer topic and mode ----------------------------------
//
// Each shows only the sections a topic concerns, in full and in minimal
// mode (a subagent run), so the text a model reads for that topic can be
// reviewed on its own. `none` mode carries none of them: one snapshot with
// every new input set shows that.

/// The selected sections of a render, found by their headings and measured
/// by the report, plus which of them the mode left out.
fn sections_snapshot(input: &RenderInput, ids: &[&str]) -> String {
    let r = match render(input) {
        Ok(r) => r,
        Err(e) => panic!("render failed: {e}"),
    };
    let mut out = format!("mode: {}\n", r.mode.as_str());
    for id in ids {
        let found: Vec<_> = r
            .sections
            .iter()
            .filter(|s| s.id == *id || s.id.starts_with(&format!("{id}:")))
            .collect();
        if found.is_empty() {
            out.push_str(&format!("\n[{id}: not in this prompt]\n"));
        }
        for s in found {
            let layer = s.layer.as_str();
            let start = r
                .text
                .find(&format!("{}\n", s.heading))
                .filter(|_| !s.heading.is_empty());
            let Some(start) = start else {
                out.push_str(&format!(
                    "\n[{} ({layer}): {} chars, no heading]\n",
                    s.id, s.chars
                ));
                continue;
            };
            let text: String = r.text[start..].chars().take(s.chars as usize).collect();
            out.push_str(&format!("\n[{} ({layer})]\n{text}\n", s.id));
        }
    }
    if r.relocatable_offset < r.text.len() {
        let block = &r.text[r.relocatable_offset..];
        let first = block.lines().next().unwrap_or("");
        out.push_str(&format!("\nrelocatable block starts at: {first}\n"));
    }
    out
}

macro_rules! topic {
    ($name:ident, [$($id:literal),+], $input:expr) => {
        mod $name {
            use super::*;

            fn input() -> RenderInput {
                $input
            }

            #[test]
            fn full() {
                insta::assert_snapshot!(
                    concat!("topic_", stringify!($name), "_full"),
                    sections_snapshot(&input(), &[$($id),+])
                );
            }

            #[test]
            fn minimal() {
                let mut i = input();
                i.session_kind = SessionKind::Subagent;
                insta::assert_snapshot!(
                    concat!("topic_", stringify!($name), "_minimal"),
                    sections_snapshot(&i, &[$($id),+])
                );
            }
        }
    };
}

topic!(promised_work, ["promised_work"], base());
topic!(promised_work_no_means, ["promised_work"], {
    let mut i = base();
    i.tools
        .retain(|t| ["read", "write", "edit"].contains(&t.name.as_str()));
    i
});
topic!(runtime_context, ["runtime_context"], base());
topic!(date, ["date_time", "current_date"], {
    let mut i = base();
    i.current_date = "2026-12-01".into();
    i
});
topic!(sandbox_engine, ["workspace", "sandbox"], {
    let mut i = base();
    i.sandbox = SandboxInfo {
        enabled: true,
        container_workspace_dir: "/workspace".into(),
        workspace_access: WorkspaceAccess::ReadWrite,
        agent_workspace_mount: "/agent".into(),
        engine: "bubblewrap".into(),
        network: false,
        browser_bridge_url: "http://127.0.0.1:9222".into(),
        ..SandboxInfo::default()
    };
    i.acp_enabled = true;
    i
});
topic!(sandbox_elevated, ["sandbox"], {
    let mut i = base();
    i.sandbox = SandboxInfo {
        enabled: true,
        container_workspace_dir: "/workspace".into(),
        engine: "bubblewrap".into(),
        network: true,
        host_browser_allowed: true,
        elevated_available: true,
        elevated: Elevated {
            default_level: ElevatedLevel::Ask,
            full_access_available: false,
            full_access_blocked: FullAccessBlock::Channel,
        },
        ..SandboxInfo::default()
    };
    i
});
topic!(
    gpt5_heartbeat,
    ["provider:interaction_style", "gpt5_heartbeat"],
    {
        let mut i = base();
        i.runtime.model = "openai/gpt-5.5".into();
        i.contribution = gpt5_contribution(Gpt5Personality::Friendly);
        i.gpt5_heartbeat_guidance = true;
        i
    }
);
topic!(delegation, ["delegation"], {
    let mut i = base();
    i.delegation_mode = DelegationMode::Prefer;
    i
});
topic!(skills, ["skills"], {
    let mut i = base();
    i.skills = fixture::skills();
    i
});
topic!(safety, ["safety"], base());
topic!(messaging, ["messaging", "output_directives"], {
    let mut i = base();
    i.channel.known_channels = vec!["discord".into(), "telegram".into()];
    i
});
topic!(
    messaging_no_channel,
    ["messaging", "output_directives", "reactions"],
    {
        let mut i = base();
        i.channel = ChannelInfo::default();
        i.reaction_level = ReactionLevel::Minimal;
        i
    }
);
topic!(project_scoped_memory, ["project_context"], {
    let mut i = base();
    i.context_files.retain(|f| f.path == "MEMORY.md");
    i.context_files = vec![file(
        "MEMORY.md",
        "- Grace's standup is at 09:30.\n- The app deploys on Fridays. <!-- project: github.com/grace/app -->\n- The blog is on Hugo. <!-- project: github.com/grace/blog -->".into(),
    )];
    i.active_project_keys = vec!["github.com/grace/app".into()];
    i
});
topic!(legacy_heartbeat_block, ["project_context"], {
    let mut i = base();
    i.context_files = vec![file(
        "AGENTS.md",
        "# AGENTS.md\n\nDefault heartbeat prompt:\n`Read HEARTBEAT.md if it exists (workspace context). Follow it strictly. If nothing needs attention, reply HEARTBEAT_OK.`\n\n\n\n## Rules\nAsk before deleting anything.".into(),
    )];
    i
});
topic!(runtime_line, ["current_date", "runtime"], {
    let mut i = base();
    i.current_date = "2026-12-01".into();
    i.runtime.versions.push(RuntimeVersion {
        key: "prompt_service".into(),
        value: "0.1.0".into(),
    });
    i.mark_relocatable = true;
    i
});
topic!(
    native_approvals_from_the_table,
    ["tool_call_style", "approvals"],
    {
        let mut i = base();
        i.channel.native_approvals = None;
        i
    }
);
topic!(heartbeat_message_tool_only, ["messaging", "heartbeats"], {
    let mut i = base();
    i.channel.reply_delivery = ReplyDelivery::MessageToolOnly;
    i
});
topic!(documentation, ["documentation"], base());
topic!(extra_context, ["extra_context"], {
    let mut i = base();
    i.extra_system_prompt = "Be brief in this group.".into();
    i
});

#[test]
fn topic_extra_context_cron() {
    let mut i = base();
    i.extra_system_prompt = "The job: summarise the inbox.".into();
    i.session_kind = SessionKind::Cron;
    insta::assert_snapshot!(
        "topic_extra_context_cron",
        sections_snapshot(&i, &["extra_context"])
    );
}

/// Every newer input set at once, in each mode: the whole prompt, read as
/// the model reads it.
fn every_topic() -> RenderInput {
    let mut i = base();
    i.skills = fixture::skills();
    i.delegation_mode = DelegationMode::Prefer;
    i.runtime.model = "openai/gpt-5.5".into();
    i.contribution = gpt5_contribution(Gpt5Personality::Friendly);
    i.gpt5_heartbeat_guidance = true;
    i.sandbox = SandboxInfo {
        enabled: true,
        container_workspace_dir: "/workspace".into(),
        workspace_access: WorkspaceAccess::ReadWrite,
        agent_workspace_mount: "/agent".into(),
        engine: "bubblewrap".into(),
        network: false,
        elevated: Elevated {
            default_level: ElevatedLevel::Unspecified,
            full_access_available: false,
            full_access_blocked: FullAccessBlock::Runtime,
        },
        ..SandboxInfo::default()
    };
    i.acp_enabled = true;
    i.active_project_keys = vec!["github.com/grace/app".into()];
    i.context_files.retain(|f| f.path != "MEMORY.md");
    i.context_files.push(file(
        "MEMORY.md",
        "- Grace's standup is at 09:30.\n- The app deploys on Fridays. <!-- project: github.com/grace/app -->\n- The blog is on Hugo. <!-- project: github.com/grace/blog -->".into(),
    ));
    i.current_date = "2026-12-01".into();
    i.channel.known_channels = vec!["discord".into(), "telegram".into()];
    i.channel.native_approvals = None;
    i.reaction_level = ReactionLevel::Minimal;
    i
}

snap!(every_topic_full, every_topic());
snap!(every_topic_minimal, {
    let mut i = every_topic();
    i.session_kind = SessionKind::Subagent;
    i.extra_system_prompt = "You were started to check the deploy log. Report what failed.".into();
    i
});
snap!(every_topic_none, {
    let mut i = every_topic();
    i.prompt_mode = Some(PromptMode::None);
    i
});

/// The full-mode snapshot's size (`mode_full`) is pinned: wording that grows it without adding a
/// fact shows up here as a reviewed change, not as drift. No OpenClaw render of this fixture
/// is recorded to compare with, so this is our own ceiling (11,269 characters before the
/// sender-metadata wording and the trims that paid for it).
#[test]
fn the_full_mode_snapshot_stays_within_its_size() {
    const CEILING: u32 = 11_200;
    let r = render(&base()).expect("render");
    assert_eq!(r.chars as usize, r.text.chars().count());
    assert!(r.chars <= CEILING, "{} chars, ceiling {CEILING}", r.chars);
}
