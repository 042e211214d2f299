//! What an operator signs off on before the manifests reach a cluster, as a
//! table of rules ([`RULES`]), each with why it matters. [`crate::k8s`]
//! checks that references resolve; these rules check that the workloads
//! survive node loss, rollouts and drains, run what was tested, and are
//! reachable only by who needs them.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::k8s::{
    Bundle, Manifest, array, container_ports, containers, port_matches, pre_stop_secs, str_at,
    subset,
};

/// One rule of the review.
pub struct Rule {
    /// Short name, the prefix of its problems.
    pub name: &'static str,
    /// What it asks, and why.
    pub why: &'static str,
    /// Its check.
    pub check: fn(&Bundle, &mut dyn FnMut(String)),
}

/// The rules, in the order their problems are reported.
pub const RULES: &[Rule] = &[
    Rule {
        name: "autoscaled-replicas",
        why: "a workload an autoscaler scales sets no spec.replicas: every `kubectl apply` would \
              reset the count the autoscaler chose",
        check: autoscaled_replicas,
    },
    Rule {
        name: "spread",
        why: "a workload with more than one pod spreads them over nodes (a topology spread \
              constraint on kubernetes.io/hostname selecting its pods, DoNotSchedule unless an \
              autoscaler sizes it), so one node loss cannot take all of them",
        check: spread,
    },
    Rule {
        name: "disruption-budget",
        why: "a workload with more than one pod has a PodDisruptionBudget, so drains and upgrades \
              take its pods one at a time",
        check: disruption_budget,
    },
    Rule {
        name: "pinned-images",
        why: "every image is a digest or a release tag (digits and dots) after the \
              kustomization's `images:`: a moving tag (latest, dev, none) runs whatever was \
              pushed last, and IfNotPresent keeps a stale copy per node",
        check: pinned_images,
    },
    Rule {
        name: "startup-probe",
        why: "every container has a startupProbe: liveness and readiness wait for it instead of \
              a guessed initialDelaySeconds, and a slow start is not killed",
        check: startup_probe,
    },
    Rule {
        name: "graceful-stop",
        why: "terminationGracePeriodSeconds covers the preStop wait plus the drain the container \
              is told (*_DRAIN_SECS) plus a margin: the kubelet's SIGKILL must not cut a drain",
        check: graceful_stop,
    },
    Rule {
        name: "network-policy",
        why: "ingress is denied by default and allowed per workload, on ports the workload has, \
              from workloads that exist; every port a Service sends to is allowed from somewhere",
        check: network_policy,
    },
];

/// Seconds between the end of a drain and the grace period's end.
const STOP_MARGIN_SECS: u64 = 5;

/// Every rule's problems, each prefixed with its rule's name.
pub fn review(bundle: &Bundle) -> Vec<String> {
    let mut problems = Vec::new();
    for rule in RULES {
        (rule.check)(bundle, &mut |p| {
            problems.push(format!("{}: {p}", rule.name))
        });
    }
    problems
}

/// The autoscaler that scales `workload`, if any.
fn autoscaler<'a>(bundle: &'a Bundle, workload: &Manifest) -> Option<&'a Manifest> {
    bundle.of_kind("HorizontalPodAutoscaler").find(|hpa| {
        str_at(&hpa.value, "/spec/scaleTargetRef/kind") == workload.kind()
            && str_at(&hpa.value, "/spec/scaleTargetRef/name") == workload.name()
    })
}

/// The fewest pods `workload` runs: its autoscaler's minimum, or its
/// replicas (1 when unset).
fn min_pods(bundle: &Bundle, workload: &Manifest) -> u64 {
    match autoscaler(bundle, workload) {
        Some(hpa) => hpa.value["spec"]["minReplicas"].as_u64().unwrap_or(1),
        None => workload.value["spec"]["replicas"].as_u64().unwrap_or(1),
    }
}

fn pod_labels(workload: &Manifest) -> &Value {
    &workload.value["spec"]["template"]["metadata"]["labels"]
}

fn autoscaled_replicas(bundle: &Bundle, add: &mut dyn FnMut(String)) {
    for workload in bundle.workloads() {
        if let Some(hpa) = autoscaler(bundle, workload)
            && workload.value["spec"].get("replicas").is_some()
        {
            add(format!(
                "{} sets spec.replicas, but {} owns the count",
                workload.id(),
                hpa.id()
            ));
        }
    }
}

