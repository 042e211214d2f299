//! The prompt tells the truth in every session kind: nothing the budget drops
//! vanishes unmarked, rule files keep their rules, heartbeat text only where
//! heartbeats run, first-run text only on user turns, and no line promises
//! what the run cannot do. Each test names the request and the exact lines
//! expected or forbidden.

use super::behaviour::ReportFile;
use prompt_render::{
    ContextFile, FileStatus, RenderInput, Rendered, TruncationCause, fixtures as fixture, render,
};

fn ok(input: &RenderInput) -> Rendered {
    match render(input) {
        Ok(r) => r,
        Err(e) => panic!("render failed: {e}"),
    }
}

fn file(path: &str, content: String) -> ContextFile {
    fixture::file(path, content)
}

/// An AGENTS.md of `sections` headings, each with prose and `rules` rule lines.
fn agents_md(sections: usize, rules: usize, prose_lines: usize) -> String {
    let mut out = vec!["# AGENTS.md".to_owned()];
    for s in 0..sections {
        out.push(format!("## Area {s}"));
        for p in 0..prose_lines {
            out.push(format!(
                "Background for area {s}, note {p}: why this area matters and how it came to be, told at some length so the rules read in context."
            ));
        }
        for r in 0..rules {
            out.push(format!("- Rule {s}.{r}: follow the team's way here."));
        }
    }
    out.join("\n")
}

/// Workspace files at the default caps in which the fixed-order budget used
/// to give MEMORY.md nothing: AGENTS.md, SOUL.md and TOOLS.md spent the total.
fn crowded_workspace() -> RenderInput {
    let mut input = RenderInput::new(fixture::WORKSPACE);
    input.agent_id = "main".into();
    input.context_files = vec![
        file("AGENTS.md", fixture::prose("agents", 25_000)),
        file("SOUL.md", fixture::prose("soul", 12_000)),
        file("TOOLS.md", fixture::prose("tools", 20_000)),
        file("IDENTITY.md", fixture::prose("identity", 1_000)),
        file("USER.md", fixture::prose("user", 8_000)),
        file("MEMORY.md", fixture::prose("memory", 30_000)),
    ];
    input
}

/// Item 1: at the default caps MEMORY.md gets its fair share of the total
/// (before: 0 characters, status Omitted, and no marker in the prompt).
#[test]
fn memory_gets_its_fair_share_at_default_caps() {
    let r = ok(&crowded_workspace());
    let memory = r.report_file("MEMORY.md").map(|f| (f.status, f.cause));
    assert_eq!(
        memory,
        Some((FileStatus::Truncated, TruncationCause::TotalLimit))
    );
    // An equal share of what the small files leave (the fixture's prose
    // loses a trailing space or two when trimmed, hence the slack).
    let injected = r.report_file("MEMORY.md").map_or(0, |f| f.injected_chars);
    assert!((13_000..=13_010).contains(&injected), "{injected}");
    // Small files are met in full; the large ones split the rest equally.
    for path in ["IDENTITY.md", "USER.md", "SOUL.md"] {
        let f = r.report_file(path).map(|f| f.status);
        assert_eq!(f, Some(FileStatus::Injected), "{path}");
    }
    for path in ["AGENTS.md", "TOOLS.md"] {
        let f = r.report_file(path).map_or(0, |f| f.injected_chars);
        assert!((13_000..=13_010).contains(&f), "{path}: {f}");
    }
    let total: u32 = r.context.files.iter().map(|f| f.injected_chars).sum();
    assert!(total <= 60_000, "{total}");
}

