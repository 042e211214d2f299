//! Property tests: no input makes the loader or the parsers panic, and every problem in text
//! that decodes is located.

use openclaw_config::{
    ConfigError, Loader, ModelCatalog, ModelRef, NoEnv, Position, is_gpt5_family, parse_duration,
};
use proptest::prelude::*;
use proptest::test_runner::{TestCaseError, TestRunner};
use serde_json::{Map, Value};

use super::support::{SCHEMA_KEYS, keep};

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i32>().prop_map(Value::from),
        "[a-z0-9 /${}@.-]{0,12}".prop_map(Value::String),
        prop::sample::select(vec!["off", "on", "30m", "steer", "${VAR}", "a/b"])
            .prop_map(Value::from),
    ];
    leaf.prop_recursive(5, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((prop::sample::select(SCHEMA_KEYS), inner), 0..6).prop_map(
                |pairs| {
                    Value::Object(
                        pairs
                            .into_iter()
                            .map(|(k, v)| (k.to_owned(), v))
                            .collect::<Map<_, _>>(),
                    )
                }
            ),
        ]
    })
}

fn points_inside(text: &str, position: Position) -> bool {
    text.lines()
        .nth(position.line - 1)
        .is_some_and(|line| position.column <= line.chars().count() + 1)
}

/// Runs a property with one compiled [`Loader`] shared by every case (building the validator is
/// the slow part of a load).
fn check_with_loader<S: Strategy>(
    strategy: S,
    property: impl Fn(&Loader, S::Value) -> Result<(), TestCaseError>,
) {
    let Ok(loader) = Loader::new() else {
        panic!("schema compiles")
    };
    let mut runner = TestRunner::new(ProptestConfig::with_cases(256));
    if let Err(failure) = runner.run(&strategy, |value| property(&loader, value)) {
        panic!("{failure}");
    }
}

#[test]
fn arbitrary_text_never_panics() {
    check_with_loader("\\PC{0,200}", |loader, text: String| {
        let _ = loader.load(&text, &NoEnv, &keep());
        Ok(())
    });
}

#[test]
fn every_error_in_decodable_text_is_located() {
    check_with_loader((json_value(), any::<bool>()), |loader, (value, pretty)| {
        let text = if pretty {
            serde_json::to_string_pretty(&value).unwrap_or_default()
        } else {
            serde_json::to_string(&value).unwrap_or_default()
        };
        if let Err(ConfigError::Invalid(errors)) = loader.load(&text, &NoEnv, &keep()) {
            for error in &errors {
                let position = error.position;
                prop_assert!(
                    position.is_some_and(|p| points_inside(&text, p)),
                    "{error} in {text}"
                );
                prop_assert!(!error.message.is_empty());
            }
        }
        Ok(())
    });
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn parsers_never_panic(text in "\\PC{0,40}") {
        let _ = parse_duration(&text);
        let _ = ModelRef::parse(&text);
        let _ = is_gpt5_family(&text);
        let catalog = ModelCatalog::new().with_alias(text.clone(), "a/b").with_provider("p", [text.clone()]);
        let _ = catalog.resolve(&text);
    }

    #[test]
    fn parsed_references_round_trip(provider in "[a-z][a-z0-9-]{0,10}", model in "[A-Za-z0-9][A-Za-z0-9./:_-]{0,20}") {
        let text = format!("{provider}/{model}");
        let parsed = ModelRef::parse(&text);
        prop_assert!(parsed.is_ok(), "{text}");
        if let Ok(parsed) = parsed {
            prop_assert_eq!(parsed.provider, provider);
            prop_assert_eq!(parsed.model, model);
        }
    }
}
