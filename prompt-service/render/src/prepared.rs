//! [`Prepared`]: validated stable inputs with their stable block, for a
//! caller that renders many turns from them.
//!
//! The stable block is a pure function of the stable inputs, and those are
//! the same on every turn of a session, so rendering it once per session
//! instead of once per turn is what makes per-turn rendering nearly free.
//! This crate keeps no cache of blocks: the caller decides how it recognises
//! a session's stable inputs and how many it keeps (prompt-service keeps one
//! cache, keyed by the stable fields' request bytes). A block does remember
//! the hashes of the per-turn section texts it rendered last (see
//! `hash_memo`), which never changes what a render returns.

use std::sync::Arc;

use crate::{
    error::RenderError,
    input::{RenderInput, TurnInputs},
    render::{self, Rendered, SectionReport, SkillsReport, StableBlock, ToolsReport, TurnRef},
};

/// Validated stable inputs with their rendered stable block: everything of
/// a render except the [`TurnInputs`]. Cheap to share (the block is behind
/// an `Arc`).
#[derive(Debug, Clone)]
pub struct Prepared {
    input: RenderInput,
    block: Arc<StableBlock>,
}

impl Prepared {
    /// Validates `input` and builds its stable block. The input's
    /// [`TurnInputs`] are ignored; take them out first with
    /// [`RenderInput::take_turn`].
    pub fn new(input: RenderInput) -> Result<Self, RenderError> {
        let block = Arc::new(render::stable_block(&input)?);
        Ok(Self { input, block })
    }

    /// Renders one turn: byte-identical to rendering the prepared input
    /// with its turn inputs replaced by `turn`.
    pub fn render_turn(&self, turn: &TurnInputs) -> Result<Rendered, RenderError> {
        render::finish(TurnRef::of_turn(turn), &self.block)
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

    /// An estimate of what this holds in memory: the inputs' long strings,
    /// the rendered prefix and the per-turn section texts remembered with
    /// their hashes so far (at most four per section, each under 2 KiB).
    pub fn approx_bytes(&self) -> usize {
        let key = &self.input;
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
        files + tools + skills + self.block.prefix_len() + self.block.memo_bytes()
    }
}
