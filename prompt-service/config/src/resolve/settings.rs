//! Config-wide settings with defaults applied: queue, block streaming, apply_patch, prompt knobs.

use std::collections::BTreeMap;

use super::defaults;
use super::models::ModelAlias;
use crate::load::Config;
use crate::model_ref::{ModelRef, normalize_provider};
use crate::raw::{
    AgentDefaults, BlockStreamingBreak, BreakPreference, DelegationMode, Gpt5Personality,
    HumanDelayMode, MemoryCitations, OnOff, OwnerDisplay, QueueDrop, QueueMode, SkillsLimitsConfig,
    TimeFormat, TruncationWarning, TtsAuto,
};

/// Bootstrap injection budgets, in characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BootstrapLimits {
    /// Per file.
    pub max_chars: u64,
    /// All files together; never below 1.
    pub total_max_chars: u64,
}

impl BootstrapLimits {
    /// Per agent over defaults over OpenClaw's defaults; zero counts as unset. The total defaults
    /// to the larger of the per-file budget and 60000.
    /// Each argument lists the layers most specific first.
    pub(crate) fn merged(max_chars: [Option<u64>; 2], total_max_chars: [Option<u64>; 2]) -> Self {
        let first_positive =
            |layers: [Option<u64>; 2]| layers.into_iter().flatten().find(|v| *v > 0);
        let max_chars = first_positive(max_chars).unwrap_or(defaults::BOOTSTRAP_MAX_CHARS);
        let total = first_positive(total_max_chars)
            .unwrap_or(max_chars.max(defaults::BOOTSTRAP_TOTAL_MAX_CHARS));
        Self {
            max_chars,
            total_max_chars: total.max(1),
        }
    }
}

/// Skill discovery and prompt limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SkillsLimits {
    /// Directories examined per skill root.
    pub max_candidates_per_root: u64,
    /// Skills loaded per source.
    pub max_skills_loaded_per_source: u64,
    /// Skills listed in the prompt.
    pub max_skills_in_prompt: u64,
    /// Characters of the prompt's skills list.
    pub max_skills_prompt_chars: u64,
    /// Largest SKILL.md read, in bytes.
    pub max_skill_file_bytes: u64,
}

impl Default for SkillsLimits {
    fn default() -> Self {
        Self {
            max_candidates_per_root: defaults::SKILLS_MAX_CANDIDATES_PER_ROOT,
            max_skills_loaded_per_source: defaults::SKILLS_MAX_LOADED_PER_SOURCE,
            max_skills_in_prompt: defaults::SKILLS_MAX_IN_PROMPT,
            max_skills_prompt_chars: defaults::SKILLS_MAX_PROMPT_CHARS,
            max_skill_file_bytes: defaults::SKILLS_MAX_FILE_BYTES,
        }
    }
}

impl SkillsLimits {
    /// Merges layers key by key, first layer winning.
    pub(crate) fn merged(layers: &[Option<&SkillsLimitsConfig>]) -> Self {
        let base = Self::default();
        let pick = |choose: fn(&SkillsLimitsConfig) -> Option<u64>, fallback: u64| {
            layers
                .iter()
                .flatten()
                .find_map(|l| choose(l))
                .unwrap_or(fallback)
        };
        Self {
            max_candidates_per_root: pick(
                |l| l.max_candidates_per_root,
                base.max_candidates_per_root,
            ),
            max_skills_loaded_per_source: pick(
                |l| l.max_skills_loaded_per_source,
                base.max_skills_loaded_per_source,
            ),
            max_skills_in_prompt: pick(|l| l.max_skills_in_prompt, base.max_skills_in_prompt),
            max_skills_prompt_chars: pick(
                |l| l.max_skills_prompt_chars,
                base.max_skills_prompt_chars,
            ),
            max_skill_file_bytes: pick(|l| l.max_skill_file_bytes, base.max_skill_file_bytes),
        }
    }
}

/// `messages.queue` with defaults (steer, 500 ms, 20, summarize).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueSettings {
    /// Default mode.
    pub mode: QueueMode,
    /// Mode overrides by channel id.
    pub by_channel: BTreeMap<String, QueueMode>,
    /// Quiet window in milliseconds.
    pub debounce_ms: u64,
    /// Most messages held.
    pub cap: u64,
    /// Overflow policy.
    pub drop: QueueDrop,
}

