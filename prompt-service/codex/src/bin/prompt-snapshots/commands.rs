//! The three subcommands. All file access of prompt-codex lives here.

use std::{
    collections::BTreeSet,
    fs,
    path::{Path, PathBuf},
    process::ExitCode,
};

use prompt_codex::{
    CatalogSource, CodexError, ModelFixture,
    snapshots::{self, HAPPY_PATH_DIR, MODEL_CATALOG_DIR, TEST_CATALOG, TEST_CATALOG_SHOWN},
};

/// Why a command could not run (drift is not an error: it is exit code 1).
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// A file could not be read or written.
    #[error("{action} {path}: {source}")]
    Io {
        /// What was being done.
        action: &'static str,
        /// The path.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The mapping or a catalog was refused.
    #[error(transparent)]
    Codex(#[from] CodexError),
}

fn io(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> ToolError {
    let path = path.to_owned();
    move |source| ToolError::Io {
        action,
        path,
        source,
    }
}

fn crate_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `prompt-service/codex/snapshots`.
pub fn default_dir() -> PathBuf {
    crate_root().join("snapshots")
}

const REGENERATE: &str = "cargo run -p prompt-codex --bin prompt-snapshots -- gen";

/// The fixture made from our own catalog: the only one CI accepts.
fn expected_fixture() -> Result<ModelFixture, ToolError> {
    let path = crate_root().join(TEST_CATALOG);
    let text = fs::read_to_string(&path).map_err(io("read", &path))?;
    Ok(ModelFixture::from_catalog(
        &text,
        CatalogSource {
            path: TEST_CATALOG_SHOWN.to_owned(),
            kind: "checked_in_catalog",
        },
    )?)
}

fn fixture_paths(dir: &Path) -> (PathBuf, PathBuf) {
    let catalog = dir.join(MODEL_CATALOG_DIR);
    (
        catalog.join(ModelFixture::instructions_file_name()),
        catalog.join(ModelFixture::source_file_name()),
    )
}

fn fixture_files(fixture: &ModelFixture) -> [(String, String); 2] {
    [
        (
            format!(
                "{MODEL_CATALOG_DIR}/{}",
                ModelFixture::instructions_file_name()
            ),
            fixture.instructions_file(),
        ),
        (
            format!("{MODEL_CATALOG_DIR}/{}", ModelFixture::source_file_name()),
            fixture.source_file(),
        ),
    ]
}

fn write(dir: &Path, rel: &str, content: &str) -> Result<(), ToolError> {
    let path = dir.join(rel);
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).map_err(io("create", parent))?;
    }
    fs::write(&path, content).map_err(io("write", &path))
}

/// Files currently in the scenario folder, as `snapshots/`-relative paths.
fn existing(dir: &Path) -> Result<BTreeSet<String>, ToolError> {
    let folder = dir.join(HAPPY_PATH_DIR);
    let mut out = BTreeSet::new();
    let entries = match fs::read_dir(&folder) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(io("list", &folder)(e)),
    };
    for entry in entries {
        let entry = entry.map_err(io("list", &folder))?;
        if entry.path().is_file() {
            out.insert(format!(
                "{HAPPY_PATH_DIR}/{}",
                entry.file_name().to_string_lossy()
            ));
        }
    }
    Ok(out)
}

/// `gen`: writes every snapshot from the fixture on disk (made from our
/// catalog first if there is none yet) and deletes stale files.
pub fn generate(dir: &Path) -> Result<ExitCode, ToolError> {
    let (instructions, source) = fixture_paths(dir);
    let fixture = if instructions.is_file() && source.is_file() {
        let text = fs::read_to_string(&instructions).map_err(io("read", &instructions))?;
        let note = fs::read_to_string(&source).map_err(io("read", &source))?;
        ModelFixture::from_files(&text, &note)?
    } else {
        let fixture = expected_fixture()?;
        for (rel, content) in fixture_files(&fixture) {
            write(dir, &rel, &content)?;
        }
        fixture
    };
    let files = snapshots::files(&fixture)?;
    for (rel, content) in &files {
        write(dir, rel, content)?;
    }
    for stale in existing(dir)?.difference(&files.keys().cloned().collect()) {
        let path = dir.join(stale);
        fs::remove_file(&path).map_err(io("remove", &path))?;
        println!("removed stale {stale}");
    }
    println!("wrote {} files under {}", files.len(), dir.display());
    Ok(ExitCode::SUCCESS)
}

fn diff(rel: &str, committed: &str, fresh: &str) -> String {
    similar::TextDiff::from_lines(committed, fresh)
        .unified_diff()
        .context_radius(3)
        .header(
            &format!("a/{rel} (committed)"),
            &format!("b/{rel} (generated)"),
        )
        .to_string()
}

