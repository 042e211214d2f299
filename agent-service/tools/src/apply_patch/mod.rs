//! `apply_patch`: applies a patch in the `*** Begin Patch` format (see [`parse`] for the
//! grammar) to files in the workspace.
//!
//! All-or-nothing as far as a patch can be: every operation is checked first (paths confined,
//! files read, every hunk located) and only then are files written, each one replaced
//! atomically (temporary file + rename). A context mismatch or a refused path therefore
//! changes nothing. Governed by `tools.exec.applyPatch`: availability (`enabled`,
//! `allowModels`) is decided by [`crate::policy`]; `workspaceOnly: false` lets paths outside
//! the workspace through (they are still resolved through [`Confined`], rooted at `/`).

mod hunks;
mod parse;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use openclaw_config::resolve::ApplyPatchSettings;
use openclaw_workspace::Confined;
use serde::Deserialize;
use serde_json::{Value, json};

use self::hunks::apply_hunks;
use self::parse::{Operation, parse};
use crate::arguments::{non_empty, parse as parse_args};
use crate::context::ToolContext;
use crate::error::{ToolError, blocking};
use crate::file_io::{read_text, remove_file, write_file};
use crate::policy::apply_patch_available;
use crate::tool::{Tool, ToolOutcome};

/// `apply_patch`: multi-file edits in one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApplyPatchTool {
    settings: ApplyPatchSettings,
}

impl ApplyPatchTool {
    /// The tool under `tools.exec.applyPatch` settings.
    pub fn new(settings: ApplyPatchSettings) -> Self {
        Self { settings }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PatchArgs {
    #[serde(alias = "patch")]
    input: String,
}

#[async_trait]
impl Tool for ApplyPatchTool {
    fn name(&self) -> &'static str {
        "apply_patch"
    }

    fn description(&self) -> String {
        "Edit files with a patch: add, update, move and delete several files in one call. \
         Format: a line '*** Begin Patch', then per file '*** Add File: <path>' followed by \
         the content with every line prefixed by '+'; or '*** Delete File: <path>'; or \
         '*** Update File: <path>', optionally '*** Move to: <new path>', then hunks: a line \
         '@@' (optionally followed by a line of the file the hunk comes after, such as a \
         function signature) and lines prefixed ' ' (unchanged context), '-' (removed) or \
         '+' (added); '*** End of File' after a hunk that ends at the end of the file. Close \
         with '*** End Patch'. Give about three lines of context around each change. Paths \
         are relative to the workspace root. Nothing is changed unless every hunk matches."
            .to_owned()
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "input": { "type": "string", "description": "The whole patch, from '*** Begin Patch' to '*** End Patch'." }
            },
            "required": ["input"],
            "additionalProperties": false
        })
    }

    async fn call(&self, ctx: &ToolContext, arguments: Value) -> ToolOutcome {
        let run = async {
            let args: PatchArgs = parse_args(self.name(), arguments)?;
            non_empty(self.name(), "input", &args.input)?;
            if let Some((provider, model)) = ctx.model.split_once('/')
                && !apply_patch_available(&self.settings, provider, model)
            {
                return Err(ToolError::failed(format!(
                    "apply_patch is not enabled for the model {}; use edit or write instead",
                    ctx.model
                )));
            }
            let patch = parse(&args.input)?;
            let scope = Scope::new(&ctx.workspace, self.settings.workspace_only)?;
            blocking(move || apply(&scope, patch.operations)).await
        };
        run.await.into()
    }
}

/// Where patch paths may point.
struct Scope {
    confined: Arc<Confined>,
    /// Set when `confined` is the whole filesystem: relative paths start here.
    base: Option<PathBuf>,
}

impl Scope {
    fn new(workspace: &Arc<Confined>, workspace_only: bool) -> Result<Self, ToolError> {
        if workspace_only {
            return Ok(Self {
                confined: Arc::clone(workspace),
                base: None,
            });
        }
        let everywhere = Confined::new(Path::new("/"))
            .map_err(|e| ToolError::Internal(format!("cannot open the filesystem root: {e}")))?;
        Ok(Self {
            confined: Arc::new(everywhere),
            base: Some(workspace.root().to_path_buf()),
        })
    }

    fn path(&self, path: &str) -> PathBuf {
        match &self.base {
            Some(base) if Path::new(path).is_relative() => base.join(path),
            Some(_) | None => PathBuf::from(path),
        }
    }