fn spread(bundle: &Bundle, add: &mut dyn FnMut(String)) {
    for workload in bundle.workloads() {
        if min_pods(bundle, workload) < 2 && autoscaler(bundle, workload).is_none() {
            continue;
        }
        let pod = &workload.value["spec"]["template"]["spec"];
        let on_hosts: Vec<&Value> = array(pod, "/topologySpreadConstraints")
            .iter()
            .filter(|c| str_at(c, "/topologyKey") == "kubernetes.io/hostname")
            .filter(|c| subset(&c["labelSelector"]["matchLabels"], pod_labels(workload)))
            .collect();
        let Some(constraint) = on_hosts.first() else {
            add(format!(
                "{}: no topology spread constraint on kubernetes.io/hostname selecting its pods",
                workload.id()
            ));
            continue;
        };
        let hard = str_at(constraint, "/whenUnsatisfiable") == "DoNotSchedule";
        if !hard && autoscaler(bundle, workload).is_none() {
            add(format!(
                "{}: its spread over nodes is ScheduleAnyway: its {} pods may share one node",
                workload.id(),
                min_pods(bundle, workload)
            ));
        }
    }
}

fn disruption_budget(bundle: &Bundle, add: &mut dyn FnMut(String)) {
    for workload in bundle.workloads() {
        if min_pods(bundle, workload) < 2 {
            continue;
        }
        let covered = bundle.of_kind("PodDisruptionBudget").any(|pdb| {
            subset(
                &pdb.value["spec"]["selector"]["matchLabels"],
                pod_labels(workload),
            )
        });
        if !covered {
            add(format!(
                "{}: no PodDisruptionBudget selects its pods",
                workload.id()
            ));
        }
    }
}

/// Tags that move: whatever was pushed last.
const MOVING_TAGS: &[&str] = &[
    "", "latest", "dev", "main", "master", "edge", "nightly", "stable",
];

