//! Gathering the live facts of a turn into the renderer's explicit input
//! (P-3): tools after policy, sandbox state, channel capabilities,
//! workspace files, skills, config knobs and the provider contribution.
//! Everything here is read fresh each turn; the renderer decides what goes
//! above the cache boundary.

use std::path::Path;

use openclaw_config::{
    Config,
    raw::{
        ContextInjection, DelegationMode, MemoryCitations, OwnerDisplay,
        ReasoningLevel as CfgReasoning, ThinkingLevel,
    },
    resolve::AgentView,
};
use openclaw_proto::prompt::v1 as pb;
use openclaw_providers::ToolSpec;
use openclaw_skills::Discovery;
use prompt_render as render;

use crate::sessions::SessionKind;

pub use crate::sessions::queue::TurnChannel;

/// The facts of one turn's prompt that the caller (a run or a preview) decides.
#[derive(Debug)]
pub struct TurnPrompt<'a> {
    /// The agent.
    pub agent: &'a AgentView,
    /// Session kind.
    pub kind: SessionKind,
    /// Heartbeat turn.
    pub heartbeat_turn: bool,
    /// A wake-up: the run starts with system events only (a background command ended, a
    /// subagent's result arrived), no person's message.
    pub wake_up: bool,
    /// Working directory.
    pub cwd: &'a Path,
    /// The sandbox of the session's commands, when it is sandboxed.
    pub sandbox: Option<&'a openclaw_sandbox::Isolation>,
    /// The channel.
    pub channel: &'a TurnChannel,
    /// Tools after policy, as the model request carries them (a description's first line is
    /// the Tooling summary).
    pub tools: &'a [ToolSpec],
    /// Skills.
    pub skills: Option<&'a Discovery>,
    /// An earlier turn already had the workspace files.
    pub continuation: bool,
    /// provider/model.
    pub model: &'a str,
    /// The agent's configured model.
    pub default_model: &'a str,
    /// Provider contribution.
    pub contribution: Option<&'a pb::ProviderContribution>,
    /// The session's full key (the Runtime line names it).
    pub session_key: &'a str,
    /// The session's reasoning visibility (`/reasoning`); `None` takes the agent's default.
    pub reasoning: Option<render::ReasoningLevel>,
    /// Which adapter asks: a run's turn, or a preview of one (echoed, never rendered, so a
    /// preview stays byte-identical to the run).
    pub surface: render::PromptSurface,
    /// A lightweight cron run: no workspace files reach the prompt.
    pub lightweight: bool,
}

/// What a turn's prompt reads when it is rendered: the config and the workspace files.
#[derive(Debug, Clone, Copy)]
pub struct TurnSources<'a> {
    /// The loaded config.
    pub config: &'a Config,
    /// Workspace bootstrap files, as the bootstrap hooks left them.
    pub files: &'a [crate::visibility::InjectedFile],
    /// Which of them are private memory (see [`crate::visibility`]).
    pub private: &'a crate::visibility::PrivateFiles,
    /// The local OpenClaw documentation, when the service has one (configured or shipped).
    pub docs: Option<&'a Path>,
}

