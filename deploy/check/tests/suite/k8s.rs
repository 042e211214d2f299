//! deploy/k8s: the manifests kustomization.yaml lists, their cross
//! references, the review rules, the router's HAProxy config against them,
//! and what each workload must be.

use std::collections::BTreeSet;

use deploy_check::{
    haproxy::{
        HaproxyConfig, ROUTE_KEY_HEADER, RouterRules, keyless_agent_methods, main_session_methods,
    },
    k8s::{Bundle, Manifest, array, containers, str_at},
    review,
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
fn manifests_have_no_cross_reference_or_review_problems() {
    let bundle = bundle();
    assert_eq!(bundle.problems(), Vec::<String>::new());
    assert_eq!(review::review(&bundle), Vec::<String>::new());
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
            "NetworkPolicy/default-deny-ingress",
            "NetworkPolicy/router",
            "NetworkPolicy/prompt-service",
            "NetworkPolicy/agent-service",
        ]
    );
}

/// The longest a Run may stream: agents.defaults.timeoutSeconds' default.
const LONGEST_RUN_SECS: u64 = 600;

fn router_config() -> HaproxyConfig {
    HaproxyConfig::load(&support::deploy_dir().join("k8s/router/haproxy.cfg")).expect("haproxy.cfg")
}

fn router_problems(config: &HaproxyConfig, bundle: &Bundle) -> Vec<String> {
    let keyless = keyless_agent_methods().expect("descriptors");
    RouterRules {
        config_map: "router-haproxy",
        session_header: service_kit::SESSION_KEY_HEADER,
        route_header: ROUTE_KEY_HEADER,
        keyless: &keyless,
        longest_run_secs: LONGEST_RUN_SECS,
    }
    .problems(config, bundle)
}

#[test]
fn the_router_config_matches_the_manifests_and_the_api() {
    assert_eq!(
        router_problems(&router_config(), &bundle()),
        Vec::<String>::new()
    );
    // The calls that may go to any replica are those whose request names no session and
    // that are not cron job calls, which are routed by the agent's main session key.
    let keyless = keyless_agent_methods().expect("descriptors");
    let set = |paths: &[&str]| {
        paths
            .iter()
            .map(|m| format!("/openclaw.agent.v1.AgentService/{m}"))
            .collect::<BTreeSet<_>>()
    };
    assert_eq!(
        keyless,
        set(&[
            "GetServiceStatus",
            "ListAgents",
            "ListSessions",
            "ListSkills",
            "Setup",
        ])
    );
    assert_eq!(
        main_session_methods().expect("descriptors"),
        set(&[
            "AddCronJob",
            "AddExecAllowlistEntry",
            "ListCronJobs",
            "ListExecAllowlist",
            "RemoveCronJob",
            "RemoveExecAllowlistEntry",
            "RunCronJob",
            "UpdateCronJob",
        ])
    );
}

#[test]
fn the_router_hashes_cron_sessions_as_their_main_session() {
    // Without the cron mapping, a cron session would hash on its own key and land on a
    // replica that does not hold its job.
    let text = std::fs::read_to_string(support::deploy_dir().join("k8s/router/haproxy.cfg"))
        .expect("haproxy.cfg");
    let line = text
        .lines()
        .find(|l| l.contains("field(3,:) -m str cron"))
        .expect("the cron mapping line");
    let without = text.replace(&format!("{line}\n"), "");
    let config = HaproxyConfig::parse(&without).expect("parse");
    let problems = router_problems(&config, &bundle());
    assert!(
        problems
            .iter()
            .any(|p| p.contains("the route key is set by")),
        "{problems:?}"
    );
}

