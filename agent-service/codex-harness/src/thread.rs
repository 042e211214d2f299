//! Binding a session to its Codex thread: rejoin, resume (validated) or
//! start, with a new thread plus a projection of our transcript when the
//! stored one cannot be resumed (lesson L13).

use serde_json::{Map, Value, json};

use crate::{
    error::HarnessError,
    events::ThreadBinding,
    process::{AppServer, ThreadInfo},
    settings::{HarnessSettings, INLINE_PROVIDER_ID},
};

/// The thread a turn runs on.
#[derive(Debug, Clone)]
pub(crate) struct BoundThread {
    pub id: String,
    pub binding: ThreadBinding,
    pub info: ThreadInfo,
}

/// Finds or makes the thread. `stored` is the session's thread id;
/// `resume` and `start` are the mapped params.
pub(crate) async fn bind(
    server: &AppServer,
    settings: &HarnessSettings,
    stored: Option<&str>,
    resume: &Value,
    start: &Value,
) -> Result<BoundThread, HarnessError> {
    let Some(id) = stored.filter(|id| !id.trim().is_empty()) else {
        let (id, info) = start_thread(server, settings, start).await?;
        return Ok(BoundThread {
            id,
            binding: ThreadBinding::Started,
            info,
        });
    };
    if let Some(info) = server.loaded(id) {
        return Ok(BoundThread {
            id: id.to_owned(),
            binding: ThreadBinding::Loaded,
            info,
        });
    }
    match resume_thread(server, settings, resume, id).await {
        Ok(info) => Ok(BoundThread {
            id: id.to_owned(),
            binding: ThreadBinding::Resumed,
            info,
        }),
        // A dead process or a silent one is not the thread's fault.
        Err(error @ (HarnessError::ProcessExited { .. } | HarnessError::Timeout { .. })) => {
            Err(error)
        }
        Err(error) => {
            tracing::warn!(thread_id = %id, %error, "resuming the stored Codex thread failed; starting a new one");
            let (new_id, info) = start_thread(server, settings, start).await?;
            Ok(BoundThread {
                id: new_id,
                binding: ThreadBinding::Replaced {
                    previous: id.to_owned(),
                    reason: error.to_string(),
                },
                info,
            })
        }
    }
}

async fn start_thread(
    server: &AppServer,
    settings: &HarnessSettings,
    params: &Value,
) -> Result<(String, ThreadInfo), HarnessError> {
    let declares_tools = params
        .get("dynamicTools")
        .and_then(Value::as_array)
        .is_some_and(|tools| !tools.is_empty());
    if declares_tools && !settings.experimental_api {
        return Err(HarnessError::InvalidInput {
            field: "params.thread_start.dynamicTools",
            reason: "dynamic tools need experimentalApi, which these settings switch off"
                .to_owned(),
        });
    }
    let mut params = with_provider(params.clone(), settings)?;
    if settings.experimental_api
        && let Some(object) = params.as_object_mut()
    {
        // Raw response items: the tool calls Codex answers without an item
        // of its own reach our transcript only this way.
        object.insert("experimentalRawEvents".to_owned(), json!(true));
    }
    let result = server.conn.request("thread/start", params).await?;
    let id = result
        .get("thread")
        .and_then(|t| t.get("id"))
        .and_then(Value::as_str)
        .filter(|id| !id.is_empty())
        .ok_or_else(|| HarnessError::protocol("thread/start", "no thread.id in the result"))?
        .to_owned();
    let info = info_of(&result);
    server.mark_loaded(&id, info.clone());
    Ok((id, info))
}

async fn resume_thread(
    server: &AppServer,
    settings: &HarnessSettings,
    params: &Value,
    id: &str,
) -> Result<ThreadInfo, HarnessError> {
    let mut params = with_provider(params.clone(), settings)?;
    if let Some(object) = params.as_object_mut() {
        object.insert("threadId".to_owned(), json!(id));
        // Bounded: we keep our own transcript and need no turn history back.
        object.insert("excludeTurns".to_owned(), json!(true));
    }
    let result = server.conn.request("thread/resume", params.clone()).await?;
    validate_resume(&result, &params, id)?;
    let info = info_of(&result);
    server.mark_loaded(id, info.clone());
    Ok(info)
}

