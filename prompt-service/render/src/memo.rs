//! [`Renderer`]: the same output as [`crate::render`], with the stable block
//! memoised across turns.
//!
//! The stable block is a pure function of the stable inputs, and those are
//! the same on every turn of a session, so rendering it once per session
//! instead of once per turn is what makes per-turn rendering nearly free.
//! Entries are found by a fast fingerprint and then compared field by field,
//! so a fingerprint collision can never return someone else's prompt. The
//! fingerprint samples long strings rather than reading them whole (see
//! [`SampledHasher`]): the full comparison already reads every byte once,
//! and a second full pass was a tenth of a per-turn render. The output is
//! identical to the uncached path (property-tested).

use std::{
    hash::{Hash, Hasher},
    sync::{Arc, Mutex, PoisonError},
};

use crate::{
    bootstrap,
    error::RenderError,
    input::TurnInputs,
    input::{
        BootstrapLimits, CitationsMode, ContextFile, DelegationMode, ModelAlias, OwnerDisplay,
        PromptMode, RenderInput, SandboxInfo, SessionKind, Skill, SkillsLimits, Tool,
    },
    render::{self, Rendered, SectionReport, SkillsReport, StableBlock, ToolsReport, TurnRef},
};

/// Stable blocks kept by default.
pub const DEFAULT_CACHE_ENTRIES: usize = 64;

/// Bound on the memo's size, estimated from the long strings of the kept
/// inputs (each entry holds a copy of its stable inputs and the block
/// rendered from them, which the injection budgets keep much smaller). An
/// input over a quarter of it is rendered but not kept.
pub const MAX_CACHE_BYTES: usize = 64 * 1024 * 1024;

/// Cache counters, for metrics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Renders that reused a stable block.
    pub hits: u64,
    /// Renders that built one.
    pub misses: u64,
    /// Blocks held.
    pub entries: usize,
}

/// A renderer with a least-recently-used memo of stable blocks, bounded in
/// entries and in bytes ([`MAX_CACHE_BYTES`]).
#[derive(Debug)]
pub struct Renderer {
    capacity: usize,
    inner: Mutex<Lru>,
}

#[derive(Debug, Default)]
struct Lru {
    entries: Vec<Entry>,
    tick: u64,
    stats: CacheStats,
    /// Sum of the entries' sizes.
    bytes: usize,
}

#[derive(Debug)]
struct Entry {
    fingerprint: u64,
    /// The stable inputs this block was built from (per-turn fields cleared).
    key: RenderInput,
    block: Arc<StableBlock>,
    last_used: u64,
    /// [`approx_bytes`] of `key` and the block.
    bytes: usize,
}

/// An estimate of what an entry holds: its inputs' long strings and its
/// rendered prefix.
fn approx_bytes(key: &RenderInput, block: &StableBlock) -> usize {
    let files: usize = key
        .context_files
        .iter()
        .map(|f| f.path.len() + f.content.len())
        .sum();
    let tools: usize = key
        .tools
        .iter()
        .map(|t| t.name.len() + t.summary.len() + t.json_schema.len())
        .sum();
    let skills: usize = key
        .skills
        .iter()
        .map(|s| {
            let version = match &s.version_source {
                crate::input::SkillVersionSource::Content(bytes) => bytes.len(),
                crate::input::SkillVersionSource::Sha256(hex) => hex.len(),
            };
            s.name.len() + s.description.len() + s.location.len() + version
        })
        .sum();
    files + tools + skills + block.prefix_len()
}

impl Default for Renderer {
    fn default() -> Self {
        Self::new(DEFAULT_CACHE_ENTRIES)
    }
}

impl Renderer {
    /// A renderer keeping at most `capacity` stable blocks (0 disables the memo).
    pub fn new(capacity: usize) -> Self {
        Self {
            capacity,
            inner: Mutex::new(Lru::default()),
        }
    }

    /// Renders `input`; byte-identical to [`crate::render`].
    pub fn render(&self, input: &RenderInput) -> Result<Rendered, RenderError> {
        let block = self.block(input)?;
        render::finish(input, TurnRef::of_input(input), &block)
    }

    /// Validates `input` and builds (or finds) its stable block, for a
    /// caller that keeps it and renders many turns from it with
    /// [`Prepared::render_turn`]. The input's [`TurnInputs`] are ignored;
    /// take them out first with [`RenderInput::take_turn`].
    pub fn prepare(&self, input: RenderInput) -> Result<Prepared, RenderError> {
        let block = self.block(&input)?;
        Ok(Prepared { input, block })
    }

