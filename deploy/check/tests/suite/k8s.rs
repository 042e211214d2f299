//! deploy/k8s: the manifests kustomization.yaml lists, their cross
//! references, the router's Envoy config against them, and what issue 8
//! asks of each workload.

use deploy_check::{
    envoy::EnvoyConfig,
    k8s::{Bundle, Manifest, array, containers, str_at},
};
use serde_json::{Value, json};

use super::support;

fn bundle() -> Bundle {
    Bundle::load(&support::deploy_dir().join("k8s")).expect("kustomization")
}

fn container(workload: &Manifest) -> &Value {
    containers(workload).next().expect("a container")
}

fn env<'a>(container: &'a Value, name: &str) -> &'a str {
    array(container, "/env")
        .iter()
        .find(|e| str_at(e, "/name") == name)
        .map(|e| str_at(e, "/value"))
        .unwrap_or_else(|| panic!("env {name}"))
}

#[test]
fn manifests_have_no_cross_reference_problems() {
    let bundle = bundle();
    assert_eq!(bundle.problems(), Vec::<String>::new());
    let kinds: Vec<String> = bundle.resources.iter().map(Manifest::id).collect();
    assert_eq!(
        kinds,
        [
            "Namespace/openclaw",
            "Deployment/prompt-service",
            "Service/prompt-service",
            "Service/prompt-service-headless",
            "HorizontalPodAutoscaler/prompt-service",
            "PodDisruptionBudget/prompt-service",
            "ConfigMap/agent-config",
            "StatefulSet/agent-service",
            "Service/agent-service-headless",
            "Service/agent-service-0",
            "Service/agent-service-1",
            "PodDisruptionBudget/agent-service",
            "Deployment/router",
            "Service/openclaw-router",
            "PodDisruptionBudget/router",
        ]
    );
}

#[test]
fn the_router_config_matches_the_manifests() {
    let bundle = bundle();
    let envoy = EnvoyConfig::load(&support::deploy_dir().join("k8s/router/envoy.yaml"))
        .expect("envoy.yaml");
    assert_eq!(
        envoy.problems(&bundle, "router-envoy", service_kit::SESSION_KEY_HEADER),
        Vec::<String>::new()
    );
}

#[test]
fn prompt_service_is_a_scaled_deployment_with_grpc_probes() {
    let bundle = bundle();
    let deployment = bundle
        .get("Deployment", "prompt-service")
        .expect("deployment");
    assert!(deployment.value["spec"]["replicas"].as_u64() >= Some(2));
    let c = container(deployment);
    assert_eq!(
        c["readinessProbe"]["grpc"],
        json!({ "port": 50051, "service": "openclaw.prompt.v1.PromptService" })
    );
    assert_eq!(c["livenessProbe"]["grpc"], json!({ "port": 50051 }));
    assert!(
        c.pointer("/resources/requests/cpu").is_some()
            && c.pointer("/resources/limits/memory").is_some()
    );
    let hpa = bundle
        .get("HorizontalPodAutoscaler", "prompt-service")
        .expect("hpa");
    assert_eq!(str_at(&hpa.value, "/spec/metrics/0/resource/name"), "cpu");
    assert!(hpa.value["spec"]["minReplicas"].as_u64() >= Some(2));
    let headless = bundle
        .get("Service", "prompt-service-headless")
        .expect("headless");
    assert_eq!(headless.value["spec"]["clusterIP"], "None");
    assert_eq!(
        bundle
            .get("Service", "prompt-service")
            .expect("service")
            .value["spec"]["type"],
        "ClusterIP"
    );
}

#[test]
fn agent_service_keeps_state_on_a_claim_per_replica() {
    let bundle = bundle();
    let set = bundle
        .get("StatefulSet", "agent-service")
        .expect("statefulset");
    let c = container(set);
    let state_dir = env(c, "OPENCLAW_STATE_DIR");
    let claim = str_at(&set.value, "/spec/volumeClaimTemplates/0/metadata/name");
    let mount = array(c, "/volumeMounts")
        .iter()
        .find(|m| str_at(m, "/name") == claim)
        .expect("the claim is mounted");
    assert_eq!(str_at(mount, "/mountPath"), state_dir);
    assert_eq!(
        c["readinessProbe"]["grpc"]["service"],
        "openclaw.agent.v1.AgentService"
    );
    // The pod has time to drain and flush: the grace period covers the drain plus a margin.
    let drain: u64 = env(c, "AGENT_SERVICE_DRAIN_SECS").parse().expect("seconds");
    let grace = set.value["spec"]["template"]["spec"]["terminationGracePeriodSeconds"].as_u64();
    assert!(grace >= Some(drain + 5), "{grace:?} vs {drain}");
}

/// The ConfigMap carries deploy/openclaw.json and the demo script byte for byte.
#[test]
fn the_agent_config_map_matches_the_compose_config() {
    let bundle = bundle();
    let map = bundle
        .get("ConfigMap", "agent-config")
        .expect("agent-config");
    let deploy = support::deploy_dir();
    let compose_config =
        std::fs::read_to_string(deploy.join("openclaw.json")).expect("openclaw.json");
    assert_eq!(str_at(&map.value, "/data/openclaw.json"), compose_config);
    let script = std::fs::read_to_string(
        support::repo_root().join("agent-service/providers/examples/demo-script.json5"),
    )
    .expect("demo script");
    assert_eq!(str_at(&map.value, "/data/demo-script.json5"), script);
}

