//! Workspace files that keep being cut (P-49): the prompt advises the model when MEMORY.md
//! is cut; the operator learns of it here. Every rendered turn's context report is recorded
//! per agent and session; a file cut on [`REPEATS`] renders in a row with the same raw and
//! injected sizes is logged once as a warning (again only after its sizes change), counted in
//! `agent_bootstrap_repeated_cuts_total`, and listed by `/status` and GetSession until a render
//! injects it whole. The state is in memory: a restart starts the count again.

use std::{collections::BTreeMap, sync::Mutex};

use openclaw_proto::prompt::v1 as pb;

/// Renders in a row that make a cut worth an operator's attention.
pub const REPEATS: u32 = 3;

/// A file cut on [`REPEATS`] or more renders in a row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepeatedCut {
    /// Workspace-relative path.
    pub path: String,
    /// Characters on disk.
    pub raw_chars: u32,
    /// Characters the prompt carries.
    pub injected_chars: u32,
    /// Renders in a row that cut it with these sizes.
    pub renders: u32,
}

impl RepeatedCut {
    /// What an operator can do about it, in one sentence.
    pub fn advice(&self) -> String {
        format!(
            "{} is cut to fit on every turn ({} of {} chars reach the model): distil it into a \
             shorter lasting summary, move detailed history into memory/*.md, or raise \
             agents.defaults.bootstrapMaxChars / bootstrapTotalMaxChars on purpose",
            self.path, self.injected_chars, self.raw_chars
        )
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Streak {
    raw: u32,
    injected: u32,
    renders: u32,
    warned: bool,
}

/// The cut streaks of every session, by (agent id, session key), then by path.
#[derive(Debug, Default)]
pub(crate) struct CutWatch {
    streaks: Mutex<BTreeMap<(String, String), BTreeMap<String, Streak>>>,
}

impl CutWatch {
    /// Records one rendered turn's context report; returns the cuts that just became
    /// repeated (each reported once per size), after logging and counting them.
    pub(crate) fn record(
        &self,
        agent_id: &str,
        session_key: &str,
        context: Option<&pb::ContextReport>,
    ) -> Vec<RepeatedCut> {
        let cut: BTreeMap<&str, (u32, u32)> = context
            .map(|c| c.files.as_slice())
            .unwrap_or_default()
            .iter()
            .filter(|f| f.status() == pb::FileStatus::Truncated)
            .map(|f| (f.path.as_str(), (f.raw_chars, f.injected_chars)))
            .collect();
        let mut newly = Vec::new();
        let Ok(mut all) = self.streaks.lock() else {
            return newly;
        };
        let key = (agent_id.to_owned(), session_key.to_owned());
        if cut.is_empty() {
            all.remove(&key);
            return newly;
        }
        let streaks = all.entry(key).or_default();
        streaks.retain(|path, _| cut.contains_key(path.as_str()));
        for (path, (raw, injected)) in cut {
            let streak = streaks.entry(path.to_owned()).or_insert(Streak {
                raw,
                injected,
                renders: 0,
                warned: false,
            });
            if (streak.raw, streak.injected) != (raw, injected) {
                *streak = Streak {
                    raw,
                    injected,
                    renders: 0,
                    warned: false,
                };
            }
            streak.renders = streak.renders.saturating_add(1);
            if streak.renders >= REPEATS && !streak.warned {
                streak.warned = true;
                newly.push(RepeatedCut {
                    path: path.to_owned(),
                    raw_chars: raw,
                    injected_chars: injected,
                    renders: streak.renders,
                });
            }
        }
        drop(all);
        for cut in &newly {
            tracing::warn!(
                agent = %agent_id,
                session = %session_key,
                file = %cut.path,
                raw_chars = cut.raw_chars,
                injected_chars = cut.injected_chars,
                renders = cut.renders,
                advice = %cut.advice(),
                "a workspace file keeps being cut to fit the prompt"
            );
            crate::metrics::repeated_cut(agent_id, &cut.path);
        }
        newly
    }

    /// The session's files cut on [`REPEATS`] or more renders in a row, by path.
    pub(crate) fn repeated(&self, agent_id: &str, session_key: &str) -> Vec<RepeatedCut> {
        let Ok(all) = self.streaks.lock() else {
            return Vec::new();
        };
        all.get(&(agent_id.to_owned(), session_key.to_owned()))
            .map(repeated_of)
            .unwrap_or_default()
    }

    /// [`Self::repeated`] of every session of `agent_id` that has any, by session key (one
    /// look at the streaks for a whole list).
    pub(crate) fn repeated_by_session(
        &self,
        agent_id: &str,
    ) -> std::collections::HashMap<String, Vec<RepeatedCut>> {
        let Ok(all) = self.streaks.lock() else {
            return Default::default();
        };
        all.range((agent_id.to_owned(), String::new())..)
            .take_while(|((agent, _), _)| agent == agent_id)
            .map(|((_, key), files)| (key.clone(), repeated_of(files)))
            .filter(|(_, cuts)| !cuts.is_empty())
            .collect()
    }
}

/// The files of one session's streaks cut on [`REPEATS`] or more renders in a row.
fn repeated_of<'a>(files: impl IntoIterator<Item = (&'a String, &'a Streak)>) -> Vec<RepeatedCut> {
    files
        .into_iter()
        .filter(|(_, s)| s.renders >= REPEATS)
        .map(|(path, s)| RepeatedCut {
            path: path.clone(),
            raw_chars: s.raw,
            injected_chars: s.injected,
            renders: s.renders,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    fn report(files: &[(&str, pb::FileStatus, u32, u32)]) -> pb::ContextReport {
        pb::ContextReport {
            files: files
                .iter()
                .map(|(path, status, raw, injected)| pb::InjectedFile {
                    path: (*path).to_owned(),
                    status: *status as i32,
                    raw_chars: *raw,
                    injected_chars: *injected,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
    }

    const CUT: pb::FileStatus = pb::FileStatus::Truncated;
    const WHOLE: pb::FileStatus = pb::FileStatus::Injected;

    #[test]
    fn a_cut_counts_once_it_repeats_and_is_reported_once_per_size() {
        let watch = CutWatch::default();
        let memory = report(&[
            ("MEMORY.md", CUT, 30_000, 20_000),
            ("AGENTS.md", WHOLE, 10, 10),
        ]);
        assert!(watch.record("main", "s", Some(&memory)).is_empty());
        assert!(watch.record("main", "s", Some(&memory)).is_empty());
        assert!(watch.repeated("main", "s").is_empty());
        let third = watch.record("main", "s", Some(&memory));
        let expected = RepeatedCut {
            path: "MEMORY.md".into(),
            raw_chars: 30_000,
            injected_chars: 20_000,
            renders: 3,
        };
        assert_eq!(third, vec![expected.clone()]);
        // Not again on the fourth turn, though it is still listed.
        assert!(watch.record("main", "s", Some(&memory)).is_empty());
        assert_eq!(watch.repeated("main", "s")[0].renders, 4);
        // Other sessions are counted apart.
        assert!(watch.repeated("main", "other").is_empty());
        // A new size starts a new streak, reported again once it repeats.
        let grown = report(&[("MEMORY.md", CUT, 31_000, 20_000)]);
        assert!(watch.record("main", "s", Some(&grown)).is_empty());
        assert!(watch.repeated("main", "s").is_empty());
        assert!(watch.record("main", "s", Some(&grown)).is_empty());
        assert_eq!(watch.record("main", "s", Some(&grown)).len(), 1);
        // A render that injects it whole ends the streak.
        let whole = report(&[("MEMORY.md", WHOLE, 900, 900)]);
        assert!(watch.record("main", "s", Some(&whole)).is_empty());
        assert!(watch.repeated("main", "s").is_empty());
    }

    /// The whole-agent view answers what the per-session one answers, for that agent's
    /// sessions only ("main" and "main2" share a prefix), and leaves out sessions with none.
    #[test]
    fn the_cuts_of_an_agent_are_those_of_each_of_its_sessions() {
        let watch = CutWatch::default();
        let memory = report(&[("MEMORY.md", CUT, 30_000, 20_000)]);
        let both = report(&[
            ("MEMORY.md", CUT, 30_000, 20_000),
            ("AGENTS.md", CUT, 50_000, 20_000),
        ]);
        for _ in 0..3 {
            watch.record("main", "a", Some(&memory));
            watch.record("main", "b", Some(&both));
            watch.record("main2", "a", Some(&both));
            watch.record("ma", "c", Some(&both));
        }
        watch.record("main", "once", Some(&memory));
        let by_session = watch.repeated_by_session("main");
        assert_eq!(
            by_session
                .keys()
                .map(String::as_str)
                .collect::<BTreeSet<_>>(),
            BTreeSet::from(["a", "b"])
        );
        for (key, cuts) in &by_session {
            assert_eq!(cuts, &watch.repeated("main", key), "{key}");
        }
        assert_eq!(by_session["b"].len(), 2);
        assert!(watch.repeated_by_session("nobody").is_empty());
    }

    #[test]
    fn the_advice_names_the_file_its_sizes_and_what_to_do() {
        let cut = RepeatedCut {
            path: "MEMORY.md".into(),
            raw_chars: 30_000,
            injected_chars: 20_000,
            renders: 3,
        };
        let advice = cut.advice();
        for part in [
            "MEMORY.md",
            "20000 of 30000",
            "memory/*.md",
            "bootstrapMaxChars",
        ] {
            assert!(advice.contains(part), "{advice}");
        }
    }
}
