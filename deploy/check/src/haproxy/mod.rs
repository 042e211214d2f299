//! The router's HAProxy config: its sections and directives, and the same
//! file mapped onto loopback addresses for the router test; [`RouterRules`]
//! ties it to the manifests and to the AgentService API.
//!
//! Not an HAProxy parser: it splits lines into words the way HAProxy does
//! (blanks, double quotes, backslash escapes, `#` comments) and knows the
//! directives our file uses. HAProxy itself checks the rest: the router
//! test runs the real program on the mapped file.

use std::{collections::BTreeMap, path::Path};

mod owners;
mod rules;

pub use rules::{ROUTE_KEY_HEADER, RouterRules, keyless_agent_methods, main_session_methods};

use crate::Error;

/// One directive: its line number and words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// 1-based line number.
    pub number: usize,
    /// The words, unquoted.
    pub words: Vec<String>,
}

/// A section (`global`, `defaults`, `frontend NAME`, `backend NAME`,
/// `resolvers NAME`, ...) and its directives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// `frontend`, `backend`, ...
    pub kind: String,
    /// Its name ("" for `global` and unnamed `defaults`).
    pub name: String,
    /// Directives in order.
    pub lines: Vec<Line>,
}

impl Section {
    /// Directives whose first word is `keyword`.
    pub fn directives<'a>(&'a self, keyword: &'a str) -> impl Iterator<Item = &'a Line> + 'a {
        self.lines
            .iter()
            .filter(move |l| l.words.first().is_some_and(|w| w == keyword))
    }

    /// The words after `keyword` of its first directive.
    pub fn first<'a>(&'a self, keyword: &'a str) -> Option<&'a [String]> {
        self.directives(keyword).next().map(|l| &l.words[1..])
    }
}

/// A server of a backend (`server` or `server-template`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Server {
    /// The server's name (the template's prefix).
    pub name: String,
    /// `HOST:PORT`.
    pub address: String,
    /// The options after the address (`proto h2`, `id 1`, `check`, ...).
    pub options: Vec<String>,
    /// Whether it is a `server-template`.
    pub template: bool,
}

impl Server {
    /// The value after option `key` (`id 1` → "1").
    pub fn option(&self, key: &str) -> Option<&str> {
        self.options
            .windows(2)
            .find(|w| w[0] == key)
            .map(|w| w[1].as_str())
    }

    /// Whether the bare option `flag` is set (`check`).
    pub fn has(&self, flag: &str) -> bool {
        self.options.iter().any(|o| o == flag)
    }
}

/// A parsed config file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HaproxyConfig {
    /// Sections in file order.
    pub sections: Vec<Section>,
}

/// Section keywords that start a section.
const SECTION_KINDS: &[&str] = &[
    "global",
    "defaults",
    "frontend",
    "backend",
    "listen",
    "resolvers",
    "peers",
    "userlist",
    "program",
    "http-errors",
    "ring",
    "cache",
    "mailers",
];

impl HaproxyConfig {
    /// Reads `path`.
    pub fn load(path: &Path) -> Result<Self, Error> {
        Self::parse(&crate::read(path)?).map_err(|message| Error::Parse {
            path: path.to_path_buf(),
            message,
        })
    }

