//! `update_plan` (with `tools.experimental.planTool`, P-7): the model keeps a short plan of
//! steps; at most one step is in progress at a time.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::arguments::parse;
use crate::context::ToolContext;
use crate::error::ToolError;
use crate::tool::{Tool, ToolOutcome};

/// A plan as accepted by `update_plan`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    /// Why the plan changed, if the model said.
    #[serde(default)]
    pub explanation: Option<String>,
    /// The steps, in order.
    pub plan: Vec<PlanStep>,
}

/// One step of a [`Plan`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanStep {
    /// What the step does.
    pub step: String,
    /// Where it stands.
    pub status: StepStatus,
}

/// The state of a [`PlanStep`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepStatus {
    /// Not started.
    Pending,
    /// Being worked on (at most one step).
    InProgress,
    /// Done.
    Completed,
}

/// `update_plan`.
#[derive(Debug, Clone, Copy, Default)]
pub struct UpdatePlanTool;

#[async_trait]
impl Tool for UpdatePlanTool {
    fn name(&self) -> &'static str {
        "update_plan"
    }

    fn description(&self) -> String {
        "Record or update the plan for the current task: its steps and their status. Use it \
         only for non-trivial work with several steps, not for a simple single step. Keep at \
         most one step in_progress; mark steps completed as you finish them and send the \
         whole plan each time."
            .to_owned()
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "explanation": { "type": "string", "description": "Optional note on why the plan changed." },
                "plan": {
                    "type": "array",
                    "description": "All steps, in order.",
                    "items": {
                        "type": "object",
                        "properties": {
                            "step": { "type": "string", "description": "What the step does." },
                            "status": { "type": "string", "enum": ["pending", "in_progress", "completed"] }
                        },
                        "required": ["step", "status"],
                        "additionalProperties": false
                    }
                }
            },
            "required": ["plan"],
            "additionalProperties": false
        })
    }

    async fn call(&self, ctx: &ToolContext, arguments: Value) -> ToolOutcome {
        let run = async {
            let plan: Plan = parse(self.name(), arguments)?;
            check(&plan)?;
            ctx.session.record_plan(&plan).await;
            let count = |status| plan.plan.iter().filter(|s| s.status == status).count();
            let text = format!(
                "Plan updated: {} steps ({} completed, {} in progress, {} pending).",
                plan.plan.len(),
                count(StepStatus::Completed),
                count(StepStatus::InProgress),
                count(StepStatus::Pending)
            );
            let details = serde_json::to_value(&plan)
                .map_err(|e| ToolError::Internal(format!("cannot encode the plan: {e}")))?;
            Ok::<_, ToolError>(ToolOutcome::ok_with(text, details))
        };
        run.await.into()
    }
}

/// The plan's invariants: at least one step, no blank step, at most one in progress.
fn check(plan: &Plan) -> Result<(), ToolError> {
    let invalid = |detail: String| ToolError::InvalidArguments {
        tool: "update_plan",
        detail,
    };
    if plan.plan.is_empty() {
        return Err(invalid("plan: must have at least one step".to_owned()));
    }
    if let Some(blank) = plan.plan.iter().position(|s| s.step.trim().is_empty()) {
        return Err(invalid(format!("plan[{blank}].step: must not be empty")));
    }
    let active: Vec<String> = plan
        .plan
        .iter()
        .enumerate()
        .filter(|(_, s)| s.status == StepStatus::InProgress)
        .map(|(i, _)| (i + 1).to_string())
        .collect();
    if active.len() > 1 {
        return Err(invalid(format!(
            "plan: at most one step may be in_progress, found {} (steps {})",
            active.len(),
            active.join(", ")
        )));
    }
    Ok(())
}
