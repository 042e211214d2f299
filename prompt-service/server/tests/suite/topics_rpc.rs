//! The inputs of the newer prompt topics over a real socket: each bad value
//! is refused naming its field, per-turn ones never move the stable prefix,
//! the surface is echoed but never rendered, and the relocatable block and
//! the none-mode text are where the response says.

use openclaw_proto::prompt::v1 as pb;
use tonic::Code;

use super::harness::Server;

const EXAMPLE: &str = include_str!("../../examples/render-request.json5");

fn example() -> pb::RenderSystemPromptRequest {
    prompt_server::parse_request(EXAMPLE).expect("example parses")
}

async fn render(
    server: &Server,
    req: pb::RenderSystemPromptRequest,
) -> pb::RenderSystemPromptResponse {
    server
        .client()
        .await
        .render_system_prompt(req)
        .await
        .expect("renders")
        .into_inner()
}

type Edit = fn(&mut pb::RenderSystemPromptRequest);

/// Every rule on a new field: the bad value and the field the status names.
#[tokio::test]
async fn each_bad_new_field_is_invalid_argument_naming_it() {
    let server = Server::start().await;
    let cases: &[(&str, Edit)] = &[
        ("current_date", |r| r.current_date = "2026-13-01".into()),
        ("current_date", |r| r.current_date = "yesterday".into()),
        ("prompt_surface", |r| r.prompt_surface = 99),
        ("active_project_keys[1]", |r| {
            r.active_project_keys = vec!["github.com/acme/a".into(), "x<y".into()];
        }),
        ("sandbox.browser_bridge_url", |r| {
            r.sandbox
                .get_or_insert_with(Default::default)
                .browser_bridge_url = "file:///etc/passwd".into();
        }),
        ("sandbox.elevated.default_level", |r| {
            r.sandbox.get_or_insert_with(Default::default).elevated = Some(pb::ElevatedInfo {
                default_level: 42,
                ..Default::default()
            });
        }),
        ("sandbox.elevated.full_access_blocked_reason", |r| {
            r.sandbox.get_or_insert_with(Default::default).elevated = Some(pb::ElevatedInfo {
                full_access_blocked_reason: 42,
                ..Default::default()
            });
        }),
        ("runtime.versions[0].key", |r| {
            r.runtime.get_or_insert_with(Default::default).versions = vec![pb::RuntimeVersion {
                key: "Agent Service".into(),
                value: "1".into(),
            }];
        }),
        ("runtime.versions[0].key", |r| {
            r.runtime.get_or_insert_with(Default::default).versions = vec![pb::RuntimeVersion {
                key: "model".into(),
                value: "1".into(),
            }];
        }),
        ("runtime.versions[1].key", |r| {
            let v = pb::RuntimeVersion {
                key: "agent_service".into(),
                value: "1".into(),
            };
            r.runtime.get_or_insert_with(Default::default).versions = vec![v.clone(), v];
        }),
        ("runtime.versions[0].value", |r| {
            r.runtime.get_or_insert_with(Default::default).versions = vec![pb::RuntimeVersion {
                key: "agent_service".into(),
                value: " ".into(),
            }];
        }),
    ];
    for (field, edit) in cases {
        let mut req = example();
        edit(&mut req);
        let status = server
            .client()
            .await
            .render_system_prompt(req)
            .await
            .expect_err("refused");
        assert_eq!(
            status.code(),
            Code::InvalidArgument,
            "{field}: {}",
            status.message()
        );
        assert!(
            status.message().starts_with(&format!("{field}: ")),
            "{field}: {}",
            status.message()
        );
    }
}

