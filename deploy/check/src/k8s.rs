//! Kubernetes manifests: what `kustomization.yaml` lists, and the cross
//! references the API server would only notice once pods fail to start or
//! Services route nowhere.

use std::{
    collections::{BTreeMap, BTreeSet},
    path::{Path, PathBuf},
};

use serde_json::Value;

use crate::Error;

/// The label the StatefulSet controller puts on each of its pods.
const POD_NAME_LABEL: &str = "statefulset.kubernetes.io/pod-name";

/// One resource and the file it came from.
#[derive(Debug, Clone)]
pub struct Manifest {
    /// The file.
    pub file: PathBuf,
    /// The resource.
    pub value: Value,
}

impl Manifest {
    /// `kind`.
    pub fn kind(&self) -> &str {
        str_at(&self.value, "/kind")
    }

    /// `metadata.name`.
    pub fn name(&self) -> &str {
        str_at(&self.value, "/metadata/name")
    }

    /// `Kind/name`, for messages.
    pub fn id(&self) -> String {
        format!("{}/{}", self.kind(), self.name())
    }
}

/// What a kustomization produces, before kustomize's transformations.
#[derive(Debug, Clone, Default)]
pub struct Bundle {
    /// The namespace the kustomization sets.
    pub namespace: Option<String>,
    /// Resources, in the order listed.
    pub resources: Vec<Manifest>,
    /// ConfigMaps from `configMapGenerator`: name → keys.
    pub generated: BTreeMap<String, BTreeSet<String>>,
    /// Image names the kustomization retags.
    pub images: Vec<String>,
    /// The kustomization's `images:` entries (`name`, `newName`, `newTag`,
    /// `digest`).
    pub image_entries: Vec<Value>,
    /// Problems found while loading (missing files).
    pub load_problems: Vec<String>,
}

impl Bundle {
    /// Loads `dir/kustomization.yaml` and every resource it lists.
    pub fn load(dir: &Path) -> Result<Self, Error> {
        let path = dir.join("kustomization.yaml");
        let kustomization = crate::yaml::all(&path, &crate::read(&path)?)?
            .into_iter()
            .next()
            .unwrap_or(Value::Null);
        let mut bundle = Self {
            namespace: kustomization["namespace"].as_str().map(str::to_owned),
            ..Self::default()
        };
        for resource in array(&kustomization, "/resources") {
            let Some(file) = resource.as_str() else {
                bundle
                    .load_problems
                    .push(format!("resources: {resource} is not a path"));
                continue;
            };
            let file = dir.join(file);
            if !file.is_file() {
                bundle
                    .load_problems
                    .push(format!("resources: {} does not exist", file.display()));
                continue;
            }
            for value in crate::yaml::all(&file, &crate::read(&file)?)? {
                bundle.resources.push(Manifest {
                    file: file.clone(),
                    value,
                });
            }
        }
        for generator in array(&kustomization, "/configMapGenerator") {
            let name = str_at(generator, "/name").to_owned();
            let mut keys = BTreeSet::new();
            for entry in array(generator, "/files") {
                let entry = entry.as_str().unwrap_or_default();
                let (key, source) = match entry.split_once('=') {
                    Some((key, source)) => (key.to_owned(), source),
                    None => (file_name(entry), entry),
                };
                if !dir.join(source).is_file() {
                    bundle.load_problems.push(format!(
                        "configMapGenerator {name}: file {source} does not exist"
                    ));
                }
                keys.insert(key);
            }
            for entry in array(generator, "/literals") {
                if let Some((key, _)) = entry.as_str().and_then(|l| l.split_once('=')) {
                    keys.insert(key.to_owned());
                }
            }
            bundle.generated.insert(name, keys);
        }
        bundle.images = array(&kustomization, "/images")
            .iter()
            .map(|i| str_at(i, "/name").to_owned())
            .collect();
        bundle.image_entries = array(&kustomization, "/images").to_vec();
        Ok(bundle)
    }