/// Builds the renderer input for one turn.
pub fn render_input(f: &TurnPrompt<'_>, src: &TurnSources<'_>) -> render::RenderInput {
    let settings = src.config.prompt_settings(&f.agent.id);
    // Whether the agent's exec approvals ever ask a person: read by the Approvals section
    // and the Tool Call Style's approval line.
    let exec_can_ask = openclaw_tools::ExecPolicy::config_can_ask(src.config, &f.agent.id);
    let mut input = render::RenderInput::new(f.cwd.display().to_string());
    input.session_kind = match (f.kind, f.heartbeat_turn) {
        (SessionKind::Subagent, _) => render::SessionKind::Subagent,
        (SessionKind::Cron, _) => render::SessionKind::Cron,
        (_, true) => render::SessionKind::Heartbeat,
        _ => render::SessionKind::Main,
    };
    input.agent_id = f.agent.id.clone();
    input.agent_name = f
        .agent
        .identity
        .as_ref()
        .and_then(|i| i.name.clone())
        .or_else(|| f.agent.name.clone())
        .unwrap_or_default();
    input.fs_workspace_only = settings.fs_workspace_only;
    // P-47: from a git checkout, the Documentation section names the local source root.
    input.source_path = source_root()
        .map(|root| root.display().to_string())
        .unwrap_or_default();
    // The Documentation section points at local docs when the service has them (P-14).
    input.docs_path = src
        .docs
        .map(|d| d.display().to_string())
        .unwrap_or_default();
    input.tools = f
        .tools
        .iter()
        .map(|t| render::Tool {
            name: t.name.clone(),
            summary: t.description.lines().next().unwrap_or("").to_owned(),
            // The text the model request carries, encoded once per config load.
            json_schema: t.parameters.get().to_owned(),
        })
        .collect();
    if let Some(discovery) = f.skills {
        input.skills = discovery
            .model_visible()
            .map(|s| render::Skill {
                name: s.name.clone(),
                description: s.description.clone(),
                location: s.display_location.clone(),
                version_source: render::SkillVersionSource::Sha256(s.sha256.clone()),
            })
            .collect();
    }
    input.skills_limits = render::SkillsLimits {
        max_skills: clamp(f.agent.skills_limits.max_skills_in_prompt),
        max_chars: clamp(f.agent.skills_limits.max_skills_prompt_chars),
    };
    input.context_files = context_files(f, src);
    input.bootstrap_limits = render::BootstrapLimits {
        max_chars_per_file: clamp(f.agent.bootstrap.max_chars),
        total_max_chars: clamp(f.agent.bootstrap.total_max_chars),
    };
    // The Sandbox section states what the sandbox enforces, read off the isolation the
    // session's commands really run in (never the config alone).
    if let Some(sandbox) = f.sandbox {
        let agent = sandbox.agent_workspace();
        input.sandbox = render::SandboxInfo {
            enabled: true,
            container_workspace_dir: String::new(),
            workspace_access: match agent.map(|m| m.access) {
                None => render::WorkspaceAccess::None,
                Some(openclaw_sandbox::Access::ReadOnly) => render::WorkspaceAccess::ReadOnly,
                Some(openclaw_sandbox::Access::ReadWrite) => render::WorkspaceAccess::ReadWrite,
            },
            agent_workspace_mount: agent
                .map(|m| m.path.display().to_string())
                .unwrap_or_default(),
            // Elevated (host) exec is not something this runtime offers,
            // whatever `tools.elevated` says: the prompt must not offer it.
            elevated_available: false,
            // What the isolation really is: bubblewrap, and its network rule.
            engine: openclaw_sandbox::Bubblewrap::NAME.to_owned(),
            network: sandbox.network() == openclaw_sandbox::Network::On,
            // No browser bridge exists in this runtime.
            browser_bridge_url: String::new(),
            host_browser_allowed: false,
            elevated: render::Elevated {
                default_level: render::ElevatedLevel::Unspecified,
                full_access_available: false,
                full_access_blocked: render::FullAccessBlock::Runtime,
            },
        };
    }
    // An invalid configured zone is dropped with a warning rather than
    // failing every render.
    input.user_timezone = settings
        .user_timezone
        .clone()
        .filter(|tz| {
            let ok = jiff::tz::db().get(tz).is_ok();
            if !ok {
                tracing::warn!(timezone = %tz, "agents.defaults.userTimezone is not a valid IANA zone; ignored");
            }
            ok
        })
        .unwrap_or_default();
    input.channel = render::ChannelInfo {
        name: f.channel.channel.clone(),
        chat_type: match f.channel.chat_type.as_str() {
            "direct" => render::ChatType::Direct,
            "group" => render::ChatType::Group,
            "channel" | "room" => render::ChatType::Channel,
            _ => render::ChatType::Unspecified,
        },
        capabilities: f.channel.capabilities.clone(),
        // The Approvals section (native approval cards first, `/approve` only as the
        // fallback) is offered only where both hold: the client says its channel shows
        // approval requests itself, and the agent's exec policy can ask at all.
        native_approvals: Some(f.channel.native_approvals && exec_can_ask),
        reply_delivery: if f.channel.message_tool_only {
            render::ReplyDelivery::MessageToolOnly
        } else {
            render::ReplyDelivery::Automatic
        },
        message_tool_hints: Vec::new(),
        // The renderer names known channels itself.
        display_name: String::new(),
        known_channels: configured_channels(src.config),
    };
    input.extra_system_prompt = f.channel.group_context.clone();
    let hb = &f.agent.heartbeat;
    input.heartbeat = render::HeartbeatInfo {
        enabled: hb.enabled,
        prompt: hb
            .prompt
            .clone()
            .unwrap_or_else(|| render::DEFAULT_HEARTBEAT_PROMPT.to_owned()),
        include_system_prompt_section: hb.include_system_prompt_section,
        serves_session: Some(heartbeat_serves(f)),
    };
    input.turn_kind = turn_kind(f);
    input.runtime = runtime_info(f, src);
    input.think_level = match f.agent.thinking_default {
        None | Some(ThinkingLevel::Off) => render::ThinkLevel::Off,
        Some(ThinkingLevel::Minimal) => render::ThinkLevel::Minimal,
        Some(ThinkingLevel::Low) => render::ThinkLevel::Low,
        Some(ThinkingLevel::Medium | ThinkingLevel::Adaptive) => render::ThinkLevel::Medium,
        Some(ThinkingLevel::High) => render::ThinkLevel::High,
        Some(ThinkingLevel::Xhigh) => render::ThinkLevel::XHigh,
    };
    input.reasoning_level = match (f.reasoning, f.agent.reasoning_default) {
        (Some(level), _) => level,
        (None, None | Some(CfgReasoning::Off)) => render::ReasoningLevel::Off,
        (None, Some(CfgReasoning::On)) => render::ReasoningLevel::On,
        (None, Some(CfgReasoning::Stream)) => render::ReasoningLevel::Stream,
    };
    // P-52: owners are listed only when this turn's message came with a sender id, which
    // its fenced metadata shows the model; otherwise there would be nothing to match them
    // against. (`/approve` and the other owner checks are enforced by the runtime itself.)
    input.owner_ids = crate::senders::prompt_owner_ids(&settings.owner_allow_from, f.channel);
    input.owner_display = match settings.owner_display {
        OwnerDisplay::Raw => render::OwnerDisplay::Raw,
        OwnerDisplay::Hash => render::OwnerDisplay::Hash,
    };
    input.owner_display_secret = settings.owner_display_secret.clone().unwrap_or_default();
    input.model_aliases = settings
        .model_aliases
        .iter()
        .map(|a| render::ModelAlias {
            alias: a.alias.clone(),
            model: a.target.clone(),
        })
        .collect();
    input.delegation_mode = match f.agent.delegation_mode {
        DelegationMode::Suggest => render::DelegationMode::Suggest,
        DelegationMode::Prefer => render::DelegationMode::Prefer,
    };
    // This runtime delivers replies as text only: no speech is synthesised and `[[tts]]`
    // tags are not read, so the prompt offers no voice (whatever `messages.tts` says).
    input.tts_hint = String::new();
    input.memory_citations = match settings.memory_citations {
        None | Some(MemoryCitations::Auto) => render::CitationsMode::Auto,
        Some(MemoryCitations::On) => render::CitationsMode::On,
        Some(MemoryCitations::Off) => render::CitationsMode::Off,
    };
    input.truncation_notice = !matches!(
        settings.bootstrap_truncation_warning,
        openclaw_config::raw::TruncationWarning::Off
    );
    input.active_project_keys = project_keys(f.cwd);
    // This runtime starts no external ACP agents.
    input.acp_enabled = false;
    // A background command's end comes back as a system event (see `run::system`) while
    // `tools.exec.notifyOnExit` is on.
    input.exec_exit_wakeups = src.config.exec_notify_on_exit();
    input.exec_approvals_never_ask = !exec_can_ask;
    input.gpt5_heartbeat_guidance = gpt5_heartbeat_guidance(f, src);
    input.current_date = today(&input.user_timezone);
    input.prompt_surface = f.surface;
    if let Some(c) = f.contribution {
        let overrides = c.section_overrides.clone().unwrap_or_default();
        input.contribution = render::Contribution {
            stable_prefix: c.stable_prefix.clone(),
            dynamic_suffix: c.dynamic_suffix.clone(),
            interaction_style: overrides.interaction_style,
            tool_call_style: overrides.tool_call_style,
            execution_bias: overrides.execution_bias,
        };
    }
    input
}