    /// The stable block of `input`, from the memo or freshly built.
    fn block(&self, input: &RenderInput) -> Result<Arc<StableBlock>, RenderError> {
        if self.capacity == 0 {
            return Ok(Arc::new(render::stable_block(input)?));
        }
        let key = StableKey::of(input);
        let fingerprint = key.fingerprint();
        if let Some(block) = self.lookup(fingerprint, &key) {
            return Ok(block);
        }
        let block = Arc::new(render::stable_block(input)?);
        self.insert(fingerprint, stable_copy(input), Arc::clone(&block));
        Ok(block)
    }

    /// Hit/miss counters and the number of cached blocks.
    pub fn stats(&self) -> CacheStats {
        let lru = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        CacheStats {
            entries: lru.entries.len(),
            ..lru.stats
        }
    }

    fn lookup(&self, fingerprint: u64, key: &StableKey<'_>) -> Option<Arc<StableBlock>> {
        // A poisoned lock only means another render panicked mid-update of
        // the counters; the entries themselves are always whole.
        let mut lru = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        lru.tick += 1;
        let tick = lru.tick;
        let found = lru
            .entries
            .iter_mut()
            .find(|e| e.fingerprint == fingerprint && StableKey::of(&e.key) == *key)
            .map(|e| {
                e.last_used = tick;
                Arc::clone(&e.block)
            });
        if found.is_some() {
            lru.stats.hits += 1;
        } else {
            lru.stats.misses += 1;
        }
        found
    }

    fn insert(&self, fingerprint: u64, key: RenderInput, block: Arc<StableBlock>) {
        let bytes = approx_bytes(&key, &block);
        if bytes > MAX_CACHE_BYTES / 4 {
            return;
        }
        let mut lru = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        lru.tick += 1;
        let tick = lru.tick;
        let new_key = StableKey::of(&key);
        if lru
            .entries
            .iter()
            .any(|e| e.fingerprint == fingerprint && StableKey::of(&e.key) == new_key)
        {
            return; // Built concurrently by another request.
        }
        // Least recently used first out, until both bounds hold.
        while lru.entries.len() >= self.capacity || lru.bytes + bytes > MAX_CACHE_BYTES {
            let Some(oldest) = lru
                .entries
                .iter()
                .enumerate()
                .min_by_key(|(_, e)| e.last_used)
                .map(|(i, _)| i)
            else {
                break;
            };
            let evicted = lru.entries.swap_remove(oldest);
            lru.bytes -= evicted.bytes;
        }
        lru.bytes += bytes;
        lru.entries.push(Entry {
            fingerprint,
            key,
            block,
            last_used: tick,
            bytes,
        });
    }
}

/// Validated stable inputs with their rendered stable block: everything of
/// a render except the [`TurnInputs`]. Cheap to share (the block is behind
/// an `Arc`); a caller that recognises a session's stable inputs by its own
/// key (prompt-service does, by their wire bytes) keeps one per session and
/// renders each turn from it without reading those inputs again.
#[derive(Debug, Clone)]
pub struct Prepared {
    input: RenderInput,
    block: Arc<StableBlock>,
}

impl Prepared {
    /// Renders one turn: byte-identical to rendering the prepared input
    /// with its turn inputs replaced by `turn`.
    pub fn render_turn(&self, turn: &TurnInputs) -> Result<Rendered, RenderError> {
        render::finish(&self.input, TurnRef::of_turn(turn), &self.block)
    }

    /// The input this was prepared from.
    pub fn input(&self) -> &RenderInput {
        &self.input
    }

    /// The sections above the boundary, as every render from this reports them.
    pub fn stable_sections(&self) -> &Arc<[SectionReport]> {
        self.block.sections()
    }

    /// The skills report every render from this carries.
    pub fn skills(&self) -> &Arc<SkillsReport> {
        self.block.skills()
    }

    /// The tools report every render from this carries.
    pub fn tools(&self) -> &Arc<ToolsReport> {
        self.block.tools()
    }
}

/// The inputs the stable block depends on, borrowed. Built by one exhaustive
/// destructuring: adding a field to [`RenderInput`] breaks the build here
/// until it is classified as stable or per-turn.
#[derive(Debug, PartialEq, Hash)]
struct StableKey<'a> {
    mode: PromptMode,
    session_kind: SessionKind,
    agent_name: &'a str,
    workspace_dir: &'a str,
    workspace_notes: &'a [String],
    fs_workspace_only: bool,
    tools: &'a [Tool],
    skills: &'a [Skill],
    skills_limits: SkillsLimits,
    stable_files: Vec<&'a ContextFile>,
    bootstrap_limits: BootstrapLimits,
    sandbox: &'a SandboxInfo,
    user_timezone: &'a str,
    reasoning_tag_hint: bool,
    owner_ids: &'a [String],
    owner_display: OwnerDisplay,
    owner_display_secret: &'a str,
    model_aliases: &'a [ModelAlias],
    delegation_mode: DelegationMode,
    docs_path: &'a str,
    source_path: &'a str,
    memory_include_section: bool,
    memory_citations: CitationsMode,
    stable_prefix: &'a str,
    interaction_style: &'a str,
    tool_call_style: &'a str,
    execution_bias: &'a str,
    truncation_notice: bool,
    include_safety: bool,
    active_project_keys: &'a [String],
    acp_enabled: bool,
    gpt5_heartbeat_guidance: bool,
}