#[test]
fn prompt_service_is_a_scaled_deployment_with_grpc_probes() {
    let bundle = bundle();
    let deployment = bundle
        .get("Deployment", "prompt-service")
        .expect("deployment");
    // The autoscaler owns the count.
    assert_eq!(deployment.value["spec"].get("replicas"), None);
    let c = container(deployment);
    assert_eq!(
        c["readinessProbe"]["grpc"],
        json!({ "port": 50051, "service": "openclaw.prompt.v1.PromptService" })
    );
    assert_eq!(c["livenessProbe"]["grpc"], json!({ "port": 50051 }));
    assert_eq!(c["startupProbe"]["grpc"], json!({ "port": 50051 }));
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

/// Both services read accepted tokens from the openclaw-tokens Secret, each
/// pod mounting only the keys it needs.
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
    let text = std::fs::read_to_string(support::deploy_dir().join("k8s/router/haproxy.cfg"))
        .expect("haproxy.cfg");
    let check = |edit: &dyn Fn(&str) -> String, bundle_edit: &dyn Fn(&mut Bundle)| {
        let edited = edit(&text);
        assert_ne!(edited, text, "the edit changed nothing");
        let config = HaproxyConfig::parse(&edited).expect("parse");
        let mut bundle = bundle();
        bundle_edit(&mut bundle);
        router_problems(&config, &bundle)
    };
    let keep = |_: &mut Bundle| {};
    assert_eq!(
        check(
            &|t| t.replace(
                "balance hdr(x-openclaw-route-key)",
                "balance hdr(x-session)"
            ),
            &keep
        ),
        [
            "frontend agent: backend agent_service hashes on \"x-session\", not \"x-openclaw-route-key\""
        ]
    );
    assert_eq!(
        check(&|t| t.replace("    hash-type consistent\n", ""), &keep),
        [
            "backend agent_service: hash-type is not consistent: a replica change would move most sessions"
        ]
    );
    assert_eq!(
        check(
            &|t| t.replace("proto h2 id 2", "proto h2 id 2 check"),
            &keep
        ),
        [
            "backend agent_service: server agent-service-1: health checks would move sessions off their owner"
        ]
    );
    assert_eq!(
        check(&|t| t.replace(" id 1 ", " "), &keep),
        [
            "backend agent_service: server agent-service-0: no fixed `id` (the ring position would follow the file order)"
        ]
    );
    // A third replica without its ring server and Service.
    assert_eq!(
        check(&|t| t.to_owned() + "\n", &|b| {
            resource(b, "StatefulSet/agent-service")["spec"]["replicas"] = json!(3);
        }),
        [
            "backend agent_service: the owner's slot is set from [\"req.fhdr(x-openclaw-route-key),crc32,mod(2)\"]; want `http-request set-var(txn.slot) req.fhdr(x-openclaw-route-key),crc32,mod(3)` (StatefulSet agent-service has 3 replicas)",
            "backend agent_service: use-server rules [(\"agent-service-0\", \"if { var(txn.slot) -m int 0 }\"), (\"agent-service-1\", \"if { var(txn.slot) -m int 1 }\")]; want one per pod of StatefulSet agent-service, in order: [(\"agent-service-0\", \"if { var(txn.slot) -m int 0 }\"), (\"agent-service-1\", \"if { var(txn.slot) -m int 1 }\"), (\"agent-service-2\", \"if { var(txn.slot) -m int 2 }\")]",
            "backend agent_service: StatefulSet agent-service: AGENT_SERVICE_REPLICA says 2 replicas, but it has 3",
            "backend agent_service: ring servers own pods {\"agent-service-0\", \"agent-service-1\"}, but the StatefulSet has {\"agent-service-0\", \"agent-service-1\", \"agent-service-2\"}"
        ]
    );
    assert_eq!(
        check(
            &|t| t.replace(
                "prompt-service-headless.openclaw.svc.cluster.local",
                "prompt-service-headless.default.svc.cluster.local"
            ),
            &keep
        ),
        [
            "backend prompt_service: server prompt-service: prompt-service-headless.default.svc.cluster.local is not <service>.openclaw.svc.cluster.local"
        ]
    );
    assert_eq!(
        check(&|t| t.replace("bind :8404", "bind :8405"), &keep),
        ["frontend health binds port 8405, not a container port of Deployment/router"]
    );
    // Keyless Run: sessions would land on any replica.
    let problems = check(
        &|t| {
            t.replace(
                "/openclaw.agent.v1.AgentService/ListSkills",
                "/openclaw.agent.v1.AgentService/ListSkills /openclaw.agent.v1.AgentService/Run",
            )
        },
        &keep,
    );
    assert_eq!(problems.len(), 1, "{problems:?}");
    let (lets, named) = problems[0]
        .strip_prefix("frontend agent: acl keyless lets ")
        .and_then(|rest| {
            rest.split_once(
                " through without the header; the AgentService methods that name no session are ",
            )
        })
        .unwrap_or_else(|| panic!("{problems:?}"));
    let run = "\"/openclaw.agent.v1.AgentService/Run\"";
    assert!(lets.contains(run) && !named.contains(run), "{problems:?}");
    assert_eq!(lets.replace(&format!(", {run}"), ""), named, "{problems:?}");
    assert_eq!(
        check(&|t| t.replace("grpc-status 3", "grpc-status 14"), &keep),
        [
            "frontend agent: a call without the header is not refused with grpc-status 3 (INVALID_ARGUMENT)",
            "frontend agent: a call with the header more than once is not refused with grpc-status 3: want `acl many_session_keys req.fhdr_cnt(x-openclaw-session-key) gt 1` and a `return` with grpc-status 3 `if many_session_keys` (the router would route by one header and the replica check another)",
        ]
    );
    // The owner rules: the router, the StatefulSet and agent-service agree on the count and
    // on which pod holds which slot.
    assert_eq!(
        check(&|t| t.replace("crc32,mod(2)", "crc32,mod(3)"), &keep),
        [
            "backend agent_service: the owner's slot is set from [\"req.fhdr(x-openclaw-route-key),crc32,mod(3)\"]; want `http-request set-var(txn.slot) req.fhdr(x-openclaw-route-key),crc32,mod(2)` (StatefulSet agent-service has 2 replicas)",
        ]
    );
    assert_eq!(
        check(
            &|t| t.replace(
                "use-server agent-service-1 if { var(txn.slot) -m int 1 }",
                "use-server agent-service-1 if { var(txn.slot) -m int 0 }"
            ),
            &keep
        ),
        [
            "backend agent_service: use-server rules [(\"agent-service-0\", \"if { var(txn.slot) -m int 0 }\"), (\"agent-service-1\", \"if { var(txn.slot) -m int 0 }\")]; want one per pod of StatefulSet agent-service, in order: [(\"agent-service-0\", \"if { var(txn.slot) -m int 0 }\"), (\"agent-service-1\", \"if { var(txn.slot) -m int 1 }\")]",
        ]
    );
    assert_eq!(
        check(&|t| t.to_owned() + "\n", &|b| {
            replica_env(b)["value"] = json!("$(POD_NAME)/3");
        }),
        [
            "backend agent_service: StatefulSet agent-service: AGENT_SERVICE_REPLICA says 3 replicas, but it has 2",
        ]
    );
    assert_eq!(
        check(&|t| t.to_owned() + "\n", &|b| {
            replica_env(b)["value"] = json!("0/2");
        }),
        [
            "backend agent_service: StatefulSet agent-service: AGENT_SERVICE_REPLICA=\"0/2\": the ordinal must be $(VAR) with VAR from the pod's name (valueFrom.fieldRef.fieldPath metadata.name)",
        ]
    );
    assert_eq!(
        check(
            &|t| t.replace(
                "req.fhdr_cnt(x-openclaw-session-key) gt 1",
                "req.hdr_cnt(x-openclaw-session-key) gt 1"
            ),
            &keep
        ),
        [
            "frontend agent: a call with the header more than once is not refused with grpc-status 3: want `acl many_session_keys req.fhdr_cnt(x-openclaw-session-key) gt 1` and a `return` with grpc-status 3 `if many_session_keys` (the router would route by one header and the replica check another)",
        ]
    );
    assert_eq!(
        check(
            &|t| t.replace("hard-stop-after 610s", "hard-stop-after 60s"),
            &keep
        ),
        ["global: hard-stop-after 60 s cuts runs shorter than the longest (600 s)"]
    );
    assert_eq!(
        check(&|t| t.to_owned() + "\n", &|b| {
            resource(b, "Deployment/router")["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] =
                json!(600);
        }),
        [
            "Deployment/router: terminationGracePeriodSeconds 600 does not outlast preStop (5 s) plus hard-stop-after (610 s): the kubelet would cut the drain"
        ]
    );
}

/// An edit of the real bundle.
type Edit = Box<dyn Fn(&mut Bundle)>;

/// Each review rule reports what breaks it.
#[test]
fn every_review_rule_reports_its_problem() {
    let review_after = |edit: &dyn Fn(&mut Bundle)| {
        let mut bundle = bundle();
        edit(&mut bundle);
        review::review(&bundle)
    };
    let pod =
        |b: &mut Bundle, id: &str| -> Value { resource(b, id)["spec"]["template"]["spec"].clone() };
    let cases: Vec<(&str, Edit, Vec<&str>)> = vec![
        (
            "autoscaled-replicas",
            Box::new(|b| resource(b, "Deployment/prompt-service")["spec"]["replicas"] = json!(2)),
            vec![
                "autoscaled-replicas: Deployment/prompt-service sets spec.replicas, but HorizontalPodAutoscaler/prompt-service owns the count",
            ],
        ),
        (
            "spread",
            Box::new(move |b| {
                let mut spec = pod(b, "StatefulSet/agent-service");
                spec["topologySpreadConstraints"][0]["whenUnsatisfiable"] = json!("ScheduleAnyway");
                resource(b, "StatefulSet/agent-service")["spec"]["template"]["spec"] = spec;
            }),
            vec![
                "spread: StatefulSet/agent-service: its spread over nodes is ScheduleAnyway: its 2 pods may share one node",
            ],
        ),
        (
            "spread",
            Box::new(|b| {
                resource(b, "Deployment/router")["spec"]["template"]["spec"]
                    .as_object_mut()
                    .expect("pod spec")
                    .remove("topologySpreadConstraints");
            }),
            vec![
                "spread: Deployment/router: no topology spread constraint on kubernetes.io/hostname selecting its pods",
            ],
        ),
        (
            "disruption-budget",
            Box::new(|b| {
                b.resources
                    .retain(|m| m.id() != "PodDisruptionBudget/agent-service")
            }),
            vec![
                "disruption-budget: StatefulSet/agent-service: no PodDisruptionBudget selects its pods",
            ],
        ),
        (
            "pinned-images",
            Box::new(|b| {
                b.image_entries[1]["newTag"] = json!("latest");
            }),
            vec![
                "pinned-images: StatefulSet/agent-service container agent-service: image openclaw/agent-service runs tag \"latest\", which moves (pin a release tag or a digest in kustomization.yaml)",
            ],
        ),
        (
            "pinned-images (a digest pins any tag)",
            Box::new(|b| {
                b.image_entries[1]["newTag"] = json!("dev");
                b.image_entries[1]["digest"] = json!("sha256:0123");
            }),
            vec![],
        ),
        (
            "startup-probe",
            Box::new(|b| {
                let container = &mut resource(b, "Deployment/prompt-service")["spec"]["template"]["spec"]
                    ["containers"][0];
                container
                    .as_object_mut()
                    .expect("container")
                    .remove("startupProbe");
                container["livenessProbe"]["initialDelaySeconds"] = json!(5);
            }),
            vec![
                "startup-probe: Deployment/prompt-service container prompt-service: no startupProbe",
                "startup-probe: Deployment/prompt-service container prompt-service: livenessProbe.initialDelaySeconds guesses what the startupProbe knows",
            ],
        ),
        (
            "graceful-stop",
            Box::new(|b| {
                resource(b, "StatefulSet/agent-service")["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] =
                    json!(22);
            }),
            vec![
                "graceful-stop: StatefulSet/agent-service: terminationGracePeriodSeconds 22 < preStop 0 + drain 20 + 5",
            ],
        ),
        (
            "network-policy",
            Box::new(|b| {
                b.resources
                    .retain(|m| m.id() != "NetworkPolicy/default-deny-ingress")
            }),
            vec![
                "network-policy: no default-deny ingress policy (podSelector {}, policyTypes [Ingress], no rules)",
            ],
        ),
        (
            "network-policy",
            Box::new(|b| {
                resource(b, "NetworkPolicy/agent-service")["spec"]["ingress"][0]["ports"][0]["port"] =
                    json!("grcp");
            }),
            vec![
                "network-policy: NetworkPolicy/agent-service allows port \"grcp\" that StatefulSet/agent-service does not have",
                "network-policy: StatefulSet/agent-service: a Service sends to its port \"grpc\", which no policy allows",
            ],
        ),
        (
            "network-policy",
            Box::new(|b| {
                resource(b, "NetworkPolicy/prompt-service")["spec"]["ingress"][0]["from"][0]["podSelector"]
                    ["matchLabels"] = json!({ "app.kubernetes.io/name": "proxy" });
            }),
            vec![
                "network-policy: NetworkPolicy/prompt-service allows pods {\"app.kubernetes.io/name\":\"proxy\"} that no workload runs",
            ],
        ),
        (
            "network-policy",
            Box::new(|b| b.resources.retain(|m| m.id() != "NetworkPolicy/router")),
            vec![
                "network-policy: Deployment/router: no NetworkPolicy selects its pods: default-deny leaves it unreachable",
            ],
        ),
    ];
    let covered: BTreeSet<&str> = cases
        .iter()
        .map(|(rule, _, _)| rule.split(' ').next().unwrap_or_default())
        .collect();
    for (rule, edit, expected) in cases {
        assert_eq!(review_after(&*edit), expected, "{rule}");
    }
    // Every rule of the table has a case above.
    let rules: BTreeSet<&str> = review::RULES.iter().map(|r| r.name).collect();
    assert_eq!(covered, rules);
}

/// The `AGENT_SERVICE_REPLICA` entry of agent-service's container.
fn replica_env(bundle: &mut Bundle) -> &mut Value {
    resource(bundle, "StatefulSet/agent-service")["spec"]["template"]["spec"]["containers"][0]
        ["env"]
        .as_array_mut()
        .expect("env")
        .iter_mut()
        .find(|e| e["name"] == "AGENT_SERVICE_REPLICA")
        .expect("AGENT_SERVICE_REPLICA")
}
