//! [`RouterRules`]: what the router's HAProxy config must be for the
//! manifests it routes to and the API it carries.

use std::collections::{BTreeMap, BTreeSet};

use super::{HaproxyConfig, Section, Server};
use crate::k8s::{Bundle, array, containers, str_at};

/// The label the StatefulSet controller puts on each of its pods.
const POD_NAME_LABEL: &str = "statefulset.kubernetes.io/pod-name";

/// The health Watch agent-service keeps open on prompt-service.
const HEALTH_WATCH: &str = "/grpc.health.v1.Health/Watch";
/// A server timeout below this would cut that Watch routinely.
const WATCH_TIMEOUT_FLOOR_SECS: u64 = 3600;

/// The header the router sets for its ring to hash (clients never send it;
/// the router overwrites whatever they send).
pub const ROUTE_KEY_HEADER: &str = "x-openclaw-route-key";

/// What the config is checked against.
#[derive(Debug, Clone, Copy)]
pub struct RouterRules<'a> {
    /// The ConfigMap that carries the file to the router.
    pub config_map: &'a str,
    /// The header sessions are routed by.
    pub session_header: &'a str,
    /// The header the ring hashes, set by the router from the session header (a cron
    /// session's key becomes its agent's main session key).
    pub route_header: &'a str,
    /// The AgentService methods that name no session (full paths): the
    /// router lets exactly those through without the header and refuses the
    /// rest without it.
    pub keyless: &'a BTreeSet<String>,
    /// The longest a Run may stream: a stopping router waits that long for
    /// streams in flight.
    pub longest_run_secs: u64,
}

