//! `plugins.entries.<id>` (enabled, skills folder) and `agents.defaults.docsPath`.

use std::path::PathBuf;

use openclaw_config::resolve::{Dirs, PluginSkills};

use super::support::{env, invalid, keep, paths_and_messages, valid};

fn dirs() -> Dirs {
    Dirs {
        state_dir: PathBuf::from("/state"),
        home_dir: PathBuf::from("/home/u"),
    }
}

#[test]
fn plugin_skills_folders_are_listed_with_their_enabled_state() {
    let config = valid(
        r#"{
  plugins: {
    deny: ["banned"],
    entries: {
      weather: { skills: "~/plugins/weather/skills" },
      calendar: { enabled: false, skills: "/opt/calendar/skills" },
      banned: { skills: "/opt/banned/skills" },
      openai: { config: { personality: "off" } },
    },
  },
}"#,
    );
    assert_eq!(
        config.plugin_skills(&dirs()),
        vec![
            PluginSkills {
                plugin: "banned".into(),
                dir: "/opt/banned/skills".into()
            },
            PluginSkills {
                plugin: "calendar".into(),
                dir: "/opt/calendar/skills".into()
            },
            PluginSkills {
                plugin: "weather".into(),
                dir: "/home/u/plugins/weather/skills".into()
            },
        ]
    );
    assert_eq!(config.enabled_plugins(), ["openai", "weather"]);
    assert!(!config.plugin_enabled("calendar"));
    assert!(!config.plugin_enabled("banned"));
}

#[test]
fn the_allow_list_and_the_master_switch_decide_too() {
    let allow =
        valid(r#"{ plugins: { allow: ["weather"], entries: { weather: {}, other: {} } } }"#);
    assert_eq!(allow.enabled_plugins(), ["weather"]);
    let off = valid(r#"{ plugins: { enabled: false, entries: { weather: { enabled: true } } } }"#);
    assert!(off.enabled_plugins().is_empty());
    assert!(valid("{}").plugin_skills(&dirs()).is_empty());
}

#[test]
fn the_docs_path_is_expanded() {
    let config = valid(r#"{ agents: { defaults: { docsPath: "~/openclaw/docs" } } }"#);
    assert_eq!(
        config.docs_path(&dirs()),
        Some(PathBuf::from("/home/u/openclaw/docs"))
    );
    assert_eq!(valid("{}").docs_path(&dirs()), None);
}

#[test]
fn relative_folders_are_refused_naming_the_field() {
    let errors = invalid(
        r#"{
  agents: { defaults: { docsPath: "docs" } },
  plugins: { entries: { weather: { skills: "./skills" }, ok: { skills: "/abs" } } },
}"#,
        &env(&[]),
        &keep(),
    );
    assert_eq!(
        paths_and_messages(&errors),
        [
            (
                "agents.defaults.docsPath",
                r#"folder must be an absolute path or start with "~/"; found "docs""#
            ),
            (
                "plugins.entries.weather.skills",
                r#"folder must be an absolute path or start with "~/"; found "./skills""#
            ),
        ]
    );
    let typo = invalid(
        r#"{ plugins: { entries: { weather: { skill: "/abs" } } } }"#,
        &env(&[]),
        &keep(),
    );
    assert_eq!(typo[0].path, "plugins.entries.weather.skill");
    assert!(typo[0].message.contains("skills"), "{}", typo[0].message);
}
