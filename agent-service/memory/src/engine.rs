//! One agent's memory index and the search over it: bring the index up to date with the
//! files, embed what is new, rank. SQLite work runs on the blocking pool with the agent's one
//! connection behind a mutex; embedding requests run on the async side with no lock held.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use openclaw_workspace::Confined;

use crate::embed::Embedder;
use crate::error::MemoryError;
use crate::files;
use crate::search;
use crate::settings::MemorySettings;
use crate::store::{self, Store, SyncReport, content_hash, is_corrupt};

/// Which ranking answered a search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    /// Full-text search only: no embedding provider is configured.
    Keyword,
    /// Embeddings and full-text search combined.
    Hybrid,
    /// Embeddings are configured but failed; full-text search answered.
    KeywordFallback {
        /// Why the embeddings were not available.
        reason: String,
    },
}

/// One ranked chunk.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// The file, workspace-relative.
    pub path: String,
    /// First line, 1-based.
    pub start: usize,
    /// Last line, inclusive.
    pub end: usize,
    /// The chunk's lines joined by `\n`.
    pub text: String,
    /// Higher is better: a BM25 sum in keyword mode, 0 to 1 with embeddings.
    pub score: f64,
}

/// What a search found.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchOutcome {
    /// Which ranking answered.
    pub mode: Mode,
    /// Memory files in the index.
    pub files_searched: usize,
    /// Chunks that matched, before the limit.
    pub matched: usize,
    /// The best chunks, best first (ties: path, then line).
    pub hits: Vec<Hit>,
    /// Notes about files left out and about the index, one sentence each.
    pub notes: Vec<String>,
}

/// One agent's memory: its settings, its index file and its embedding client. Cheap to share
/// (`Arc`); every search of the agent goes through the same connection.
#[derive(Debug)]
pub struct AgentMemory {
    settings: MemorySettings,
    index_path: PathBuf,
    embedder: Option<Embedder>,
    state: Arc<Mutex<State>>,
}

#[derive(Debug, Default)]
struct State {
    store: Option<Store>,
    identity: String,
    /// Bumped whenever the store is replaced, so cached vectors are never reused across files.
    epoch: u64,
    vectors: Option<CachedVectors>,
}

/// Normalised chunk vectors, keyed by (store epoch, store generation).
type CachedVectors = ((u64, u64), Arc<Vec<(i64, Vec<f32>)>>);

struct Prepared {
    report: SyncReport,
    missing: Vec<(String, String)>,
    query_vector: Option<Vec<f32>>,
}

impl AgentMemory {
    /// The memory of an agent whose index lives at `index_path` (created on first use).
    pub fn new(settings: MemorySettings, index_path: PathBuf) -> Result<Self, MemoryError> {
        let embedder = settings.embeddings.clone().map(Embedder::new).transpose()?;
        Ok(Self {
            settings,
            index_path,
            embedder,
            state: Arc::new(Mutex::new(State::default())),
        })
    }

    /// The settings in force.
    pub fn settings(&self) -> &MemorySettings {
        &self.settings
    }

    /// The index file.
    pub fn index_path(&self) -> &std::path::Path {
        &self.index_path
    }

