//! What the runtime's property tests share: a runtime over a scripted model in a temporary
//! directory, the case count, and a session's transcript read back.

use std::{path::Path, sync::Arc};

use agent_runtime::{
    MapEnv, Runtime, RuntimeOptions, Settings, TranscriptItem, sessions::SessionTarget,
};
use openclaw_transcript::{EntryBody, Message};
use proptest::test_runner::{Config, TestRunner};

/// A runtime in `dir` whose `openclaw.json` is `config` and whose scripted model plays
/// `script` (`script.json5`), with `HOME` at `dir` and `more_env` besides.
pub fn start_runtime(
    dir: &Path,
    config: &str,
    script: &str,
    more_env: &[(&str, String)],
) -> Arc<Runtime> {
    let config_path = dir.join("openclaw.json");
    std::fs::write(&config_path, config).unwrap();
    std::fs::write(dir.join("script.json5"), script).unwrap();
    let mut env = vec![("HOME", dir.display().to_string())];
    env.extend(more_env.iter().cloned());
    Runtime::start(RuntimeOptions::new(
        Settings {
            state_dir: dir.join("state"),
            config_path,
            home_dir: dir.to_path_buf(),
        },
        Arc::new(MapEnv::of(env)),
        Arc::new(openclaw_transcript::SystemClock),
        Arc::new(prompt_client::InProcessPromptSource::new().unwrap()),
    ))
    .unwrap()
}

/// A runner of `PROPTEST_CASES` cases (`default` when unset) that keeps no failure files,
/// and that count.
pub fn runner(default: u32) -> (TestRunner, u32) {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default);
    let runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    (runner, cases)
}

/// The messages of a session's transcript, in order.
pub async fn transcript(runtime: &Arc<Runtime>, target: &SessionTarget) -> Vec<Message> {
    let mut stream = runtime.sessions().transcript("", target).await.unwrap();
    let mut messages = Vec::new();
    while let Some(item) = stream.recv().await {
        if let TranscriptItem::Entry(entry) = item.unwrap()
            && let EntryBody::Message { message } = entry.body
        {
            messages.push(message);
        }
    }
    messages
}
