//! `deploy-check`: the commands of deploy/ that need more than `cargo test`.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

/// deploy/'s images and compose file beyond what `cargo test` checks.
#[derive(Parser)]
#[command(version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Split the debug info off the image binaries: OUT/<binary> for the
    /// images (`--build-arg BINARIES=prebuilt` reads deploy/dist/), and
    /// OUT/debug/<binary>.debug to keep.
    Dist {
        /// The binaries (the `dist` profile's build).
        #[arg(long, default_value = "target/dist")]
        from: PathBuf,
        /// Where the split files go.
        #[arg(long, default_value = "deploy/dist")]
        out: PathBuf,
    },
    /// Run deploy/compose.yaml on a real Docker engine end to end (build,
    /// up, health, reflection, tokens, Setup, a Run, restart, stop, down),
    /// from the `dist` build's binaries. Refuses when no engine answers.
    Engine {
        /// The binaries (prompt-service, agent-service) of the `dist` build.
        #[arg(long, default_value = "target/dist")]
        binaries: PathBuf,
        /// A build argument for the images, KEY=VALUE (repeatable), for
        /// example http_proxy=http://127.0.0.1:3142 when apt needs a proxy.
        #[arg(long = "build-arg", value_parser = key_value)]
        build_args: Vec<(String, String)>,
        /// The build containers' network (`host` reaches a proxy on the
        /// host's loopback).
        #[arg(long)]
        build_network: Option<String>,
        /// Where the published ports are reached from here.
        #[arg(long, default_value = "127.0.0.1")]
        host: String,
        /// The largest accepted service image, in MB. The default holds for
        /// the `dist` profile; binaries of the `release` profile (no fat LTO)
        /// make agent-service's image about 10 MB larger.
        #[arg(long, value_name = "MB", default_value_t = deploy_check::engine::IMAGE_LIMIT_BYTES / 1_000_000)]
        image_limit: u64,
    },
}

fn key_value(text: &str) -> Result<(String, String), String> {
    text.split_once('=')
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .ok_or_else(|| format!("{text:?} is not KEY=VALUE"))
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    if let Err(error) = run(Cli::parse()).await {
        eprintln!("deploy-check: {error:#}");
        std::process::exit(1);
    }
}

async fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Dist { from, out } => {
            for split in deploy_check::dist::split_all(&from, &out)? {
                println!(
                    "{}: {} bytes, debug info {} bytes in {}",
                    split.binary.display(),
                    split.binary_bytes,
                    split.debug_bytes,
                    split.debug.display()
                );
            }
        }
        Command::Engine {
            binaries,
            build_args,
            build_network,
            host,
            image_limit,
        } => {
            let repo = std::env::current_dir()?;
            if !repo.join("deploy/compose.yaml").is_file() {
                anyhow::bail!("run deploy-check engine from the repository root");
            }
            let options = deploy_check::engine::Options {
                repo,
                binaries,
                build_args,
                build_network,
                host,
                image_limit_bytes: image_limit.saturating_mul(1_000_000),
            };
            if let Err(error) = deploy_check::engine::run(&options).await {
                eprintln!("deploy-check engine: {error}");
                std::process::exit(match error {
                    deploy_check::engine::EngineError::NoEngine(_) => 2,
                    _ => 1,
                });
            }
        }
    }
    Ok(())
}