impl QueueSettings {
    /// The mode for a channel: its override, else the default mode. (A per-session `/queue`
    /// override, held by the runtime, comes before both.)
    pub fn mode_for_channel(&self, channel: &str) -> QueueMode {
        self.by_channel.get(channel).copied().unwrap_or(self.mode)
    }
}

/// Block streaming with defaults (off, text_end, 800-1200 paragraph, idle 1000 ms).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockStreamingSettings {
    /// Whether blocks stream by default.
    pub enabled: bool,
    /// Block boundary.
    pub break_at: BlockStreamingBreak,
    /// Soft chunking.
    pub chunk: ChunkSettings,
    /// Idle coalescing.
    pub coalesce: CoalesceSettings,
    /// Pause between blocks.
    pub human_delay: HumanDelaySettings,
}

/// Soft chunking of streamed text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkSettings {
    /// Smallest chunk.
    pub min_chars: u64,
    /// Largest chunk (the channel's text limit may lower it).
    pub max_chars: u64,
    /// Preferred cut point.
    pub break_preference: BreakPreference,
}

/// Idle coalescing. Unset sizes fall back to channel defaults, then the chunk size, in the
/// runtime, which knows the channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CoalesceSettings {
    /// Configured minimum, if any.
    pub min_chars: Option<u64>,
    /// Configured maximum, if any.
    pub max_chars: Option<u64>,
    /// Idle flush time in milliseconds.
    pub idle_ms: u64,
}

/// Pause between streamed blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HumanDelaySettings {
    /// No pause.
    Off,
    /// A pause drawn from `min_ms..=max_ms`.
    Range {
        /// Shortest pause.
        min_ms: u64,
        /// Longest pause.
        max_ms: u64,
    },
}

/// `tools.exec.applyPatch` with defaults (on, workspace only, any model).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApplyPatchSettings {
    /// Whether the tool is offered.
    pub enabled: bool,
    /// Whether paths outside the workspace are refused.
    pub workspace_only: bool,
    /// Models allowed (`gpt-5.4` or `openai/gpt-5.4`); empty = any.
    pub allow_models: Vec<String>,
}

impl ApplyPatchSettings {
    /// Whether `model` may use apply_patch: enabled and either no allowlist, or an entry equal
    /// to the bare model id or the full `provider/model` (provider compared case-insensitively).
    pub fn allows(&self, model: &ModelRef) -> bool {
        self.enabled
            && (self.allow_models.is_empty()
                || self
                    .allow_models
                    .iter()
                    .any(|entry| match entry.split_once('/') {
                        Some((provider, id)) => {
                            normalize_provider(provider) == model.provider && id == model.model
                        }
                        None => entry == &model.model,
                    }))
    }
}

/// `messages.tts` with defaults.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TtsSettings {
    /// When replies are spoken (default off).
    pub auto: TtsAuto,
    /// Longest spoken text, if limited.
    pub max_text_length: Option<u64>,
    /// Summarise instead of cutting.
    pub summarize: bool,
}

/// The prompt knobs `ResolvePromptConfig` returns for one agent (P-2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptSettings {
    /// How owner ids are shown.
    pub owner_display: OwnerDisplay,
    /// HMAC key for hash mode, trimmed; `None` in raw mode or when blank.
    pub owner_display_secret: Option<String>,
    /// Owner sender ids.
    pub owner_allow_from: Vec<String>,
    /// Sub-agent delegation mode.
    pub delegation_mode: DelegationMode,
    /// TTS settings for the voice hint.
    pub tts: TtsSettings,
    /// Model alias lines, sorted by alias.
    pub model_aliases: Vec<ModelAlias>,
    /// Memory citation mode, when configured.
    pub memory_citations: Option<MemoryCitations>,
    /// Whether file tools are confined to the workspace.
    pub fs_workspace_only: bool,
    /// The user's time zone as configured (validated by the renderer).
    pub user_timezone: Option<String>,
    /// Clock format.
    pub time_format: TimeFormat,
    /// Whether the experimental plan tool is on.
    pub plan_tool: bool,
    /// Bootstrap truncation notice mode (default always).
    pub bootstrap_truncation_warning: TruncationWarning,
}

