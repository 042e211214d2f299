//! Loading bootstrap files: order, presence rules, confinement and the size cap (P-31, R-4).

use std::fs;
use std::os::unix::fs::symlink;

use openclaw_workspace::{
    BOOTSTRAP_FILE_MAX_BYTES, BootstrapFile, BootstrapName, MissingReason, SetupOptions,
    load_bootstrap_files,
};

use super::Home;

fn names(files: &[BootstrapFile]) -> Vec<&'static str> {
    files.iter().map(|f| f.name.file_name()).collect()
}

#[test]
fn a_seeded_workspace_loads_in_order_with_bootstrap_md_and_no_memory() {
    let home = Home::new();
    home.ensure(SetupOptions::default()).unwrap();

    let files = load_bootstrap_files(&home.workspace).unwrap();

    assert_eq!(
        names(&files),
        [
            "AGENTS.md",
            "SOUL.md",
            "TOOLS.md",
            "IDENTITY.md",
            "USER.md",
            "HEARTBEAT.md",
            "BOOTSTRAP.md"
        ]
    );
    for file in &files {
        assert_eq!(file.missing, None, "{}", file.name);
        assert!(!file.truncated);
        assert_eq!(file.path, home.workspace.join(file.name.file_name()));
        assert_eq!(
            file.content,
            openclaw_workspace::template(file.name).unwrap()
        );
    }
}

#[test]
fn missing_files_are_reported_except_bootstrap_and_memory_which_appear_only_when_present() {
    let home = Home::new();
    fs::create_dir_all(&home.workspace).unwrap();
    home.write("USER.md", "Ada\n");
    home.write("MEMORY.md", "likes tea\n");

    let files = load_bootstrap_files(&home.workspace).unwrap();

    assert_eq!(
        files[4],
        BootstrapFile {
            name: BootstrapName::User,
            path: home.file("USER.md"),
            content: "Ada\n".to_owned(),
            missing: None,
            truncated: false,
        }
    );
    assert_eq!(
        files[0],
        BootstrapFile {
            name: BootstrapName::Agents,
            path: home.file("AGENTS.md"),
            content: String::new(),
            missing: Some(MissingReason::NotFound),
            truncated: false,
        }
    );
    assert_eq!(
        names(&files),
        [
            "AGENTS.md",
            "SOUL.md",
            "TOOLS.md",
            "IDENTITY.md",
            "USER.md",
            "HEARTBEAT.md",
            "MEMORY.md"
        ]
    );
    assert_eq!(files[6].content, "likes tea\n");
    let missing: Vec<_> = files
        .iter()
        .filter(|f| f.is_missing())
        .map(|f| f.name)
        .collect();
    assert_eq!(missing.len(), 5);
}

#[test]
fn a_symlink_leading_outside_is_not_read() {
    let home = Home::new();
    fs::create_dir_all(&home.workspace).unwrap();
    let secret = home.base.join("secret.txt");
    fs::write(&secret, "TOP SECRET\n").unwrap();
    symlink(&secret, home.file("AGENTS.md")).unwrap();
    symlink(&secret, home.file("MEMORY.md")).unwrap();

    let files = load_bootstrap_files(&home.workspace).unwrap();

    for name in [BootstrapName::Agents, BootstrapName::Memory] {
        let file = files.iter().find(|f| f.name == name).unwrap();
        assert_eq!(
            file.missing,
            Some(MissingReason::OutsideWorkspace),
            "{name}"
        );
        assert_eq!(file.content, "");
    }
    assert!(files.iter().all(|f| !f.content.contains("SECRET")));
}

#[test]
fn a_symlink_inside_the_workspace_is_read() {
    let home = Home::new();
    fs::create_dir_all(home.workspace.join("shared")).unwrap();
    home.write("shared/agents.md", "# shared rules\n");
    symlink("shared/agents.md", home.file("AGENTS.md")).unwrap();

    let files = load_bootstrap_files(&home.workspace).unwrap();

    assert_eq!(files[0].content, "# shared rules\n");
    assert_eq!(files[0].missing, None);
}

#[test]
fn directories_and_dangling_links_are_missing_with_a_reason() {
    let home = Home::new();
    fs::create_dir_all(home.file("SOUL.md")).unwrap();
    symlink("nowhere.md", home.file("TOOLS.md")).unwrap();
    symlink("nowhere.md", home.file("BOOTSTRAP.md")).unwrap();

    let files = load_bootstrap_files(&home.workspace).unwrap();
    let reason = |name| files.iter().find(|f| f.name == name).unwrap().missing;

    assert_eq!(
        reason(BootstrapName::Soul),
        Some(MissingReason::NotARegularFile)
    );
    assert_eq!(reason(BootstrapName::Tools), Some(MissingReason::NotFound));
    // Something exists under the name, so BOOTSTRAP.md is listed, as missing.
    assert_eq!(
        reason(BootstrapName::Bootstrap),
        Some(MissingReason::NotFound)
    );
}

#[test]
fn large_files_are_capped_at_2_mib_and_flagged() {
    let home = Home::new();
    fs::create_dir_all(&home.workspace).unwrap();
    // 'é' is two bytes, so the cap falls in the middle of one.
    let big = format!("a{}", "é".repeat(BOOTSTRAP_FILE_MAX_BYTES / 2 + 10));
    home.write("AGENTS.md", &big);
    let exact = "b".repeat(BOOTSTRAP_FILE_MAX_BYTES);
    home.write("TOOLS.md", &exact);

    let files = load_bootstrap_files(&home.workspace).unwrap();

    let agents = &files[0];
    assert!(agents.truncated);
    assert_eq!(agents.content.len(), BOOTSTRAP_FILE_MAX_BYTES - 1);
    assert!(big.starts_with(&agents.content));
    assert!(!agents.content.contains('\u{fffd}'));
    assert_eq!(
        fs::metadata(home.file("AGENTS.md")).unwrap().len(),
        big.len() as u64
    );

    let tools = &files[2];
    assert!(!tools.truncated);
    assert_eq!(tools.content.len(), BOOTSTRAP_FILE_MAX_BYTES);
}

#[test]
fn invalid_utf8_is_replaced_not_refused() {
    let home = Home::new();
    fs::create_dir_all(&home.workspace).unwrap();
    fs::write(home.file("USER.md"), b"Ada \xff\n").unwrap();

    let files = load_bootstrap_files(&home.workspace).unwrap();

    assert_eq!(files[4].content, "Ada \u{fffd}\n");
}

#[test]
fn nothing_is_cached_between_loads() {
    let home = Home::new();
    home.ensure(SetupOptions::default()).unwrap();
    load_bootstrap_files(&home.workspace).unwrap();
    home.write("SOUL.md", "changed\n");

    let files = load_bootstrap_files(&home.workspace).unwrap();

    assert_eq!(files[1].content, "changed\n");
}

#[test]
fn a_missing_workspace_is_an_error() {
    let home = Home::new();
    assert!(load_bootstrap_files(&home.workspace).is_err());
}
