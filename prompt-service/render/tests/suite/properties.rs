//! Property tests (lesson L1): no panics, determinism, order independence
//! and a stable prefix that per-turn inputs never touch.

use std::collections::BTreeSet;

use prompt_render::{
    ChannelInfo, ChatType, ContextFile, HeartbeatInfo, Prepared, PromptSurface, ReactionLevel,
    ReasoningLevel, RenderInput, ReplyDelivery, RuntimeInfo, RuntimeVersion, SessionKind, Skill,
    SkillVersionSource, ThinkLevel, Tool, TurnKind, WORKSPACE_FILES, render, validate,
};
use proptest::prelude::*;

fn text(max: usize) -> impl Strategy<Value = String> {
    proptest::collection::vec(any::<char>(), 0..max).prop_map(|v| v.into_iter().collect())
}

fn tools() -> impl Strategy<Value = Vec<Tool>> {
    let names = proptest::collection::btree_set("[a-z_]{1,12}", 0..24);
    names.prop_flat_map(|names: BTreeSet<String>| {
        let n = names.len();
        (
            Just(names),
            proptest::collection::vec((text(60), prop::bool::ANY), n),
        )
            .prop_map(|(names, extra)| {
                names
                    .into_iter()
                    .zip(extra)
                    .map(|(name, (summary, with_schema))| Tool {
                        json_schema: if with_schema {
                            format!(r#"{{"type":"object","properties":{{"{name}":{{}}}}}}"#)
                        } else {
                            String::new()
                        },
                        name,
                        summary,
                    })
                    .collect()
            })
    })
}

fn skills() -> impl Strategy<Value = Vec<Skill>> {
    proptest::collection::btree_map("[a-z][a-z-]{0,10}", (text(80), text(200)), 0..8).prop_map(
        |m| {
            m.into_iter()
                .map(|(name, (description, content))| Skill {
                    location: format!("/skills/{name}/SKILL.md"),
                    name,
                    description,
                    version_source: SkillVersionSource::Content(content.into_bytes()),
                })
                .collect()
        },
    )
}

/// Memory-like text: entries and headings, some scoped to projects, some
/// with malformed scopes, and the legacy heartbeat block.
fn curated_text() -> impl Strategy<Value = String> {
    let line = prop::sample::select(vec![
        "- a global fact",
        "- an alpha fact <!-- project: github.com/acme/a -->",
        "- a shared fact <!-- project: github.com/acme/a; B -->",
        "- a broken scope <!-- project: x<y -->",
        "- never closed <!-- project: B",
        "## Heading",
        "  continued line",
        "",
        "",
        "Default heartbeat prompt:\n`Read HEARTBEAT.md if it exists. Reply HEARTBEAT_OK.`",
    ]);
    proptest::collection::vec(line, 0..60).prop_map(|lines| lines.join("\n"))
}

fn files() -> impl Strategy<Value = Vec<ContextFile>> {
    let known = proptest::sample::subsequence(WORKSPACE_FILES, 0..=WORKSPACE_FILES.len());
    let extra = proptest::collection::btree_set("[a-z]{1,8}", 0..3);
    (known, extra).prop_flat_map(|(known, extra)| {
        let paths: Vec<String> = known
            .iter()
            .map(|s| (*s).to_owned())
            .chain(extra.into_iter().map(|e| format!("notes/{e}.md")))
            .collect();
        let n = paths.len();
        (
            Just(paths),
            proptest::collection::vec(
                (
                    prop_oneof![text(3_000), curated_text()],
                    prop::bool::weighted(0.15),
                ),
                n,
            ),
        )
            .prop_map(|(paths, bodies)| {
                paths
                    .into_iter()
                    .zip(bodies)
                    .map(|(path, (content, missing))| ContextFile {
                        path,
                        content,
                        missing,
                    })
                    .collect()
            })
    })
}

prop_compose! {
    fn per_turn()(
        channel in prop::sample::select(vec!["", "telegram", "discord", "webchat", "slack"]),
        chat in prop::sample::select(vec![ChatType::Unspecified, ChatType::Direct, ChatType::Group, ChatType::Channel]),
        caps in proptest::collection::vec("[a-zA-Z]{1,10}", 0..4),
        tool_only in any::<bool>(),
        hb_enabled in any::<bool>(),
        hb_section in any::<bool>(),
        hb_prompt in text(80),
        kind in prop::sample::select(vec![SessionKind::Main, SessionKind::Heartbeat]),
        extra in text(120),
        tts in text(60),
        host in "[a-z]{0,8}",
        model in "[a-z/.-]{0,16}",
        reaction in prop::sample::select(vec![ReactionLevel::Unspecified, ReactionLevel::Minimal, ReactionLevel::Extensive]),
        think in prop::sample::select(vec![ThinkLevel::Off, ThinkLevel::High]),
        reasoning in prop::sample::select(vec![ReasoningLevel::Off, ReasoningLevel::Stream]),
        extra_turn in extra_turn(),
    ) -> PerTurn {
        let (native, display_name, known_channels, session_key, versions, date, surface, mark) = extra_turn;
        PerTurn {
            channel: ChannelInfo {
                name: channel.into(),
                chat_type: chat,
                capabilities: caps,
                native_approvals: native,
                reply_delivery: if tool_only { ReplyDelivery::MessageToolOnly } else { ReplyDelivery::Automatic },
                message_tool_hints: Vec::new(),
                display_name,
                known_channels,
            },
            heartbeat: HeartbeatInfo {
                enabled: hb_enabled,
                prompt: hb_prompt,
                include_system_prompt_section: hb_section,
                serves_session: [None, Some(true), Some(false)][host.len() % 3],
            },
            turn_kind: [
                TurnKind::Unspecified,
                TurnKind::User,
                TurnKind::Heartbeat,
                TurnKind::WakeUp,
                TurnKind::Cron,
                TurnKind::Subagent,
            ][model.len() % 6],
            kind,
            extra,
            tts,
            runtime: RuntimeInfo { host, model, session_key, versions, ..RuntimeInfo::default() },
            reaction,
            think,
            reasoning,
            date,
            surface,
            mark,
        }
    }
}

/// The per-turn inputs issue by issue added: explicit native approvals,
/// the channel's display name and known channels, the session key, version
/// keys, the date, the prompt surface and the relocatable marker.
type ExtraTurn = (
    Option<bool>,
    String,
    Vec<String>,
    String,
    Vec<RuntimeVersion>,
    String,
    PromptSurface,
    bool,
);

fn extra_turn() -> impl Strategy<Value = ExtraTurn> {
    (
        prop::option::of(any::<bool>()),
        text(16),
        proptest::collection::vec("[a-z]{1,8}", 0..3),
        "[a-z:]{0,20}",
        proptest::collection::btree_map("[a-z][a-z0-9_]{0,8}", "[0-9.]{1,6}", 0..3).prop_map(|m| {
            m.into_iter()
                .filter(|(k, _)| {
                    ![
                        "os", "host", "repo", "arch", "model", "shell", "agent", "channel",
                        "session", "runtime", "thinking",
                    ]
                    .contains(&k.as_str())
                })
                .map(|(key, value)| RuntimeVersion { key, value })
                .collect::<Vec<_>>()
        }),
        prop::sample::select(vec!["", "2026-12-01", "2027-02-28", "2024-02-29"]),
        prop::sample::select(vec![
            PromptSurface::Unspecified,
            PromptSurface::EmbeddedRun,
            PromptSurface::Cli,
            PromptSurface::Preview,
            PromptSurface::Compaction,
        ]),
        any::<bool>(),
    )
        .prop_map(|(a, b, c, d, e, f, g, h)| (a, b, c, d, e, f.to_owned(), g, h))
}

#[derive(Debug, Clone)]
struct PerTurn {
    channel: ChannelInfo,
    heartbeat: HeartbeatInfo,
    turn_kind: TurnKind,
    kind: SessionKind,
    extra: String,
    tts: String,
    runtime: RuntimeInfo,
    reaction: ReactionLevel,
    think: ThinkLevel,
    reasoning: ReasoningLevel,
    date: String,
    surface: PromptSurface,
    mark: bool,
}

impl PerTurn {
    fn apply(self, input: &mut RenderInput) {
        input.channel = self.channel;
        input.heartbeat = self.heartbeat;
        input.turn_kind = self.turn_kind;
        input.session_kind = self.kind;
        input.extra_system_prompt = self.extra;
        input.tts_hint = self.tts;
        input.runtime = self.runtime;
        input.reaction_level = self.reaction;
        input.think_level = self.think;
        input.reasoning_level = self.reasoning;
        input.current_date = self.date;
        input.prompt_surface = self.surface;
        input.mark_relocatable = self.mark;
    }
}

prop_compose! {
    fn stable_input()(
        tools in tools(),
        skills in skills(),
        files in files(),
        name in text(20),
        owners in proptest::collection::vec(text(16), 0..3),
        tz in prop::sample::select(vec!["", "UTC", "Asia/Tokyo", "America/New_York"]),
        per_file in prop::sample::select(vec![0u32, 200, 2_000]),
        total in prop::sample::select(vec![0u32, 500, 5_000]),
        project_keys in proptest::collection::vec(prop::sample::select(vec!["github.com/acme/a", "path:/home/user/ws", "B"]), 0..3),
        flags in (any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>()),
    ) -> RenderInput {
        let mut input = RenderInput::new("/home/user/ws");
        input.agent_id = "main".into();
        input.agent_name = name;
        input.tools = tools;
        input.skills = skills;
        input.context_files = files;
        input.owner_ids = owners;
        input.user_timezone = tz.into();
        input.bootstrap_limits.max_chars_per_file = per_file;
        input.bootstrap_limits.total_max_chars = total;
        input.active_project_keys = project_keys.into_iter().map(str::to_owned).collect();
        let (acp, gpt5_heartbeat, sandboxed, network) = flags;
        input.acp_enabled = acp;
        input.gpt5_heartbeat_guidance = gpt5_heartbeat;
        input.sandbox.enabled = sandboxed;
        input.sandbox.engine = if network { "bubblewrap".into() } else { String::new() };
        input.sandbox.network = network;
        input
    }
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 256,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    /// Any valid input renders (no panic, no error), twice identically.
    #[test]
    fn renders_and_is_deterministic(input in stable_input(), turn in per_turn()) {
        let mut input = input;
        turn.apply(&mut input);
        let a = render(&input);
        prop_assert!(a.is_ok(), "{:?}", a.err());
        prop_assert_eq!(validate(&input), Ok(()));
        let b = render(&input);
        prop_assert_eq!(a, b);
    }

    /// Shuffling tools, skills or context files changes nothing at all.
    #[test]
    fn request_order_never_matters(
        input in stable_input(),
        seed in any::<u64>(),
    ) {
        let base = render(&input);
        let mut shuffled = input.clone();
        let mut rng = seed;
        shuffle(&mut shuffled.tools, &mut rng);
        shuffle(&mut shuffled.skills, &mut rng);
        shuffle(&mut shuffled.context_files, &mut rng);
        let other = render(&shuffled);
        prop_assert!(base.is_ok());
        prop_assert_eq!(base.map(|r| r.text), other.map(|r| r.text));
    }

    /// P-24, lesson L2: per-turn inputs (channel, reactions, heartbeat,
    /// runtime line, extra context, reasoning, heartbeat runs) never change
    /// the stable prefix hash.
    #[test]
    fn per_turn_inputs_never_change_the_stable_prefix(
        input in stable_input(),
        a in per_turn(),
        b in per_turn(),
    ) {
        let mut first = input.clone();
        a.apply(&mut first);
        let mut second = input;
        b.apply(&mut second);
        let (first, second) = (render(&first), render(&second));
        prop_assert!(first.is_ok() && second.is_ok());
        prop_assert_eq!(
            first.map(|r| r.stable_prefix_sha256),
            second.map(|r| r.stable_prefix_sha256)
        );
    }

    /// A prepared input renders every turn exactly as the whole input
    /// renders, however the turn inputs vary between turns.
    #[test]
    fn prepared_turns_equal_whole_renders(
        input in stable_input(),
        turns in proptest::collection::vec(per_turn(), 1..6),
    ) {
        let mut stable = input.clone();
        let _ = stable.take_turn();
        let prepared = Prepared::new(stable);
        prop_assert!(prepared.is_ok(), "{:?}", prepared.err());
        let Ok(prepared) = prepared else { return Ok(()) };
        for turn in turns {
            let mut whole = input.clone();
            turn.apply(&mut whole);
            // The session kind belongs to the prepared input, not the turn.
            whole.session_kind = input.session_kind;
            let mut turn_only = whole.clone();
            let turn_inputs = turn_only.take_turn();
            prop_assert_eq!(&turn_only, prepared.input());
            prop_assert_eq!(prepared.render_turn(&turn_inputs), render(&whole));
        }
    }

    /// Arbitrary (possibly invalid) inputs never panic: they render or are
    /// refused with a named field, and `validate` says exactly what
    /// `render` says of them.
    #[test]
    fn arbitrary_input_never_panics(
        workspace in text(30),
        tz in text(20),
        paths in proptest::collection::vec(text(20), 0..4),
        tool_names in proptest::collection::vec(text(10), 0..4),
        schema in text(40),
        newer in proptest::collection::vec(text(24), 6),
    ) {
        let mut input = RenderInput::new(workspace);
        input.user_timezone = tz;
        // The text inputs of the newer topics, arbitrary.
        input.current_date = newer[0].clone();
        input.active_project_keys = vec![newer[1].clone()];
        input.sandbox.enabled = true;
        input.sandbox.browser_bridge_url = newer[2].clone();
        input.sandbox.engine = newer[3].clone();
        input.runtime.versions = vec![RuntimeVersion { key: newer[4].clone(), value: newer[5].clone() }];
        input.channel.display_name = newer[5].clone();
        input.context_files = paths.into_iter().map(|path| ContextFile { path, content: "x".into(), missing: false }).collect();
        input.tools = tool_names.into_iter().map(|name| Tool { name, summary: String::new(), json_schema: schema.clone() }).collect();
        let rendered = render(&input);
        if let Err(e) = &rendered {
            prop_assert!(!e.field().is_empty());
        }
        prop_assert_eq!(validate(&input), rendered.map(|_| ()));
    }
}

/// Deterministic Fisher-Yates driven by a splitmix64 seed.
fn shuffle<T>(items: &mut [T], state: &mut u64) {
    for i in (1..items.len()).rev() {
        *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = *state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        let j = usize::try_from(z % (i as u64 + 1)).unwrap_or(0);
        items.swap(i, j);
    }
}
