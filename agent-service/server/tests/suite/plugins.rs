//! Bundled skills (a `skills/` folder beside the executable), plugin skills
//! (`plugins.entries.<id>.skills`) and the local docs reach a run's prompt exactly as configured:
//! a plugin's skills only while it is enabled, every skill only when the agent's allowlist
//! admits it.

use std::path::Path;

use agent_testkit::{FakeReply, WireFormat};
use openclaw_proto::agent::v1 as pb;

use super::calls::call;
use super::harness::{Harness, Service, StartOptions};

/// The skills the repository ships beside the binaries.
fn bundled_source() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../skills/bundled"))
}

fn skill(dir: &Path, name: &str, description: &str) {
    let folder = dir.join(name);
    std::fs::create_dir_all(&folder).expect("mkdir");
    std::fs::write(
        folder.join("SKILL.md"),
        format!("---\nname: {name}\ndescription: {description}\n---\n# {name}\n"),
    )
    .expect("write");
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read dir") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).expect("copy");
        }
    }
}

/// An installation (`<root>/install` with the repository's bundled skills and a `docs/`
/// folder), two plugins' skills folders and a config naming them; `agents` is the
/// `agents.list` entry text of `main`.
async fn installed(main_agent: &str, plugins: &str) -> Harness {
    Harness::start_in(WireFormat::AnthropicMessages, |base_url, root| {
        let install = root.join("install");
        copy_dir(bundled_source(), &install.join("skills"));
        std::fs::create_dir_all(install.join("docs/gateway")).expect("mkdir");
        skill(
            &root.join("weather"),
            "forecast",
            "Read the weather forecast",
        );
        skill(&root.join("calendar"), "agenda", "Read the day's agenda");
        let config = format!(
            r#"{{
  agents: {{
    defaults: {{ model: "fake/test-model" }},
    list: [{main_agent}],
  }},
  models: {{ providers: {{ fake: {{ baseUrl: "{base_url}", api: "anthropic-messages", apiKey: "k", models: [{{ id: "test-model" }}] }} }} }},
  plugins: {{ {plugins}
    entries: {{
      weather: {{ skills: "{weather}" }},
      calendar: {{ enabled: false, skills: "{calendar}" }},
    }},
  }},
}}"#,
            weather = root.join("weather").display(),
            calendar = root.join("calendar").display(),
        );
        let options = StartOptions {
            install_dir: Some(install),
            ..StartOptions::default()
        };
        (config, options)
    })
    .await
}

async fn preview(service: &Service) -> openclaw_proto::prompt::v1::RenderSystemPromptResponse {
    service.preview(None, None).await.prompt.expect("prompt")
}

fn listed(prompt: &str, name: &str) -> bool {
    prompt.contains(&format!("<name>{name}</name>"))
}

/// The bundled skill and an enabled plugin's skill are in the prompt a run sends; a disabled
/// plugin's skill is not, and ListSkills says why.
#[tokio::test]
async fn plugin_and_bundled_skills_reach_the_run_while_enabled() {
    let h = installed(r#"{ id: "main" }"#, "").await;
    let prompt = preview(&h.service).await;
    let text = &prompt.stable_prefix;
    assert!(listed(text, "openclaw-config"), "{text}");
    assert!(listed(text, "forecast"), "{text}");
    assert!(!listed(text, "agenda"), "disabled plugin: {text}");
    // Under the home directory (the test's root), so shown with `~/`.
    assert!(
        text.contains("<location>~/install/skills/openclaw-config/SKILL.md</location>"),
        "{text}"
    );

    h.fake.push(FakeReply::text("ok"));
    h.service.run_message("hello").await;
    let system = h.fake.requests()[0].body["system"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert_eq!(
        system, prompt.stable_prefix,
        "the run sends what was previewed"
    );

    let skills = call!(h.service, list_skills, pb::ListSkillsRequest::default());
    let calendar = h.service.path("calendar").display().to_string();
    assert!(
        skills
            .skipped
            .iter()
            .any(|s| s.path == calendar && s.reason == "plugin calendar is not enabled"),
        "{:?}",
        skills.skipped
    );
    assert!(skills.skills.iter().any(|s| s.name == "openclaw-config"));
}

/// The agent's allowlist filters bundled and plugin skills like any other; the master switch
/// turns every plugin off.
#[tokio::test]
async fn the_allowlist_and_the_plugin_switch_filter_them() {
    let h = installed(r#"{ id: "main", skills: ["forecast"] }"#, "").await;
    let text = preview(&h.service).await.stable_prefix;
    assert!(listed(&text, "forecast"), "{text}");
    assert!(!listed(&text, "openclaw-config"), "not allowlisted: {text}");

    let h = installed(r#"{ id: "main" }"#, "enabled: false,").await;
    let text = preview(&h.service).await.stable_prefix;
    assert!(!listed(&text, "forecast"), "plugins off: {text}");
    assert!(listed(&text, "openclaw-config"), "bundled stays: {text}");
}

/// A `docs/` folder beside the executable is the local documentation the prompt points at;
/// `agents.defaults.docsPath` overrides it.
#[tokio::test]
async fn local_docs_are_fed_to_the_documentation_section() {
    let h = installed(r#"{ id: "main" }"#, "").await;
    let text = preview(&h.service).await.stable_prefix;
    let docs = h.service.path("install/docs");
    assert!(
        text.contains(&format!("OpenClaw documentation: {}", docs.display())),
        "{text}"
    );
    assert!(
        text.contains(&format!("({}/gateway/configuration.md)", docs.display())),
        "{text}"
    );
    assert!(!text.contains("https://docs.openclaw.ai"), "{text}");
}