/// Edits one manifest of the real bundle and returns the new problems.
fn problems_after(edit: impl FnOnce(&mut Bundle)) -> Vec<String> {
    let mut bundle = bundle();
    edit(&mut bundle);
    bundle.problems()
}

fn resource<'a>(bundle: &'a mut Bundle, id: &str) -> &'a mut Value {
    &mut bundle
        .resources
        .iter_mut()
        .find(|m| m.id() == id)
        .unwrap_or_else(|| panic!("{id}"))
        .value
}

#[test]
fn every_broken_reference_is_reported() {
    assert_eq!(
        problems_after(|b| {
            resource(b, "Deployment/prompt-service")["spec"]["selector"]["matchLabels"] =
                json!({ "app.kubernetes.io/name": "prompt" });
        }),
        [
            "Deployment/prompt-service: selector {\"app.kubernetes.io/name\":\"prompt\"} does not match the pod labels {\"app.kubernetes.io/name\":\"prompt-service\",\"app.kubernetes.io/part-of\":\"openclaw\"}"
        ]
    );
    assert_eq!(
        problems_after(|b| {
            resource(b, "Service/prompt-service")["spec"]["ports"][0]["targetPort"] = json!("grcp");
        }),
        [
            "Service/prompt-service: port 50051 targets \"grcp\", not a port of Deployment/prompt-service"
        ]
    );
    assert_eq!(
        problems_after(|b| {
            resource(b, "StatefulSet/agent-service")["spec"]["template"]["spec"]["containers"][0]
                ["volumeMounts"][1]["name"] = json!("configs");
        }),
        [
            "StatefulSet/agent-service: container agent-service: volumeMount configs names no volume",
            "StatefulSet/agent-service: volume config is never mounted",
        ]
    );
    assert_eq!(
        problems_after(|b| {
            resource(b, "ConfigMap/agent-config")["metadata"]["name"] = json!("agent-cfg");
        }),
        [
            "StatefulSet/agent-service: container agent-service: env OPENCLAW_CONFIG_PATH=/etc/openclaw/openclaw.json: ConfigMap agent-config has no key openclaw.json",
            "StatefulSet/agent-service: volume config: ConfigMap agent-config does not exist",
        ]
    );
    assert_eq!(
        problems_after(|b| {
            resource(b, "Service/agent-service-1")["spec"]["selector"] =
                json!({ "statefulset.kubernetes.io/pod-name": "agent-service-2" });
        }),
        [
            "Service/agent-service-1: selector {\"statefulset.kubernetes.io/pod-name\":\"agent-service-2\"} matches no workload's pods"
        ]
    );
    assert_eq!(
        problems_after(|b| {
            resource(b, "StatefulSet/agent-service")["spec"]["template"]["spec"]["containers"][0]
                ["readinessProbe"]["grpc"]["port"] = json!(50053);
        }),
        [
            "StatefulSet/agent-service: container agent-service: readinessProbe.grpc.port 50053 is not a container port"
        ]
    );
    assert_eq!(
        problems_after(|b| {
            resource(b, "HorizontalPodAutoscaler/prompt-service")["spec"]["scaleTargetRef"]["name"] =
                json!("prompt");
        }),
        ["HorizontalPodAutoscaler/prompt-service: scaleTargetRef Deployment/prompt does not exist"]
    );
    assert_eq!(
        problems_after(|b| {
            resource(b, "StatefulSet/agent-service")["spec"]["template"]["spec"]["containers"][0]
                ["env"][6]["value"] = json!("http://openclaw-router:50053");
        }),
        [
            "StatefulSet/agent-service: container agent-service: env PROMPT_SERVICE_URL=http://openclaw-router:50053: no Service openclaw-router with port 50053"
        ]
    );
    assert_eq!(
        problems_after(|b| {
            resource(b, "StatefulSet/agent-service")["spec"]["serviceName"] =
                json!("agent-service-0");
        }),
        ["StatefulSet/agent-service: serviceName agent-service-0 is not a headless Service"]
    );
}