    /// Resources of `kind`.
    pub fn of_kind<'a, 'k>(&'a self, kind: &'k str) -> impl Iterator<Item = &'a Manifest> + 'k
    where
        'a: 'k,
    {
        self.resources.iter().filter(move |m| m.kind() == kind)
    }

    /// The resource `kind/name`.
    pub fn get(&self, kind: &str, name: &str) -> Option<&Manifest> {
        self.resources
            .iter()
            .find(|m| m.kind() == kind && m.name() == name)
    }

    /// Keys of ConfigMap `name` (a resource or a generated one).
    pub fn config_map_keys(&self, name: &str) -> Option<BTreeSet<String>> {
        if let Some(keys) = self.generated.get(name) {
            return Some(keys.clone());
        }
        let map = self.get("ConfigMap", name)?;
        let keys = ["/data", "/binaryData"]
            .iter()
            .filter_map(|p| map.value.pointer(p).and_then(Value::as_object))
            .flat_map(|o| o.keys().cloned())
            .collect();
        Some(keys)
    }

    /// Deployments, StatefulSets and DaemonSets.
    pub fn workloads(&self) -> impl Iterator<Item = &Manifest> {
        self.resources
            .iter()
            .filter(|m| matches!(m.kind(), "Deployment" | "StatefulSet" | "DaemonSet"))
    }

    /// Workloads whose pods a label selector picks.
    pub fn selected(&self, selector: &Value) -> Vec<&Manifest> {
        self.workloads().filter(|w| selects(selector, w)).collect()
    }

    /// Every cross-reference problem, at once.
    pub fn problems(&self) -> Vec<String> {
        let mut problems = self.load_problems.clone();
        for workload in self.workloads() {
            self.check_workload(workload, &mut |p| {
                problems.push(format!("{}: {p}", workload.id()))
            });
        }
        for service in self.of_kind("Service") {
            self.check_service(service, &mut |p| {
                problems.push(format!("{}: {p}", service.id()))
            });
        }
        for hpa in self.of_kind("HorizontalPodAutoscaler") {
            let mut add = |p: String| problems.push(format!("{}: {p}", hpa.id()));
            let kind = str_at(&hpa.value, "/spec/scaleTargetRef/kind");
            let name = str_at(&hpa.value, "/spec/scaleTargetRef/name");
            match self.get(kind, name) {
                None => add(format!("scaleTargetRef {kind}/{name} does not exist")),
                Some(target) => {
                    let uses_cpu = array(&hpa.value, "/spec/metrics")
                        .iter()
                        .any(|m| str_at(m, "/resource/name") == "cpu");
                    for container in containers(target) {
                        if uses_cpu && container.pointer("/resources/requests/cpu").is_none() {
                            add(format!(
                                "scales on CPU but container {} of {} requests no CPU",
                                str_at(container, "/name"),
                                target.id()
                            ));
                        }
                    }
                }
            }
        }
        for pdb in self.of_kind("PodDisruptionBudget") {
            if self
                .selected(&pdb.value["spec"]["selector"]["matchLabels"])
                .is_empty()
            {
                problems.push(format!("{}: selector matches no workload's pods", pdb.id()));
            }
        }
        let used_images: BTreeSet<&str> = self
            .workloads()
            .flat_map(containers)
            .map(|c| str_at(c, "/image").split(':').next().unwrap_or_default())
            .collect();
        for image in &self.images {
            if !used_images.contains(image.as_str()) {
                problems.push(format!("kustomization images: no container uses {image}"));
            }
        }
        problems
    }

