//! Fuzzing the render request conversion with proptest (cargo-fuzz needs a nightly
//! toolchain and `cargo install`, which CI does not have): `RenderSystemPromptRequest` (as
//! wire bytes or as a message) through `input_from_request` and the renderer, exactly the
//! RPC's path (`render_request`). Properties:
//! - never a panic: every outcome is a response or a `ServerError`, and every error maps to a
//!   gRPC status that is not `INTERNAL`;
//! - bounded output: the encoded response is at most [`OUTPUT_FACTOR`] times the encoded
//!   request plus [`OUTPUT_SLACK`] bytes (bootstrap and skills caps keep it so however large
//!   the files and lists are).
//!
//! Cases per property default to a few hundred (a few seconds in all); set `PROPTEST_CASES`
//! for long runs (README "Fuzzing").

use openclaw_proto::prompt::v1 as pb;
use prompt_render::{Renderer, fixtures};
use std::sync::Arc;

use prompt_server::{
    PromptServiceImpl, RenderReply, input_from_request, render_request, request_from_input,
    turn_from_request,
};
use proptest::prelude::*;
use proptest::test_runner::{TestCaseError, TestRunner};
use prost::Message;
use tonic::Code;

/// The encoded response is at most this many times the encoded request ...
const OUTPUT_FACTOR: usize = 8;
/// ... plus this many bytes (the fixed text of a full prompt). A request string can appear
/// up to about seven times in a response (in the prompt twice, as for a missing file's path
/// in its heading and its notice, then again in the stable/dynamic split, the sections and
/// the layers, and in the file report), so the factor is 8. Observed: the realistic request
/// (50 KB) gives 75 KB; the worst case the long runs found was a 35 KB request whose only
/// content was a 30 KB missing-file path, giving 228 KB (6.6 times).
const OUTPUT_SLACK: usize = 64 * 1024;

fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Renders `request` and checks the outcome's properties.
fn check(renderer: &Renderer, request: pb::RenderSystemPromptRequest) -> Result<(), TestCaseError> {
    let size = request.encoded_len();
    match render_request(renderer, request) {
        Ok(response) => {
            let out = response.encoded_len();
            prop_assert!(
                out <= OUTPUT_FACTOR * size + OUTPUT_SLACK,
                "a {size}-byte request gave a {out}-byte response"
            );
        }
        Err(error) => {
            let status = tonic::Status::from(error);
            prop_assert_ne!(status.code(), Code::Internal, "{}", status.message());
            prop_assert!(!status.message().is_empty());
        }
    }
    Ok(())
}

fn run<S: Strategy>(
    default_cases: u32,
    strategy: S,
    property: impl Fn(&Renderer, S::Value) -> Result<(), TestCaseError>,
) {
    // The memo on: its key and lookup are part of the RPC's path.
    let renderer = Renderer::new(64);
    let mut runner = TestRunner::new(ProptestConfig::with_cases(cases(default_cases)));
    if let Err(failure) = runner.run(&strategy, |value| property(&renderer, value)) {
        panic!("{failure}");
    }
}

fn base() -> pb::RenderSystemPromptRequest {
    request_from_input(&fixtures::realistic())
}

/// Enum values in and out of range.
fn enum_value() -> impl Strategy<Value = i32> {
    prop_oneof![4 => 0i32..8, 1 => any::<i32>(), 1 => Just(-1)]
}

/// Strings of the kinds that break text handling: empty, unicode, control characters,
/// markdown and fence characters, long.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        "\\PC{0,24}",
        "[ -~\n\t\r\u{0}\u{200b}\u{202e}`#*<>{}]{0,64}",
        (1usize..64).prop_map(|n| "é".repeat(n * 512)),
        prop::sample::select(vec![
            "/", "/w", "relative", "/a/../b", "~", "C:\\w", "/w\n/x"
        ])
        .prop_map(str::to_owned),
    ]
}

fn tool() -> impl Strategy<Value = pb::Tool> {
    (
        text(),
        text(),
        prop_oneof![text(), Just("{\"type\":\"object\"}".to_owned())],
    )
        .prop_map(|(name, summary, json_schema)| pb::Tool {
            name,
            summary,
            json_schema,
        })
}