    /// Parses config text.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut sections: Vec<Section> = Vec::new();
        for (index, raw) in text.lines().enumerate() {
            let number = index + 1;
            let words = words(raw).map_err(|e| format!("line {number}: {e}"))?;
            let Some(first) = words.first() else {
                continue;
            };
            if SECTION_KINDS.contains(&first.as_str()) {
                sections.push(Section {
                    kind: first.clone(),
                    name: words.get(1).cloned().unwrap_or_default(),
                    lines: Vec::new(),
                });
                continue;
            }
            let section = sections
                .last_mut()
                .ok_or_else(|| format!("line {number}: {first:?} before any section"))?;
            section.lines.push(Line { number, words });
        }
        Ok(Self { sections })
    }

    /// The section `kind name`.
    pub fn section(&self, kind: &str, name: &str) -> Option<&Section> {
        self.sections
            .iter()
            .find(|s| s.kind == kind && s.name == name)
    }

    /// Sections of `kind`.
    pub fn of_kind<'a>(&'a self, kind: &'a str) -> impl Iterator<Item = &'a Section> + 'a {
        self.sections.iter().filter(move |s| s.kind == kind)
    }

    /// The servers of a backend.
    pub fn servers(&self, backend: &Section) -> Vec<Server> {
        let mut servers = Vec::new();
        for line in &backend.lines {
            match line.words.first().map(String::as_str) {
                Some("server") if line.words.len() >= 3 => servers.push(Server {
                    name: line.words[1].clone(),
                    address: line.words[2].clone(),
                    options: line.words[3..].to_vec(),
                    template: false,
                }),
                Some("server-template") if line.words.len() >= 4 => servers.push(Server {
                    name: line.words[1].clone(),
                    address: line.words[3].clone(),
                    options: line.words[4..].to_vec(),
                    template: true,
                }),
                _ => {}
            }
        }
        servers
    }

    /// The backend a frontend sends its calls to (`default_backend`).
    pub fn backend_of(&self, frontend: &Section) -> Option<&Section> {
        let name = frontend.first("default_backend")?.first()?;
        self.section("backend", name)
    }

    /// The port each frontend binds: `bind [ADDR]:PORT`.
    pub fn bound_ports(&self) -> Vec<(String, u16)> {
        self.of_kind("frontend")
            .flat_map(|f| {
                f.directives("bind").filter_map(move |l| {
                    let port = l.words.get(1)?.rsplit_once(':')?.1.parse().ok()?;
                    Some((f.name.clone(), port))
                })
            })
            .collect()
    }

    /// The paths an ACL named `acl` of `frontend` matches with `path`
    /// (exact) and `path_beg` (prefixes), in file order.
    pub fn acl_paths(&self, frontend: &Section, acl: &str) -> (Vec<String>, Vec<String>) {
        let mut exact = Vec::new();
        let mut prefixes = Vec::new();
        for line in frontend.directives("acl") {
            if line.words.get(1).map(String::as_str) != Some(acl) {
                continue;
            }
            let values = line.words.iter().skip(3).cloned();
            match line.words.get(2).map(String::as_str) {
                Some("path") => exact.extend(values),
                Some("path_beg") => prefixes.extend(values),
                _ => {}
            }
        }
        (exact, prefixes)
    }

    /// `hard-stop-after` of `global`, in seconds.
    pub fn hard_stop_after_secs(&self) -> Option<u64> {
        let value = self
            .section("global", "")?
            .first("hard-stop-after")?
            .first()?;
        duration_secs(value)
    }

    /// The same file for the router test: each `bind` on the loopback port
    /// `binds` gives for its port, each server's address replaced by what
    /// `servers` gives for it (a template then makes one server).
    pub fn mapped(
        text: &str,
        binds: &BTreeMap<u16, u16>,
        servers: &BTreeMap<String, String>,
    ) -> Result<String, String> {
        let mut out = String::with_capacity(text.len());
        for (index, raw) in text.lines().enumerate() {
            let number = index + 1;
            let words = words(raw).map_err(|e| format!("line {number}: {e}"))?;
            let mapped = match words.first().map(String::as_str) {
                Some("bind") => {
                    let port: u16 = words
                        .get(1)
                        .and_then(|a| a.rsplit_once(':'))
                        .and_then(|(_, p)| p.parse().ok())
                        .ok_or_else(|| format!("line {number}: bind without a port"))?;
                    let local = binds
                        .get(&port)
                        .ok_or_else(|| format!("line {number}: no loopback port for {port}"))?;
                    let mut words = words.clone();
                    words[1] = format!("127.0.0.1:{local}");
                    Some(words)
                }
                Some(kind @ ("server" | "server-template")) => {
                    let at = if kind == "server" { 2 } else { 3 };
                    let address = words
                        .get(at)
                        .ok_or_else(|| format!("line {number}: {kind} without an address"))?;
                    let local = servers.get(address).ok_or_else(|| {
                        format!("line {number}: no loopback address for {address}")
                    })?;
                    let mut words = words.clone();
                    words[at] = local.clone();
                    if kind == "server-template" {
                        words[2] = "1".into();
                    }
                    Some(words)
                }
                _ => None,
            };
            match mapped {
                Some(words) => {
                    let indent: String = raw.chars().take_while(|c| c.is_whitespace()).collect();
                    out.push_str(&indent);
                    out.push_str(&words.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" "));
                }
                None => out.push_str(raw),
            }
            out.push('\n');
        }
        Ok(out)
    }
}