    fn check_workload(&self, workload: &Manifest, add: &mut impl FnMut(String)) {
        let spec = &workload.value["spec"];
        let labels = &spec["template"]["metadata"]["labels"];
        let selector = &spec["selector"]["matchLabels"];
        if selector.as_object().is_none_or(|s| s.is_empty()) {
            add("spec.selector.matchLabels is empty".into());
        }
        if !subset(selector, labels) {
            add(format!(
                "selector {selector} does not match the pod labels {labels}"
            ));
        }
        let pod = &spec["template"]["spec"];
        let mut volumes: BTreeMap<String, &Value> = array(pod, "/volumes")
            .iter()
            .map(|v| (str_at(v, "/name").to_owned(), v))
            .collect();
        for claim in array(spec, "/volumeClaimTemplates") {
            volumes.insert(str_at(claim, "/metadata/name").to_owned(), claim);
        }
        let mut mounted = BTreeSet::new();
        for container in containers(workload) {
            let name = str_at(container, "/name");
            let mut add = |p: String| add(format!("container {name}: {p}"));
            let ports = container_ports(container);
            for probe in ["readinessProbe", "livenessProbe", "startupProbe"] {
                let Some(probe_value) = container.get(probe) else {
                    continue;
                };
                for handler in ["grpc", "httpGet", "tcpSocket"] {
                    if let Some(port) = probe_value.pointer(&format!("/{handler}/port"))
                        && !port_matches(port, &ports)
                    {
                        add(format!(
                            "{probe}.{handler}.port {port} is not a container port"
                        ));
                    }
                }
            }
            let mut config_mounts: Vec<(String, String)> = Vec::new();
            for mount in array(container, "/volumeMounts") {
                let volume = str_at(mount, "/name");
                mounted.insert(volume.to_owned());
                match volumes.get(volume) {
                    None => add(format!("volumeMount {volume} names no volume")),
                    Some(v) => {
                        if let Some(map) = v.pointer("/configMap/name").and_then(Value::as_str) {
                            config_mounts
                                .push((str_at(mount, "/mountPath").to_owned(), map.to_owned()));
                        }
                    }
                }
            }
            self.check_tokens(container, &volumes, &mut add);
            for from in array(container, "/envFrom") {
                self.check_ref(from, "configMapRef", "ConfigMap", &mut add);
                self.check_ref(from, "secretRef", "Secret", &mut add);
            }
            for env in array(container, "/env") {
                let key = str_at(env, "/name");
                if let Some(from) = env.get("valueFrom") {
                    self.check_ref(from, "configMapKeyRef", "ConfigMap", &mut add);
                    self.check_ref(from, "secretKeyRef", "Secret", &mut add);
                }
                let value = str_at(env, "/value");
                for (path, map) in &config_mounts {
                    if let Some(file) = value.strip_prefix(&format!("{path}/")) {
                        let exists = self.config_map_keys(map).is_some_and(|k| k.contains(file));
                        if !exists {
                            add(format!(
                                "env {key}={value}: ConfigMap {map} has no key {file}"
                            ));
                        }
                    }
                }
                if let Some((host, port)) = crate::compose::service_url(value) {
                    let service = self.get("Service", host);
                    let has_port = service.is_some_and(|s| {
                        array(&s.value, "/spec/ports")
                            .iter()
                            .any(|p| p["port"].as_u64() == Some(u64::from(port)))
                    });
                    if !has_port {
                        add(format!(
                            "env {key}={value}: no Service {host} with port {port}"
                        ));
                    }
                }
            }
        }
        for (name, volume) in &volumes {
            if !mounted.contains(name) {
                add(format!("volume {name} is never mounted"));
            }
            if let Some(map) = volume.pointer("/configMap/name").and_then(Value::as_str) {
                match self.config_map_keys(map) {
                    None if volume.pointer("/configMap/optional") != Some(&Value::Bool(true)) => {
                        add(format!("volume {name}: ConfigMap {map} does not exist"));
                    }
                    None => {}
                    Some(keys) => {
                        for item in array(volume, "/configMap/items") {
                            let key = str_at(item, "/key");
                            if !keys.contains(key) {
                                add(format!("volume {name}: ConfigMap {map} has no key {key}"));
                            }
                        }
                    }
                }
            }
        }
        if workload.kind() == "StatefulSet" {
            let governing = str_at(spec, "/serviceName");
            match self.get("Service", governing) {
                None => add(format!("serviceName {governing} names no Service")),
                Some(s) if s.value.pointer("/spec/clusterIP") != Some(&Value::from("None")) => {
                    add(format!("serviceName {governing} is not a headless Service"));
                }
                Some(s) if !selects(&s.value["spec"]["selector"], workload) => {
                    add(format!(
                        "serviceName {governing} does not select these pods"
                    ));
                }
                Some(_) => {}
            }
        }
    }

