//! HEARTBEAT.md emptiness: the seeded template must not defeat the heartbeat skip. The rule is
//! the renderer's ([`prompt_render::heartbeat_is_empty`]): the one function that decides both
//! whether the file reaches the prompt and whether a heartbeat runs at all.

use openclaw_workspace::{BootstrapName, template};
use prompt_render::heartbeat_is_empty;
use proptest::prelude::*;

#[test]
fn the_heartbeat_template_counts_as_empty() {
    assert!(heartbeat_is_empty(
        template(BootstrapName::Heartbeat).unwrap()
    ));
}

#[test]
fn the_other_templates_do_not() {
    for name in [
        BootstrapName::Agents,
        BootstrapName::Soul,
        BootstrapName::Tools,
    ] {
        assert!(!heartbeat_is_empty(template(name).unwrap()), "{name}");
    }
}

#[test]
fn scaffolding_is_empty_and_any_task_is_not() {
    let empty = [
        "",
        "   \n\t\n",
        "\u{feff}# HEARTBEAT.md\n",
        "# Tasks\n## Daily\n",
        "<!-- nothing yet -->",
        "# T\n<!--\n- check mail\n-->\n",
        "<!-- never closed\n- check mail\n",
        "- \n* [ ]\n+\n- []\n",
        "#\n",
    ];
    for text in empty {
        assert!(heartbeat_is_empty(text), "{text:?}");
    }
    let tasks = [
        "check mail",
        "# Tasks\n- check mail\n",
        "#hashtag",
        "<!-- c --> water the plants",
        "- [ ] call mum\n",
        "####### seven hashes is text\n",
        "---\n",
    ];
    for text in tasks {
        assert!(!heartbeat_is_empty(text), "{text:?}");
    }
}

proptest! {
    #[test]
    fn a_line_of_words_outside_comments_is_always_a_task(
        prefix in "[#\\- \n]{0,20}",
        word in "[a-zA-Z][a-zA-Z ]{0,20}",
    ) {
        let text = format!("{}\n{word}\n", template(BootstrapName::Heartbeat).unwrap());
        prop_assert!(!heartbeat_is_empty(&text));
        // Never panics on arbitrary scaffolding either.
        let _ = heartbeat_is_empty(&format!("{prefix}<!--{prefix}"));
    }

    #[test]
    fn never_panics(text in any::<String>()) {
        let _ = heartbeat_is_empty(&text);
    }
}
