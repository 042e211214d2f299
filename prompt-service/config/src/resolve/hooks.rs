//! One agent's hooks (P-6, P-36): the top-level `hooks` lists, each replaced by the agent's own
//! list of the same name when it has one, turned into typed forms that name their config key.

use std::time::Duration;

use crate::load::Config;
use crate::raw::{BootstrapHookEntry, HookOnError, HookPlacement, PromptBuildHookEntry};

/// How long a hook command may run when `timeoutMs` is not set.
pub const DEFAULT_HOOK_TIMEOUT: Duration = Duration::from_secs(5);

/// The hooks one agent runs, in order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AgentHooks {
    /// The bootstrap-file hooks.
    pub bootstrap: Vec<Hook<BootstrapHook>>,
    /// The prompt-build hooks.
    pub before_prompt_build: Vec<Hook<PromptBuildHook>>,
}

/// One hook and the config key it came from (`hooks.bootstrap[1]`), which its errors name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hook<T> {
    /// The dotted config path of the entry.
    pub key: String,
    /// What the hook does.
    pub form: T,
}

/// What a bootstrap hook does to the injected files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BootstrapHook {
    /// The injected file `name` gets the content of the workspace file `with`.
    Replace {
        /// The injected file.
        name: String,
        /// The workspace-relative source.
        with: String,
    },
    /// The injected file `name` is left out.
    Drop {
        /// The injected file.
        name: String,
    },
    /// A new injected file `name` with the content of the workspace file `from`.
    Add {
        /// The name it is shown under.
        name: String,
        /// The workspace-relative source.
        from: String,
    },
    /// An external command decides the new set.
    Command(HookCommand),
}

/// What a prompt-build hook adds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PromptBuildHook {
    /// This text.
    Text {
        /// The text.
        text: String,
        /// Above or below the cache boundary.
        placement: HookPlacement,
    },
    /// The content of a workspace file.
    File {
        /// The workspace-relative source.
        from: String,
        /// Above or below the cache boundary.
        placement: HookPlacement,
    },
    /// What an external command prints.
    Command(HookCommand),
}

/// An external hook command: run as the service (never in a session's sandbox), argv as
/// given, no shell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookCommand {
    /// Program and arguments.
    pub argv: Vec<String>,
    /// How long it may take.
    pub timeout: Duration,
    /// What a failure does.
    pub on_error: HookOnError,
}

impl AgentHooks {
    /// Whether any of the hooks is an external command.
    pub fn has_commands(&self) -> bool {
        self.bootstrap
            .iter()
            .any(|h| matches!(h.form, BootstrapHook::Command(_)))
            || self
                .before_prompt_build
                .iter()
                .any(|h| matches!(h.form, PromptBuildHook::Command(_)))
    }
}

impl Config {
    /// The hooks of agent `agent_id`, in config order. The entries were validated at load, so
    /// an entry that is not one form (which load refuses) is skipped rather than guessed at.
    pub fn hooks(&self, agent_id: &str) -> AgentHooks {
        let global = self.raw.hooks.as_ref();
        let list = self.agent_list();
        let entry = list
            .iter()
            .enumerate()
            .find(|(_, a)| a.id.eq_ignore_ascii_case(agent_id));
        let own = entry.and_then(|(i, a)| a.hooks.as_ref().map(|h| (i, h)));
        let bootstrap = match own.and_then(|(i, h)| h.bootstrap.as_ref().map(|l| (i, l))) {
            Some((i, own)) => bootstrap_hooks(&format!("agents.list[{i}].hooks.bootstrap"), own),
            None => global
                .and_then(|h| h.bootstrap.as_ref())
                .map(|l| bootstrap_hooks("hooks.bootstrap", l))
                .unwrap_or_default(),
        };
        let prompt = match own.and_then(|(i, h)| h.before_prompt_build.as_ref().map(|l| (i, l))) {
            Some((i, own)) => {
                prompt_hooks(&format!("agents.list[{i}].hooks.beforePromptBuild"), own)
            }
            None => global
                .and_then(|h| h.before_prompt_build.as_ref())
                .map(|l| prompt_hooks("hooks.beforePromptBuild", l))
                .unwrap_or_default(),
        };
        AgentHooks {
            bootstrap,
            before_prompt_build: prompt,
        }
    }
}

fn command(argv: &[String], timeout_ms: Option<u64>, on_error: Option<HookOnError>) -> HookCommand {
    HookCommand {
        argv: argv.to_vec(),
        timeout: timeout_ms.map_or(DEFAULT_HOOK_TIMEOUT, Duration::from_millis),
        on_error: on_error.unwrap_or(HookOnError::Fail),
    }
}

fn bootstrap_hooks(base: &str, entries: &[BootstrapHookEntry]) -> Vec<Hook<BootstrapHook>> {
    keyed_hooks(base, entries, |e| {
        Some(match e {
            BootstrapHookEntry {
                replace: Some(name),
                with: Some(with),
                ..
            } => BootstrapHook::Replace {
                name: name.clone(),
                with: with.clone(),
            },
            BootstrapHookEntry {
                drop: Some(name), ..
            } => BootstrapHook::Drop { name: name.clone() },
            BootstrapHookEntry {
                add: Some(name),
                from: Some(from),
                ..
            } => BootstrapHook::Add {
                name: name.clone(),
                from: from.clone(),
            },
            BootstrapHookEntry {
                command: Some(argv),
                timeout_ms,
                on_error,
                ..
            } => BootstrapHook::Command(command(argv, *timeout_ms, *on_error)),
            _ => return None,
        })
    })
}

fn prompt_hooks(base: &str, entries: &[PromptBuildHookEntry]) -> Vec<Hook<PromptBuildHook>> {
    keyed_hooks(base, entries, |e| {
        let placement = e.placement.unwrap_or(HookPlacement::Dynamic);
        Some(match e {
            PromptBuildHookEntry {
                text: Some(text), ..
            } => PromptBuildHook::Text {
                text: text.clone(),
                placement,
            },
            PromptBuildHookEntry {
                from: Some(from), ..
            } => PromptBuildHook::File {
                from: from.clone(),
                placement,
            },
            PromptBuildHookEntry {
                command: Some(argv),
                timeout_ms,
                on_error,
                ..
            } => PromptBuildHook::Command(command(argv, *timeout_ms, *on_error)),
            _ => return None,
        })
    })
}

/// The hooks of `entries`, each keyed `<base>[<index>]`; an entry `form_of` finds no form
/// in (validation has already reported it) is left out.
fn keyed_hooks<E, F>(base: &str, entries: &[E], form_of: impl Fn(&E) -> Option<F>) -> Vec<Hook<F>> {
    entries
        .iter()
        .enumerate()
        .filter_map(|(i, e)| {
            Some(Hook {
                key: format!("{base}[{i}]"),
                form: form_of(e)?,
            })
        })
        .collect()
}
