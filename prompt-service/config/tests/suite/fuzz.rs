//! Fuzzing the JSON5 config loader with proptest (cargo-fuzz needs a nightly
//! toolchain and `cargo install`, which CI does not have). Properties, for text from a JSON5
//! grammar, for mutations of the realistic example, and for arbitrary bytes:
//! - never a panic and never a stack overflow: every outcome is a `Result`;
//! - every error of an invalid text says something, and its position (when it has one) lies
//!   inside the text;
//! - bounded output: at most one error per input byte (plus one), and the error report is
//!   at most [`REPORT_FACTOR`] times the input's length plus [`REPORT_SLACK`] bytes;
//! - nesting deeper than [`MAX_NESTING`] is refused before the parser recurses.
//!
//! Cases per property default to a few hundred (a few seconds in all); set `PROPTEST_CASES`
//! for long runs (README "Fuzzing").

use openclaw_config::{
    ConfigError, EnvSource, LoadOptions, Loader, MAX_NESTING, NoEnv, UnresolvedVars, parse_json5,
};
use proptest::prelude::*;
use proptest::test_runner::{TestCaseError, TestRunner};

use super::support::{EXAMPLE, SCHEMA_KEYS, keep};

/// The error report is at most this many times the input's length ...
const REPORT_FACTOR: usize = 16;
/// ... plus this many bytes.
const REPORT_SLACK: usize = 4096;

/// Cases for one property: `PROPTEST_CASES` when set, else `default`.
fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A JSON5 scalar, in the spellings JSON5 allows and some it does not.
fn scalar() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "null",
            "true",
            "false",
            "0",
            "-0",
            "+1",
            ".5",
            "5.",
            "0x1F",
            "-0xff",
            "1e400",
            "-1e-400",
            "Infinity",
            "-Infinity",
            "NaN",
            "18446744073709551616",
            "1_000",
            "01",
            "'off'",
            "\"on\"",
            "'30m'",
            "\"steer\"",
            "'${VAR}'",
            "\"${HOME}/x\"",
            "'$${VAR}'",
            "\"${\"",
            "'a/b'",
            "\"openai/gpt-5.4\"",
            "'\\u00e9\\x41\\n'",
            "\"line\\\ncontinued\"",
            "'\\uD800'",
            "\"\\q\"",
            "undefined",
            "'unterminated",
            "\"é日本\u{200b}\"",
        ])
        .prop_map(str::to_owned),
        "[a-z0-9 /${}@.:-]{0,16}".prop_map(|s| format!("'{s}'")),
        any::<i64>().prop_map(|n| n.to_string()),
        any::<f64>().prop_map(|n| n.to_string()),
    ]
}

/// Whitespace and comments JSON5 allows between tokens.
fn gap() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "",
        "",
        " ",
        "\n",
        "\t",
        "\r\n",
        " // note\n",
        "/* c */",
        "/* {[ */",
        "\u{a0}",
        "\u{2028}",
        "\u{feff}",
    ])
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(SCHEMA_KEYS).prop_map(|k| {
            if k.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '$' || c == '_')
            {
                k.to_owned()
            } else {
                format!("'{k}'")
            }
        }),
        prop::sample::select(SCHEMA_KEYS).prop_map(|k| format!("\"{k}\"")),
        "[a-zA-Z_$][a-zA-Z0-9_$]{0,8}",
    ]
}

/// JSON5 text from a small grammar: objects, arrays, trailing commas, comments, and the
/// occasional missing comma or colon.
fn json5_text() -> impl Strategy<Value = String> {
    scalar().prop_recursive(6, 96, 8, |inner| {
        let member = (key(), gap(), inner.clone(), gap())
            .prop_map(|(k, g1, v, g2)| format!("{k}{g1}:{g2}{v}"));
        prop_oneof![
            (
                prop::collection::vec(member, 0..8),
                gap(),
                any::<bool>(),
                prop::sample::select(vec![",", ",", ",", ", ", ",\n", " "]),
            )
                .prop_map(|(members, g, trailing, sep)| {
                    let comma = if trailing && !members.is_empty() {
                        ","
                    } else {
                        ""
                    };
                    format!("{{{g}{}{comma}{g}}}", members.join(sep))
                }),
            (prop::collection::vec(inner, 0..6), gap(), any::<bool>()).prop_map(
                |(items, g, trailing)| {
                    let comma = if trailing && !items.is_empty() {
                        ","
                    } else {
                        ""
                    };
                    format!("[{g}{}{comma}{g}]", items.join(","))
                }
            ),
        ]
    })
}

/// The text with one random edit: a cut, an insertion, a duplication or a truncation.
fn mutate(text: &str, kind: u8, at: usize, len: usize, insert: &str) -> String {
    let boundary = |mut i: usize| {
        i = i.min(text.len());
        while !text.is_char_boundary(i) {
            i -= 1;
        }
        i
    };
    let from = boundary(at % (text.len() + 1));
    let to = boundary(from.saturating_add(len));
    match kind % 4 {
        0 => format!("{}{}", &text[..from], &text[to..]),
        1 => format!("{}{insert}{}", &text[..from], &text[from..]),
        2 => format!("{}{}{}", &text[..to], &text[from..to], &text[from..]),
        _ => text[..from].to_owned(),
    }
}

