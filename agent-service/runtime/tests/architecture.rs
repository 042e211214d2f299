//! The crate's module graph, read from its source: which module names which.
//!
//! Every `crate::`, `super::` and `self::` path in `src/**/*.rs` (in `use` items, types and
//! expressions) is an edge from the module it appears in to the module it names. The rules:
//!
//! - the top-level modules form no cycle;
//! - the module that defines `Runtime` takes part in no cycle, even counting the submodules
//!   of `run` (the agent loop) as modules of their own;
//! - no module but the crate root names the module that defines `Runtime`, and every
//!   `impl Runtime` block sits in it: `Runtime` is the public face, the loop never reaches
//!   back into it;
//! - the submodules of `run` form no cycle but the ones listed, each with why, in
//!   [`JUSTIFIED_RUN_CYCLES`] (a name `run` takes from a submodule counts as that submodule).

#![allow(
    clippy::expect_used,
    reason = "test code: a failed expectation is a test failure"
)]

use std::{
    collections::{BTreeMap, BTreeSet},
    fs,
    path::{Path, PathBuf},
};

use syn::visit::Visit;

/// Top-level modules whose submodules count as modules of their own.
const SPLIT: &[&str] = &["run"];

/// One source file: its module path and the module paths of its inline modules.
struct Source {
    module: Vec<String>,
    file: syn::File,
    path: PathBuf,
}

fn sources() -> Vec<Source> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    collect(&root, &mut files);
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let relative = path.strip_prefix(&root).expect("below src");
            let mut module: Vec<String> = relative
                .with_extension("")
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if matches!(module.last().map(String::as_str), Some("mod" | "lib")) {
                module.pop();
            }
            let text = fs::read_to_string(&path).expect("readable source");
            let file = syn::parse_file(&text)
                .unwrap_or_else(|e| panic!("{} does not parse: {e}", path.display()));
            Source { module, file, path }
        })
        .collect()
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("readable directory") {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            collect(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every module path of the crate (files and inline modules).
fn module_set(sources: &[Source]) -> BTreeSet<Vec<String>> {
    struct Mods<'a> {
        stack: Vec<String>,
        out: &'a mut BTreeSet<Vec<String>>,
    }
    impl<'ast> Visit<'ast> for Mods<'_> {
        fn visit_item_mod(&mut self, item: &'ast syn::ItemMod) {
            self.stack.push(item.ident.to_string());
            self.out.insert(self.stack.clone());
            syn::visit::visit_item_mod(self, item);
            self.stack.pop();
        }
    }
    let mut out = BTreeSet::new();
    for source in sources {
        out.insert(source.module.clone());
        Mods {
            stack: source.module.clone(),
            out: &mut out,
        }
        .visit_file(&source.file);
    }
    out
}

/// The paths a file names, each with the module it is named from.
fn named_paths(source: &Source) -> Vec<(Vec<String>, Vec<String>)> {
    struct Paths {
        stack: Vec<String>,
        out: Vec<(Vec<String>, Vec<String>)>,
    }
    fn flatten(tree: &syn::UseTree, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                flatten(&p.tree, prefix, out);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                let mut path = prefix.clone();
                if n.ident != "self" {
                    path.push(n.ident.to_string());
                }
                out.push(path);
            }
            syn::UseTree::Rename(r) => {
                let mut path = prefix.clone();
                path.push(r.ident.to_string());
                out.push(path);
            }
            syn::UseTree::Glob(_) => out.push(prefix.clone()),
            syn::UseTree::Group(g) => {
                for item in &g.items {
                    flatten(item, prefix, out);
                }
            }
        }
    }
    impl<'ast> Visit<'ast> for Paths {
        fn visit_item_mod(&mut self, item: &'ast syn::ItemMod) {
            self.stack.push(item.ident.to_string());
            syn::visit::visit_item_mod(self, item);
            self.stack.pop();
        }
        fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
            let mut paths = Vec::new();
            flatten(&item.tree, &mut Vec::new(), &mut paths);
            for path in paths {
                self.out.push((self.stack.clone(), path));
            }
        }
        fn visit_path(&mut self, path: &'ast syn::Path) {
            let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
            if matches!(
                segments.first().map(String::as_str),
                Some("crate" | "super" | "self")
            ) {
                self.out.push((self.stack.clone(), segments));
            }
            syn::visit::visit_path(self, path);
        }
    }
    let mut paths = Paths {
        stack: source.module.clone(),
        out: Vec::new(),
    };
    paths.visit_file(&source.file);
    paths.out
}

