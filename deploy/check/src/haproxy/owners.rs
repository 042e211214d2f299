//! The session owner rules: the router's `use-server` rules, its `crc32,mod(N)` slot, the
//! StatefulSet's replica count and agent-service's `AGENT_SERVICE_REPLICA` must all say the
//! same N and map slot i to pod i, or the router and the replicas disagree on who owns a
//! session (the replicas then refuse calls the router sends them).

use serde_json::Value;

use super::Section;
use crate::k8s::{Manifest, array, containers, str_at};

/// The variable the backend keeps the owner's slot in.
const SLOT_VAR: &str = "txn.slot";
/// agent-service's setting of its ordinal and the replica count.
const REPLICA_ENV: &str = "AGENT_SERVICE_REPLICA";

/// Reports, through `add`, every disagreement between `backend`'s owner rules, the StatefulSet
/// `sts` and its agent-service container.
pub(super) fn check(backend: &Section, sts: &Manifest, route: &str, add: &mut impl FnMut(String)) {
    let replicas = sts.value["spec"]["replicas"].as_u64().unwrap_or(1);
    let slot = format!("req.fhdr({route}),crc32,mod({replicas})");
    let sets: Vec<String> = backend
        .directives("http-request")
        .filter(|l| l.words.get(1).map(String::as_str) == Some(&format!("set-var({SLOT_VAR})")))
        .map(|l| l.words.get(2).cloned().unwrap_or_default())
        .collect();
    if sets != [slot.clone()] {
        add(format!(
            "the owner's slot is set from {sets:?}; want `http-request set-var({SLOT_VAR}) \
             {slot}` (StatefulSet {} has {replicas} replicas)",
            sts.name()
        ));
    }
    let rules: Vec<(String, String)> = backend
        .directives("use-server")
        .map(|l| {
            let server = l.words.get(1).cloned().unwrap_or_default();
            let condition = l.words.get(2..).map(|w| w.join(" ")).unwrap_or_default();
            (server, condition)
        })
        .collect();
    let expected: Vec<(String, String)> = (0..replicas)
        .map(|i| {
            (
                format!("{}-{i}", sts.name()),
                format!("if {{ var({SLOT_VAR}) -m int {i} }}"),
            )
        })
        .collect();
    if rules != expected {
        add(format!(
            "use-server rules {rules:?}; want one per pod of StatefulSet {}, in order: {expected:?}",
            sts.name()
        ));
    }
    match replica_setting(sts) {
        Err(problem) => add(format!("StatefulSet {}: {problem}", sts.name())),
        Ok(count) if count != replicas => add(format!(
            "StatefulSet {}: {REPLICA_ENV} says {count} replicas, but it has {replicas}",
            sts.name()
        )),
        Ok(_) => {}
    }
}

/// The replica count agent-service's container is told, from `AGENT_SERVICE_REPLICA` =
/// `$(POD_NAME)/N` with POD_NAME the pod's own name (its ordinal).
fn replica_setting(sts: &Manifest) -> Result<u64, String> {
    let env: Vec<&Value> = containers(sts).flat_map(|c| array(c, "/env")).collect();
    let value = env
        .iter()
        .find(|e| e["name"] == REPLICA_ENV)
        .map(|e| str_at(e, "/value"))
        .ok_or_else(|| {
            format!(
                "no {REPLICA_ENV} in its containers: each replica must know its ordinal and the \
                 replica count to refuse the sessions it does not own"
            )
        })?;
    let Some((name, count)) = value.split_once('/') else {
        return Err(format!("{REPLICA_ENV}={value:?} is not <ordinal>/<count>"));
    };
    let variable = name
        .strip_prefix("$(")
        .and_then(|n| n.strip_suffix(')'))
        .unwrap_or_default();
    let from_pod_name = env.iter().any(|e| {
        e["name"] == variable && str_at(e, "/valueFrom/fieldRef/fieldPath") == "metadata.name"
    });
    if !from_pod_name {
        return Err(format!(
            "{REPLICA_ENV}={value:?}: the ordinal must be $(VAR) with VAR from the pod's name \
             (valueFrom.fieldRef.fieldPath metadata.name)"
        ));
    }
    count
        .parse()
        .map_err(|_| format!("{REPLICA_ENV}={value:?}: the count is not a number"))
}