    /// The `limit` best chunks of the workspace's memory files for `query`. The index is
    /// brought up to date first (changed files only); embeddings are requested only for
    /// chunks and queries not seen before. Index trouble never fails the search: a corrupt
    /// file is moved aside and rebuilt, and an unusable one is replaced by an in-memory index
    /// for this search (both are named in the notes).
    pub async fn search(
        &self,
        workspace: Arc<Confined>,
        query: &str,
        limit: usize,
    ) -> Result<SearchOutcome, MemoryError> {
        let identity = format!(
            "{};workspace={}",
            self.settings.identity(),
            workspace.root().display()
        );
        let terms = search::terms(query);
        let query_hash = content_hash(query);
        let model = self.embedder.as_ref().map(Embedder::model_key);
        let prepared = {
            let (state, ws, path, id) = (
                Arc::clone(&self.state),
                Arc::clone(&workspace),
                self.index_path.clone(),
                identity.clone(),
            );
            let chunking = self.settings.chunking;
            let (model, hash) = (model.clone(), query_hash.clone());
            blocking(move || {
                let mut st = state.lock().unwrap_or_else(PoisonError::into_inner);
                let mut notes = Vec::new();
                with_store(&mut st, &path, &id, &mut notes, |store| {
                    prepare(store, &ws, chunking, model.as_deref(), &hash)
                })
                .map(|mut p| {
                    p.report.notes.extend(notes);
                    p
                })
            })
            .await?
        };
        let Prepared {
            mut report,
            missing,
            query_vector,
        } = prepared;
        let mut mode = Mode::Keyword;
        let mut fresh: Vec<(String, Vec<f32>)> = Vec::new();
        let mut query_vector = query_vector;
        if let Some(embedder) = &self.embedder {
            let mut texts: Vec<String> = missing.iter().map(|(_, t)| t.clone()).collect();
            let mut hashes: Vec<String> = missing.iter().map(|(h, _)| h.clone()).collect();
            if query_vector.is_none() {
                texts.push(query.to_owned());
                hashes.push(query_hash.clone());
            }
            let embedded = if texts.is_empty() {
                Ok(Vec::new())
            } else {
                embedder.embed(&texts).await
            };
            match embedded {
                Ok(vectors) => {
                    fresh = hashes.into_iter().zip(vectors).collect();
                    if query_vector.is_none() {
                        query_vector = fresh.last().map(|(_, v)| v.clone());
                    }
                    mode = Mode::Hybrid;
                }
                Err(error) => {
                    tracing::warn!(error = %error, "memory embeddings failed; keyword search answers");
                    mode = Mode::KeywordFallback {
                        reason: error.to_string(),
                    };
                    query_vector = None;
                }
            }
        }
        let (state, ws, path, id) = (
            Arc::clone(&self.state),
            workspace,
            self.index_path.clone(),
            identity,
        );
        let chunking = self.settings.chunking;
        let hybrid = self.settings.hybrid;
        let rank_model = model;
        let (hits, matched, notes) = blocking(move || {
            let mut st = state.lock().unwrap_or_else(PoisonError::into_inner);
            let mut notes = Vec::new();
            let epoch = st.epoch;
            let cached = st.vectors.clone();
            let mut attempts = 0;
            let outcome = with_store(&mut st, &path, &id, &mut notes, |store| {
                attempts += 1;
                if attempts > 1 {
                    // The index was rebuilt under this step: fill it from the files again.
                    store.sync(files::discover(&ws), chunking)?;
                }
                if let Some(model) = rank_model.as_deref().filter(|_| !fresh.is_empty()) {
                    store.store_embeddings(model, &fresh)?;
                }
                let keyword = search::keyword(store.conn(), &terms)?;
                let (mut ranked, kept) = match &query_vector {
                    Some(q) => {
                        let key = (epoch, store.generation());
                        let vectors = match &cached {
                            Some((k, v)) if *k == key => Arc::clone(v),
                            _ => Arc::new(search::normalised(store.vectors()?)),
                        };
                        let q = search::normalised(vec![(0, q.clone())]).remove(0).1;
                        let cosine = search::cosine(&q, &vectors);
                        let pool = limit.saturating_mul(hybrid.candidate_multiplier).max(limit);
                        let ranked = search::hybrid(&keyword, &cosine, &hybrid, pool);
                        (ranked, Some((key, vectors)))
                    }
                    None => (keyword.into_iter().collect::<Vec<_>>(), None),
                };
                let matched = ranked.len();
                // Only the best `limit` (and whatever ties the last of them) are read back.
                ranked.sort_by(|a, b| b.1.total_cmp(&a.1));
                let cutoff = ranked.get(limit.saturating_sub(1)).map(|(_, s)| *s);
                ranked.retain(|(_, s)| cutoff.is_none_or(|c| *s >= c));
                let rows = store.chunks(&ranked.iter().map(|(id, _)| *id).collect::<Vec<_>>())?;
                let mut hits: Vec<Hit> = ranked
                    .iter()
                    .filter_map(|(id, score)| {
                        rows.get(id).map(|row| Hit {
                            path: row.path.clone(),
                            start: row.start,
                            end: row.end,
                            text: row.text.clone(),
                            score: *score,
                        })
                    })
                    .collect();
                hits.sort_by(|a, b| {
                    b.score
                        .total_cmp(&a.score)
                        .then(file_order(&a.path).cmp(&file_order(&b.path)))
                        .then(a.start.cmp(&b.start))
                });
                hits.truncate(limit);
                Ok((hits, matched, kept))
            });
            let (hits, matched, kept) = outcome?;
            // Keep the normalised vectors for the next search of the same index state.
            if kept.is_some() {
                st.vectors = kept;
            }
            Ok((hits, matched, notes))
        })
        .await?;
        report.notes.extend(notes);
        Ok(SearchOutcome {
            mode,
            files_searched: report.files,
            matched,
            hits,
            notes: report.notes,
        })
    }
}

