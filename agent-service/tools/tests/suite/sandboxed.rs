//! exec and process in a sandboxed session (real bubblewrap, installed by the test), and the
//! environment of commands run on the host.

use std::sync::Arc;

use openclaw_sandbox::{Bubblewrap, Isolation, Network};
use openclaw_tools::{ExecTool, ProcessTool};
use serde_json::json;

use super::{Fixture, ok_text, pid_from};

fn sandboxed() -> Fixture {
    let program = agent_testkit::packages::ensure_program("bwrap", "bubblewrap")
        .unwrap_or_else(|e| panic!("bubblewrap is needed: {e}"));
    let engine = Bubblewrap::detect(program.as_os_str()).unwrap_or_else(|e| panic!("{e}"));
    let mut f = Fixture::new();
    f.ctx.sandbox = Some(Arc::new(Isolation::new(
        engine,
        f.root.clone(),
        None,
        Network::Off,
    )));
    f
}

#[tokio::test]
async fn a_sandboxed_exec_sees_only_its_workspace() {
    let f = sandboxed();
    let secret = f.outside.join("secret.txt");
    let outcome = f
        .call(
            &ExecTool,
            json!({ "command": format!("cat {} 2>&1; echo made > here.txt; touch {}/x 2>&1; pwd", secret.display(), f.outside.display()) }),
        )
        .await;
    let text = ok_text(&outcome);
    assert!(text.contains("No such file or directory"), "{text}");
    assert!(!text.contains("secret\n"), "{text}");
    assert!(text.ends_with(&format!("{}\n", f.root.display())), "{text}");
    assert_eq!(f.read("here.txt"), "made\n");
    assert!(!f.outside.join("x").exists());
    // The same command on the host reads the file: the sandbox made the difference.
    let host = Fixture::new();
    let outcome = host
        .call(
            &ExecTool,
            json!({ "command": format!("cat {}", host.outside.join("secret.txt").display()) }),
        )
        .await;
    assert!(ok_text(&outcome).contains("secret\n"));
}

#[tokio::test]
async fn a_sandboxed_background_process_runs_inside_and_dies_with_its_kill() {
    let f = sandboxed();
    let started = f
        .call(
            &ExecTool,
            json!({ "command": "ls / > root.txt; echo $$ > pid; sleep 300", "background": true }),
        )
        .await;
    let id = started.details().unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    // The pid is written after the listing, so the listing is whole once the pid is there.
    let _inside_pid = pid_from(&f, "pid").await;
    let root = f.read("root.txt");
    assert!(!root.contains("home\n"), "an empty root: {root}");
    assert!(root.contains("usr\n"), "{root}");
    let killed = f
        .call(&ProcessTool, json!({ "action": "kill", "id": id }))
        .await;
    assert!(
        ok_text(&killed).contains("killed") || ok_text(&killed).contains("Killed"),
        "{killed:?}"
    );
}

#[tokio::test]
async fn host_commands_lose_hidden_variables_and_relative_path_entries() {
    let mut f = Fixture::new();
    // HOME is set wherever tests run, so the variable is there to hide.
    let shown = f
        .call(&ExecTool, json!({ "command": "echo ${HOME:-unset}" }))
        .await;
    assert!(!ok_text(&shown).contains("unset"), "{shown:?}");
    f.ctx.hidden_env = Arc::from(vec!["HOME".to_owned()]);
    let hidden = f
        .call(&ExecTool, json!({ "command": "echo ${HOME:-unset}" }))
        .await;
    assert!(ok_text(&hidden).contains("unset"), "{hidden:?}");
    let path = f
        .call(&ExecTool, json!({ "command": "echo \"[$PATH]\"" }))
        .await;
    let path = ok_text(&path);
    assert!(
        !path.contains("::") && !path.contains("[:") && !path.contains(":]"),
        "{path}"
    );
    assert!(!path.split([':', '[', ']']).any(|e| e == "."), "{path}");
}

#[tokio::test]
async fn commands_have_no_controlling_terminal() {
    let f = Fixture::new();
    let outcome = f
        .call(
            &ExecTool,
            json!({ "command": "cat /dev/tty 2>&1; echo tty=$(ps -o tty= -p $$) pid=$$" }),
        )
        .await;
    let text = ok_text(&outcome);
    assert!(text.contains("No such device or address"), "{text}");
    // The shell is the first process of a pid namespace of its own (whose session was made
    // outside it), with no terminal.
    assert!(text.contains("tty=? pid=1\n"), "{text}");
}

#[tokio::test]
async fn a_sandboxed_command_is_judged_by_the_program_the_sandbox_runs() {
    use std::os::unix::fs::PermissionsExt;
    // A directory first on the PATH the service judges by, outside the system directories,
    // holding its own `whoami`. The sandbox's PATH holds only system directories, so a
    // sandboxed `whoami` is the system's whatever that directory holds.
    let bin = tempfile::tempdir().unwrap();
    let planted = bin.path().join("whoami");
    std::fs::write(&planted, "#!/bin/sh\necho planted\n").unwrap();
    std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o755)).unwrap();
    let search = format!("{}:/usr/bin:/bin", bin.path().display());
    let system = std::path::Path::new("/usr/bin/whoami")
        .canonicalize()
        .unwrap();
    let policy = |entry: &std::path::Path| {
        openclaw_tools::ExecPolicy::allowlist([entry.display().to_string()])
            .with_search_path(search.as_str())
    };

    // An entry for the system's file covers what the sandbox runs.
    let mut f = sandboxed();
    f.ctx.exec_policy = policy(&system);
    let outcome = f.call(&ExecTool, json!({ "command": "whoami" })).await;
    assert!(!ok_text(&outcome).contains("planted"), "{outcome:?}");
    // An entry for the planted file does not: the sandbox would run another program.
    f.ctx.exec_policy = policy(&planted);
    let outcome = f.call(&ExecTool, json!({ "command": "whoami" })).await;
    let refused = super::error_text(&outcome);
    assert!(refused.contains("permission denied"), "{refused}");
    assert!(refused.contains("/usr/bin/whoami"), "{refused}");

    // On the host the same PATH is judged: the planted file is what is covered there.
    let mut host = Fixture::new();
    host.ctx.exec_policy = policy(&system);
    let outcome = host.call(&ExecTool, json!({ "command": "whoami" })).await;
    assert!(
        super::error_text(&outcome).contains("permission denied"),
        "{outcome:?}"
    );
}
