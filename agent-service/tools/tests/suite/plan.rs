//! update_plan: accepted plans are recorded; at most one step in progress.

use openclaw_tools::{StepStatus, UpdatePlanTool};
use serde_json::json;

use super::{Fixture, error_text, ok_text};

#[tokio::test]
async fn a_valid_plan_is_recorded() {
    let f = Fixture::new();
    let outcome = f
        .call(
            &UpdatePlanTool,
            json!({ "explanation": "starting", "plan": [
                { "step": "Read the code", "status": "completed" },
                { "step": "Fix the bug", "status": "in_progress" },
                { "step": "Run the tests", "status": "pending" }
            ] }),
        )
        .await;
    assert_eq!(
        ok_text(&outcome),
        "Plan updated: 3 steps (1 completed, 1 in progress, 1 pending)."
    );
    let plans = f.session.plans.lock().unwrap();
    assert_eq!(plans.len(), 1);
    assert_eq!(plans[0].plan[1].status, StepStatus::InProgress);
    assert_eq!(
        outcome.details().unwrap()["plan"][1]["status"],
        "in_progress"
    );
}

#[tokio::test]
async fn invariants_are_enforced() {
    let f = Fixture::new();
    let cases = [
        (
            json!({ "plan": [
                { "step": "a", "status": "in_progress" },
                { "step": "b", "status": "in_progress" },
                { "step": "c", "status": "in_progress" }
            ] }),
            "invalid arguments for update_plan: plan: at most one step may be in_progress, found 3 (steps 1, 2, 3)",
        ),
        (
            json!({ "plan": [] }),
            "invalid arguments for update_plan: plan: must have at least one step",
        ),
        (
            json!({ "plan": [{ "step": " ", "status": "pending" }] }),
            "invalid arguments for update_plan: plan[0].step: must not be empty",
        ),
        (
            json!({ "plan": [{ "step": "a", "status": "done" }] }),
            "invalid arguments for update_plan: plan[0].status: unknown variant `done`, expected one of `pending`, `in_progress`, `completed`",
        ),
        (
            json!({}),
            "invalid arguments for update_plan: missing field `plan`",
        ),
    ];
    for (arguments, expected) in cases {
        let outcome = f.call(&UpdatePlanTool, arguments.clone()).await;
        assert_eq!(error_text(&outcome), expected, "{arguments}");
    }
    assert!(f.session.plans.lock().unwrap().is_empty());
}