/// Whether heartbeats run in this turn's session (P-51): the scheduler runs
/// them in the main session of an agent whose own heartbeat is on, and
/// nowhere else.
fn heartbeat_serves(f: &TurnPrompt<'_>) -> bool {
    f.heartbeat_turn || (f.agent.heartbeat.enabled && f.kind == SessionKind::Main)
}

/// What started this turn, from the facts the run gives.
fn turn_kind(f: &TurnPrompt<'_>) -> render::TurnKind {
    match (f.kind, f.heartbeat_turn) {
        (_, true) => render::TurnKind::Heartbeat,
        (SessionKind::Subagent, _) => render::TurnKind::Subagent,
        (SessionKind::Cron, _) => render::TurnKind::Cron,
        _ if f.wake_up => render::TurnKind::WakeUp,
        _ => render::TurnKind::User,
    }
}

fn clamp(value: u64) -> u32 {
    u32::try_from(value).unwrap_or(u32::MAX)
}

/// The workspace files for this turn. MEMORY.md and other private memory
/// reach only the agent's private main session (lesson L5: fail closed; see
/// [`crate::visibility`]); the renderer applies the subagent and cron
/// filters. `contextInjection` decides continuation turns. A lightweight
/// cron run gets none: the scheduled prompt is its whole context.
fn context_files(f: &TurnPrompt<'_>, src: &TurnSources<'_>) -> Vec<render::ContextFile> {
    let injection = f.agent.context_injection;
    let skip = f.lightweight
        || match injection {
            ContextInjection::Always => false,
            ContextInjection::ContinuationSkip => f.continuation,
            ContextInjection::Never => true,
        };
    if skip {
        return Vec::new();
    }
    let files = src
        .files
        .iter()
        .map(|file| render::ContextFile {
            path: file.name.clone(),
            content: file.content.clone(),
            missing: file.missing,
        })
        .collect();
    // The bootstrap hooks (P-36) ran before this: the privacy filter runs
    // last, so nothing can put MEMORY.md back into a shared session.
    crate::visibility::visible_files(files, f.kind, src.private)
}

