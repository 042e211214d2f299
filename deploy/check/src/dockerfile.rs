//! The parts of a Dockerfile a container's process depends on: per stage,
//! its base, `ENV`, `ENTRYPOINT`, `CMD`, `USER` and `HEALTHCHECK`.

use std::{collections::BTreeMap, path::Path};

use crate::Error;

/// One `FROM ... AS name` stage.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stage {
    /// The stage name (`AS name`), or its index when unnamed.
    pub name: String,
    /// The `FROM` argument: an image or an earlier stage's name.
    pub base: String,
    /// `ENV` of this stage only, in order.
    pub env: Vec<(String, String)>,
    /// `ENTRYPOINT` (exec form).
    pub entrypoint: Option<Vec<String>>,
    /// `CMD` (exec form).
    pub cmd: Option<Vec<String>>,
    /// `USER`.
    pub user: Option<String>,
    /// `HEALTHCHECK ... CMD [...]` (exec form).
    pub healthcheck: Option<Vec<String>>,
}

/// A parsed Dockerfile.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Dockerfile {
    /// Parser directives (`# key=value` lines at the very top), with their
    /// line numbers.
    pub directives: Vec<(usize, String, String)>,
    /// Stages in file order.
    pub stages: Vec<Stage>,
}

/// What a container of one target sees: the inherited settings resolved.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Image {
    /// Environment, base stages first (later wins).
    pub env: BTreeMap<String, String>,
    /// Entrypoint.
    pub entrypoint: Vec<String>,
    /// Default command.
    pub cmd: Vec<String>,
    /// User (None: root).
    pub user: Option<String>,
    /// Health check command.
    pub healthcheck: Option<Vec<String>>,
}

impl Dockerfile {
    /// Reads and parses `path`.
    pub fn load(path: &Path) -> Result<Self, Error> {
        Self::parse(&crate::read(path)?).map_err(|message| Error::Parse {
            path: path.to_path_buf(),
            message,
        })
    }

    /// Parses Dockerfile text (exec forms only for ENTRYPOINT, CMD and
    /// HEALTHCHECK: the shell forms run through /bin/sh, which is not what
    /// our images do).
    pub fn parse(text: &str) -> Result<Self, String> {
        let directives = parser_directives(text);
        let mut stages: Vec<Stage> = Vec::new();
        for (number, line) in logical_lines(text) {
            let (instruction, rest) = line.split_once(char::is_whitespace).unwrap_or((&line, ""));
            let rest = rest.trim();
            let at = |what: &str| format!("line {number}: {what}");
            if instruction.eq_ignore_ascii_case("FROM") {
                let words: Vec<&str> = rest.split_whitespace().collect();
                let (base, name) = match words.as_slice() {
                    [base] => (*base, stages.len().to_string()),
                    [base, r#as, name] if r#as.eq_ignore_ascii_case("AS") => {
                        (*base, (*name).to_owned())
                    }
                    _ => return Err(at("FROM takes IMAGE [AS NAME]")),
                };
                stages.push(Stage {
                    name,
                    base: base.to_owned(),
                    ..Stage::default()
                });
                continue;
            }
            let Some(stage) = stages.last_mut() else {
                if instruction.eq_ignore_ascii_case("ARG") {
                    continue;
                }
                return Err(at("instruction before the first FROM"));
            };
            match instruction.to_ascii_uppercase().as_str() {
                "ENV" => stage.env.extend(parse_env(rest).map_err(|e| at(&e))?),
                "ENTRYPOINT" => stage.entrypoint = Some(exec_form(rest).map_err(|e| at(&e))?),
                "CMD" => stage.cmd = Some(exec_form(rest).map_err(|e| at(&e))?),
                "USER" => stage.user = Some(rest.to_owned()),
                "HEALTHCHECK" => {
                    let Some((_, command)) = rest.split_once("CMD") else {
                        return Err(at("HEALTHCHECK without CMD"));
                    };
                    stage.healthcheck = Some(exec_form(command.trim()).map_err(|e| at(&e))?);
                }
                _ => {}
            }
        }
        Ok(Self { directives, stages })
    }

    /// What the file needs beyond the engine's built-in frontend: a
    /// `syntax` directive makes BuildKit pull that frontend image before it
    /// reads the file, so builds without registry access (offline, behind a
    /// mirror) fail on line 1.
    pub fn problems(&self) -> Vec<String> {
        self.directives
            .iter()
            .filter(|(_, key, _)| key == "syntax")
            .map(|(line, _, value)| {
                format!(
                    "line {line}: `# syntax={value}` pulls a frontend image before the build \
                     starts (fails offline); use the built-in frontend"
                )
            })
            .collect()
    }

    /// The stage called `name`.
    pub fn stage(&self, name: &str) -> Option<&Stage> {
        self.stages.iter().find(|s| s.name == name)
    }

    /// What a container built with `--target target` runs with: the stage
    /// and the stages it is built `FROM`, resolved.
    pub fn image(&self, target: &str) -> Option<Image> {
        let mut chain = Vec::new();
        let mut current = self.stage(target)?;
        loop {
            chain.push(current);
            match self.stage(&current.base) {
                Some(base) if !chain.iter().any(|s| s.name == base.name) => current = base,
                _ => break,
            }
        }
        let mut image = Image::default();
        for stage in chain.iter().rev() {
            image.env.extend(stage.env.iter().cloned());
            if let Some(entrypoint) = &stage.entrypoint {
                image.entrypoint.clone_from(entrypoint);
            }
            if let Some(cmd) = &stage.cmd {
                image.cmd.clone_from(cmd);
            }
            if stage.user.is_some() {
                image.user.clone_from(&stage.user);
            }
            if stage.healthcheck.is_some() {
                image.healthcheck.clone_from(&stage.healthcheck);
            }
        }
        Some(image)
    }
}

