//! The declarative hook rules: replace a file's content, drop a file, add one; and reading a
//! workspace file for them, confined to the workspace as every other read.

use std::io::Read;
use std::path::{Path, PathBuf};

use openclaw_config::resolve::BootstrapHook;
use openclaw_workspace::{BOOTSTRAP_FILE_MAX_BYTES, Confined};

use super::{HookError, InjectedFile};

/// Applies one rule (not a command) to the files; on an error they are left as they were.
pub(super) async fn apply(
    rule: &BootstrapHook,
    workspace: &Path,
    files: &mut Vec<InjectedFile>,
) -> Result<(), HookError> {
    match rule {
        BootstrapHook::Replace { name, with } => {
            let Some(at) = files.iter().position(|f| f.name == *name) else {
                return Err(HookError::Failed(format!(
                    "no injected file is named {name:?}, so there is nothing to replace \
                     (injected: {})",
                    names(files)
                )));
            };
            let (content, path) = read(workspace, with).await?;
            let file = &mut files[at];
            file.content = content;
            file.path = path;
            file.missing = false;
        }
        BootstrapHook::Drop { name } => files.retain(|f| f.name != *name),
        BootstrapHook::Add { name, from } => {
            if files.iter().any(|f| f.name == *name) {
                return Err(HookError::Failed(format!(
                    "{name:?} is already injected; use \"replace\" to change its content"
                )));
            }
            let (content, path) = read(workspace, from).await?;
            files.push(InjectedFile {
                name: name.clone(),
                path,
                content,
                missing: false,
            });
        }
        BootstrapHook::Command(_) => {}
    }
    Ok(())
}

fn names(files: &[InjectedFile]) -> String {
    let names: Vec<&str> = files.iter().map(|f| f.name.as_str()).collect();
    if names.is_empty() {
        "none".to_owned()
    } else {
        names.join(", ")
    }
}

/// The text of the workspace file `rel` (at most [`BOOTSTRAP_FILE_MAX_BYTES`]) and its real
/// path; a symbolic link leading out of the workspace is refused.
pub(super) async fn read(workspace: &Path, rel: &str) -> Result<(String, PathBuf), HookError> {
    let workspace = workspace.to_path_buf();
    let rel = rel.to_owned();
    tokio::task::spawn_blocking(move || read_blocking(&workspace, &rel))
        .await
        .map_err(|e| HookError::Failed(format!("reading the file failed: {e}")))?
}

fn read_blocking(workspace: &Path, rel: &str) -> Result<(String, PathBuf), HookError> {
    use openclaw_workspace::Error as E;
    let describe = |error: E| match error {
        E::PathDenied { .. } => HookError::Denied(format!("{rel:?}: {error}")),
        other => HookError::Failed(format!("{rel:?} cannot be read: {other}")),
    };
    let confined = Confined::new(workspace).map_err(describe)?;
    let (file, real) = confined.open_read(rel).map_err(describe)?;
    let mut bytes = Vec::new();
    file.take(BOOTSTRAP_FILE_MAX_BYTES as u64)
        .read_to_end(&mut bytes)
        .map_err(|e| HookError::Failed(format!("{rel:?} cannot be read: {e}")))?;
    Ok((String::from_utf8_lossy(&bytes).into_owned(), real))
}