    /// A container listening on all interfaces (`<P>_LISTEN=0.0.0.0:…`,
    /// metrics aside) reads its accepted tokens from a mounted Secret
    /// (`<P>_TOKENS_FILE`), and one that calls a service of this bundle
    /// that requires tokens (`<X>_URL` while some container sets
    /// `<X>_TOKENS_FILE`) sends one from a mounted Secret (`<X>_TOKEN_FILE`).
    /// The Secrets themselves are created outside the bundle
    /// (deploy/README.md), so only the mounts are checked.
    fn check_tokens(
        &self,
        container: &Value,
        volumes: &BTreeMap<String, &Value>,
        add: &mut impl FnMut(String),
    ) {
        let env: BTreeMap<&str, &str> = array(container, "/env")
            .iter()
            .map(|e| (str_at(e, "/name"), str_at(e, "/value")))
            .collect();
        let secret_files = secret_files(container, volumes);
        let mut need = |variable: String, why: String| match env.get(variable.as_str()) {
            None => add(format!("{why} but {variable} is not set")),
            Some(path) if !secret_files.iter().any(|f| covers(f, path)) => add(format!(
                "{variable}={path} is not a file of a mounted Secret ({secret_files:?})"
            )),
            Some(_) => {}
        };
        for (key, value) in &env {
            if let Some(prefix) = key.strip_suffix("_LISTEN")
                && !key.ends_with("_METRICS_LISTEN")
                && value
                    .rsplit_once(':')
                    .is_some_and(|(host, _)| matches!(host, "0.0.0.0" | "[::]"))
            {
                need(
                    format!("{prefix}_TOKENS_FILE"),
                    format!("{key}={value} serves other hosts"),
                );
            }
            if let Some(prefix) = key.strip_suffix("_URL")
                && crate::compose::service_url(value).is_some()
                && self.requires_tokens(prefix)
            {
                need(
                    format!("{prefix}_TOKEN_FILE"),
                    format!("{key} calls a service that requires a token"),
                );
            }
        }
    }

    /// Whether some container accepts only callers with `<prefix>_TOKENS_FILE`.
    fn requires_tokens(&self, prefix: &str) -> bool {
        let variable = format!("{prefix}_TOKENS_FILE");
        self.workloads()
            .flat_map(containers)
            .flat_map(|c| array(c, "/env"))
            .any(|e| str_at(e, "/name") == variable)
    }

    /// `from.<field>.name` names an existing `kind` unless `optional`.
    fn check_ref(&self, from: &Value, field: &str, kind: &str, add: &mut impl FnMut(String)) {
        let Some(reference) = from.get(field) else {
            return;
        };
        let name = str_at(reference, "/name");
        let optional = reference["optional"].as_bool() == Some(true);
        let exists = match kind {
            "ConfigMap" => self.config_map_keys(name).is_some(),
            _ => self.get(kind, name).is_some(),
        };
        if !exists && !optional {
            add(format!("{field} {name}: no {kind} {name}"));
        }
    }

    fn check_service(&self, service: &Manifest, add: &mut impl FnMut(String)) {
        let selector = &service.value["spec"]["selector"];
        let targets = self.selected(selector);
        if targets.is_empty() {
            add(format!("selector {selector} matches no workload's pods"));
            return;
        }
        for port in array(&service.value, "/spec/ports") {
            let target = port.get("targetPort").unwrap_or(&port["port"]);
            for workload in &targets {
                let ports: Vec<&Value> = containers(workload).flat_map(container_ports).collect();
                if !port_matches(target, &ports) {
                    add(format!(
                        "port {} targets {target}, not a port of {}",
                        port["port"],
                        workload.id()
                    ));
                }
            }
        }
    }
}

