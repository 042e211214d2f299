//! Golden snapshots of the whole prompt, one per mode and variant. A prompt
//! change and its snapshot update land together (`INSTA_UPDATE=always` to
//! regenerate, then review the diff).

use prompt_render::{
    ChannelInfo, ChatType, Contribution, DelegationMode, Gpt5Personality, PromptMode, RenderInput,
    ReplyDelivery, SandboxInfo, SessionKind, WorkspaceAccess, gpt5_contribution, render,
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
    let mut out = r.text.clone();
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
