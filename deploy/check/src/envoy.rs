//! The router's Envoy config against the manifests: routes name clusters,
//! cluster endpoints name Services and their ports, listeners are container
//! ports, and the session ring covers exactly the StatefulSet's replicas.

use std::{collections::BTreeSet, path::Path};

use serde_json::Value;

use crate::{
    Error,
    k8s::{Bundle, array, containers, str_at},
};

/// The label the StatefulSet controller puts on each of its pods.
const POD_NAME_LABEL: &str = "statefulset.kubernetes.io/pod-name";

/// A parsed Envoy bootstrap.
#[derive(Debug, Clone)]
pub struct EnvoyConfig {
    /// The bootstrap as a JSON tree.
    pub value: Value,
}

impl EnvoyConfig {
    /// Reads `path`.
    pub fn load(path: &Path) -> Result<Self, Error> {
        let value = crate::yaml::all(path, &crate::read(path)?)?
            .into_iter()
            .next()
            .unwrap_or(Value::Null);
        Ok(Self { value })
    }

    /// Every route of every listener: (listener, route).
    fn routes(&self) -> Vec<(&str, &Value)> {
        let mut routes = Vec::new();
        for listener in array(&self.value, "/static_resources/listeners") {
            for chain in array(listener, "/filter_chains") {
                for filter in array(chain, "/filters") {
                    for host in array(filter, "/typed_config/route_config/virtual_hosts") {
                        for route in array(host, "/routes") {
                            routes.push((str_at(listener, "/name"), route));
                        }
                    }
                }
            }
        }
        routes
    }