/// Item 1: every cut file is listed in the notice with the budget that cut
/// it, and MEMORY.md's cut brings the advice of P-49.
#[test]
fn the_notice_lists_every_cut_with_its_reason() {
    let r = ok(&crowded_workspace());
    let kept = |path: &str| r.report_file(path).map_or(0, |f| f.injected_chars);
    for line in [
        format!(
            "- AGENTS.md: {} of 25000 characters kept (its share of the total limit).",
            kept("AGENTS.md")
        ),
        format!(
            "- TOOLS.md: {} of 20000 characters kept (its share of the total limit).",
            kept("TOOLS.md")
        ),
        format!(
            "- MEMORY.md: {} of 30000 characters kept (its share of the total limit).",
            kept("MEMORY.md")
        ),
        "MEMORY.md is longer than the prompt holds: offer to distil it into a shorter lasting summary and move detailed history into memory/*.md, or suggest the operator raise the bootstrap limits on purpose.".to_owned(),
    ] {
        assert!(r.stable_prefix.contains(&line), "missing: {line}");
    }
    assert!(!r.stable_prefix.contains("- SOUL.md: 1"));
    assert!(r.stable_prefix.contains("[…truncated MEMORY.md: kept "));
}

/// Item 1: a file the total budget leaves out keeps its heading, a marker
/// naming it, its purpose line and a line in the notice.
#[test]
fn a_dropped_file_is_marked_and_stays_listed() {
    let mut input = crowded_workspace();
    input.bootstrap_limits.total_max_chars = 360;
    input.bootstrap_limits.max_chars_per_file = 20_000;
    let r = ok(&input);
    let memory = r.report_file("MEMORY.md").map(|f| f.status);
    assert_eq!(memory, Some(FileStatus::Omitted));
    for line in [
        "## MEMORY.md\n[…MEMORY.md left out: its 30000 characters did not fit the total budget for workspace files; read the file when you need it…]",
        "- MEMORY.md: left out (its share of the total limit).",
        "- MEMORY.md: long-term memory",
    ] {
        assert!(r.stable_prefix.contains(line), "missing: {line}");
    }
}

/// Item 6: a cut AGENTS.md keeps every heading and rule line (before: a
/// plain head/tail cut kept 56 of its 104 rule lines).
#[test]
fn a_cut_agents_md_keeps_its_rules() {
    let content = agents_md(8, 13, 8);
    let rules: Vec<&str> = content.lines().filter(|l| l.starts_with("- ")).collect();
    assert_eq!(rules.len(), 104);
    let mut input = RenderInput::new(fixture::WORKSPACE);
    input.bootstrap_limits.max_chars_per_file = 12_000;
    input.context_files = vec![file("AGENTS.md", content.clone())];
    assert!(content.chars().count() > 12_000);
    let r = ok(&input);
    let kept = rules.iter().filter(|l| r.stable_prefix.contains(*l)).count();
    assert_eq!(kept, 104);
    for s in 0..8 {
        assert!(r.stable_prefix.contains(&format!("\n## Area {s}\n")), "area {s}");
    }
    assert!(r.stable_prefix.contains("[…AGENTS.md shortened to fit: lines "));
    assert!(r.stable_prefix.contains("[…AGENTS.md continues in full from line "));
    assert_eq!(
        r.report_file("AGENTS.md").map(|f| (f.status, f.cause)),
        Some((FileStatus::Truncated, TruncationCause::PerFileLimit))
    );
    let injected = r.report_file("AGENTS.md").map_or(0, |f| f.injected_chars);
    assert!(injected <= 12_000, "{injected}");
}

/// Item 6: when not even the digest fits, headings stay, rules follow in
/// file order and a marker counts the rules left out.
#[test]
fn a_tight_agents_md_digest_counts_what_it_leaves_out() {
    let mut input = RenderInput::new(fixture::WORKSPACE);
    input.bootstrap_limits.max_chars_per_file = 2_000;
    input.context_files = vec![file("AGENTS.md", agents_md(8, 13, 2))];
    let r = ok(&input);
    for s in 0..8 {
        assert!(r.stable_prefix.contains(&format!("\n## Area {s}\n")), "area {s}");
    }
    assert!(r.stable_prefix.contains("- Rule 0.0: follow the team's way here."));
    assert!(r.stable_prefix.contains(" more rules of AGENTS.md left out here…]"));
}
