//! Settings resolution.

use openclaw_blocks::{
    BlockStreamingInputs, BreakMode, BreakPreference, ChunkOverrides, CoalesceConfig,
    CoalesceOverrides, resolve_settings,
};

fn inputs(channel: &str) -> BlockStreamingInputs<'_> {
    BlockStreamingInputs {
        channel,
        ..BlockStreamingInputs::default()
    }
}

#[test]
fn off_by_default_everywhere() {
    for channel in ["telegram", "discord", "whatsapp", "slack"] {
        assert!(!resolve_settings(&inputs(channel)).enabled, "{channel}");
    }
}

#[test]
fn telegram_follows_the_default_and_other_channels_need_an_explicit_true() {
    let on = |channel, explicit| {
        resolve_settings(&BlockStreamingInputs {
            default_on: true,
            channel_block_streaming: explicit,
            ..inputs(channel)
        })
        .enabled
    };
    assert!(on("telegram", None));
    assert!(on(" Telegram ", None));
    assert!(!on("telegram", Some(false)));
    assert!(!on("discord", None));
    assert!(on("discord", Some(true)));
    assert!(on("whatsapp", Some(true)));
    // An explicit true needs no default.
    let explicit = resolve_settings(&BlockStreamingInputs {
        channel_block_streaming: Some(true),
        ..inputs("signal")
    });
    assert!(explicit.enabled);
}

#[test]
fn defaults_resolve_to_the_reference_values() {
    let s = resolve_settings(&inputs("telegram"));
    assert_eq!(s.break_mode, BreakMode::TextEnd);
    assert_eq!(
        (
            s.chunker.min_chars,
            s.chunker.max_chars,
            s.chunker.text_limit,
            s.chunker.break_preference,
            s.chunker.flush_on_paragraph
        ),
        (800, 1200, 4000, BreakPreference::Paragraph, false)
    );
    assert_eq!(
        s.coalesce,
        CoalesceConfig {
            min_chars: 800,
            max_chars: 4000,
            idle_ms: 1000
        }
    );
}

#[test]
fn discord_signal_and_slack_coalesce_to_1500_chars() {
    for channel in ["discord", "signal", "slack"] {
        let s = resolve_settings(&BlockStreamingInputs {
            text_limit: Some(2000),
            ..inputs(channel)
        });
        assert_eq!(
            s.coalesce,
            CoalesceConfig {
                min_chars: 1500,
                max_chars: 2000,
                idle_ms: 1000
            },
            "{channel}"
        );
    }
}

#[test]
fn overrides_are_layered_and_clamped() {
    let s = resolve_settings(&BlockStreamingInputs {
        break_mode: BreakMode::MessageEnd,
        chunk: ChunkOverrides {
            min_chars: Some(3000),
            max_chars: Some(5000),
            break_preference: Some(BreakPreference::Sentence),
        },
        coalesce: CoalesceOverrides {
            min_chars: Some(100),
            max_chars: Some(1500),
            idle_ms: Some(60_000),
        },
        channel_coalesce: CoalesceOverrides {
            min_chars: Some(200),
            ..CoalesceOverrides::default()
        },
        text_limit: Some(2000),
        newline_chunk_mode: true,
        ..inputs("discord")
    });
    assert_eq!(s.break_mode, BreakMode::MessageEnd);
    assert_eq!(
        (
            s.chunker.min_chars,
            s.chunker.max_chars,
            s.chunker.text_limit
        ),
        (2000, 2000, 2000)
    );
    assert!(s.chunker.flush_on_paragraph);
    assert_eq!(s.chunker.break_preference, BreakPreference::Sentence);
    assert_eq!(
        s.coalesce,
        CoalesceConfig {
            min_chars: 200,
            max_chars: 1500,
            idle_ms: 5000
        }
    );
}