    /// Every problem, at once. `config_map` is the ConfigMap that carries
    /// this file to the router pods; `session_header` the header sessions
    /// are routed by.
    pub fn problems(&self, bundle: &Bundle, config_map: &str, session_header: &str) -> Vec<String> {
        let mut problems = Vec::new();
        let clusters = array(&self.value, "/static_resources/clusters");
        let cluster = |name: &str| clusters.iter().find(|c| str_at(c, "/name") == name);
        for (listener, route) in self.routes() {
            if route.get("direct_response").is_some() {
                continue;
            }
            let target = str_at(route, "/route/cluster");
            let Some(found) = cluster(target) else {
                problems.push(format!(
                    "listener {listener}: route to unknown cluster {target:?}"
                ));
                continue;
            };
            if str_at(found, "/lb_policy") == "RING_HASH" {
                let hashed_on = array(route, "/route/hash_policy")
                    .iter()
                    .map(|h| str_at(h, "/header/header_name"))
                    .collect::<Vec<_>>();
                if hashed_on != [session_header] {
                    problems.push(format!(
                        "listener {listener}: ring-hash route hashes on {hashed_on:?}, not [{session_header:?}]"
                    ));
                }
            }
        }
        for c in clusters {
            let name = str_at(c, "/name");
            let mut add = |p: String| problems.push(format!("cluster {name}: {p}"));
            if c.pointer("/typed_extension_protocol_options/envoy.extensions.upstreams.http.v3.HttpProtocolOptions/explicit_http_config/http2_protocol_options").is_none() {
                add("upstream is not HTTP/2 (gRPC needs it)".into());
            }
            let mut hosts = Vec::new();
            for group in array(c, "/load_assignment/endpoints") {
                for endpoint in array(group, "/lb_endpoints") {
                    let address = str_at(endpoint, "/endpoint/address/socket_address/address");
                    let port = endpoint
                        .pointer("/endpoint/address/socket_address/port_value")
                        .and_then(Value::as_u64);
                    let hostname = endpoint
                        .pointer("/endpoint/hostname")
                        .and_then(Value::as_str);
                    if hostname.is_some_and(|h| h != address) {
                        add(format!(
                            "endpoint hostname {hostname:?} differs from its address {address}"
                        ));
                    }
                    match self.service_of(bundle, address) {
                        Err(p) => add(p),
                        Ok(service) => {
                            let has_port = array(&service.value, "/spec/ports")
                                .iter()
                                .any(|p| p["port"].as_u64() == port);
                            if !has_port {
                                add(format!(
                                    "{address}: Service {} has no port {port:?}",
                                    service.name()
                                ));
                            }
                            hosts.push(service);
                        }
                    }
                }
            }
            if str_at(c, "/lb_policy") == "RING_HASH" {
                if c.pointer(
                    "/common_lb_config/consistent_hashing_lb_config/use_hostname_for_hashing",
                ) != Some(&Value::Bool(true))
                {
                    add("ring hash on pod IPs: set use_hostname_for_hashing so restarts keep ownership".into());
                }
                if c.get("health_checks").is_some() || c.get("outlier_detection").is_some() {
                    add(
                        "health checks or outlier detection would move sessions off their owner"
                            .into(),
                    );
                }
                let owned: BTreeSet<String> = hosts
                    .iter()
                    .map(|s| {
                        str_at(
                            &s.value,
                            &format!("/spec/selector/{}", POD_NAME_LABEL.replace('/', "~1")),
                        )
                        .to_owned()
                    })
                    .collect();
                let sets: Vec<_> = bundle.of_kind("StatefulSet").collect();
                let expected = hosts
                    .first()
                    .and_then(|s| {
                        bundle
                            .selected(&s.value["spec"]["selector"])
                            .into_iter()
                            .next()
                    })
                    .map(|sts| {
                        let replicas = sts.value["spec"]["replicas"].as_u64().unwrap_or(1);
                        (0..replicas)
                            .map(|i| format!("{}-{i}", sts.name()))
                            .collect::<BTreeSet<_>>()
                    });
                match expected {
                    Some(expected) if expected == owned => {}
                    Some(expected) => add(format!(
                        "ring endpoints own pods {owned:?}, but the StatefulSet has {expected:?}"
                    )),
                    None => add(format!(
                        "ring endpoints select no StatefulSet pod (StatefulSets: {})",
                        sets.iter().map(|s| s.name()).collect::<Vec<_>>().join(", ")
                    )),
                }
            }
        }
        let router = bundle.workloads().find(|w| {
            array(&w.value, "/spec/template/spec/volumes")
                .iter()
                .any(|v| str_at(v, "/configMap/name") == config_map)
        });
        match router {
            None => problems.push(format!("no workload mounts ConfigMap {config_map}")),
            Some(router) => {
                let ports: BTreeSet<u64> = containers(router)
                    .flat_map(|c| array(c, "/ports"))
                    .filter_map(|p| p["containerPort"].as_u64())
                    .collect();
                for listener in array(&self.value, "/static_resources/listeners") {
                    let port = listener
                        .pointer("/address/socket_address/port_value")
                        .and_then(Value::as_u64)
                        .unwrap_or_default();
                    if !ports.contains(&port) {
                        problems.push(format!(
                            "listener {} on port {port} is not a container port of {}",
                            str_at(listener, "/name"),
                            router.id()
                        ));
                    }
                }
            }
        }
        problems
    }

    /// The Service an endpoint address names (`name` or
    /// `name.namespace.svc.cluster.local` in the bundle's namespace).
    fn service_of<'a>(
        &self,
        bundle: &'a Bundle,
        address: &str,
    ) -> Result<&'a crate::k8s::Manifest, String> {
        let mut parts = address.splitn(3, '.');
        let name = parts.next().unwrap_or_default();
        let namespace = parts.next();
        let rest = parts.next();
        if let Some(namespace) = namespace
            && (Some(namespace) != bundle.namespace.as_deref() || rest != Some("svc.cluster.local"))
        {
            return Err(format!(
                "{address} is not <service>.{}.svc.cluster.local",
                bundle.namespace.as_deref().unwrap_or("<namespace>")
            ));
        }
        bundle
            .get("Service", name)
            .ok_or_else(|| format!("{address}: no Service {name}"))
    }
}