fn runtime_info(f: &TurnPrompt<'_>, src: &TurnSources<'_>) -> render::RuntimeInfo {
    render::RuntimeInfo {
        host: host_name(),
        os: std::env::consts::OS.to_owned(),
        arch: std::env::consts::ARCH.to_owned(),
        runtime_version: "agent-service".to_owned(),
        model: f.model.to_owned(),
        default_model: f.default_model.to_owned(),
        shell: std::env::var("SHELL").unwrap_or_default(),
        repo_root: src
            .config
            .raw()
            .agents
            .as_ref()
            .and_then(|a| a.defaults.as_ref())
            .and_then(|d| d.repo_root.clone())
            .unwrap_or_default(),
        active_processes: Vec::new(),
        session_key: f.session_key.to_owned(),
        versions: vec![render::RuntimeVersion {
            key: "agent_service".to_owned(),
            value: env!("CARGO_PKG_VERSION").to_owned(),
        }],
    }
}

/// Channels configured and not switched off, for the message tool's sends.
fn configured_channels(config: &Config) -> Vec<String> {
    config
        .raw()
        .channels
        .iter()
        .flatten()
        .filter(|(_, c)| c.enabled != Some(false))
        .map(|(id, _)| id.clone())
        .collect()
}

/// The GPT-5 overlay's heartbeat guidance goes to friendly GPT-5 runs of a
/// session heartbeats run in (never to group, channel, direct, subagent or
/// cron sessions).
fn gpt5_heartbeat_guidance(f: &TurnPrompt<'_>, src: &TurnSources<'_>) -> bool {
    let (provider, model) = f.model.split_once('/').unwrap_or(("", f.model));
    let friendly = !matches!(
        src.config.gpt5_personality(Some(provider)),
        openclaw_config::raw::Gpt5Personality::Off
    );
    f.contribution.is_some()
        && render::gpt5_applies(provider, model)
        && friendly
        && heartbeat_serves(f)
}

