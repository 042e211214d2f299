//! `## Sandbox` (P-16). It states only what the input says the runtime
//! enforces: isolation is claimed only when an engine is named, and
//! elevated exec or full access only when the input says they exist.

use super::{StableCtx as Ctx, lines};
use crate::input::{ElevatedLevel, FullAccessBlock, WorkspaceAccess};

fn level_text(level: ElevatedLevel) -> Option<&'static str> {
    match level {
        ElevatedLevel::Unspecified => None,
        ElevatedLevel::Off => {
            Some("off (commands stay in the sandbox until elevation is switched on)")
        }
        ElevatedLevel::On => Some("on (host commands go through the usual exec approvals)"),
        ElevatedLevel::Ask => Some("ask (every host command asks for approval)"),
        ElevatedLevel::Full => Some("full (host commands run without approval prompts)"),
    }
}

fn block_text(reason: FullAccessBlock) -> Option<&'static str> {
    match reason {
        FullAccessBlock::Unspecified => None,
        FullAccessBlock::HostPolicy => Some("the host's exec policy forbids it"),
        FullAccessBlock::Channel => Some("this channel does not allow it"),
        FullAccessBlock::Sandbox => Some("the sandbox configuration does not allow it"),
        FullAccessBlock::Runtime => Some("the runtime does not support it"),
    }
}

/// The section, when the session is sandboxed.
pub fn sandbox(ctx: &Ctx) -> Option<String> {
    let s = &ctx.sandbox;
    if !s.enabled {
        return None;
    }
    let workdir = if s.container_workspace_dir.is_empty() {
        ctx.workspace.as_str()
    } else {
        s.container_workspace_dir.as_str()
    };
    let mut out = vec!["## Sandbox".to_owned()];
    if s.engine.is_empty() {
        out.push(format!(
            "This session works in its own directory, {workdir}. No isolation engine is reported for it, so do not assume that commands are contained."
        ));
    } else {
        let network = if s.network { "on" } else { "off" };
        // A read-write mount of the agent workspace elsewhere is writable too.
        let rw_mount = (s.workspace_access == WorkspaceAccess::ReadWrite
            && !s.agent_workspace_mount.is_empty()
            && s.agent_workspace_mount != workdir)
            .then_some(s.agent_workspace_mount.as_str());
        let writable = match rw_mount {
            Some(mount) => format!(
                "the working directory {workdir} and the agent workspace at {mount} are the only writable paths"
            ),
            None => format!("the working directory {workdir} is the only writable path"),
        };
        out.push(format!(
            "Commands run isolated by {}: {writable}, /tmp is private to the sandbox, and network access is {network}.",
            s.engine
        ));
    }
    let mount = |m: &str| {
        if m.is_empty() {
            String::new()
        } else {
            format!(" at {m}")
        }
    };
    out.push(match s.workspace_access {
        WorkspaceAccess::None => "The agent workspace is not mounted in the sandbox.".to_owned(),
        WorkspaceAccess::ReadOnly => format!(
            "The agent workspace is mounted read-only{}.",
            mount(&s.agent_workspace_mount)
        ),
        WorkspaceAccess::ReadWrite => format!(
            "The agent workspace is mounted read-write{}.",
            mount(&s.agent_workspace_mount)
        ),
    });
    match (s.browser_bridge_url.is_empty(), s.host_browser_allowed) {
        (false, true) => out.push(format!(
            "A sandboxed browser is reachable at {}; the host's browser may be used too.",
            s.browser_bridge_url
        )),
        (false, false) => out.push(format!(
            "A sandboxed browser is reachable at {}; the host's browser is off limits.",
            s.browser_bridge_url
        )),
        (true, true) => out.push("The host's browser may be used from this session.".to_owned()),
        (true, false) => {}
    }
    if s.elevated_available {
        let approvals = match level_text(s.elevated.default_level) {
            Some(level) => format!("its level starts at {level}"),
            None => "it still goes through approval".to_owned(),
        };
        out.push(format!(
            "Elevated exec (a command run on the host, outside the sandbox) is available for tasks the sandbox cannot do; {approvals}."
        ));
        if s.elevated.full_access_available {
            out.push("Full access (elevated exec without approval prompts) can be used when the user asks for it.".to_owned());
        } else if let Some(reason) = block_text(s.elevated.full_access_blocked) {
            out.push(format!("Full access is not available: {reason}."));
        }
    } else {
        out.push("Elevated exec on the host is not available in this session.".to_owned());
    }
    if ctx.acp_enabled {
        out.push(if ctx.tools.has("sessions_spawn") {
            format!(
                "External ACP coding agents cannot be started from this sandboxed session; hand such work to a subagent with {} instead.",
                ctx.tools.spelled("sessions_spawn")
            )
        } else {
            "External ACP coding agents cannot be started from this sandboxed session.".to_owned()
        });
    }
    Some(lines(&out))
}
