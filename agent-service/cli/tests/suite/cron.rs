//! `openclaw cron` against the demo stack: add, list, disable, run now, remove.

use openclaw_cli::{CliError, client::Client, cron};

use super::harness::{DemoStack, Recorder, capture};

/// `openclaw cron <args>` for the default agent on `client`: what it returned and wrote.
async fn cron_cli(client: &mut Client, args: &[&str]) -> (Result<(), CliError>, Recorder) {
    let action = action(args);
    capture(async |term| cron::run(client, "", action, term).await).await
}

fn action(args: &[&str]) -> openclaw_cli::CronAction {
    use clap::Parser;
    let cli = openclaw_cli::Cli::try_parse_from(["openclaw", "cron"].iter().chain(args).copied())
        .unwrap_or_else(|e| panic!("{e}"));
    match cli.command {
        openclaw_cli::Command::Cron(args) => args.action.expect("an action"),
        other => panic!("parsed as {other:?}"),
    }
}

#[tokio::test]
async fn cron_jobs_are_added_listed_run_and_removed_from_the_command_line() {
    let demo = DemoStack::start().await;
    let mut client = demo.client().await;

    let (result, rec) = cron_cli(
        &mut client,
        &["add", "every 1h", "Summarise the day.", "--name", "digest"],
    )
    .await;
    result.expect("add");
    let added = rec.stdout();
    let id = added
        .strip_prefix("added cron job ")
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("{added}"))
        .to_owned();
    assert!(added.contains("(digest): next run 20"), "{added}");

    let (result, rec) = cron_cli(&mut client, &["list"]).await;
    result.expect("list");
    let listing = rec.stdout();
    let lines: Vec<&str> = listing.lines().collect();
    assert_eq!(lines.len(), 2, "{listing}");
    assert!(lines[0].starts_with("ID "), "{listing}");
    assert!(lines[1].starts_with(&format!("{id} ")), "{listing}");
    assert!(
        lines[1].contains("digest") && lines[1].contains(&format!("agent:main:cron:{id}")),
        "{listing}"
    );

    let (result, rec) = cron_cli(&mut client, &["disable", &id]).await;
    result.expect("disable");
    assert_eq!(rec.stdout(), format!("cron job {id} disabled\n"));

    // A disabled job still runs on demand, in its own session.
    let (result, rec) = cron_cli(&mut client, &["run", &id]).await;
    result.expect("run");
    assert_eq!(
        rec.stdout(),
        format!("ran in agent:main:cron:{id}: finished\n")
    );
    let (result, rec) = cron_cli(&mut client, &["list"]).await;
    result.expect("list");
    let listing = rec.stdout();
    assert!(listing.contains("disabled"), "{listing}");
    // The run on demand is counted and its outcome shown, like a scheduled one.
    let row: Vec<&str> = listing
        .lines()
        .nth(1)
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert!(
        row.ends_with(&["ok", "1", &format!("agent:main:cron:{id}")]),
        "{listing}"
    );

    let (result, rec) = cron_cli(&mut client, &["rm", &id]).await;
    result.expect("rm");
    assert_eq!(rec.stdout(), format!("removed cron job {id}\n"));
    let (result, _) = cron_cli(&mut client, &["rm", &id]).await;
    let err = result.expect_err("a second rm");
    assert!(err.to_string().contains(&id), "{err}");

    // A schedule that does not parse is refused naming the field.
    let (result, _) = cron_cli(&mut client, &["add", "every 5 fortnights", "x"]).await;
    let err = result.expect_err("bad schedule");
    assert!(err.to_string().contains("spec.schedule"), "{err}");

    // --lightweight is kept on the job; a main-session job cannot have it.
    let (result, _) = cron_cli(
        &mut client,
        &[
            "add",
            "every 1h",
            "Count the open tickets.",
            "--lightweight",
        ],
    )
    .await;
    result.expect("add --lightweight");
    let jobs = client
        .list_cron_jobs(openclaw_proto::agent::v1::ListCronJobsRequest::default())
        .await
        .expect("list")
        .into_inner()
        .jobs;
    let spec = jobs
        .iter()
        .find_map(|j| {
            j.spec
                .as_ref()
                .filter(|s| s.prompt == "Count the open tickets.")
        })
        .expect("the lightweight job");
    assert!(spec.lightweight, "{spec:?}");
    let (result, _) = cron_cli(
        &mut client,
        &["add", "every 1h", "x", "--main", "--lightweight"],
    )
    .await;
    let err = result.expect_err("lightweight main");
    assert!(err.to_string().contains("job.lightweight"), "{err}");
}