/// The user's date today, in their time zone when it is known (else UTC,
/// as compaction's dated notes), as `YYYY-MM-DD`.
fn today(timezone: &str) -> String {
    let zone = jiff::tz::TimeZone::get(timezone).unwrap_or(jiff::tz::TimeZone::UTC);
    jiff::Timestamp::now()
        .to_zoned_datetime(zone)
        .date()
        .to_string()
}

/// The project keys of the repository around `cwd`: `path:<root>` for the
/// nearest directory holding `.git`, and the `origin` remote as
/// `host/owner/repo` when it can be read. Empty outside a repository.
fn project_keys(cwd: &Path) -> Vec<String> {
    let Some(root) = cwd.ancestors().find(|d| d.join(".git").exists()) else {
        return Vec::new();
    };
    let mut keys = vec![format!("path:{}", root.display())];
    if let Some(remote) = git_config(&root.join(".git")).and_then(|c| origin_key(&c)) {
        keys.push(remote);
    }
    keys
}

/// The text of a repository's git config; `.git` may be a directory or a
/// worktree's `gitdir:` file pointing at one (whose `commondir` holds it).
fn git_config(dot_git: &Path) -> Option<String> {
    let dir = if dot_git.is_dir() {
        dot_git.to_path_buf()
    } else {
        let pointer = small_text(dot_git)?;
        let gitdir = dot_git
            .parent()?
            .join(pointer.strip_prefix("gitdir:")?.trim());
        match small_text(&gitdir.join("commondir")) {
            Some(common) => gitdir.join(common.trim()),
            None => gitdir,
        }
    };
    small_text(&dir.join("config"))
}

/// Bytes of a git file read at most; a larger one is not a config worth keys.
const GIT_FILE_MAX_BYTES: u64 = 256 * 1024;

/// The text of a small regular file; `None` for anything else. These files sit in the
/// workspace, where the agent can put a FIFO or a device under their names: the open is
/// non-blocking (such a file is opened at once and refused, never waited on; the render runs
/// on an async worker) and the read stops at [`GIT_FILE_MAX_BYTES`].
fn small_text(path: &Path) -> Option<String> {
    use std::{io::Read, os::unix::fs::OpenOptionsExt};
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
        .open(path)
        .ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.len() > GIT_FILE_MAX_BYTES {
        return None;
    }
    let mut text = String::new();
    file.take(GIT_FILE_MAX_BYTES)
        .read_to_string(&mut text)
        .ok()?;
    Some(text)
}

/// `host/owner/repo` of the `[remote "origin"]` url: the scheme, user and
/// `.git` suffix dropped, an scp-like `host:path` turned into `host/path`.
fn origin_key(config: &str) -> Option<String> {
    let mut in_origin = false;
    for line in config.lines().map(str::trim) {
        if line.starts_with('[') {
            in_origin = line == "[remote \"origin\"]";
            continue;
        }
        let Some(url) = line.strip_prefix("url").map(str::trim_start) else {
            continue;
        };
        let Some(url) = url.strip_prefix('=').map(str::trim).filter(|_| in_origin) else {
            continue;
        };
        let (rest, scp) = match url.split_once("://") {
            Some((_, rest)) => (rest, false),
            None => (url, true),
        };
        let rest = rest.rsplit_once('@').map_or(rest, |(_, r)| r);
        let rest = if scp {
            rest.replacen(':', "/", 1)
        } else {
            rest.to_owned()
        };
        let key = rest
            .trim_end_matches('/')
            .trim_end_matches(".git")
            .to_owned();
        return (key.contains('/') && !key.starts_with('/')).then_some(key);
    }
    None
}