/// Issue 9: both services read accepted tokens from the openclaw-tokens
/// Secret, each pod mounting only the keys it needs.
#[test]
fn both_services_require_tokens_from_the_secret() {
    let bundle = bundle();
    let prompt = container(
        bundle
            .get("Deployment", "prompt-service")
            .expect("deployment"),
    );
    let agent = container(
        bundle
            .get("StatefulSet", "agent-service")
            .expect("statefulset"),
    );
    assert_eq!(
        env(prompt, "PROMPT_SERVICE_TOKENS_FILE"),
        "/run/secrets/prompt-tokens"
    );
    assert_eq!(
        env(agent, "AGENT_SERVICE_TOKENS_FILE"),
        "/run/secrets/agent-tokens"
    );
    assert_eq!(
        env(agent, "PROMPT_SERVICE_TOKEN_FILE"),
        "/run/secrets/prompt-tokens"
    );
    for (kind, name, keys) in [
        ("Deployment", "prompt-service", vec!["prompt-tokens"]),
        (
            "StatefulSet",
            "agent-service",
            vec!["agent-tokens", "prompt-tokens"],
        ),
    ] {
        let workload = bundle.get(kind, name).expect(name);
        let volume = array(&workload.value, "/spec/template/spec/volumes")
            .iter()
            .find(|v| str_at(v, "/name") == "tokens")
            .expect("tokens volume");
        assert_eq!(str_at(volume, "/secret/secretName"), "openclaw-tokens");
        assert!(
            volume.pointer("/secret/optional").is_none(),
            "{name}: not optional"
        );
        let mounted: Vec<&str> = array(volume, "/secret/items")
            .iter()
            .map(|i| str_at(i, "/key"))
            .collect();
        assert_eq!(mounted, keys, "{name}");
    }
    assert_eq!(
        problems_after(|b| {
            resource(b, "StatefulSet/agent-service")["spec"]["template"]["spec"]["containers"][0]
                ["env"]
                .as_array_mut()
                .expect("env")
                .retain(|e| e["name"] != "AGENT_SERVICE_TOKENS_FILE");
        }),
        [
            "StatefulSet/agent-service: container agent-service: AGENT_SERVICE_LISTEN=0.0.0.0:50052 serves other hosts but AGENT_SERVICE_TOKENS_FILE is not set"
        ]
    );
    assert_eq!(
        problems_after(|b| {
            resource(b, "StatefulSet/agent-service")["spec"]["template"]["spec"]["containers"][0]
                ["env"]
                .as_array_mut()
                .expect("env")
                .retain(|e| e["name"] != "PROMPT_SERVICE_TOKEN_FILE");
        }),
        [
            "StatefulSet/agent-service: container agent-service: PROMPT_SERVICE_URL calls a service that requires a token but PROMPT_SERVICE_TOKEN_FILE is not set"
        ]
    );
    assert_eq!(
        problems_after(|b| {
            resource(b, "Deployment/prompt-service")["spec"]["template"]["spec"]["volumes"][0]["secret"]
                ["items"][0]["path"] = json!("tokens");
        }),
        [
            "Deployment/prompt-service: container prompt-service: PROMPT_SERVICE_TOKENS_FILE=/run/secrets/prompt-tokens is not a file of a mounted Secret ([\"/run/secrets/tokens\"])"
        ]
    );
}

#[test]
fn router_config_mistakes_are_reported() {
    let path = support::deploy_dir().join("k8s/router/envoy.yaml");
    let check = |edit: &dyn Fn(&mut Value), bundle_edit: &dyn Fn(&mut Bundle)| {
        let mut envoy = EnvoyConfig::load(&path).expect("envoy.yaml");
        edit(&mut envoy.value);
        let mut bundle = bundle();
        bundle_edit(&mut bundle);
        envoy.problems(&bundle, "router-envoy", service_kit::SESSION_KEY_HEADER)
    };
    let route = "/static_resources/listeners/0/filter_chains/0/filters/0/typed_config/route_config/virtual_hosts/0/routes/0/route";
    assert_eq!(
        check(
            &|v| v.pointer_mut(route).expect("route")["hash_policy"][0]["header"]["header_name"] =
                json!("x-session"),
            &|_| {}
        ),
        [
            "listener agent: ring-hash route hashes on [\"x-session\"], not [\"x-openclaw-session-key\"]"
        ]
    );
    // A third replica without its ring endpoint and Service.
    assert_eq!(
        check(&|_| {}, &|b| {
            resource(b, "StatefulSet/agent-service")["spec"]["replicas"] = json!(3);
        }),
        [
            "cluster agent_service: ring endpoints own pods {\"agent-service-0\", \"agent-service-1\"}, but the StatefulSet has {\"agent-service-0\", \"agent-service-1\", \"agent-service-2\"}"
        ]
    );
    assert_eq!(
        check(
            &|v| v["static_resources"]["clusters"][0]["common_lb_config"] = json!({}),
            &|_| {}
        ),
        [
            "cluster agent_service: ring hash on pod IPs: set use_hostname_for_hashing so restarts keep ownership"
        ]
    );
    assert_eq!(
        check(
            &|v| v["static_resources"]["clusters"][1]["load_assignment"]["endpoints"][0]["lb_endpoints"]
                [0]["endpoint"]["address"]["socket_address"]["address"] =
                json!("prompt-service-headless.default.svc.cluster.local"),
            &|_| {}
        ),
        [
            "cluster prompt_service: prompt-service-headless.default.svc.cluster.local is not <service>.openclaw.svc.cluster.local"
        ]
    );
    assert_eq!(
        check(
            &|v| v["static_resources"]["listeners"][2]["address"]["socket_address"]["port_value"] =
                json!(8081),
            &|_| {}
        ),
        ["listener health on port 8081 is not a container port of Deployment/router"]
    );
}
