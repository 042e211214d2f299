//! Setup, workspaces, sandboxes and skills over gRPC (R-2 to
//! R-7, R-9, P-39).

use openclaw_proto::agent::v1 as pb;
use tonic::Code;

use super::calls::{call, refusal};
use super::harness::Service;

fn files_in(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// R-2, R-5: setup creates the config and a brand-new workspace gets the
/// templates plus BOOTSTRAP.md; a deleted BOOTSTRAP.md is never recreated.
/// `Setup` with a full reset of the default agent's workspace.
async fn full_reset(service: &Service) -> pb::SetupResponse {
    let request = pb::SetupRequest {
        full_reset: true,
        ..Default::default()
    };
    call!(service, setup, request)
}

#[tokio::test]
async fn setup_creates_config_and_seeds_a_brand_new_workspace() {
    let service = Service::start(None).await;
    let ws = service.path("state/workspace");
    // Startup already seeded the default agent's workspace.
    assert!(ws.join("AGENTS.md").exists());
    assert!(
        ws.join("BOOTSTRAP.md").exists(),
        "brand-new workspace gets BOOTSTRAP.md: {:?}",
        files_in(&ws)
    );

    let out = service.setup().await;
    assert!(out.config_created, "openclaw.json was missing");
    let config = std::fs::read_to_string(&out.config_path).expect("config written");
    assert!(config.contains("workspace"), "{config}");
    assert!(
        out.workspaces[0].created_files.is_empty(),
        "nothing overwritten on a second pass"
    );

    // The user finishes the ritual and deletes BOOTSTRAP.md: it stays gone.
    std::fs::remove_file(ws.join("BOOTSTRAP.md")).expect("delete");
    let again = service.setup().await;
    assert!(!again.config_created);
    assert!(!again.workspaces[0].bootstrap_seeded);
    assert!(!ws.join("BOOTSTRAP.md").exists());
}

/// R-7: skipBootstrap creates no bootstrap files at all.
#[tokio::test]
async fn skip_bootstrap_creates_no_files() {
    let service = Service::start(Some("{ agents: { defaults: { skipBootstrap: true } } }")).await;
    let out = service.setup().await;
    assert!(out.workspaces[0].skipped_bootstrap);
    let ws = service.path("state/workspace");
    assert!(
        !ws.join("AGENTS.md").exists() && !ws.join("BOOTSTRAP.md").exists(),
        "{:?}",
        files_in(&ws)
    );
}

/// R-6: a recently proven workspace that vanished is not reseeded; the agent
/// is refused with a clear message until the user restores it or runs a
/// full reset that clears both.
#[tokio::test]
async fn a_vanished_workspace_is_refused_until_a_full_reset() {
    let service = Service::start(None).await;
    let ws = service.path("state/workspace");
    assert!(ws.join("AGENTS.md").exists());
    // Simulate a restart after the workspace directory was deleted.
    let dir = service.stop().await;
    std::fs::remove_dir_all(&ws).expect("wipe");
    let service = Service::start_in(dir, None).await;
    assert!(!ws.join("BOOTSTRAP.md").exists(), "never silently reseeded");
    let status = refusal!(service, create_session, pb::CreateSessionRequest::default());
    assert_eq!(status.code(), Code::FailedPrecondition);
    let msg = status.message().to_lowercase();
    assert!(
        msg.contains("no longer exists") && msg.contains("restore") && msg.contains("full reset"),
        "{msg}"
    );

    assert!(full_reset(&service).await.workspaces[0].bootstrap_seeded);
    call!(service, create_session, pb::CreateSessionRequest::default());
}

/// R-3: with sandboxing on, non-main sessions get their own workspace.
#[tokio::test]
async fn sandboxed_non_main_sessions_get_a_per_session_workspace() {
    let config = r#"{ agents: { defaults: { sandbox: { mode: "non-main", scope: "session", workspaceRoot: "~/sandboxes" } } } }"#;
    let service = Service::start(Some(config)).await;
    let mut client = service.client().await;
    let main = client
        .create_session(pb::CreateSessionRequest::default())
        .await
        .expect("main")
        .into_inner()
        .session
        .expect("s");
    assert_eq!(
        main.workspace,
        service.path("state/workspace").display().to_string()
    );
    let group = service.create_session("discord:group:7").await;
    let sandbox = std::path::PathBuf::from(&group.workspace);
    assert!(
        sandbox.starts_with(service.path("sandboxes")),
        "{}",
        group.workspace
    );
    assert!(
        sandbox.join("AGENTS.md").exists(),
        "seeded from the agent workspace"
    );
    assert!(!sandbox.join("BOOTSTRAP.md").exists());
    // The transcript header records the session's own cwd.
    let header = std::fs::read_to_string(service.path(&format!(
        "state/agents/main/sessions/{}.jsonl",
        group.session_id
    )))
    .expect("transcript");
    assert!(
        header
            .lines()
            .next()
            .is_some_and(|l| l.contains(&group.workspace)),
        "{header}"
    );
}

fn write_skill(dir: &std::path::Path, name: &str, description: &str) {
    std::fs::create_dir_all(dir).expect("mkdir");
    std::fs::write(
        dir.join("SKILL.md"),
        format!("---\nname: {name}\ndescription: {description}\n---\n# {name}\n"),
    )
    .expect("write");
}

/// R-9, P-39: roots by priority with collisions reported, grouped folders
/// with the flat frontmatter name, skips reported with a reason, and the
/// agent allowlist.
#[tokio::test]
async fn list_skills_reports_priority_collisions_and_skips() {
    let service = Service::start(Some(
        "{ agents: { list: [ { id: 'main' }, { id: 'narrow', skills: ['notes'] } ] } }",
    ))
    .await;
    let ws = service.path("state/workspace-main");
    let ws = if ws.exists() {
        ws
    } else {
        service.path("state/workspace")
    };
    write_skill(&ws.join("skills/personal/notes-dir"), "notes", "Take notes");
    write_skill(&service.path("state/skills/notes"), "notes", "Managed copy");
    write_skill(
        &service.path("state/skills/weather"),
        "weather",
        "Forecasts",
    );
    std::fs::create_dir_all(ws.join("skills/broken")).unwrap();
    std::fs::write(
        ws.join("skills/broken/SKILL.md"),
        "---\nname: broken\n---\nno description\n",
    )
    .unwrap();

    let skills = call!(service, list_skills, pb::ListSkillsRequest::default());
    let names: Vec<(&str, &str)> = skills
        .skills
        .iter()
        .map(|s| (s.name.as_str(), s.source.as_str()))
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
    assert_eq!(skills.skills[0].name, "notes");
    assert!(
        skills.skills[0]
            .location
            .ends_with("skills/personal/notes-dir/SKILL.md"),
        "{}",
        skills.skills[0].location
    );
    assert!(skills.skills[0].version.starts_with("sha256:"));
    assert_eq!(skills.collisions.len(), 1);
    assert!(
        skills.collisions[0].shadowed.contains("state/skills/notes"),
        "{:?}",
        skills.collisions[0]
    );
    assert!(
        skills.skipped.iter().any(|s| s.path.contains("broken")),
        "{:?}",
        skills.skipped
    );

    let narrow = call!(
        service,
        list_skills,
        pb::ListSkillsRequest {
            agent_id: "narrow".into(),
        }
    );
    let names: Vec<&str> = narrow.skills.iter().map(|s| s.name.as_str()).collect();
    // The narrow agent's workspace has no skills of its own; the managed
    // root offers notes and weather, and its allowlist keeps only notes.
    assert_eq!(names, ["notes"], "the allowlist keeps only notes");
    assert!(
        narrow.skipped.iter().any(|s| s.path.contains("weather")),
        "{:?}",
        narrow.skipped
    );
}

/// R-9: skills are listed as they are on disk now, also once a discovery is kept (after its
/// files have aged past the 2 s margin): an edit of the same size and a new skill in a
/// grouping folder each show in the next listing. (Every kind of change is covered against
/// the stamps themselves in the skills crate's tests.)
#[tokio::test]
async fn listed_skills_follow_the_disk_after_a_kept_discovery() {
    let service = Service::start(None).await;
    let ws = service.path("state/workspace");
    let listed = || async {
        call!(service, list_skills, pb::ListSkillsRequest::default())
            .skills
            .iter()
            .map(|s| format!("{}: {}", s.name, s.description))
            .collect::<Vec<_>>()
    };
    // Past the margin a discovery is kept: the second listing after it is the kept one.
    let aged = || async {
        tokio::time::sleep(std::time::Duration::from_millis(2_300)).await;
        listed().await
    };
    write_skill(&ws.join("skills/group/notes"), "notes", "Take notes");
    assert_eq!(listed().await, ["notes: Take notes"]);
    assert_eq!(aged().await, ["notes: Take notes"]);
    assert_eq!(listed().await, ["notes: Take notes"]);
    write_skill(&ws.join("skills/group/notes"), "notes", "Keep notes");
    assert_eq!(
        listed().await,
        ["notes: Keep notes"],
        "an edit of the same size"
    );
    assert_eq!(aged().await, ["notes: Keep notes"]);
    assert_eq!(listed().await, ["notes: Keep notes"]);
    write_skill(&ws.join("skills/group/todo"), "todo", "Track todos");
    assert_eq!(
        listed().await,
        ["notes: Keep notes", "todo: Track todos"],
        "a new skill in a grouping folder"
    );
}

#[tokio::test]
async fn list_skills_for_an_unknown_agent_is_not_found() {
    let service = Service::start(None).await;
    let status = refusal!(
        service,
        list_skills,
        pb::ListSkillsRequest {
            agent_id: "ghost".into(),
        }
    );
    assert_eq!(status.code(), Code::NotFound);
}

/// R-16: a full reset over gRPC clears the workspace and its proof marker together; the old
/// workspace is moved aside, and the new one is seeded with BOOTSTRAP.md.
#[tokio::test]
async fn a_full_reset_clears_the_workspace_and_its_marker_together() {
    let service = Service::start(None).await;
    let ws = service.path("state/workspace");
    std::fs::remove_file(ws.join("BOOTSTRAP.md")).expect("bootstrap done");
    std::fs::write(ws.join("notes.txt"), "keep me").expect("write");
    let markers = service.path("state/workspace-attestations");
    let before: Vec<_> = std::fs::read_dir(&markers).expect("markers").collect();
    assert_eq!(before.len(), 1);
    assert!(full_reset(&service).await.workspaces[0].bootstrap_seeded);
    assert!(ws.join("BOOTSTRAP.md").is_file());
    assert!(!ws.join("notes.txt").exists(), "the workspace was cleared");
    let aside = service.path("state/workspace.reset-1");
    assert_eq!(
        std::fs::read_to_string(aside.join("notes.txt")).expect("moved aside"),
        "keep me"
    );
}