impl<'a> StableKey<'a> {
    fn of(input: &'a RenderInput) -> Self {
        let RenderInput {
            prompt_mode: _,
            session_kind,
            agent_id: _,
            agent_name,
            workspace_dir,
            workspace_notes,
            fs_workspace_only,
            tools,
            skills,
            skills_limits,
            context_files,
            bootstrap_limits,
            sandbox,
            user_timezone,
            channel: _,
            extra_system_prompt: _,
            heartbeat: _,
            runtime: _,
            think_level: _,
            reasoning_level: _,
            reasoning_tag_hint,
            owner_ids,
            owner_display,
            owner_display_secret,
            model_aliases,
            delegation_mode,
            tts_hint: _,
            docs_path,
            source_path,
            memory_include_section,
            memory_citations,
            contribution,
            reaction_level: _,
            truncation_notice,
            include_safety,
            active_project_keys,
            acp_enabled,
            gpt5_heartbeat_guidance,
            current_date: _,
            prompt_surface: _,
            mark_relocatable: _,
        } = input;
        Self {
            mode: input.resolved_mode(),
            // Heartbeat runs share the main session's stable block.
            session_kind: match session_kind {
                SessionKind::Heartbeat => SessionKind::Main,
                other => *other,
            },
            agent_name,
            workspace_dir,
            workspace_notes,
            fs_workspace_only: *fs_workspace_only,
            tools,
            skills,
            skills_limits: *skills_limits,
            stable_files: context_files
                .iter()
                .filter(|f| !bootstrap::is_dynamic(&f.path))
                .collect(),
            bootstrap_limits: *bootstrap_limits,
            sandbox,
            user_timezone,
            reasoning_tag_hint: *reasoning_tag_hint,
            owner_ids,
            owner_display: *owner_display,
            owner_display_secret,
            model_aliases,
            delegation_mode: *delegation_mode,
            docs_path,
            source_path,
            memory_include_section: *memory_include_section,
            memory_citations: *memory_citations,
            stable_prefix: &contribution.stable_prefix,
            interaction_style: &contribution.interaction_style,
            tool_call_style: &contribution.tool_call_style,
            execution_bias: &contribution.execution_bias,
            truncation_notice: *truncation_notice,
            include_safety: *include_safety,
            active_project_keys,
            acp_enabled: *acp_enabled,
            gpt5_heartbeat_guidance: *gpt5_heartbeat_guidance,
        }
    }

    fn fingerprint(&self) -> u64 {
        let mut hasher = SampledHasher::default();
        self.hash(&mut hasher);
        hasher.finish()
    }
}

/// A hasher that reads short byte strings whole and long ones (context
/// files, schemas) by their length, both ends and a sample every
/// [`SampledHasher::STRIDE`] bytes. Equal keys always get equal
/// fingerprints; keys that differ only between samples collide, so a memo
/// keyed by it must compare the keys in full before trusting a match (this
/// one does, and so does prompt-service's memo of request bytes). Not a
/// general-purpose hash: it is for finding candidates fast.
#[derive(Default)]
pub struct SampledHasher(rustc_hash::FxHasher);

impl std::fmt::Debug for SampledHasher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("SampledHasher")
            .field(&self.0.finish())
            .finish()
    }
}

impl SampledHasher {
    /// Strings up to this length are hashed whole.
    const WHOLE: usize = 256;
    /// Bytes taken from each end of a longer string.
    const ENDS: usize = 64;
    /// Distance between the 8-byte samples taken from a longer string.
    const STRIDE: usize = 512;
}

impl Hasher for SampledHasher {
    fn write(&mut self, bytes: &[u8]) {
        if bytes.len() <= Self::WHOLE {
            self.0.write(bytes);
            return;
        }
        self.0.write_usize(bytes.len());
        let (head, tail) = (&bytes[..Self::ENDS], &bytes[bytes.len() - Self::ENDS..]);
        self.0.write(head);
        self.0.write(tail);
        for start in (Self::ENDS..bytes.len() - Self::ENDS).step_by(Self::STRIDE) {
            let end = (start + 8).min(bytes.len());
            self.0.write(&bytes[start..end]);
        }
    }