/// Seconds a workload's first container waits in its preStop hook before
/// the kubelet sends the stop signal: `sleep: {seconds: N}` or
/// `exec: {command: ["sleep", "N"]}`; 0 without one.
pub fn pre_stop_secs(workload: &Manifest) -> u64 {
    let Some(hook) = containers(workload)
        .next()
        .and_then(|c| c.pointer("/lifecycle/preStop"))
    else {
        return 0;
    };
    if let Some(seconds) = hook.pointer("/sleep/seconds").and_then(Value::as_u64) {
        return seconds;
    }
    match array(hook, "/exec/command") {
        [sleep, seconds] if sleep.as_str().is_some_and(|s| s.ends_with("sleep")) => {
            seconds.as_str().and_then(|s| s.parse().ok()).unwrap_or(0)
        }
        _ => 0,
    }
}

/// Files a container sees from Secret volumes: `<mountPath>/<item path>`,
/// or `<mountPath>/*` when the volume lists no items (every key).
fn secret_files(container: &Value, volumes: &BTreeMap<String, &Value>) -> Vec<String> {
    let mut files = Vec::new();
    for mount in array(container, "/volumeMounts") {
        let Some(volume) = volumes.get(str_at(mount, "/name")) else {
            continue;
        };
        if volume.get("secret").is_none() {
            continue;
        }
        let at = str_at(mount, "/mountPath").trim_end_matches('/');
        let items = array(volume, "/secret/items");
        if items.is_empty() {
            files.push(format!("{at}/*"));
        }
        for item in items {
            files.push(format!("{at}/{}", str_at(item, "/path")));
        }
    }
    files
}

/// Whether a [`secret_files`] entry is `path`.
fn covers(file: &str, path: &str) -> bool {
    match file.strip_suffix("/*") {
        Some(dir) => path
            .strip_prefix(dir)
            .and_then(|rest| rest.strip_prefix('/'))
            .is_some_and(|name| !name.is_empty() && !name.contains('/')),
        None => file == path,
    }
}

/// The selector picks the workload's pods: its labels are a subset of the
/// pod template's, or it names one of a StatefulSet's pods.
fn selects(selector: &Value, workload: &Manifest) -> bool {
    let Some(selector) = selector.as_object().filter(|s| !s.is_empty()) else {
        return false;
    };
    let labels = &workload.value["spec"]["template"]["metadata"]["labels"];
    selector.iter().all(|(key, value)| {
        if key == POD_NAME_LABEL && workload.kind() == "StatefulSet" {
            let replicas = workload.value["spec"]["replicas"].as_u64().unwrap_or(1);
            return value
                .as_str()
                .and_then(|v| v.strip_prefix(&format!("{}-", workload.name())))
                .and_then(|ordinal| ordinal.parse::<u64>().ok())
                .is_some_and(|ordinal| ordinal < replicas);
        }
        labels.get(key) == Some(value)
    })
}

pub(crate) fn subset(selector: &Value, labels: &Value) -> bool {
    selector
        .as_object()
        .is_some_and(|s| s.iter().all(|(k, v)| labels.get(k) == Some(v)))
}

/// Containers and init containers of a workload's pod template.
pub fn containers(workload: &Manifest) -> impl Iterator<Item = &Value> {
    [
        "/spec/template/spec/containers",
        "/spec/template/spec/initContainers",
    ]
    .into_iter()
    .flat_map(|p| array(&workload.value, p))
}

pub(crate) fn container_ports(container: &Value) -> Vec<&Value> {
    array(container, "/ports").iter().collect()
}

/// A port reference (number or name) names one of `ports`.
pub(crate) fn port_matches(reference: &Value, ports: &[&Value]) -> bool {
    ports.iter().any(|p| match reference {
        Value::String(name) => p["name"].as_str() == Some(name),
        number => p["containerPort"] == *number,
    })
}

/// The array at `pointer`, or an empty one.
pub fn array<'a>(value: &'a Value, pointer: &str) -> &'a [Value] {
    value
        .pointer(pointer)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// The string at `pointer`, or "".
pub fn str_at<'a>(value: &'a Value, pointer: &str) -> &'a str {
    value
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn file_name(path: &str) -> String {
    Path::new(path)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}