/// Whether `tag` names one release: digits and dots, optionally a suffix
/// after `-` (`0.1.0`, `1.2.3-rc.1`), never ending in `-latest`.
pub fn is_release_tag(tag: &str) -> bool {
    let version = tag.split_once('-').map_or(tag, |(v, _)| v);
    !MOVING_TAGS.contains(&tag)
        && !tag.ends_with("-latest")
        && version.contains('.')
        && version
            .split('.')
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

fn pinned_images(bundle: &Bundle, add: &mut dyn FnMut(String)) {
    for workload in bundle.workloads() {
        for container in containers(workload) {
            let image = str_at(container, "/image");
            let (name, own_tag, own_digest) = split_image(image);
            let entry = bundle
                .image_entries
                .iter()
                .find(|e| str_at(e, "/name") == name);
            let digest = entry
                .and_then(|e| e["digest"].as_str())
                .or(own_digest)
                .filter(|d| d.starts_with("sha256:"));
            let tag = entry.and_then(|e| e["newTag"].as_str()).unwrap_or(own_tag);
            if digest.is_none() && !is_release_tag(tag) {
                add(format!(
                    "{} container {}: image {name} runs tag {tag:?}, which moves (pin a release \
                     tag or a digest in kustomization.yaml)",
                    workload.id(),
                    str_at(container, "/name")
                ));
            }
        }
    }
}

/// `name[:tag][@digest]` → its parts (a registry port is part of the name).
fn split_image(image: &str) -> (&str, &str, Option<&str>) {
    let (rest, digest) = match image.split_once('@') {
        Some((rest, digest)) => (rest, Some(digest)),
        None => (image, None),
    };
    let slash = rest.rfind('/').map_or(0, |i| i + 1);
    match rest[slash..].split_once(':') {
        Some((_, tag)) => (&rest[..rest.len() - tag.len() - 1], tag, digest),
        None => (rest, "", digest),
    }
}

fn startup_probe(bundle: &Bundle, add: &mut dyn FnMut(String)) {
    for workload in bundle.workloads() {
        for container in array(&workload.value, "/spec/template/spec/containers") {
            if container.get("startupProbe").is_none() {
                add(format!(
                    "{} container {}: no startupProbe",
                    workload.id(),
                    str_at(container, "/name")
                ));
            }
            for probe in ["readinessProbe", "livenessProbe"] {
                if container
                    .pointer(&format!("/{probe}/initialDelaySeconds"))
                    .is_some()
                {
                    add(format!(
                        "{} container {}: {probe}.initialDelaySeconds guesses what the \
                         startupProbe knows",
                        workload.id(),
                        str_at(container, "/name")
                    ));
                }
            }
        }
    }
}

fn graceful_stop(bundle: &Bundle, add: &mut dyn FnMut(String)) {
    for workload in bundle.workloads() {
        let grace = workload.value["spec"]["template"]["spec"]["terminationGracePeriodSeconds"]
            .as_u64()
            .unwrap_or(30);
        let drain = containers(workload)
            .flat_map(|c| array(c, "/env"))
            .filter(|e| str_at(e, "/name").ends_with("_DRAIN_SECS"))
            .filter_map(|e| str_at(e, "/value").parse::<u64>().ok())
            .max();
        let Some(drain) = drain else {
            continue;
        };
        let pre_stop = pre_stop_secs(workload);
        if grace < pre_stop + drain + STOP_MARGIN_SECS {
            add(format!(
                "{}: terminationGracePeriodSeconds {grace} < preStop {pre_stop} + drain {drain} + \
                 {STOP_MARGIN_SECS}",
                workload.id()
            ));
        }
    }
}

fn network_policy(bundle: &Bundle, add: &mut dyn FnMut(String)) {
    let policies: Vec<&Manifest> = bundle
        .of_kind("NetworkPolicy")
        .filter(|p| {
            array(&p.value, "/spec/policyTypes")
                .iter()
                .any(|t| t == "Ingress")
        })
        .collect();
    let default_deny = policies.iter().any(|p| {
        p.value["spec"]["podSelector"]
            .as_object()
            .is_some_and(|s| s.is_empty())
            && array(&p.value, "/spec/ingress").is_empty()
    });
    if !default_deny {
        add(
            "no default-deny ingress policy (podSelector {}, policyTypes [Ingress], no rules)"
                .into(),
        );
    }
    for workload in bundle.workloads() {
        let selecting: Vec<&&Manifest> = policies
            .iter()
            .filter(|p| {
                p.value["spec"]["podSelector"]["matchLabels"]
                    .as_object()
                    .is_some_and(|s| !s.is_empty())
                    && subset(
                        &p.value["spec"]["podSelector"]["matchLabels"],
                        pod_labels(workload),
                    )
            })
            .collect();
        if selecting.is_empty() {
            add(format!(
                "{}: no NetworkPolicy selects its pods: default-deny leaves it unreachable",
                workload.id()
            ));
            continue;
        }
        let ports: Vec<&Value> = containers(workload).flat_map(container_ports).collect();
        let mut allowed: Vec<&Value> = Vec::new();
        for policy in &selecting {
            for rule in array(&policy.value, "/spec/ingress") {
                for port in array(rule, "/ports") {
                    if !port_matches(&port["port"], &ports) {
                        add(format!(
                            "{} allows port {} that {} does not have",
                            policy.id(),
                            port["port"],
                            workload.id()
                        ));
                    }
                    allowed.push(&port["port"]);
                }
                for from in array(rule, "/from") {
                    if let Some(labels) = from.pointer("/podSelector/matchLabels")
                        && bundle.selected(labels).is_empty()
                    {
                        add(format!(
                            "{} allows pods {labels} that no workload runs",
                            policy.id()
                        ));
                    }
                }
            }
        }
        let exposed: BTreeSet<String> = bundle
            .of_kind("Service")
            .filter(|s| {
                bundle
                    .selected(&s.value["spec"]["selector"])
                    .iter()
                    .any(|w| w.id() == workload.id())
            })
            .flat_map(|s| array(&s.value, "/spec/ports"))
            .map(|p| p.get("targetPort").unwrap_or(&p["port"]).to_string())
            .collect();
        for target in exposed {
            let target_value: Value = serde_json::from_str(&target).unwrap_or(Value::Null);
            let port_names = |v: &Value| -> BTreeSet<String> {
                ports
                    .iter()
                    .filter(|p| port_matches(v, &[**p]))
                    .map(|p| p["containerPort"].to_string())
                    .collect()
            };
            let wanted = port_names(&target_value);
            let reachable = allowed.iter().any(|a| !port_names(a).is_disjoint(&wanted));
            if !reachable {
                add(format!(
                    "{}: a Service sends to its port {target}, which no policy allows",
                    workload.id()
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn release_tags_and_moving_tags() {
        for tag in ["0.1.0", "1.2", "1.2.3-rc.1", "26.1.5"] {
            assert!(is_release_tag(tag), "{tag}");
        }
        for tag in [
            "",
            "latest",
            "dev",
            "v1.2.3",
            "1",
            "1.x",
            "1.34-latest",
            "main",
        ] {
            assert!(!is_release_tag(tag), "{tag}");
        }
    }

    #[test]
    fn image_references_split_into_name_tag_and_digest() {
        assert_eq!(
            split_image("openclaw/x:0.1.0"),
            ("openclaw/x", "0.1.0", None)
        );
        assert_eq!(
            split_image("reg:5000/openclaw/x@sha256:ab"),
            ("reg:5000/openclaw/x", "", Some("sha256:ab"))
        );
        assert_eq!(
            split_image("reg:5000/x:1.0@sha256:ab"),
            ("reg:5000/x", "1.0", Some("sha256:ab"))
        );
    }
}
