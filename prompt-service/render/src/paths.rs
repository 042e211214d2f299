//! Lexical path handling. The renderer never touches the filesystem, so paths
//! are normalised as strings: `.` and `..` are resolved, repeated slashes
//! collapsed. The runtime does the real (symlink-aware) confinement on disk.

use std::borrow::Cow;

/// Normalises an absolute POSIX path. Errors when it is relative, contains a
/// control character or climbs above the root.
pub fn normalize_absolute(path: &str) -> Result<String, String> {
    if path.chars().any(char::is_control) {
        return Err("must not contain control characters".to_owned());
    }
    if !path.starts_with('/') {
        return Err(format!("{path:?} is not an absolute path"));
    }
    // Built as `/part/part`; `..` cuts the last `/part` off again.
    let mut out = String::with_capacity(path.len());
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => match out.rfind('/') {
                Some(last) => out.truncate(last),
                None => return Err(format!("{path:?} climbs above the root")),
            },
            other => {
                out.push('/');
                out.push_str(other);
            }
        }
    }
    if out.is_empty() {
        out.push('/');
    }
    Ok(out)
}

/// Resolves `path` (relative to `workspace`, or absolute) and returns it
/// relative to the workspace. Errors when the result lies outside it.
pub fn relative_in_workspace(workspace: &str, path: &str) -> Result<String, String> {
    let trimmed = path.trim();
    if trimmed.is_empty() {
        return Err("must not be empty".to_owned());
    }
    let joined = if trimmed.starts_with('/') {
        Cow::Borrowed(trimmed)
    } else {
        Cow::Owned([workspace, "/", trimmed].concat())
    };
    let absolute = normalize_absolute(&joined)?;
    let root = if workspace == "/" { "" } else { workspace };
    match absolute.strip_prefix(root) {
        Some(rest) if rest.starts_with('/') && rest.len() > 1 => Ok(rest[1..].to_owned()),
        _ => Err(format!("{path:?} is outside the workspace {workspace}")),
    }
}

/// The last path component.
pub fn basename(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes_dots_and_slashes() {
        assert_eq!(
            normalize_absolute("/a//b/./c/../d/").as_deref(),
            Ok("/a/b/d")
        );
        assert_eq!(normalize_absolute("/").as_deref(), Ok("/"));
        assert!(normalize_absolute("a/b").is_err());
        assert!(normalize_absolute("/a/../..").is_err());
        assert!(normalize_absolute("/a\nb").is_err());
    }

    #[test]
    fn confines_to_the_workspace() {
        let ws = "/home/u/ws";
        assert_eq!(
            relative_in_workspace(ws, "AGENTS.md").as_deref(),
            Ok("AGENTS.md")
        );
        assert_eq!(
            relative_in_workspace(ws, "/home/u/ws/docs/x.md").as_deref(),
            Ok("docs/x.md")
        );
        assert_eq!(
            relative_in_workspace(ws, "a/../B.md").as_deref(),
            Ok("B.md")
        );
        assert!(relative_in_workspace(ws, "../secret").is_err());
        assert!(relative_in_workspace(ws, "/home/u/ws-other/x").is_err());
        assert!(relative_in_workspace(ws, "/home/u/ws").is_err());
        assert!(relative_in_workspace(ws, "/etc/passwd").is_err());
        assert!(relative_in_workspace(ws, " ").is_err());
    }
}