/// The module a path names, as the longest known module prefix of its absolute form, or
/// `None` for paths that leave the crate.
fn resolve(
    from: &[String],
    path: &[String],
    modules: &BTreeSet<Vec<String>>,
    root_exports: &BTreeMap<String, Vec<String>>,
    split_exports: &BTreeMap<(String, String), Vec<String>>,
) -> Option<Vec<String>> {
    let mut absolute: Vec<String> = match path.first().map(String::as_str) {
        Some("crate") => Vec::new(),
        Some("super") | Some("self") => from.to_vec(),
        Some(first) => {
            // A relative `use` of a child module (`use drive::spawn_driver;`).
            let mut child = from.to_vec();
            child.push(first.to_owned());
            if !modules.contains(&child) {
                return None;
            }
            from.to_vec()
        }
        None => return None,
    };
    let mut rest = path.iter().peekable();
    if matches!(
        rest.peek().map(|s| s.as_str()),
        Some("crate") | Some("self")
    ) {
        rest.next();
    }
    while rest.peek().map(|s| s.as_str()) == Some("super") {
        rest.next();
        absolute.pop();
    }
    let rest: Vec<String> = rest.cloned().collect();
    // A name the crate root re-exports stands for the module it comes from.
    if absolute.is_empty()
        && let Some(first) = rest.first()
        && !modules.contains(&vec![first.clone()])
        && let Some(target) = root_exports.get(first)
    {
        return Some(target.clone());
    }
    // A name a split module takes from one of its submodules (`use beats::start_heartbeats;`
    // in `run`) stands for that submodule, so `super::start_heartbeats` is an edge to it.
    if let ([top], Some(first)) = (absolute.as_slice(), rest.first())
        && let Some(target) = split_exports.get(&(top.clone(), first.clone()))
    {
        return Some(target.clone());
    }
    absolute.extend(rest);
    while !absolute.is_empty() && !modules.contains(&absolute) {
        absolute.pop();
    }
    Some(absolute)
}

/// The graph node a module belongs to: its top-level module, or for the split modules the
/// submodule below them.
fn node(module: &[String], split: bool) -> Option<String> {
    let top = module.first()?;
    if split
        && SPLIT.contains(&top.as_str())
        && let Some(sub) = module.get(1)
    {
        return Some(format!("{top}::{sub}"));
    }
    Some(top.clone())
}

struct Graph {
    edges: BTreeMap<String, BTreeSet<String>>,
}

impl Graph {
    /// Strongly connected components with more than one node, each sorted.
    fn cycles(&self) -> Vec<Vec<String>> {
        let nodes: BTreeSet<&String> = self
            .edges
            .iter()
            .flat_map(|(from, to)| std::iter::once(from).chain(to))
            .collect();
        let reach = |start: &String| -> BTreeSet<String> {
            let mut seen = BTreeSet::new();
            let mut todo = vec![start.clone()];
            while let Some(n) = todo.pop() {
                for next in self.edges.get(&n).into_iter().flatten() {
                    if seen.insert(next.clone()) {
                        todo.push(next.clone());
                    }
                }
            }
            seen
        };
        let reachable: BTreeMap<&String, BTreeSet<String>> =
            nodes.iter().map(|n| (*n, reach(n))).collect();
        let mut done = BTreeSet::new();
        let mut out = Vec::new();
        for n in &nodes {
            if done.contains(*n) {
                continue;
            }
            let component: Vec<String> = nodes
                .iter()
                .filter(|m| *m == n || (reachable[*n].contains(**m) && reachable[**m].contains(*n)))
                .map(|m| (*m).clone())
                .collect();
            done.extend(component.iter().cloned());
            if component.len() > 1 {
                out.push(component);
            }
        }
        out
    }
}