    fn write_u8(&mut self, i: u8) {
        self.0.write_u8(i);
    }

    fn write_u32(&mut self, i: u32) {
        self.0.write_u32(i);
    }

    fn write_u64(&mut self, i: u64) {
        self.0.write_u64(i);
    }

    fn write_usize(&mut self, i: usize) {
        self.0.write_usize(i);
    }

    fn finish(&self) -> u64 {
        self.0.finish()
    }
}

/// A copy of the stable inputs only, kept as the cache entry's key.
fn stable_copy(input: &RenderInput) -> RenderInput {
    let mut copy = input.clone();
    copy.context_files
        .retain(|f| !bootstrap::is_dynamic(&f.path));
    copy.channel = Default::default();
    copy.extra_system_prompt.clear();
    copy.heartbeat = Default::default();
    copy.runtime = Default::default();
    copy.tts_hint.clear();
    copy.contribution.dynamic_suffix.clear();
    copy.agent_id.clear();
    copy.current_date.clear();
    copy.prompt_surface = Default::default();
    copy.mark_relocatable = false;
    copy
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures;

    #[test]
    fn the_memo_is_bounded_in_bytes() {
        let renderer = Renderer::new(64);
        let with_file = |chars: usize, tag: usize| {
            let mut input = fixtures::realistic();
            input.workspace_notes.push(format!("variant {tag}"));
            input
                .context_files
                .push(fixtures::file("notes.md", "n".repeat(chars)));
            input
        };
        let fifth: Vec<RenderInput> = (0..5).map(|i| with_file(MAX_CACHE_BYTES / 5, i)).collect();
        for input in &fifth {
            assert!(renderer.render(input).is_ok());
        }
        // Four fit; the fifth evicted the oldest.
        assert_eq!(renderer.stats().entries, 4);
        assert!(renderer.render(&fifth[0]).is_ok());
        assert_eq!(renderer.stats().hits, 0);
        assert!(renderer.render(&fifth[4]).is_ok());
        assert_eq!(renderer.stats().hits, 1);
        // Over a quarter: rendered, never kept.
        let huge = with_file(MAX_CACHE_BYTES / 4 + 1, 99);
        let (before, entries) = (renderer.stats().misses, renderer.stats().entries);
        assert_eq!(renderer.render(&huge), render::render(&huge));
        assert!(renderer.render(&huge).is_ok());
        assert_eq!(renderer.stats().misses, before + 2);
        assert_eq!(renderer.stats().entries, entries);
    }

    #[test]
    fn hits_reuse_the_block_and_give_the_same_bytes() {
        let renderer = Renderer::new(4);
        let mut input = fixtures::realistic();
        let first = renderer.render(&input);
        input.channel.name = "discord".into();
        input.runtime.host = "other".into();
        input.session_kind = SessionKind::Heartbeat;
        let second = renderer.render(&input);
        assert_eq!(second, render::render(&input));
        assert_eq!(
            renderer.stats(),
            CacheStats {
                hits: 1,
                misses: 1,
                entries: 1
            }
        );
        assert_eq!(
            first.map(|r| r.stable_prefix),
            second.map(|r| r.stable_prefix)
        );
    }

    #[test]
    fn keys_that_differ_between_fingerprint_samples_never_share_a_block() {
        let renderer = Renderer::new(4);
        let first = fixtures::realistic();
        let mut second = first.clone();
        let Some(file) = second
            .context_files
            .iter_mut()
            .max_by_key(|f| f.content.len())
        else {
            panic!("the fixture has context files");
        };
        // Same length, one byte changed between two samples.
        let at = SampledHasher::ENDS + 100;
        assert!(file.content.len() > SampledHasher::WHOLE + at);
        let changed = if file.content.as_bytes()[at] == b'x' {
            "y"
        } else {
            "x"
        };
        file.content.replace_range(at..=at, changed);
        assert_eq!(
            StableKey::of(&first).fingerprint(),
            StableKey::of(&second).fingerprint()
        );
        for input in [&first, &second, &first, &second] {
            assert_eq!(renderer.render(input), render::render(input));
        }
        let stats = renderer.stats();
        assert_eq!((stats.hits, stats.misses, stats.entries), (2, 2, 2));
    }

    #[test]
    fn a_stable_change_misses_and_the_lru_is_bounded() {
        let renderer = Renderer::new(2);
        let mut input = fixtures::realistic();
        for name in ["a", "b", "c"] {
            input.agent_name = name.into();
            assert_eq!(renderer.render(&input), render::render(&input));
        }
        let stats = renderer.stats();
        assert_eq!((stats.misses, stats.entries), (3, 2));
    }
}