/// `check`: regenerates everything from our catalog in memory and reports
/// every difference from the committed files. Exit 1 on drift.
pub fn check(dir: &Path) -> Result<ExitCode, ToolError> {
    let fixture = expected_fixture()?;
    let mut expected = snapshots::files(&fixture)?;
    expected.extend(fixture_files(&fixture));
    let mut drift = 0;
    for (rel, fresh) in &expected {
        let path = dir.join(rel);
        match fs::read_to_string(&path) {
            Ok(committed) if committed == *fresh => {}
            Ok(committed) => {
                drift += 1;
                print!("{}", diff(rel, &committed, fresh));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                drift += 1;
                println!("missing {rel}");
            }
            Err(e) => return Err(io("read", &path)(e)),
        }
    }
    for stale in existing(dir)?.difference(&expected.keys().cloned().collect()) {
        drift += 1;
        println!("stale {stale}");
    }
    if drift == 0 {
        println!("snapshots up to date ({} files)", expected.len());
        return Ok(ExitCode::SUCCESS);
    }
    eprintln!(
        "{drift} snapshot file(s) differ from the generated ones. If the change is intended, run `{REGENERATE}` and commit the result. The model-prompt fixture must come from our catalog: `cargo run -p prompt-codex --bin prompt-snapshots -- sync-codex-model --catalog {TEST_CATALOG_SHOWN}`."
    );
    Ok(ExitCode::FAILURE)
}

/// A catalog location and how the fixture should name it.
struct Candidate {
    path: PathBuf,
    source: CatalogSource,
}

fn candidates(catalog: Option<PathBuf>) -> Vec<Candidate> {
    if let Some(path) = catalog {
        let workspace = crate_root()
            .ancestors()
            .nth(2)
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let absolute = fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
        let inside = fs::canonicalize(&workspace)
            .ok()
            .and_then(|root| absolute.strip_prefix(root).ok().map(Path::to_path_buf));
        // A `models.json` is a catalog checked into a repository (Codex's
        // own, or ours); anything else outside this workspace is a cache.
        let is_models_json = path.file_name().is_some_and(|n| n == "models.json");
        let source = match inside {
            Some(rel) => CatalogSource {
                path: rel.to_string_lossy().into_owned(),
                kind: "checked_in_catalog",
            },
            None => CatalogSource {
                path: path.to_string_lossy().into_owned(),
                kind: if is_models_json {
                    "checked_in_catalog"
                } else {
                    "models_cache"
                },
            },
        };
        return vec![Candidate { path, source }];
    }
    let mut out = Vec::new();
    if let Some(home) = std::env::var_os("CODEX_HOME").filter(|v| !v.is_empty()) {
        out.push(Candidate {
            path: PathBuf::from(home).join("models_cache.json"),
            source: CatalogSource {
                path: "$CODEX_HOME/models_cache.json".to_owned(),
                kind: "models_cache",
            },
        });
    }
    if let Some(home) = std::env::var_os("HOME").filter(|v| !v.is_empty()) {
        let home = PathBuf::from(home);
        out.push(Candidate {
            path: home.join(".codex").join("models_cache.json"),
            source: CatalogSource {
                path: "~/.codex/models_cache.json".to_owned(),
                kind: "models_cache",
            },
        });
        // A maintainer's Codex checkout, last (P-44).
        out.push(Candidate {
            path: home.join(CODEX_CHECKOUT_CATALOG),
            source: CatalogSource {
                path: format!("~/{CODEX_CHECKOUT_CATALOG}"),
                kind: "checked_in_catalog",
            },
        });
    }
    out
}

/// Codex's checked-in model catalog in a checkout at `~/code/codex`.
const CODEX_CHECKOUT_CATALOG: &str = "code/codex/codex-rs/models-manager/models.json";

/// `sync-codex-model`: renders the pinned model's instructions from the
/// first catalog found and rewrites the fixture. With none found it changes
/// nothing, says so and succeeds.
pub fn sync_codex_model(dir: &Path, catalog: Option<PathBuf>) -> Result<ExitCode, ToolError> {
    let candidates = candidates(catalog);
    let Some(found) = candidates.iter().find(|c| c.path.is_file()) else {
        let looked: Vec<String> = candidates
            .iter()
            .map(|c| c.path.display().to_string())
            .collect();
        println!(
            "no Codex model catalog found (looked at: {}); the model-prompt fixture is unchanged",
            if looked.is_empty() {
                "nothing: neither CODEX_HOME nor HOME is set".to_owned()
            } else {
                looked.join(", ")
            }
        );
        return Ok(ExitCode::SUCCESS);
    };
    let text = fs::read_to_string(&found.path).map_err(io("read", &found.path))?;
    let fixture = ModelFixture::from_catalog(&text, found.source.clone())?;
    for (rel, content) in fixture_files(&fixture) {
        write(dir, &rel, &content)?;
    }
    println!(
        "model-prompt fixture refreshed from {} ({}); run `{REGENERATE}` to update the snapshots",
        found.path.display(),
        found.source.kind
    );
    if found.source.path != TEST_CATALOG_SHOWN {
        println!(
            "note: that catalog is not ours; do not commit its prompt text (`check` accepts only the fixture from {TEST_CATALOG_SHOWN})"
        );
    }
    Ok(ExitCode::SUCCESS)
}