/// The root of the git checkout this service runs from, when it runs from one (P-47): the
/// nearest ancestor of the executable that holds `.git` and this service's sources.
/// Looked up once: the executable does not move while it runs.
fn source_root() -> Option<std::path::PathBuf> {
    static ROOT: std::sync::OnceLock<Option<std::path::PathBuf>> = std::sync::OnceLock::new();
    ROOT.get_or_init(|| {
        let exe = std::env::current_exe().ok()?;
        exe.ancestors()
            .find(|d| d.join(".git").exists() && d.join("agent-service").join("runtime").is_dir())
            .map(Path::to_path_buf)
    })
    .clone()
}

/// The host name now (one system call; it can change while the service runs).
fn host_name() -> String {
    nix::unistd::gethostname()
        .ok()
        .and_then(|name| name.into_string().ok())
        .unwrap_or_default()
}

#[cfg(test)]
impl<'a> TurnPrompt<'a> {
    /// A test's turn: the main session of `agent` in `cwd`, an embedded run of a fake model,
    /// nothing else set; tests change the fields they are about.
    pub(crate) fn for_test(
        agent: &'a AgentView,
        cwd: &'a Path,
        channel: &'a TurnChannel,
        tools: &'a [ToolSpec],
    ) -> Self {
        Self {
            agent,
            kind: SessionKind::Main,
            heartbeat_turn: false,
            wake_up: false,
            cwd,
            sandbox: None,
            channel,
            tools,
            skills: None,
            continuation: false,
            model: "fake/test-model",
            default_model: "fake/test-model",
            contribution: None,
            session_key: "agent:main:main",
            reasoning: None,
            surface: prompt_render::PromptSurface::EmbeddedRun,
            lightweight: false,
        }
    }
}

#[cfg(test)]
mod heartbeat_tests;
#[cfg(test)]
mod visibility_tests;

/// Every thinking level `/think` takes, in the order its replies list them.
pub const THINKING_LEVELS: [ThinkingLevel; 7] = [
    ThinkingLevel::Off,
    ThinkingLevel::Minimal,
    ThinkingLevel::Low,
    ThinkingLevel::Medium,
    ThinkingLevel::High,
    ThinkingLevel::Xhigh,
    ThinkingLevel::Adaptive,
];

/// A stored per-session thinking level (`/think`), if it names one.
pub fn thinking_of(stored: Option<&str>) -> Option<ThinkingLevel> {
    let stored = stored?.trim().to_ascii_lowercase();
    THINKING_LEVELS
        .into_iter()
        .find(|level| level.as_str() == stored)
}

