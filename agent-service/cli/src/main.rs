//! `openclaw`: start the services (`up`, `demo`) or talk to a running
//! agent-service (`chat`, `sessions`, `preview`, ...). See `openclaw --help`.

use std::{
    io::{IsTerminal, Write},
    process::ExitCode,
    sync::Arc,
};

use clap::Parser;
use openclaw_cli::{Cli, Style, Term, up::Host};

fn main() -> ExitCode {
    let cli = Cli::parse();
    // `up` and `demo` run the services in this process, and with them the commands agents
    // run: the same hardening as agent-service's own `main`, before the runtime (or anything
    // else) owns a descriptor.
    if cli.command.serves() {
        let hardened = service_kit::close_inherited_descriptors()
            .and_then(|()| service_kit::deny_same_user_inspection());
        if let Err(problem) = hardened {
            eprintln!("error: {problem}");
            return ExitCode::FAILURE;
        }
    }
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("error: cannot start the async runtime: {error}");
            return ExitCode::from(70);
        }
    };
    let code = runtime.block_on(run(cli));
    // A read of the terminal can still be waiting (an approval question that was
    // answered elsewhere): it cannot be cancelled, and the command is done.
    runtime.shutdown_background();
    code
}

async fn run(cli: Cli) -> ExitCode {
    let redactor = openclaw_secrets::Redactor::new();
    if let Some(observe) = cli.command.observe() {
        // The demo's terminal is a chat: text logs there are warnings and
        // errors only (RUST_LOG or --log-format json for everything).
        let demo = matches!(cli.command, openclaw_cli::Command::Demo(_));
        let filter = if demo && observe.log_format == service_kit::LogFormat::Text {
            "warn"
        } else {
            "info"
        };
        service_kit::init_tracing_with(
            observe.log_format,
            openclaw_secrets::RedactingWriter::new(redactor.clone(), std::io::stderr),
            filter,
        );
    }
    let style = Style::detect(
        std::env::var("NO_COLOR").ok().as_deref(),
        std::io::stdout().is_terminal(),
        std::io::stderr().is_terminal(),
    );
    let (mut out, mut err) = (std::io::stdout(), std::io::stderr());
    let mut term = Term::new(&mut out, &mut err, style);
    let cwd = match std::env::current_dir() {
        Ok(cwd) => cwd,
        Err(error) => {
            let _ = term.message(&format!(
                "error: cannot read the current directory: {error}"
            ));
            return ExitCode::from(74);
        }
    };
    let host = Host {
        redactor,
        env: Arc::new(agent_runtime::ProcessEnv),
        cwd,
        stdin_tty: std::io::stdin().is_terminal(),
    };
    // The services `up` and `demo` run stop gracefully on Ctrl-C or SIGTERM (the shutdown
    // future); any other command is ended where it waits, with the shell's code for the
    // signal.
    let serves = cli.command.serves();
    let interrupted = match openclaw_cli::Interrupt::listen() {
        Ok(interrupt) => interrupt,
        Err(error) => {
            let _ = term.message(&format!("error: cannot watch for Ctrl-C: {error}"));
            return ExitCode::from(70);
        }
    };
    let command = openclaw_cli::run(cli, &host, &mut term, service_kit::shutdown_signal());
    let outcome = if serves {
        Some(command.await)
    } else {
        tokio::select! {
            outcome = command => Some(outcome),
            signal = interrupted.wait() => {
                // The command's future (and its calls, which the server sees cancelled) is
                // dropped here; a line on a fresh stderr handle says why it ended.
                let _ = writeln!(std::io::stderr(), "{}", signal.message());
                return ExitCode::from(signal.exit_code());
            }
        }
    };
    match outcome {
        None | Some(Ok(())) => ExitCode::SUCCESS,
        // The reader of our output left (`openclaw sessions list | head`): it has what it
        // wanted, so nothing is wrong and nothing is said.
        Some(Err(error)) if error.is_closed_pipe() => ExitCode::SUCCESS,
        Some(Err(error)) => {
            let _ = term.message(&format!("error: {error}"));
            ExitCode::from(error.exit_code())
        }
    }
}
