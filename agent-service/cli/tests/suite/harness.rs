//! The demo stack on 127.0.0.1:0 in a temporary directory, and a recorder
//! for what a command writes to stdout and stderr (in order).

use std::{
    io::Write,
    path::{Path, PathBuf},
    sync::{Arc, Mutex},
    time::Duration,
};

use agent_runtime::{MapEnv, Settings};
use openclaw_cli::{
    CliError, Style, Term, chat,
    client::{self, Client, Target},
    demo,
    stack::{Listeners, Stack, StackOptions},
    up::{self, Host},
};
use openclaw_proto::agent::v1 as pb;
use tokio::net::TcpListener;

/// The demo stack, as `openclaw up --demo` starts it, in a temp dir.
pub struct DemoStack {
    pub stack: Stack,
    pub host: Host,
    pub dir: tempfile::TempDir,
}

impl DemoStack {
    pub async fn start() -> Self {
        Self::start_scripted(None).await
    }

    /// The demo stack whose scripted model plays `script` (JSON5) instead of
    /// the demo's.
    pub async fn start_with_script(script: &str) -> Self {
        Self::start_scripted(Some(script)).await
    }

    async fn start_scripted(script: Option<&str>) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let host = host(dir.path());
        let settings = up::resolve_settings(None, None, true, &host).expect("settings");
        let files = demo::write_demo_files(&settings.config_path).expect("demo files");
        assert!(files.config_written && files.script_written, "{files:?}");
        if let Some(script) = script {
            std::fs::write(&files.script_path, script).expect("write the script");
        }
        let mut stack = start_stack(settings, &host).await.expect("stack");
        stack
            .wait_ready(Duration::from_secs(20))
            .await
            .expect("ready");
        Self { stack, host, dir }
    }

    pub async fn client(&self) -> Client {
        client::connect(&self.stack.agent_url())
            .await
            .expect("connect")
    }

    /// Opens a Run of `message` in the default agent's main session.
    pub async fn open_run(&self, message: &str) -> tonic::Streaming<pb::RunEvent> {
        let request = pb::RunRequest {
            message: message.into(),
            ..Default::default()
        };
        self.client()
            .await
            .run(request)
            .await
            .expect("run")
            .into_inner()
    }

    /// `openclaw chat -m message` (with `-v` when `verbose`) in the default agent's main
    /// session: what it returned and wrote.
    pub async fn turn(
        &self,
        message: &str,
        verbose: bool,
    ) -> (Result<chat::TurnOutcome, CliError>, Recorder) {
        let mut client = self.client().await;
        capture(async |term| {
            chat::run_turn(&mut client, &Target::default(), message, verbose, term).await
        })
        .await
    }

    /// Interactive `openclaw chat` in the default agent's main session, reading `input` as
    /// typed lines, `decided_by` answering approval questions: what it returned and wrote.
    pub async fn chat(&self, input: &[u8], decided_by: &str) -> (Result<(), CliError>, Recorder) {
        let mut client = self.client().await;
        capture(async |term| {
            chat::interactive(
                &mut client,
                &Target::default(),
                input,
                false,
                false,
                decided_by,
                term,
            )
            .await
        })
        .await
    }

    /// [`Self::chat`], which must end well: everything it wrote, in write order.
    pub async fn chat_ok(&self, input: &[u8], decided_by: &str) -> String {
        let (result, rec) = self.chat(input, decided_by).await;
        result.expect("chat");
        rec.combined()
    }

    pub fn state_dir(&self) -> PathBuf {
        self.stack.settings().state_dir.clone()
    }
}

/// The stack of `settings` for `host`, both services on 127.0.0.1:0.
pub async fn start_stack(settings: Settings, host: &Host) -> Result<Stack, CliError> {
    let listeners = Listeners {
        prompt: TcpListener::bind("127.0.0.1:0").await.expect("bind"),
        agent: TcpListener::bind("127.0.0.1:0").await.expect("bind"),
    };
    let options = StackOptions {
        redactor: Default::default(),
        settings,
        env: Arc::clone(&host.env),
        drain_timeout: Duration::from_secs(5),
    };
    Stack::start(listeners, options).await
}

/// A host whose HOME and current directory are `dir`.
pub fn host(dir: &Path) -> Host {
    Host {
        redactor: Default::default(),
        env: Arc::new(MapEnv::of([("HOME", dir.display().to_string())])),
        cwd: dir.to_path_buf(),
        stdin_tty: false,
    }
}

/// Everything written to stdout ('o') and stderr ('e'), in write order.
#[derive(Clone, Default)]
pub struct Recorder(Arc<Mutex<Vec<(char, String)>>>);

pub struct Stream {
    recorder: Recorder,
    tag: char,
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf).into_owned();
        self.recorder.0.lock().expect("lock").push((self.tag, text));
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Recorder {
    pub fn streams(&self) -> (Stream, Stream) {
        (
            Stream {
                recorder: self.clone(),
                tag: 'o',
            },
            Stream {
                recorder: self.clone(),
                tag: 'e',
            },
        )
    }

    fn joined(&self, keep: impl Fn(char) -> bool) -> String {
        let writes = self.0.lock().expect("lock");
        writes
            .iter()
            .filter(|(tag, _)| keep(*tag))
            .map(|(_, text)| text.as_str())
            .collect()
    }

    pub fn stdout(&self) -> String {
        self.joined(|t| t == 'o')
    }

    pub fn stderr(&self) -> String {
        self.joined(|t| t == 'e')
    }

    /// Both streams as a terminal shows them.
    pub fn combined(&self) -> String {
        self.joined(|_| true)
    }
}

/// Runs `f` with a plain (colourless) terminal recording into a new recorder.
pub async fn capture<T, F>(f: F) -> (T, Recorder)
where
    F: AsyncFnOnce(&mut Term<'_>) -> T,
{
    let recorder = Recorder::default();
    let (mut out, mut err) = recorder.streams();
    let mut term = Term::new(&mut out, &mut err, Style::PLAIN);
    let value = f(&mut term).await;
    (value, recorder)
}

/// Asserts that `needles` occur in `haystack` in this order.
#[track_caller]
pub fn assert_in_order(haystack: &str, needles: &[&str]) {
    let mut from = 0;
    for needle in needles {
        match haystack[from..].find(needle) {
            Some(at) => from += at + needle.len(),
            None => {
                panic!("{needle:?} missing (or out of order) after byte {from} in:\n{haystack}")
            }
        }
    }
}
