//! The `prompt-service` binary as a user meets it: its help and version,
//! the `render` subcommand's errors and pipes, and its log lines.

use std::{
    io::{BufRead, BufReader},
    process::{Command, Output, Stdio},
};

const EXAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/render-request.json5");

fn binary() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_prompt-service"));
    command.env_clear().stdin(Stdio::null());
    command
}

fn run(args: &[&str]) -> Output {
    binary().args(args).output().expect("runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A worker-thread count the async runtime cannot use is one line naming the variable and
/// exit 64 (tokio itself would panic on it); a good one starts.
#[test]
fn a_bad_worker_thread_count_is_one_line_and_exit_64() {
    for value in ["0", "many"] {
        let output = binary()
            .env("TOKIO_WORKER_THREADS", value)
            .arg("--version")
            .output()
            .expect("runs");
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(64), "{err}");
        assert_eq!(
            err.trim_end(),
            format!(
                "error: TOKIO_WORKER_THREADS: invalid value {value:?}: a number of worker \
                 threads, 1 or more"
            )
        );
    }
    let output = binary()
        .env("TOKIO_WORKER_THREADS", "1")
        .arg("--version")
        .output()
        .expect("runs");
    assert!(output.status.success(), "{output:?}");
}

#[test]
fn help_speaks_to_users_and_version_names_the_binary() {
    let help = run(&["--help"]);
    assert!(help.status.success());
    let text = stdout(&help);
    assert!(
        text.starts_with("Renders the system prompts of OpenClaw agents, over gRPC."),
        "{text}"
    );
    assert!(
        !text.contains("serve()") && !text.contains("gRPC shell"),
        "{text}"
    );
    let version = run(&["-V"]);
    assert_eq!(
        stdout(&version),
        format!("prompt-service {}\n", env!("CARGO_PKG_VERSION"))
    );
    // `render` reads a file and prints: no listen address to offer.
    let render_help = stdout(&run(&["render", "--help"]));
    assert!(render_help.contains("--format"), "{render_help}");
    assert!(!render_help.contains("--listen"), "{render_help}");
    assert!(!render_help.contains("--tls"), "{render_help}");
    // `healthcheck` still takes one.
    assert!(stdout(&run(&["healthcheck", "--help"])).contains("--listen"));
}

#[test]
fn a_missing_request_file_is_named_without_a_backtrace() {
    let output = binary()
        .args(["render", "missing.json"])
        .env("RUST_BACKTRACE", "1")
        .output()
        .expect("runs");
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(66), "{err}");
    assert!(err.starts_with("error: reading missing.json: "), "{err}");
    assert!(
        !err.contains("acktrace") && !err.contains("Error {"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn a_server_error_is_one_line_without_a_backtrace() {
    // The address is taken: a user's error, reported on one line.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = taken.local_addr().expect("addr").to_string();
    let output = binary()
        .args(["--listen", &addr])
        .env("RUST_BACKTRACE", "full")
        .env("RUST_LOG", "off")
        .output()
        .expect("runs");
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{err}");
    assert!(err.starts_with("error: "), "{err}");
    assert!(!err.contains("acktrace"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn a_reader_that_goes_away_ends_render_quietly() {
    // The read end is closed before the render writes: its write fails
    // with EPIPE, as under `| head` once head has exited.
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    let output = binary()
        .args(["render", EXAMPLE])
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .expect("runs");
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(0), "{err}");
    assert!(err.is_empty(), "{err}");
}

/// The first log lines of a server started with `args`, up to its
/// "listening" line; the server is then killed.
fn startup_log(args: &[&str]) -> String {
    let mut child = binary()
        .args(["--listen", "127.0.0.1:0"])
        .args(args)
        .env("RUST_LOG", "info")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawns");
    let Some(stderr) = child.stderr.take() else {
        panic!("stderr is piped");
    };
    let mut log = String::new();
    for line in BufReader::new(stderr).lines() {
        let line = line.expect("a log line");
        log.push_str(&line);
        log.push('\n');
        if line.contains("prompt-service listening") {
            break;
        }
    }
    child.kill().expect("kill");
    child.wait().expect("wait");
    log
}

#[test]
fn log_lines_off_a_terminal_are_plain_and_fields_are_values() {
    let text = startup_log(&[]);
    assert!(text.contains("prompt-service listening"), "{text}");
    assert!(
        !text.contains('\x1b'),
        "no colour codes in a pipe: {text:?}"
    );
    assert!(text.contains("addr=127.0.0.1:"), "{text}");
    assert!(!text.contains("Some("), "{text}");
    let json = startup_log(&["--log-format", "json"]);
    let Some(line) = json
        .lines()
        .find(|l| l.contains("prompt-service listening"))
    else {
        panic!("{json}");
    };
    let value: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
    let addr = value["fields"]["addr"].as_str().unwrap_or_default();
    assert!(addr.starts_with("127.0.0.1:"), "{line}");
    assert!(!json.contains('\x1b'), "{json:?}");
}