/// Checks that Codex resumed exactly the thread we asked for, under the
/// policy we asked for.
fn validate_resume(result: &Value, params: &Value, id: &str) -> Result<(), HarnessError> {
    let got = result
        .get("thread")
        .and_then(|t| t.get("id"))
        .and_then(Value::as_str)
        .unwrap_or_default();
    if got != id {
        return Err(HarnessError::protocol(
            "thread/resume",
            format!("asked for thread {id}, got {got:?}"),
        ));
    }
    if let (Some(wanted), Some(got)) = (
        params.get("approvalPolicy").and_then(Value::as_str),
        result.get("approvalPolicy").and_then(Value::as_str),
    ) && wanted != got
    {
        return Err(HarnessError::protocol(
            "thread/resume",
            format!("approvalPolicy is {got:?}, not {wanted:?}"),
        ));
    }
    if let (Some(wanted), Some(got)) = (
        params.get("sandbox").and_then(Value::as_str),
        result
            .get("sandbox")
            .and_then(|s| s.get("type"))
            .and_then(Value::as_str),
    ) && sandbox_tag(wanted) != Some(got)
    {
        return Err(HarnessError::protocol(
            "thread/resume",
            format!("sandbox is {got:?}, not {wanted:?}"),
        ));
    }
    Ok(())
}

/// The `SandboxPolicy.type` tag of a `sandbox` mode.
fn sandbox_tag(mode: &str) -> Option<&'static str> {
    match mode {
        "read-only" => Some("readOnly"),
        "workspace-write" => Some("workspaceWrite"),
        "danger-full-access" => Some("dangerFullAccess"),
        _ => None,
    }
}

fn info_of(result: &Value) -> ThreadInfo {
    let text = |key: &str| {
        result
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    ThreadInfo {
        model: text("model"),
        provider: text("modelProvider"),
    }
}

/// Registers the inline provider on the thread: `config."model_providers.openclaw"`
/// and `modelProvider` (unless the params name one).
fn with_provider(mut params: Value, settings: &HarnessSettings) -> Result<Value, HarnessError> {
    let Some(table) = &settings.model_provider else {
        return Ok(params);
    };
    let Some(object) = params.as_object_mut() else {
        return Err(HarnessError::InvalidInput {
            field: "params",
            reason: "thread params must be a JSON object".to_owned(),
        });
    };
    let config = object
        .entry("config")
        .or_insert_with(|| Value::Object(Map::new()));
    let Some(config) = config.as_object_mut() else {
        return Err(HarnessError::InvalidInput {
            field: "params.config",
            reason: "must be a JSON object".to_owned(),
        });
    };
    config.insert(
        format!("model_providers.{INLINE_PROVIDER_ID}"),
        Value::Object(table.clone()),
    );
    object
        .entry("modelProvider")
        .or_insert_with(|| json!(INLINE_PROVIDER_ID));
    Ok(params)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_inline_provider_joins_the_thread_config() {
        let mut settings = HarnessSettings::new("codex");
        let table: Map<String, Value> =
            serde_json::from_value(json!({"base_url": "http://127.0.0.1:1/v1"})).expect("map");
        settings.model_provider = Some(table);
        let params = json!({"model": "m", "config": {"project_doc_max_bytes": 0}});
        let merged = with_provider(params, &settings).expect("merges");
        assert_eq!(
            merged,
            json!({
                "model": "m",
                "config": {
                    "project_doc_max_bytes": 0,
                    "model_providers.openclaw": {"base_url": "http://127.0.0.1:1/v1"},
                },
                "modelProvider": "openclaw",
            })
        );
        let plain = HarnessSettings::new("codex");
        assert_eq!(
            with_provider(json!({"a": 1}), &plain).expect("unchanged"),
            json!({"a": 1})
        );
    }

    #[test]
    fn a_resume_must_return_the_thread_and_policy_asked_for() {
        let params = json!({"threadId": "t1", "approvalPolicy": "never", "sandbox": "read-only"});
        let good = json!({"thread": {"id": "t1"}, "approvalPolicy": "never",
            "sandbox": {"type": "readOnly"}});
        assert!(validate_resume(&good, &params, "t1").is_ok());
        let other = json!({"thread": {"id": "t2"}});
        assert!(validate_resume(&other, &params, "t1").is_err());
        let looser = json!({"thread": {"id": "t1"}, "approvalPolicy": "never",
            "sandbox": {"type": "dangerFullAccess"}});
        let error = validate_resume(&looser, &params, "t1").expect_err("sandbox differs");
        assert!(error.to_string().contains("dangerFullAccess"), "{error}");
    }
}
