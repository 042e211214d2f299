//! The router's HAProxy config: its sections and directives, the checks that
//! tie it to the manifests and to the AgentService API, and the same file
//! mapped onto loopback addresses for the router test.
//!
//! Not an HAProxy parser: it splits lines into words the way HAProxy does
//! (blanks, double quotes, backslash escapes, `#` comments) and knows the
//! directives our file uses. HAProxy itself checks the rest: the router
//! test runs the real program on the mapped file.

use std::{
    collections::{BTreeMap, BTreeSet},
    path::Path,
};

use crate::{
    Error,
    k8s::{Bundle, array, containers, str_at},
};

/// The label the StatefulSet controller puts on each of its pods.
const POD_NAME_LABEL: &str = "statefulset.kubernetes.io/pod-name";

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

    /// Every problem with the file against the manifests, at once.
    ///
    /// - `config_map`: the ConfigMap that carries the file to the router;
    /// - `session_header`: what sessions are routed by;
    /// - `keyless`: the AgentService methods that name no session (full
    ///   paths); the router must let exactly those through without the
    ///   header, and refuse the rest without it;
    /// - `longest_run_secs`: the longest a Run may stream (the router must
    ///   wait that long for in-flight streams when it stops).
    pub fn problems(
        &self,
        bundle: &Bundle,
        config_map: &str,
        session_header: &str,
        keyless: &BTreeSet<String>,
        longest_run_secs: u64,
    ) -> Vec<String> {
        let mut problems = Vec::new();
        for frontend in self.of_kind("frontend") {
            let mut add = |p: String| problems.push(format!("frontend {}: {p}", frontend.name));
            if frontend.first("monitor-uri").is_some() {
                continue;
            }
            let Some(backend) = self.backend_of(frontend) else {
                add("no default_backend naming a backend".into());
                continue;
            };
            for bind in frontend.directives("bind") {
                if !bind.words.windows(2).any(|w| w == ["proto", "h2"]) {
                    add(format!(
                        "line {}: bind without `proto h2` (gRPC clients speak HTTP/2 without TLS)",
                        bind.number
                    ));
                }
            }
            let hashed_on = backend
                .first("balance")
                .and_then(|b| b.first())
                .and_then(|b| b.strip_prefix("hdr("))
                .and_then(|b| b.strip_suffix(')'));
            if let Some(header) = hashed_on {
                if header != session_header {
                    add(format!(
                        "backend {} hashes on {header:?}, not {session_header:?}",
                        backend.name
                    ));
                }
                self.check_session_frontend(frontend, session_header, keyless, &mut add);
            }
        }
        for backend in self.of_kind("backend") {
            let mut add = |p: String| problems.push(format!("backend {}: {p}", backend.name));
            self.check_backend(backend, bundle, &mut add);
        }
        self.check_router_workload(bundle, config_map, longest_run_secs, &mut |p| {
            problems.push(p)
        });
        problems
    }

    /// A session frontend refuses a call without the header unless it is
    /// keyless, and lets exactly the keyless AgentService methods through.
    fn check_session_frontend(
        &self,
        frontend: &Section,
        header: &str,
        keyless: &BTreeSet<String>,
        add: &mut impl FnMut(String),
    ) {
        let (exact, prefixes) = self.acl_paths(frontend, "keyless");
        let listed: BTreeSet<String> = exact
            .iter()
            .filter(|p| p.starts_with("/openclaw.agent.v1.AgentService/"))
            .cloned()
            .collect();
        if &listed != keyless {
            add(format!(
                "acl keyless lets {listed:?} through without the header; the AgentService \
                 methods that name no session are {keyless:?}"
            ));
        }
        if prefixes
            .iter()
            .chain(&exact)
            .any(|p| p == "/" || "/openclaw.agent.v1.AgentService/".starts_with(p.as_str()))
        {
            add("acl keyless matches every AgentService method".into());
        }
        let has_key = frontend.directives("acl").any(|l| {
            l.words.get(1).map(String::as_str) == Some("has_session_key")
                && l.words.get(2).map(String::as_str) == Some(&format!("req.hdr({header})"))
        });
        if !has_key {
            add(format!("no `acl has_session_key req.hdr({header}) ...`"));
        }
        let refuses = frontend.directives("http-request").any(|l| {
            l.words.get(1).map(String::as_str) == Some("set-var(txn.refused)")
                && l.words
                    .ends_with(&["!keyless".into(), "!has_session_key".into()])
        }) && frontend.directives("http-request").any(|l| {
            l.words.get(1).map(String::as_str) == Some("return")
                && l.words.windows(2).any(|w| w == ["grpc-status", "3"])
        });
        if !refuses {
            add(
                "a call without the header is not refused with grpc-status 3 (INVALID_ARGUMENT)"
                    .into(),
            );
        }
    }

    fn check_backend(&self, backend: &Section, bundle: &Bundle, add: &mut impl FnMut(String)) {
        let hashed = backend
            .first("balance")
            .and_then(|b| b.first())
            .is_some_and(|b| b.starts_with("hdr("));
        let servers = self.servers(backend);
        if servers.is_empty() {
            add("no servers".into());
        }
        for server in &servers {
            if !server.options.windows(2).any(|w| w == ["proto", "h2"]) {
                add(format!(
                    "server {}: not HTTP/2 (`proto h2`; gRPC needs it)",
                    server.name
                ));
            }
            let (host, port) = match server.address.rsplit_once(':') {
                Some((host, port)) => (host, port.parse::<u64>().ok()),
                None => (server.address.as_str(), None),
            };
            match service_of(bundle, host) {
                Err(p) => add(format!("server {}: {p}", server.name)),
                Ok(service) => {
                    let has_port = array(&service.value, "/spec/ports")
                        .iter()
                        .any(|p| p["port"].as_u64() == port);
                    if !has_port {
                        add(format!(
                            "server {}: Service {} has no port {port:?}",
                            server.name,
                            service.name()
                        ));
                    }
                    if server.template && service.value["spec"]["clusterIP"] != "None" {
                        add(format!(
                            "server-template {}: Service {} is not headless (one address for all)",
                            server.name,
                            service.name()
                        ));
                    }
                }
            }
        }
        if hashed {
            self.check_ring(backend, &servers, bundle, add);
        }
    }

    /// The session ring: consistent, one server per StatefulSet pod with a
    /// fixed id, and nothing that would move a session off its owner.
    fn check_ring(
        &self,
        backend: &Section,
        servers: &[Server],
        bundle: &Bundle,
        add: &mut impl FnMut(String),
    ) {
        if backend
            .first("hash-type")
            .and_then(|h| h.first())
            .map(String::as_str)
            != Some("consistent")
        {
            add("hash-type is not consistent: a replica change would move most sessions".into());
        }
        if backend
            .directives("option")
            .any(|l| l.words.get(1).map(String::as_str) == Some("redispatch"))
        {
            add("option redispatch would send a session to another replica".into());
        }
        let mut owned = BTreeMap::new();
        for server in servers {
            if server.template {
                add(format!(
                    "server-template {}: ring members must be fixed servers",
                    server.name
                ));
            }
            if server.has("check") {
                add(format!(
                    "server {}: health checks would move sessions off their owner",
                    server.name
                ));
            }
            let host = server.address.rsplit_once(':').map_or("", |(h, _)| h);
            let pod = service_of(bundle, host)
                .map(|s| {
                    str_at(
                        &s.value,
                        &format!("/spec/selector/{}", POD_NAME_LABEL.replace('/', "~1")),
                    )
                    .to_owned()
                })
                .unwrap_or_default();
            let ordinal = pod
                .rsplit_once('-')
                .and_then(|(_, n)| n.parse::<u64>().ok());
            match (server.option("id"), ordinal) {
                (None, _) => add(format!(
                    "server {}: no fixed `id` (the ring position would follow the file order)",
                    server.name
                )),
                (Some(id), Some(ordinal)) if id != (ordinal + 1).to_string() => add(format!(
                    "server {}: id {id} for pod {pod} (expected {})",
                    server.name,
                    ordinal + 1
                )),
                _ => {}
            }
            if server.name != pod && !pod.is_empty() {
                add(format!(
                    "server {} is named apart from its pod {pod}",
                    server.name
                ));
            }
            owned.insert(pod, server.name.clone());
        }
        let owned: BTreeSet<String> = owned.into_keys().filter(|p| !p.is_empty()).collect();
        let set = bundle.of_kind("StatefulSet").find(|sts| {
            owned
                .iter()
                .any(|p| p.starts_with(&format!("{}-", sts.name())))
        });
        match set {
            None => add(format!(
                "ring servers select no StatefulSet pod ({owned:?})"
            )),
            Some(sts) => {
                let replicas = sts.value["spec"]["replicas"].as_u64().unwrap_or(1);
                let expected: BTreeSet<String> = (0..replicas)
                    .map(|i| format!("{}-{i}", sts.name()))
                    .collect();
                if expected != owned {
                    add(format!(
                        "ring servers own pods {owned:?}, but the StatefulSet has {expected:?}"
                    ));
                }
            }
        }
    }

    /// The workload that mounts the config: its ports, and a stop that
    /// outlasts the longest run.
    fn check_router_workload(
        &self,
        bundle: &Bundle,
        config_map: &str,
        longest_run_secs: u64,
        add: &mut impl FnMut(String),
    ) {
        let router = bundle.workloads().find(|w| {
            array(&w.value, "/spec/template/spec/volumes")
                .iter()
                .any(|v| str_at(v, "/configMap/name") == config_map)
        });
        let Some(router) = router else {
            add(format!("no workload mounts ConfigMap {config_map}"));
            return;
        };
        let ports: BTreeSet<u64> = containers(router)
            .flat_map(|c| array(c, "/ports"))
            .filter_map(|p| p["containerPort"].as_u64())
            .collect();
        for (frontend, port) in self.bound_ports() {
            if !ports.contains(&u64::from(port)) {
                add(format!(
                    "frontend {frontend} binds port {port}, not a container port of {}",
                    router.id()
                ));
            }
        }
        let Some(hard_stop) = self.hard_stop_after_secs() else {
            add("global: no hard-stop-after (a stopping router would wait forever)".into());
            return;
        };
        if hard_stop < longest_run_secs {
            add(format!(
                "global: hard-stop-after {hard_stop} s cuts runs shorter than the longest ({longest_run_secs} s)"
            ));
        }
        let grace = router.value["spec"]["template"]["spec"]["terminationGracePeriodSeconds"]
            .as_u64()
            .unwrap_or(30);
        let pre_stop = crate::k8s::pre_stop_secs(router);
        if grace <= pre_stop + hard_stop {
            add(format!(
                "{}: terminationGracePeriodSeconds {grace} does not outlast preStop ({pre_stop} s) \
                 plus hard-stop-after ({hard_stop} s): the kubelet would cut the drain",
                router.id()
            ));
        }
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

/// The AgentService methods whose request names no session (neither a
/// `SessionRef` nor a `session_key` field), as gRPC paths: the calls the
/// router may send to any replica. Read from the compiled descriptors, so a
/// new method is classified by its request, not by a list kept by hand.
pub fn keyless_agent_methods() -> Result<BTreeSet<String>, String> {
    use prost::Message;
    let set = prost_types::FileDescriptorSet::decode(openclaw_proto::FILE_DESCRIPTOR_SET)
        .map_err(|e| format!("descriptor set: {e}"))?;
    let package = "openclaw.agent.v1";
    let file = set
        .file
        .iter()
        .find(|f| f.package() == package && f.service.iter().any(|s| s.name() == "AgentService"))
        .ok_or("no openclaw.agent.v1.AgentService in the descriptors")?;
    let names_session = |input: &str| {
        let name = input.trim_start_matches(&format!(".{package}."));
        file.message_type
            .iter()
            .find(|m| m.name() == name)
            .is_some_and(|m| {
                m.field.iter().any(|f| {
                    f.type_name() == format!(".{package}.SessionRef") || f.name() == "session_key"
                })
            })
    };
    Ok(file
        .service
        .iter()
        .filter(|s| s.name() == "AgentService")
        .flat_map(|s| &s.method)
        .filter(|m| !names_session(m.input_type()))
        .map(|m| format!("/{package}.AgentService/{}", m.name()))
        .collect())
}

/// The Service a server address names (`name` or
/// `name.namespace.svc.cluster.local` in the bundle's namespace).
fn service_of<'a>(bundle: &'a Bundle, host: &str) -> Result<&'a crate::k8s::Manifest, String> {
    let mut parts = host.splitn(3, '.');
    let name = parts.next().unwrap_or_default();
    let namespace = parts.next();
    let rest = parts.next();
    if let Some(namespace) = namespace
        && (Some(namespace) != bundle.namespace.as_deref() || rest != Some("svc.cluster.local"))
    {
        return Err(format!(
            "{host} is not <service>.{}.svc.cluster.local",
            bundle.namespace.as_deref().unwrap_or("<namespace>")
        ));
    }
    bundle
        .get("Service", name)
        .ok_or_else(|| format!("{host}: no Service {name}"))
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
