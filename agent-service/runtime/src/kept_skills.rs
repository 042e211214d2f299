//! Each agent's skill discovery, kept while nothing it read has changed.
//!
//! Every run lists its agent's skills for the prompt. A discovery walks every skill root,
//! lists their folders and reads every SKILL.md, so it runs on the blocking pool, one thread
//! hand-off a run even when an agent has no skills at all. Here the last discovery of each
//! agent is kept with the stamps of every path it read ([`openclaw_skills::Consulted`]: roots,
//! folders, links, SKILL.md files, the program files its gates probed), and a run takes it
//! after checking that every path still stamps the same. A few stamps are checked on the
//! calling task (five `stat` calls for an agent without skills); more go to the blocking pool
//! with the check, which is still cheaper than reading and parsing every SKILL.md again.
//!
//! A discovery is kept only for the config it was made with (a reload discovers anew, since
//! `skills.*`, allowlists and gates come from it), only when its stamps were the same after
//! it as before it, and only when every stamped file is older than its start by
//! [`openclaw_skills::RACY_MARGIN`]: a skill written within the margin is read again on every
//! run until it has aged. Environment variables are read once per process and are not stamped.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::SystemTime;

use openclaw_skills::{Consulted, Discovery};

use crate::config_state::Loaded;

/// Stamps checked on the calling task at most; a discovery with more is checked on the
/// blocking pool.
pub(crate) const CHECKED_INLINE: usize = 32;

/// The kept discoveries, by agent id.
#[derive(Debug, Default)]
pub(crate) struct KeptSkills {
    by_agent: Mutex<HashMap<String, Arc<Kept>>>,
}

/// One agent's discovery and what it read.
#[derive(Debug)]
pub(crate) struct Kept {
    config: Weak<Loaded>,
    pub(crate) discovery: Arc<Discovery>,
    pub(crate) consulted: Consulted,
}

impl KeptSkills {
    /// The discovery kept for `agent` under `config`, not yet checked against the disk.
    pub(crate) fn get(&self, agent: &str, config: &Arc<Loaded>) -> Option<Arc<Kept>> {
        let by_agent = self.by_agent.lock().unwrap_or_else(PoisonError::into_inner);
        let kept = by_agent.get(agent)?;
        let same_config = kept
            .config
            .upgrade()
            .is_some_and(|kept| Arc::ptr_eq(&kept, config));
        same_config.then(|| Arc::clone(kept))
    }

    /// Keeps `discovery` of `agent` under `config` when it may stand for later ones: it began
    /// at `began` and every path it read has settled and still stamps the same (blocking:
    /// stats every path). Otherwise forgets what was kept for the agent.
    pub(crate) fn keep(
        &self,
        agent: &str,
        config: &Arc<Loaded>,
        discovery: Arc<Discovery>,
        consulted: Consulted,
        began: SystemTime,
    ) {
        let keepable = consulted.settled_before(began) && consulted.still_holds();
        let mut by_agent = self.by_agent.lock().unwrap_or_else(PoisonError::into_inner);
        // Agents of an earlier config go with it.
        by_agent.retain(|_, kept| kept.config.strong_count() > 0);
        if keepable {
            let kept = Kept {
                config: Arc::downgrade(config),
                discovery,
                consulted,
            };
            by_agent.insert(agent.to_owned(), Arc::new(kept));
        } else {
            by_agent.remove(agent);
        }
    }
}
