//! Runs a parsed command line: one function per command, all returning
//! [`CliError`] so `main` prints one `error:` line and exits with its code.

use std::future::Future;

use tokio::io::AsyncBufReadExt;

use crate::{
    approvals,
    args::{ApprovalsAction, Cli, Command, SessionsAction},
    chat,
    client::{self, Target},
    cron,
    error::CliError,
    inspect, sessions, status,
    term::Term,
    up::{self, Host},
};

/// Runs `cli`. `shutdown` resolves on Ctrl-C/SIGTERM; only `up` and `demo`
/// wait for it.
pub async fn run(
    cli: Cli,
    host: &Host,
    term: &mut Term<'_>,
    shutdown: impl Future<Output = ()>,
) -> Result<(), CliError> {
    match cli.command {
        Command::Up(args) => up::up(&args, host, term, shutdown).await,
        Command::Demo(args) => up::demo(&args, host, term, shutdown).await,
        Command::Chat(args) => {
            let mut client = client::Connect::from_args(&args.server)?.open().await?;
            let target = Target::new(args.agent.as_deref(), args.session.as_deref());
            let decider = approvals::default_decider(host.env.var("USER").as_deref());
            let stdin = tokio::io::BufReader::new(tokio::io::stdin());
            match &args.message {
                // One message: a person at a terminal answers approvals there;
                // piped stdin is not a person, so the run only says how to decide.
                Some(message) if host.stdin_tty => {
                    let mut lines = stdin.lines();
                    let mut approver = chat::Approver::reading(&mut lines, decider);
                    chat::run_turn_with(
                        &mut client,
                        &target,
                        message,
                        args.verbose,
                        &mut approver,
                        term,
                    )
                    .await
                    .map(drop)
                }
                Some(message) => chat::run_turn(&mut client, &target, message, args.verbose, term)
                    .await
                    .map(drop),
                None => {
                    chat::interactive(
                        &mut client,
                        &target,
                        stdin,
                        host.stdin_tty,
                        args.verbose,
                        &decider,
                        term,
                    )
                    .await
                }
            }
        }
        Command::Setup(args) => {
            let mut client = client::Connect::from_args(&args.server)?.open().await?;
            let agent = args.agent.unwrap_or_default();
            inspect::setup(&mut client, &agent, args.full_reset, term).await
        }
        Command::Status(args) => status::status(&args, term).await,
        Command::Agents(args) => {
            let mut client = client::Connect::from_args(&args)?.open().await?;
            inspect::agents(&mut client, term).await
        }
        Command::Sessions(args) => {
            let mut client = client::Connect::from_args(&args.server)?.open().await?;
            let agent = args.agent.as_deref();
            match args.action.unwrap_or(SessionsAction::List) {
                SessionsAction::List => {
                    sessions::list(&mut client, agent.unwrap_or_default(), term).await
                }
                SessionsAction::Show { key } => {
                    sessions::show(&mut client, &Target::new(agent, Some(&key)), term).await
                }
                SessionsAction::Reset { key } => {
                    sessions::reset(&mut client, &Target::new(agent, Some(&key)), term).await
                }
                SessionsAction::Delete { key } => {
                    sessions::delete(&mut client, &Target::new(agent, Some(&key)), term).await
                }
            }
        }
        Command::Preview(args) => {
            let mut client = client::Connect::from_args(&args.server)?.open().await?;
            let target = Target::new(args.agent.as_deref(), args.session.as_deref());
            inspect::preview(&mut client, &target, args.part, term).await
        }
        Command::Context(args) => {
            let mut client = client::Connect::from_args(&args.server)?.open().await?;
            let target = Target::new(args.agent.as_deref(), args.session.as_deref());
            inspect::context(&mut client, &target, args.detail, term).await
        }
        Command::Skills(args) => {
            let mut client = client::Connect::from_args(&args.server)?.open().await?;
            inspect::skills(&mut client, args.agent.as_deref().unwrap_or_default(), term).await
        }
        Command::Cron(args) => {
            let mut client = client::Connect::from_args(&args.server)?.open().await?;
            let action = args.action.unwrap_or(crate::args::CronAction::List);
            cron::run(
                &mut client,
                args.agent.as_deref().unwrap_or_default(),
                action,
                term,
            )
            .await
        }
        Command::Approvals(args) => {
            let mut client = client::Connect::from_args(&args.server)?.open().await?;
            let decider = approvals::default_decider(host.env.var("USER").as_deref());
            let action = args.action.unwrap_or(ApprovalsAction::List {
                session: None,
                all: false,
            });
            approvals::run(
                &mut client,
                args.agent.as_deref().unwrap_or_default(),
                action,
                &decider,
                term,
            )
            .await
        }
    }
}