/// HAProxy durations: `610s`, `10m`, `1h`, `500ms` (bare numbers are ms).
pub fn duration_secs(value: &str) -> Option<u64> {
    let digits = value
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(value.len());
    let number: u64 = value[..digits].parse().ok()?;
    match &value[digits..] {
        "" | "ms" => Some(number / 1000),
        "s" => Some(number),
        "m" => Some(number * 60),
        "h" => Some(number * 3600),
        "d" => Some(number * 86_400),
        _ => None,
    }
}

/// The words of a line, as HAProxy splits them: blanks separate, double
/// quotes group, a backslash escapes, `#` outside quotes starts a comment.
fn words(line: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut current: Option<String> = None;
    let mut chars = line.chars();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let escaped = chars.next().ok_or("backslash at the end of the line")?;
                current.get_or_insert_with(String::new).push(escaped);
            }
            '"' => {
                quoted = !quoted;
                current.get_or_insert_with(String::new);
            }
            '#' if !quoted => break,
            c if c.is_whitespace() && !quoted => words.extend(current.take()),
            c => current.get_or_insert_with(String::new).push(c),
        }
    }
    if quoted {
        return Err("unterminated double quote".into());
    }
    words.extend(current);
    Ok(words)
}

/// A word written back: quoted when it holds blanks, quotes or `#`.
fn quote(word: &str) -> String {
    if word.is_empty() || word.contains(|c: char| c.is_whitespace() || c == '"' || c == '#') {
        format!("\"{}\"", word.replace('\\', "\\\\").replace('"', "\\\""))
    } else {
        word.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_like_haproxy() {
        assert_eq!(
            words(r#"  hdr grpc-message "a b # c" x\ y # comment"#).unwrap(),
            ["hdr", "grpc-message", "a b # c", "x y"]
        );
        assert_eq!(words(r#"say """#).unwrap(), ["say", ""]);
        assert!(words(r#"say "open"#).is_err());
        assert_eq!(quote("a b"), "\"a b\"");
        assert_eq!(quote("plain"), "plain");
    }

    #[test]
    fn durations() {
        assert_eq!(duration_secs("610s"), Some(610));
        assert_eq!(duration_secs("10m"), Some(600));
        assert_eq!(duration_secs("2000"), Some(2));
        assert_eq!(duration_secs("soon"), None);
    }

    #[test]
    fn mapping_moves_binds_and_servers_to_loopback() {
        let text = "frontend a\n    bind :50052 proto h2\nbackend b\n    server s0 x.ns.svc.cluster.local:50052 proto h2 id 1\n    server-template p 10 y.ns.svc.cluster.local:50051 proto h2 check\n";
        let mapped = HaproxyConfig::mapped(
            text,
            &[(50052, 4000)].into(),
            &[
                (
                    "x.ns.svc.cluster.local:50052".to_owned(),
                    "127.0.0.1:4001".to_owned(),
                ),
                (
                    "y.ns.svc.cluster.local:50051".to_owned(),
                    "127.0.0.1:4002".to_owned(),
                ),
            ]
            .into(),
        )
        .unwrap();
        assert_eq!(
            mapped,
            "frontend a\n    bind 127.0.0.1:4000 proto h2\nbackend b\n    server s0 127.0.0.1:4001 proto h2 id 1\n    server-template p 1 127.0.0.1:4002 proto h2 check\n"
        );
        assert!(HaproxyConfig::mapped(text, &BTreeMap::new(), &BTreeMap::new()).is_err());
    }
}