struct Crate {
    sources: Vec<Source>,
    /// (from module, to module) for every path that names another module of the crate.
    references: Vec<(Vec<String>, Vec<String>)>,
}

fn read_crate() -> Crate {
    let sources = sources();
    let modules = module_set(&sources);
    // `pub use module::Name` in the crate root: Name -> module.
    let mut root_exports = BTreeMap::new();
    for source in sources.iter().filter(|s| s.module.is_empty()) {
        for (from, path) in named_paths(source) {
            if !from.is_empty() || path.len() < 2 {
                continue;
            }
            let first = path[0].as_str();
            let start = if first == "crate" { 1 } else { 0 };
            if modules.contains(&vec![path[start].clone()])
                && let Some(last) = path.last()
            {
                root_exports.insert(last.clone(), vec![path[start].clone()]);
            }
        }
    }
    // `use child::Name` in a split module: (module, Name) -> module::child.
    let mut split_exports = BTreeMap::new();
    for source in sources
        .iter()
        .filter(|s| s.module.len() == 1 && SPLIT.contains(&s.module[0].as_str()))
    {
        for (from, path) in named_paths(source) {
            let child = [from.clone(), vec![path[0].clone()]].concat();
            if from == source.module
                && path.len() >= 2
                && modules.contains(&child)
                && let Some(last) = path.last()
            {
                split_exports.insert((from[0].clone(), last.clone()), child);
            }
        }
    }
    let mut references = Vec::new();
    for source in &sources {
        for (from, path) in named_paths(source) {
            if let Some(to) = resolve(&from, &path, &modules, &root_exports, &split_exports) {
                references.push((from, to));
            }
        }
    }
    Crate {
        sources,
        references,
    }
}

impl Crate {
    fn graph(&self, split: bool) -> Graph {
        let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (from, to) in &self.references {
            let (Some(a), Some(b)) = (node(from, split), node(to, split)) else {
                continue;
            };
            if a != b {
                edges.entry(a).or_default().insert(b);
            }
        }
        Graph { edges }
    }

    /// The module path of the file that defines `struct Runtime`.
    fn runtime_module(&self) -> Vec<String> {
        let defining: Vec<&Source> = self
            .sources
            .iter()
            .filter(|s| {
                s.file
                    .items
                    .iter()
                    .any(|item| matches!(item, syn::Item::Struct(s) if s.ident == "Runtime"))
            })
            .collect();
        assert_eq!(defining.len(), 1, "exactly one file defines struct Runtime");
        defining[0].module.clone()
    }
}