/// P-3, P-24: the per-turn inputs of the new topics change only the
/// dynamic suffix, and the prompt surface changes no byte at all.
#[tokio::test]
async fn new_turn_fields_never_move_the_stable_prefix_and_the_surface_renders_nothing() {
    let server = Server::start().await;
    let base = render(&server, example()).await;
    let mut turn = example();
    turn.current_date = "2026-12-01".into();
    turn.mark_relocatable_block = true;
    let runtime = turn.runtime.get_or_insert_with(Default::default);
    runtime.session_key = "agent:main:telegram:direct:42".into();
    runtime.versions = vec![pb::RuntimeVersion {
        key: "agent_service".into(),
        value: "0.1.0".into(),
    }];
    let channel = turn.channel.get_or_insert_with(Default::default);
    channel.display_name = "Telegram (work)".into();
    channel.known_channels = vec!["discord".into(), "telegram".into()];
    channel.native_approvals = Some(true);
    let changed = render(&server, turn.clone()).await;
    assert_eq!(changed.stable_prefix_sha256, base.stable_prefix_sha256);
    assert_ne!(changed.dynamic_suffix, base.dynamic_suffix);
    assert!(
        changed
            .dynamic_suffix
            .contains("session=agent:main:telegram:direct:42")
    );
    assert!(changed.dynamic_suffix.contains("agent_service=0.1.0"));

    let mut texts = Vec::new();
    for surface in [
        pb::PromptSurface::Unspecified,
        pb::PromptSurface::EmbeddedRun,
        pb::PromptSurface::Cli,
        pb::PromptSurface::Preview,
        pb::PromptSurface::Compaction,
    ] {
        let mut req = turn.clone();
        req.prompt_surface = surface as i32;
        let reply = render(&server, req).await;
        assert_eq!(reply.prompt_surface, surface as i32);
        texts.push(reply.text);
    }
    texts.dedup();
    assert_eq!(texts.len(), 1, "the surface changed the prompt");
}

/// P-43: the clock format is accepted and never rendered.
#[tokio::test]
async fn the_time_format_changes_nothing() {
    let server = Server::start().await;
    let mut texts = Vec::new();
    for format in [
        pb::TimeFormat::Unspecified,
        pb::TimeFormat::Auto,
        pb::TimeFormat::TimeFormat12,
        pb::TimeFormat::TimeFormat24,
    ] {
        let mut req = example();
        req.user_time
            .get_or_insert_with(Default::default)
            .time_format = format as i32;
        texts.push(render(&server, req).await.text);
    }
    texts.dedup();
    assert_eq!(texts.len(), 1);
    assert!(texts[0].contains("Time zone: "));
    assert!(!texts[0].contains("12-hour") && !texts[0].contains("24-hour"));
}

/// The relocatable block starts where the response says and runs to the
/// end; asked for, the marker line stands just before it.
#[tokio::test]
async fn the_relocatable_block_is_the_tail_of_the_text() {
    let server = Server::start().await;
    let mut req = example();
    req.current_date = "2026-12-01".into();
    let plain = render(&server, req.clone()).await;
    let at = plain.relocatable_offset as usize;
    assert!(
        plain.text[at..].starts_with("## Current Date\n"),
        "{}",
        &plain.text[at..]
    );
    assert!(!plain.text.contains(&plain.relocatable_marker));
    req.mark_relocatable_block = true;
    let marked = render(&server, req).await;
    let at = marked.relocatable_offset as usize;
    assert_eq!(
        marked.text[at..],
        plain.text[plain.relocatable_offset as usize..]
    );
    assert!(marked.text[..at].ends_with(&format!("{}\n\n", marked.relocatable_marker)));
    assert_eq!(marked.stable_prefix_sha256, plain.stable_prefix_sha256);
}

/// `none` mode is the identity line: no boundary marker in `text`.
#[tokio::test]
async fn none_mode_text_has_no_marker() {
    let server = Server::start().await;
    let mut req = example();
    req.prompt_mode = pb::PromptMode::None as i32;
    let reply = render(&server, req).await;
    assert!(
        !reply.text.contains(&reply.boundary_marker),
        "{}",
        reply.text
    );
    assert_eq!(reply.text, reply.stable_prefix);
    assert_eq!(reply.boundary_offset as usize, reply.text.len());
    assert_eq!(reply.relocatable_offset as usize, reply.text.len());
    assert_eq!(reply.dynamic_suffix, "");
}