/// The properties every load outcome must have.
fn check_outcome(
    text: &str,
    outcome: Result<openclaw_config::Config, ConfigError>,
) -> Result<(), TestCaseError> {
    let Err(error) = outcome else { return Ok(()) };
    let report = error.to_string();
    prop_assert!(
        report.len() <= REPORT_FACTOR * text.len() + REPORT_SLACK,
        "a {}-byte text gave a {}-byte report",
        text.len(),
        report.len()
    );
    if let ConfigError::Invalid(errors) = &error {
        prop_assert!(!errors.is_empty());
        prop_assert!(errors.len() <= text.len() + 1, "{} errors", errors.len());
        for located in errors {
            prop_assert!(!located.message.is_empty(), "{located}");
            // Every error is located, comments anywhere JSON5 allows them included.
            let Some(position) = located.position else {
                return Err(TestCaseError::fail(format!("unlocated: {located}")));
            };
            // JSON5 ends lines at \n, \r, U+2028 and U+2029; a position never lies past
            // the text's last character.
            let chars = text.chars().count();
            prop_assert!(position.line >= 1 && position.column >= 1, "{located}");
            prop_assert!(
                position.line <= chars + 1 && position.column <= chars + 1,
                "{located} beyond a {chars}-character text"
            );
        }
    }
    Ok(())
}

/// Runs `property` for `cases` generated values with one compiled [`Loader`].
fn run<S: Strategy>(
    default_cases: u32,
    strategy: S,
    property: impl Fn(&Loader, S::Value) -> Result<(), TestCaseError>,
) {
    let Ok(loader) = Loader::new() else {
        panic!("schema compiles")
    };
    let mut runner = TestRunner::new(ProptestConfig::with_cases(cases(default_cases)));
    if let Err(failure) = runner.run(&strategy, |value| property(&loader, value)) {
        panic!("{failure}");
    }
}

/// An environment where every variable is set to a short value.
struct AnyEnv;

impl EnvSource for AnyEnv {
    fn get(&self, name: &str) -> Option<String> {
        (!name.is_empty()).then(|| format!("v-{name}"))
    }
}

#[test]
fn grammar_generated_json5_never_panics_and_errors_are_bounded() {
    run(
        256,
        (json5_text(), any::<bool>()),
        |loader, (text, resolve)| {
            let outcome = if resolve {
                let options = LoadOptions {
                    unresolved_vars: UnresolvedVars::Error,
                };
                loader.load(&text, &AnyEnv, &options)
            } else {
                loader.load(&text, &NoEnv, &keep())
            };
            check_outcome(&text, outcome)
        },
    );
}

#[test]
fn mutations_of_the_realistic_example_never_panic() {
    let strategy = (prop::collection::vec(
        (
            any::<u8>(),
            any::<usize>(),
            0usize..64,
            "\\PC{0,8}|[{}\\[\\]:,'\"/*]{1,4}",
        ),
        1..6,
    ),);
    run(256, strategy, |loader, (edits,)| {
        let mut text = EXAMPLE.to_owned();
        for (kind, at, len, insert) in edits {
            text = mutate(&text, kind, at, len, &insert);
        }
        check_outcome(&text, loader.load(&text, &NoEnv, &keep()))
    });
}

#[test]
fn arbitrary_bytes_never_panic() {
    run(
        256,
        prop::collection::vec(any::<u8>(), 0..512),
        |loader, bytes| {
            let text = String::from_utf8_lossy(&bytes);
            check_outcome(&text, loader.load(&text, &NoEnv, &keep()))
        },
    );
}

#[test]
fn deep_nesting_is_refused_before_the_parser_recurses() {
    // A few thousand levels used to overflow the stack and abort the process.
    for depth in [MAX_NESTING + 1, 1_000, 100_000] {
        for (open, close) in [("[", "]"), ("{a:", "}"), ("{\"a\":[", "]}")] {
            let text = format!("{{x:{}1{}}}", open.repeat(depth), close.repeat(depth));
            let error = parse_json5(&text).expect_err("too deep");
            assert!(
                error.to_string().contains("nested deeper than 64 levels"),
                "{error}"
            );
            let loaded = openclaw_config::load(&text, &NoEnv, &keep());
            assert!(loaded.is_err());
        }
    }
    // Exactly at the limit it parses; brackets in strings and comments do not count.
    let at_limit = format!("{}{}", "[".repeat(MAX_NESTING), "]".repeat(MAX_NESTING));
    assert!(parse_json5(&at_limit).is_ok());
    let quoted = format!(
        "{{ a: '{}', b: \"{}\", /* {} */ c: 1 // {}\n}}",
        "[".repeat(500),
        "{\\\"".repeat(500),
        "{".repeat(500),
        "[".repeat(500)
    );
    assert!(parse_json5(&quoted).is_ok(), "{quoted}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(256)))]

    /// Random bracket soup with strings and comments mixed in: the depth check and the
    /// parser agree or the check refuses first; either way no panic.
    #[test]
    fn bracket_soup_never_overflows(
        pieces in prop::collection::vec(
            prop::sample::select(vec!["[", "]", "{", "}", "{a:", "'[", "'", "\"", "//", "\n", "/*", "*/", "1", ",", ":"]),
            0..400,
        ),
        depth in 0usize..300,
    ) {
        let text = format!("{}{}", "[".repeat(depth), pieces.concat());
        let _ = parse_json5(&text);
    }
}