fn skill() -> impl Strategy<Value = pb::Skill> {
    (
        text(),
        text(),
        text(),
        prop::collection::vec(any::<u8>(), 0..256),
        text(),
    )
        .prop_map(
            |(name, description, location, content, content_sha256)| pb::Skill {
                name,
                description,
                location,
                content,
                content_sha256,
            },
        )
}

fn context_file() -> impl Strategy<Value = pb::ContextFile> {
    (
        prop_oneof![
            text(),
            prop::sample::select(vec![
                "AGENTS.md",
                "SOUL.md",
                "TOOLS.md",
                "HEARTBEAT.md",
                "../x.md"
            ])
            .prop_map(str::to_owned),
        ],
        prop_oneof![text(), (1usize..8).prop_map(|n| "line\n".repeat(n * 4096))],
        any::<bool>(),
    )
        .prop_map(|(path, content, missing)| pb::ContextFile {
            path,
            content,
            missing,
        })
}

fn limit() -> impl Strategy<Value = u32> {
    prop_oneof![Just(0), Just(1), 0u32..100_000, Just(u32::MAX)]
}

/// One edit to a request; a case applies several to the realistic request.
#[derive(Debug, Clone)]
enum Edit {
    Enums(Vec<i32>),
    Workspace(String),
    Tools(Vec<pb::Tool>),
    Skills(Vec<pb::Skill>, u32, u32),
    Files(Vec<pb::ContextFile>, u32, u32),
    Texts(Vec<String>),
    Contribution(String, String),
    Channel(Vec<String>),
    /// The inputs of the newer prompt topics, arbitrary where text.
    Topics(Vec<i32>, Vec<String>),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        prop::collection::vec(enum_value(), 14).prop_map(Edit::Enums),
        text().prop_map(Edit::Workspace),
        prop::collection::vec(tool(), 0..24).prop_map(Edit::Tools),
        (prop::collection::vec(skill(), 0..24), limit(), limit())
            .prop_map(|(s, a, b)| Edit::Skills(s, a, b)),
        (
            prop::collection::vec(context_file(), 0..8),
            limit(),
            limit()
        )
            .prop_map(|(f, a, b)| Edit::Files(f, a, b)),
        prop::collection::vec(text(), 12).prop_map(Edit::Texts),
        (text(), text()).prop_map(|(a, b)| Edit::Contribution(a, b)),
        prop::collection::vec(text(), 0..6).prop_map(Edit::Channel),
        (
            prop::collection::vec(enum_value(), 8),
            prop::collection::vec(text(), 8)
        )
            .prop_map(|(e, t)| Edit::Topics(e, t)),
    ]
}

