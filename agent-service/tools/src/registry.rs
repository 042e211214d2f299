//! The tools of one run, after policy.

use std::collections::BTreeMap;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex, PoisonError};

use futures_util::FutureExt;
use openclaw_config::resolve::{ApplyPatchSettings, ToolPolicy};
use openclaw_providers::{ToolSchema, ToolSpec};
use serde_json::Value;

use crate::apply_patch::ApplyPatchTool;
use crate::context::ToolContext;
use crate::exec::ExecTool;
use crate::fs_tools::{EditTool, ReadTool, WriteTool};
use crate::gateway::GatewayTool;
use crate::plan::UpdatePlanTool;
use crate::policy::allowed_tools;
use crate::process::ProcessTool;
use crate::session_status::SessionStatusTool;
use crate::tool::{Tool, ToolOutcome};

/// The tools available to one run, in a fixed order (the order the model is shown them), each
/// with its definition as the model sees it.
#[derive(Clone, Default)]
pub struct ToolRegistry {
    tools: Vec<Registered>,
}

/// A tool and its definition, encoded.
#[derive(Clone)]
struct Registered {
    tool: Arc<dyn Tool>,
    spec: ToolSpec,
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

/// A tool's definition as the model is shown it: its name, description and argument schema,
/// the schema encoded as JSON text.
pub fn spec_of(tool: &dyn Tool) -> ToolSpec {
    ToolSpec {
        name: tool.name().to_owned(),
        description: tool.description().into(),
        parameters: ToolSchema::from(&tool.parameters()),
    }
}

/// The definitions of the tools one config offers, each encoded once ([`spec_of`]) the first
/// time a registry built under that config holds the tool, and shared by every run after.
///
/// Keyed by name: under one config a tool's name stands for one tool, whose description and
/// schema are fixed (see [`Tool`]), so a run gets the text the first run encoded. Keep one per
/// config load: a new config may configure a tool differently.
#[derive(Debug, Default)]
pub struct SpecCache {
    by_name: Mutex<BTreeMap<&'static str, ToolSpec>>,
}

impl SpecCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// `tool`'s definition: the one already encoded for its name, else encoded now.
    pub fn spec(&self, tool: &dyn Tool) -> ToolSpec {
        let mut by_name = self.by_name.lock().unwrap_or_else(PoisonError::into_inner);
        by_name
            .entry(tool.name())
            .or_insert_with(|| spec_of(tool))
            .clone()
    }
}

impl ToolRegistry {
    /// No tools.
    pub fn new() -> Self {
        Self::default()
    }

    /// The core tools whose names are in `allowed` (as returned by [`allowed_tools`]);
    /// other names are ignored (the runtime adds those tools with [`ToolRegistry::insert`]).
    pub fn builtin(allowed: &[String], apply_patch: &ApplyPatchSettings) -> Self {
        let tools = builtin_tools(allowed, apply_patch)
            .into_iter()
            .map(|tool| Registered {
                spec: spec_of(tool.as_ref()),
                tool,
            })
            .collect();
        Self { tools }
    }

    /// Policy and construction in one step: [`allowed_tools`] over the core tools and
    /// `extra`, then the allowed ones, in display order, their definitions from `specs`.
    pub fn for_run(
        policy: &ToolPolicy,
        provider: &str,
        model: &str,
        plan_tool: bool,
        apply_patch: &ApplyPatchSettings,
        extra: Vec<Arc<dyn Tool>>,
        specs: &SpecCache,
    ) -> Self {
        let extra_names: Vec<&str> = extra.iter().map(|t| t.name()).collect();
        let allowed = allowed_tools(
            policy,
            provider,
            model,
            plan_tool,
            apply_patch,
            &extra_names,
        );
        let builtin = builtin_tools(&allowed, apply_patch);
        let mut registry = Self::new();
        for name in &allowed {
            let tool = builtin
                .iter()
                .chain(&extra)
                .find(|t| t.name() == name.as_str());
            if let Some(tool) = tool {
                registry.tools.push(Registered {
                    spec: specs.spec(tool.as_ref()),
                    tool: Arc::clone(tool),
                });
            }
        }
        registry
    }

    /// Adds a tool, replacing one of the same name (keeping its place).
    pub fn insert(&mut self, tool: Arc<dyn Tool>) {
        let entry = Registered {
            spec: spec_of(tool.as_ref()),
            tool,
        };
        match self
            .tools
            .iter_mut()
            .find(|t| t.tool.name() == entry.tool.name())
        {
            Some(slot) => *slot = entry,
            None => self.tools.push(entry),
        }
    }

    /// The definition of every tool, in order, for the model request and the prompt's tool
    /// list. Cloning them is cheap: their text is shared.
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.tools.iter().map(|t| t.spec.clone()).collect()
    }

    /// The tool called `name`.
    pub fn get(&self, name: &str) -> Option<Arc<dyn Tool>> {
        self.tools
            .iter()
            .find(|t| t.tool.name() == name)
            .map(|t| Arc::clone(&t.tool))
    }

    /// The tools' names, in order.
    pub fn names(&self) -> Vec<&'static str> {
        self.tools.iter().map(|t| t.tool.name()).collect()
    }

    /// How many tools there are.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// Calls a tool by name. An unknown name is an error result listing the tools there are;
    /// a tool that panics (a bug) becomes an error result instead of taking the session down.
    pub async fn call(&self, ctx: &ToolContext, name: &str, arguments: Value) -> ToolOutcome {
        let Some(tool) = self.get(name) else {
            return ToolOutcome::error(format!(
                "there is no tool called {name:?}; the available tools are: {}",
                self.names().join(", ")
            ));
        };
        let mut outcome = match AssertUnwindSafe(tool.call(ctx, arguments))
            .catch_unwind()
            .await
        {
            Ok(outcome) => outcome,
            Err(_) => ToolOutcome::error(format!(
                "the {name} tool failed unexpectedly (an internal error); the call had no result"
            )),
        };
        // A secret a command printed (or a file held) never reaches the model or the
        // transcript.
        ctx.redactor.redact_in_place(outcome.text_mut());
        outcome
    }
}

/// The core tools named in `allowed`, in that order; other names are skipped.
fn builtin_tools(allowed: &[String], apply_patch: &ApplyPatchSettings) -> Vec<Arc<dyn Tool>> {
    allowed
        .iter()
        .filter_map(|name| {
            let tool: Arc<dyn Tool> = match name.as_str() {
                "read" => Arc::new(ReadTool),
                "write" => Arc::new(WriteTool),
                "edit" => Arc::new(EditTool),
                "apply_patch" => Arc::new(ApplyPatchTool::new(apply_patch.clone())),
                "exec" => Arc::new(ExecTool),
                "process" => Arc::new(ProcessTool),
                "gateway" => Arc::new(GatewayTool),
                "session_status" => Arc::new(SessionStatusTool),
                "update_plan" => Arc::new(UpdatePlanTool),
                _ => return None,
            };
            Some(tool)
        })
        .collect()
}