impl Config {
    pub(crate) fn agent_defaults(&self) -> Option<&AgentDefaults> {
        self.raw.agents.as_ref().and_then(|a| a.defaults.as_ref())
    }

    /// `tools.exec.notifyOnExit` (or its `tools.bash` alias), default on: whether a background
    /// command that ends on its own comes back to its session as a message.
    pub fn exec_notify_on_exit(&self) -> bool {
        let tools = self.raw.tools.as_ref();
        tools
            .and_then(|t| {
                [t.exec.as_ref(), t.bash.as_ref()]
                    .into_iter()
                    .flatten()
                    .find_map(|e| e.notify_on_exit)
            })
            .unwrap_or(true)
    }

    /// `messages.queue` with defaults.
    pub fn queue(&self) -> QueueSettings {
        let queue = self.raw.messages.as_ref().and_then(|m| m.queue.as_ref());
        QueueSettings {
            mode: queue.and_then(|q| q.mode).unwrap_or(QueueMode::Steer),
            by_channel: queue.and_then(|q| q.by_channel.clone()).unwrap_or_default(),
            debounce_ms: queue
                .and_then(|q| q.debounce_ms)
                .unwrap_or(defaults::QUEUE_DEBOUNCE_MS),
            cap: queue.and_then(|q| q.cap).unwrap_or(defaults::QUEUE_CAP),
            drop: queue.and_then(|q| q.drop).unwrap_or(QueueDrop::Summarize),
        }
    }

    /// Block streaming settings with defaults.
    pub fn block_streaming(&self) -> BlockStreamingSettings {
        let d = self.agent_defaults();
        let chunk = d.and_then(|d| d.block_streaming_chunk.as_ref());
        let coalesce = d.and_then(|d| d.block_streaming_coalesce.as_ref());
        let delay = d.and_then(|d| d.human_delay.as_ref());
        let human_delay = match delay.and_then(|h| h.mode) {
            None | Some(HumanDelayMode::Off) => HumanDelaySettings::Off,
            Some(HumanDelayMode::Natural) => HumanDelaySettings::Range {
                min_ms: defaults::NATURAL_DELAY_MS.0,
                max_ms: defaults::NATURAL_DELAY_MS.1,
            },
            Some(HumanDelayMode::Custom) => {
                let min_ms = delay
                    .and_then(|h| h.min_ms)
                    .unwrap_or(defaults::NATURAL_DELAY_MS.0);
                let max_ms = delay
                    .and_then(|h| h.max_ms)
                    .unwrap_or(defaults::NATURAL_DELAY_MS.1);
                HumanDelaySettings::Range {
                    min_ms,
                    max_ms: max_ms.max(min_ms),
                }
            }
        };
        BlockStreamingSettings {
            enabled: d.and_then(|d| d.block_streaming_default) == Some(OnOff::On),
            break_at: d
                .and_then(|d| d.block_streaming_break)
                .unwrap_or(BlockStreamingBreak::TextEnd),
            chunk: ChunkSettings {
                min_chars: chunk
                    .and_then(|c| c.min_chars)
                    .unwrap_or(defaults::CHUNK_MIN_CHARS),
                max_chars: chunk
                    .and_then(|c| c.max_chars)
                    .unwrap_or(defaults::CHUNK_MAX_CHARS),
                break_preference: chunk
                    .and_then(|c| c.break_preference)
                    .unwrap_or(BreakPreference::Paragraph),
            },
            coalesce: CoalesceSettings {
                min_chars: coalesce.and_then(|c| c.min_chars),
                max_chars: coalesce.and_then(|c| c.max_chars),
                idle_ms: coalesce
                    .and_then(|c| c.idle_ms)
                    .unwrap_or(defaults::COALESCE_IDLE_MS),
            },
            human_delay,
        }
    }