fn apply(request: &mut pb::RenderSystemPromptRequest, edit: Edit) {
    match edit {
        Edit::Enums(v) => {
            request.prompt_mode = v[0];
            request.session_kind = v[1];
            request.think_level = v[2];
            request.reasoning_level = v[3];
            request.owner_display = v[4];
            request.delegation_mode = v[5];
            request.reaction_level = v[6];
            let time = request.user_time.get_or_insert_with(Default::default);
            time.time_format = v[7];
            let channel = request.channel.get_or_insert_with(Default::default);
            channel.chat_type = v[8];
            channel.reply_delivery_mode = v[9];
            request
                .sandbox
                .get_or_insert_with(Default::default)
                .workspace_access = v[10];
            request
                .memory
                .get_or_insert_with(Default::default)
                .citations_mode = v[11];
            request.bootstrap_truncation_notice = (v[12] % 3 != 0).then_some(v[12] % 2 == 0);
            request.include_safety_section = (v[13] % 3 != 0).then_some(v[13] % 2 == 0);
        }
        Edit::Workspace(dir) => request.workspace_dir = dir,
        Edit::Tools(tools) => request.tools = tools,
        Edit::Skills(skills, max_skills, max_chars) => {
            request.skills = skills;
            request.skills_limits = Some(pb::SkillsLimits {
                max_skills,
                max_chars,
            });
        }
        Edit::Files(files, per_file, total) => {
            request.context_files = files;
            request.bootstrap_limits = Some(pb::BootstrapLimits {
                max_chars_per_file: per_file,
                total_max_chars: total,
            });
        }
        Edit::Texts(t) => {
            request.extra_system_prompt = t[0].clone();
            request.workspace_notes = vec![t[1].clone(), t[2].clone()];
            request.owner_ids = vec![t[3].clone()];
            request.owner_display_secret = t[4].clone();
            request.tts_hint = t[5].clone();
            let identity = request.identity.get_or_insert_with(Default::default);
            identity.agent_id = t[6].clone();
            identity.name = t[7].clone();
            let runtime = request.runtime.get_or_insert_with(Default::default);
            runtime.model = t[8].clone();
            runtime.host = t[9].clone();
            request
                .user_time
                .get_or_insert_with(Default::default)
                .timezone = t[10].clone();
            request
                .heartbeat
                .get_or_insert_with(Default::default)
                .prompt = t[11].clone();
        }
        Edit::Contribution(stable_prefix, dynamic_suffix) => {
            request.provider_contribution = Some(pb::ProviderContribution {
                stable_prefix,
                dynamic_suffix,
                section_overrides: None,
            });
        }
        Edit::Channel(hints) => {
            let channel = request.channel.get_or_insert_with(Default::default);
            channel.capabilities = hints.clone();
            channel.message_tool_hints = hints;
        }
        Edit::Topics(e, t) => {
            request.prompt_surface = e[0];
            request.acp_enabled = e[1] % 2 == 0;
            request.gpt5_heartbeat_guidance = e[2] % 2 == 0;
            request.mark_relocatable_block = e[3] % 2 == 0;
            // A valid date most of the time, text otherwise.
            request.current_date = if e[4] % 3 == 0 {
                t[0].clone()
            } else {
                "2026-12-01".into()
            };
            request.active_project_keys = vec![t[1].clone()];
            let sandbox = request.sandbox.get_or_insert_with(Default::default);
            sandbox.enabled = e[5] % 2 == 0;
            sandbox.engine = t[2].clone();
            sandbox.browser_bridge_url = t[3].clone();
            sandbox.elevated = Some(pb::ElevatedInfo {
                default_level: e[6],
                full_access_available: e[7] % 2 == 0,
                full_access_blocked_reason: e[7],
            });
            let channel = request.channel.get_or_insert_with(Default::default);
            channel.native_approvals = (e[1] % 3 != 0).then_some(e[2] % 2 == 0);
            channel.display_name = t[4].clone();
            channel.known_channels = vec![t[5].clone()];
            let runtime = request.runtime.get_or_insert_with(Default::default);
            runtime.session_key = t[6].clone();
            runtime.versions = vec![pb::RuntimeVersion {
                key: t[7].clone(),
                value: "1".into(),
            }];
        }
    }
}

#[test]
fn edited_requests_never_panic_and_output_is_bounded() {
    run(
        256,
        prop::collection::vec(edit(), 1..6),
        |renderer, edits| {
            let mut request = base();
            for edit in edits {
                apply(&mut request, edit);
            }
            check(renderer, request)
        },
    );
}

/// `encoded` with a number of bytes in `flips` overwritten at random places.
fn corrupted(encoded: Vec<u8>, flips: std::ops::Range<usize>) -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), flips).prop_map(
        move |flips| {
            let mut bytes = encoded.clone();
            for (at, value) in flips {
                let i = at.index(bytes.len());
                bytes[i] = value;
            }
            bytes
        },
    )
}

#[test]
fn arbitrary_wire_bytes_never_panic() {
    // Random bytes, and the realistic request's bytes with random flips and cuts.
    let strategy = prop_oneof![
        prop::collection::vec(any::<u8>(), 0..2048),
        corrupted(base().encode_to_vec(), 1..16),
    ];
    run(512, strategy, |renderer, bytes| {
        if let Ok(request) = pb::RenderSystemPromptRequest::decode(bytes.as_slice()) {
            let _ = input_from_request(request.clone());
            check(renderer, request)?;
        }
        Ok(())
    });
}

/// The realistic request renders, and its output is well inside the bound (so the bound is
/// not vacuous).
#[test]
fn the_realistic_request_is_well_inside_the_bound() {
    let request = base();
    let size = request.encoded_len();
    let response = render_request(&Renderer::new(0), request).expect("renders");
    assert!(response.encoded_len() < OUTPUT_FACTOR * size + OUTPUT_SLACK / 4);
}

