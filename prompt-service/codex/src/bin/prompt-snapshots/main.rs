//! `prompt-snapshots`: writes, checks and refreshes the committed Codex
//! prompt snapshots of prompt-codex (P-29, P-30).

use std::{path::PathBuf, process::ExitCode};

use clap::{Parser, Subcommand};

mod commands;

/// Generate or check the Codex runtime prompt snapshots.
#[derive(Debug, Parser)]
#[command(about, long_about = None)]
struct Cli {
    /// The snapshots folder (default: prompt-service/codex/snapshots).
    #[arg(long, global = true)]
    dir: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Rewrite every snapshot file and delete stale ones.
    Gen,
    /// Regenerate in memory; print a unified diff and exit 1 on any drift.
    Check,
    /// Refresh the pinned Codex model-prompt fixture from a Codex model catalog.
    SyncCodexModel {
        /// Catalog to read (a models_cache.json or a models.json) instead of
        /// $CODEX_HOME/models_cache.json, ~/.codex/models_cache.json and
        /// ~/code/codex/codex-rs/models-manager/models.json, in that order.
        #[arg(long)]
        catalog: Option<PathBuf>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let dir = cli.dir.unwrap_or_else(commands::default_dir);
    let result = match cli.command {
        Command::Gen => commands::generate(&dir),
        Command::Check => commands::check(&dir),
        Command::SyncCodexModel { catalog } => commands::sync_codex_model(&dir, catalog),
    };
    match result {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::from(2)
        }
    }
}
