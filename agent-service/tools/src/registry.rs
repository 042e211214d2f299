//! The tools of one run, after policy.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures_util::FutureExt;
use openclaw_config::resolve::{ApplyPatchSettings, ToolPolicy};
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

/// The tools available to one run, in a fixed order (the order the model is shown them).
#[derive(Clone, Default)]
pub struct ToolRegistry {
    tools: Vec<Arc<dyn Tool>>,
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.names()).finish()
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
        let mut registry = Self::new();
        for name in allowed {
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
                _ => continue,
            };
            registry.tools.push(tool);
        }
        registry
    }

    /// Policy and construction in one step: [`allowed_tools`] over the core tools and
    /// `extra`, then the allowed ones, in display order.
    pub fn for_run(
        policy: &ToolPolicy,
        provider: &str,
        model: &str,
        plan_tool: bool,
        apply_patch: &ApplyPatchSettings,
        extra: Vec<Arc<dyn Tool>>,
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
        let mut registry = Self::builtin(&allowed, apply_patch);
        let builtin: Vec<Arc<dyn Tool>> = std::mem::take(&mut registry.tools);
        for name in &allowed {
            let tool = builtin
                .iter()
                .chain(&extra)
                .find(|t| t.name() == name.as_str());
            if let Some(tool) = tool {
                registry.tools.push(Arc::clone(tool));
            }
        }
        registry
    }

    /// Adds a tool, replacing one of the same name (keeping its place).
    pub fn insert(&mut self, tool: Arc<dyn Tool>) {
        match self.tools.iter_mut().find(|t| t.name() == tool.name()) {
            Some(slot) => *slot = tool,
            None => self.tools.push(tool),
        }
    }

    /// `(name, description, parameters)` of every tool, in order, for the model request.
    pub fn specs(&self) -> Vec<(&'static str, String, Value)> {
        self.tools
            .iter()
            .map(|t| (t.name(), t.description(), t.parameters()))
            .collect()
    }

    /// The tool called `name`.
    pub fn get(&self, name: &str) -> Option<Arc<dyn Tool>> {
        self.tools.iter().find(|t| t.name() == name).cloned()
    }

    /// The tools' names, in order.
    pub fn names(&self) -> Vec<&'static str> {
        self.tools.iter().map(|t| t.name()).collect()
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