/// A session's stored `/reasoning` setting (`on`, `off`, `stream`); `None` for anything else.
pub fn reasoning_of(stored: Option<&str>) -> Option<render::ReasoningLevel> {
    match stored?.trim().to_ascii_lowercase().as_str() {
        "off" => Some(render::ReasoningLevel::Off),
        "on" => Some(render::ReasoningLevel::On),
        "stream" => Some(render::ReasoningLevel::Stream),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origin_urls_become_host_owner_repo() {
        for (url, key) in [
            (
                "https://github.com/acme/app.git",
                Some("github.com/acme/app"),
            ),
            ("git@github.com:acme/app.git", Some("github.com/acme/app")),
            (
                "ssh://git@git.example.org:22/acme/app/",
                Some("git.example.org:22/acme/app"),
            ),
            ("/srv/git/app.git", None),
        ] {
            let config = format!("[core]\n\tbare = false\n[remote \"origin\"]\n\turl = {url}\n");
            assert_eq!(origin_key(&config).as_deref(), key, "{url}");
        }
        let other = "[remote \"upstream\"]\n\turl = https://github.com/x/y\n";
        assert_eq!(origin_key(other), None);
    }

    #[test]
    fn project_keys_name_the_repository_around_the_working_directory() {
        let dir = tempfile::tempdir().expect("tempdir");
        let repo = dir.path().join("app");
        std::fs::create_dir_all(repo.join(".git")).expect("mkdir");
        std::fs::create_dir_all(repo.join("src/deep")).expect("mkdir");
        std::fs::write(
            repo.join(".git/config"),
            "[remote \"origin\"]\n\turl = git@github.com:Acme/App.git\n",
        )
        .expect("write");
        assert_eq!(
            project_keys(&repo.join("src/deep")),
            [
                format!("path:{}", repo.display()),
                "github.com/Acme/App".to_owned()
            ]
        );
        // A repository below a directory is not its project: above the repository, the keys
        // are those of whatever surrounds the temporary directory (usually none).
        let above = project_keys(dir.path());
        assert!(
            !above.contains(&format!("path:{}", repo.display()))
                && !above.contains(&"github.com/Acme/App".to_owned()),
            "{above:?}"
        );
        assert_eq!(above, project_keys(dir.path().parent().expect("a parent")));
    }

    /// A FIFO where git keeps its files (anyone who can write the workspace can make one): the
    /// render neither waits on it nor takes keys from it; an oversized config gives no remote.
    #[test]
    fn fifos_and_huge_files_under_git_names_are_skipped_without_waiting() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mkfifo = |path: &Path| {
            nix::unistd::mkfifo(path, nix::sys::stat::Mode::S_IRWXU).expect("mkfifo");
        };
        let repo = dir.path().join("app");
        std::fs::create_dir_all(repo.join(".git")).expect("mkdir");
        mkfifo(&repo.join(".git/config"));
        let pointer = dir.path().join("worktree");
        std::fs::create_dir_all(&pointer).expect("mkdir");
        mkfifo(&pointer.join(".git"));
        let huge = dir.path().join("huge");
        std::fs::create_dir_all(huge.join(".git")).expect("mkdir");
        let mut config = "[remote \"origin\"]\n\turl = git@github.com:Acme/App.git\n".to_owned();
        config.push_str(&"#".repeat(300 * 1024));
        std::fs::write(huge.join(".git/config"), config).expect("write");

        let (tx, rx) = std::sync::mpsc::channel();
        let (repo_at, pointer_at, huge_at) = (repo.clone(), pointer.clone(), huge.clone());
        std::thread::spawn(move || {
            let _ = tx.send((
                project_keys(&repo_at),
                project_keys(&pointer_at),
                project_keys(&huge_at),
            ));
        });
        let (in_repo, in_pointer, in_huge) = rx
            .recv_timeout(std::time::Duration::from_secs(20))
            .unwrap_or_else(|_| panic!("project keys waited on a FIFO"));
        assert_eq!(in_repo, [format!("path:{}", repo.display())]);
        assert_eq!(in_pointer, [format!("path:{}", pointer.display())]);
        assert_eq!(in_huge, [format!("path:{}", huge.display())]);
    }

    /// The tests run from this checkout's build, so the source root is found and is a
    /// checkout of this service.
    #[test]
    fn the_source_root_is_the_checkout_the_binary_runs_from() {
        let exe = std::env::current_exe().expect("exe");
        let expected = exe
            .ancestors()
            .find(|d| d.join(".git").exists() && d.join("agent-service/runtime").is_dir());
        assert_eq!(source_root().as_deref(), expected);
        if let Some(root) = source_root() {
            assert!(
                root.join("agent-service/runtime/src/prompt_input.rs")
                    .is_file()
            );
        }
    }

    #[test]
    fn today_is_a_date_the_renderer_accepts() {
        let date = today("Europe/Berlin");
        assert!(date.parse::<jiff::civil::Date>().is_ok(), "{date}");
        assert!(today("").parse::<jiff::civil::Date>().is_ok());
    }
}