impl RouterRules<'_> {
    /// Every problem with `config` against the manifests, at once.
    pub fn problems(&self, config: &HaproxyConfig, bundle: &Bundle) -> Vec<String> {
        let mut problems = Vec::new();
        for frontend in config.of_kind("frontend") {
            let mut add = |p: String| problems.push(format!("frontend {}: {p}", frontend.name));
            if frontend.first("monitor-uri").is_some() {
                continue;
            }
            let Some(backend) = config.backend_of(frontend) else {
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
                if header != self.route_header {
                    add(format!(
                        "backend {} hashes on {header:?}, not {:?}",
                        backend.name, self.route_header
                    ));
                }
                self.check_session_frontend(config, frontend, &mut add);
                self.check_route_key(frontend, &mut add);
            }
        }
        for backend in config.of_kind("backend") {
            let mut add = |p: String| problems.push(format!("backend {}: {p}", backend.name));
            self.check_backend(config, backend, bundle, &mut add);
        }
        self.check_router_workload(config, bundle, &mut |p| problems.push(p));
        problems
    }

    /// A session frontend refuses a call without the header unless it is
    /// keyless, and lets exactly the keyless AgentService methods through.
    fn check_session_frontend(
        &self,
        config: &HaproxyConfig,
        frontend: &Section,
        add: &mut impl FnMut(String),
    ) {
        let (exact, prefixes) = config.acl_paths(frontend, "keyless");
        let listed: BTreeSet<String> = exact
            .iter()
            .filter(|p| p.starts_with("/openclaw.agent.v1.AgentService/"))
            .cloned()
            .collect();
        if &listed != self.keyless {
            add(format!(
                "acl keyless lets {listed:?} through without the header; the AgentService \
                 methods that name no session are {:?}",
                self.keyless
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
                && l.words.get(2).map(String::as_str)
                    == Some(&format!("req.hdr({})", self.session_header))
        });
        if !has_key {
            add(format!(
                "no `acl has_session_key req.hdr({}) ...`",
                self.session_header
            ));
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
        let counts = frontend.directives("acl").any(|l| {
            l.words.get(1..)
                == Some(
                    &[
                        "many_session_keys".to_owned(),
                        format!("req.fhdr_cnt({})", self.session_header),
                        "gt".to_owned(),
                        "1".to_owned(),
                    ][..],
                )
        });
        let refuses_many = frontend.directives("http-request").any(|l| {
            l.words.get(1).map(String::as_str) == Some("return")
                && l.words.windows(2).any(|w| w == ["grpc-status", "3"])
                && l.words
                    .ends_with(&["if".into(), "many_session_keys".into()])
        });
        if !(counts && refuses_many) {
            add(format!(
                "a call with the header more than once is not refused with grpc-status 3: want \
                 `acl many_session_keys req.fhdr_cnt({}) gt 1` and a `return` with grpc-status \
                 3 `if many_session_keys` (the router would route by one header and the \
                 replica check another)",
                self.session_header
            ));
        }
    }

    /// The frontend sets the route header from the session header cut before its first
    /// `:subagent:` (a subagent lives with the session that started it), and for a cron
    /// session (`agent:<id>:cron:...`) to its agent's main session key, in that order; whole
    /// header lines (`fhdr`), since a key may hold a comma.
    fn check_route_key(&self, frontend: &Section, add: &mut impl FnMut(String)) {
        let (route, session) = (self.route_header, self.session_header);
        let copy = format!("set-header {route} %[req.fhdr({session}),regsub(:subagent:.*,)]");
        let cron = format!(
            "set-header {route} agent:%[req.fhdr({route}),field(2,:)]:main \
             if {{ req.fhdr({route}),field(3,:) -m str cron }}"
        );
        let sets: Vec<String> = frontend
            .directives("http-request")
            .filter(|l| {
                l.words.get(1).map(String::as_str) == Some("set-header")
                    && l.words.get(2).map(String::as_str) == Some(route)
            })
            .map(|l| l.words[1..].join(" "))
            .collect();
        if sets != [copy.clone(), cron.clone()] {
            add(format!(
                "the route key is set by {sets:?}; want `http-request {copy}` then \
                 `http-request {cron}` (a subagent session routes as its parent, a cron \
                 session as its agent's main session, where its jobs live)"
            ));
        }
    }

    fn check_backend(
        &self,
        config: &HaproxyConfig,
        backend: &Section,
        bundle: &Bundle,
        add: &mut impl FnMut(String),
    ) {
        let hashed = backend
            .first("balance")
            .and_then(|b| b.first())
            .is_some_and(|b| b.starts_with("hdr("));
        let servers = config.servers(backend);
        if servers.is_empty() {
            add("no servers".into());
        }
        // agent-service follows prompt-service's readiness through a health
        // Watch that stays silent while nothing changes.
        let server_timeout = backend
            .directives("timeout")
            .find(|l| l.words.get(1).map(String::as_str) == Some("server"))
            .and_then(|l| l.words.get(2))
            .and_then(|v| super::duration_secs(v));
        let watch_exempt = backend.directives("http-request").any(|l| {
            l.words.get(1..3) == Some(&["set-timeout".to_owned(), "server".to_owned()][..])
                && l.words.iter().any(|w| w == HEALTH_WATCH)
        });
        if let Some(timeout) = server_timeout
            && !hashed
            && timeout < WATCH_TIMEOUT_FLOOR_SECS
            && !watch_exempt
        {
            add(format!(
                "timeout server {timeout} s would cut agent-service's health Watch of \
                 prompt-service: exempt {HEALTH_WATCH} with `http-request set-timeout server`"
            ));
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
                super::owners::check(backend, sts, self.route_header, add);
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
        config: &HaproxyConfig,
        bundle: &Bundle,
        add: &mut impl FnMut(String),
    ) {
        let router = bundle.workloads().find(|w| {
            array(&w.value, "/spec/template/spec/volumes")
                .iter()
                .any(|v| str_at(v, "/configMap/name") == self.config_map)
        });
        let Some(router) = router else {
            add(format!("no workload mounts ConfigMap {}", self.config_map));
            return;
        };
        let ports: BTreeSet<u64> = containers(router)
            .flat_map(|c| array(c, "/ports"))
            .filter_map(|p| p["containerPort"].as_u64())
            .collect();
        for (frontend, port) in config.bound_ports() {
            if !ports.contains(&u64::from(port)) {
                add(format!(
                    "frontend {frontend} binds port {port}, not a container port of {}",
                    router.id()
                ));
            }
        }
        let Some(hard_stop) = config.hard_stop_after_secs() else {
            add("global: no hard-stop-after (a stopping router would wait forever)".into());
            return;
        };
        if hard_stop < self.longest_run_secs {
            add(format!(
                "global: hard-stop-after {hard_stop} s cuts runs shorter than the longest ({} s)",
                self.longest_run_secs
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
}

/// The AgentService methods whose request names no session (neither a
/// `SessionRef` nor a `session_key` field) and that are not routed by the
/// agent's main session (see [`main_session_methods`]), as gRPC paths: the calls the router may send
/// to any replica. Read from the compiled descriptors, so a new method is
/// classified by its request, not by a list kept by hand.
pub fn keyless_agent_methods() -> Result<BTreeSet<String>, String> {
    let cron = main_session_methods()?;
    Ok(session_less_agent_methods()?
        .difference(&cron)
        .cloned()
        .collect())
}

/// The calls about an agent's state kept with its main session: session-less
/// AgentService methods whose name says `CronJob` or `ExecAllowlist` and
/// whose request names an agent (`agent_id`). They carry the agent's main
/// session key, as the replica holding the agent's jobs and the allowlist
/// managed over the API owns that session.
pub fn main_session_methods() -> Result<BTreeSet<String>, String> {
    use prost::Message;
    let set = prost_types::FileDescriptorSet::decode(openclaw_proto::FILE_DESCRIPTOR_SET)
        .map_err(|e| format!("descriptor set: {e}"))?;
    let package = "openclaw.agent.v1";
    let names_agent = |input: &str| {
        let name = input.trim_start_matches(&format!(".{package}."));
        set.file
            .iter()
            .filter(|f| f.package() == package)
            .flat_map(|f| &f.message_type)
            .find(|m| m.name() == name)
            .is_some_and(|m| m.field.iter().any(|f| f.name() == "agent_id"))
    };
    let session_less = session_less_agent_methods()?;
    Ok(set
        .file
        .iter()
        .filter(|f| f.package() == package)
        .flat_map(|f| &f.service)
        .filter(|s| s.name() == "AgentService")
        .flat_map(|s| &s.method)
        .filter(|m| {
            (m.name().contains("CronJob") || m.name().contains("ExecAllowlist"))
                && names_agent(m.input_type())
        })
        .map(|m| format!("/{package}.AgentService/{}", m.name()))
        .filter(|path| session_less.contains(path))
        .collect())
}

/// The AgentService methods whose request names no session.
fn session_less_agent_methods() -> Result<BTreeSet<String>, String> {
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