    /// The real path of an existing file, or where a new one would go.
    fn key(&self, path: &str) -> Result<PathBuf, ToolError> {
        match self.confined.resolve_read(self.path(path)) {
            Ok(real) => Ok(real),
            Err(openclaw_workspace::Error::NotFound { .. }) => {
                Ok(self.confined.resolve_write(self.path(path))?)
            }
            Err(e) => Err(e.into()),
        }
    }
}

/// What will happen to one real path.
enum Staged {
    Write(String),
    Delete,
}

struct Change {
    real: PathBuf,
    shown: String,
    staged: Staged,
}

/// Records what will happen to `real`, replacing an earlier plan for the same path.
fn stage(changes: &mut Vec<Change>, real: PathBuf, shown: &str, staged: Staged) {
    changes.retain(|c| c.real != real);
    changes.push(Change {
        real,
        shown: shown.to_owned(),
        staged,
    });
}

/// Checks every operation, then writes.
fn apply(scope: &Scope, operations: Vec<Operation>) -> Result<ToolOutcome, ToolError> {
    let mut changes: Vec<Change> = Vec::new();
    let mut summary: Vec<String> = Vec::new();
    let staged_text = |changes: &[Change], real: &Path| {
        changes
            .iter()
            .find(|c| c.real == real)
            .map(|c| match &c.staged {
                Staged::Write(text) => Some(text.clone()),
                Staged::Delete => None,
            })
    };
    for operation in operations {
        match operation {
            Operation::Add { path, content } => {
                let real = scope.confined.resolve_write(scope.path(&path))?;
                if real.is_dir() {
                    return Err(ToolError::failed(format!(
                        "cannot add {path}: a directory of that name exists"
                    )));
                }
                stage(&mut changes, real, &path, Staged::Write(content));
                summary.push(format!("A {path}"));
            }
            Operation::Delete { path } => {
                let real = scope.key(&path)?;
                let gone = || ToolError::NotFound(format!("cannot delete {path}: no such file"));
                match staged_text(&changes, &real) {
                    Some(None) => return Err(gone()),
                    Some(Some(_)) => {}
                    None if !real.exists() => return Err(gone()),
                    None if !real.is_file() => {
                        return Err(ToolError::failed(format!(
                            "cannot delete {path}: it is not a regular file"
                        )));
                    }
                    None => {}
                }
                // Deleting is writing: refuses a final symbolic link, like every write.
                scope.confined.resolve_write(scope.path(&path))?;
                stage(&mut changes, real, &path, Staged::Delete);
                summary.push(format!("D {path}"));
            }
            Operation::Update {
                path,
                move_to,
                hunks,
            } => {
                let key = scope.key(&path)?;
                let (real, text) = match staged_text(&changes, &key) {
                    Some(Some(text)) => (key, text),
                    Some(None) => {
                        return Err(ToolError::NotFound(format!(
                            "cannot update {path}: an earlier operation of this patch deletes it"
                        )));
                    }
                    None => {
                        let file = read_text(&scope.confined, &scope.path(&path), &path)?;
                        (file.real, file.text)
                    }
                };
                let updated = if hunks.is_empty() {
                    text
                } else {
                    apply_hunks(&text, &hunks, &path)?
                };
                match move_to {
                    None => {
                        let target = scope.confined.resolve_write(&real)?;
                        stage(&mut changes, target, &path, Staged::Write(updated));
                        summary.push(format!("M {path}"));
                    }
                    Some(destination) => {
                        let target = scope.confined.resolve_write(scope.path(&destination))?;
                        if target != real {
                            stage(&mut changes, real, &path, Staged::Delete);
                        }
                        stage(&mut changes, target, &destination, Staged::Write(updated));
                        summary.push(format!("M {destination} (moved from {path})"));
                    }
                }
            }
        }
    }
    // Writes before deletions, so a move never loses the file if its new copy fails.
    changes.sort_by_key(|c| matches!(c.staged, Staged::Delete));
    let mut done: Vec<&str> = Vec::new();
    for change in &changes {
        let result = match &change.staged {
            Staged::Write(text) => write_file(
                &scope.confined,
                &change.real,
                text.as_bytes(),
                &change.shown,
            )
            .map(|_| ()),
            Staged::Delete => remove_file(&scope.confined, &change.real, &change.shown),
        };
        if let Err(error) = result {
            let changed = if done.is_empty() {
                "no files were changed".to_owned()
            } else {
                format!("these were already changed: {}", done.join(", "))
            };
            return Err(ToolError::failed(format!("{error} ({changed})")));
        }
        done.push(&change.shown);
    }
    Ok(ToolOutcome::ok_with(
        format!(
            "Success. Updated the following files:\n{}",
            summary.join("\n")
        ),
        json!({ "files": summary }),
    ))
}