/// What a client gets: the encoded response, or the status code and message.
fn outcome_of_wire(reply: Result<RenderReply, tonic::Status>) -> Result<Vec<u8>, (Code, String)> {
    reply
        .map(|reply| {
            let mut wire = Vec::with_capacity(reply.encoded_len());
            reply.encode_raw(&mut wire);
            wire
        })
        .map_err(|s| (s.code(), s.message().to_owned()))
}

/// The same through the plain path: decode, convert, render, encode.
fn outcome_of_decoded(bytes: &[u8]) -> Result<Vec<u8>, (Code, String)> {
    match pb::RenderSystemPromptRequest::decode(bytes) {
        Ok(request) => render_request(&Renderer::new(0), request)
            .map(|response| response.encode_to_vec())
            .map_err(|e| {
                let status = tonic::Status::from(e);
                (status.code(), status.message().to_owned())
            }),
        Err(_) => Err((Code::InvalidArgument, String::new())),
    }
}

fn assert_same(
    got: Result<Vec<u8>, (Code, String)>,
    want: Result<Vec<u8>, (Code, String)>,
) -> Result<(), TestCaseError> {
    match (got, want) {
        (Ok(got), Ok(want)) => prop_assert!(got == want, "the responses differ"),
        // Malformed bytes: the plain decode error has no message to compare.
        (Err((code, _)), Err((want_code, want))) if want.is_empty() => {
            prop_assert_eq!(code, want_code);
        }
        (got, want) => prop_assert_eq!(got.map(|_| ()), want.map(|_| ())),
    }
    Ok(())
}

/// `bytes` through the served route's path and through the plain one give the same outcome.
fn same_both_ways(service: &PromptServiceImpl, bytes: &[u8]) -> Result<(), TestCaseError> {
    assert_same(
        outcome_of_wire(service.render_wire(bytes)),
        outcome_of_decoded(bytes),
    )
}

/// The served route's path (`render_wire`: stable parts remembered by their bytes, only the
/// turn fields of a recognised request decoded) gives exactly what decoding the request and
/// `render_request` give: for sequences of edited requests that share stable parts (memo
/// hits with other turn fields, misses, invalid turn fields on a hit, invalid stable parts),
/// with a memo small enough to evict.
#[test]
fn the_wire_path_equals_the_decoded_path() {
    let bases = [base(), {
        let mut other = base();
        other.tools.truncate(3);
        other
    }];
    let step = (0usize..2, prop::collection::vec(edit(), 0..3));
    run(96, prop::collection::vec(step, 1..10), move |_, steps| {
        let service = PromptServiceImpl::with_memo(Arc::new(Renderer::new(2)), 2)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        for (pick, edits) in steps {
            let mut request = bases[pick].clone();
            for edit in edits {
                apply(&mut request, edit);
            }
            same_both_ways(&service, &request.encode_to_vec())?;
        }
        Ok(())
    });
}

/// The same for arbitrary and corrupted bytes, each sent twice (the second time the stable
/// part may be remembered).
#[test]
fn the_wire_path_equals_the_decoded_path_on_corrupt_bytes() {
    let strategy = corrupted(base().encode_to_vec(), 0..8);
    let service = PromptServiceImpl::with_memo(Arc::new(Renderer::new(4)), 4)
        .unwrap_or_else(|e| panic!("the service starts: {e}"));
    run(256, strategy, move |_, bytes| {
        for _ in 0..2 {
            same_both_ways(&service, &bytes)?;
        }
        Ok(())
    });
}

/// `turn_from_request` converts exactly the turn inputs `input_from_request` converts.
#[test]
fn turn_conversion_agrees_with_the_whole_conversion() {
    run(256, prop::collection::vec(edit(), 0..4), |_, edits| {
        let mut request = base();
        for edit in edits {
            apply(&mut request, edit);
        }
        if let Ok(mut input) = input_from_request(request.clone()) {
            let turn = turn_from_request(request);
            prop_assert_eq!(turn.ok(), Some(input.take_turn()));
        }
        Ok(())
    });
}