impl Graph {
    /// Each cycle with the edges inside it.
    fn describe(&self, cycles: &[Vec<String>]) -> String {
        cycles
            .iter()
            .map(|c| {
                let edges: Vec<String> = c
                    .iter()
                    .flat_map(|from| {
                        self.edges
                            .get(from)
                            .into_iter()
                            .flatten()
                            .filter(|to| c.contains(to))
                            .map(move |to| format!("{from} -> {to}"))
                    })
                    .collect();
                format!(
                    "{} modules: {}\n  {}",
                    c.len(),
                    c.join(", "),
                    edges.join("\n  ")
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

#[test]
fn top_level_modules_form_no_cycle() {
    let graph = read_crate().graph(false);
    let cycles = graph.cycles();
    assert!(
        cycles.is_empty(),
        "import cycles between top-level modules:\n{}",
        graph.describe(&cycles)
    );
}

#[test]
fn the_runtime_module_is_in_no_cycle_with_the_loop() {
    let krate = read_crate();
    let runtime = node(&krate.runtime_module(), true).expect("Runtime is not in the crate root");
    let graph = krate.graph(true);
    let cycles: Vec<Vec<String>> = graph
        .cycles()
        .into_iter()
        .filter(|c| c.contains(&runtime))
        .collect();
    assert!(
        cycles.is_empty(),
        "{runtime} (where Runtime lives) is in an import cycle:\n{}",
        graph.describe(&cycles)
    );
}

#[test]
fn only_the_crate_root_names_the_runtime_module() {
    let krate = read_crate();
    let runtime = krate.runtime_module();
    let naming: BTreeSet<String> = krate
        .references
        .iter()
        .filter(|(from, to)| {
            !from.is_empty() && to.starts_with(&runtime) && !from.starts_with(&runtime)
        })
        .map(|(from, _)| from.join("::"))
        .collect();
    assert!(
        naming.is_empty(),
        "modules that reach back into {}: {naming:?}",
        runtime.join("::")
    );
}

#[test]
fn every_impl_runtime_block_is_in_the_runtime_module() {
    let krate = read_crate();
    let runtime = krate.runtime_module();
    struct Impls<'a> {
        found: &'a mut usize,
    }
    impl<'ast> Visit<'ast> for Impls<'_> {
        fn visit_item_impl(&mut self, item: &'ast syn::ItemImpl) {
            if item.trait_.is_none()
                && let syn::Type::Path(p) = item.self_ty.as_ref()
                && p.path.segments.last().is_some_and(|s| s.ident == "Runtime")
            {
                *self.found += 1;
            }
            syn::visit::visit_item_impl(self, item);
        }
    }
    let mut elsewhere = Vec::new();
    let mut at_home = 0;
    for source in &krate.sources {
        let mut found = 0;
        Impls { found: &mut found }.visit_file(&source.file);
        if source.module == runtime {
            at_home += found;
        } else if found > 0 {
            elsewhere.push(source.path.display().to_string());
        }
    }
    assert!(at_home > 0, "the Runtime module has its own impl block");
    assert!(
        elsewhere.is_empty(),
        "impl Runtime blocks outside {}: {elsewhere:?}",
        runtime.join("::")
    );
}

/// Import cycles among the submodules of `run` that are allowed, each with why. Every other
/// cycle among them fails [`the_loop_modules_form_no_cycle_but_the_justified_ones`]; an
/// entry that no longer matches a cycle fails it too, so the list only shrinks.
const JUSTIFIED_RUN_CYCLES: &[(&[&str], &str)] = &[(
    &[
        "commands",
        "controls",
        "crons",
        "drive",
        "subagents",
        "submit",
        "system",
    ],
    // Runs start runs, and that is the feature: `submit` starts a session's driver (`drive`),
    // which builds each run's tool context (`controls`); that context holds the subagent
    // (`subagents`), cron (`crons`) and background-command wake-up (`system`) controls, and
    // each of those hands a message to a session through `submit` or starts its driver.
    // `/status` (`commands`, answered by `submit`) builds the same tool context. The loop
    // itself (`run_context`, `turns`, `codex`, `compactor`, `prepare`, `beats`) only reads a
    // run's context and stays outside the cycle.
    "a run's tools start runs",
)];

#[test]
fn the_loop_modules_form_no_cycle_but_the_justified_ones() {
    let krate = read_crate();
    let graph = krate.graph(true);
    // The submodules of `run` alone: `run` itself (mod.rs) declares them and holds the types
    // they share (the run's events and emitter), so every one of them names it.
    let inside = Graph {
        edges: graph
            .edges
            .iter()
            .filter(|(from, _)| from.starts_with("run::"))
            .map(|(from, to)| {
                let to = to
                    .iter()
                    .filter(|t| t.starts_with("run::"))
                    .cloned()
                    .collect();
                (from.clone(), to)
            })
            .collect(),
    };
    let cycles = inside.cycles();
    let justified: Vec<Vec<String>> = JUSTIFIED_RUN_CYCLES
        .iter()
        .map(|(modules, _)| {
            let mut c: Vec<String> = modules.iter().map(|m| format!("run::{m}")).collect();
            c.sort();
            c
        })
        .collect();
    let unjustified: Vec<Vec<String>> = cycles
        .iter()
        .filter(|c| !justified.contains(c))
        .cloned()
        .collect();
    assert!(
        unjustified.is_empty(),
        "import cycles inside run/ (break them, or justify one in JUSTIFIED_RUN_CYCLES):\n{}",
        inside.describe(&unjustified)
    );
    let stale: Vec<&Vec<String>> = justified.iter().filter(|c| !cycles.contains(c)).collect();
    assert!(
        stale.is_empty(),
        "JUSTIFIED_RUN_CYCLES lists cycles that no longer exist: {stale:?}"
    );
}
