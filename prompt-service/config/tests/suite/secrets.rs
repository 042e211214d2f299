//! Secret values of a config: what `${VAR}` expanded to and secret-named fields are listed for
//! redaction, and no error message ever quotes them.

use openclaw_config::{LoadOptions, load};

use super::support::{env, invalid};

const KEY: &str = "sk-ant-test-0123456789";

#[test]
fn substituted_values_and_secret_fields_are_listed_with_their_labels() {
    let text = r#"{
      agents: { defaults: { userTimezone: "${ZONE}" } },
      models: { providers: {
        a: { baseUrl: "http://a", api: "anthropic-messages", apiKey: "${ANTHROPIC_API_KEY}" },
        b: { baseUrl: "http://b", api: "openai-completions", apiKey: "inline-key-abcdef" },
      } },
    }"#;
    let vars = env(&[("ANTHROPIC_API_KEY", KEY), ("ZONE", "Europe/Berlin")]);
    let config = load(text, &vars, &LoadOptions::default()).expect("valid");
    let mut found: Vec<(String, String)> = config
        .secret_values()
        .into_iter()
        .map(|s| (s.label, s.value))
        .collect();
    found.sort();
    assert_eq!(
        found,
        [
            ("ANTHROPIC_API_KEY".to_owned(), KEY.to_owned()),
            ("ZONE".to_owned(), "Europe/Berlin".to_owned()),
            ("models.providers.a.apiKey".to_owned(), KEY.to_owned()),
            (
                "models.providers.b.apiKey".to_owned(),
                "inline-key-abcdef".to_owned()
            ),
        ]
    );
    assert_eq!(
        config.substituted_variables(),
        ["ZONE", "ANTHROPIC_API_KEY"]
    );
    assert!(
        !format!("{config:?}").contains(KEY),
        "Debug never shows a value"
    );
}

#[test]
fn an_error_about_a_substituted_value_quotes_the_reference_not_the_value() {
    // An enum field given a secret: the decoder's message would quote the value.
    let text = r#"{ tools: { exec: { security: "${ANTHROPIC_API_KEY}" } } }"#;
    let errors = invalid(
        text,
        &env(&[("ANTHROPIC_API_KEY", KEY)]),
        &LoadOptions::default(),
    );
    let shown: String = errors.iter().map(|e| format!("{e}\n")).collect();
    assert!(!shown.contains(KEY), "{shown}");
    assert!(shown.contains("tools.exec.security"), "{shown}");
    assert!(shown.contains("${ANTHROPIC_API_KEY}"), "{shown}");
}

#[test]
fn an_invalid_secret_field_never_has_its_value_quoted() {
    let text = r#"{ models: { providers: { a: { baseUrl: "http://a", api: "anthropic-messages", apiKey: 12345678901 } } } }"#;
    let errors = invalid(text, &env(&[]), &LoadOptions::default());
    let shown: String = errors.iter().map(|e| format!("{e}\n")).collect();
    assert!(!shown.contains("12345678901"), "{shown}");
    assert!(shown.contains("holds a secret"), "{shown}");
}

#[test]
fn a_provider_key_file_is_absolute_and_never_beside_an_inline_key() {
    let both = r#"{ models: { providers: {
        a: { baseUrl: "http://a", api: "openai-completions", apiKey: "inline-key-abcdef",
             apiKeyFile: "/run/secrets/a" },
    } } }"#;
    let shown: String = invalid(both, &env(&[]), &LoadOptions::default())
        .iter()
        .map(|e| format!("{e}\n"))
        .collect();
    assert!(
        shown.contains("models.providers.a.apiKeyFile") && shown.contains("not both"),
        "{shown}"
    );
    let relative = r#"{ models: { providers: {
        a: { baseUrl: "http://a", api: "openai-completions", apiKeyFile: "keys/a" },
    } } }"#;
    let shown: String = invalid(relative, &env(&[]), &LoadOptions::default())
        .iter()
        .map(|e| format!("{e}\n"))
        .collect();
    assert!(shown.contains("must be an absolute path"), "{shown}");
    let good = r#"{ models: { providers: {
        a: { baseUrl: "http://a", api: "openai-completions", apiKeyFile: "/run/secrets/a" },
    } } }"#;
    assert!(load(good, &env(&[]), &LoadOptions::default()).is_ok());
}