/// `MEMORY.md` before everything under `memory/`, then by path.
fn file_order(path: &str) -> (bool, &str) {
    (path.contains('/'), path)
}

fn prepare(
    store: &mut Store,
    workspace: &Confined,
    chunking: crate::settings::Chunking,
    model: Option<&str>,
    query_hash: &str,
) -> Result<Prepared, rusqlite::Error> {
    let report = store.sync(files::discover(workspace), chunking)?;
    let (missing, query_vector) = match model {
        Some(model) => (
            store.missing_embeddings(model)?,
            store.cached_embedding(model, query_hash)?,
        ),
        None => (Vec::new(), None),
    };
    Ok(Prepared {
        report,
        missing,
        query_vector,
    })
}

/// Runs `work` on the agent's store, opening it first. A corrupt database is moved aside,
/// reopened empty and `work` run again (which re-syncs from the files); a database that
/// cannot be opened at all is replaced by an in-memory one. Both are noted.
fn with_store<T>(
    st: &mut State,
    path: &std::path::Path,
    identity: &str,
    notes: &mut Vec<String>,
    mut work: impl FnMut(&mut Store) -> Result<T, rusqlite::Error>,
) -> Result<T, MemoryError> {
    for attempt in 0..2 {
        if st.store.is_none() || st.identity != identity {
            st.store = None;
            st.epoch += 1;
            st.vectors = None;
            let opened = path
                .parent()
                .map_or(Ok(()), std::fs::create_dir_all)
                .map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))
                .and_then(|()| Store::open(path, identity));
            let store = match opened {
                Ok((store, moved)) => {
                    notes.extend(moved);
                    store
                }
                Err(error) => {
                    tracing::warn!(index = %path.display(), error = %error, "memory index unusable; searching a temporary one");
                    notes.push(format!(
                        "the memory index file could not be used ({error}); this search used a temporary index"
                    ));
                    Store::in_memory(identity).map_err(|source| MemoryError::Index {
                        path: ":memory:".to_owned(),
                        source,
                    })?
                }
            };
            st.store = Some(store);
            st.identity = identity.to_owned();
        }
        let Some(store) = st.store.as_mut() else {
            return Err(MemoryError::Internal(
                "the memory index is not open".to_owned(),
            ));
        };
        match work(store) {
            Ok(value) => return Ok(value),
            Err(error) if is_corrupt(&error) && attempt == 0 => {
                let file = store.path().to_path_buf();
                st.store = None;
                let aside = store::move_aside(&file);
                notes.push(format!(
                    "the memory index was damaged and has been rebuilt from the memory files{aside}"
                ));
            }
            Err(source) => {
                return Err(MemoryError::Index {
                    path: path.display().to_string(),
                    source,
                });
            }
        }
    }
    Err(MemoryError::Internal(
        "the memory index stayed damaged after a rebuild".to_owned(),
    ))
}

async fn blocking<T, F>(work: F) -> Result<T, MemoryError>
where
    F: FnOnce() -> Result<T, MemoryError> + Send + 'static,
    T: Send + 'static,
{
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| MemoryError::Internal(format!("a worker task failed: {e}")))?
}