    /// `tools.exec.applyPatch` (or the legacy `tools.bash.applyPatch`) with defaults.
    pub fn apply_patch(&self) -> ApplyPatchSettings {
        let tools = self.raw.tools.as_ref();
        let layers = [
            tools
                .and_then(|t| t.exec.as_ref())
                .and_then(|e| e.apply_patch.as_ref()),
            tools
                .and_then(|t| t.bash.as_ref())
                .and_then(|e| e.apply_patch.as_ref()),
        ];
        ApplyPatchSettings {
            enabled: layers
                .iter()
                .flatten()
                .find_map(|p| p.enabled)
                .unwrap_or(true),
            workspace_only: layers
                .iter()
                .flatten()
                .find_map(|p| p.workspace_only)
                .unwrap_or(true),
            allow_models: layers
                .iter()
                .flatten()
                .find_map(|p| p.allow_models.clone())
                .unwrap_or_default(),
        }
    }

    /// The GPT-5 overlay personality for a provider (P-5): `agents.defaults.promptOverlays`
    /// first, then `plugins.entries.openai.config.personality` when the provider is unknown or
    /// OpenAI/Codex-like, else friendly. `on` is reported as [`Gpt5Personality::Friendly`].
    pub fn gpt5_personality(&self, provider: Option<&str>) -> Gpt5Personality {
        let configured = self
            .agent_defaults()
            .and_then(|d| d.prompt_overlays.as_ref())
            .and_then(|o| o.gpt5.as_ref())
            .and_then(|g| g.personality);
        let provider_ok = provider.is_none_or(|p| {
            defaults::GPT5_PERSONALITY_PROVIDERS.contains(&normalize_provider(p).as_str())
        });
        let from_plugin = || {
            let entries = self.raw.plugins.as_ref()?.entries.as_ref()?;
            let value = entries.get("openai")?.config.as_ref()?.get("personality")?;
            serde_json::from_value::<Gpt5Personality>(value.clone()).ok()
        };
        let chosen = configured
            .or_else(|| provider_ok.then(from_plugin).flatten())
            .unwrap_or(Gpt5Personality::Friendly);
        match chosen {
            Gpt5Personality::On => Gpt5Personality::Friendly,
            other => other,
        }
    }

    /// The prompt knobs for one agent (P-2). Unknown agent ids get the defaults.
    pub fn prompt_settings(&self, agent_id: &str) -> PromptSettings {
        let commands = self.raw.commands.as_ref();
        let owner_display = commands
            .and_then(|c| c.owner_display)
            .unwrap_or(OwnerDisplay::Raw);
        let owner_display_secret = match owner_display {
            OwnerDisplay::Hash => commands
                .and_then(|c| c.owner_display_secret.as_deref())
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned),
            OwnerDisplay::Raw => None,
        };
        let entry = self.agent_entry(agent_id);
        let tts = self.raw.messages.as_ref().and_then(|m| m.tts.as_ref());
        let defaults = self.agent_defaults();
        let global_fs = self
            .raw
            .tools
            .as_ref()
            .and_then(|t| t.fs.as_ref())
            .and_then(|f| f.workspace_only);
        let agent_fs = entry
            .and_then(|e| e.tools.as_ref())
            .and_then(|t| t.fs.as_ref())
            .and_then(|f| f.workspace_only);
        PromptSettings {
            owner_display,
            owner_display_secret,
            owner_allow_from: commands
                .and_then(|c| c.owner_allow_from.clone())
                .unwrap_or_default(),
            delegation_mode: self.delegation_mode(entry),
            tts: TtsSettings {
                auto: tts.and_then(|t| t.auto).unwrap_or(TtsAuto::Off),
                max_text_length: tts.and_then(|t| t.max_text_length),
                summarize: tts.and_then(|t| t.summarize).unwrap_or(true),
            },
            model_aliases: self.model_aliases(),
            memory_citations: self.raw.memory.as_ref().and_then(|m| m.citations),
            fs_workspace_only: agent_fs.or(global_fs).unwrap_or(false),
            user_timezone: defaults.and_then(|d| d.user_timezone.clone()),
            time_format: defaults
                .and_then(|d| d.time_format)
                .unwrap_or(TimeFormat::Auto),
            plan_tool: self
                .raw
                .tools
                .as_ref()
                .and_then(|t| t.experimental.as_ref())
                .and_then(|e| e.plan_tool)
                .unwrap_or(false),
            bootstrap_truncation_warning: defaults
                .and_then(|d| d.bootstrap_prompt_truncation_warning)
                .unwrap_or(TruncationWarning::Always),
        }
    }
}