/// `# key=value` lines before the first blank line, other comment or
/// instruction (where BuildKit stops looking for them).
fn parser_directives(text: &str) -> Vec<(usize, String, String)> {
    let mut directives = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let Some(body) = line.trim().strip_prefix('#') else {
            break;
        };
        let Some((key, value)) = body.split_once('=') else {
            break;
        };
        let key = key.trim();
        if key.is_empty() || key.contains(char::is_whitespace) {
            break;
        }
        directives.push((index + 1, key.to_ascii_lowercase(), value.trim().to_owned()));
    }
    directives
}

/// Lines joined across trailing backslashes, without comments and blanks,
/// with the 1-based number of their first line.
fn logical_lines(text: &str) -> Vec<(usize, String)> {
    let mut lines = Vec::new();
    let mut pending: Option<(usize, String)> = None;
    for (index, raw) in text.lines().enumerate() {
        let trimmed = raw.trim();
        if trimmed.starts_with('#') || (trimmed.is_empty() && pending.is_none()) {
            continue;
        }
        let (continues, body) = match trimmed.strip_suffix('\\') {
            Some(body) => (true, body.trim_end()),
            None => (false, trimmed),
        };
        let entry = pending.get_or_insert_with(|| (index + 1, String::new()));
        if !entry.1.is_empty() && !body.is_empty() {
            entry.1.push(' ');
        }
        entry.1.push_str(body);
        if !continues {
            lines.extend(pending.take());
        }
    }
    lines.extend(pending);
    lines
}

/// `K=V K2="V 2"` or the legacy `K V`.
fn parse_env(rest: &str) -> Result<Vec<(String, String)>, String> {
    if !rest.contains('=') {
        let (key, value) = rest
            .split_once(char::is_whitespace)
            .ok_or("ENV takes KEY=VALUE")?;
        return Ok(vec![(key.to_owned(), value.trim().to_owned())]);
    }
    let mut pairs = Vec::new();
    let mut chars = rest.chars().peekable();
    loop {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        if chars.peek().is_none() {
            return Ok(pairs);
        }
        let key: String = std::iter::from_fn(|| chars.next_if(|&c| c != '=')).collect();
        if chars.next() != Some('=') || key.trim().is_empty() {
            return Err(format!("ENV: expected KEY=VALUE near {key:?}"));
        }
        let mut value = String::new();
        if chars.next_if_eq(&'"').is_some() {
            value.extend(std::iter::from_fn(|| chars.next_if(|&c| c != '"')));
            if chars.next() != Some('"') {
                return Err(format!("ENV {key}: unterminated quote"));
            }
        } else {
            value.extend(std::iter::from_fn(|| chars.next_if(|c| !c.is_whitespace())));
        }
        pairs.push((key, value));
    }
}

/// `["a", "b"]`.
fn exec_form(rest: &str) -> Result<Vec<String>, String> {
    serde_json::from_str(rest).map_err(|e| format!("expected the exec form [\"...\"]: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stages_inherit_env_entrypoint_and_user() {
        let file = Dockerfile::parse(
            "# syntax=docker/dockerfile:1\nARG X=1\nFROM debian AS base\nENV A=1 \\\n    B=\"two words\"\nUSER 10001\n\
             FROM base AS app\nENV B=2\nENTRYPOINT [\"/bin/app\"]\nCMD [\"serve\"]\n\
             HEALTHCHECK --interval=5s CMD [\"/bin/app\", \"healthcheck\"]\n",
        )
        .unwrap();
        assert_eq!(
            file.directives,
            [(1, "syntax".to_owned(), "docker/dockerfile:1".to_owned())]
        );
        assert_eq!(
            file.problems(),
            [
                "line 1: `# syntax=docker/dockerfile:1` pulls a frontend image before the build \
              starts (fails offline); use the built-in frontend"
            ]
        );
        let image = file.image("app").unwrap();
        assert_eq!(
            image,
            Image {
                env: [("A".into(), "1".into()), ("B".into(), "2".into())].into(),
                entrypoint: vec!["/bin/app".into()],
                cmd: vec!["serve".into()],
                user: Some("10001".into()),
                healthcheck: Some(vec!["/bin/app".into(), "healthcheck".into()]),
            }
        );
        assert_eq!(
            file.image("base").unwrap().env.get("B").map(String::as_str),
            Some("two words")
        );
    }

    #[test]
    fn directives_end_at_the_first_other_line() {
        let file = Dockerfile::parse("# escape=`\n\n# syntax=x\nFROM a\n").unwrap();
        assert_eq!(file.directives, [(1, "escape".to_owned(), "`".to_owned())]);
        assert!(file.problems().is_empty());
        let file = Dockerfile::parse("# A comment\n# syntax=x\nFROM a\n").unwrap();
        assert!(file.directives.is_empty());
    }

    #[test]
    fn shell_forms_and_stray_instructions_are_refused() {
        assert_eq!(
            Dockerfile::parse("FROM a\nCMD serve\n").unwrap_err(),
            "line 2: expected the exec form [\"...\"]: expected value at line 1 column 1"
        );
        assert_eq!(
            Dockerfile::parse("ENV A=1\nFROM a\n").unwrap_err(),
            "line 1: instruction before the first FROM"
        );
    }
}
